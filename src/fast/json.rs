//! The JSON pieces both hand-written writers share, the check answer's ([`super::answer_json`])
//! and its license terms' (`rsl_json`): strings, numbers, lists, optional values and a fetched
//! document's `source` object. A file below both, so that the terms' writer does not reach up
//! into the answer writer that calls it (issue 42).

use std::time::SystemTime;

use crate::cache::Lookup;

/// `,"<list>_total":N` when a list shows fewer than its total, as serde skips it otherwise.
pub(super) fn total(out: &mut Vec<u8>, key: &[u8], shown: usize, total: usize) {
    if total > shown {
        out.extend_from_slice(key);
        number(out, total);
    }
}

/// `,"truncated":true` when an object was cut, as serde skips it otherwise.
pub(super) fn truncated(out: &mut Vec<u8>, cut: bool) {
    if cut {
        out.extend_from_slice(br#","truncated":true"#);
    }
}

/// Where a fetched document came from, as an answer shows it: the robots.txt's `robots` and
/// each license document's `source` alike, in one order (that of `RobotsSourceJson` and
/// `RslSourceJson`).
pub(super) struct SourceMembers<'a> {
    pub status: Option<u16>,
    pub fetched_at: Option<SystemTime>,
    pub sha256: Option<&'a [u8; 32]>,
    pub expires_at: Option<SystemTime>,
    pub bytes: Option<usize>,
    pub final_url: Option<&'a str>,
    pub challenged: Option<crate::fetch::challenge::Challenge>,
    pub cache: Lookup,
    pub backoff: Option<BackoffMembers<'a>>,
}

/// A run of failures in a [`SourceMembers`].
pub(super) struct BackoffMembers<'a> {
    pub since: SystemTime,
    pub failures: u32,
    pub next_retry: SystemTime,
    /// When the answer's basis ends (robots.txt only: `None` leaves the member out).
    pub until: Option<Option<SystemTime>>,
    pub last_error: &'a str,
}

/// Writes a [`SourceMembers`] object.
pub(super) fn source_members(out: &mut Vec<u8>, source: &SourceMembers<'_>) {
    source_fetch(out, source);
    source_use(out, source);
}

