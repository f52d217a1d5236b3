//! Query strings (`application/x-www-form-urlencoded`, as the URL Standard parses them).
//!
//! `form_urlencoded::parse` decodes through a byte-by-byte iterator chain; on the hot path it
//! took about 3,000 instructions for one `url` and one `ua`. This does the same work with slice
//! scans, and the tests hold it to `form_urlencoded`'s output for any input.

use std::borrow::Cow;

/// The name/value pairs of `query`, in order. A part without `%` or `+` is borrowed; a part
/// whose decoded bytes are not UTF-8 has them replaced by U+FFFD, as the standard says.
pub fn pairs(query: &str) -> impl Iterator<Item = (Cow<'_, str>, Cow<'_, str>)> {
    // Byte scans rather than `str::split`: `&` and `=` are ASCII, so every cut falls on a char
    // boundary, and a query's few short parts do not repay `memchr`'s set-up.
    let mut rest = Some(query);
    std::iter::from_fn(move || {
        loop {
            let part = rest?;
            let sequence = match part.bytes().position(|b| b == b'&') {
                Some(end) => {
                    rest = Some(&part[end + 1..]);
                    &part[..end]
                }
                None => {
                    rest = None;
                    part
                }
            };
            if sequence.is_empty() {
                continue;
            }
            let (name, value) = match sequence.bytes().position(|b| b == b'=') {
                Some(at) => (&sequence[..at], &sequence[at + 1..]),
                None => (sequence, ""),
            };
            return Some((decode(name), decode(value)));
        }
    })
}

/// A part with its `+` and percent escapes decoded, into a copy of the part (decoding only
/// shortens it) written over by index. The plain bytes after each escape are copied eight at a
/// time, as far as the first `%` or `+` among them: a URL's runs between escapes are a few bytes
/// each, too short for a copy call's set-up, and a byte at a time cost about 16 instructions a
/// byte.
fn decode(part: &str) -> Cow<'_, str> {
    let bytes = part.as_bytes();
    let Some(first) = bytes.iter().position(|b| *b == b'%' || *b == b'+') else {
        return Cow::Borrowed(part);
    };
    // A copy of the part to overwrite, rather than zeroes and a copy of the run before the
    // first escape: one call for both.
    let mut out = bytes.to_vec();
    let (mut read, mut written) = (first, first);
    while read < bytes.len() {
        let (byte, step) = match bytes[read] {
            b'+' => (b' ', 1),
            b'%' => escape(&bytes[read..]),
            other => (other, 1),
        };
        out[written] = byte;
        written += 1;
        read += step;
        // The word is written whole and only its plain bytes kept: `written <= read`, so the
        // eight bytes fit. Fewer than eight left go a byte at a time, above.
        while let Some(chunk) = bytes.get(read..read + 8) {
            let chunk: &[u8; 8] = chunk.try_into().expect("eight bytes");
            out[written..written + 8].copy_from_slice(chunk);
            let plain = plain_run(u64::from_le_bytes(*chunk));
            read += plain;
            written += plain;
            if plain < 8 {
                break;
            }
        }
    }
    out.truncate(written);
    match String::from_utf8(out) {
        Ok(text) => Cow::Owned(text),
        Err(error) => Cow::Owned(String::from_utf8_lossy(error.as_bytes()).into_owned()),
    }
}

/// How many of the eight bytes of `word` (read little-endian: its first byte lowest) come before
/// the first `%` or `+`, eight if none does. A byte equal to one is a zero byte of `word` XOR
/// that byte repeated; "has a zero byte" can flag a byte above a true zero too, never below one,
/// so the lowest flag is the first match.
fn plain_run(word: u64) -> usize {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const TOPS: u64 = ONES * 0x80;
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & TOPS;
    let flags = zero(word ^ (ONES * u64::from(b'%'))) | zero(word ^ (ONES * u64::from(b'+')));
    (flags.trailing_zeros() / 8) as usize
}

/// The byte a `%` at the start of `rest` stands for, and how many bytes it took: three for an
/// escape, one for a `%` that begins none.
fn escape(rest: &[u8]) -> (u8, usize) {
    match rest {
        [_, high, low, ..] => match (HEX[*high as usize], HEX[*low as usize]) {
            (high @ 0..16, low @ 0..16) => (high << 4 | low, 3),
            _ => (b'%', 1),
        },
        _ => (b'%', 1),
    }
}

/// Each byte's value as a hex digit, or [`NOT_HEX`].
static HEX: [u8; 256] = {
    let mut table = [NOT_HEX; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

/// [`HEX`] for a byte that is no hex digit.
const NOT_HEX: u8 = 0xff;

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn reference(query: &str) -> Vec<(String, String)> {
        url::form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect()
    }

    fn ours(query: &str) -> Vec<(String, String)> {
        pairs(query)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }

    #[test]
    fn examples() {
        for query in [
            "",
            "url=http%3A%2F%2Fa.test%2Fx&ua=Some+Bot",
            "&&a=1&&b&=c&d==e",
            "x=%&y=%4&z=%zz&w=%4a%4A",
            "bad=%ff%fe&ok=%C3%A9",
            "plus=%2B+%20",
        ] {
            assert_eq!(ours(query), reference(query), "{query}");
        }
    }

    #[test]
    fn runs_of_every_length_between_escapes() {
        let filler = "aZ9.-~é/";
        for special in ["%2F", "+", "%", "%4", "%zz", "%C3%A9"] {
            for run in 0..=20 {
                let plain: String = filler.chars().cycle().take(run).collect();
                for query in [
                    format!("v={special}{plain}{special}{plain}"),
                    format!("v={plain}{special}{plain}%41{plain}"),
                    format!("v={special}{plain}&w={plain}{special}"),
                ] {
                    assert_eq!(ours(&query), reference(&query), "{query}");
                }
            }
        }
    }

    #[test]
    fn the_plain_run_of_a_word_ends_at_its_first_escape_or_plus() {
        assert_eq!(plain_run(u64::from_le_bytes(*b"abcdefgh")), 8);
        for at in 0..8 {
            for special in [b'%', b'+'] {
                let mut word = *b"%%%%%%%%";
                word[..at].copy_from_slice(&b"\x24\x2a\x2c\xa5\xab\x00\x01a"[..at]);
                word[at] = special;
                assert_eq!(plain_run(u64::from_le_bytes(word)), at, "{word:?}");
            }
        }
    }

    #[test]
    fn plain_parts_are_borrowed() {
        let query = "url=https://a.test/x&ua=SomeBot";
        assert!(pairs(query).all(|(k, v)| matches!((k, v), (Cow::Borrowed(_), Cow::Borrowed(_)))));
    }

    proptest! {
        #[test]
        fn same_as_form_urlencoded(query in "([a-z=&+%]|%[0-9a-fA-F]{2}|[^\\x00]){0,40}") {
            prop_assert_eq!(ours(&query), reference(&query));
        }

        #[test]
        fn same_as_form_urlencoded_for_any_text(query in any::<String>()) {
            prop_assert_eq!(ours(&query), reference(&query));
        }
    }
}
