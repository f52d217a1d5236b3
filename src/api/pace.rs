//! Pacing in the API (docs/politeness.md): the `pace` parameter of `/v1/check`, the `pace`
//! object of its answers and of `/v1/robots`, and `POST /v1/feedback`, where workers report what
//! the sites answered them.

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::params::Pairs;
use super::problem::{ApiError, BodyProblems, EdgeProblems, Problem};
use super::{AppState, JsonBody, JsonRequest, check_batch_len, check_url_length, read_json};
use crate::origin::parse_target;
pub use crate::pacing::answer::PaceJson;
use crate::pacing::answer::rfc3339_millis;
use crate::pacing::{ConnectionFailure, PaceKey, PaceView, Report, Scope};

/// The `pace` parameter: whether to reserve a fetch slot (`false` when absent).
pub(super) fn pace_param(pairs: &Pairs<'_>) -> Result<bool, ApiError> {
    super::params::flag(pairs, "pace")
}

/// The OpenAPI description of the `pace` parameter.
pub(super) const PACE_PARAM: &str = "`true`: also reserve the time at which this worker may fetch the URL, kept for the whole fleet (`pace` in the answer; docs/politeness.md). A disallowed URL reserves nothing. Default `false`: the answer has no `pace`.";

/// An origin's pacing state.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({"lane": "host:example.com", "slowdown": 2.0, "retry_after_until": "2026-11-25T06:00:03.000Z", "last_slot": "2026-11-25T06:00:00.000Z", "scope": "fleet"}))]
pub struct PaceStateJson {
    /// The lane (`--pace-key`), as `pace` of a check names it.
    pub lane: String,
    /// The slowdown factor now: 1 unless the site pushed back; it halves every minute.
    pub slowdown: f64,
    /// The end of a `Retry-After` the site asked for (RFC 3339), while it lasts.
    pub retry_after_until: Option<String>,
    /// The last slot handed out (RFC 3339), if any.
    pub last_slot: Option<String>,
    /// `fleet` or `local`: where it was read.
    pub scope: Scope,
}

impl From<PaceView> for PaceStateJson {
    fn from(v: PaceView) -> Self {
        PaceStateJson {
            lane: v.lane,
            slowdown: v.slowdown,
            retry_after_until: v.retry_after_until.map(rfc3339_millis),
            last_slot: v.last_slot.map(rfc3339_millis),
            scope: v.scope,
        }
    }
}

/// What a worker saw when it fetched a page.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"url": "https://example.com/page", "status": 429, "retry_after": "3"}))]
pub struct ReportItem {
    /// The page's URL (its origin is what the report is about).
    pub url: String,
    /// The HTTP status the site answered.
    pub status: Option<u16>,
    /// The `Retry-After` header as received (seconds or an HTTP date), if any.
    pub retry_after: Option<String>,
    /// `true` when the site did not answer within the fetch's own time limit, the wait for the
    /// slot not counted (instead of `status`).
    #[serde(default)]
    pub timeout: bool,
    /// `refused` or `reset`: the connection failed before any answer (instead of `status` or
    /// `timeout`). A pushback, like a timeout, counted apart.
    #[serde(default)]
    pub connection: Option<ConnectionFailure>,
    /// How long the site took to answer, in milliseconds, as the worker measured it (the same
    /// way for every page: to the first byte, or to the whole response). A lane whose site
    /// answers much slower than its recent baseline slows for the whole fleet
    /// (docs/politeness.md); taken from answers that are no pushback. At most 600,000 (ten
    /// minutes): a larger value is refused with the request, as any value out of its schema.
    #[serde(default, deserialize_with = "response_ms")]
    #[schema(minimum = 0, maximum = 600_000)]
    pub response_ms: Option<u64>,
}

/// A report's `response_ms`, within the bound its schema states.
fn response_ms<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let value = <Option<u64> as Deserialize>::deserialize(d)?;
    match value {
        Some(ms) if ms > crate::pacing::latency::MAX_RESPONSE_MS => Err(serde::de::Error::custom(
            format!("response_ms {ms} is over 600000 (ten minutes)"),
        )),
        value => Ok(value),
    }
}

