//! RFC 9457 problem details: every error the API returns, in one place, each class with a
//! stable `type`. Handlers return [`ApiError`]; nothing else builds an error response, so no
//! error can leave as HTML or plain text, and internals (messages from the fetch layer, panics)
//! are logged rather than shown beyond what helps the caller.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use crate::checker::{CheckError, OverBudget};
use crate::destination::DestinationError;
use crate::origin::TargetError;
pub use responses::{BodyProblems, EdgeProblems};

mod responses;

/// The media type of problem details.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// A problem details object (RFC 9457).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({
    "type": "urn:robotsd:problem:unsupported-scheme",
    "title": "Unsupported URL scheme",
    "status": 400,
    "detail": "unsupported scheme \"ftp\": robotsd answers for http and https URLs only",
}))]
pub struct Problem {
    /// Identifies the class of problem; stable, see README.md.
    #[serde(rename = "type")]
    pub kind: String,
    /// Short summary of the class.
    pub title: String,
    /// The HTTP status code.
    pub status: u16,
    /// What went wrong with this request.
    pub detail: String,
    /// For batch items and form fields: which input the problem is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
}

/// Every error the API can answer with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// A required query parameter or field is missing.
    #[error("missing {0}")]
    Missing(&'static str),
    /// The API requires a bearer token and the request has none of them.
    #[error("this API requires `Authorization: Bearer <token>` with a token robotsd was given")]
    Unauthorized,
    /// A query parameter the endpoint does not take, or one it takes once given twice.
    #[error("{}", parameter_detail(name, problem))]
    Parameter {
        /// The parameter's name.
        name: String,
        /// What is wrong with it.
        problem: ParameterProblem,
    },
    /// The URL is not usable.
    #[error("{0}")]
    Url(TargetError),
    /// A `ua` value has no product token, is empty or too long.
    #[error("{0}")]
    UserAgent(String),
    /// robotsd will not contact this destination.
    #[error("{0}")]
    Destination(DestinationError),
    /// A report of `POST /v1/feedback` says nothing usable.
    #[error("{0}")]
    InvalidReport(String),
    /// A page of `POST /v1/page` is not one robotsd reads: headers out of bounds, a document
    /// given twice or not base64.
    #[error("{0}")]
    InvalidPage(String),
    /// More agents than a request, a check or a `ua` value may name.
    #[error("{}", agents_detail(*scope, *count, *max))]
    TooManyAgents {
        /// What names too many.
        scope: AgentScope,
        /// How many it names.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// The request asks for more work than one request may (`--max-request-work`).
    #[error("{0}")]
    TooMuchWork(OverBudget),
    /// A batch has more items than allowed.
    #[error("a batch may hold at most {max} items; this one has {len}")]
    BatchTooLarge {
        /// Items given.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The request body exceeds the limit.
    #[error("the request body exceeds {max} bytes")]
    BodyTooLarge {
        /// The limit.
        max: usize,
    },
    /// The request body is not the JSON the endpoint expects.
    #[error("{0}")]
    InvalidBody(String),
    /// A request body that is not declared as JSON.
    #[error("the request body must be JSON, sent with Content-Type: application/json")]
    UnsupportedMediaType,
    /// The request body did not arrive within the body-read time limit.
    #[error("the request body did not arrive within {0} s of its head")]
    BodyTimeout(u64),
    /// The request target (path and query) is longer than robotsd reads.
    #[error("the request target is longer than {max} bytes")]
    UriTooLong {
        /// The limit.
        max: usize,
    },
    /// The request head (request line and headers) is larger than robotsd reads, or has too
    /// many header fields.
    #[error(
        "the request line and headers exceed {max} bytes, or there are more than {fields} header fields"
    )]
    HeadTooLarge {
        /// The byte limit.
        max: usize,
        /// The field count limit.
        fields: usize,
    },
    /// The request head is not HTTP that parses.
    #[error("the request line or a header is malformed")]
    MalformedRequest,
    /// Every connection robotsd keeps open is taken.
    #[error("robotsd is at its connection limit; retry after {retry_after} s")]
    ConnectionLimit {
        /// Seconds, sent as `Retry-After`.
        retry_after: u64,
    },
    /// The origin's copy was dropped for memory right after its fetch, and robotsd does not
    /// fetch it again so soon.
    #[error(
        "robotsd's cache is under memory pressure and dropped this origin's robots.txt; it is \
         not fetched again before the shortest lifetime has passed: retry after {retry_after} s"
    )]
    CacheFull {
        /// Seconds, sent as `Retry-After`.
        retry_after: u64,
    },
    /// A refresh asked for before the origin may be fetched again.
    #[error(
        "robotsd fetched this origin's robots.txt less than the shortest lifetime ago, or it is \
         in backoff: it is not fetched again for {retry_after} s"
    )]
    RefreshTooSoon {
        /// Seconds, sent as `Retry-After`.
        retry_after: u64,
    },
    /// A refresh asked of a robotsd whose API is open to anyone (no `--api-token-file`).
    #[error(
        "refreshing an origin is for operators: it needs robotsd started with --api-token-file"
    )]
    RefreshNeedsTokens,
    /// A request body in a content encoding robotsd does not decode.
    #[error("the request body's Content-Encoding `{0}` is not one of gzip, br, zstd")]
    UnsupportedEncoding(String),
    /// Too many requests in flight: try again shortly.
    #[error("robotsd is at its concurrency limit; retry after {retry_after} s")]
    Overloaded {
        /// Seconds, sent as `Retry-After`.
        retry_after: u64,
    },
    /// The request bodies being read and answered already hold the bytes robotsd allows for
    /// them: try again shortly.
    #[error(
        "the request bodies in flight hold all of --max-body-bytes-in-flight; retry after \
         {retry_after} s"
    )]
    BodiesInFlight {
        /// Seconds, sent as `Retry-After`.
        retry_after: u64,
    },
    /// A batch item not answered by the batch's deadline.
    #[error("{}", if *fetching {
        "the batch's deadline came while this origin's robots.txt was being fetched; the fetch \
         goes on, so asking again shortly answers from it"
    } else {
        "the batch's deadline came before this item was reached, and it could not be answered \
         at once: robotsd does not hold its origin's robots.txt, or matching it is more than a \
         moment's work; ask again"
    })]
    BatchDeadline {
        /// Its origin's fetch had started (and goes on).
        fetching: bool,
    },
    /// An item of a request not matched by the request's deadline.
    #[error("the request's deadline came before this item was matched; ask again with fewer items")]
    MatchDeadline,
    /// The request took longer than the server's limit.
    #[error("the request did not complete within {0} s")]
    Timeout(u64),
    /// No such route.
    #[error("no such resource: {0}")]
    NotFound(String),
    /// The route exists but not with this method.
    #[error("method {0} is not allowed here")]
    MethodNotAllowed(String),
    /// `sign=` asked of a robotsd that holds no key.
    #[error("this robotsd signs nothing: it was started without --wba-keys")]
    SigningOff,
    /// `sign=` on a check not made for the fleet's product token (`--wba-product-token`).
    #[error("this fleet signs as {0}: a check to sign must be made for it (a ua naming {0})")]
    SignsAnotherAgent(String),
    /// The key directory asked under a host other than the one it is served for.
    #[error("the key directory is served for {0} alone: ask it there")]
    Misdirected(String),
    /// A request that names no host (no `Host`, no `:authority`) where the answer depends on it.
    #[error("the request names no host: send Host (or HTTP/2's :authority)")]
    MissingHost,
    /// A bug: logged in full, shown only as this.
    #[error("internal error")]
    Internal,
}

