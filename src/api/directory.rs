//! The fleet's public identity: its key directory, served at
//! `/.well-known/http-message-signatures-directory` when robotsd holds keys (`--wba-keys`), and
//! its Signature Agent Card at `/.well-known/signature-agent-card` when its product token is set
//! (`--wba-product-token`). The directory is served so that a site can fetch the public keys
//! that verify the fleet's signatures from the URL its `Signature-Agent` names (docs/bot-auth.md
//! says how to route the bot domain's paths here). Public, as the draft has it: no token is
//! asked for.
//!
//! It is served for the host of `--wba-agent` alone (421 under any other), signed for it
//! (`"@authority";req`) so that a copy served under another host does not verify, and signed
//! again at most once a minute (`bot_auth::signing::DIRECTORY_REUSE`), so that a flood of
//! requests costs no more. It is cached for an hour, within the signatures' day
//! (`bot_auth::signing::DIRECTORY_TTL`), so a key rotated in is seen within the hour.

use axum::extract::State;
use axum::http::header::{self, HeaderMap, HeaderName, HeaderValue};
use axum::http::uri::{Authority, Uri};
use axum::response::{IntoResponse as _, Response};

use super::AppState;
use super::problem::ApiError;
pub use crate::bot_auth::card::PATH as CARD_PATH;
pub use crate::bot_auth::directory::{CONTENT_TYPE, PATH};
use crate::metrics::SignatureOf;

/// How long a site or a proxy may keep the directory: rotating a key in is seen within this.
pub const CACHE_CONTROL: &str = "public, max-age=3600";

/// The directory for the authority the request was made to; 400 when it names none.
pub(super) async fn directory(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let Some(signing) = &state.signing else {
        // Only routed with keys; kept total for a router built otherwise.
        return Err(ApiError::NotFound(PATH.to_owned()));
    };
    let authority = authority(&uri, &headers).ok_or(ApiError::MissingHost)?;
    // Served for the host sites fetch it from alone: signed for it once a minute at most,
    // however many ask, and never for a host a caller makes up.
    let served = signing.agent_authority();
    if !same_authority(authority.as_str(), &served) {
        return Err(ApiError::Misdirected(served));
    }
    let (body, signed, fresh) = signing.directory().map_err(|error| {
        tracing::error!(%error, "the key directory could not be signed");
        ApiError::Internal
    })?;
    if fresh {
        for kid in &signed.keyids {
            state.metrics.observe_signature(kid, SignatureOf::Directory);
        }
    }
    let header = |value: String| HeaderValue::try_from(value).map_err(|_| ApiError::Internal);
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE)),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static(CACHE_CONTROL),
            ),
            (
                HeaderName::from_static("content-digest"),
                header(signed.content_digest)?,
            ),
            (
                HeaderName::from_static("signature-input"),
                header(signed.signature_input)?,
            ),
            (
                HeaderName::from_static("signature"),
                header(signed.signature)?,
            ),
        ],
        body,
    )
        .into_response())
}

/// The Signature Agent Card, for the authority the request was made to.
pub(super) async fn card(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let authority = authority(&uri, &headers).ok_or(ApiError::MissingHost)?;
    let Some(card) = state
        .signing
        .as_ref()
        .and_then(|s| s.card(authority.as_str()))
    else {
        // Only routed with a product token; kept total for a router built otherwise.
        return Err(ApiError::NotFound(CARD_PATH.to_owned()));
    };
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static(CACHE_CONTROL),
            ),
        ],
        card,
    )
        .into_response())
}

/// Whether the request's `asked` authority is `served` (lower-cased, `host[:port]`): case
/// aside, and a default port (`:443`, `:80`) being no port.
fn same_authority(asked: &str, served: &str) -> bool {
    let asked = asked.to_ascii_lowercase();
    let asked = asked
        .strip_suffix(":443")
        .or_else(|| asked.strip_suffix(":80"))
        .unwrap_or(&asked);
    asked == served
}

/// The request's authority: HTTP/2's `:authority` (in the URI), else HTTP/1.1's `Host`, if it
/// is one.
fn authority(uri: &Uri, headers: &HeaderMap) -> Option<Authority> {
    if let Some(authority) = uri.authority() {
        return Some(authority.clone());
    }
    let host = headers.get(header::HOST)?.to_str().ok()?;
    let authority: Authority = host.parse().ok()?;
    // A Host is a host and a port, nothing more (RFC 9110, 7.2).
    (authority.as_str().find('@').is_none() && !authority.host().is_empty()).then_some(authority)
}

