//! The index's bounds on a check's work, counted rather than timed: candidates matched one by
//! one and the sieve's nodes and members looked at, on the hostile files of issue 40.

use super::MATCHED;
use crate::pattern::WHOLE;
use crate::sieve::TOUCHED;
use crate::{Directive, PercentDecoding, RobotsTxt};

/// Candidates matched by one check of `path`, and its deciding (directive, line).
fn matched(robots: &RobotsTxt, path: &str) -> (u64, Option<(Directive, u32)>) {
    let before = MATCHED.with(|m| m.get());
    let verdict = robots.check_path(&["FooBot"], path);
    let rule = verdict.rule.map(|r| (r.directive(), r.line()));
    (MATCHED.with(|m| m.get()) - before, rule)
}

/// The work of one check of `path`: candidates matched one by one, plus the sieve's trie
/// nodes and members looked at; and its deciding (directive, line).
fn work(robots: &RobotsTxt, path: &str) -> (u64, Option<(Directive, u32)>) {
    let before = TOUCHED.with(|t| t.get());
    let (matched, rule) = matched(robots, path);
    (matched + TOUCHED.with(|t| t.get()) - before, rule)
}

/// A body of `user-agent: *` and `line(0)`, `line(1)`, … up to 512,000 bytes.
fn filled(line: impl Fn(usize) -> String) -> RobotsTxt {
    let mut body = String::from("user-agent: *\n");
    for n in 0.. {
        let next = line(n);
        if body.len() + next.len() > 512_000 {
            break;
        }
        body.push_str(&next);
    }
    RobotsTxt::parse(body.as_bytes())
}

/// Pseudo-random digits, so that a path holds many distinct substrings.
fn digits(n: usize, seed: u32) -> String {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            char::from(b'0' + ((state >> 16) % 10) as u8)
        })
        .collect()
}

#[test]
fn distinct_patterns_that_never_match_cost_what_occurs_in_the_path() {
    // Issue 40: tens of thousands of distinct `/*…` patterns, none of which matches. Each
    // was matched against the whole path (27,000 candidates a check).
    let robots = filled(|n| format!("disallow:/*x{n}z\n"));
    let path = format!("/{}", "x1x2x3x4x5x6x7x8x9x0".repeat(50));
    let (spent, rule) = work(&robots, &path);
    assert_eq!(rule, None);
    assert!(spent <= 16, "{spent}");
    // Literals sharing one long common prefix, all but their last byte in the path.
    let shared = "q".repeat(40);
    let robots = filled(|n| format!("allow:/*{shared}{n}$\n"));
    let path = format!("/{}{}", shared.repeat(20), "x");
    assert!(work_of(&robots, &path) <= 16);
}

fn work_of(robots: &RobotsTxt, path: &str) -> u64 {
    work(robots, path).0
}

#[test]
fn patterns_whose_every_literal_occurs_but_in_the_wrong_order_share_their_work() {
    // `/*<digits>*z*<digit>`: every literal occurs, but no digit follows a `z`.
    let head = digits(500, 40);
    let path = format!("/{head}{}", "z".repeat(499));
    let robots = filled(|n| {
        let (digit, rest) = (n % 10, n / 10);
        let at = (rest / 4) % (head.len() - 8);
        format!("disallow:/*{}*z*{digit}\n", &head[at..at + 4 + rest % 4])
    });
    let (spent, rule) = work(&robots, &path);
    assert_eq!(rule, None);
    assert!(spent <= 64, "{spent}");
    // Anchored, with many `*`: `/*<digits>*<digits>*z$` where the path ends in `y`.
    let robots = filled(|n| {
        let at = n % (head.len() - 12);
        format!(
            "disallow:/*{}*{}*z$\n",
            &head[at..at + 3],
            &head[at + 5..at + 8]
        )
    });
    let (spent, rule) = work(&robots, &format!("{path}y"));
    assert_eq!(rule, None);
    assert!(spent <= 16, "{spent}");
}

