//! Fuzzes `RobotsTxt::parse` + `RobotsTxt::check` and asserts properties of the verdict, including
//! agreement with a naive "try every rule" oracle.
//!
//! Input layout: `[agent_len, url_len, agent bytes…, url bytes…, robots.txt body…]`. The lengths
//! are clamped to what is left, so every input is valid; the body is the (arbitrary) tail, so a
//! real robots.txt with a two-byte header (plus agent and URL) makes a good seed.

#![no_main]

use libfuzzer_sys::fuzz_target;
use robotsd_engine::{Directive, RobotsTxt, path_params_query, pattern};

/// Splits the input into (body, agent, url).
fn split(data: &[u8]) -> (&[u8], &[u8], &[u8]) {
    let (header, rest) = data.split_at(data.len().min(2));
    let agent_len = usize::from(header.first().copied().unwrap_or(0)).min(rest.len());
    let (agent, rest) = rest.split_at(agent_len);
    let url_len = usize::from(header.get(1).copied().unwrap_or(0)).min(rest.len());
    let (url, body) = rest.split_at(url_len);
    (body, agent, url)
}

/// Whether Google's `index.htm` extension could apply to `pattern` (its last `/`-segment starts
/// with `/index.htm`); the naive oracle does not model it.
fn index_htm_like(pattern: &str) -> bool {
    pattern
        .rfind('/')
        .is_some_and(|slash| pattern[slash..].starts_with("/index.htm"))
}

fuzz_target!(|data: &[u8]| {
    let (body, agent, url) = split(data);
    let agent = String::from_utf8_lossy(agent);
    let url = String::from_utf8_lossy(url);
    let agent: &str = &agent;
    let url: &str = &url;

    let robots = RobotsTxt::parse(body);
    let stats = robots.stats();
    let path = path_params_query(url);
    let path: &str = &path;

    let v = robots.check(&[agent], url);
    let w = robots.check_path(&[agent], path);

    // check(url) == check_path(path_params_query(url)).
    assert_eq!(v.allowed, w.allowed, "check vs check_path: allowed");
    assert_eq!(
        v.rule.map(|r| r.line()),
        w.rule.map(|r| r.line()),
        "check vs check_path: rule line"
    );

    // No applicable group: nothing can decide.
    if v.groups.is_none() {
        assert!(v.allowed, "no groups but disallowed");
        assert!(v.rule.is_none(), "no groups but a rule: {:?}", v.rule);
    }

    match v.rule {
        None => assert!(v.allowed, "no deciding rule but disallowed"),
        Some(rule) => {
            assert_eq!(
                v.allowed,
                rule.directive() == Directive::Allow,
                "allowed disagrees with the deciding rule {rule:?}"
            );
            let np = rule.normalized_pattern();
            assert!(
                !np.is_empty(),
                "deciding rule has an empty pattern: {rule:?}"
            );
            assert!(np.is_ascii(), "normalised pattern is not ASCII: {np:?}");
            assert!(
                1 <= rule.line() && rule.line() <= stats.lines,
                "rule line {} outside 1..={}",
                rule.line(),
                stats.lines
            );
            if !rule.matched_as_directory() {
                assert!(
                    pattern::matches(path.as_bytes(), np.as_bytes()),
                    "deciding rule {np:?} does not match path {path:?}"
                );
            }
        }
    }

    // Naive oracle: try every rule of every applied group.
    if let Some(groups) = v.groups.as_ref() {
        let mut skip = v.rule.is_some_and(|r| r.matched_as_directory());
        // (length, allow, line) of the best match; larger length, then allow, then earlier line.
        let mut best: Option<(usize, bool, u32)> = None;
        for group in groups.groups() {
            for rule in group.rules() {
                let np = rule.normalized_pattern();
                if index_htm_like(np) {
                    skip = true;
                }
                if np.is_empty() || !pattern::matches(path.as_bytes(), np.as_bytes()) {
                    continue;
                }
                let candidate = (np.len(), rule.directive() == Directive::Allow, rule.line());
                let better = match best {
                    None => true,
                    Some((len, allow, line)) => {
                        (candidate.0, candidate.1, std::cmp::Reverse(candidate.2))
                            > (len, allow, std::cmp::Reverse(line))
                    }
                };
                if better {
                    best = Some(candidate);
                }
            }
        }
        if !skip {
            let engine = v.rule.map(|r| {
                (
                    r.normalized_pattern().len(),
                    r.directive() == Directive::Allow,
                    r.line(),
                )
            });
            assert_eq!(
                engine.map(|(len, allow, _)| (len, allow)),
                best.map(|(len, allow, _)| (len, allow)),
                "engine and naive oracle disagree on (length, allow) for path {path:?}: \
                 engine {:?}, oracle {best:?}",
                v.rule
            );
            assert_eq!(
                engine.map(|(_, _, line)| line),
                best.map(|(_, _, line)| line),
                "engine and naive oracle disagree on the line for path {path:?}"
            );
            assert_eq!(v.allowed, best.is_none_or(|(_, allow, _)| allow));
        }
    }

    // Memory stays linear in the input.
    let heap = robots.heap_size();
    let bound = 64 * body.len() + 4096;
    assert!(
        heap <= bound,
        "heap_size {heap} > {bound} for a {}-byte body",
        body.len()
    );
});
