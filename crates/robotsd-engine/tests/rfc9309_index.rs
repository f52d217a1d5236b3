//! Property tests of the RFC 9309 mode's index (issue 40): files of many wildcard patterns,
//! some percent-encoded (unreserved escapes, `%2A`, `%24`, `%2F`), some with a `$` before the end
//! or general delimiters in a query, in several groups. The verdict, the deciding rule (pattern
//! as written, line, directive) and whether it matched as a directory must be exactly those of a
//! straightforward matcher that tries every rule in its RFC form (`src/percent.rs`'s rules,
//! written again here), with RFC 9309's precedence: longest pattern counted in octets as written
//! once unreserved escapes are decoded, then `allow`, then the earliest line.

use proptest::prelude::*;
use robotsd_engine::{Directive, PercentDecoding, RobotsTxt, SCAN_CHECKS};

/// The reference's `Matches`, the set of path positions the pattern so far can end at
/// (quadratic, plain; as in `wildcard_runs.rs`).
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

/// The RFC 9309 form of an ASCII path (`url`) or pattern, and its length for precedence: an
/// unreserved escape decoded, other escapes upper-cased; in the URL `*` and `$` encoded, in a
/// pattern a `$` before its end; after the first `?`, `: / ? @ [ ]` encoded, each counted as
/// the one octet written.
fn rfc_form(value: &str, url: bool) -> (String, usize) {
    let bytes = value.as_bytes();
    let (mut out, mut count, mut in_query, mut i) = (String::new(), 0, false, 0);
    let hex = |b: u8| (b as char).to_digit(16);
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).and_then(|&b| hex(b)),
                bytes.get(i + 2).and_then(|&b| hex(b)),
            )
        {
            let octet = (h * 16 + l) as u8;
            if octet.is_ascii_alphanumeric() || b"-._~".contains(&octet) {
                out.push(octet as char);
                count += 1;
            } else {
                out.push_str(&format!("%{octet:02X}"));
                count += 3;
            }
            i += 3;
            continue;
        }
        let byte = bytes[i];
        let last = i + 1 == bytes.len();
        let encode = match byte {
            b'*' => url,
            b'$' => url || !last,
            b':' | b'/' | b'?' | b'@' | b'[' | b']' => in_query,
            _ => false,
        };
        if encode {
            out.push_str(&format!("%{byte:02X}"));
        } else {
            out.push(byte as char);
        }
        in_query |= byte == b'?';
        count += 1;
        i += 1;
    }
    (out, count)
}

/// The deciding rule by trying every rule's RFC form: (allow, line, pattern as written,
/// as_directory). An `allow` whose RFC form's last segment starts with `/index.htm` also allows
/// its directory exactly, as the pattern `dir/$`, counted in its form's bytes.
fn naive_best(rules: &[Rule], path: &str) -> Option<(bool, u32, String, bool)> {
    let (path, _) = rfc_form(path, true);
    let mut best: Option<(usize, bool, std::cmp::Reverse<u32>, String, bool)> = None;
    let mut offer = |len: usize, allow: bool, line: u32, pattern: &str, dir: bool| {
        let key = (len, allow, std::cmp::Reverse(line));
        if best.as_ref().is_none_or(|b| key > (b.0, b.1, b.2)) {
            best = Some((len, allow, key.2, pattern.to_owned(), dir));
        }
    };
    for (allow, line, written) in rules {
        if written.is_empty() {
            continue;
        }
        let (form, len) = rfc_form(written, false);
        if naive_matches(path.as_bytes(), form.as_bytes()) {
            offer(len, *allow, *line, written, false);
        }
        if let Some(slash) = form.rfind('/').filter(|_| *allow)
            && form[slash..].starts_with("/index.htm")
        {
            let dir = format!("{}$", &form[..=slash]);
            if naive_matches(path.as_bytes(), dir.as_bytes()) {
                offer(dir.len(), true, *line, written, true);
            }
        }
    }
    best.map(|(_, allow, std::cmp::Reverse(line), p, dir)| (allow, line, p, dir))
}

/// Pieces of patterns and paths: letters written plain or escaped (either hex case), escapes
/// that stay (`%2F`, `%2A`, `%24`, `%3A`), and the characters the RFC form treats apart.
const PIECES: &[&str] = &[
    "a",
    "a",
    "b",
    "b",
    "A",
    "%61",
    "%41",
    "%62",
    "%2f",
    "%2F",
    "%2A",
    "%24",
    "/",
    "/",
    "?",
    ":",
    "=",
    "$",
    "~",
    "%7E",
    "index.html",
];

/// A pattern for the sieve's runs and the walk's: a short literal prefix (escaped or not), then
/// segments between `*`s, anchored or not; sometimes a plain prefix or exact pattern.
fn pattern() -> impl Strategy<Value = String> {
    let prefix = prop::sample::select(vec!["/", "/", "/", "/a", "/%61", "/a?", "/b/"]);
    let segment =
        prop::collection::vec(prop::sample::select(PIECES), 0..4).prop_map(|p| p.concat());
    let wildcard = (
        prefix,
        prop::collection::vec(segment.clone(), 1..4),
        prop::bool::weighted(0.3),
    )
        .prop_map(|(prefix, segments, anchored)| {
            let mut pattern = String::from(prefix);
            for segment in segments {
                pattern.push('*');
                pattern.push_str(&segment);
            }
            if anchored {
                pattern.push('$');
            }
            pattern
        });
    let literal = (segment, prop::bool::weighted(0.2))
        .prop_map(|(segment, anchored)| format!("/{segment}{}", if anchored { "$" } else { "" }));
    prop_oneof![5 => wildcard, 2 => literal, 1 => Just(String::new())]
}

