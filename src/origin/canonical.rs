//! The URL fast path: a URL already written the way the WHATWG parser would write it back is
//! confirmed by one scan instead of parsed. Held to the `url` crate's WHATWG parsing by
//! property tests over arbitrary and URL-like text. It is one of the fast paths listed in
//! [`crate::fast`], and lives here because turning a URL into an origin is this module's job:
//! it uses the origin's types, and nothing above them.

use std::borrow::Cow;

use url::Host;

use super::{Origin, Scheme, Target};

/// [`parse_canonical_text`] of borrowed text, as the tests call it.
#[cfg(test)]
pub(crate) fn parse_canonical(input: &str) -> Option<Target> {
    parse_canonical_text(Cow::Borrowed(input)).ok()
}

/// The fast path of [`parse_target`](crate::origin::parse_target): a URL already written the way the WHATWG parser would
/// write it back (lower-case `http`/`https`, a lower-case ASCII host name or dotted-decimal IPv4
/// address, no default port, no userinfo, a path and query of plain characters and upper-case
/// escapes, no dot segments), which is what crawlers nearly always send. For those, parsing only
/// confirms the input, so this confirms it with one scan instead, for a third or less of the
/// instructions; the fragment, if any, is dropped as the full path drops it. Anything it is not
/// sure of is declined and goes through the parser; the tests hold it to the parser's result on
/// arbitrary input.
///
/// The target keeps `text` when it is owned (a URL decoded from a query is already a copy,
/// which a check would otherwise allocate and copy once more); it comes back when the fast
/// path declines it, for the parser.
pub(crate) fn parse_canonical_text(text: Cow<'_, str>) -> Result<Target, Cow<'_, str>> {
    match canonical_parts(&text) {
        Some((parts, kept, key_len)) => {
            let url = match text {
                Cow::Owned(mut url) => {
                    url.truncate(kept);
                    url
                }
                Cow::Borrowed(input) => input[..kept].to_owned(),
            };
            Ok(Target::from_canonical(parts, url, key_len))
        }
        None => Err(text),
    }
}

/// What the fast path confirms of `input`: its parts, the length kept (up to the fragment) and
/// the key's length.
fn canonical_parts(input: &str) -> Option<(CanonicalParts, usize, usize)> {
    let (scheme, rest) = if let Some(rest) = input.strip_prefix("https://") {
        (Scheme::Https, rest)
    } else {
        (Scheme::Http, input.strip_prefix("http://")?)
    };
    let authority_len = rest
        .bytes()
        .position(|b| matches!(b, b'/' | b'?' | b'#'))
        .filter(|&end| rest.as_bytes()[end] == b'/')?;
    let authority = &rest[..authority_len];
    // A byte scan: `split_once` with a `char` sets up a searcher, which costs more than the
    // few bytes of an authority.
    let (host, port) = match authority.bytes().position(|b| b == b':') {
        Some(at) => (
            &authority[..at],
            Some(canonical_port(&authority[at + 1..], scheme)?),
        ),
        None => (authority, None),
    };
    let host = canonical_host(host)?;
    let key_len = scheme.as_str().len() + 3 + authority_len;
    // Up to the fragment, which is dropped.
    let kept = key_len + canonical_path_and_query_len(&input[key_len..])?;
    Some((CanonicalParts { scheme, host, port }, kept, key_len))
}

/// What builds the origin of a URL the fast path confirmed, with its key (`scheme://host[:port]`,
/// the URL up to its path): the scheme, the host's kind and the port, confirmed already.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CanonicalParts {
    scheme: Scheme,
    host: CanonicalHost,
    port: Option<u16>,
}

/// A host the fast path confirmed: an IPv4 address, or a name spelt in the key.
#[derive(Debug, Clone, Copy)]
enum CanonicalHost {
    Ipv4(std::net::Ipv4Addr),
    Domain,
}

impl CanonicalParts {
    /// The origin whose key is `key`, the URL up to its path.
    pub(crate) fn origin(&self, key: &str) -> Origin {
        let host = match self.host {
            CanonicalHost::Ipv4(address) => Host::Ipv4(address),
            CanonicalHost::Domain => {
                let authority = &key[self.scheme.as_str().len() + 3..];
                let name = match self.port {
                    Some(_) => authority
                        .rsplit_once(':')
                        .map_or(authority, |(name, _)| name),
                    None => authority,
                };
                Host::Domain(name.to_owned())
            }
        };
        Origin::from_canonical_parts(self.scheme, host, self.port, key)
    }
}

