//! Bearer-token access to the API (`--api-token-file`): off by default; when on, every API
//! request must carry `Authorization: Bearer <token>` with one of the file's tokens. Probes,
//! metrics and the API reference stay open: they fetch nothing.
//!
//! Tokens are compared in constant time (`subtle`) against every token of the file, so neither
//! the time of a refusal nor which token matched tells a client anything about a token's content.
//! Their lengths are not secret.
//!
//! The file is read again on SIGHUP ([`TokenGate::reload`]): tokens can be rotated without a
//! restart, and a file that cannot be used then leaves the tokens in force as they were.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use subtle::ConstantTimeEq as _;

/// The shortest token accepted: shorter ones are guessable.
pub const MIN_TOKEN_BYTES: usize = 16;

/// The tokens that open the API, and the file they were read from, if any.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiTokens {
    tokens: Vec<Box<[u8]>>,
    file: Option<PathBuf>,
}

impl std::fmt::Debug for ApiTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiTokens({} tokens)", self.tokens.len())
    }
}

/// Why a token file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenFileError {
    /// It cannot be read.
    #[error("{0}")]
    Read(String),
    /// No token in it.
    #[error("it holds no token (one per line; blank lines and lines starting with # are skipped)")]
    Empty,
    /// A token too short, or with characters a header cannot carry.
    #[error(
        "line {line}: a token must be at least {MIN_TOKEN_BYTES} visible ASCII characters, \
         without spaces"
    )]
    BadToken {
        /// The line, from 1.
        line: usize,
    },
}

impl ApiTokens {
    /// The tokens of a token file's text: one per line, blank lines and `#` comments skipped.
    pub fn parse(text: &str) -> Result<ApiTokens, TokenFileError> {
        let mut tokens = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let token = line.trim();
            if token.is_empty() || token.starts_with('#') {
                continue;
            }
            if token.len() < MIN_TOKEN_BYTES || !token.bytes().all(|b| b.is_ascii_graphic()) {
                return Err(TokenFileError::BadToken { line: index + 1 });
            }
            tokens.push(token.as_bytes().into());
        }
        if tokens.is_empty() {
            return Err(TokenFileError::Empty);
        }
        Ok(ApiTokens { tokens, file: None })
    }

    /// The tokens of the file at `path`, which [`TokenGate::reload`] reads again.
    pub fn read(path: &Path) -> Result<ApiTokens, TokenFileError> {
        let text =
            std::fs::read_to_string(path).map_err(|e| TokenFileError::Read(e.to_string()))?;
        Ok(ApiTokens {
            file: Some(path.to_path_buf()),
            ..ApiTokens::parse(&text)?
        })
    }

    /// How many tokens there are.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether there are none (never, for tokens that parsed).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Whether an `Authorization` header value carries one of the tokens.
    pub fn admits(&self, authorization: Option<&[u8]>) -> bool {
        let Some(presented) = authorization.and_then(bearer) else {
            return false;
        };
        // Every token is compared, whatever matched before.
        self.tokens
            .iter()
            .fold(subtle::Choice::from(0), |found, token| {
                found | token.as_ref().ct_eq(presented)
            })
            .into()
    }
}

/// The tokens in force, shared by every request, replaced whole by [`TokenGate::reload`].
#[derive(Clone, Debug)]
pub struct TokenGate(Arc<RwLock<ApiTokens>>);

/// What a reload did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reloaded {
    /// The file was read again: this many tokens are in force now.
    Tokens(usize),
    /// The tokens were given without a file: nothing to read again.
    NoFile,
}

impl TokenGate {
    /// A gate that admits `tokens` until a reload.
    pub fn new(tokens: ApiTokens) -> TokenGate {
        TokenGate(Arc::new(RwLock::new(tokens)))
    }

    /// Whether an `Authorization` header value carries one of the tokens in force.
    pub fn admits(&self, authorization: Option<&[u8]>) -> bool {
        self.current().admits(authorization)
    }

    /// Reads the token file again and puts its tokens in force; a file that cannot be used
    /// changes nothing, so that a bad rotation never locks every caller out.
    pub fn reload(&self) -> Result<Reloaded, TokenFileError> {
        let Some(file) = self.current().file.clone() else {
            return Ok(Reloaded::NoFile);
        };
        let tokens = ApiTokens::read(&file)?;
        let count = tokens.len();
        *self
            .0
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = tokens;
        Ok(Reloaded::Tokens(count))
    }

    /// The file the tokens come from, if any.
    pub fn file(&self) -> Option<PathBuf> {
        self.current().file.clone()
    }

    fn current(&self) -> std::sync::RwLockReadGuard<'_, ApiTokens> {
        // A panic never happens while the lock is held (a plain assignment): a poisoned lock
        // still holds whole tokens.
        self.0
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The credentials of a `Bearer` authorization (the scheme is case-insensitive).
fn bearer(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then(|| rest.trim_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str =
        "# robotsd tokens\n\n0123456789abcdef-crawler-a\n  second-token-for-crawler-b  \n";

    #[test]
    fn a_file_holds_tokens_one_per_line() {
        let tokens = ApiTokens::parse(FILE).unwrap();
        assert!(tokens.admits(Some(b"Bearer 0123456789abcdef-crawler-a")));
        assert!(tokens.admits(Some(b"bearer second-token-for-crawler-b")));
        for refused in [
            None,
            Some(&b"Bearer 0123456789abcdef-crawler-"[..]),
            Some(b"Bearer 0123456789abcdef-crawler-ab"),
            Some(b"Basic 0123456789abcdef-crawler-a"),
            Some(b"0123456789abcdef-crawler-a"),
            Some(b"Bearer "),
            Some(b""),
        ] {
            assert!(!tokens.admits(refused), "{refused:?}");
        }
        assert_eq!(format!("{tokens:?}"), "ApiTokens(2 tokens)");
    }

    #[test]
    fn a_reload_puts_the_file_s_tokens_in_force_and_a_bad_file_changes_nothing() {
        let path = std::env::temp_dir().join(format!("robotsd-tokens-{}", std::process::id()));
        std::fs::write(&path, "first-token-0123456789\n").unwrap();
        let gate = TokenGate::new(ApiTokens::read(&path).unwrap());
        assert!(gate.admits(Some(b"Bearer first-token-0123456789")));
        std::fs::write(&path, "second-token-0123456789\nthird-token-0123456789\n").unwrap();
        assert_eq!(gate.reload(), Ok(Reloaded::Tokens(2)));
        assert!(!gate.admits(Some(b"Bearer first-token-0123456789")));
        assert!(gate.admits(Some(b"Bearer third-token-0123456789")));
        std::fs::write(&path, "short\n").unwrap();
        assert_eq!(gate.reload(), Err(TokenFileError::BadToken { line: 1 }));
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(gate.reload(), Err(TokenFileError::Read(_))));
        assert!(gate.admits(Some(b"Bearer second-token-0123456789")));
        let given = TokenGate::new(ApiTokens::parse(FILE).unwrap());
        assert_eq!(given.reload(), Ok(Reloaded::NoFile));
    }

    #[test]
    fn unusable_files_are_refused() {
        assert_eq!(ApiTokens::parse("# none\n\n"), Err(TokenFileError::Empty));
        assert_eq!(
            ApiTokens::parse("good-token-0123456789\nshort\n"),
            Err(TokenFileError::BadToken { line: 2 })
        );
        assert_eq!(
            ApiTokens::parse("has a space inside it\n"),
            Err(TokenFileError::BadToken { line: 1 })
        );
    }
}
