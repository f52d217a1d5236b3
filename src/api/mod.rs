//! The HTTP API (axum): `/v1/check`, `/v1/robots`, `/v1/evaluate`, probes, metrics and the
//! OpenAPI document. Handlers are thin: they parse input, call the [`Checker`], and shape the
//! answer; every error leaves through [`ApiError`] as problem+json.

mod batch_answer;
mod batch_body;
mod caller;
mod check_query;
mod cost;
pub mod directory;
mod evaluate;
mod json;
mod ops;
mod pace;
mod page;
mod params;
mod parsed;
pub mod problem;
pub mod record;
mod robots;
mod rsl;
pub mod sign;
mod sign_request;
pub mod types;
pub mod values;

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use axum::Router;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{RawQuery, State};
use axum::http::{Method, Uri, header};
use axum::response::{IntoResponse as _, Response};
use futures_util::StreamExt;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::cache::Lookup;
use crate::checker::{self, CheckOptions, Checker, WorkMeter};
use crate::compute::Caller;
use crate::config::Limits;
use crate::metrics::Metrics;
use crate::origin::TargetError;
use batch_answer::BatchWriter;
use caller::CallerOf;
use check_query::CheckQuery;
use cost::check_agents;
use json::JsonBody;
pub use page::PAGE_PATH;
use params::{View, check_params, query_pairs, view};
use problem::{ApiError, BodyProblems, EdgeProblems, Problem};
use types::*;

/// What every handler shares: one `Arc`, because axum clones the state for every request and
/// every middleware (cloning the parts cost a tenth of a cached check).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

/// The parts of [`AppState`].
pub struct Shared {
    /// Answers checks.
    pub checker: Checker,
    /// Counts them.
    pub metrics: Metrics,
    /// Request limits.
    pub limits: Limits,
    /// Connection limits; the edge applies their body-read deadline to each request.
    pub connections: crate::config::ConnectionLimits,
    /// Which requests get an access-log line.
    pub access_log: crate::config::AccessLog,
    /// The bearer tokens the API requires, if any.
    pub api_tokens: Option<crate::auth::TokenGate>,
    /// False while draining: `/readyz` then answers 503.
    pub ready: Arc<AtomicBool>,
    /// Whether the tester page is served at `/`.
    pub ui: bool,
    /// TDMRep's well-known files, with `--tdmrep`.
    pub tdmrep: Option<crate::tdmrep::TdmRepFiles>,
    /// The fleet's signer, with `--wba-keys`.
    pub signing: Option<Arc<crate::bot_auth::signing::Signing>>,
}

impl AppState {
    /// Shares `parts` with every handler.
    pub fn new(parts: Shared) -> AppState {
        AppState(Arc::new(parts))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The cache result of a check, left in the response's extensions for the request log.
#[derive(Debug, Clone, Copy)]
pub struct CacheResult(pub Lookup);

/// The probe and metrics paths (on the admin listener when there is one).
pub const ADMIN_PATHS: [&str; 4] = ["/livez", "/healthz", "/readyz", "/metrics"];

#[derive(OpenApi)]
#[openapi(
    info(
        title = "robotsd",
        description = "robots.txt as a service: may this user-agent fetch this URL? Verdicts follow \
            Google's reference parser (RFC 9309 and Google's documented handling), with the rule \
            and group that decided and where the robots.txt came from.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    components(schemas(Problem)),
    tags((name = "check", description = "Verdicts"), (name = "robots", description = "Cached robots.txt"), (name = "operations", description = "Probes and metrics"), (name = "identity", description = "The fleet's Web Bot Auth key directory, with --wba-keys"))
)]
struct ApiDoc;

/// The public API routes, and their paths (the routes behind the request limits), read off the
/// same registration.
pub fn api_router(state: AppState) -> (Router, Vec<String>) {
    let (router, doc) = api_routes(state.limits.max_page_bytes).split_for_parts();
    (
        router.with_state(state),
        doc.paths.paths.into_keys().collect(),
    )
}

/// The API routes with their OpenAPI description: one list serves both, so the document cannot
/// drift from what is served.
fn api_routes(max_page_bytes: usize) -> OpenApiRouter<AppState> {
    // A page's body carries its document: its own limit, set on its route alone.
    let page = OpenApiRouter::new()
        .routes(routes!(page::page_post))
        .layer(axum::extract::DefaultBodyLimit::max(max_page_bytes));
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(check_get, check_post))
        .routes(routes!(robots::robots_get))
        .routes(routes!(robots::robots_refresh))
        .routes(routes!(evaluate::evaluate_post))
        .routes(routes!(pace::feedback_post))
        .routes(routes!(sign_request::sign_post))
        .merge(page)
}