/// A port as the parser writes it: digits without a leading zero, in range, and not the
/// scheme's default (which the parser drops).
fn canonical_port(port: &str, scheme: Scheme) -> Option<u16> {
    if port.is_empty() || port.starts_with('0') || !port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let port: u16 = port.parse().ok()?;
    (port != scheme.default_port()).then_some(port)
}

/// A host the parser keeps as it is: a dotted-decimal IPv4 address in canonical form, or a
/// lower-case ASCII name of letters, digits and hyphens that IDNA processing leaves alone (no
/// `xn--` label, which it would validate) and that does not end in a number (which would make
/// the parser read it as an IPv4 address).
fn canonical_host(host: &str) -> Option<CanonicalHost> {
    if host.is_empty() {
        return None;
    }
    let last = host.rsplit('.').next().unwrap_or(host);
    if last.bytes().all(|b| b.is_ascii_digit()) {
        // `Ipv4Addr` parsing takes exactly four decimal parts without leading zeros, which is
        // the form the parser writes.
        return host.parse().ok().map(CanonicalHost::Ipv4);
    }
    let plain_labels = host.split('.').all(|label| {
        !label.is_empty()
            && !label.starts_with("xn--")
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    });
    // `0x…` last labels are hexadecimal IPv4 to the parser.
    (plain_labels && !last.starts_with("0x")).then_some(CanonicalHost::Domain)
}

/// The length of the path and query at the start of `rest` (which starts with `/`), up to a
/// `#` or the end, if the parser leaves them as they are with escapes already upper-case:
/// unreserved and sub-delimiter characters, `:`, `@`, `/`, and `%XX`; no `.` or `..` segment and
/// no `%2E` in the path, which the parser would resolve; in the query also `?`, but not `'`,
/// which the parser escapes in the query of an http(s) URL. One pass over the bytes: this runs
/// for every check.
fn canonical_path_and_query_len(rest: &str) -> Option<usize> {
    let bytes = rest.as_bytes();
    let upper_hex =
        |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(b));
    let dot_segment = |segment: &[u8]| segment == b"." || segment == b"..";
    let mut in_query = false;
    let mut segment_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'#' => break,
            b'%' => {
                if !upper_hex(bytes.get(i + 1)) || !upper_hex(bytes.get(i + 2)) {
                    return None;
                }
                if !in_query && bytes[i + 1] == b'2' && bytes[i + 2] == b'E' {
                    return None;
                }
                i += 3;
                continue;
            }
            b'/' | b'?' if !in_query => {
                if dot_segment(&bytes[segment_start..i]) {
                    return None;
                }
                segment_start = i + 1;
                in_query = bytes[i] == b'?';
            }
            b'\'' if in_query => return None,
            b if PLAIN_IN_PATH_AND_QUERY[usize::from(b)] => {}
            _ => return None,
        }
        i += 1;
    }
    if !in_query && dot_segment(&bytes[segment_start..i]) {
        return None;
    }
    Some(i)
}