fn path() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![8 => prop::sample::select(PIECES), 1 => Just("*")],
        0..40,
    )
    .prop_map(|pieces| format!("/{}", pieces.concat()))
}

/// A rule: (allow, line, pattern as written).
type Rule = (bool, u32, String);

/// A rendered group: its agent and its rules.
type Group<'a> = (&'a str, Vec<Rule>);

/// Renders groups for `FooBot` (merged), `BarBot` and `*`, in that order; a group given `plain`
/// has its `%` removed, so that the RFC mode may use Google's index for it while the others use
/// the index of RFC forms. Returns the body and each group's rules with their lines.
fn render(groups: &[(Vec<(bool, String)>, bool)]) -> (String, Vec<Group<'_>>) {
    let mut body = String::new();
    let mut line = 0;
    let mut out = Vec::new();
    for (g, (rules, plain)) in groups.iter().enumerate() {
        let agent = match (g + 1 == groups.len(), g % 2) {
            (true, _) => "*",
            (false, 0) => "FooBot",
            (false, _) => "BarBot",
        };
        body.push_str(&format!("user-agent: {agent}\n"));
        line += 1;
        let mut applying = Vec::new();
        for (allow, pattern) in rules {
            let pattern = if *plain {
                pattern.replace(['%', '$', '?'], "")
            } else {
                pattern.clone()
            };
            let directive = if *allow { "allow" } else { "disallow" };
            body.push_str(&format!("{directive}: {pattern}\n"));
            line += 1;
            applying.push((*allow, line, pattern));
        }
        out.push((agent, applying));
    }
    (body, out)
}

/// The rules that apply to `agents`: every named group's, else the `*` groups'.
fn applying(groups: &[Group<'_>], agents: &[&str]) -> Vec<Rule> {
    let named = groups.iter().any(|(agent, _)| agents.contains(agent));
    groups
        .iter()
        .filter(|(agent, _)| {
            if named {
                agents.contains(agent)
            } else {
                *agent == "*"
            }
        })
        .flat_map(|(_, rules)| rules.clone())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Runs of at least 16 wildcard patterns (the sieve's) and shorter ones, some groups without
    /// a changed pattern, asked about by one agent, two (their groups together) or none (`*`).
    #[test]
    fn the_rfc_index_decides_as_trying_every_rule(
        groups in prop::collection::vec(
            (prop::collection::vec((any::<bool>(), pattern()), 1..120), prop::bool::weighted(0.25)),
            1..4,
        ),
        paths in prop::collection::vec(path(), 1..8),
    ) {
        let (body, rendered) = render(&groups);
        let robots = RobotsTxt::parse(body.as_bytes());
        for agents in [&["FooBot"][..], &["FooBot", "BarBot"], &["Other"]] {
            let rules = applying(&rendered, agents);
            // Both ways of deciding: each rule tried, then, once the checks tried rule by rule
            // are spent, the index.
            for path in paths.iter().chain(std::iter::repeat_n(&paths[0], SCAN_CHECKS as usize)).chain(&paths) {
                let verdict = robots.check_path_with(agents, path, PercentDecoding::Rfc9309);
                let got = verdict.rule.map(|r| {
                    (r.directive() == Directive::Allow, r.line(), r.pattern().into_owned(),
                     r.matched_as_directory())
                });
                let expected = naive_best(&rules, path);
                prop_assert_eq!(verdict.allowed, expected.as_ref().is_none_or(|e| e.0));
                prop_assert_eq!(&got, &expected,
                    "robots.txt:\n{}\nagents {:?} path {:?}", body, agents, path);
            }
        }
    }
}

#[test]
fn the_oracle_s_form_is_the_module_s() {
    // `src/percent.rs`'s own cases, so that the oracle above is the rules it claims.
    assert_eq!(rfc_form("/%70rivate", false).0, "/private");
    assert_eq!(rfc_form("/a%2fb%2A%24", true).0, "/a%2Fb%2A%24");
    assert_eq!(rfc_form("/a*b$", true).0, "/a%2Ab%24");
    assert_eq!(rfc_form("/a$b$", false), ("/a%24b$".into(), 5));
    assert_eq!(
        rfc_form("/foo/bar?baz=https://foo.bar", false),
        ("/foo/bar?baz=https%3A%2F%2Ffoo.bar".into(), 28)
    );
    assert_eq!(
        rfc_form("/a/b?c=d&e=f?g@h[i]", true).0,
        "/a/b?c=d&e=f%3Fg%40h%5Bi%5D"
    );
    assert_eq!(rfc_form("/%2541", true).0, "/%2541");
}
