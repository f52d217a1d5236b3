//! Splits a robots.txt body into numbered lines and each line into a key and a value, exactly as
//! Google's reference parser does (RFC 9309 §2.2; SEMANTICS.md §1 "Lines" and "Keys").
//!
//! This is the lowest layer of the engine: it knows nothing of groups or matching. It reports
//! every line, directive or not, with the same per-line facts the reference's
//! `RobotsParseHandler::LineMetadata` carries, so that the parse report and the conformance tests
//! can be driven from one place. Values are handed out as written (comment and surrounding
//! whitespace removed); percent-normalisation of rule values is the caller's choice
//! ([`crate::escape_pattern`]).

/// The longest line the reference keeps, in bytes (`2083 * 8 - 1`); the rest of a longer line is
/// dropped and the line is flagged as too long.
pub const MAX_LINE_BYTES: usize = 2083 * 8 - 1;

const UTF8_BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// What a line's key was recognised as. Keys match case-insensitively *by prefix*
/// (`Disallowed:` is a `disallow`), with the reference's accepted typos.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// `user-agent` (typos: `useragent`, `user agent`).
    UserAgent,
    /// `allow` (no typos accepted).
    Allow,
    /// `disallow` (typos: `dissallow`, `dissalow`, `disalow`, `diasllow`, `disallaw`).
    Disallow,
    /// `sitemap` (typo: `site-map`).
    Sitemap,
    /// Any other key; not a rule.
    Unknown,
}

/// The per-line facts of the reference's `LineMetadata`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LineMetadata {
    /// Nothing but whitespace.
    pub is_empty: bool,
    /// A `#` comment somewhere on the line.
    pub has_comment: bool,
    /// Nothing but a comment (and whitespace).
    pub is_comment: bool,
    /// A key/value pair was found (known key or not).
    pub has_directive: bool,
    /// The key is one of the accepted misspellings.
    pub is_acceptable_typo: bool,
    /// The line was longer than [`MAX_LINE_BYTES`] and was cut.
    pub is_line_too_long: bool,
    /// Key and value were separated by whitespace instead of a colon.
    pub is_missing_colon_separator: bool,
}

/// A key/value pair found on a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyValue<'a> {
    /// What the key was recognised as.
    pub kind: KeyKind,
    /// The key as written (never empty).
    pub key: &'a [u8],
    /// The value as written, without comment and surrounding whitespace (may be empty).
    pub value: &'a [u8],
}

/// One line of a robots.txt body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// 1-based line number, counted as the reference counts (LF, CR and CRLF each end a line;
    /// the text after the last line ending is one more line, even when empty).
    pub number: u32,
    /// The key/value pair, when the line has one.
    pub directive: Option<KeyValue<'a>>,
    /// The line's facts.
    pub metadata: LineMetadata,
}

/// Whitespace as `absl::ascii_isspace` sees it (which, unlike `u8::is_ascii_whitespace`,
/// includes vertical tab).
#[inline]
pub(crate) fn is_space(b: u8) -> bool {
    // One comparison for the usual byte, above the space.
    const SPACES: u64 = 1 << b' ' | 1 << b'\t' | 1 << b'\n' | 1 << 0x0B | 1 << 0x0C | 1 << b'\r';
    b <= b' ' && SPACES & 1 << b != 0
}

#[inline]
fn trim_start(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if !is_space(*first) {
            break;
        }
        s = rest;
    }
    s
}

#[inline]
fn trim(s: &[u8]) -> &[u8] {
    let mut s = trim_start(s);
    while let [rest @ .., last] = s {
        if !is_space(*last) {
            break;
        }
        s = rest;
    }
    s
}

/// The last `n` bytes of `value` as a zero-padded little-endian word, where `n` is 1 to 7 and,
/// for a value shorter than a word, its length. Read without the call to `memcpy` that a copy of
/// a variable length into a buffer compiles to, which cost more than the rest of the scan of a
/// short value.
#[inline]
pub(crate) fn tail_word(value: &[u8], n: usize) -> u64 {
    if let Some(last) = value.last_chunk::<8>() {
        return u64::from_le_bytes(*last) >> (8 * (8 - n));
    }
    // Shorter than a word: two overlapping reads of half a word or less.
    let shift = |size: usize| 8 * (value.len() - size);
    if let (Some(a), Some(b)) = (value.first_chunk::<4>(), value.last_chunk::<4>()) {
        let (a, b) = (u32::from_le_bytes(*a), u32::from_le_bytes(*b));
        return u64::from(a) | u64::from(b) << shift(4);
    }
    if let (Some(a), Some(b)) = (value.first_chunk::<2>(), value.last_chunk::<2>()) {
        let (a, b) = (u16::from_le_bytes(*a), u16::from_le_bytes(*b));
        return u64::from(a) | u64::from(b) << shift(2);
    }
    value.first().map_or(0, |&b| u64::from(b))
}