/// The bytes [`canonical_path_and_query_len`] takes as they are: ASCII letters and digits,
/// `-._~`, the sub-delimiters `!$&'()*+,;=`, and `:@/?`.
const PLAIN_IN_PATH_AND_QUERY: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'-' | b'.'
                    | b'_'
                    | b'~'
                    | b'!'
                    | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'@'
                    | b'/'
                    | b'?'
            );
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::parse_with_parser;

    fn assert_fast_path_agrees(input: &str) -> bool {
        let Some(fast) = parse_canonical(input) else {
            // An owned copy is declined alike, and given back whole.
            let declined = parse_canonical_text(Cow::Owned(input.to_owned())).err();
            assert_eq!(declined.as_deref(), Some(input));
            return false;
        };
        // An owned copy is kept, cut at its fragment: the same target.
        let owned = parse_canonical_text(Cow::Owned(input.to_owned())).expect("taken borrowed");
        assert_eq!((owned.url(), owned.path()), (fast.url(), fast.path()));
        let slow = parse_with_parser(input)
            .unwrap_or_else(|e| panic!("{input:?}: fast path took it, parser says {e}"));
        assert_eq!(fast.url(), slow.url(), "{input:?}");
        assert_eq!(fast.path(), slow.path(), "{input:?}");
        // The key the cache is asked with before any origin is built, then the origin built.
        assert_eq!(fast.origin_key(), slow.origin_key(), "{input:?}");
        assert_eq!(fast.origin_key(), slow.origin().key(), "{input:?}");
        assert_eq!(fast.origin().key(), slow.origin().key(), "{input:?}");
        assert_eq!(fast.origin().host(), slow.origin().host(), "{input:?}");
        assert_eq!(fast.origin().port(), slow.origin().port(), "{input:?}");
        assert_eq!(fast.origin().scheme(), slow.origin().scheme(), "{input:?}");
        assert_eq!(
            fast.origin().host_str(),
            slow.origin().host_str(),
            "{input:?}"
        );
        true
    }

    #[test]
    fn typical_urls_take_the_fast_path() {
        for input in [
            "https://example.com/",
            "http://127.0.0.1:18001/private/report",
            "https://www.example.co.uk/a/b.html?q=1&r=%C3%A9#top",
            "https://shop-1.example.com:8443/p/(x)*;a=b,c@d:e!$'+~?x=/y?z",
            "https://example.com//double//slashes/",
            "http://10.0.0.1/",
        ] {
            assert!(assert_fast_path_agrees(input), "{input} should be fast");
        }
    }

    #[test]
    fn anything_unsure_takes_the_parser() {
        for input in [
            "HTTPS://example.com/",
            "https://Example.com/",
            "https://example.com",
            "https://example.com?q",
            "https://example.com:443/",
            "http://example.com:80/",
            "https://example.com:/",
            "https://example.com:0443/",
            "https://user@example.com/",
            "https://example.com/a/../b",
            "https://example.com/a/./b",
            "https://example.com/a/%2E%2E/b",
            "https://example.com/%2f",
            "https://example.com/a b",
            "https://example.com/caf\u{e9}",
            "https://example.com/a?b='c'",
            "https://example.com/a|b",
            "https://example.com/a\\b",
            "https://xn--caf-dma.example/",
            "https://example.com./",
            "https://a..b/",
            "https://0x7f.1/",
            "https://1.2.3/",
            "https://127.000.0.1/",
            "https://example.123/",
            "https://[::1]/",
            " https://example.com/",
            "https://ex\tample.com/",
            "https://exa_mple.com/",
            "https://example.com:99999/",
        ] {
            assert!(
                !assert_fast_path_agrees(input),
                "{input} should take the parser"
            );
        }
    }

    /// URL-like text around the fast path's edges: schemes in both cases, hosts that are names,
    /// IPv4-like or invalid, odd ports, paths with escapes, dots and characters the parser
    /// escapes, queries and fragments.
    fn url_like() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::strategy::Strategy as _;
        let url = |scheme, host, port, path, query| {
            (scheme, host, port, path, query, "(#[a-z#/?%]{0,4})?").prop_map(
                |(scheme, host, port, path, query, fragment): (
                    String,
                    String,
                    String,
                    String,
                    String,
                    String,
                )| { format!("{scheme}{host}{port}{path}{query}{fragment}") },
            )
        };
        // Mostly canonical, so that the fast path is exercised...
        let clean = url(
            "https?://",
            "[a-z0-9]{1,6}(\\.[a-z0-9-]{1,5}){0,3}|[0-9]{1,3}(\\.[0-9]{1,3}){3}",
            "(:[1-9][0-9]{0,4})?",
            "(/([a-zA-Z0-9._~!$&'()*+,;=:@-]{0,6}|%[0-9A-F]{2}|\\.\\.?)){0,4}",
            "(\\?[a-zA-Z0-9/?&=%.-]{0,8})?",
        );
        // ...and all over its edges.
        let edgy = url(
            "https?://|HTTP://",
            "[a-z0-9]{1,6}(\\.[a-z0-9-]{1,5}){0,3}|[0-9]{1,3}(\\.[0-9]{1,3}){3}|0x[0-9a-f]{1,3}|[a-zA-Z_.-]{1,8}",
            "(:[0-9]{0,6})?",
            "(/[a-zA-Z0-9._~!$&'()*+,;=:@|^`{}\\\\ -]{0,6}|/%[0-9a-fA-F]{2}|/\\.\\.?){0,4}",
            "(\\?[a-zA-Z0-9/?&=%'. -]{0,8})?",
        );
        proptest::prop_oneof![clean, edgy]
    }

    #[test]
    fn url_like_inputs_often_take_the_fast_path() {
        use proptest::strategy::{Strategy as _, ValueTree as _};
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let fast = (0..2000)
            .filter(|_| {
                let input = url_like().new_tree(&mut runner).unwrap().current();
                assert_fast_path_agrees(&input)
            })
            .count();
        // Each of these was also checked against the parser. Were there few, the property below
        // would hardly test the fast path.
        assert!(fast >= 100, "only {fast} of 2000 took the fast path");
    }

    proptest::proptest! {
        #[test]
        fn fast_path_agrees_with_the_parser(input in url_like()) {
            assert_fast_path_agrees(&input);
        }

        #[test]
        fn fast_path_never_disagrees_on_any_text(input in "https?://\\PC{0,30}") {
            assert_fast_path_agrees(&input);
        }
    }
}
