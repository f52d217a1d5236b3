//! `POST /v1/sign`: one URL checked and signed, for a redirect's next hop (a crawler that
//! follows a redirect must not send the first hop's signature to the second: it covers the
//! first's authority, path and query).

use std::borrow::Cow;

use axum::extract::State;
use serde::Deserialize;
use utoipa::ToSchema;

use super::caller::CallerOf;
use super::params::View;
use super::problem::{ApiError, BodyProblems, EdgeProblems, Problem};
use super::sign::{append, signs_for};
use super::types::{CheckResponse, UserAgents};
use super::{AppState, JsonRequest, json, read_json};
use crate::checker::CheckOptions;

/// The body of `POST /v1/sign`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"url": "https://www.example.com/shop?id=7", "ua": "ExampleBot", "method": "GET"}))]
pub struct SignRequest {
    /// The URL the crawler is about to fetch (a redirect's next hop): checked as `GET
    /// /v1/check` checks it, and signed only if allowed.
    pub url: String,
    /// The agent(s) the crawler fetches as.
    pub ua: UserAgents,
    /// `GET` (the default) or `HEAD`.
    #[serde(default)]
    pub method: Option<String>,
    /// Also reserve the URL's fetch slot (its origin may not be the first hop's); the
    /// signature then lasts from the slot. Default `false`.
    #[serde(default)]
    pub pace: bool,
}

/// Checks one URL and signs its request if allowed: for a redirect's next hop, or any URL a
/// crawler would rather send in a body than a query. The answer is `GET /v1/check`'s, with
/// `sign` when allowed.
#[utoipa::path(
    post,
    path = "/v1/sign",
    tag = "check",
    request_body = SignRequest,
    responses(
        (status = 200, description = "The check's answer, with `sign` (the Web Bot Auth headers for exactly this request) when the URL is allowed.", body = CheckResponse),
        (status = 400, description = "The body is not a request to sign (a method other than GET or HEAD, among others), its URL or agent is invalid, or this robotsd holds no key (`signing-off`).", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "The body is not declared as JSON (Content-Type: application/json).", body = Problem, content_type = "application/problem+json"),
        BodyProblems,
        EdgeProblems,
    )
)]
pub(super) async fn sign_post(
    State(state): State<AppState>,
    CallerOf(caller): CallerOf,
    body: JsonRequest,
) -> Result<axum::response::Response, ApiError> {
    // Said before the body is parsed or anything fetched, as for `sign=` on a check.
    let Some(signing) = state.signing.clone() else {
        return Err(ApiError::SigningOff);
    };
    let request: SignRequest = read_json(body, &state.limits)?;
    let method = match request.method.as_deref() {
        None | Some("GET") => "GET",
        Some("HEAD") => "HEAD",
        Some(other) => {
            return Err(ApiError::InvalidBody(format!(
                "method {:?}: robotsd signs GET and HEAD requests",
                other.chars().take(32).collect::<String>()
            )));
        }
    };
    let agents = request.ua.into_vec();
    signs_for(&signing, &agents)?;
    let options = CheckOptions {
        decoding: state.checker.percent_decoding(),
        pace: request.pace,
        licenses: true,
        caller,
    };
    let url = request.url;
    let answer = super::check_one(
        &state,
        Cow::Borrowed(&url),
        &agents,
        options,
        View::Full,
        None,
    )
    .await?;
    let mut body = Vec::with_capacity(json::INITIAL_CAPACITY);
    crate::fast::answer_json::write_answer(&mut body, &answer);
    append(&mut body, &signing, &state.metrics, &answer, method, &url)?;
    Ok(json::response(body))
}