/// The probe and metrics routes (served on the admin listener when there is one).
pub fn admin_router(state: AppState) -> Router {
    let [live, health, ready, metrics_path] = ADMIN_PATHS;
    Router::new()
        .route(live, axum::routing::get(ops::livez))
        .route(health, axum::routing::get(ops::livez))
        .route(ready, axum::routing::get(ops::readyz))
        .route(metrics_path, axum::routing::get(ops::metrics))
        .with_state(state)
}

/// The fleet's public identity (the key directory, and the card with a product token), served
/// when robotsd holds keys, with its paths; public, as sites fetch them.
pub fn identity_router(state: &AppState) -> Option<(Router, Vec<&'static str>)> {
    let signing = state.signing.as_ref()?;
    let mut router = Router::new().route(directory::PATH, axum::routing::get(directory::directory));
    let mut paths = vec![directory::PATH];
    if signing.product_token().is_some() {
        router = router.route(directory::CARD_PATH, axum::routing::get(directory::card));
        paths.push(directory::CARD_PATH);
    }
    Some((router.with_state(state.clone()), paths))
}

/// The OpenAPI document of the whole service, as committed under `openapi/`.
pub fn openapi() -> utoipa::openapi::OpenApi {
    let (_, mut api) = api_routes(Limits::default().max_page_bytes).split_for_parts();
    let (_, ops) = OpenApiRouter::<AppState>::new()
        .routes(routes!(ops::livez_doc))
        .routes(routes!(ops::readyz_doc))
        .routes(routes!(ops::metrics_doc))
        .routes(routes!(directory::directory_doc))
        .routes(routes!(directory::card_doc))
        .split_for_parts();
    api.merge(ops);
    api
}

/// Answers unknown routes.
pub async fn not_found(uri: Uri) -> ApiError {
    ApiError::NotFound(uri.path().chars().take(256).collect())
}

/// Answers known routes asked with the wrong method.
pub async fn method_not_allowed(method: Method) -> ApiError {
    ApiError::MethodNotAllowed(method.to_string())
}

fn check_batch_len(len: usize, limits: &Limits) -> Result<(), ApiError> {
    if len > limits.max_batch {
        return Err(ApiError::BatchTooLarge {
            len,
            max: limits.max_batch,
        });
    }
    Ok(())
}

fn check_url_length(url: &str, limits: &Limits) -> Result<(), ApiError> {
    if url.len() > limits.max_url_bytes {
        return Err(ApiError::Url(TargetError::TooLong {
            len: url.len(),
            max: limits.max_url_bytes,
        }));
    }
    Ok(())
}

/// `{"allowed":…,"reason":…}`: a few bytes, written as they are.
fn write_verdict(out: &mut Vec<u8>, answer: &checker::Answer) {
    let allowed: &[u8] = if answer.allowed { b"true" } else { b"false" };
    out.extend_from_slice(b"{\"allowed\":");
    out.extend_from_slice(allowed);
    out.extend_from_slice(b",\"reason\":\"");
    out.extend_from_slice(answer.reason.as_str().as_bytes());
    out.push(b'"');
    crate::fast::answer_json::write_pace_member(out, &answer.pace);
    out.push(b'}');
}

/// Counts an answered check in the metrics; its usage preferences only when the answer shows
/// them (`view`), since the usage metric counts answers that carried a preference.
fn observe(state: &AppState, answer: &checker::Answer, view: View) {
    let Some(source) = &answer.source else {
        return;
    };
    state
        .metrics
        .observe_check(answer.allowed, answer.reason, source.cache);
    if view == View::Full && !answer.usage.is_empty() {
        state.metrics.observe_usage(&answer.usage);
    }
    if !answer.rsl.is_empty() {
        state.metrics.observe_rsl(&answer.rsl);
    }
}

