//! Matching a normalised rule pattern against a path (SEMANTICS.md §1 "Path matching" and
//! "Worst case").
//!
//! `*` matches any sequence and `$` anchors the end only as the last byte of a pattern; otherwise a
//! pattern matches as a case-sensitive prefix. The reference computes this with a set of
//! positions, costing pattern length × path length (0.3 s for a 16 KB `*a*a…` rule against a 16 KB
//! path). Here a pattern is split at its `*`s into literal segments: the first must be a prefix,
//! each following one is found leftmost with a linear-time substring search, and an anchored last
//! segment must be a suffix that starts no earlier than where the others left off. Leftmost
//! placement leaves the most room for what follows, so this accepts exactly the paths the
//! reference accepts, in time linear in path and pattern.

/// How the literal prefix of a pattern (everything before its first `*`) relates to the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// No `*` and no final `$`: the pattern is a plain prefix.
    Prefix,
    /// No `*` but a final `$`: the path must equal the literal.
    Exact,
    /// At least one `*`: the rest must be matched by [`matches_tail`].
    Wildcard,
}

/// The literal prefix length and shape of a normalised pattern.
pub fn split(pattern: &[u8]) -> (usize, Shape) {
    match memchr::memchr(b'*', pattern) {
        Some(star) => (star, Shape::Wildcard),
        None => match pattern.split_last() {
            Some((b'$', _)) => (pattern.len() - 1, Shape::Exact),
            _ => (pattern.len(), Shape::Prefix),
        },
    }
}

