//! RFC 9309's percent-decoding, as an opt-in matching mode (`docs/engine.md`, "Where Google and
//! RFC 9309 differ").
//!
//! RFC 9309 §2.2.2: a percent-encoded octet of an unreserved character (`A–Z a–z 0–9 - . _ ~`)
//! is decoded before comparison, in the URL's path and in the rule's path alike, so that
//! `/%70rivate` is `/private`; every other escape stays encoded (so `%2F` is not `/`, `%2A` is
//! not a wildcard and `%24` is not an anchor). Google's reference decodes nothing, and that stays
//! the default: [`PercentDecoding::Google`].
//!
//! The parsed file keeps Google's form of each pattern. In the RFC mode the path is brought to the
//! RFC form, and when no pattern of the file holds an encoded unreserved octet (nearly every file)
//! Google's form *is* the RFC form, so the same rule index answers. Otherwise the set's rules are
//! tried one by one with their patterns decoded: linear in the rules, for the rare file and the
//! caller who asked for it, and nothing is kept.

use std::borrow::Cow;

use super::escape::escape_pattern;
use super::index::Best;
use super::pattern;
use super::robots_txt::{RobotsTxt, index_htm_directory};

/// How percent-encoded unreserved characters in paths and rules are compared.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum PercentDecoding {
    /// As Google's reference: nothing is decoded (`/%70rivate` is not `/private`).
    #[default]
    Google,
    /// As RFC 9309 §2.2.2: escapes of unreserved characters are decoded on both sides.
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
pub(crate) fn has_encoded_unreserved(value: &[u8]) -> bool {
    memchr::memchr_iter(b'%', value).any(|i| escaped_octet(value, i).is_some_and(is_unreserved))
}

/// The RFC 9309 form of a path or pattern: Google's normalisation (escapes upper-cased, bytes
/// ≥ 0x80 encoded), then escapes of unreserved characters decoded. Borrowed when unchanged.
pub(crate) fn rfc_form(value: &[u8]) -> Cow<'_, [u8]> {
    let normal = escape_pattern(value);
    if !has_encoded_unreserved(&normal) {
        return normal;
    }
    let mut out = Vec::with_capacity(normal.len());
    let mut i = 0;
    while i < normal.len() {
        match escaped_octet(&normal, i) {
            Some(octet) if is_unreserved(octet) => {
                out.push(octet);
                i += 3;
            }
            _ => {
                out.push(normal[i]);
                i += 1;
            }
        }
    }
    Cow::Owned(out)
}

impl RobotsTxt {
    /// The best rule of a set for a path in RFC form, each pattern brought to RFC form first:
    /// the same precedence as the index (longest pattern, `allow` on ties, earliest line), with
    /// lengths counted after decoding.
    pub(crate) fn best_in_set_rfc(&self, set: u32, path: &[u8]) -> Option<Best> {
        let mut best = None;
        for id in self.set_rule_ids(&self.sets[set as usize]) {
            let rule = self.rules[id as usize];
            if rule.pattern_len == 0 {
                continue;
            }
            let pattern = rfc_form(rule.pattern(&self.arena));
            if pattern::matches(path, &pattern) {
                let found = Best::new(pattern.len(), rule.is_allow(), rule.line(), id, false);
                best = Best::max(best, Some(found));
            }
            // Google's `index.htm` extension, on the decoded pattern: `dir/` exactly.
            if let Some(dir) = index_htm_directory(&pattern).filter(|_| rule.is_allow()) {
                let mut exact = pattern[..dir].to_vec();
                exact.push(b'$');
                if pattern::matches(path, &exact) {
                    let found = Best::new(dir + 1, true, rule.line(), id, true);
                    best = Best::max(best, Some(found));
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_only_unreserved_escapes() {
        assert_eq!(&*rfc_form(b"/%70rivate"), b"/private");
        assert_eq!(&*rfc_form(b"/foo/bar/%62%61%7A"), b"/foo/bar/baz");
        assert_eq!(&*rfc_form(b"/%7e%2d%2E%5f"), b"/~-._");
        // Reserved and other characters stay encoded, with upper-cased hex.
        assert_eq!(&*rfc_form(b"/a%2fb%2A%24%25%20"), b"/a%2Fb%2A%24%25%20");
        assert_eq!(&*rfc_form("/ツ".as_bytes()), b"/%E3%83%84");
        // Not escapes.
        assert_eq!(&*rfc_form(b"/%zz%4"), b"/%zz%4");
        assert!(matches!(rfc_form(b"/plain/path"), Cow::Borrowed(_)));
    }

    #[test]
    fn decoding_is_not_repeated() {
        // `%2541` is an encoded `%` followed by `41`, not an `A`.
        assert_eq!(&*rfc_form(b"/%2541"), b"/%2541");
        assert_eq!(&*rfc_form(&rfc_form(b"/%2541")), b"/%2541");
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