impl From<CheckError> for ApiError {
    fn from(error: CheckError) -> Self {
        match error {
            CheckError::Url(e) => ApiError::Url(e),
            CheckError::UserAgent(e) => ApiError::UserAgent(e.to_string()),
            CheckError::NoUserAgent => ApiError::Missing("ua"),
            CheckError::Destination(e) => ApiError::Destination(e),
            CheckError::CopyDropped { retry_after } => ApiError::CacheFull {
                retry_after: whole_seconds_up(retry_after),
            },
            CheckError::TooSoon { retry_after } => ApiError::RefreshTooSoon {
                retry_after: whole_seconds_up(retry_after),
            },
            CheckError::OverBudget(over) => ApiError::TooMuchWork(over),
            CheckError::Compute(error) => {
                tracing::error!(%error, "a check's match panicked on the compute threads");
                ApiError::Internal
            }
        }
    }
}

impl ApiError {
    /// The class: (`type` slug, title, status).
    pub fn class(&self) -> (&'static str, &'static str, StatusCode) {
        use StatusCode as S;
        match self {
            ApiError::Missing("url") => ("missing-url", "Missing URL", S::BAD_REQUEST),
            ApiError::Missing(_) => ("missing-user-agent", "Missing user agent", S::BAD_REQUEST),
            ApiError::Unauthorized => ("unauthorized", "Unauthorized", S::UNAUTHORIZED),
            ApiError::Parameter { .. } => (
                "invalid-parameter",
                "Invalid query parameter",
                S::BAD_REQUEST,
            ),
            ApiError::Url(TargetError::Relative) => {
                ("relative-url", "Relative URL", S::BAD_REQUEST)
            }
            ApiError::Url(TargetError::UnsupportedScheme(_)) => (
                "unsupported-scheme",
                "Unsupported URL scheme",
                S::BAD_REQUEST,
            ),
            ApiError::Url(TargetError::TooLong { .. }) => {
                ("url-too-long", "URL too long", S::BAD_REQUEST)
            }
            ApiError::Url(_) => ("invalid-url", "Invalid URL", S::BAD_REQUEST),
            ApiError::UserAgent(_) => ("invalid-user-agent", "Invalid user agent", S::BAD_REQUEST),
            ApiError::Destination(_) => (
                "destination-not-allowed",
                "Destination not allowed",
                S::UNPROCESSABLE_ENTITY,
            ),
            ApiError::TooManyAgents { .. } => {
                ("too-many-agents", "Too many agents", S::BAD_REQUEST)
            }
            ApiError::TooMuchWork(_) => (
                "too-much-work",
                "Too much work for one request",
                S::PAYLOAD_TOO_LARGE,
            ),
            ApiError::BatchTooLarge { .. } => {
                ("batch-too-large", "Batch too large", S::PAYLOAD_TOO_LARGE)
            }
            ApiError::BodyTooLarge { .. } => (
                "body-too-large",
                "Request body too large",
                S::PAYLOAD_TOO_LARGE,
            ),
            ApiError::InvalidBody(_) => ("invalid-body", "Invalid request body", S::BAD_REQUEST),
            ApiError::InvalidReport(_) => ("invalid-report", "Invalid report", S::BAD_REQUEST),
            ApiError::InvalidPage(_) => ("invalid-page", "Invalid page", S::BAD_REQUEST),
            ApiError::UnsupportedEncoding(_) => (
                "unsupported-content-encoding",
                "Unsupported content encoding",
                S::UNSUPPORTED_MEDIA_TYPE,
            ),
            ApiError::UnsupportedMediaType => (
                "unsupported-media-type",
                "Unsupported media type",
                S::UNSUPPORTED_MEDIA_TYPE,
            ),
            ApiError::BodyTimeout(_) => {
                ("body-timeout", "Request body too slow", S::REQUEST_TIMEOUT)
            }
            ApiError::UriTooLong { .. } => ("uri-too-long", "URI too long", S::URI_TOO_LONG),
            ApiError::HeadTooLarge { .. } => (
                "headers-too-large",
                "Request headers too large",
                S::REQUEST_HEADER_FIELDS_TOO_LARGE,
            ),
            ApiError::MalformedRequest => {
                ("malformed-request", "Malformed request", S::BAD_REQUEST)
            }
            ApiError::ConnectionLimit { .. } => (
                "connection-limit",
                "Too many connections",
                S::SERVICE_UNAVAILABLE,
            ),
            ApiError::CacheFull { .. } => ("cache-full", "Cache full", S::SERVICE_UNAVAILABLE),
            ApiError::RefreshTooSoon { .. } => (
                "refresh-too-soon",
                "Fetched too recently",
                S::TOO_MANY_REQUESTS,
            ),
            ApiError::RefreshNeedsTokens => (
                "refresh-needs-tokens",
                "Refresh needs authentication",
                S::FORBIDDEN,
            ),
            ApiError::Overloaded { .. } => ("overloaded", "Overloaded", S::SERVICE_UNAVAILABLE),
            ApiError::BodiesInFlight { .. } => (
                "bodies-in-flight",
                "Too many request bytes in flight",
                S::SERVICE_UNAVAILABLE,
            ),
            ApiError::Timeout(_) => ("timeout", "Request timed out", S::GATEWAY_TIMEOUT),
            ApiError::BatchDeadline { .. } | ApiError::MatchDeadline => (
                "batch-deadline",
                "Not answered by the batch's deadline",
                S::GATEWAY_TIMEOUT,
            ),
            ApiError::NotFound(_) => ("not-found", "Not found", S::NOT_FOUND),
            ApiError::MethodNotAllowed(_) => (
                "method-not-allowed",
                "Method not allowed",
                S::METHOD_NOT_ALLOWED,
            ),
            ApiError::SigningOff => ("signing-off", "Signing is off", S::BAD_REQUEST),
            ApiError::MissingHost => ("missing-host", "Missing host", S::BAD_REQUEST),
            ApiError::Misdirected(_) => {
                ("misdirected", "Misdirected request", S::MISDIRECTED_REQUEST)
            }
            ApiError::SignsAnotherAgent(_) => (
                "sign-other-agent",
                "Signing for another agent",
                S::BAD_REQUEST,
            ),
            ApiError::Internal => ("internal", "Internal error", S::INTERNAL_SERVER_ERROR),
        }
    }

