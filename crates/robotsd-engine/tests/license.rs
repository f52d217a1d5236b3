//! RSL's `License:` lines: reported with their lines, wherever they are, and never part of a
//! group or a verdict (the conformance suite also runs every reference case with some added).

use robotsd_engine::{DiagnosticKind, License, RobotsTxt};

fn licenses(robots: &RobotsTxt) -> Vec<(String, u32)> {
    robots
        .licenses()
        .map(|License { url, line }| (url.into_owned(), line))
        .collect()
}

#[test]
fn every_license_line_is_reported_as_written_with_its_line() {
    let text = "License: https://a.example/license.xml\n\
                user-agent: bot\n\
                disallow: /private\n\
                \tlicense:https://b.example/rsl.xml\n\
                allow: /private/public\n\
                LICENSE :   https://c.example/terms.xml   # the terms\n\
                \n\
                user-agent: *\n\
                disallow: /\n\
                license: not-a-url\n";
    let robots = RobotsTxt::parse(text.as_bytes());
    assert_eq!(
        licenses(&robots),
        [
            ("https://a.example/license.xml".to_owned(), 1),
            ("https://b.example/rsl.xml".to_owned(), 4),
            ("https://c.example/terms.xml".to_owned(), 6),
            ("not-a-url".to_owned(), 10),
        ]
    );
    // A line robotsd knows, which Google does not use: not an unknown key.
    let kinds: Vec<_> = robots
        .diagnostics()
        .filter(|d| {
            d.key
                .as_deref()
                .is_some_and(|k| k.eq_ignore_ascii_case("license"))
        })
        .map(|d| d.kind)
        .collect();
    assert_eq!(kinds, [DiagnosticKind::UnsupportedKey; 4]);
}

#[test]
fn license_lines_change_no_group_and_no_verdict() {
    let with = "user-agent: bot\nlicense: https://a.example/l.xml\ndisallow: /private\n\
                license: https://b.example/l.xml\nuser-agent: other\ndisallow: /\n";
    let without = "user-agent: bot\n\ndisallow: /private\n\nuser-agent: other\ndisallow: /\n";
    let (with, without) = (
        RobotsTxt::parse(with.as_bytes()),
        RobotsTxt::parse(without.as_bytes()),
    );
    let groups = |robots: &RobotsTxt| {
        robots
            .groups()
            .map(|g| {
                let agents: Vec<String> = g.agents().map(|a| a.value.into_owned()).collect();
                let rules: Vec<(String, u32)> = g
                    .rules()
                    .map(|r| (r.pattern().into_owned(), r.line()))
                    .collect();
                (agents, rules)
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(groups(&with), groups(&without));
    for (agent, url) in [
        ("bot", "https://a.test/private/x"),
        ("bot", "https://a.test/public"),
        ("other", "https://a.test/x"),
        ("third", "https://a.test/x"),
    ] {
        let (a, b) = (with.check(&[agent], url), without.check(&[agent], url));
        assert_eq!(a.allowed, b.allowed, "{agent} {url}");
        assert_eq!(
            a.rule.map(|r| r.line()),
            b.rule.map(|r| r.line()),
            "{agent} {url}"
        );
    }
    assert!(licenses(&without).is_empty());
}
