//! Bearer-token access to the API (`--api-token-file`): off by default; when on, every API
//! request must carry `Authorization: Bearer <token>` with one of the file's tokens. Probes,
//! metrics and the API reference stay open: they fetch nothing.
//!
//! Tokens are compared in constant time (`subtle`) against every token of the file, so neither
//! the time of a refusal nor which token matched tells a client anything about a token's content.
//! Their lengths are not secret.

use subtle::ConstantTimeEq as _;

/// The shortest token accepted: shorter ones are guessable.
pub const MIN_TOKEN_BYTES: usize = 16;

/// The tokens that open the API.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiTokens(Vec<Box<[u8]>>);

impl std::fmt::Debug for ApiTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiTokens({} tokens)", self.0.len())
    }
}

/// Why a token file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenFileError {
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
        Ok(ApiTokens(tokens))
    }

    /// Whether an `Authorization` header value carries one of the tokens.
    pub fn admits(&self, authorization: Option<&[u8]>) -> bool {
        let Some(presented) = authorization.and_then(bearer) else {
            return false;
        };
        // Every token is compared, whatever matched before.
        self.0
            .iter()
            .fold(subtle::Choice::from(0), |found, token| {
                found | token.as_ref().ct_eq(presented)
            })
            .into()
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