#[cfg(test)]
thread_local! {
    /// Whole patterns matched on this thread by [`matches`], for tests that bound a check's
    /// work: what a matcher that tries rules one by one pays for each.
    pub(crate) static WHOLE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Whether `pattern` matches `path` from its start (the reference's `Matches`).
pub fn matches(path: &[u8], pattern: &[u8]) -> bool {
    #[cfg(test)]
    WHOLE.with(|w| w.set(w.get() + 1));
    let (prefix_len, shape) = split(pattern);
    let prefix = &pattern[..prefix_len];
    match shape {
        Shape::Prefix => path.starts_with(prefix),
        Shape::Exact => path == prefix,
        Shape::Wildcard => {
            let (tail, anchored) = match pattern.split_last() {
                Some((b'$', body)) => (&body[prefix_len..], true),
                _ => (&pattern[prefix_len..], false),
            };
            path.starts_with(prefix) && matches_tail(&path[prefix_len..], tail, anchored)
        }
    }
}

/// Matches a pattern tail (which starts with `*`, without a final anchoring `$`) against the
/// part of the path after the pattern's literal prefix; `anchored` when the pattern ended in `$`.
pub fn matches_tail(path: &[u8], tail: &[u8], anchored: bool) -> bool {
    // The tail starts with `*`, so every segment floats. Adversarial patterns hold thousands of
    // tiny segments (`*a*a*a…`): the loop is kept tight for them.
    let mut pos = 0;
    let mut rest = tail.get(1..).unwrap_or_default();
    let last = loop {
        let Some(star) = rest.iter().position(|&b| b == b'*') else {
            break rest;
        };
        let segment = &rest[..star];
        rest = &rest[star + 1..];
        match segment {
            [] => {}
            [byte] if path.get(pos) == Some(byte) => pos += 1,
            _ => match find(&path[pos..], segment) {
                Some(found) => pos += found + segment.len(),
                None => return false,
            },
        }
    };
    if anchored {
        path.len() - pos >= last.len() && path.ends_with(last)
    } else {
        last.is_empty() || find(&path[pos..], last).is_some()
    }
}

/// Leftmost occurrence of `needle` (non-empty) in `haystack`, in time linear in both.
///
/// A pattern can hold thousands of segments, so the per-call setup of a substring searcher would
/// dominate: a segment found right away (the usual case in repetitive patterns) costs one
/// comparison, a short one a first-byte scan with at most 16 bytes verified per candidate, and
/// only a long one pays for the two-way searcher.
#[inline]
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.len() > 16 {
        return memchr::memmem::find(haystack, needle);
    }
    let (&first, rest) = needle.split_first()?;
    let last_start = haystack.len().checked_sub(needle.len())?;
    // Near matches (a segment found where the previous one ended, or a few bytes on) are the
    // rule in repetitive patterns: a plain scan of the next positions, comparing byte by byte,
    // avoids the set-up of a library search for each of thousands of segments.
    let near = last_start.min(16);
    let window = &haystack[..near + needle.len()];
    if let Some(at) = window
        .windows(needle.len())
        .position(|w| w[0] == first && short_eq(&w[1..], rest))
    {
        return Some(at);
    }
    let mut from = near + 1;
    // A few candidates by first byte, then the two-way searcher, so that a haystack where the
    // first byte is everywhere (`aaaa…` for `ab`) cannot make this quadratic.
    for _ in 0..8 {
        if from > last_start {
            return None;
        }
        let at = from + memchr::memchr(first, &haystack[from..=last_start])?;
        if short_eq(&haystack[at + 1..at + needle.len()], rest) {
            return Some(at);
        }
        from = at + 1;
    }
    memchr::memmem::find(&haystack[from..], needle).map(|at| at + from)
}

/// Equality of two short slices of equal length, without a call to `memcmp`.
#[inline(always)]
fn short_eq(a: &[u8], b: &[u8]) -> bool {
    let mut same = true;
    for (x, y) in a.iter().zip(b) {
        same &= x == y;
    }
    same
}

/// For an `allow` pattern whose last segment starts with `/index.htm`, the length of the
/// directory part (up to and including that last `/`): Google also allows the directory itself.
pub(crate) fn index_htm_directory(pattern: &[u8]) -> Option<usize> {
    let slash = memchr::memrchr(b'/', pattern)?;
    pattern[slash..]
        .starts_with(b"/index.htm")
        .then_some(slash + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_and_anchor() {
        assert!(matches(b"/fish.php", b"/*.php"));
        assert!(matches(b"/a/b.php", b"/*.php$"));
        assert!(!matches(b"/a/b.php?x", b"/*.php$"));
        assert!(matches(b"/a$b", b"/a$b"));
        assert!(matches(b"/", b"/$"));
        assert!(!matches(b"/a", b"/$"));
        assert!(matches(b"/anything", b"*"));
        assert!(matches(b"/anything", b"*$"));
        assert!(!matches(b"/", b"$"));
        assert!(matches(b"/abcab", b"/*ab$"));
        assert!(!matches(b"/ab", b"/ab*ab$"));
        assert!(matches(b"/abab", b"/ab*ab$"));
        assert!(matches(b"/x", b"/**x"));
    }

    #[test]
    fn find_agrees_with_a_plain_search() {
        let hay = b"xxabxabyabab";
        for needle in [
            &b"ab"[..],
            b"x",
            b"aby",
            b"abab",
            b"z",
            b"xxabxabyabab",
            b"bxabyababq",
        ] {
            let plain = hay.windows(needle.len()).position(|w| w == needle);
            assert_eq!(find(hay, needle), plain, "{needle:?}");
        }
        let many = [&b"a".repeat(40)[..], b"ab"].concat();
        assert_eq!(find(&many, b"ab"), Some(40));
        let long = b"0123456789abcdefghij";
        assert_eq!(find(b"--0123456789abcdefghij--", long), Some(2));
    }

    #[test]
    fn adversarial_pattern_is_linear() {
        let pattern: Vec<u8> = b"/"
            .iter()
            .chain(b"*a".repeat(8_000).iter())
            .copied()
            .collect();
        let mut path = b"/".to_vec();
        path.extend(std::iter::repeat_n(b'a', 16_000));
        assert!(matches(&path, &pattern));
        // One `a` short: every segment but the last is found, the last is not.
        path.truncate(8_000);
        assert!(!matches(&path, &pattern));
    }
}
