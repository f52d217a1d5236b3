//! The sweep's two ways of finding where a deferred node may start, each run alone against
//! trying every rule with the one-rule matcher (`pattern::matches`, itself tested against the
//! reference's quadratic matcher).

use proptest::prelude::*;

use super::sweep::FEW_FOR_TESTS;
use crate::pattern::matches;
use crate::{Directive, RobotsTxt};

/// Wildcard patterns over a small alphabet, so that segments nest, repeat and occur out of
/// order; all begin `/*` so that they make one sieved run.
fn pattern() -> impl Strategy<Value = String> {
    let segment = prop::collection::vec(prop::sample::select(&b"abz"[..]), 0..4)
        .prop_map(|b| String::from_utf8(b).expect("ASCII"));
    (
        prop::collection::vec(segment, 1..5),
        prop::bool::weighted(0.3),
    )
        .prop_map(|(segments, anchored)| {
            let mut pattern = String::from("/");
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

/// The deciding (allow, line) by trying every rule: longest, then `allow`, then earliest.
fn by_every_rule(rules: &[(bool, String)], path: &str) -> Option<(bool, u32)> {
    rules
        .iter()
        .enumerate()
        .filter(|(_, (_, p))| matches(path.as_bytes(), p.as_bytes()))
        .map(|(i, (allow, p))| (p.len(), *allow, std::cmp::Reverse(i as u32 + 2)))
        .max()
        .map(|(_, allow, std::cmp::Reverse(line))| (allow, line))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn walking_every_position_and_searching_for_each_segment_decide_alike(
        rules in prop::collection::vec((any::<bool>(), pattern()), 16..200),
        paths in prop::collection::vec(
            prop::collection::vec(prop::sample::select(&b"abz/"[..]), 0..200)
                .prop_map(|b| format!("/{}", String::from_utf8(b).expect("ASCII"))),
            1..6,
        ),
    ) {
        let mut body = String::from("user-agent: *\n");
        for (allow, p) in &rules {
            body.push_str(&format!("{}: {p}\n", if *allow { "allow" } else { "disallow" }));
        }
        let robots = RobotsTxt::parse(body.as_bytes());
        for path in &paths {
            let expected = by_every_rule(&rules, path);
            for few in [Some(0), Some(usize::MAX), None] {
                FEW_FOR_TESTS.with(|f| f.set(few));
                let got = robots
                    .check_path(&["FooBot"], path)
                    .rule
                    .map(|r| (r.directive() == Directive::Allow, r.line()));
                FEW_FOR_TESTS.with(|f| f.set(None));
                prop_assert_eq!(got, expected, "{:?} robots.txt:\n{}\npath {:?}", few, body, path);
            }
        }
    }
}
