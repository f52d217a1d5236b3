//! A `<content url="…">` pattern and which URLs it covers.
//!
//! RSL §3.3 (`<content url>`, in the words of its drafts, which 1.0 keeps): the value is "either
//! a full URL, or a path on the server" that "follows the
//! URL-matching rules of the Robots Exclusion Protocol (RFC 9309), including support for the
//! special characters `*` … and `$`". A path is matched exactly as an `allow`/`disallow` value is
//! (the engine's normalisation and matcher, so `/a*b$` means the same in both files). A full URL
//! also names an origin: scheme and host compare as the URL parser writes them (lower case,
//! default port dropped), and the rest of it is the path pattern.

use std::borrow::Cow;

use robotsd_engine::{escape_pattern, pattern};

use crate::origin::Target;

/// A compiled `url` attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ContentPattern {
    /// `scheme://host[:port]` a full URL names, normalised; `None` for a path, which applies to
    /// the license's own site (the origin whose robots.txt named the license).
    origin: Option<String>,
    /// The path pattern, normalised as robots.txt patterns are.
    path: Vec<u8>,
    /// Match length for precedence: octets of the normalised path pattern, as for rules.
    pub(crate) specificity: usize,
}

impl ContentPattern {
    /// Compiles `url` as written. A value that is neither a path nor an absolute http(s) URL
    /// matches nothing.
    pub(crate) fn new(url: &str) -> ContentPattern {
        let (origin, path) = split(url);
        let path = match path {
            Some(path) => escape_pattern(path.as_bytes()).into_owned(),
            None => Vec::new(),
        };
        ContentPattern {
            origin,
            specificity: path.len(),
            path,
        }
    }

    /// Whether it covers `target`.
    pub(crate) fn matches(&self, target: &Target) -> bool {
        if self.path.is_empty() {
            return false;
        }
        if let Some(origin) = &self.origin
            && origin != target.origin_key()
        {
            return false;
        }
        pattern::matches(target.path().as_bytes(), &self.path)
    }

    /// Heap bytes held.
    pub(crate) fn heap_size(&self) -> usize {
        let allocation = crate::kept::allocation;
        self.origin.as_ref().map_or(0, |o| allocation(o.capacity()))
            + allocation(self.path.capacity())
    }
}

/// The origin (normalised) and path pattern of a `url` value; `(None, None)` for a value that
/// cannot match.
fn split(url: &str) -> (Option<String>, Option<Cow<'_, str>>) {
    if url.starts_with('/') {
        return (None, Some(Cow::Borrowed(url)));
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return (None, None);
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return (None, None);
    }
    let (authority, path) = match rest.find('/') {
        Some(slash) => (&rest[..slash], &rest[slash..]),
        None => (rest, "/"),
    };
    // The URL parser normalises host and port (`Example.COM:443` under https is
    // `example.com`); a pattern's path keeps its `*` and `$`, so only the authority goes through.
    let Ok(parsed) = url::Url::parse(&format!("{scheme}://{authority}/")) else {
        return (None, None);
    };
    let Some(host) = parsed.host_str() else {
        return (None, None);
    };
    let origin = match parsed.port() {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    };
    (Some(origin), Some(Cow::Borrowed(path)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::parse_target;

    fn covers(pattern: &str, url: &str) -> bool {
        ContentPattern::new(pattern).matches(&parse_target(url).unwrap())
    }

    #[test]
    fn paths_match_as_robots_rules_do() {
        assert!(covers("/", "https://example.com/"));
        assert!(covers("/", "https://example.com/any/thing?q=1"));
        assert!(covers("/news/", "https://example.com/news/today"));
        assert!(!covers("/news/", "https://example.com/news"));
        assert!(covers("/*.pdf$", "https://example.com/a/b.pdf"));
        assert!(!covers("/*.pdf$", "https://example.com/a/b.pdf?x"));
        assert!(covers("/images/*", "https://example.com/images/x.png"));
        assert!(covers("/caf\u{e9}/", "https://example.com/caf%C3%A9/menu"));
    }

    #[test]
    fn full_urls_name_their_origin() {
        assert!(covers("https://example.com/*", "https://example.com/a"));
        assert!(covers(
            "https://EXAMPLE.com:443/a",
            "https://example.com/a/b"
        ));
        assert!(covers("https://example.com", "https://example.com/a"));
        assert!(!covers("https://example.com/*", "http://example.com/a"));
        assert!(!covers("https://example.com/*", "https://other.example/a"));
        assert!(!covers(
            "https://example.com:8443/",
            "https://example.com/a"
        ));
        assert!(covers(
            "http://127.0.0.1:8080/x$",
            "http://127.0.0.1:8080/x"
        ));
    }

    #[test]
    fn values_that_are_neither_match_nothing() {
        for value in ["", "news/", "ftp://example.com/", "https://", "*"] {
            assert!(!covers(value, "https://example.com/news/"), "{value:?}");
        }
    }

    #[test]
    fn specificity_counts_the_normalised_path() {
        assert_eq!(ContentPattern::new("/").specificity, 1);
        assert_eq!(
            ContentPattern::new("https://example.com/ab*").specificity,
            4
        );
        assert_eq!(ContentPattern::new("/\u{e9}").specificity, 7);
    }
}