    /// The problem details object.
    pub fn problem(&self) -> Problem {
        let (slug, title, status) = self.class();
        Problem {
            kind: format!("urn:robotsd:problem:{slug}"),
            title: title.to_string(),
            status: status.as_u16(),
            detail: cut(self.to_string()),
            parameter: match self {
                ApiError::Parameter { name, .. } => Some(cut(name.clone())),
                _ => None,
            },
        }
    }
}

/// The most bytes of a problem's `detail` (and `parameter`): a message may quote what the
/// request sent (a JSON parser's error quotes the string it refused), and a 900 KB body must
/// not come back as a 900 KB problem.
pub const MAX_DETAIL_BYTES: usize = 1024;

/// `text` cut at [`MAX_DETAIL_BYTES`], at a character boundary, with `…` where it was cut.
fn cut(mut text: String) -> String {
    if text.len() > MAX_DETAIL_BYTES {
        let mut end = MAX_DETAIL_BYTES - '…'.len_utf8();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// Rounded up: a client retrying on time must find the origin fetchable.
fn whole_seconds_up(duration: std::time::Duration) -> u64 {
    duration.as_secs() + u64::from(duration.subsec_nanos() > 0)
}

/// What names more agents than it may.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentScope {
    /// One `ua` value's comma list (`--max-agent-names`).
    Value,
    /// One check: the names of its `ua` values, repeats counted (`--max-agents`).
    Check,
    /// The whole request: distinct names across its items (`--max-agents`).
    Request,
}

fn agents_detail(scope: AgentScope, count: usize, max: usize) -> String {
    match scope {
        AgentScope::Value => {
            format!("a ua value lists {count} names; at most {max} (--max-agent-names)")
        }
        AgentScope::Check => format!(
            "a check names {count} agents (the names of its ua values); at most {max} \
             (--max-agents)"
        ),
        AgentScope::Request => format!(
            "this request names {count} distinct agents across its items; at most {max} \
             (--max-agents)"
        ),
    }
}

/// What is wrong with a query parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParameterProblem {
    /// The endpoint does not take it.
    Unknown,
    /// Given more than once, taken once.
    Repeated,
    /// Its value is not one of these.
    Value(&'static str),
}

/// What is wrong with a query parameter, with the usual cause of an unknown one.
fn parameter_detail(name: &str, problem: &ParameterProblem) -> String {
    match problem {
        ParameterProblem::Repeated => {
            format!("the query parameter `{name}` is given more than once; it is taken once")
        }
        ParameterProblem::Unknown => format!(
            "unknown query parameter `{name}`; if it belongs to the url, percent-encode the url \
             (curl -G --data-urlencode 'url=…')"
        ),
        ParameterProblem::Value(expected) => {
            format!("the query parameter `{name}` must be one of: {expected}")
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let problem = self.problem();
        let status =
            StatusCode::from_u16(problem.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&problem).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if let ApiError::Overloaded { retry_after }
        | ApiError::BodiesInFlight { retry_after }
        | ApiError::ConnectionLimit { retry_after }
        | ApiError::CacheFull { retry_after }
        | ApiError::RefreshTooSoon { retry_after } = self
        {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
        }
        if let ApiError::Unauthorized = self {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"robotsd\""),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_quotes_at_most_a_kibibyte_of_what_was_sent() {
        let long = format!("invalid type: string \"{}\"", "é".repeat(100_000));
        let problem = ApiError::InvalidBody(long).problem();
        assert!(
            problem.detail.len() <= MAX_DETAIL_BYTES,
            "{}",
            problem.detail.len()
        );
        assert!(problem.detail.starts_with("invalid type: string \"é"));
        assert!(problem.detail.ends_with('…'));
        let short = ApiError::InvalidBody("missing field `ua`".into()).problem();
        assert_eq!(short.detail, "missing field `ua`");
    }

    #[test]
    fn every_class_has_a_distinct_type() {
        let errors = [
            ApiError::Missing("url"),
            ApiError::Missing("ua"),
            ApiError::Unauthorized,
            ApiError::Parameter {
                name: "x".into(),
                problem: ParameterProblem::Unknown,
            },
            ApiError::Url(TargetError::Relative),
            ApiError::Url(TargetError::UnsupportedScheme("ftp".into())),
            ApiError::Url(TargetError::TooLong {
                len: 9000,
                max: 8192,
            }),
            ApiError::Url(TargetError::NoHost),
            ApiError::UserAgent("x".into()),
            ApiError::Destination(DestinationError::NoAddresses {
                host: "x.example".into(),
            }),
            ApiError::BatchTooLarge { len: 2, max: 1 },
            ApiError::TooManyAgents {
                scope: AgentScope::Request,
                count: 2,
                max: 1,
            },
            ApiError::TooMuchWork(OverBudget {
                asked: 2,
                budget: 1,
            }),
            ApiError::BodyTooLarge { max: 1 },
            ApiError::InvalidBody("x".into()),
            ApiError::InvalidReport("x".into()),
            ApiError::UnsupportedMediaType,
            ApiError::UnsupportedEncoding("x".into()),
            ApiError::BodyTimeout(1),
            ApiError::UriTooLong { max: 1 },
            ApiError::HeadTooLarge { max: 1, fields: 1 },
            ApiError::MalformedRequest,
            ApiError::ConnectionLimit { retry_after: 1 },
            ApiError::CacheFull { retry_after: 1 },
            ApiError::RefreshTooSoon { retry_after: 1 },
            ApiError::RefreshNeedsTokens,
            ApiError::Overloaded { retry_after: 1 },
            ApiError::BodiesInFlight { retry_after: 1 },
            ApiError::Timeout(1),
            ApiError::BatchDeadline { fetching: true },
            ApiError::NotFound("/x".into()),
            ApiError::MethodNotAllowed("PUT".into()),
            ApiError::SigningOff,
            ApiError::MissingHost,
            ApiError::Misdirected("bot.example".into()),
            ApiError::SignsAnotherAgent("ExampleBot".into()),
            ApiError::Internal,
        ];
        let mut kinds: Vec<_> = errors.iter().map(|e| e.problem().kind).collect();
        kinds.sort();
        kinds.dedup();
        assert_eq!(kinds.len(), errors.len());
    }

    #[test]
    fn overloaded_says_when_to_retry() {
        let response = ApiError::Overloaded { retry_after: 2 }.into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[header::RETRY_AFTER], "2");
        assert_eq!(response.headers()[header::CONTENT_TYPE], PROBLEM_JSON);
    }
}