/// One check, counted in the metrics; its work charged to `meter`, if any, before it matches.
async fn check_one(
    state: &AppState,
    url: Cow<'_, str>,
    agents: &[impl AsRef<str>],
    options: CheckOptions,
    view: View,
    meter: Option<&WorkMeter>,
) -> Result<Box<checker::Answer>, ApiError> {
    check_url_length(&url, &state.limits)?;
    check_agents(agents, &state.limits)?;
    let answer = state
        .checker
        .check_metered(url, agents, options, meter)
        .await?;
    observe(state, &answer, view);
    Ok(answer)
}

/// May this user-agent fetch this URL?
#[utoipa::path(
    get,
    path = "/v1/check",
    tag = "check",
    params(
        ("url" = String, Query, description = "The absolute http(s) URL to check.", example = "https://example.com/private/page"),
        ("ua" = Vec<String>, Query, description = "User agent: a product token (`Googlebot`) or a whole User-Agent header. Repeat it, or give a comma-separated list of names (`Googlebot,SomeBot`), for a crawler that answers to several names. Other parameters, and a repeated `url`, are refused.", example = json!(["Googlebot"])),
        ("view" = Option<String>, Query, description = "`full` (the default) or `verdict`: only `allowed` and `reason`.", example = "verdict"),
        ("percent_decoding" = Option<String>, Query, description = PERCENT_DECODING_PARAM, example = "rfc9309"),
        ("pace" = Option<bool>, Query, description = pace::PACE_PARAM, example = true),
        ("record" = Option<bool>, Query, description = RECORD_PARAM, example = true),
        ("sign" = Option<String>, Query, description = SIGN_PARAM, example = "GET"),
    ),
    responses(
        (status = 200, description = "The verdict, the rule and group that decided, and where the robots.txt came from (with `view=verdict`, only `allowed` and `reason`), with `pace=true` the fetch slot, with `record=true` the record, and with `sign=GET` and an allowed URL the Web Bot Auth headers.", body = CheckAnswer),
        (status = 400, description = "Missing or invalid url or ua, or more agents than --max-agents (a check's names) and --max-agent-names (one value's) allow.", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "robotsd will not contact this destination.", body = Problem, content_type = "application/problem+json"),
        EdgeProblems,
    )
)]
async fn check_get(
    State(state): State<AppState>,
    CallerOf(caller): CallerOf,
    RawQuery(query): RawQuery,
) -> Response {
    let (mut response, cache) = check_query(&state, query.as_deref(), caller).await;
    if let Some(cache) = cache {
        response.extensions_mut().insert(cache);
    }
    response
}

/// The path of a single check. The edge serves `GET` on it itself, without the router: see
/// `server::edge`.
pub const CHECK_PATH: &str = "/v1/check";

/// The answer to `GET /v1/check?query`, and the cache result for the request log (none for a
/// problem): the router's handler and the edge's direct path both come here. A match too large
/// for an async worker takes `caller`'s turn on the compute threads.
pub async fn check_query(
    state: &AppState,
    query: Option<&str>,
    caller: Caller,
) -> (Response, Option<CacheResult>) {
    match check_answer(state, query, caller).await {
        Ok((response, cache)) => (response, cache),
        Err(problem) => (problem.into_response(), None),
    }
}

