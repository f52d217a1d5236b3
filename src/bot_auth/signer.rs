//! Signing one request (draft-ietf-webbotauth-httpsig-protocol): the three headers for a method
//! and URL, at a time and with a nonce the caller gives, so that the output is a function of its
//! inputs (the tests reproduce the draft's vector byte for byte).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::Signer as _;

use super::BotAuthError;
use super::keys::{Key, KeyStatus};
use super::message::{
    Component, Param, SignatureParams, sf_string, signature_base, signature_params,
};

/// The label of robotsd's signature, and the key of its `Signature-Agent` member.
pub const LABEL: &str = "sig1";
/// The tag of a signature made for a request to a site.
pub const TAG: &str = "web-bot-auth";
/// The bytes of a nonce: 64, as the draft's examples.
pub const NONCE_BYTES: usize = 64;

/// The headers a signed request carries, and the URL they were made for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedRequest {
    /// `Signature-Agent`: `sig1="https://…"`.
    pub signature_agent: String,
    /// `Signature-Input`: `sig1=(…);created=…;…`.
    pub signature_input: String,
    /// `Signature`: `sig1=:…:`.
    pub signature: String,
    /// The key's id.
    pub keyid: String,
    /// Unix seconds.
    pub created: u64,
    /// Unix seconds.
    pub expires: u64,
}

/// `@authority` (RFC 9421 §2.2.3): the host, lowercase, with its port unless the scheme's own.
pub fn authority(url: &url::Url) -> Result<String, BotAuthError> {
    let host = url
        .host_str()
        .ok_or_else(|| BotAuthError::NotSignable("a URL without a host".into()))?;
    let host = host.to_ascii_lowercase();
    Ok(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

/// The components robotsd covers for `method` and `url`: the request's method, authority, path
/// and query, so that a signature is good for one request only, and the agent's member.
pub fn request_components(
    method: &str,
    url: &url::Url,
    agent: &str,
) -> Result<Vec<Component>, BotAuthError> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(BotAuthError::NotSignable(format!("a {} URL", url.scheme())));
    }
    let plain = |name, value| Component {
        name,
        params: Vec::new(),
        value,
    };
    Ok(vec![
        plain("@method", method.to_owned()),
        plain("@authority", authority(url)?),
        // The url crate keeps the path as sent, percent-encoded, and gives `/` for an empty one.
        plain("@path", url.path().to_owned()),
        // RFC 9421 §2.2.7: the query with its `?`, and `?` alone when there is none.
        plain("@query", format!("?{}", url.query().unwrap_or(""))),
        Component {
            name: "signature-agent",
            params: vec![("key", Param::String(LABEL.to_owned()))],
            value: sf_string(agent)?,
        },
    ])
}

/// Signs `components` with `key`: the `Signature-Input` member's value and the signature.
pub fn sign(
    key: &Key,
    components: &[Component],
    params: &SignatureParams,
) -> Result<(String, String), BotAuthError> {
    let signing = key
        .signing()
        .ok_or_else(|| BotAuthError::BadKey(format!("{} only published", key.kid())))?;
    let input = signature_params(components, params)?;
    let base = signature_base(components, &input)?;
    let signature = STANDARD.encode(signing.sign(base.as_bytes()).to_bytes());
    Ok((input, signature))
}

/// The headers for `method` of `url`, signed by `key` for `agent` at `created` (Unix seconds),
/// good until `expires`, with `nonce`.
pub fn sign_request(
    key: &Key,
    agent: &str,
    method: &str,
    url: &url::Url,
    created: u64,
    expires: u64,
    nonce: &[u8; NONCE_BYTES],
) -> Result<SignedRequest, BotAuthError> {
    if key.status() != KeyStatus::Active {
        return Err(BotAuthError::BadKey(format!(
            "{} is published, not active: it signs no request",
            key.kid()
        )));
    }
    let components = request_components(method, url, agent)?;
    let params = SignatureParams {
        created,
        keyid: key.kid().to_owned(),
        alg: Some("ed25519"),
        expires,
        nonce: Some(STANDARD.encode(nonce)),
        tag: TAG,
    };
    let (input, signature) = sign(key, &components, &params)?;
    Ok(SignedRequest {
        signature_agent: format!("{LABEL}={}", sf_string(agent)?),
        signature_input: format!("{LABEL}={input}"),
        signature: format!("{LABEL}=:{signature}:"),
        keyid: params.keyid,
        created,
        expires,
    })
}
