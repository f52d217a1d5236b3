//! `/v1/robots`: what robotsd holds for an origin, and an operator's refresh of it.

use axum::extract::{RawQuery, State};

use super::params::{Pairs, check_params, query_pairs, required_url};
use super::problem::{ApiError, EdgeProblems, ParameterProblem, Problem};
use super::types::{ParsedJson, RobotsResponse};
use super::{AppState, JsonBody, check_url_length};
use crate::checker;

/// What robotsd holds for a URL's origin: the fetch, the backoff, the parsed robots.txt.
#[utoipa::path(
    get,
    path = "/v1/robots",
    tag = "robots",
    params(
        ("url" = String, Query, description = "Any URL of the origin (or its robots.txt).", example = "https://example.com/"),
        ("include" = Option<String>, Query, description = "`robots_txt`: also send the file's text as fetched, comments included (`robots_txt` in the answer), when a parsed file is held.", example = "robots_txt"),
    ),
    responses(
        (status = 200, description = "The origin's robots.txt as robotsd holds it (fetched now if it was not held).", body = RobotsResponse),
        (status = 400, description = "Missing or invalid url.", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "robotsd will not contact this destination.", body = Problem, content_type = "application/problem+json"),
        EdgeProblems,
    )
)]
pub(super) async fn robots_get(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<JsonBody<RobotsResponse>, ApiError> {
    let mut pairs = query_pairs(query.as_deref());
    check_params(&pairs, &[("url", false), ("include", false)])?;
    let with_text = match pairs.iter().find(|(k, _)| k == "include") {
        None => false,
        Some((_, value)) if value == "robots_txt" => true,
        Some(_) => {
            return Err(ApiError::Parameter {
                name: "include".into(),
                problem: ParameterProblem::Value("robots_txt"),
            });
        }
    };
    let url = checked_url(&mut pairs, &state)?;
    let report = state.checker.robots(&url).await?;
    let text = report
        .body
        .as_ref()
        .filter(|_| with_text)
        .and_then(|body| body.text(state.checker.cache().fetcher().config().max_body_bytes))
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    let mut response = robots_response(report);
    response.robots_txt = text;
    Ok(JsonBody(response))
}

/// The `url` parameter, checked.
fn checked_url(pairs: &mut Pairs<'_>, state: &AppState) -> Result<String, ApiError> {
    let url = required_url(pairs)?;
    check_url_length(&url, &state.limits)?;
    Ok(url.into_owned())
}

fn robots_response(report: checker::OriginReport) -> RobotsResponse {
    RobotsResponse {
        robots_txt: None,
        origin: report.target.origin().key().to_string(),
        robots_url: report.target.origin().robots_url_string(),
        state: report.status.as_str().to_string(),
        robots: report.source.into(),
        parsed: report.robots.as_deref().map(ParsedJson::from),
        pace: report.pace.map(Into::into),
    }
}

/// Fetches an origin's robots.txt now, for an operator who knows it changed (a site owner fixed
/// it): needs `--api-token-file`, and still fetches at most once per shortest lifetime and never
/// during a backoff's wait.
#[utoipa::path(
    post,
    path = "/v1/robots/refresh",
    tag = "robots",
    params(("url" = String, Query, description = "Any URL of the origin.", example = "https://example.com/")),
    responses(
        (status = 200, description = "The origin's robots.txt as just fetched (or as a fetch already running brought it).", body = RobotsResponse),
        (status = 400, description = "Missing or invalid url.", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "robotsd runs without --api-token-file: refreshing is for authenticated operators.", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "robotsd will not contact this destination.", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "Fetched less than the shortest lifetime ago, or in backoff: see Retry-After.", body = Problem, content_type = "application/problem+json"),
        EdgeProblems,
    )
)]
pub(super) async fn robots_refresh(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<JsonBody<RobotsResponse>, ApiError> {
    // The edge has checked the token: without tokens, anyone could make robotsd fetch.
    if state.api_tokens.is_none() {
        return Err(ApiError::RefreshNeedsTokens);
    }
    let mut pairs = query_pairs(query.as_deref());
    check_params(&pairs, &[("url", false)])?;
    let url = checked_url(&mut pairs, &state)?;
    let refreshed = state.checker.refresh(&url).await;
    match &refreshed {
        Ok(_) => state.metrics.observe_refresh(true),
        Err(checker::CheckError::TooSoon { .. }) => state.metrics.observe_refresh(false),
        Err(_) => {}
    }
    let report = refreshed?;
    Ok(JsonBody(robots_response(report)))
}