/// Classifies a key as the reference does, returning the kind and whether it was an accepted typo.
pub fn classify_key(key: &[u8]) -> (KeyKind, bool) {
    // The first eight bytes, lower-cased by setting bit 5 of every byte. That also maps other
    // bytes, but only NUL (to a space) and CR (to `-`) onto the space, dash and letters of the
    // keys below, and a line holds neither.
    let mut head = [0u8; 8];
    let n = key.len().min(8);
    head[..n].copy_from_slice(&key[..n]);
    let head = u64::from_le_bytes(head) | 0x2020_2020_2020_2020;
    let starts = |lit: &[u8]| -> bool {
        if key.len() < lit.len() {
            return false;
        }
        let k = lit.len().min(8);
        let mut want = [0u8; 8];
        want[..k].copy_from_slice(&lit[..k]);
        let mask = if k == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * k)) - 1
        };
        head & mask == u64::from_le_bytes(want) && key[k..lit.len()].eq_ignore_ascii_case(&lit[k..])
    };
    match head as u8 {
        b'u' if starts(b"user-agent") => (KeyKind::UserAgent, false),
        b'u' if starts(b"useragent") || starts(b"user agent") => (KeyKind::UserAgent, true),
        b'a' if starts(b"allow") => (KeyKind::Allow, false),
        b'd' if starts(b"disallow") => (KeyKind::Disallow, false),
        b'd' if starts(b"dissallow")
            || starts(b"dissalow")
            || starts(b"disalow")
            || starts(b"diasllow")
            || starts(b"disallaw") =>
        {
            (KeyKind::Disallow, true)
        }
        b's' if starts(b"sitemap") => (KeyKind::Sitemap, false),
        b's' if starts(b"site-map") => (KeyKind::Sitemap, true),
        _ => (KeyKind::Unknown, false),
    }
}

/// The four keys as usually written (any case, no typo) and followed at once by the colon: their
/// kind and length. Nine lines in ten are one of these, and recognising them from the first
/// word skips the search for the colon and [`classify_key`]'s prefix tests; any other line
/// takes the general path, which finds the same key and value for these.
#[inline]
fn common_key(line: &[u8]) -> Option<(KeyKind, usize)> {
    // Lower-casing by setting bit 5 maps only NUL and CR, which a line's content cannot hold,
    // onto the letters and dash of these keys (see `classify_key`); the colon is compared as is.
    const LOWER: u64 = 0x2020_2020_2020_2020;
    let word = match line.first_chunk::<8>() {
        Some(bytes) => u64::from_le_bytes(*bytes),
        None => tail_word(line, line.len()),
    };
    let lower = word | LOWER;
    let key = |lit: &[u8; 8]| u64::from_le_bytes(*lit);
    if lower == key(b"disallow") {
        return (line.get(8) == Some(&b':')).then_some((KeyKind::Disallow, 8));
    }
    if lower == key(b"user-age") {
        let tail = line.get(8..11)?;
        return (tail[2] == b':' && tail[..2].eq_ignore_ascii_case(b"nt"))
            .then_some((KeyKind::UserAgent, 10));
    }
    // Six bytes: five letters lower-cased, then the colon as is.
    const SIX: u64 = 0xFFFF_FFFF_FFFF;
    if (word | 0x20_2020_2020) & SIX == key(b"allow:\0\0") {
        return Some((KeyKind::Allow, 5));
    }
    if word | 0x0020_2020_2020_2020 == key(b"sitemap:") {
        return Some((KeyKind::Sitemap, 7));
    }
    None
}