async fn check_answer(
    state: &AppState,
    query: Option<&str>,
    caller: Caller,
) -> Result<(Response, Option<CacheResult>), ApiError> {
    let mut pairs = query_pairs(query);
    let CheckQuery {
        url,
        agents,
        view,
        mut options,
        record,
        sign,
    } = CheckQuery::read(&mut pairs, state.checker.percent_decoding())?;
    options.caller = caller;
    // Asked to sign where nothing signs: said before anything is fetched.
    let signing = match (sign, &state.signing) {
        (Some(method), Some(signing)) => {
            sign::signs_for(signing, &agents)?;
            Some((method, signing, url.clone().into_owned()))
        }
        (Some(_), None) => return Err(ApiError::SigningOff),
        (None, _) => None,
    };
    let answer = check_one(state, url, &agents, options, view, None).await?;
    let mut body = Vec::with_capacity(json::INITIAL_CAPACITY);
    match view {
        View::Full => crate::fast::answer_json::write_answer(&mut body, &answer),
        View::Verdict => write_verdict(&mut body, &answer),
    }
    if let Some((method, signing, url)) = signing {
        sign::append(&mut body, signing, &state.metrics, &answer, method, &url)?;
    }
    if record {
        append_record(&mut body, state, &answer);
    }
    let cache = answer
        .source
        .as_ref()
        .map(|source| CacheResult(source.cache));
    Ok((json::response(body), cache))
}

/// The OpenAPI description of the `sign` parameter.
const SIGN_PARAM: &str = "`GET` or `HEAD` (with `--wba-keys`): also sign that request if the URL is allowed, answering `sign`: the `Signature-Agent`, `Signature-Input` and `Signature` headers (Web Bot Auth, RFC 9421, Ed25519) that prove the fleet's identity for exactly this method and URL, until `expires`. A robotsd without keys answers 400 `signing-off`.";

/// The OpenAPI description of the batch's `sign` parameter.
const SIGN_BATCH_PARAM: &str = "`GET` or `HEAD` (with `--wba-keys`): each allowed item's answer also carries `sign`, the Web Bot Auth headers for exactly that request (as on `GET /v1/check`); a disallowed item, a deferred pacing slot or an item's problem carries none. Signatures are not counted against the batch's 8 MiB answer bound (each is under 1 KiB beside its URL). A robotsd without keys answers 400 `signing-off` before checking or fetching anything.";

/// The OpenAPI description of the `record` parameter.
const RECORD_PARAM: &str = "`true`: the answer also carries `record`, what robots.txt said of the URL (its SHA-256, the deciding rule, its preferences for the URL, the time and robotsd's version), compact, to store beside the fetched page (docs/page.md). Default `false`.";

/// Adds `record` to the answer written in `body`, at the time of the cache's clock.
fn append_record(body: &mut Vec<u8>, state: &AppState, answer: &checker::Answer) {
    let now = state.checker.cache().clock().now().since_epoch().as_secs();
    let at = robotsd_page::date::format_rfc3339(i64::try_from(now).unwrap_or(i64::MAX));
    record::append(body, answer, at);
}

/// A request body declared as JSON (`application/json`, or any `+json` type), buffered within
/// the body limit. A body declared as anything else, or not declared, is refused with 415 before
/// it is read.
struct JsonRequest(Result<Bytes, BytesRejection>);

impl<S: Send + Sync> axum::extract::FromRequest<S> for JsonRequest {
    type Rejection = ApiError;

    async fn from_request(request: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let declared_json = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split(';').next())
            .map(|essence| essence.trim().to_ascii_lowercase())
            .is_some_and(|essence| {
                essence == "application/json"
                    || (essence.starts_with("application/") && essence.ends_with("+json"))
            });
        if !declared_json {
            return Err(ApiError::UnsupportedMediaType);
        }
        // Left by the decompression layer only when it could not decode it.
        if let Some(encoding) = request.headers().get(header::CONTENT_ENCODING)
            && !encoding.as_bytes().eq_ignore_ascii_case(b"identity")
        {
            return Err(ApiError::UnsupportedEncoding(
                String::from_utf8_lossy(encoding.as_bytes()).into_owned(),
            ));
        }
        Ok(JsonRequest(Bytes::from_request(request, state).await))
    }
}

/// The body's bytes, within the body limit.
fn read_body(body: JsonRequest, limits: &Limits) -> Result<Bytes, ApiError> {
    read_body_within(body, limits.max_body_bytes)
}

/// The body's bytes, within `max` (the limit of its route).
fn read_body_within(JsonRequest(body): JsonRequest, max: usize) -> Result<Bytes, ApiError> {
    body.map_err(|rejection| match rejection {
        BytesRejection::FailedToBufferBody(_) => ApiError::BodyTooLarge { max },
        other => ApiError::InvalidBody(other.body_text()),
    })
}

