//! Property tests of the rule index on the files that stress it (issue 40): many rules sharing a
//! prefix (`/*…`), repeated patterns under both directives, equal-length rivals, Google's
//! `index.htm` extension, several groups merged, and runs of many distinct wildcard patterns
//! (decided by the index's sieve) whose literals share prefixes and occur out of order. The verdict, the deciding rule (pattern,
//! line, directive) and whether it matched as a directory must be exactly those of a
//! straightforward matcher that tries every rule (SEMANTICS.md §1 "Precedence").

use proptest::prelude::*;
use robotsd_engine::{Directive, RobotsTxt, SCAN_CHECKS};

/// The reference's `Matches` as the reference computes it: the set of path positions the
/// pattern so far can end at (quadratic, plain, and fine for tests of long paths).
fn naive_matches(path: &[u8], pattern: &[u8]) -> bool {
    let mut ends = vec![0usize];
    for (i, &byte) in pattern.iter().enumerate() {
        if byte == b'$' && i + 1 == pattern.len() {
            return ends.last() == Some(&path.len());
        }
        ends = if byte == b'*' {
            (ends[0]..=path.len()).collect()
        } else {
            ends.iter()
                .filter(|&&at| path.get(at) == Some(&byte))
                .map(|&at| at + 1)
                .collect()
        };
        if ends.is_empty() {
            return false;
        }
    }
    true
}

/// The deciding rule by trying every rule: (allow, line, pattern, as_directory), by longest
/// pattern, then `allow`, then the earliest line. An `allow` whose last segment starts with
/// `/index.htm` also allows its directory exactly, as a pattern `dir/$`.
fn naive_best(rules: &[(bool, u32, String)], path: &[u8]) -> Option<(bool, u32, String, bool)> {
    let mut best: Option<(usize, bool, std::cmp::Reverse<u32>, String, bool)> = None;
    let mut offer = |len: usize, allow: bool, line: u32, pattern: &str, dir: bool| {
        let key = (len, allow, std::cmp::Reverse(line));
        if best.as_ref().is_none_or(|b| key > (b.0, b.1, b.2)) {
            best = Some((len, allow, key.2, pattern.to_owned(), dir));
        }
    };
    for (allow, line, pattern) in rules {
        if pattern.is_empty() {
            continue;
        }
        if naive_matches(path, pattern.as_bytes()) {
            offer(pattern.len(), *allow, *line, pattern, false);
        }
        if let Some(slash) = pattern.rfind('/').filter(|_| *allow)
            && pattern[slash..].starts_with("/index.htm")
        {
            let dir = format!("{}$", &pattern[..=slash]);
            if naive_matches(path, dir.as_bytes()) {
                offer(dir.len(), true, *line, pattern, true);
            }
        }
    }
    best.map(|(_, allow, std::cmp::Reverse(line), p, dir)| (allow, line, p, dir))
}

/// Patterns drawn mostly from a small pool, so that repeats and equal lengths are common.
fn pattern() -> impl Strategy<Value = String> {
    let pool = prop::sample::select(vec![
        "/*ab",
        "/*a",
        "/*b",
        "/**ab",
        "/*a*b",
        "/*ab$",
        "/*b$",
        "/*",
        "/*$",
        "/",
        "/$",
        "/a",
        "/ab",
        "/a*",
        "/a*b$",
        "/*/index.html",
        "/a/index.htm",
        "/*a/index.htm*",
        "/a/$",
        "/*/$",
        "/a/",
        "/ab/",
        "*",
        "*ab",
        "",
    ]);
    let random = prop::collection::vec(prop::sample::select(&b"/ab*$"[..]), 0..7)
        .prop_map(|bytes| format!("/{}", String::from_utf8(bytes).expect("ASCII")));
    prop_oneof![3 => pool.prop_map(str::to_owned), 2 => random]
}

fn path() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec!["a", "b", "ab", "/", "/a/", "index.html", "$", "*"]);
    prop::collection::vec(piece, 0..8).prop_map(|pieces| format!("/{}", pieces.concat()))
}

/// A file: one `*` group, or groups for `foobot` and `*`, of many rules each.
fn file() -> impl Strategy<Value = Vec<Vec<(bool, String)>>> {
    let group = prop::collection::vec((any::<bool>(), pattern()), 1..60);
    prop::collection::vec(group, 1..4)
}

/// Renders the groups: the last is `*`, the others name `FooBot` (so they merge); returns the
/// body and the rules that apply to `FooBot` with their lines.
fn render(groups: &[Vec<(bool, String)>]) -> (String, Vec<(bool, u32, String)>) {
    let mut body = String::new();
    let mut line = 0;
    let mut applying = Vec::new();
    for (g, rules) in groups.iter().enumerate() {
        let named = g + 1 < groups.len();
        body.push_str(if named {
            "user-agent: FooBot\n"
        } else {
            "user-agent: *\n"
        });
        line += 1;
        for (allow, pattern) in rules {
            body.push_str(&format!(
                "{}: {pattern}\n",
                if *allow { "allow" } else { "disallow" }
            ));
            line += 1;
            if named || groups.len() == 1 {
                applying.push((*allow, line, pattern.clone()));
            }
        }
    }
    (body, applying)
}

