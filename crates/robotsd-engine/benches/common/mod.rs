//! Shared by the benchmarks: the corpus location and the fixtures named in BENCHMARKS.md.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared` beside the checkout, or `ROBOTSD_SHARED_DIR`.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("ROBOTSD_SHARED_DIR")
        // Empty means unset, as for every ROBOTSD_* variable.
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

/// Every corpus file's bytes, in name order.
pub fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = shared_dir().join("corpus/robots");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {} is required: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("corpus file"))
        })
        .collect()
}

/// One corpus file's bytes.
pub fn corpus_file(name: &str) -> Vec<u8> {
    std::fs::read(shared_dir().join("corpus/robots").join(name)).expect("corpus file")
}

/// The "typical" file: 5 KB, about 100 rules (www.arm.com).
pub const TYPICAL: &str = "www.arm.com-cd592869";
/// The large file: docs.oracle.com cut at the service's 500 KiB limit (about 17k rules).
pub const LARGE: &str = "docs.oracle.com-5fc39574";
/// The service's body limit (SEMANTICS.md §3).
pub const BODY_LIMIT: usize = 512_000;

/// The adversarial case: one 16 KB `*a*a…` rule against a 16 KB path.
pub fn adversarial() -> (Vec<u8>, String) {
    let mut body = b"user-agent: *\ndisallow: /".to_vec();
    body.extend(b"*a".repeat(8_000));
    body.extend(b"b\n");
    let path = format!("/{}", "a".repeat(16_000));
    (body, path)
}

/// A second adversarial shape: thousands of two-byte segments, each found one byte late
/// (`*ab*ab…` against `xabxab…`), so that no segment is found at its first try.
pub fn adversarial_shifted() -> (Vec<u8>, String) {
    let mut body = b"user-agent: *\ndisallow: /".to_vec();
    body.extend(b"*ab".repeat(5_333));
    body.extend(b"c\n");
    let path = format!("/{}", "xab".repeat(5_333));
    (body, path)
}

/// The length of the paths the many-rule adversarial files are checked against: a long URL,
/// as a hostile tester sends (400 to 1,000 bytes).
pub const LONG_PATH: usize = 1_000;

/// Lines `line(0)`, `line(1)`, … under one `user-agent: *`, as many as fit the body limit.
fn fill(mut line: impl FnMut(usize) -> String) -> Vec<u8> {
    let mut body = b"user-agent: *\n".to_vec();
    for n in 0.. {
        let next = line(n);
        if body.len() + next.len() > BODY_LIMIT {
            break;
        }
        body.extend(next.as_bytes());
    }
    body
}

/// Many rules, one pattern: 46,000 lines of `allow:/*ab` (issue 40's hostile file), against a
/// long path of `a`s where `ab` is never found.
pub fn repeated_wildcard() -> (Vec<u8>, String) {
    let body = fill(|_| "allow:/*ab\n".into());
    (body, format!("/{}", "a".repeat(LONG_PATH - 1)))
}

/// Many distinct patterns that all begin `/*` and none of which matches: `/*x0`, `/*x1`, …
/// against a long path of `x`s and digits, where every first byte is found everywhere.
pub fn distinct_wildcards() -> (Vec<u8>, String) {
    let body = fill(|n| format!("disallow:/*x{n}z\n"));
    let mut path = String::from("/");
    while path.len() < LONG_PATH {
        path.push_str("x1x2x3x4x5x6x7x8x9x0");
    }
    path.truncate(LONG_PATH);
    (body, path)
}

/// Many distinct patterns whose every segment is in the path, failing only at the last one:
/// `/*<digits>*z*<digit>`, where the digits are cut from the path's first half and no digit
/// follows its `z`s. A filter on the literals a pattern holds lets all of them through.
pub fn distinct_late_failures() -> (Vec<u8>, String) {
    // Pseudo-random digits, so that the path holds many distinct substrings.
    let digits = lcg_digits(LONG_PATH / 2, 40);
    let path = format!("/{digits}{}", "z".repeat(LONG_PATH - 1 - digits.len()));
    let body = fill(|n| {
        let (digit, rest) = (n % 10, n / 10);
        let len = 4 + rest % 4;
        let at = (rest / 4) % (digits.len() - 8);
        format!("disallow:/*{}*z*{digit}\n", &digits[at..at + len])
    });
    (body, path)
}

/// The service's URL limit: the longest path a check is asked about (8 KiB, SEMANTICS.md §3).
pub const URL_LIMIT: usize = 8_192;

/// Issue 58's hostile shape: `allow:/*S*z` lines, each `S` a distinct 2–10 byte substring of one
/// string of digits, against a path of the URL limit that holds 7 KB of filler, its only `z`,
/// then the digits. Every `S` occurs, but only after the `z`: a matcher that searches the path
/// before the `z` once per rule reads the filler thousands of times. `rules` lines at most
/// (as many as fit the body limit when larger).
pub fn late_segments(rules: usize) -> (Vec<u8>, String) {
    let digits = lcg_digits(URL_LIMIT - 7_000 - 2, 58);
    let mut seen = std::collections::HashSet::new();
    let mut taken = 0;
    let mut n = 0usize;
    let body = fill(|_| {
        // Distinct substrings, drawn in a fixed order; past `rules`, a line that is not a rule.
        loop {
            if taken >= rules || n > 9 * digits.len() {
                return "# end\n".into();
            }
            let len = 2 + n % 9;
            let at = (n * 7_919) % (digits.len() - len);
            n += 1;
            let s = &digits[at..at + len];
            if seen.insert(s.to_string()) {
                taken += 1;
                return format!("allow:/*{s}*z\n");
            }
        }
    });
    let path = format!("/{}z{digits}", "x".repeat(7_000));
    (body, path)
}

/// Pseudo-random digits from a fixed LCG, so that a string holds many distinct substrings.
fn lcg_digits(n: usize, seed: u32) -> String {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            char::from(b'0' + ((state >> 16) % 10) as u8)
        })
        .collect()
}

/// `distinct` with one pattern that RFC 9309's form changes (`/%41`), checked with
/// `PercentDecoding::Rfc9309`: a file where the RFC mode needs an index of the RFC forms.
pub fn distinct_wildcards_rfc() -> (Vec<u8>, String) {
    with_rfc_pattern(distinct_wildcards())
}

/// `late` with one pattern that RFC 9309's form changes, as [`distinct_wildcards_rfc`].
pub fn distinct_late_failures_rfc() -> (Vec<u8>, String) {
    with_rfc_pattern(distinct_late_failures())
}

/// A filled body whose last line is replaced by `disallow:/%41` (`/A` in the RFC form).
fn with_rfc_pattern((mut body, path): (Vec<u8>, String)) -> (Vec<u8>, String) {
    let cut = body.len() - 40;
    let end = cut
        + body[cut..]
            .iter()
            .position(|&b| b == b'\n')
            .expect("a line")
        + 1;
    body.truncate(end);
    body.extend(b"disallow:/%41\n");
    (body, path)
}