fn read_json<T: serde::de::DeserializeOwned>(
    body: JsonRequest,
    limits: &Limits,
) -> Result<T, ApiError> {
    let body = read_body(body, limits)?;
    serde_json::from_slice(&body).map_err(|e| ApiError::InvalidBody(e.to_string()))
}

/// The OpenAPI description of the `percent_decoding` parameter.
const PERCENT_DECODING_PARAM: &str = "How the URL and the rules compare: `google` (Google's reference: escapes compared as text, so `Disallow: /private` does not match `/%70rivate`) or `rfc9309` (RFC 9309's one form: escapes of unreserved characters decoded, `%2A` and `%24` in a rule matching the URL's `*` and `$`, and the query's `:` `/` `?` `@` compared encoded). Default: the server's `--percent-decoding`, itself `google` unless set.";

/// Many checks at once, answered in order; a bad item gets an error in its slot.
#[utoipa::path(
    post,
    path = "/v1/check",
    tag = "check",
    params(
        ("view" = Option<String>, Query, description = "`full` (the default) or `verdict`: each answer only `allowed` and `reason`.", example = "verdict"),
        ("percent_decoding" = Option<String>, Query, description = PERCENT_DECODING_PARAM, example = "rfc9309"),
        ("pace" = Option<bool>, Query, description = "`true`: also reserve each allowed URL's fetch slot (`pace` in each answer); URLs of one origin get staggered slots. Default `false`.", example = true),
        ("sign" = Option<String>, Query, description = SIGN_BATCH_PARAM, example = "GET"),
    ),
    request_body(content = BatchRequest, description = "`{\"ua\", \"urls\"}` or `{\"checks\": [{\"url\", \"ua\"}]}`, at most 1,000 items."),
    responses(
        (status = 200, description = "One answer or problem per item, in order.", body = BatchResponse),
        (status = 400, description = "The body is not a batch, or it names more agents than --max-agents (distinct names across the items, and each item's) and --max-agent-names allow.", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "The body is not declared as JSON (Content-Type: application/json).", body = Problem, content_type = "application/problem+json"),
        BodyProblems,
        EdgeProblems,
    )
)]
async fn check_post(
    State(state): State<AppState>,
    CallerOf(caller): CallerOf,
    RawQuery(query): RawQuery,
    body: JsonRequest,
) -> Result<Response, ApiError> {
    let pairs = query_pairs(query.as_deref());
    check_params(
        &pairs,
        &[
            ("view", false),
            ("percent_decoding", false),
            ("pace", false),
            ("sign", false),
        ],
    )?;
    let view = view(&pairs)?;
    // Asked to sign where nothing signs: said before the body is parsed or anything fetched.
    let signing = match (params::sign_method(&pairs)?, &state.signing) {
        (Some(method), Some(signing)) => Some((method, Arc::clone(signing))),
        (Some(_), None) => return Err(ApiError::SigningOff),
        (None, _) => None,
    };
    let options = CheckOptions {
        decoding: params::percent_decoding(&pairs, state.checker.percent_decoding())?,
        pace: pace::pace_param(&pairs)?,
        licenses: view == View::Full,
        caller,
    };
    let request = batch_body::parse(&read_body(body, &state.limits)?)?;
    // The items of a `urls` batch share one list of agents, not a copy each.
    let items: Vec<cost::Item> = match request {
        BatchRequest::Urls(UrlsBatch { ua, urls }) => {
            let agents: Arc<[String]> = ua.into_vec().into();
            urls.into_iter()
                .map(|url| (url, Arc::clone(&agents)))
                .collect()
        }
        BatchRequest::Checks(ChecksBatch { checks }) => checks
            .into_iter()
            .map(|c| (c.url, c.ua.into_vec().into()))
            .collect(),
    };
    let len = items.len();
    check_batch_len(len, &state.limits)?;
    if let Some((_, signing)) = &signing {
        for (_, agents) in &items {
            sign::signs_for(signing, agents)?;
        }
    }
    cost::check_batch(&state, &items).await?;
    let meter = WorkMeter::new(state.limits.max_request_work);
    let meter = &meter;
    let deadline = tokio::time::Instant::now() + batch_budget(state.limits.request_timeout);
    // Distinct origins are fetched concurrently, within a bound; checks of one origin share its
    // single fetch through the cache. `buffered` keeps the answers in request order. At the
    // deadline, what is still being fetched or matched gets a problem in its slot (a fetch goes
    // on), and what was not started yet is answered only if robotsd holds its robots.txt already
    // and matching it is a moment's work.
    let results = futures_util::stream::iter(items)
        .map(|(url, agents)| {
            let state = state.clone();
            async move {
                let checked = if tokio::time::Instant::now() >= deadline {
                    check_held(&state, &url, &agents, options, view, meter).await
                } else {
                    match tokio::time::timeout_at(
                        deadline,
                        check_one(
                            &state,
                            Cow::Borrowed(&url),
                            &agents,
                            options,
                            view,
                            Some(meter),
                        ),
                    )
                    .await
                    {
                        Ok(checked) => checked.map(|answer| *answer),
                        // Cut while fetching, or while matching a file now held. Boxed: an
                        // item's future stays as small as it was, since each is moved about.
                        Err(_) => Err(ApiError::BatchDeadline {
                            fetching: Box::pin(state.checker.held_rules(&url)).await.is_none(),
                        }),
                    }
                };
                (checked.map_err(|error| error.problem()), url)
            }
        })
        .buffered(state.limits.batch_concurrency.max(1));
    // Each answer is written as it comes, in order, and dropped.
    let mut writer = BatchWriter::new(len);
    futures_util::pin_mut!(results);
    let (mut worked, mut signed) = (0, 0u32);
    while let Some((checked, url)) = results.next().await {
        match checked {
            Ok(answer) => {
                writer.answer(&answer, view == View::Verdict);
                if let Some((method, signing)) = &signing {
                    writer.add_to_last(|out| {
                        sign::append(out, signing, &state.metrics, &answer, method, &url)
                    })?;
                    // A signature is some 300,000 instructions (BENCHMARKS.md, "A signed
                    // check"), which the work meter does not count: a signed batch gives the
                    // worker back every few, as matches do.
                    signed += 1;
                    if signed % SIGNATURES_BEFORE_YIELD == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            }
            Err(problem) => writer.error(&problem),
        }
        // Matches within the inline bound run here, and answers ready at once never give the
        // worker back: after a few of them, it is given back once.
        if meter.charged() - worked > YIELD_AFTER_WORK {
            worked = meter.charged();
            tokio::task::yield_now().await;
        }
    }
    Ok(json::response(writer.finish()))
}

/// Signatures a signed batch makes on an async worker before it gives the worker back: about
/// 1.2 million instructions between two turns.
const SIGNATURES_BEFORE_YIELD: u32 = 4;

/// The work a batch does on an async worker before it gives the worker back: a few checks of
/// the inline bound's size, a few milliseconds at worst.
const YIELD_AFTER_WORK: u64 = 4 * crate::compute::INLINE_WORK;

/// How long a batch may take: the request time limit, less a margin for writing the answer
/// (a tenth of it, at most 2 s), so that the batch answers before the edge's 504 would.
pub(super) fn batch_budget(request_timeout: std::time::Duration) -> std::time::Duration {
    let margin = (request_timeout / 10).min(std::time::Duration::from_secs(2));
    request_timeout.saturating_sub(margin)
}

/// A check answered only from what the cache holds, for items reached after a batch's deadline.
async fn check_held(
    state: &AppState,
    url: &str,
    agents: &[impl AsRef<str>],
    options: CheckOptions,
    view: View,
    meter: &WorkMeter,
) -> Result<checker::Answer, ApiError> {
    check_url_length(url, &state.limits)?;
    check_agents(agents, &state.limits)?;
    let answer = state
        .checker
        .check_held(url, agents, options, Some(meter))
        .await?
        .ok_or(ApiError::BatchDeadline { fetching: false })?;
    observe(state, &answer, view);
    Ok(answer)
}
