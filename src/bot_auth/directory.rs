//! The key directory (draft-ietf-webbotauth-httpsig-protocol, "Key directory"): a JWK Set of the
//! fleet's public keys, served at `/.well-known/http-message-signatures-directory` as
//! `application/http-message-signatures-directory+json`, signed once per key whose private half
//! robotsd holds, over the authority the directory was asked of and its `Content-Digest`, so
//! that the set cannot be served again under another host. Pure: the body and the headers are
//! functions of the keys, the authority and the times.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

use super::BotAuthError;
use super::keys::KeySet;
use super::message::{Component, Param, SignatureParams};
use super::signer::sign;

/// Where the directory is served.
pub const PATH: &str = "/.well-known/http-message-signatures-directory";
/// Its media type.
pub const CONTENT_TYPE: &str = "application/http-message-signatures-directory+json";
/// The tag of the directory's signatures.
pub const TAG: &str = "http-message-signatures-directory";

/// The directory's body: every key, active and published, as a public JWK with its `kid`, in
/// the file's order. Written by hand so that its bytes (which `Content-Digest` covers) do not
/// depend on a serializer's choices: every value is base64url, which needs no escaping.
pub fn body(keys: &KeySet) -> String {
    let members: Vec<String> = keys
        .keys()
        .iter()
        .map(|key| {
            format!(
                r#"{{"kty":"OKP","crv":"Ed25519","kid":"{}","x":"{}","use":"sig"}}"#,
                key.kid(),
                key.x()
            )
        })
        .collect();
    format!(r#"{{"keys":[{}]}}"#, members.join(","))
}

/// `Content-Digest` (RFC 9530) of `body`: its SHA-256.
pub fn content_digest(body: &str) -> String {
    format!(
        "sha-256=:{}:",
        STANDARD.encode(Sha256::digest(body.as_bytes()))
    )
}

/// The directory response's signature headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirectoryHeaders {
    /// `Content-Digest`.
    pub content_digest: String,
    /// `Signature-Input`: a member `binding<i>` per signing key.
    pub signature_input: String,
    /// `Signature`: the same members.
    pub signature: String,
    /// The ids of the keys that signed, in the members' order.
    pub keyids: Vec<String>,
}

/// The headers of the directory served for `authority` (the request's `@authority`), made at
/// `created` and good until `expires` (Unix seconds): one signature per key that robotsd holds
/// the private half of.
pub fn sign_directory(
    keys: &KeySet,
    body: &str,
    authority: &str,
    created: u64,
    expires: u64,
) -> Result<DirectoryHeaders, BotAuthError> {
    let content_digest = content_digest(body);
    let components = [
        Component {
            name: "@authority",
            params: vec![("req", Param::Flag)],
            value: authority.to_ascii_lowercase(),
        },
        Component {
            name: "content-digest",
            params: Vec::new(),
            value: content_digest.clone(),
        },
    ];
    let (mut inputs, mut signatures, mut keyids) = (Vec::new(), Vec::new(), Vec::new());
    for key in keys.keys().iter().filter(|key| key.can_sign()) {
        let label = format!("binding{}", inputs.len());
        let params = SignatureParams {
            created,
            keyid: key.kid().to_owned(),
            alg: Some("ed25519"),
            expires,
            nonce: None,
            tag: TAG,
        };
        let (input, signature) = sign(key, &components, &params)?;
        inputs.push(format!("{label}={input}"));
        signatures.push(format!("{label}=:{signature}:"));
        keyids.push(key.kid().to_owned());
    }
    Ok(DirectoryHeaders {
        content_digest,
        signature_input: inputs.join(", "),
        signature: signatures.join(", "),
        keyids,
    })
}
