//! The product token to ask the engine about, from a `ua` parameter that may be a bare token or a
//! whole `User-Agent` header (SEMANTICS.md §2, last point). The engine compares agents verbatim
//! and only obeys `[A-Za-z_-]+`, so the service must reduce a header to the token a crawler
//! would obey itself.
//!
//! Rules, in order, on the value with surrounding whitespace trimmed:
//! 1. A value starting with `Mozilla/` (ASCII case-insensitive) is a browser-style header whose
//!    leading token says nothing about the crawler. Its top-level parenthesised comments are
//!    split at `;` into entries (a nested comment stays inside its entry), and the token is
//!    taken from
//!    - (a) the first entry after an entry `compatible` (`(compatible; bingbot/2.0; …)`,
//!      `(KHTML, like Gecko; compatible; GPTBot/1.2; …)`), its leading `[A-Za-z_-]` run; if
//!      that run is empty this rule does not apply to that comment; else
//!    - (b) the first entry shaped `Token/…` whose `Token` (`[A-Za-z_-]+`) ends in `bot`
//!      (ASCII case-insensitive): `(Applebot/0.1; +http://…)`.
//! 2. Otherwise, and for a `Mozilla/` value where neither applies, the leading `[A-Za-z_-]` run:
//!    `Googlebot/2.1 (+http://…)` → `Googlebot`, `curl/8.5.0` → `curl`, and a bare token as is.
//!
//! Deviation beyond §2: rule 1b (the spec only names the `compatible;` form), added because
//! Applebot and others put their token in a comment without `compatible;`. A plain browser
//! header yields `Mozilla`: robotsd cannot guess which crawler sent it, so it uses the leading
//! token as §2 says, and the answer shows that token.

/// The agents a `ua` value names: several when it is a comma-separated list of names, as crawler
/// configurations often hold them (Nutch's `http.robots.agents`: `MyBot,OtherBot`); the value
/// itself otherwise. A value is a list when it holds a comma, no parenthesis, and no part with
/// a space inside, so that a whole `User-Agent` header (`… (KHTML, like Gecko) …`, `MyBot/1.0
/// +https://…`) stays one agent. Parts are trimmed; empty ones are dropped.
pub fn agents_in(ua: &str) -> impl Iterator<Item = &str> {
    // A control character keeps the value whole, so that it is refused as a whole.
    // Commas are looked for as bytes: a `char` pattern sets up a searcher, which costs more
    // than a name's few bytes.
    let is_list = ua.as_bytes().contains(&b',')
        && !ua.bytes().any(|b| b < 0x20 || b == 0x7f)
        && !ua.contains(['(', ')'])
        && ua
            .split(',')
            .all(|part| !part.trim().contains(char::is_whitespace));
    let (list, single) = if is_list {
        (Some(ua), None)
    } else {
        (None, Some(ua))
    };
    let parts = list
        .into_iter()
        .flat_map(|ua| ua.split(','))
        .map(str::trim)
        .filter(|part| !part.is_empty());
    single.into_iter().chain(parts)
}

/// The longest `ua` value accepted, in bytes, after trimming.
pub const MAX_USER_AGENT_BYTES: usize = 1024;

/// The most names a `ua` value of [`MAX_USER_AGENT_BYTES`] can list (`a,b,…`: a name and a comma
/// each), and so the highest `--max-agent-names` means anything.
pub const MAX_AGENT_NAMES: usize = MAX_USER_AGENT_BYTES / 2;

/// How many names `ua` lists, as [`agents_in`] splits it.
pub fn names_in(ua: &str) -> usize {
    // A value without a comma is one name (refused later if empty): the common case, one scan.
    if !ua.as_bytes().contains(&b',') {
        return 1;
    }
    agents_in(ua).count()
}

/// How much of a token-less value is echoed back in [`UserAgentError::NoToken`].
const MAX_REPORTED_BYTES: usize = 64;