/// Splits one line's content (already cut at the length limit, at a NUL and at a comment) into
/// key and value.
fn split_line<'a>(line: &'a [u8], meta: &mut LineMetadata) -> Option<KeyValue<'a>> {
    let line = trim(line);
    if line.is_empty() {
        if meta.has_comment {
            meta.is_comment = true;
        } else {
            meta.is_empty = true;
        }
        return None;
    }
    if let Some((kind, key_len)) = common_key(line) {
        meta.has_directive = true;
        return Some(KeyValue {
            kind,
            key: &line[..key_len],
            // The line is trimmed, so the value ends with a non-space (or is empty).
            value: trim_start(&line[key_len + 1..]),
        });
    }
    split_any_key(line, meta)
}

/// [`split_line`] for a trimmed, non-empty line, whatever its key.
fn split_any_key<'a>(line: &'a [u8], meta: &mut LineMetadata) -> Option<KeyValue<'a>> {
    let sep = match memchr::memchr(b':', line) {
        Some(colon) => colon,
        None => {
            // Google accepts whitespace instead of the colon, but only when the line is exactly
            // two whitespace-separated tokens.
            let ws = memchr::memchr2(b' ', b'\t', line)?;
            let value_start = ws
                + line[ws..]
                    .iter()
                    .position(|&b| b != b' ' && b != b'\t')
                    .unwrap_or(line.len() - ws);
            if memchr::memchr2(b' ', b'\t', &line[value_start..]).is_some() {
                return None;
            }
            meta.is_missing_colon_separator = true;
            ws
        }
    };
    let key = trim(&line[..sep]);
    if key.is_empty() {
        return None;
    }
    let value = trim(&line[sep + 1..]);
    meta.has_directive = true;
    let (kind, typo) = classify_key(key);
    meta.is_acceptable_typo = typo;
    Some(KeyValue { kind, key, value })
}

/// The search for the next `\n`, `\r` or `#`, set up once per body. `memchr::memchr3` sets up
/// its vectors of the three bytes on every call, which on the short lines of robots.txt files
/// cost as much as the search itself.
struct Stops {
    #[cfg(target_arch = "x86_64")]
    avx2: Option<memchr::arch::x86_64::avx2::memchr::Three>,
}

impl Stops {
    fn new() -> Stops {
        Stops {
            #[cfg(target_arch = "x86_64")]
            avx2: memchr::arch::x86_64::avx2::memchr::Three::new(b'\n', b'\r', b'#'),
        }
    }

    #[inline]
    fn find(&self, haystack: &[u8]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = &self.avx2 {
            return avx2.find(haystack);
        }
        memchr::memchr3(b'\n', b'\r', b'#', haystack)
    }
}

