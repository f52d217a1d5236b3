//! Web Bot Auth: the fleet's identity, as signatures of the requests robots.txt allows
//! (draft-ietf-webbotauth-httpsig-protocol, on RFC 9421 HTTP Message Signatures, Ed25519).
//!
//! robotsd holds the keys ([`keys`]), builds each signature base itself ([`message`]), signs one
//! request ([`signer`]) and its key directory ([`directory`]), for the service through
//! [`signing::Signing`], at a time and with a nonce its
//! caller gives, so every
//! output here is a function of its inputs: the tests reproduce the draft's test vector byte for
//! byte. Why not the `web-bot-auth` crate (Cloudflare's, 0.7): its signer reads the clock itself
//! (no injected clock, so no fixed-output tests and no pacing slot's `not_before` as `created`),
//! its verifier does not check `expires`, and its example signs the whole `Signature-Agent`
//! header where the draft covers the keyed member. What is left to write is small and fully
//! specified (a signature base is a few lines of Structured Field serialization, which `sfv`
//! does), and the cryptography is `ed25519-dalek`'s.

pub mod card;
pub mod directory;
pub mod keys;
pub mod message;
pub mod signer;
pub mod signing;

/// What can go wrong with a key or a signature.
#[derive(Debug, thiserror::Error)]
pub enum BotAuthError {
    /// The key file could not be read.
    #[error("the Web Bot Auth key file {0}: {1}")]
    KeyFile(String, String),
    /// A key is malformed, or the set is not one robotsd can sign with.
    #[error("Web Bot Auth keys: {0}")]
    BadKey(String),
    /// A value cannot be written as a Structured Field string (a byte outside printable ASCII).
    #[error("not a Structured Field string: {0:?}")]
    NotAStructuredString(String),
    /// A parameter name that is not a Structured Field key.
    #[error("not a Structured Field key: {0:?}")]
    NotAKey(String),
    /// A time past what a Structured Field integer holds.
    #[error("a time out of range: {0}")]
    TimeOutOfRange(u64),
    /// The request cannot be signed.
    #[error("cannot sign {0}")]
    NotSignable(String),
    /// The agent's URI cannot be a `Signature-Agent` member.
    #[error("the Web Bot Auth agent {0}")]
    BadAgent(String),
    /// A signature lifetime outside 1 s to 5 min.
    #[error("a signature lifetime of {0:?}: it must be from 1s to 5m")]
    BadTtl(std::time::Duration),
}

#[cfg(test)]
mod tests;