#[test]
fn the_sieve_finds_the_one_pattern_that_matches_among_many() {
    let head = digits(600, 7);
    let robots = filled(|n| format!("disallow:/*{n}*q\n"));
    // `…17…q`: every pattern whose number occurs before the `q` matches; the longest wins,
    // then the first line.
    let path = format!("/{head}q");
    let verdict = robots.check_path(&["FooBot"], &path);
    let rule = verdict.rule.expect("a pattern matches");
    let longest = (0..40_000)
        .filter(|n| head.contains(&n.to_string()))
        .max_by_key(|n| (n.to_string().len(), std::cmp::Reverse(*n)))
        .expect("some number occurs");
    assert_eq!(rule.pattern(), format!("/*{longest}*q"));
}

#[test]
fn the_sieve_is_charged_what_it_holds_before_it_is_built() {
    // Exactly, when no two lines hold the same pattern; the third file repeats patterns every
    // 300 lines, which the index keeps once and the charge counts each time.
    for (robots, exact) in [
        (filled(|n| format!("disallow:/*x{n}z\n")), true),
        (filled(|n| format!("allow:/a*{n}*b{}$\n", n % 7)), true),
        (
            // The closing note's file: four letters and a `z`.
            filled(|n| {
                let letters: String = (0..4)
                    .map(|i| char::from(b'a' + (n / 26usize.pow(i) % 26) as u8))
                    .collect();
                format!("disallow:/*{letters}z\n")
            }),
            true,
        ),
        (filled(|n| format!("disallow:/p{}/*q{n}*\n", n % 3)), true),
        (
            filled(|n| format!("disallow:/*{}\n", "*a".repeat(n % 300 + 1))),
            false,
        ),
    ] {
        let charged = robots.heap_size();
        robots.check_path(&["FooBot"], "/x");
        let set = &robots.sets[robots.global_set.expect("a * group") as usize];
        let index = set.index.get().expect("built");
        assert!(index.sieve_heap_size() > 0);
        if exact {
            assert_eq!(index.sieve_heap_size(), robots.sieve_charge(set));
        } else {
            assert!(index.sieve_heap_size() <= robots.sieve_charge(set));
        }
        assert_eq!(robots.heap_size(), charged);
    }
}

#[test]
fn the_corpus_is_charged_what_its_sieves_hold() {
    // The corpus vendored for the engine's tests (tests/data/corpus).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/corpus/robots");
    let (mut charged, mut held) = (0, 0);
    for entry in std::fs::read_dir(dir).expect("the corpus") {
        let robots = RobotsTxt::parse(&std::fs::read(entry.expect("a file").path()).expect("read"));
        for (n, set) in robots.sets.iter().enumerate() {
            let built = robots.set_index(n as u32).sieve_heap_size();
            let charge = robots.sieve_charge(set);
            assert!(built <= charge);
            charged += charge;
            held += built;
        }
    }
    // Files that repeat a pattern are charged a little more than they hold, and no more.
    assert!(held > 100_000, "{held}");
    eprintln!("charged {charged}, held {held}");
    assert!(
        charged <= held + held / 100,
        "charged {charged}, held {held}"
    );
}

#[test]
fn identical_rules_are_one_candidate_reported_at_their_first_line() {
    // Issue 40's hostile file: every line the same pattern, beginning `/*`.
    let mut body = String::from("user-agent: *\n");
    body.push_str(&"allow:/*ab\n".repeat(46_454));
    let robots = RobotsTxt::parse(body.as_bytes());
    let long = format!("/{}", "a".repeat(999));
    assert_eq!(matched(&robots, &long), (1, None));
    let found = format!("{long}b");
    assert_eq!(matched(&robots, &found), (1, Some((Directive::Allow, 2))));
}

#[test]
fn an_allow_hides_the_same_disallow_wherever_they_are() {
    let mut body = String::from("user-agent: *\n");
    body.push_str(&"disallow:/*ab\n".repeat(5_000));
    body.push_str(&"allow:/*ab\n".repeat(5_000));
    body.push_str("disallow:/\n");
    let robots = RobotsTxt::parse(body.as_bytes());
    // `/*ab` is tried once, as the allow of the first `allow` line; then `/` cannot win.
    assert_eq!(
        matched(&robots, "/xab"),
        (1, Some((Directive::Allow, 5_002)))
    );
    assert_eq!(
        matched(&robots, "/xa"),
        (2, Some((Directive::Disallow, 10_002)))
    );
}

