//! RFC 9309's matching form, as an opt-in mode (`docs/behaviour.md`, "Where Google and
//! RFC 9309 differ").
//!
//! RFC 9309 §2.2.2 and §2.2.3 compare the URL's path and a rule's pattern in one form, whichever
//! way each side wrote a character:
//!
//! - a percent-encoded unreserved character (`A–Z a–z 0–9 - . _ ~`) is decoded, so that
//!   `/%70rivate` is `/private`; every other escape stays encoded, hex upper-cased (`%2F` is not
//!   `/`), and bytes outside ASCII are encoded (table 3);
//! - `*` and `$` written in the URL are characters, which a pattern names as `%2A` and `%24`
//!   (table 5): the URL's are encoded, and a pattern's `$` that is not its last byte (Google's
//!   reference reads it as a character too) as well; a pattern's `*` and final `$` stay operators;
//! - in the query, after the first `?`, the general delimiters `:` `/` `?` `@` `[` `]` are data,
//!   compared encoded on both sides, so that `?baz=https://foo.bar` is
//!   `?baz=https%3A%2F%2Ffoo.bar` (table 3). The sub-delimiters (`=`, `&`, …) structure the
//!   query and stay as written.
//!
//! Google's reference decodes nothing, and that stays the default: [`PercentDecoding::Google`].
//!
//! The parsed file keeps Google's form of each pattern. In the RFC mode the path is brought to the
//! RFC form, and when no pattern of a set of groups changes in the RFC form (nearly every file)
//! Google's form *is* the RFC form, so the same rule index answers. Otherwise the parse kept the
//! changed patterns' RFC forms, and the set has a rule index of its own over them
//! (`robots_txt::rfc`), with the same bound on a check's work.

use std::borrow::Cow;

use super::escape::escape_pattern;

/// How paths and rules are compared: as Google's reference, or in RFC 9309's one form.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum PercentDecoding {
    /// As Google's reference: nothing is decoded (`/%70rivate` is not `/private`).
    #[default]
    Google,
    /// As RFC 9309 §2.2.2 and §2.2.3: both sides in one form (the module's rules).
    Rfc9309,
}

impl PercentDecoding {
    /// The name used in settings and parameters: `google` or `rfc9309`.
    pub fn as_str(self) -> &'static str {
        match self {
            PercentDecoding::Google => "google",
            PercentDecoding::Rfc9309 => "rfc9309",
        }
    }
}

impl std::str::FromStr for PercentDecoding {
    type Err = UnknownPercentDecoding;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "google" => Ok(PercentDecoding::Google),
            "rfc9309" => Ok(PercentDecoding::Rfc9309),
            _ => Err(UnknownPercentDecoding),
        }
    }
}

/// A name that is neither `google` nor `rfc9309`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownPercentDecoding;

impl std::fmt::Display for UnknownPercentDecoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("expected google or rfc9309")
    }
}

impl std::error::Error for UnknownPercentDecoding {}

fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

/// The octet an escape at `i` stands for, if `value[i..]` starts with `%` and two hex digits.
fn escaped_octet(value: &[u8], i: usize) -> Option<u8> {
    if value.get(i) != Some(&b'%') {
        return None;
    }
    let high = hex_value(*value.get(i + 1)?)?;
    let low = hex_value(*value.get(i + 2)?)?;
    Some(high << 4 | low)
}

/// Whether `value` holds an escape of an unreserved character.
fn has_encoded_unreserved(value: &[u8]) -> bool {
    memchr::memchr_iter(b'%', value).any(|i| escaped_octet(value, i).is_some_and(is_unreserved))
}

/// Which side of a comparison a value is: the URL's path, or a rule's pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The URL's path, params and query: every character is a character.
    Url,
    /// A rule's pattern: `*` and a final `$` are operators.
    Pattern,
}

/// General delimiters that are data in a query, compared encoded.
fn is_query_delimiter(byte: u8) -> bool {
    matches!(byte, b':' | b'/' | b'?' | b'@' | b'[' | b']')
}

/// Whether the RFC form of `normal` (in Google's normal form) differs from it.
fn rewritten(normal: &[u8], side: Side) -> bool {
    let characters = match side {
        Side::Url => memchr::memchr2(b'*', b'$', normal).is_some(),
        Side::Pattern => {
            let end = normal.len().saturating_sub(1);
            memchr::memchr(b'$', &normal[..end]).is_some()
        }
    };
    let query = memchr::memchr(b'?', normal)
        .is_some_and(|start| normal[start + 1..].iter().copied().any(is_query_delimiter));
    characters || query || has_encoded_unreserved(normal)
}

/// Whether a pattern (in Google's normal form, as the parsed file keeps it) changes in the RFC
/// form: when none of a file's does, the rule index answers in the RFC mode too.
pub(crate) fn pattern_rewritten(pattern: &[u8]) -> bool {
    rewritten(pattern, Side::Pattern)
}

/// The RFC 9309 form of a path or pattern (the module's rules). Borrowed when unchanged.
pub(crate) fn rfc_form(value: &[u8], side: Side) -> Cow<'_, [u8]> {
    rfc_form_counted(value, side).0
}

