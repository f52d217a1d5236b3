//! The page answer beside robots.txt's, on robots.txt files given as text.

use robotsd_engine::{PercentDecoding, Preference, RobotsTxt};
use robotsd_page::content_usage::{HeaderUsage, Stated};

use super::*;
use crate::checker::{Checker, tokens};

fn check(robots: &str, url: &str, ua: &str) -> Answer {
    let robots = std::sync::Arc::new(RobotsTxt::parse(robots.as_bytes()));
    Checker::evaluate(
        &robots,
        &tokens(&[ua]).unwrap(),
        url,
        PercentDecoding::Google,
    )
    .unwrap()
}

fn page(headers: &[(&str, &str)], html: Option<&str>) -> PageInput {
    PageInput {
        headers: headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
        document: html.map(str::to_owned),
        ..PageInput::default()
    }
}

#[test]
fn a_page_robots_txt_disallows_is_not_read() {
    let answer = answer(
        &check(
            "User-agent: *\nDisallow: /private\n",
            "https://example.com/private/a",
            "Bot",
        ),
        &page(&[("X-Robots-Tag", "noindex")], None),
        None,
        0,
    );
    assert_eq!(answer.robots, None);
    assert_eq!(answer.usage, None);
}

#[test]
fn the_crawlers_product_token_picks_its_rules() {
    // `ua` is a whole User-Agent header: its product token names the crawler.
    let answer = answer(
        &check(
            "",
            "https://example.com/a",
            "Mozilla/5.0 (compatible; BadBot/2.1)",
        ),
        &page(
            &[(
                "X-Robots-Tag",
                "BadBot: noindex, nofollow, googlebot: nofollow",
            )],
            None,
        ),
        None,
        0,
    );
    let robots = answer.robots.unwrap();
    assert!(!robots.rules.index && !robots.rules.follow);
    assert_eq!(robots.shown.len(), 2);
    assert_eq!(robots.shown[0].agent.as_deref(), Some("BadBot"));
}

#[test]
fn aiprefs_rule_combines_robots_txt_and_the_header() {
    let robots_txt =
        "User-agent: *\nAllow: /\nContent-Usage: train-ai=y\nContent-Usage: /news/ search=y\n";
    let combined = |url: &str, header: Option<&str>| {
        let headers: Vec<(&str, &str)> = header.map(|h| ("Content-Usage", h)).into_iter().collect();
        answer(
            &check(robots_txt, url, "Bot"),
            &page(&headers, None),
            None,
            0,
        )
        .usage
        .unwrap()
        .combined
    };
    // robots.txt allows training, the page's header says no: `n`, from both.
    let both = combined("https://example.com/a", Some("train-ai=n"));
    let labels: Vec<&str> = both.iter().map(|c| c.category).collect();
    assert_eq!(
        labels,
        ["train-ai", "ai-use", "search"],
        "vocab-08's categories"
    );
    assert_eq!(both[0].value, Some(Preference::Disallowed));
    assert_eq!(
        both[0].sources,
        [UsageOrigin::RobotsTxt, UsageOrigin::Header]
    );
    for unstated in &both[1..] {
        assert_eq!(unstated.value, None);
        assert!(unstated.sources.is_empty());
    }
    // Only robots.txt, whose longest matching line states only `search` here (its lines
    // match as allow/disallow do: the longest path's statement applies).
    let alone = combined("https://example.com/news/1", None);
    assert_eq!(alone[0].value, None);
    assert_eq!(alone[2].value, Some(Preference::Allowed));
    assert_eq!(alone[2].sources, [UsageOrigin::RobotsTxt]);
    // A header that does not parse states nothing: robots.txt's value stands.
    let broken = combined("https://example.com/a", Some("Train-AI=n"));
    assert_eq!(broken[0].value, Some(Preference::Allowed));
    assert_eq!(broken[0].sources, [UsageOrigin::RobotsTxt]);
}

#[test]
fn tdmrep_header_then_meta() {
    let answer = answer(
        &check("", "https://example.com/a", "Bot"),
        &page(
            &[
                ("tdm-reservation", "1"),
                ("tdm-policy", "https://provider.com/policies/policy.json"),
            ],
            Some("<meta name=\"tdm-reservation\" content=\"0\">"),
        ),
        None,
        0,
    );
    let tdm = answer.usage.unwrap().tdm;
    assert_eq!(tdm.reservation, Some(false));
    assert_eq!(tdm.reservation_source, Some(TdmSource::Meta));
    // Not processed beside `0`.
    assert_eq!(tdm.policy_in_force(), None);
}

#[test]
fn lists_are_bounded_and_counted() {
    let header = vec!["noindex"; MAX_RULES + 6].join(", ");
    let labels: Vec<String> = (0..40).map(|i| format!("label-{i}=n")).collect();
    let long_label = format!("{}=n", "x".repeat(bounds::MAX_USAGE_LABEL_BYTES + 1));
    let answer = answer(
        &check("", "https://example.com/a", "Bot"),
        &page(
            &[
                ("X-Robots-Tag", &header),
                ("Content-Usage", &labels.join(", ")),
                ("Content-Usage", &long_label),
            ],
            None,
        ),
        None,
        0,
    );
    let robots = answer.robots.unwrap();
    assert_eq!(robots.shown.len(), MAX_RULES);
    assert_eq!(robots.total, Some(MAX_RULES + 6));
    let usage = answer.usage.unwrap();
    let HeaderUsage::Stated(stated) = &usage.header else {
        panic!("{:?}", usage.header)
    };
    assert_eq!(stated.len(), bounds::MAX_USAGE_CATEGORIES);
    assert_eq!(usage.header_total, Some(41));
    assert_eq!(usage.header_lines, [1, 2]);
    assert!(stated.iter().all(|s| s
        == &Stated {
            category: s.category.clone(),
            preference: Preference::Disallowed
        }));
}

#[test]
fn headers_out_of_bounds_are_refused() {
    let many: Vec<(String, String)> = (0..=MAX_HEADERS)
        .map(|i| (format!("x-{i}"), String::new()))
        .collect();
    assert_eq!(
        check_headers(&many),
        Err(PageError::TooManyHeaders(MAX_HEADERS + 1))
    );
    let bad_name = vec![("X Robots".to_owned(), "noindex".to_owned())];
    assert!(matches!(
        check_headers(&bad_name),
        Err(PageError::HeaderName { index: 0, .. })
    ));
    let long = vec![("a".to_owned(), "v".repeat(MAX_HEADER_VALUE_BYTES + 1))];
    assert!(matches!(
        check_headers(&long),
        Err(PageError::HeaderValue { index: 0, .. })
    ));
}

#[test]
fn documents_are_cut_at_the_read_bound() {
    let (text, cut) = document_string(format!("{}é", "a".repeat(MAX_DOCUMENT_BYTES - 1)));
    assert!(cut);
    assert_eq!(text.len(), MAX_DOCUMENT_BYTES - 1);
    let bytes = vec![b'a'; MAX_DOCUMENT_BYTES + 10];
    let (text, cut, encoding) = document_text(&bytes, &[]);
    assert!(cut);
    assert_eq!(text.len(), MAX_DOCUMENT_BYTES);
    assert_eq!(encoding, "UTF-8");
}
