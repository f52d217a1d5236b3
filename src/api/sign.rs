//! The `sign` member of a check's answer (`sign=GET`, Web Bot Auth): the three headers that
//! prove the fleet's identity for exactly the request robots.txt allowed, and the URL they were
//! made for. A disallowed URL gets none, and neither does a pacing slot deferred (the worker asks
//! again then); a reserved slot's signature lasts from its `not_before`.
//!
//! And `POST /v1/sign`: one URL checked and signed, for a redirect's next hop (a crawler that
//! follows a redirect must not send the first hop's signature to the second: it covers the
//! first's authority, path and query).

use std::borrow::Cow;

use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::caller::CallerOf;
use super::params::View;
use super::problem::{ApiError, BodyProblems, EdgeProblems, Problem};
use super::types::{CheckResponse, UserAgents};
use super::{AppState, JsonRequest, json, read_json};
use crate::bot_auth::signing::Signing;
use crate::checker::CheckOptions;
use crate::checker::{Answer, Paced};
use crate::metrics::{Metrics, SignatureOf};

/// The headers a signed request carries, by name, to send as they are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SignHeaders {
    /// The agent's URI, as the dictionary member the signature covers.
    #[serde(rename = "Signature-Agent")]
    #[schema(example = "sig1=\"https://bot.example/\"")]
    pub signature_agent: String,
    /// What the signature covers (method, authority, path, query and the agent), when it was
    /// made and until when it holds, the key's id, a nonce and `tag="web-bot-auth"`.
    #[serde(rename = "Signature-Input")]
    pub signature_input: String,
    /// The Ed25519 signature.
    #[serde(rename = "Signature")]
    pub signature: String,
}

/// With `sign=GET` (or `HEAD`) and an allowed URL: the Web Bot Auth headers for exactly that
/// request (docs/bot-auth.md). Absent for a disallowed URL, a deferred pacing slot, or without
/// `sign`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SignJson {
    /// The method they were made for.
    pub method: String,
    /// The URL they were made for, as the request must be sent (its path and query exactly).
    pub url: String,
    /// The headers to send with it.
    pub headers: SignHeaders,
    /// The signing key's id: its JWK SHA-256 thumbprint, listed in the key directory.
    pub keyid: String,
    /// When the signature was made (RFC 3339).
    pub created: String,
    /// Until when it holds (RFC 3339): a lifetime from now, or from a reserved pacing slot's
    /// `not_before`.
    pub expires: String,
}

fn rfc3339(seconds: u64) -> String {
    robotsd_page::date::format_rfc3339(i64::try_from(seconds).unwrap_or(i64::MAX))
}

/// Adds `sign` to the answer written in `body`, for `method` of `url` (the URL the check was
/// asked of), when the answer allows it.
pub(crate) fn append(
    body: &mut Vec<u8>,
    signing: &Signing,
    metrics: &Metrics,
    answer: &Answer,
    method: &str,
    url: &str,
) -> Result<(), ApiError> {
    if !answer.allowed {
        return Ok(());
    }
    let not_before = match &answer.pace {
        Paced::Slot(pace) if pace.reserved => Some(pace.not_before),
        // Deferred: no slot yet, so nothing to sign for.
        Paced::Slot(_) | Paced::Disallowed => return Ok(()),
        Paced::NotAsked => None,
    };
    // The check parsed this URL already; its parsed form, without a fragment (never sent), is
    // what the crawler must send.
    let mut target = url::Url::parse(url).map_err(|_| ApiError::Internal)?;
    target.set_fragment(None);
    let signed = signing.sign(method, &target, not_before).map_err(|error| {
        tracing::error!(%error, "a signature could not be made for an allowed URL");
        ApiError::Internal
    })?;
    metrics.observe_signature(&signed.keyid, SignatureOf::Request);
    let member = SignJson {
        method: method.to_owned(),
        url: target.as_str().to_owned(),
        headers: SignHeaders {
            signature_agent: signed.signature_agent,
            signature_input: signed.signature_input,
            signature: signed.signature,
        },
        keyid: signed.keyid,
        created: rfc3339(signed.created),
        expires: rfc3339(signed.expires),
    };
    debug_assert_eq!(body.last(), Some(&b'}'));
    body.pop();
    body.extend_from_slice(b",\"sign\":");
    // Strings and a Vec: serializing cannot fail.
    let _ = serde_json::to_writer(&mut *body, &member);
    body.push(b'}');
    Ok(())
}

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