/// Calls `f` for every line of `body`, in order, as the reference's parser would see it.
///
/// Never fails and never allocates: lines are slices of `body`.
pub fn for_each_line<'a>(body: &'a [u8], mut f: impl FnMut(Line<'a>)) {
    // The reference skips any prefix of the UTF-8 BOM at the very start of the body.
    let mut start = 0;
    while start < UTF8_BOM.len() && body.get(start) == Some(&UTF8_BOM[start]) {
        start += 1;
    }
    let mut number: u32 = 0;
    let mut rest = &body[start..];
    // NUL bytes are rare: look for them once rather than on every line.
    let has_nul = memchr::memchr(0, rest).is_some();
    // `hash` is where the line's first `#` is, when the line-end search met one.
    let mut emit = |raw: &'a [u8], hash: Option<usize>, number: u32| {
        let mut metadata = LineMetadata::default();
        let mut content = raw;
        if content.len() > MAX_LINE_BYTES {
            metadata.is_line_too_long = true;
            content = &content[..MAX_LINE_BYTES];
        }
        // The reference works on C strings: a NUL byte ends the line's content.
        if has_nul && let Some(nul) = memchr::memchr(0, content) {
            content = &content[..nul];
        }
        if let Some(hash) = hash.filter(|&h| h < content.len()) {
            metadata.has_comment = true;
            content = &content[..hash];
        }
        let directive = split_line(content, &mut metadata);
        f(Line {
            number,
            directive,
            metadata,
        });
    };
    // One scan finds both the line end and a comment, which most lines of real files have or
    // are; short lines make the number of scans, not their length, the cost.
    let stops = Stops::new();
    while let Some(stop) = stops.find(rest) {
        let (end, hash) = if rest[stop] == b'#' {
            match memchr::memchr2(b'\n', b'\r', &rest[stop..]) {
                Some(end) => (stop + end, Some(stop)),
                None => break,
            }
        } else {
            (stop, None)
        };
        number = number.saturating_add(1);
        emit(&rest[..end], hash, number);
        let terminator = if rest[end] == b'\r' && rest.get(end + 1) == Some(&b'\n') {
            2
        } else {
            1
        };
        rest = &rest[end + terminator..];
    }
    let hash = memchr::memchr(b'#', rest);
    emit(rest, hash, number.saturating_add(1));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(body: &[u8]) -> Vec<Line<'_>> {
        let mut out = Vec::new();
        for_each_line(body, |l| out.push(l));
        out
    }

    #[test]
    fn line_endings_lf_cr_crlf_and_mixed_count_alike() {
        for body in [
            &b"a: 1\nb: 2\n\nc: 3"[..],
            b"a: 1\r\nb: 2\r\n\r\nc: 3",
            b"a: 1\rb: 2\r\rc: 3",
            b"a: 1\nb: 2\r\n\rc: 3",
        ] {
            let l = lines(body);
            assert_eq!(l.len(), 4, "{body:?}");
            assert_eq!(l[3].directive.unwrap().value, b"3");
            assert!(l[2].metadata.is_empty);
        }
    }

    #[test]
    fn cr_cr_lf_is_two_lines() {
        assert_eq!(lines(b"a\r\r\nb").len(), 3);
    }

    #[test]
    fn trailing_newline_makes_a_final_empty_line() {
        let l = lines(b"user-agent: x\n");
        assert_eq!(l.len(), 2);
        assert!(l[1].metadata.is_empty);
    }

    #[test]
    fn missing_colon_only_for_exactly_two_tokens() {
        let l = lines(b"Disallow /x\nDisallow /x /y\nDisallow");
        assert!(l[0].metadata.is_missing_colon_separator);
        assert_eq!(l[0].directive.unwrap().value, b"/x");
        assert!(l[1].directive.is_none());
        assert!(l[2].directive.is_none());
    }

    #[test]
    fn nul_ends_the_line_content() {
        let l = lines(b"disallow: /a\0/b\nallow: /c");
        assert_eq!(l[0].directive.unwrap().value, b"/a");
        assert_eq!(l[1].directive.unwrap().value, b"/c");
    }

    #[test]
    fn long_line_is_cut_and_flagged() {
        let mut body = b"disallow: /".to_vec();
        body.extend(std::iter::repeat_n(b'a', 20_000));
        let l = lines(&body);
        assert!(l[0].metadata.is_line_too_long);
        assert_eq!(
            l[0].directive.unwrap().value.len(),
            MAX_LINE_BYTES - "disallow: ".len()
        );
    }

    #[test]
    fn spaces_are_absl_s() {
        for b in 0..=255u8 {
            let absl = matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r');
            assert_eq!(is_space(b), absl, "{b}");
        }
    }

    #[test]
    fn vertical_tab_is_whitespace() {
        let l = lines(b"\x0bdisallow:\x0b/a\x0b");
        assert_eq!(l[0].directive.unwrap().value, b"/a");
    }

    /// The reference's key matching, written plainly.
    fn naive_classify(key: &[u8]) -> (KeyKind, bool) {
        let s = |p: &[u8]| key.len() >= p.len() && key[..p.len()].eq_ignore_ascii_case(p);
        if s(b"user-agent") {
            (KeyKind::UserAgent, false)
        } else if s(b"useragent") || s(b"user agent") {
            (KeyKind::UserAgent, true)
        } else if s(b"allow") {
            (KeyKind::Allow, false)
        } else if s(b"disallow") {
            (KeyKind::Disallow, false)
        } else if [
            &b"dissallow"[..],
            b"dissalow",
            b"disalow",
            b"diasllow",
            b"disallaw",
        ]
        .iter()
        .any(|p| s(p))
        {
            (KeyKind::Disallow, true)
        } else if s(b"sitemap") {
            (KeyKind::Sitemap, false)
        } else if s(b"site-map") {
            (KeyKind::Sitemap, true)
        } else {
            (KeyKind::Unknown, false)
        }
    }

    #[test]
    fn key_classification_agrees_with_the_plain_rules_for_every_byte_at_every_position() {
        let keys: [&[u8]; 12] = [
            b"user-agent",
            b"useragent",
            b"user agent",
            b"allow",
            b"disallow",
            b"dissallow",
            b"dissalow",
            b"disalow",
            b"diasllow",
            b"disallaw",
            b"sitemap",
            b"site-map",
        ];
        for key in keys {
            for len in 0..=key.len() + 1 {
                let mut k: Vec<u8> = key.iter().chain(b"x").take(len).copied().collect();
                for pos in 0..k.len() {
                    let original = k[pos];
                    // Bytes a line's content cannot hold (CR, LF, NUL) are left out.
                    for b in (0..=255u8).filter(|b| ![0, b'\r', b'\n'].contains(b)) {
                        k[pos] = b;
                        assert_eq!(classify_key(&k), naive_classify(&k), "{k:?}");
                    }
                    k[pos] = original.to_ascii_uppercase();
                }
                assert_eq!(classify_key(&k), naive_classify(&k), "{k:?}");
            }
        }
    }

    #[test]
    fn tail_word_is_the_last_bytes_zero_padded() {
        let bytes: Vec<u8> = (1..=20).collect();
        for len in 0..=bytes.len() {
            let value = &bytes[..len];
            for n in 1..=len.min(7) {
                let mut word = [0u8; 8];
                word[..n].copy_from_slice(&value[len - n..]);
                if len >= 8 || n == len {
                    assert_eq!(tail_word(value, n), u64::from_le_bytes(word), "{len} {n}");
                }
            }
        }
    }

    #[test]
    fn common_keys_split_as_any_key_does() {
        let keys: [&[u8]; 8] = [
            b"disallow",
            b"user-agent",
            b"allow",
            b"sitemap",
            b"disallowed",
            b"user-agents",
            b"allo",
            b"sitemaps",
        ];
        let tails: [&[u8]; 9] = [
            b"", b":", b": /a", b":/a b", b" : /a", b" /a", b":: x", b"x: y", b"\x0b:",
        ];
        for key in keys {
            for tail in tails {
                let mut line: Vec<u8> = key.iter().chain(tail).copied().collect();
                for pos in 0..key.len() + 1 {
                    for b in [b'-', b' ', b':', 0x0D, 0x00, b'A', 0xC1, b'm', b'G', b'N'] {
                        let original = line.get(pos).copied();
                        if let Some(slot) = line.get_mut(pos) {
                            *slot = b;
                        }
                        let trimmed = trim(&line);
                        if !trimmed.is_empty() && !trimmed.contains(&0) && !trimmed.contains(&0x0D)
                        {
                            let (mut fast, mut slow) =
                                (LineMetadata::default(), LineMetadata::default());
                            assert_eq!(
                                split_line(trimmed, &mut fast),
                                split_any_key(trimmed, &mut slow),
                                "{line:?}"
                            );
                            assert_eq!(fast, slow, "{line:?}");
                        }
                        if let (Some(slot), Some(o)) = (line.get_mut(pos), original) {
                            *slot = o.to_ascii_uppercase();
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn keys_match_by_prefix_with_typos() {
        assert_eq!(classify_key(b"Disallowed"), (KeyKind::Disallow, false));
        assert_eq!(classify_key(b"DISALOW"), (KeyKind::Disallow, true));
        assert_eq!(classify_key(b"User Agent"), (KeyKind::UserAgent, true));
        assert_eq!(classify_key(b"site-map"), (KeyKind::Sitemap, true));
        assert_eq!(classify_key(b"alow"), (KeyKind::Unknown, false));
        assert_eq!(classify_key(b"crawl-delay"), (KeyKind::Unknown, false));
        assert_eq!(classify_key(b"USER-AGENTS"), (KeyKind::UserAgent, false));
        assert_eq!(classify_key(b"user-agenT"), (KeyKind::UserAgent, false));
        assert_eq!(classify_key(b"user-agen"), (KeyKind::Unknown, false));
        assert_eq!(classify_key(b"user_agent"), (KeyKind::Unknown, false));
        assert_eq!(classify_key(b"Allo"), (KeyKind::Unknown, false));
        assert_eq!(classify_key(b"A"), (KeyKind::Unknown, false));
        assert_eq!(classify_key(b"SITE-MAPS"), (KeyKind::Sitemap, true));
        assert_eq!(classify_key(b"\xC1llow"), (KeyKind::Unknown, false));
    }
}
