//! The `sign` member of a check's answer (`sign=GET`, Web Bot Auth): the three headers that
//! prove the fleet's identity for exactly the request robots.txt allowed, and the URL they were
//! made for. A disallowed URL gets none, and neither does a pacing slot deferred (the worker asks
//! again then); a reserved slot's signature lasts from its `not_before`. `POST /v1/sign`, which
//! answers the same member, is `sign_request`.

use serde::Serialize;
use utoipa::ToSchema;

use super::problem::ApiError;
use crate::bot_auth::signing::Signing;
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

/// Refuses a check to sign that is not made for the fleet's product token, when one is set:
/// the card says the fleet obeys that token's rules, and a signature vouches for it.
pub(crate) fn signs_for<S: AsRef<str>>(signing: &Signing, agents: &[S]) -> Result<(), ApiError> {
    if signing.signs_for(agents) {
        return Ok(());
    }
    let token = signing.product_token().unwrap_or_default().to_owned();
    Err(ApiError::SignsAnotherAgent(token))
}