/// A pattern for the sieve (runs of at least 16 wildcard rules): a short literal prefix, then
/// segments of a small alphabet between `*`s, so that literals share prefixes, occur in the
/// path out of order, and end anchored or not.
fn sieved_pattern() -> impl Strategy<Value = String> {
    let prefix = prop::sample::select(vec!["/", "/", "/", "/a", "/ab", "/b/"]);
    let segment = prop::collection::vec(prop::sample::select(&b"ab/c"[..]), 0..5)
        .prop_map(|b| String::from_utf8(b).expect("ASCII"));
    let segments = prop::collection::vec(segment, 1..5);
    (prefix, segments, prop::bool::weighted(0.3)).prop_map(|(prefix, segments, anchored)| {
        let mut pattern = String::from(prefix);
        for segment in segments {
            pattern.push('*');
            pattern.push_str(&segment);
        }
        if anchored {
            pattern.push('$');
        }
        pattern
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Many distinct wildcard rules, decided by the sieve, against long paths.
    #[test]
    fn sieved_runs_decide_as_trying_every_rule(
        rules in prop::collection::vec(
            (any::<bool>(), prop_oneof![6 => sieved_pattern(), 1 => pattern()]),
            16..300,
        ),
        paths in prop::collection::vec(
            prop::collection::vec(prop::sample::select(&b"abc/"[..]), 0..120)
                .prop_map(|b| format!("/{}", String::from_utf8(b).expect("ASCII"))),
            1..8,
        ),
    ) {
        let (body, applying) = render(&[rules]);
        let robots = RobotsTxt::parse(body.as_bytes());
        // Both ways of deciding: each rule tried, then, once the checks tried rule by rule are
        // spent, the index.
        for path in paths.iter().chain(std::iter::repeat_n(&paths[0], SCAN_CHECKS as usize)).chain(&paths) {
            let got = robots.check_path(&["FooBot"], path).rule.map(|r| {
                (r.directive() == Directive::Allow, r.line(), r.pattern().into_owned(),
                 r.matched_as_directory())
            });
            prop_assert_eq!(&got, &naive_best(&applying, path.as_bytes()),
                "robots.txt:\n{}\npath {:?}", body, path);
        }
    }

    #[test]
    fn the_index_decides_as_trying_every_rule(
        groups in file(),
        paths in prop::collection::vec(path(), 1..12),
    ) {
        let (body, applying) = render(&groups);
        let robots = RobotsTxt::parse(body.as_bytes());
        // Both ways of deciding: each rule tried, then, once the checks tried rule by rule are
        // spent, the index.
        for path in paths.iter().chain(std::iter::repeat_n(&paths[0], SCAN_CHECKS as usize)).chain(&paths) {
            let verdict = robots.check_path(&["FooBot"], path);
            let got = verdict.rule.map(|r| {
                (r.directive() == Directive::Allow, r.line(), r.pattern().into_owned(),
                 r.matched_as_directory())
            });
            let expected = naive_best(&applying, path.as_bytes());
            prop_assert_eq!(verdict.allowed, expected.as_ref().is_none_or(|e| e.0));
            prop_assert_eq!(&got, &expected, "robots.txt:\n{}\npath {:?}", body, path);
        }
    }

    /// Hundreds of rules of one prefix, most of them repeats, checked against long paths.
    #[test]
    fn long_runs_decide_as_trying_every_rule(
        rules in prop::collection::vec((any::<bool>(), pattern()), 100..400),
        paths in prop::collection::vec(
            prop::collection::vec(prop::sample::select(&b"ab/"[..]), 0..200)
                .prop_map(|b| format!("/{}", String::from_utf8(b).expect("ASCII"))),
            1..6,
        ),
    ) {
        let (body, applying) = render(&[rules]);
        let robots = RobotsTxt::parse(body.as_bytes());
        // Both ways of deciding: each rule tried, then, once the checks tried rule by rule are
        // spent, the index.
        for path in paths.iter().chain(std::iter::repeat_n(&paths[0], SCAN_CHECKS as usize)).chain(&paths) {
            let got = robots.check_path(&["FooBot"], path).rule.map(|r| {
                (r.directive() == Directive::Allow, r.line(), r.pattern().into_owned(),
                 r.matched_as_directory())
            });
            prop_assert_eq!(&got, &naive_best(&applying, path.as_bytes()),
                "robots.txt:\n{}\npath {:?}", body, path);
        }
    }
}
