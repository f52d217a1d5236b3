//! The fleet's Ed25519 keys, from a JSON file (a mounted Secret): a JWK Set whose keys each say
//! whether they sign. A key is never written out whole: its `Debug` names only its `kid`.

use std::path::Path;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::BotAuthError;

/// The largest key file read, in bytes: a JWK Set of a few keys is well under a kilobyte each.
const MAX_KEY_FILE_BYTES: u64 = 64 * 1024;
/// The most keys a set may hold: the directory publishes every one.
pub const MAX_KEYS: usize = 16;

/// What a key is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyStatus {
    /// Signs, and is published.
    Active,
    /// Published only: a key about to sign (published ahead of a rotation) or one just
    /// retired (still published while signatures made with it may be verified).
    Published,
}

/// One key of the file, as a JWK (RFC 8037's OKP form) with robotsd's `status`.
#[derive(Deserialize)]
struct JwkEntry {
    kty: String,
    crv: String,
    x: String,
    /// The private part: required of an active key, optional of a published one.
    #[serde(default)]
    d: Option<String>,
    status: KeyStatus,
}

#[derive(Deserialize)]
struct JwkSetFile {
    keys: Vec<JwkEntry>,
}

/// A public key and, for the active one (and a published one whose file has it), its private
/// half.
pub struct Key {
    public: VerifyingKey,
    signing: Option<SigningKey>,
    kid: String,
    status: KeyStatus,
}

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Key")
            .field("kid", &self.kid)
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

impl Key {
    /// The key's id: its JWK SHA-256 thumbprint (RFC 7638), as `keyid` and `kid` carry it.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// What the key is for.
    pub fn status(&self) -> KeyStatus {
        self.status
    }

    /// The public key, as a JWK's `x`.
    pub fn x(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.public.as_bytes())
    }

    /// Whether robotsd holds the private half (the active key, and a published one whose file
    /// has it): such a key signs the directory.
    pub fn can_sign(&self) -> bool {
        self.signing.is_some()
    }

    /// The private half: the active key's, and a published key's when the file has it.
    pub(super) fn signing(&self) -> Option<&SigningKey> {
        self.signing.as_ref()
    }
}

/// The JWK SHA-256 thumbprint (RFC 7638 §3) of an Ed25519 public key: the hash of the JWK's
/// required members in lexicographic order, without whitespace (RFC 8037 §2), base64url.
pub fn thumbprint(public: &VerifyingKey) -> String {
    let x = URL_SAFE_NO_PAD.encode(public.as_bytes());
    let canonical = format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#);
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical.as_bytes()))
}

fn decode32(name: &str, value: &str) -> Result<[u8; 32], BotAuthError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(value.trim_end_matches('='))
        .map_err(|_| BotAuthError::BadKey(format!("`{name}` is not base64url")))?;
    <[u8; 32]>::try_from(bytes.as_slice())
        .map_err(|_| BotAuthError::BadKey(format!("`{name}` is not 32 bytes")))
}

/// The keys of one file: at most [`MAX_KEYS`], exactly one of them active.
#[derive(Debug)]
pub struct KeySet {
    keys: Vec<Key>,
}

impl KeySet {
    /// Reads and checks the file at `path`.
    pub fn load(path: &Path) -> Result<KeySet, BotAuthError> {
        let io =
            |e: std::io::Error| BotAuthError::KeyFile(path.display().to_string(), e.to_string());
        let size = std::fs::metadata(path).map_err(io)?.len();
        if size > MAX_KEY_FILE_BYTES {
            return Err(BotAuthError::KeyFile(
                path.display().to_string(),
                format!("{size} bytes, over {MAX_KEY_FILE_BYTES}"),
            ));
        }
        KeySet::from_json(&std::fs::read_to_string(path).map_err(io)?)
    }

    /// The keys of a JWK Set document: `{"keys": [{"kty": "OKP", "crv": "Ed25519", "x": …,
    /// "d": …, "status": "active"}, …]}`.
    pub fn from_json(text: &str) -> Result<KeySet, BotAuthError> {
        // serde_json's own message could quote the private key's text: say where, not what.
        let file: JwkSetFile = serde_json::from_str(text).map_err(|e| {
            BotAuthError::BadKey(format!(
                "not a JWK Set of Ed25519 keys with a status each (line {}, column {})",
                e.line(),
                e.column()
            ))
        })?;
        if file.keys.len() > MAX_KEYS {
            return Err(BotAuthError::BadKey(format!("more than {MAX_KEYS} keys")));
        }
        let mut keys = Vec::with_capacity(file.keys.len());
        for entry in file.keys {
            if entry.kty != "OKP" || entry.crv != "Ed25519" {
                return Err(BotAuthError::BadKey(format!(
                    "a key of type {}/{}: only OKP/Ed25519 signs",
                    entry.kty, entry.crv
                )));
            }
            let public = VerifyingKey::from_bytes(&decode32("x", &entry.x)?)
                .map_err(|_| BotAuthError::BadKey("`x` is not an Ed25519 public key".into()))?;
            let signing = match (&entry.d, entry.status) {
                (Some(d), _) => {
                    let signing = SigningKey::from_bytes(&decode32("d", d)?);
                    if signing.verifying_key() != public {
                        return Err(BotAuthError::BadKey(format!(
                            "the private key of {} is not the one of its `x`",
                            thumbprint(&public)
                        )));
                    }
                    Some(signing)
                }
                (None, KeyStatus::Active) => {
                    return Err(BotAuthError::BadKey(format!(
                        "the active key {} has no `d`",
                        thumbprint(&public)
                    )));
                }
                (None, KeyStatus::Published) => None,
            };
            let kid = thumbprint(&public);
            if keys.iter().any(|k: &Key| k.kid == kid) {
                return Err(BotAuthError::BadKey(format!("{kid} is listed twice")));
            }
            keys.push(Key {
                public,
                // A published key's private half, when the file has it, signs only the
                // directory: proof that whoever publishes the key holds it (a key published
                // ahead of a rotation), never a request.
                signing,
                kid,
                status: entry.status,
            });
        }
        match keys
            .iter()
            .filter(|k| k.status == KeyStatus::Active)
            .count()
        {
            1 => Ok(KeySet { keys }),
            n => Err(BotAuthError::BadKey(format!(
                "{n} active keys: exactly one signs (the others `published`)"
            ))),
        }
    }

    /// The key that signs.
    pub fn active(&self) -> &Key {
        self.keys
            .iter()
            .find(|k| k.status == KeyStatus::Active)
            .expect("a key set has one active key")
    }

    /// Every key, active and published, as the directory lists them.
    pub fn keys(&self) -> &[Key] {
        &self.keys
    }
}