#[test]
fn a_run_ends_at_its_first_match_and_weaker_runs_are_skipped() {
    // Distinct patterns under the prefix `/`, the longest first; all match `/zz…`.
    let mut body = String::from("user-agent: *\n");
    for n in 0..5_000 {
        body.push_str(&format!(
            "disallow:/*{}\n",
            "z".repeat(n % 50 + 1) + &n.to_string()
        ));
    }
    body.push_str("allow:/*z\n");
    body.push_str("allow:/zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\n");
    let robots = RobotsTxt::parse(body.as_bytes());
    // The 66-byte allow beats every `/*z…n` (at most 58 bytes): one candidate for its run,
    // and the run of `/` is not tried at all.
    let path = format!("/{}", "z".repeat(70));
    assert_eq!(
        matched(&robots, &path),
        (1, Some((Directive::Allow, 5_003)))
    );
}

/// The work of one check of `path` in the RFC 9309 mode, as [`work`] counts it plus the whole
/// patterns matched one by one (what trying every rule's RFC form costs), and its deciding
/// (directive, pattern as written).
fn rfc_work(robots: &RobotsTxt, path: &str) -> (u64, Option<(Directive, String)>) {
    let counters =
        || MATCHED.with(|m| m.get()) + TOUCHED.with(|t| t.get()) + WHOLE.with(|w| w.get());
    let before = counters();
    let verdict = robots.check_path_with(&["FooBot"], path, PercentDecoding::Rfc9309);
    let rule = verdict
        .rule
        .map(|r| (r.directive(), r.pattern().into_owned()));
    (counters() - before, rule)
}

/// `filled(line)`, its last lines given up for `last` (a pattern that changes in the RFC form).
fn filled_with_last(line: impl Fn(usize) -> String, last: &str) -> RobotsTxt {
    let mut body = String::from("user-agent: *\n");
    for n in 0.. {
        let next = line(n);
        if body.len() + next.len() + last.len() > 512_000 {
            break;
        }
        body.push_str(&next);
    }
    body.push_str(last);
    RobotsTxt::parse(body.as_bytes())
}

#[test]
fn the_rfc_mode_is_bounded_as_googles_when_a_pattern_changes_in_its_form() {
    // One `%41` (`A` in the RFC form) among 27,000 distinct `/*x<n>z`: the RFC mode tried every
    // rule's RFC form (27,000 whole patterns a check, 86 M instructions).
    let robots = filled_with_last(|n| format!("disallow:/*x{n}z\n"), "disallow:/%41\n");
    let path = format!("/{}", "x1x2x3x4x5x6x7x8x9x0".repeat(50));
    let (spent, rule) = rfc_work(&robots, &path);
    assert_eq!(rule, None);
    assert!(spent <= 16, "{spent}");
    // The changed rule decides through the index of the RFC forms, and is found.
    let (spent, rule) = rfc_work(&robots, &format!("/%41{path}"));
    assert_eq!(rule, Some((Directive::Disallow, "/%41".into())));
    assert!(spent <= 16, "{spent}");
    // Every segment but the last in the path, the changed patterns among the sieved ones.
    let head = digits(500, 40);
    let path = format!("/{head}{}", "z".repeat(499));
    let robots = filled_with_last(
        |n| {
            let (digit, rest) = (n % 10, n / 10);
            let at = (rest / 4) % (head.len() - 8);
            let escaped = if n % 100 == 0 { "%7A" } else { "z" };
            format!(
                "disallow:/*{}*{escaped}*{digit}\n",
                &head[at..at + 4 + rest % 4]
            )
        },
        "allow:/*%2A$\n",
    );
    let (spent, rule) = rfc_work(&robots, &path);
    assert_eq!(rule, None);
    assert!(spent <= 64, "{spent}");
}

#[test]
fn the_rfc_forms_are_charged_before_their_index_is_built() {
    for robots in [
        filled_with_last(|n| format!("disallow:/*x{n}z\n"), "disallow:/%41\n"),
        filled_with_last(
            |n| format!("allow:/a*%{:02X}*b$\n", n % 256),
            "allow:/*?q=a:b\n",
        ),
    ] {
        let charged = robots.heap_size();
        let global = robots.global_set.expect("a * group");
        robots.check_path(&["FooBot"], "/x");
        assert_eq!(robots.rfc_index_built(global), None);
        robots.check_path_with(&["FooBot"], "/x", PercentDecoding::Rfc9309);
        let (sieve, bound) = robots.rfc_index_built(global).expect("built");
        assert!(sieve > 0);
        assert!(sieve <= bound, "{sieve} > {bound}");
        assert_eq!(robots.heap_size(), charged);
    }
    // Without a changed pattern there is nothing more to charge or build.
    let plain = filled(|n| format!("disallow:/*x{n}z\n"));
    assert!(plain.rfc.is_none());
}