/// The card's description in the OpenAPI document.
#[utoipa::path(get, path = "/.well-known/signature-agent-card", tag = "identity",
    responses(
        (status = 200, description = "The fleet's Signature Agent Card \
            (draft-meunier-webbotauth-registry-04): `client_id` (its own URL), `client_name`, \
            `jwks_uri` (the key directory, --wba-agent), `contacts` (--operator-contact) and \
            `web_bot_auth` with the `rfc9309-product-token` robotsd checks for before it signs \
            and `rfc9309-compliance: true`. Served only with --wba-product-token.",
            content_type = "application/json", body = Object),
        (status = 400, description = "No `Host`.", body = super::problem::Problem,
            content_type = "application/problem+json"),
        (status = 404, description = "No product token (no `--wba-product-token`).",
            body = super::problem::Problem, content_type = "application/problem+json")))]
#[allow(dead_code)]
pub(super) async fn card_doc() {}

/// The directory's body, for the OpenAPI document: robotsd writes its bytes itself
/// (`bot_auth::directory::body`), as its digest covers them.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // Only its OpenAPI description is used.
pub struct KeyDirectoryJson {
    /// Every key, active and published.
    keys: Vec<PublicJwk>,
}

/// A public Ed25519 key (RFC 8037), as the directory lists it.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // Only its OpenAPI description is used.
pub struct PublicJwk {
    /// `OKP`.
    #[schema(example = "OKP")]
    kty: String,
    /// `Ed25519`.
    #[schema(example = "Ed25519")]
    crv: String,
    /// The key's JWK SHA-256 thumbprint (RFC 7638), the `keyid` of its signatures.
    #[schema(example = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U")]
    kid: String,
    /// The public key, base64url.
    #[schema(example = "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs")]
    x: String,
    /// `sig`.
    #[serde(rename = "use")]
    #[schema(example = "sig")]
    usage: String,
}

/// The directory's description in the OpenAPI document.
#[utoipa::path(get, path = "/.well-known/http-message-signatures-directory", tag = "identity",
    responses(
        (status = 200, description = "The fleet's Ed25519 public keys (a JWK Set), with \
            `Content-Digest` and a signature per key over it and the authority asked of \
            (draft-ietf-webbotauth-httpsig-protocol). Served only with `--wba-keys`.",
            content_type = "application/http-message-signatures-directory+json",
            body = KeyDirectoryJson),
        (status = 400, description = "No `Host`.", body = super::problem::Problem,
            content_type = "application/problem+json"),
        (status = 421, description = "Asked under another host than the one `--wba-agent` \
            names: the directory is signed for that host alone (`misdirected`).",
            body = super::problem::Problem, content_type = "application/problem+json"),
        (status = 404, description = "This robotsd holds no key (no `--wba-keys`).",
            body = super::problem::Problem, content_type = "application/problem+json")))]
#[allow(dead_code)]
pub(super) async fn directory_doc() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_is_served_for_the_agents_host_alone() {
        assert!(same_authority("Bot.Example", "bot.example"));
        assert!(same_authority("bot.example:443", "bot.example"));
        assert!(same_authority("bot.example:8443", "bot.example:8443"));
        assert!(!same_authority("bot.example:8443", "bot.example"));
        assert!(!same_authority("evil.example", "bot.example"));
        assert!(!same_authority("bot.example.evil", "bot.example"));
    }

    #[test]
    fn the_authority_is_the_uris_then_the_hosts() {
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, HeaderValue::from_static("bot.example:8443"));
        let from_host = authority(&Uri::from_static("/x"), &headers).expect("host");
        assert_eq!(from_host.as_str(), "bot.example:8443");
        let h2 = Uri::from_static("https://Bot.Example/x");
        assert_eq!(
            authority(&h2, &headers).expect("uri").as_str(),
            "Bot.Example"
        );
        for bad in ["user@bot.example", "", ":80"] {
            headers.insert(header::HOST, HeaderValue::from_static(bad));
            assert_eq!(authority(&Uri::from_static("/x"), &headers), None, "{bad}");
        }
        headers.remove(header::HOST);
        assert_eq!(authority(&Uri::from_static("/x"), &headers), None);
    }
}
