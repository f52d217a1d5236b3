//! Google's and MDN's examples, read for the crawlers they name.

use super::*;
use crate::directives::ImagePreview;
use robotsd_engine::Preference;

/// The time the pages are read at: the `Date` of Google's example (Tue, 25 May 2010 21:42:43
/// GMT), a month before its `unavailable_after`.
const AT: i64 = 1_274_823_763;

fn read(headers: &[Header<'_>], html: Option<&str>, agents: &[&str]) -> PageRead {
    super::read(headers, html, agents, AT)
}

fn robots(headers: &[Header<'_>], html: Option<&str>, agent: &str) -> RobotsRules {
    read(headers, html, &[agent]).robots
}

#[test]
fn googles_header_example() {
    let rules = robots(&[("X-Robots-Tag", "noindex")], None, "googlebot");
    assert!(!rules.index && rules.follow);
}

#[test]
fn googles_two_headers_combine() {
    let read = read(
        &[
            ("Date", "Tue, 25 May 2010 21:42:43 GMT"),
            ("X-Robots-Tag", "noimageindex"),
            (
                "X-Robots-Tag",
                "unavailable_after: 25 Jun 2010 15:00:00 PST",
            ),
        ],
        None,
        &["googlebot"],
    );
    assert!(!read.robots.image_index);
    assert_eq!(read.robots.unavailable_after, Some(1_277_506_800));
    let sources: Vec<_> = read.rules.iter().map(|r| r.source.clone()).collect();
    assert_eq!(
        sources,
        [
            RuleSource::Header { index: 1 },
            RuleSource::Header { index: 2 }
        ]
    );
}

#[test]
fn googles_headers_for_two_search_engines() {
    let headers = [
        ("X-Robots-Tag", "googlebot: nofollow"),
        ("X-Robots-Tag", "otherbot: noindex, nofollow"),
    ];
    let google = robots(&headers, None, "Googlebot");
    assert!(google.index && !google.follow);
    let other = robots(&headers, None, "otherbot");
    assert!(!other.index && !other.follow);
    assert_eq!(robots(&headers, None, "thirdbot"), RobotsRules::default());
}

#[test]
fn mdns_agents_in_one_header_and_in_two() {
    let one = [(
        "x-robots-tag",
        "BadBot: noindex, nofollow, googlebot: nofollow",
    )];
    let two = [
        ("X-Robots-Tag", "BadBot: noindex, nofollow"),
        ("X-Robots-Tag", "googlebot: nofollow"),
    ];
    for headers in [&one[..], &two[..]] {
        let bad = robots(headers, None, "badbot");
        assert!(!bad.index && !bad.follow, "{headers:?}");
        let google = robots(headers, None, "googlebot");
        assert!(google.index && !google.follow, "{headers:?}");
    }
}

#[test]
fn the_sum_of_the_negative_rules_in_tags_and_in_headers() {
    // Google's tags.
    let html = "<meta name=\"robots\" content=\"nofollow\">\n<meta name=\"googlebot\" content=\"noindex\">";
    let google = robots(&[], Some(html), "googlebot");
    assert!(!google.index && !google.follow);
    let other = robots(&[], Some(html), "otherbot");
    assert!(other.index && !other.follow);
    // MDN's headers.
    let headers = [
        ("X-Robots-Tag", "nofollow"),
        ("X-Robots-Tag", "googlebot: noindex"),
    ];
    let google = robots(&headers, None, "googlebot");
    assert!(!google.index && !google.follow);
}

#[test]
fn googles_tag_examples() {
    let tag = |content: &str| {
        robots(
            &[],
            Some(&format!("<meta name=\"robots\" content=\"{content}\">")),
            "anybot",
        )
    };
    assert!(!tag("noindex").index);
    let both = tag("noindex, nofollow");
    assert!(!both.index && !both.follow);
    assert!(!tag("max-snippet:0").snippet);
    assert_eq!(tag("max-snippet:20").max_snippet, Some(20));
    assert_eq!(tag("max-snippet:-1").max_snippet, None);
    assert_eq!(
        tag("max-image-preview:standard").max_image_preview,
        Some(ImagePreview::Standard)
    );
    assert_eq!(tag("max-video-preview:-1").max_video_preview, None);
    assert_eq!(
        tag("unavailable_after: 2020-09-21").unavailable_after,
        Some(1_600_646_400)
    );
    let twenty_large = tag("max-snippet:20, max-image-preview:large");
    assert_eq!(twenty_large.max_snippet, Some(20));
    assert_eq!(twenty_large.max_image_preview, Some(ImagePreview::Large));
    // Two tags are one list.
    let html =
        "<meta name=\"robots\" content=\"noindex\">\n<meta name=\"robots\" content=\"nofollow\">";
    let two = robots(&[], Some(html), "anybot");
    assert!(!two.index && !two.follow);
    // A tag for another crawler (Google's AdsBot example) is not this crawler's.
    let ads = "<meta name=\"AdsBot-Google\" content=\"noindex\">";
    assert!(robots(&[], Some(ads), "googlebot").index);
    assert!(!robots(&[], Some(ads), "adsbot-google").index);
}

#[test]
fn header_and_tag_add_up() {
    let read = read(
        &[("X-Robots-Tag", "nosnippet")],
        Some("<meta name=robots content=\"noindex, noai, bogus\">"),
        &["anybot"],
    );
    assert!(!read.robots.index && !read.robots.snippet);
    assert_eq!(read.robots.uninterpreted, ["noai"]);
    let ignored: Vec<_> = read
        .rules
        .iter()
        .filter(|r| r.rule.is_err())
        .map(|r| (r.text.as_str(), r.source.clone()))
        .collect();
    assert_eq!(ignored, [("bogus", RuleSource::Meta { line: 1 })]);
}

#[test]
fn content_usage_and_tdm_of_headers_and_tags() {
    let read = read(
        &[
            ("Content-Usage", "train-ai=n"),
            ("tdm-reservation", "1"),
            ("TDM-Policy", "https://provider.com/policies/policy.json"),
        ],
        Some("<meta name=\"tdm-reservation\" content=\"0\">"),
        &["anybot"],
    );
    assert_eq!(
        read.content_usage,
        HeaderUsage::Stated(vec![content_usage::Stated {
            category: "train-ai".into(),
            preference: Preference::Disallowed,
        }])
    );
    assert_eq!(read.content_usage_headers, [0]);
    assert_eq!(read.tdm_header.reservations, ["1"]);
    assert_eq!(
        read.tdm_header.policies,
        ["https://provider.com/policies/policy.json"]
    );
    assert_eq!(read.tdm_meta.reservations, ["0"]);
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    const RULES: [&str; 14] = [
        "noindex",
        "nofollow",
        "none",
        "nosnippet",
        "indexifembedded",
        "max-snippet:20",
        "max-snippet:-1",
        "max-image-preview:standard",
        "max-video-preview:0",
        "notranslate",
        "noimageindex",
        "unavailable_after: 25 Jun 2010 15:00:00 PST",
        "noai",
        "bogus",
    ];

    fn line() -> impl Strategy<Value = String> {
        (
            prop::option::of(prop::sample::select(vec![
                "googlebot",
                "otherbot",
                "BadBot",
            ])),
            prop::collection::vec(prop::sample::select(RULES.to_vec()), 1..4),
        )
            .prop_map(|(agent, rules)| match agent {
                Some(agent) => format!("{agent}: {}", rules.join(", ")),
                None => rules.join(", "),
            })
    }

    fn flip_case(text: &str, seed: u64) -> String {
        text.chars()
            .enumerate()
            .map(|(i, c)| {
                if (seed >> (i % 64)) & 1 == 1 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect()
    }

    proptest! {
        #[test]
        fn the_order_of_headers_does_not_change_the_rules(
            lines in prop::collection::vec(line(), 1..6),
            shuffle in any::<prop::sample::Index>(),
        ) {
            let headers: Vec<Header<'_>> = lines.iter().map(|l| ("X-Robots-Tag", l.as_str())).collect();
            let mut shuffled = headers.clone();
            shuffled.rotate_left(shuffle.index(headers.len()));
            for agent in ["googlebot", "otherbot", "thirdbot"] {
                prop_assert_eq!(
                    read(&headers, None, &[agent]).robots,
                    read(&shuffled, None, &[agent]).robots
                );
            }
        }

        #[test]
        fn the_case_of_names_agents_and_rules_does_not_change_them(
            lines in prop::collection::vec(line(), 1..6),
            seed in any::<u64>(),
        ) {
            let flipped: Vec<String> = lines.iter().map(|l| flip_case(l, seed)).collect();
            let name = flip_case("x-robots-tag", seed.rotate_left(7));
            let headers: Vec<Header<'_>> = lines.iter().map(|l| ("X-Robots-Tag", l.as_str())).collect();
            let other: Vec<Header<'_>> = flipped.iter().map(|l| (name.as_str(), l.as_str())).collect();
            for agent in ["googlebot", "BADBOT"] {
                prop_assert_eq!(
                    read(&headers, None, &[agent]).robots,
                    read(&other, None, &[agent]).robots
                );
            }
        }

        #[test]
        fn any_header_and_any_document_are_read_without_a_panic(
            value in ".{0,200}",
            html in ".{0,400}",
        ) {
            let _ = read(&[("X-Robots-Tag", &value), ("Content-Usage", &value), ("tdm-reservation", &value)], Some(&html), &["bot"]);
        }
    }
}

#[test]
fn a_past_unavailable_after_is_noindex_and_the_rule_says_so() {
    // Issue 41: after the date the page is not to be shown; it answered `index: true`.
    let headers = [(
        "X-Robots-Tag",
        "unavailable_after: 25 Jun 2010 15:00:00 PST",
    )];
    let before = super::read(&headers, None, &["googlebot"], 1_277_506_799);
    assert!(before.robots.index);
    assert_eq!(before.index_rule, None);
    for at in [1_277_506_800, 1_900_000_000] {
        let after = super::read(&headers, None, &["googlebot"], at);
        assert!(!after.robots.index);
        let rule = after.index_rule.expect("the rule that decided");
        assert_eq!(rule.text, "unavailable_after: 25 Jun 2010 15:00:00 PST");
        assert_eq!(rule.source, RuleSource::Header { index: 0 });
    }
    // A `noindex` decides before a date, whatever their order; the earliest date decides.
    let both = super::read(
        &[(
            "X-Robots-Tag",
            "unavailable_after: 2010-06-01, unavailable_after: 2010-01-01",
        )],
        Some("<meta name=robots content=noindex>"),
        &["googlebot"],
        1_900_000_000,
    );
    assert_eq!(both.index_rule.expect("noindex").text, "noindex");
    let dates = super::read(
        &[(
            "X-Robots-Tag",
            "unavailable_after: 2010-06-01, unavailable_after: 2010-01-01",
        )],
        None,
        &["googlebot"],
        1_900_000_000,
    );
    assert_eq!(
        dates.index_rule.expect("a date").text,
        "unavailable_after: 2010-01-01"
    );
}

#[test]
fn every_rule_counts_and_only_the_listing_is_bounded() {
    // Issue 41: a `noindex` past 4 KiB of a `content`, or in the 257th tag, was lost.
    let long = format!("{}noindex", "max-snippet:9, ".repeat(500));
    let read_long = read(
        &[],
        Some(&format!("<meta name=robots content='{long}'>")),
        &["b"],
    );
    assert!(!read_long.robots.index);
    assert_eq!(read_long.rules_total, 501);
    assert_eq!(read_long.rules.len(), MAX_LISTED_RULES);
    let many =
        "<meta name=robots content=nosnippet>".repeat(300) + "<meta name=robots content=nofollow>";
    let read_many = read(&[], Some(&many), &["b"]);
    assert!(!read_many.robots.follow);
    assert_eq!(read_many.rules_total, 301);
    assert_eq!(read_many.rules.len(), MAX_LISTED_RULES);
}

#[test]
fn rules_without_commas_are_one_unknown_rule_that_looks_like_several() {
    let read = read(
        &[("X-Robots-Tag", "noindex nofollow")],
        Some("<meta name=robots content='max-snippet:5 bogus, noarchive  nosnippet'>"),
        &["b"],
    );
    // Google's reading: one rule it does not know, so nothing restricted.
    assert!(read.robots.index && read.robots.follow && read.robots.snippet);
    let looks: Vec<_> = read.rules.iter().map(|r| r.looks_like.clone()).collect();
    assert_eq!(
        looks,
        [
            Some(vec!["noindex".to_owned(), "nofollow".to_owned()]),
            None,
            Some(vec!["noarchive".to_owned(), "nosnippet".to_owned()]),
        ]
    );
}

#[test]
fn robots_tag_is_read_beside_x_robots_tag_each_rule_with_its_header() {
    // draft-illyes-repext-03 §3.1.1: the union of the rules for the crawler's tokens and `*`.
    let headers = [
        (
            "Robots-Tag",
            "*;nosnippet, ExampleBot;noindex, OtherBot;nofollow",
        ),
        ("X-Robots-Tag", "max-snippet:20"),
        (
            "robots-tag",
            "ExampleBot;max-image-preview=none, Bad Bot;noindex",
        ),
    ];
    let read = read(&headers, None, &["examplebot"]);
    assert!(!read.robots.index && read.robots.follow && !read.robots.snippet);
    assert_eq!(read.robots.max_image_preview, Some(ImagePreview::None));
    let listed: Vec<(&str, Option<&str>, &RuleSource)> = read
        .rules
        .iter()
        .map(|r| (r.text.as_str(), r.agent.as_deref(), &r.source))
        .collect();
    assert_eq!(
        listed,
        [
            ("nosnippet", None, &RuleSource::Header { index: 0 }),
            (
                "noindex",
                Some("ExampleBot"),
                &RuleSource::Header { index: 0 }
            ),
            ("max-snippet:20", None, &RuleSource::Header { index: 1 }),
            (
                "max-image-preview:none",
                Some("examplebot"),
                &RuleSource::Header { index: 2 }
            ),
            ("bad bot;noindex", None, &RuleSource::Header { index: 2 }),
        ]
    );
    // The member robotsd cannot read is listed as such, and restricts nothing it cannot know.
    assert_eq!(read.rules[4].rule, Err(Ignored::Unparseable));
    assert_eq!(read.index_rule.expect("noindex").text, "noindex");
}