/// `POST /v1/feedback`: what the sites answered, many pages at once.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"reports": [{"url": "https://example.com/a", "status": 200}, {"url": "https://example.com/b", "status": 429, "retry_after": "3"}]}))]
pub struct FeedbackRequest {
    /// At most `--max-batch` reports.
    pub reports: Vec<ReportItem>,
}

/// A report taken: its origin's pacing state after it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ReportTaken {
    /// The origin (scheme, host, port).
    pub origin: String,
    /// Whether it changed the origin's pacing state: `false` for an origin robotsd holds
    /// nothing of (no replica checked it, or it was forgotten), whose report is not kept, so
    /// that reports about made-up origins cannot fill the store.
    pub applied: bool,
    /// Its pacing state now.
    pub pace: PaceStateJson,
}

/// What was wrong with a report; the others are taken.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ReportRefused {
    /// The problem.
    pub error: Problem,
}

/// One report's effect.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(untagged)]
pub enum FeedbackItem {
    /// The origin's state after the report.
    Taken(ReportTaken),
    /// What was wrong with the report.
    Refused(ReportRefused),
}

/// The effect of each report, in order.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FeedbackResponse {
    /// One per report.
    pub results: Vec<FeedbackItem>,
}

/// Tells robotsd what the sites answered: a 429 or 503 (with its `Retry-After`), a 5xx or a
/// timeout slows the origin down for the whole fleet; other answers ease a slowdown.
#[utoipa::path(
    post,
    path = "/v1/feedback",
    tag = "check",
    request_body = FeedbackRequest,
    responses(
        (status = 200, description = "Each report's origin and its pacing state after it, or the problem with that report, in order.", body = FeedbackResponse),
        (status = 400, description = "The body is not a list of reports.", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "The body is not declared as JSON (Content-Type: application/json).", body = Problem, content_type = "application/problem+json"),
        BodyProblems,
        EdgeProblems,
    )
)]
pub(super) async fn feedback_post(
    State(state): State<AppState>,
    body: JsonRequest,
) -> Result<JsonBody<FeedbackResponse>, ApiError> {
    let request: FeedbackRequest = read_json(body, &state.limits)?;
    check_batch_len(request.reports.len(), &state.limits)?;
    // A report names no agent and matches no rule: one unit of work each.
    super::cost::check_work(request.reports.len(), 1, 1, &state.limits)?;
    let mut results = Vec::with_capacity(request.reports.len());
    for item in request.reports {
        results.push(match take_report(&state, item).await {
            Ok((origin, applied, pace)) => FeedbackItem::Taken(ReportTaken {
                origin,
                applied,
                pace,
            }),
            Err(error) => FeedbackItem::Refused(ReportRefused {
                error: error.problem(),
            }),
        });
    }
    Ok(JsonBody(FeedbackResponse { results }))
}

async fn take_report(
    state: &AppState,
    item: ReportItem,
) -> Result<(String, bool, PaceStateJson), ApiError> {
    check_url_length(&item.url, &state.limits)?;
    let target = parse_target(&item.url).map_err(ApiError::Url)?;
    let report =
        Report::with_connection(item.status, item.retry_after, item.timeout, item.connection)
            .map_err(|e| ApiError::InvalidReport(e.to_string()))?
            .with_response_time(item.response_ms);
    let checked_here = state.checker.cache().knows(target.origin());
    let origin = target.origin().key().to_string();
    let pacer = state.checker.pacer();
    let address = match pacer.key() {
        PaceKey::Address => state.checker.cache().address(target.origin()).await,
        _ => None,
    };
    let lane = pacer.lane(target.origin(), address);
    Ok(
        match pacer.report(&lane, &origin, &report, checked_here).await {
            Some(view) => (origin, true, view.into()),
            // Nothing is kept of an origin nobody checked: its state is the one it would start from.
            None => (
                origin,
                false,
                PaceStateJson {
                    lane,
                    slowdown: 1.0,
                    retry_after_until: None,
                    last_slot: None,
                    scope: pacer.scope(),
                },
            ),
        },
    )
}
