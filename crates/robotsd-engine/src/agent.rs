//! User-agent values in groups and in questions (SEMANTICS.md §1 "User-agent matching (engine)").
//!
//! A group line's value is cut to its leading run of `[A-Za-z_-]` (`Googlebot/2.1` → `Googlebot`);
//! the agent asked about is used verbatim and compared case-insensitively. Deriving a product
//! token from a whole `User-Agent` header is the service's job, not the engine's.

/// The leading run of `[A-Za-z_-]` of a user-agent value: the product token the reference keeps.
pub fn extract_user_agent(value: &str) -> &str {
    // The token is ASCII, so its length is a character boundary.
    &value[..extract_token(value.as_bytes()).len()]
}

/// [`extract_user_agent`] on bytes (a group line's value need not be UTF-8).
pub(crate) fn extract_token(value: &[u8]) -> &[u8] {
    let end = value
        .iter()
        .position(|&b| !(b.is_ascii_alphabetic() || b == b'-' || b == b'_'))
        .unwrap_or(value.len());
    &value[..end]
}

/// Whether `agent` is a valid product token to obey: non-empty and only `[A-Za-z_-]`.
pub fn is_valid_user_agent_to_obey(agent: &str) -> bool {
    !agent.is_empty() && extract_user_agent(agent).len() == agent.len()
}

/// Whether a `user-agent` value names the global group: `*` alone or followed by whitespace.
pub fn is_global_agent(value: &[u8]) -> bool {
    match value {
        [b'*'] => true,
        [b'*', next, ..] => crate::tokenizer::is_space(*next),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_the_leading_letters_dashes_and_underscores() {
        assert_eq!(extract_user_agent("Googlebot/2.1"), "Googlebot");
        assert_eq!(extract_user_agent("Foo Bar"), "Foo");
        assert_eq!(extract_user_agent("googlebot-news"), "googlebot-news");
        assert_eq!(extract_user_agent("1bot"), "");
    }

    #[test]
    fn global_only_for_star_alone_or_star_space() {
        assert!(is_global_agent(b"*"));
        assert!(is_global_agent(b"* foo"));
        assert!(!is_global_agent(b"*foo"));
        assert!(!is_global_agent(b"foo*"));
    }
}