/// The object's start and the fetch's own members, `status` to `final_url`: the same in every
/// answer from one copy, outside a backoff.
pub(super) fn source_fetch(out: &mut Vec<u8>, source: &SourceMembers<'_>) {
    out.extend_from_slice(br#"{"status":"#);
    optional(out, source.status, number);
    out.extend_from_slice(br#","fetched_at":"#);
    optional(out, source.fetched_at, timestamp);
    out.extend_from_slice(br#","sha256":"#);
    optional(out, source.sha256, crate::hex::push_quoted_digest);
    out.extend_from_slice(br#","expires_at":"#);
    optional(out, source.expires_at, timestamp);
    out.extend_from_slice(br#","bytes":"#);
    optional(out, source.bytes, number);
    out.extend_from_slice(br#","final_url":"#);
    optional(out, source.final_url, string);
    // Only when there was one: most answers never carry it.
    if let Some(found) = source.challenged {
        // Both are robotsd's own constants: nothing to escape.
        out.extend_from_slice(br#","challenged":{"vendor":""#);
        out.extend_from_slice(found.vendor.as_bytes());
        out.extend_from_slice(br#"","marker":""#);
        out.extend_from_slice(found.marker.as_bytes());
        out.extend_from_slice(br#""}"#);
    }
}

/// The rest of the object, after [`source_fetch`]: how the cache was used and the backoff.
pub(super) fn source_use(out: &mut Vec<u8>, source: &SourceMembers<'_>) {
    out.extend_from_slice(br#","cache":""#);
    out.extend_from_slice(source.cache.as_str().as_bytes());
    out.extend_from_slice(br#"","backoff":"#);
    match &source.backoff {
        Some(backoff) => {
            out.extend_from_slice(br#"{"since":"#);
            timestamp(out, backoff.since);
            out.extend_from_slice(br#","failures":"#);
            number(out, backoff.failures);
            out.extend_from_slice(br#","next_retry":"#);
            timestamp(out, backoff.next_retry);
            if let Some(until) = backoff.until {
                out.extend_from_slice(br#","until":"#);
                optional(out, until, timestamp);
            }
            out.extend_from_slice(br#","last_error":"#);
            string(out, backoff.last_error);
            out.push(b'}');
        }
        None => out.extend_from_slice(b"null"),
    }
    out.push(b'}');
}

/// `value` as `write` writes it, or `null`.
pub(super) fn optional<T>(
    out: &mut Vec<u8>,
    value: Option<T>,
    write: impl FnOnce(&mut Vec<u8>, T),
) {
    match value {
        Some(value) => write(out, value),
        None => out.extend_from_slice(b"null"),
    }
}

/// JSON strings separated by commas, without the brackets around them.
pub(super) fn list<'a>(out: &mut Vec<u8>, items: impl Iterator<Item = &'a str>) {
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        string(out, item);
    }
}

/// A JSON string. Most values (URLs, tokens, patterns) need no escape and are copied whole; the
/// others are left to serde_json, so escapes are spelt exactly as everywhere else in the API.
pub(super) fn string(out: &mut Vec<u8>, value: &str) {
    if needs_escape(value.as_bytes()) {
        serde_json_value(out, value);
    } else {
        out.push(b'"');
        out.extend_from_slice(value.as_bytes());
        out.push(b'"');
    }
}

/// Whether any byte is a control character, `"` or `\\`. Written as a fold over fixed-size
/// chunks, without an early exit, so that it compiles to vector compares: a byte-at-a-time
/// `any` took more instructions than the rest of the answer. The bytes past the last whole chunk
/// are looked at as one more chunk, the last 16 bytes (overlapping the one before), or as two
/// overlapping words for a value shorter than a chunk (a token, a pattern): most values end in
/// such a tail, and a loop over it cost more than the chunks.
pub(super) fn needs_escape(bytes: &[u8]) -> bool {
    let special = |b: u8| (b < 0x20) | (b == b'"') | (b == b'\\');
    let any = |chunk: &[u8]| chunk.iter().fold(false, |acc, &b| acc | special(b));
    let len = bytes.len();
    if len < 16 {
        return if len >= 8 {
            word_special(word(&bytes[..8])) | word_special(word(&bytes[len - 8..]))
        } else if len >= 4 {
            let (head, tail) = (half(&bytes[..4]), half(&bytes[len - 4..]));
            word_special(u64::from(head) | u64::from(tail) << 32)
        } else {
            any(bytes)
        };
    }
    for chunk in bytes.chunks_exact(16) {
        if any(chunk) {
            return true;
        }
    }
    !len.is_multiple_of(16) && any(&bytes[len - 16..])
}

/// The first 8 bytes of `bytes` as a word.
fn word(bytes: &[u8]) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

/// The first 4 bytes of `bytes` as a word.
fn half(bytes: &[u8]) -> u32 {
    let mut word = [0; 4];
    word.copy_from_slice(&bytes[..4]);
    u32::from_le_bytes(word)
}

/// Whether any byte of `x` is a control character, `"` or `\\`: a byte below `n` borrows into
/// its top bit when `n` is taken from each byte ("has a byte less than n" of Bit Twiddling
/// Hacks, exact for any word when n ≤ 0x80), and a byte equal to `c` is one below 1 once xored
/// with `c`.
fn word_special(x: u64) -> bool {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const TOPS: u64 = ONES * 0x80;
    let below = |v: u64, n: u64| v.wrapping_sub(ONES * n) & !v & TOPS;
    let quote = ONES * u64::from(b'"');
    let backslash = ONES * u64::from(b'\\');
    (below(x, 0x20) | below(x ^ quote, 1) | below(x ^ backslash, 1)) != 0
}

/// An integer, without `fmt`.
pub(super) fn number(out: &mut Vec<u8>, value: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// A quoted RFC 3339 timestamp, as `types::rfc3339` writes it.
pub(super) fn timestamp(out: &mut Vec<u8>, at: SystemTime) {
    out.push(b'"');
    super::timestamp::write_rfc3339(out, at);
    out.push(b'"');
}

/// What serde_json writes for `value`: the reference the hand-written pieces are held to.
pub(super) fn serde_json_value<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Strings and finite or non-finite floats always serialise; a Vec cannot fail to grow.
    let _ = serde_json::to_writer(out, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(bytes: &[u8]) -> bool {
        bytes.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\')
    }

    /// Every length a value has in an answer, with one byte of each kind at each place, in a
    /// filler of bytes each next to a special one (0x20, `!`, `#`, `[`, `]`) or with the top bit
    /// set: the word tests' borrows and overlaps, held to the plain definition.
    #[test]
    fn needs_escape_is_the_plain_definition_at_every_length_and_place() {
        let bytes = [
            0x00, 0x01, 0x1f, b'"', b'\\', 0x20, b'!', b'#', b'[', b']', 0x7f, 0x80, 0xdc, 0xff,
            b'a',
        ];
        for len in 0..48 {
            for filler in [b'a', 0x20, b'!', b'#', b']', 0x80, 0xff] {
                let mut value = vec![filler; len];
                assert_eq!(needs_escape(&value), plain(&value), "{value:?}");
                for at in 0..len {
                    for &byte in &bytes {
                        value[at] = byte;
                        assert_eq!(needs_escape(&value), plain(&value), "{value:?}");
                        value[at] = filler;
                    }
                }
            }
        }
    }
}
