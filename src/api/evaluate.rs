//! `POST /v1/evaluate`: URLs checked against a robots.txt given in the request, a tester that
//! touches no network.

use axum::extract::State;
use axum::response::Response;
use robotsd_engine::{PercentDecoding, RobotsTxt};

use super::batch_answer::BatchWriter;
use super::problem::{ApiError, BodyProblems, EdgeProblems, Problem};
use super::read_json;
use super::types::*;
use super::{AppState, JsonRequest, check_agents, check_batch_len, check_url_length, cost, json};
use crate::checker::{self, Checker};
use crate::config::Limits;

/// Checks URLs against a robots.txt given in the request: a tester that touches no network.
#[utoipa::path(
    post,
    path = "/v1/evaluate",
    tag = "check",
    request_body = EvaluateRequest,
    responses(
        (status = 200, description = "One answer or problem per URL, in order (`robots` is null: nothing was fetched), and the parsed file when asked for.", body = EvaluateResponse),
        (status = 400, description = "The body is not an evaluation request, or it names more agents than --max-agents and --max-agent-names allow.", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "The body is not declared as JSON (Content-Type: application/json).", body = Problem, content_type = "application/problem+json"),
        BodyProblems,
        EdgeProblems,
    )
)]
pub(super) async fn evaluate_post(
    State(state): State<AppState>,
    body: JsonRequest,
) -> Result<Response, ApiError> {
    let request: EvaluateRequest = read_json(body, &state.limits)?;
    let robots_txt = match (request.robots_txt, request.robots_txt_b64) {
        (Some(text), None) => text.into_bytes(),
        (None, Some(b64)) => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .map_err(|e| {
                    ApiError::InvalidBody(format!("robots_txt_b64 is not valid base64: {e}"))
                })?
        }
        (Some(_), Some(_)) => {
            return Err(ApiError::InvalidBody(
                "give robots_txt or robots_txt_b64, not both".into(),
            ));
        }
        (None, None) => {
            return Err(ApiError::InvalidBody(
                "missing robots_txt (or robots_txt_b64)".into(),
            ));
        }
    };
    let urls = match (request.url, request.urls) {
        (Some(url), None) => vec![url],
        (None, Some(urls)) => urls,
        (Some(_), Some(_)) => {
            return Err(ApiError::InvalidBody("give url or urls, not both".into()));
        }
        (None, None) => return Err(ApiError::Missing("url")),
    };
    check_batch_len(urls.len(), &state.limits)?;
    let agents = request.ua.into_vec();
    check_agents(&agents, &state.limits)?;
    let names = cost::check_names(&agents, &state.limits)?;
    let decoding = request
        .percent_decoding
        .map_or(state.checker.percent_decoding(), PercentDecoding::from);
    // Cut where a fetch cuts (Google reads 500 KiB), so that the tester answers as a fetched
    // copy of this text would be answered.
    let max = state.checker.cache().fetcher().config().max_body_bytes;
    let cut_at_bytes = (robots_txt.len() > max).then_some(max);
    let robots = RobotsTxt::parse(&robots_txt[..robots_txt.len().min(max)]);
    // The file is given: its rules are known before any URL is matched.
    cost::check_work(urls.len(), names, robots.indexed_rules(), &state.limits)?;
    let tokens = checker::tokens(&agents).map_err(ApiError::from)?;
    let mut writer = BatchWriter::new(urls.len());
    for url in &urls {
        match evaluate_one(&robots, &tokens, url, decoding, &state.limits) {
            Ok(answer) => writer.answer(&answer, false),
            Err(error) => writer.error(&error.problem()),
        }
    }
    let mut out = writer.close_results();
    if request.include.is_some() {
        out.extend_from_slice(br#","parsed":"#);
        serde_json::to_writer(&mut out, &ParsedJson::from(&robots))
            .map_err(|_| ApiError::Internal)?;
    }
    if let Some(cut) = cut_at_bytes {
        out.extend_from_slice(br#","cut_at_bytes":"#);
        out.extend_from_slice(cut.to_string().as_bytes());
    }
    out.push(b'}');
    Ok(json::response(out))
}

fn evaluate_one(
    robots: &RobotsTxt,
    tokens: &[checker::AgentToken],
    url: &str,
    decoding: PercentDecoding,
    limits: &Limits,
) -> Result<checker::Answer, ApiError> {
    check_url_length(url, limits)?;
    Ok(Checker::evaluate(robots, tokens, url, decoding)?)
}