/// The RFC 9309 form of a pattern, and its length for precedence: its octets as written once
/// unreserved escapes are decoded. A character this form encodes only to compare it (a `$`
/// before the end, a general delimiter in the query) counts as the one octet it was written
/// as, so that where nothing is percent-encoded the two modes rank rules alike.
pub(crate) fn rfc_pattern(pattern: &[u8]) -> (Cow<'_, [u8]>, usize) {
    rfc_form_counted(pattern, Side::Pattern)
}

fn rfc_form_counted(value: &[u8], side: Side) -> (Cow<'_, [u8]>, usize) {
    let normal = escape_pattern(value);
    if !rewritten(&normal, side) {
        let len = normal.len();
        return (normal, len);
    }
    let mut added = 0;
    let mut encode = |out: &mut Vec<u8>, byte: u8| {
        const HEX: &[u8; 16] = b"0123456789ABCDEF";
        out.extend_from_slice(&[
            b'%',
            HEX[usize::from(byte >> 4)],
            HEX[usize::from(byte & 15)],
        ]);
        added += 2;
    };
    let last = normal.len() - 1;
    let mut out = Vec::with_capacity(normal.len() + 8);
    let mut in_query = false;
    let mut i = 0;
    while i < normal.len() {
        if let Some(octet) = escaped_octet(&normal, i) {
            if is_unreserved(octet) {
                out.push(octet);
            } else {
                out.extend_from_slice(&normal[i..i + 3]);
            }
            i += 3;
            continue;
        }
        let byte = normal[i];
        match byte {
            b'*' if side == Side::Url => encode(&mut out, byte),
            b'$' if side == Side::Url || i != last => encode(&mut out, byte),
            _ if in_query && is_query_delimiter(byte) => encode(&mut out, byte),
            b'?' => {
                in_query = true;
                out.push(byte);
            }
            _ => out.push(byte),
        }
        i += 1;
    }
    let len = out.len() - added;
    (Cow::Owned(out), len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(value: &str) -> String {
        String::from_utf8(rfc_form(value.as_bytes(), Side::Url).into_owned()).unwrap()
    }

    fn pattern(value: &str) -> String {
        String::from_utf8(rfc_form(value.as_bytes(), Side::Pattern).into_owned()).unwrap()
    }

    #[test]
    fn decodes_only_unreserved_escapes() {
        for form in [url, pattern] {
            assert_eq!(form("/%70rivate"), "/private");
            assert_eq!(form("/foo/bar/%62%61%7A"), "/foo/bar/baz");
            assert_eq!(form("/%7e%2d%2E%5f"), "/~-._");
            // Reserved and other characters stay encoded, with upper-cased hex.
            assert_eq!(form("/a%2fb%2A%24%25%20"), "/a%2Fb%2A%24%25%20");
            assert_eq!(form("/ツ"), "/%E3%83%84");
            // Not escapes.
            assert_eq!(form("/%zz%4"), "/%zz%4");
        }
        assert!(matches!(
            rfc_form(b"/plain/path", Side::Url),
            Cow::Borrowed(_)
        ));
        assert!(matches!(
            rfc_form(b"/*.pdf$", Side::Pattern),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn star_and_dollar_are_characters_in_urls_and_operators_in_patterns() {
        assert_eq!(url("/a*b$"), "/a%2Ab%24");
        assert_eq!(pattern("/a*b$"), "/a*b$");
        // A `$` before the end of a pattern is a character, as in Google's reference.
        assert_eq!(pattern("/a$b$"), "/a%24b$");
    }

    #[test]
    fn general_delimiters_in_the_query_compare_encoded() {
        for form in [url, pattern] {
            assert_eq!(
                form("/foo/bar?baz=https://foo.bar"),
                "/foo/bar?baz=https%3A%2F%2Ffoo.bar"
            );
            assert_eq!(
                form("/foo/bar?baz=https%3a%2f%2ffoo.bar"),
                "/foo/bar?baz=https%3A%2F%2Ffoo.bar"
            );
            assert_eq!(form("/a/b?c=d&e=f?g@h[i]"), "/a/b?c=d&e=f%3Fg%40h%5Bi%5D");
            // The path's own delimiters are left alone, and so is an encoded `?` there.
            assert_eq!(form("/a:b/c@d%3Fe"), "/a:b/c@d%3Fe");
        }
    }

    #[test]
    fn decoding_is_not_repeated() {
        // `%2541` is an encoded `%` followed by `41`, not an `A`.
        assert_eq!(url("/%2541"), "/%2541");
        assert_eq!(url(&url("/%2541")), "/%2541");
        // Nor is encoding: the RFC form of an RFC form is itself.
        for value in ["/a*b$?x=y:z/%41", "/p$q?r=s/t$"] {
            assert_eq!(url(&url(value)), url(value));
            assert_eq!(pattern(&pattern(value)), pattern(value));
        }
    }

    #[test]
    fn names_round_trip() {
        for mode in [PercentDecoding::Google, PercentDecoding::Rfc9309] {
            assert_eq!(mode.as_str().parse(), Ok(mode));
        }
        assert_eq!(
            "RFC9309".parse::<PercentDecoding>(),
            Err(UnknownPercentDecoding)
        );
    }
}