/// Why a `ua` value yields no product token. Every variant is a client error (HTTP 400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UserAgentError {
    /// The value is empty or only whitespace.
    #[error("empty user-agent")]
    Empty,
    /// The trimmed value is longer than the limit.
    #[error("user-agent is {len} bytes, longer than the limit of {max} bytes")]
    TooLong {
        /// Length of the trimmed value, in bytes.
        len: usize,
        /// The limit, [`MAX_USER_AGENT_BYTES`].
        max: usize,
    },
    /// No product token (`[A-Za-z_-]+`) where one was looked for; the trimmed value, cut to
    /// 64 bytes at a character boundary.
    #[error("no product token ([A-Za-z_-]+) in user-agent `{0}`")]
    NoToken(String),
    /// A line break or another control character (tab aside), which no `User-Agent` header can
    /// hold.
    #[error("user-agent contains a line break or another control character")]
    ControlCharacter,
}

/// The product token of a `ua` value: a non-empty slice of `ua` made of `[A-Za-z_-]` only. See
/// the module documentation for the rules.
pub fn product_token(ua: &str) -> Result<&str, UserAgentError> {
    if ua.bytes().any(|b| (b < 0x20 && b != b'\t') || b == 0x7f) {
        return Err(UserAgentError::ControlCharacter);
    }
    // `trim` decodes a character at each end to know it is no space; a value that starts and
    // ends with a printable ASCII byte, as nearly all do, has none to trim.
    let value = match (ua.as_bytes().first(), ua.as_bytes().last()) {
        (Some(first), Some(last)) if first.is_ascii_graphic() && last.is_ascii_graphic() => ua,
        _ => ua.trim(),
    };
    if value.is_empty() {
        return Err(UserAgentError::Empty);
    }
    if value.len() > MAX_USER_AGENT_BYTES {
        return Err(UserAgentError::TooLong {
            len: value.len(),
            max: MAX_USER_AGENT_BYTES,
        });
    }
    let token = if is_mozilla(value) {
        crawler_in_comments(value).unwrap_or_else(|| leading_token(value))
    } else {
        leading_token(value)
    };
    if token.is_empty() {
        return Err(UserAgentError::NoToken(
            cut(value, MAX_REPORTED_BYTES).to_owned(),
        ));
    }
    Ok(token)
}

fn is_mozilla(value: &str) -> bool {
    const PREFIX: &[u8] = b"mozilla/";
    value
        .as_bytes()
        .get(..PREFIX.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(PREFIX))
}

/// The leading `[A-Za-z_-]` run of `value`, possibly empty.
fn leading_token(value: &str) -> &str {
    let end = value
        .bytes()
        .position(|b| !(b.is_ascii_alphabetic() || b == b'-' || b == b'_'))
        .unwrap_or(value.len());
    // The run is ASCII, so `end` is a character boundary.
    &value[..end]
}

/// Rules 1a and 1b over the comments of a `Mozilla/` value.
fn crawler_in_comments(value: &str) -> Option<&str> {
    after_compatible(value).or_else(|| {
        comments(value).flat_map(entries).find_map(|entry| {
            let token = leading_token(entry);
            let is_bot = token.len() >= 3
                && token.as_bytes()[token.len() - 3..].eq_ignore_ascii_case(b"bot")
                && entry.as_bytes().get(token.len()) == Some(&b'/');
            is_bot.then_some(token)
        })
    })
}

/// Rule 1a: the token of the entry after `compatible`, per comment, first comment that has one.
fn after_compatible(value: &str) -> Option<&str> {
    comments(value).find_map(|comment| {
        let mut entries = entries(comment);
        entries.find(|entry| entry.eq_ignore_ascii_case("compatible"))?;
        let token = leading_token(entries.next()?);
        (!token.is_empty()).then_some(token)
    })
}

/// The non-empty, trimmed `;`-separated entries of a comment. A `;` inside a nested comment
/// belongs to that comment, not to this list.
fn entries(comment: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0usize;
    comment
        .split(move |c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                ';' => return depth == 0,
                _ => {}
            }
            false
        })
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
}

/// The contents of the top-level `(…)` comments of `value`, in order. Nested parentheses stay
/// inside their comment; an unclosed comment runs to the end, as a truncated header would.
fn comments(value: &str) -> impl Iterator<Item = &str> {
    let mut rest = value;
    std::iter::from_fn(move || {
        let open = rest.find('(')?;
        let body = &rest[open + 1..];
        let mut depth = 0usize;
        let mut end = body.len();
        for (i, b) in body.bytes().enumerate() {
            match b {
                b'(' => depth += 1,
                b')' if depth == 0 => {
                    end = i;
                    break;
                }
                b')' => depth -= 1,
                _ => {}
            }
        }
        rest = body.get(end + 1..).unwrap_or("");
        Some(&body[..end])
    })
}