#[test]
fn segments_that_occur_only_too_late_are_placed_by_one_sweep() {
    // Issue 58: `allow:/*S*z`, each `S` a distinct piece of one string of digits that the path
    // holds only after its `z`, behind 7 KB of filler: each rule searched the filler (50 ms a
    // check). The sweep reads the path a bounded number of times, whatever the rules.
    let long = digits(1_000, 58);
    let line = |n: usize| {
        let len = 2 + n % 9;
        let at = (n * 7_919) % (long.len() - len);
        format!("allow:/*{}*z\n", &long[at..at + len])
    };
    let robots = filled(line);
    let path = format!("/{}z{long}", "x".repeat(7_000));
    let (spent, rule) = work(&robots, &path);
    assert_eq!(rule, None);
    assert!(spent <= 3 * path.len() as u64, "{spent}");
    // One piece also early in the filler: of the rules whose piece it holds, the longest decides.
    let early = &long[100..104];
    let path = format!("/{early}{}z{long}", "x".repeat(7_000));
    let (spent, _) = work(&robots, &path);
    let verdict = robots.check_path(&["FooBot"], &path);
    let pattern = verdict.rule.expect("a rule matches").pattern().into_owned();
    let piece = &pattern[2..pattern.len() - 2];
    assert!(early.contains(piece), "{pattern}");
    let longest = (0..early.len())
        .flat_map(|a| (a + 2..=early.len()).map(move |b| (a, b)))
        .filter(|&(a, b)| {
            // The lines `filled` took: as many as fit its body.
            let mut size = "user-agent: *\n".len();
            let wanted = format!("allow:/*{}*z\n", &early[a..b]);
            (0..)
                .map(line)
                .take_while(|l| {
                    size += l.len();
                    size <= 512_000
                })
                .any(|l| l == wanted)
        })
        .map(|(a, b)| b - a)
        .max();
    assert_eq!(Some(piece.len()), longest);
    assert!(spent <= 3 * path.len() as u64, "{spent}");
}

/// Whether any set of `robots` has built its index.
fn any_index_built(robots: &RobotsTxt) -> bool {
    robots.sets.iter().any(|s| s.index.get().is_some())
}

#[test]
fn a_large_set_of_literal_rules_is_tried_rule_by_rule_before_its_index_is_built() {
    // docs.oracle.com's shape (issue 58): thousands of distinct `disallow` prefixes, more than
    // 64 KiB of them, built on the first check when only 64 KiB were tried rule by rule.
    let robots = filled(|n| format!("disallow:/javase/8/docs/api/{n}/\n"));
    let path = "/javase/8/docs/api/123/x";
    let (_, first) = matched(&robots, path);
    assert!(first.is_some());
    for _ in 1..super::SCAN_CHECKS {
        assert_eq!(matched(&robots, path).1, first);
    }
    assert!(!any_index_built(&robots));
    assert_eq!(matched(&robots, path).1, first);
    assert!(any_index_built(&robots));

    // Equal rules tried one by one: only the first is a candidate, the rest cannot beat it.
    let mut body = String::from("user-agent: *\n");
    body.push_str(&"disallow:/x\n".repeat(30_000));
    let robots = RobotsTxt::parse(body.as_bytes());
    assert_eq!(matched(&robots, "/xy"), (1, Some((Directive::Disallow, 2))));
    assert!(!any_index_built(&robots));

    // An `allow` costs a check tried so about four entries: 8,190 `allow:/index.html` are
    // indexed on their first check.
    let mut body = String::from("user-agent: *\n");
    body.push_str(&"allow:/index.html\n".repeat(8_190));
    let robots = RobotsTxt::parse(body.as_bytes());
    assert_eq!(matched(&robots, "/").1, Some((Directive::Allow, 2)));
    assert!(any_index_built(&robots));
}
