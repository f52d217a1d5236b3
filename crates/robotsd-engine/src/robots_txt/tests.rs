//! The tests of `robots_txt`.

use super::*;
use crate::pattern::Shape;

fn rules(robots: &RobotsTxt) -> Vec<(String, String, u32, bool)> {
    robots
        .groups()
        .flat_map(|g| g.rules().collect::<Vec<_>>())
        .map(|r| {
            let allow = r.directive() == Directive::Allow;
            (
                r.pattern().into_owned(),
                r.normalized_pattern().to_owned(),
                r.line(),
                allow,
            )
        })
        .collect()
}

#[test]
fn repeated_patterns_are_stored_once_and_written_values_survive_normalisation() {
    let body = "user-agent: a\ndisallow: /x/\nallow: /caf\u{e9}%2f\n\
                user-agent: b\ndisallow: /x/\nallow: /caf\u{e9}%2f\n";
    let robots = RobotsTxt::parse(body.as_bytes());
    let expected = |line_base: u32| {
        vec![
            ("/x/".to_string(), "/x/".to_string(), line_base, false),
            (
                "/caf\u{e9}%2f".to_string(),
                "/caf%C3%A9%2F".to_string(),
                line_base + 1,
                true,
            ),
        ]
    };
    let all = rules(&robots);
    assert_eq!(all[..2], expected(2)[..]);
    assert_eq!(all[2..], expected(5)[..]);
    // "/x/" once; each normalised value with its written form after it.
    let once = "/x/".len() + 2 * ("/caf%C3%A9%2F".len() + "/caf\u{e9}%2f".len());
    let agents = 2;
    assert_eq!(robots.arena.len(), once + agents);
    assert_eq!(robots.rules[0].start, robots.rules[2].start);
}

#[test]
fn value_scan_agrees_with_plain_searches() {
    let values: [&[u8]; 9] = [
        b"",
        b"/",
        b"/a*b",
        b"/abcdefgh*",
        b"/abcdefghijklmnop*q",
        b"*",
        b"/%2f",
        b"/\xC3\xA9",
        b"/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p*$",
    ];
    for v in values {
        let scan = scan_value(v);
        assert_eq!(scan.first_star, v.iter().position(|&b| b == b'*'), "{v:?}");
        assert_eq!(
            scan.maybe_escaped,
            v.iter().any(|&b| b == b'%' || b >= 0x80),
            "{v:?}"
        );
    }
    // Every byte at every position of a 17-byte value.
    for pos in 0..17 {
        for b in 0..=255u8 {
            let mut v = [b'a'; 17];
            v[pos] = b;
            let scan = scan_value(&v);
            assert_eq!(scan.first_star, (b == b'*').then_some(pos));
            assert_eq!(scan.maybe_escaped, b == b'%' || b >= 0x80);
        }
    }
}

#[test]
fn rule_data_stays_small() {
    assert_eq!(std::mem::size_of::<RuleData>(), 12);
}

#[test]
fn shape_is_derived_from_the_pattern() {
    let robots = RobotsTxt::parse(b"user-agent: *\ndisallow: /a\ndisallow: /a$\ndisallow: /a*b\n");
    let shapes: Vec<_> = robots
        .rules
        .iter()
        .map(|r| r.shape(&robots.arena))
        .collect();
    assert_eq!(shapes, [Shape::Prefix, Shape::Exact, Shape::Wildcard]);
}