/// `s` cut to at most `max` bytes at a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comma_lists_name_several_agents_but_headers_stay_whole() {
        let agents = |ua| agents_in(ua).collect::<Vec<_>>();
        assert_eq!(agents("Googlebot,SomeBot"), ["Googlebot", "SomeBot"]);
        assert_eq!(agents(" MyBot , OtherBot,"), ["MyBot", "OtherBot"]);
        assert_eq!(agents("Googlebot"), ["Googlebot"]);
        for whole in [
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/1",
            "MyBot/1.0 +https://example.com/a,b",
            "My Bot, Other",
            "a,\r\nb",
        ] {
            assert_eq!(agents(whole), [whole]);
        }
    }
    use proptest::prelude::*;

    fn token(ua: &str) -> &str {
        product_token(ua).expect("a token")
    }

    fn is_engine_token(token: &str) -> bool {
        !token.is_empty()
            && token
                .bytes()
                .all(|b| b.is_ascii_alphabetic() || b == b'-' || b == b'_')
    }

    #[test]
    fn empty_is_refused() {
        assert_eq!(product_token(""), Err(UserAgentError::Empty));
    }

    #[test]
    fn whitespace_only_is_empty() {
        assert_eq!(product_token(" \t "), Err(UserAgentError::Empty));
    }

    #[test]
    fn line_breaks_and_control_characters_are_refused() {
        for ua in [
            "Googlebot\r\nX-Injected: 1",
            "Googlebot\n",
            "Bot\u{0}",
            "Bot\u{7f}",
        ] {
            assert_eq!(
                product_token(ua),
                Err(UserAgentError::ControlCharacter),
                "{ua:?}"
            );
        }
        assert_eq!(product_token("Googlebot/2.1\t(+x)"), Ok("Googlebot"));
    }

    #[test]
    fn surrounding_whitespace_is_trimmed() {
        assert_eq!(token("  Googlebot  "), "Googlebot");
    }

    #[test]
    fn too_long_is_refused() {
        let ua = "a".repeat(MAX_USER_AGENT_BYTES + 1);
        assert_eq!(
            product_token(&ua),
            Err(UserAgentError::TooLong {
                len: MAX_USER_AGENT_BYTES + 1,
                max: MAX_USER_AGENT_BYTES
            })
        );
    }

    #[test]
    fn at_the_limit_is_accepted() {
        let ua = "a".repeat(MAX_USER_AGENT_BYTES);
        assert_eq!(product_token(&ua), Ok(ua.as_str()));
    }

    #[test]
    fn limit_applies_after_trimming() {
        let ua = format!("  {}  ", "a".repeat(MAX_USER_AGENT_BYTES));
        assert!(product_token(&ua).is_ok());
    }

    #[test]
    fn digits_have_no_token() {
        assert_eq!(
            product_token("1234"),
            Err(UserAgentError::NoToken("1234".into()))
        );
    }

    #[test]
    fn leading_slash_has_no_token() {
        assert_eq!(
            product_token("/x"),
            Err(UserAgentError::NoToken("/x".into()))
        );
    }

    #[test]
    fn comment_only_has_no_token() {
        assert_eq!(
            product_token("(foo)"),
            Err(UserAgentError::NoToken("(foo)".into()))
        );
    }

    #[test]
    fn no_token_value_is_cut_at_a_char_boundary() {
        let ua = format!("1{}", "é".repeat(100));
        let Err(UserAgentError::NoToken(shown)) = product_token(&ua) else {
            panic!("expected NoToken");
        };
        assert!(shown.len() <= 64 && ua.starts_with(&shown));
        assert_eq!(shown.len(), 63);
    }

    #[test]
    fn googlebot_header() {
        assert_eq!(
            token("Googlebot/2.1 (+http://www.google.com/bot.html)"),
            "Googlebot"
        );
    }

    #[test]
    fn googlebot_compatible() {
        assert_eq!(
            token("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"),
            "Googlebot"
        );
    }

    #[test]
    fn bingbot() {
        assert_eq!(
            token("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"),
            "bingbot"
        );
    }

    #[test]
    fn gptbot() {
        assert_eq!(
            token(
                "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; \
                 +https://openai.com/gptbot)"
            ),
            "GPTBot"
        );
    }

    #[test]
    fn googlebot_smartphone() {
        assert_eq!(
            token(
                "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 \
                 (KHTML, like Gecko) Chrome/W.X.Y.Z Mobile Safari/537.36 (compatible; \
                 Googlebot/2.1; +http://www.google.com/bot.html)"
            ),
            "Googlebot"
        );
    }

    #[test]
    fn googlebot_image() {
        assert_eq!(token("Googlebot-Image/1.0"), "Googlebot-Image");
    }

    #[test]
    fn bare_googlebot_image() {
        assert_eq!(token("Googlebot-Image"), "Googlebot-Image");
    }

    #[test]
    fn googlebot_news() {
        assert_eq!(token("Googlebot-News"), "Googlebot-News");
    }

    #[test]
    fn applebot() {
        assert_eq!(
            token(
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, \
                 like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; \
                 +http://www.apple.com/go/applebot)"
            ),
            "Applebot"
        );
    }

    #[test]
    fn curl() {
        assert_eq!(token("curl/8.5.0"), "curl");
    }

    #[test]
    fn plain_browser_is_mozilla() {
        assert_eq!(
            token(
                "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like \
                 Gecko) Chrome/120.0 Safari/537.36"
            ),
            "Mozilla"
        );
    }

    #[test]
    fn underscore_is_part_of_the_token() {
        assert_eq!(token("my_bot/1.0"), "my_bot");
    }

    #[test]
    fn compatible_wins_over_bot_entry() {
        assert_eq!(
            token("Mozilla/5.0 (Otherbot/1.0) (compatible; Crawler/1.0)"),
            "Crawler"
        );
    }

    #[test]
    fn compatible_with_numeric_entry_falls_through() {
        assert_eq!(token("Mozilla/5.0 (compatible; 123; foo)"), "Mozilla");
        assert_eq!(
            token("Mozilla/5.0 (compatible; 123) (Examplebot/2)"),
            "Examplebot"
        );
    }

    #[test]
    fn bot_entry_needs_a_version() {
        assert_eq!(token("Mozilla/5.0 (Robot; Linux)"), "Mozilla");
    }

    #[test]
    fn mozilla_prefix_is_case_insensitive() {
        assert_eq!(token("mozilla/5.0 (compatible; Foo/1.0)"), "Foo");
    }

    #[test]
    fn unclosed_comment_is_read_to_the_end() {
        assert_eq!(token("Mozilla/5.0 (compatible; Foobot/1.0"), "Foobot");
    }

    #[test]
    fn nested_comment_stays_in_its_comment() {
        assert_eq!(
            token("Mozilla/5.0 (X11 (nested; compatible; Inner/1); compatible; Outer/1)"),
            "Outer"
        );
    }

    #[test]
    fn compatible_outside_mozilla_is_not_special() {
        assert_eq!(token("Opera/9.80 (compatible; Foo/1.0)"), "Opera");
    }

    #[test]
    fn every_example_is_an_engine_token() {
        for ua in [
            "Googlebot",
            "Googlebot/2.1 (+http://www.google.com/bot.html)",
            "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
            "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2)",
            "Mozilla/5.0 (Macintosh) Safari/605.1.15 (Applebot/0.1; +http://x)",
            "curl/8.5.0",
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0",
        ] {
            assert!(is_engine_token(token(ua)), "{ua}");
        }
    }

    proptest! {
        #[test]
        fn token_is_always_an_engine_token_slice_of_the_input(ua in ".{0,200}") {
            if let Ok(token) = product_token(&ua) {
                prop_assert!(is_engine_token(token));
                let start = token.as_ptr() as usize - ua.as_ptr() as usize;
                prop_assert!(start + token.len() <= ua.len());
            }
        }

        #[test]
        fn mozilla_like_values_give_engine_tokens(
            ua in "Mozilla/[0-9.]{0,4}( ?\\(([A-Za-z0-9_ ./+-]{0,12}; ?){0,4}\\)?){0,3}"
        ) {
            if let Ok(token) = product_token(&ua) {
                prop_assert!(is_engine_token(token));
            }
        }
    }
}
