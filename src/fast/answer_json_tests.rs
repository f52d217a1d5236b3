//! The hand-written check answer against the documented shape, written by serde.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use proptest::prelude::*;

use std::sync::Arc;

use robotsd_engine::{PercentDecoding, RobotsTxt};

use super::*;
use crate::api::types::CheckResponse;
use crate::cache::Lookup;
use crate::checker::{
    AgentToken, BackoffState, GroupInfo, Paced, Reason, RuleInfo, UsageCut, UsageItem,
};
use crate::clock::Timestamp;
use crate::fast::json::needs_escape;
use crate::pace_policy::FleetShare;
use crate::pacing::{IntervalSource, Pace, Scope};

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

/// A license report with every field set, from a document read as the service reads one.
fn rsl_report() -> crate::rsl::RslReport {
    let doc = crate::rsl::RslDocument::parse(
        br#"<rsl xmlns="https://rslstandard.org/rsl">
          <content url="/private/*" server="https://ls.example/" encrypted="true" lastmod="2026-11-01T00:00:00Z">
            <license><permits type="usage">ai-input search</permits><permits type="geo">US</permits>
              <prohibits type="user">commercial</prohibits>
              <payment type="crawl"><amount currency="USD">0.01</amount>
                <standard>https://example.com/s</standard><custom>https://example.com/c</custom></payment>
            </license><license/>
          </content></rsl>"#,
        false,
        &crate::rsl::document::Limits::default(),
    )
    .expect("valid RSL");
    crate::rsl::RslReport {
        license_url: "https://example.com/license.xml".into(),
        line: 2,
        state: crate::rsl::RslState::Covered,
        reason: Some("\"quoted\"".into()),
        covered: Some((std::sync::Arc::new(doc), vec![0])),
        // Cut, so that the optional members are written too.
        contents_total: 3,
        truncated: true,
        source: Some(crate::rsl::RslSource {
            status: Some(200),
            fetched_at: Some(at(1_795_000_000)),
            expires_at: Some(at(1_795_086_400)),
            sha256: Some([0x5a; 32]),
            bytes: Some(400),
            final_url: Some("https://example.com/license.xml".into()),
            cache: Lookup::Coalesced,
            backoff: Some(crate::documents::DocumentBackoff {
                since: at(1_795_000_100),
                failures: 2,
                next_retry: at(1_795_003_700),
                last_error: "timed out".into(),
            }),
        }),
    }
}

/// The rule and groups a check of `path` by `probe` finds in `file`.
fn found(file: &str, path: &str) -> (Option<RuleInfo>, Option<GroupInfo>) {
    let verdict = Arc::new(RobotsTxt::parse(file.as_bytes())).check_shared(
        &["probe"],
        path,
        PercentDecoding::Google,
    );
    (verdict.rule.map(RuleInfo), verdict.groups.map(GroupInfo))
}

/// A file whose group names `probe` among 40 agents, and whose deciding rule is longer than
/// an answer shows.
fn cut_file() -> (String, String) {
    let pattern = format!(
        "/private/{}",
        "x".repeat(crate::bounds::MAX_PATTERN_JSON_BYTES)
    );
    let mut file = String::from("user-agent: googlebot\nuser-agent: probe/1.0 \"other\"\n");
    for i in 0..38 {
        file.push_str(&format!("user-agent: bot{i}\n"));
    }
    file.push_str(&format!("crawl-delay: 2.5\ndisallow: {pattern}\n"));
    (file, pattern)
}

fn final_url(url: &str) -> crate::checker::FinalUrl {
    crate::checker::FinalUrl::of(url.parse().expect("a URL"))
}

fn origin(url: &str) -> crate::origin::Origin {
    crate::origin::parse_target(url)
        .expect("a URL")
        .origin()
        .clone()
}

fn full() -> Answer {
    let (file, pattern) = cut_file();
    let (rule, group) = found(&file, &pattern);
    Answer {
        allowed: false,
        reason: Reason::MatchedRule,
        url: "https://example.com/private/x?q=1".into(),
        origin: Some(origin("https://example.com/private/x")),
        agents: [
            "Mozilla/5.0 (compatible; Googlebot/2.1)".to_owned(),
            "Other".to_owned(),
        ]
        .into_iter()
        // Past the echo's bounds: values and tokens too long, and more agents than it shows.
        .chain((0..16).map(|i| format!("Bot{}/1.0 \"{}\"", "x".repeat(i * 55), "é".repeat(i * 5))))
        .map(|input| AgentToken::new(&input).expect("a token"))
        .collect(),
        rule,
        group,
        crawl_delay: Some(2.5),
        crawl_delay_line: Some(5),
        usage: [
            item(UsageSource::ContentUsage, "search", Preference::Allowed, 9),
            item(
                UsageSource::ContentUsage,
                "train-ai",
                Preference::Disallowed,
                8,
            ),
            item(
                UsageSource::ContentSignal,
                "ai-train",
                Preference::Disallowed,
                10,
            ),
        ]
        .into_iter()
        .collect(),
        usage_cut: Some(UsageCut {
            content_usage: 5,
            content_signal: 3,
        }),
        rsl: vec![rsl_report()],
        rsl_total: 7,
        source: Some(Source {
            cache: Lookup::Stale,
            status: Some(200),
            fetched_at: Some(at(1_795_000_000)),
            sha256: Some([0xa5; 32]),
            expires_at: Some(at(1_795_086_400)),
            bytes: Some(512_000),
            final_url: Some(final_url("https://www.example.com/robots.txt").challenged(
                crate::fetch::challenge::known("cloudflare", "cf-mitigated: challenge"),
            )),
            backoff: Some(Box::new(BackoffState {
                since: at(1_795_000_100),
                failures: 3,
                next_retry: at(1_795_003_700),
                until: Some(at(1_795_043_300)),
                last_error: "connection refused".into(),
            })),
            memo: None,
        }),
        pace: Paced::Slot(Box::new(pace())),
    }
}

fn pace() -> Pace {
    Pace {
        lane: "host:example.com".into(),
        reserved: true,
        not_before: Timestamp::from_unix(Duration::from_millis(1_795_000_001_500)),
        wait: Duration::from_millis(1500),
        interval: Duration::from_millis(2500),
        source: IntervalSource::CrawlDelay,
        crawl_delay_line: Some(5),
        capped: false,
        slowdown: 1.0,
        retry_after_until: Some(Timestamp::from_unix(Duration::from_secs(1_795_000_003))),
        scope: Scope::Fleet,
        fleet: FleetShare::new(3, Some(1)).unwrap(),
    }
}

fn item(source: UsageSource, category: &str, preference: Preference, line: u32) -> UsageItem {
    UsageItem {
        source,
        category: category.to_owned().into(),
        preference,
        line,
    }
}

fn source(answer: &mut Answer) -> &mut Source {
    answer.source.as_mut().expect("full() has a source")
}

fn assert_same(answer: &Answer) {
    let mut fast = Vec::new();
    write_answer(&mut fast, answer);
    let documented = serde_json::to_vec(&CheckResponse::from(answer.clone())).unwrap();
    assert_eq!(
        String::from_utf8(fast).unwrap(),
        String::from_utf8(documented).unwrap()
    );
}

#[test]
fn escapes_are_found_anywhere() {
    for len in 0..40 {
        let plain = "a".repeat(len);
        assert!(!needs_escape(plain.as_bytes()));
        for at in 0..len {
            for special in [b'"', b'\\', b'\n', 0x00, 0x1f] {
                let mut bytes = plain.clone().into_bytes();
                bytes[at] = special;
                assert!(needs_escape(&bytes), "{len} {at} {special}");
            }
        }
    }
    assert!(!needs_escape("é\u{7f} ~".as_bytes()));
}

#[test]
fn every_field_set() {
    assert_same(&full());
}

/// `robots_url` from the origin, escaped when its host needs it, and empty without one.
#[test]
fn robots_urls() {
    for url in [
        "http://[::1]:8080/x",
        "https://xn--bcher-kva.example/",
        "http://a\"b.test/",
    ] {
        let mut answer = full();
        answer.origin = Some(origin(url));
        assert_same(&answer);
    }
    let mut answer = full();
    answer.origin = None;
    assert_same(&answer);
    let mut out = Vec::new();
    write_answer(&mut out, &answer);
    assert!(
        String::from_utf8(out)
            .unwrap()
            .contains(r#""robots_url":"""#)
    );
}

/// The agents asked about are echoed within their bounds: the first 8, values and tokens cut.
#[test]
fn the_agents_echoed_are_cut_and_counted() {
    let answer = full();
    let mut out = Vec::new();
    write_answer(&mut out, &answer);
    let written: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let agent = &written["agent"];
    assert_eq!(agent["input"].as_array().unwrap().len(), 8, "{agent}");
    assert_eq!(agent["tokens"].as_array().unwrap().len(), 8, "{agent}");
    assert_eq!(agent["input_total"], 18);
    assert_eq!(agent["truncated"], true);
    for text in agent["input"].as_array().unwrap() {
        let json = serde_json::to_string(text).unwrap();
        assert!(
            json.len() <= crate::bounds::MAX_AGENT_JSON_BYTES + 2,
            "{json}"
        );
    }
    let long = agent["tokens"][7].as_str().unwrap();
    assert!(long.starts_with("Bot") && long.len() == 256, "{long}");
}

/// Preferences that were all left out (labels over their bound) still show as their totals.
#[test]
fn preferences_all_cut_still_show_as_their_totals() {
    let mut answer = full();
    answer.usage.clear();
    answer.rsl.clear();
    answer.rsl_total = 0;
    assert_same(&answer);
    let mut out = Vec::new();
    write_answer(&mut out, &answer);
    let written: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(written["usage"]["content_usage"], serde_json::Value::Null);
    assert_eq!(written["usage"]["content_usage_total"], 5);
    assert_eq!(written["usage"]["truncated"], true);
}

/// An answer that nothing was cut from carries none of the bounds' members, as serde skips them.
#[test]
fn an_answer_within_its_bounds_says_nothing_of_them() {
    let mut answer = full();
    (answer.rule, answer.group) = found(
        "user-agent: googlebot\nuser-agent: probe\ndisallow: /private\n",
        "/private",
    );
    answer.agents.truncate(2);
    answer.usage_cut = None;
    answer.rsl_total = answer.rsl.len();
    for report in &mut answer.rsl {
        report.truncated = false;
        report.contents_total = report.contents().count();
    }
    assert_same(&answer);
    let mut out = Vec::new();
    write_answer(&mut out, &answer);
    let text = String::from_utf8(out).unwrap();
    assert!(
        !text.contains("truncated") && !text.contains("_total"),
        "{text}"
    );
}

/// Every license state, with and without a source, two tied contents, a payment without a type,
/// and license reports without any preference line.
#[test]
fn every_rsl_state() {
    use crate::rsl::RslState::*;
    let mut answer = full();
    answer.usage.clear();
    let covered = rsl_report();
    let mut reports = Vec::new();
    for state in [
        Covered,
        NotCovered,
        FetchFailed,
        Invalid,
        Refused,
        NotFetched,
    ] {
        let mut report = covered.clone();
        report.state = state;
        if state != Covered {
            report.covered = None;
            report.reason = Some(format!("why \u{1} {}", state.as_str()));
        }
        if state == NotFetched {
            report.source = None;
        }
        assert_eq!(serde_json::to_value(state).unwrap(), state.as_str());
        reports.push(report);
    }
    let tied = crate::rsl::RslDocument::parse(
        br#"<rsl xmlns="https://rslstandard.org/rsl"><content url="/a"><license><payment/></license></content>
            <content url="/b"><license/><license><prohibits>all</prohibits></license></content></rsl>"#,
        false,
        &crate::rsl::document::Limits::default(),
    )
    .unwrap();
    let mut two = covered.clone();
    two.covered = Some((std::sync::Arc::new(tied), vec![0, 1]));
    reports.push(two);
    answer.rsl = reports;
    assert_same(&answer);
    answer.rsl.truncate(1);
    assert_same(&answer);
}

/// A field added to the documented answer cannot be left out of the writer silently: the
/// keys written, at every level, are the properties the OpenAPI document gives
/// `CheckResponse`; and a field added to `Answer` breaks this destructuring until the writer
/// and this test are looked at.
#[test]
fn every_documented_field_is_written() {
    let answer = full();
    let Answer {
        allowed: _,
        reason: _,
        url: _,
        origin: _,
        agents: _,
        rule: _,
        group: _,
        crawl_delay: _,
        crawl_delay_line: _,
        usage: _,
        usage_cut: _,
        source: _,
        rsl: _,
        rsl_total: _,
        pace: _,
    } = &answer;
    let mut out = Vec::new();
    write_answer(&mut out, &answer);
    // With `sign=GET` and an allowed URL, the handler adds the signature (this answer is a
    // disallowed one's, so the signature is made as if it were allowed).
    let mut allowed = answer.clone();
    allowed.allowed = true;
    let keys = crate::bot_auth::keys::KeySet::from_json(
        r#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU","status":"active"}]}"#,
    )
    .expect("RFC 9421's test key");
    let signing = crate::bot_auth::signing::Signing::new(
        std::sync::Arc::new(keys),
        None,
        "https://bot.example/",
        std::time::Duration::from_secs(60),
        std::sync::Arc::new(crate::clock::TokioClock::new()),
    )
    .expect("a signer");
    let metrics = crate::metrics::Metrics::new();
    crate::api::sign::append(
        &mut out,
        &signing,
        &metrics,
        &allowed,
        "GET",
        "https://a.test/x",
    )
    .expect("signed");
    // With `record=true`, the handler adds the record after the answer.
    crate::api::record::append(&mut out, &answer, "2026-11-28T00:00:00Z".into());
    let written: serde_json::Value = serde_json::from_slice(&out).expect("JSON");
    let doc = serde_json::to_value(crate::api::openapi()).expect("OpenAPI as JSON");
    let schema = &doc["components"]["schemas"]["CheckResponse"];
    assert_documented_keys(&doc, schema, &written, "CheckResponse");
}

/// Follows `$ref`s and the `oneOf` of optional fields to the object schema, if any.
fn object_schema<'a>(
    doc: &'a serde_json::Value,
    schema: &'a serde_json::Value,
) -> Option<&'a serde_json::Value> {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.rsplit('/').next().expect("a name");
        return object_schema(doc, &doc["components"]["schemas"][name]);
    }
    if schema.get("properties").is_some() {
        return Some(schema);
    }
    ["oneOf", "anyOf", "allOf"]
        .iter()
        .filter_map(|k| schema[*k].as_array())
        .flatten()
        .find_map(|member| object_schema(doc, member))
}

fn assert_documented_keys(
    doc: &serde_json::Value,
    schema: &serde_json::Value,
    written: &serde_json::Value,
    at: &str,
) {
    // A map (`additionalProperties`): every value follows the one schema.
    if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        for (key, value) in written.as_object().expect("a map") {
            if value.is_object() {
                assert_documented_keys(doc, values, value, &format!("{at}.{key}"));
            }
        }
        return;
    }
    let schema = object_schema(doc, schema).unwrap_or_else(|| panic!("{at}: no schema"));
    let properties = schema["properties"].as_object().expect("properties");
    let object = written
        .as_object()
        .unwrap_or_else(|| panic!("{at}: not an object"));
    let documented: Vec<&String> = properties.keys().collect();
    let keys: Vec<&String> = object.keys().collect();
    assert_eq!(
        keys.len(),
        documented.len(),
        "{at}: {keys:?} vs {documented:?}"
    );
    for (key, value) in object {
        let property = properties
            .get(key)
            .unwrap_or_else(|| panic!("{at}.{key} is written but not documented"));
        if value.is_object() {
            assert_documented_keys(doc, property, value, &format!("{at}.{key}"));
        }
    }
}

#[test]
fn every_optional_field_null() {
    let mut answer = full();
    answer.allowed = true;
    answer.reason = Reason::NoRobotsTxt;
    answer.rule = None;
    answer.group = None;
    answer.crawl_delay = None;
    answer.usage = Vec::new();
    answer.source = Some(Source {
        cache: Lookup::Miss,
        status: None,
        fetched_at: None,
        sha256: None,
        expires_at: None,
        bytes: None,
        final_url: None,
        backoff: None,
        memo: None,
    });
    assert_same(&answer);
    // A robots.txt given with the request: nothing was fetched.
    answer.source = None;
    assert_same(&answer);
}

#[test]
fn a_copys_memo_writes_the_same_bytes_made_and_reused_and_is_passed_over_for_other_times() {
    let mut answer = full();
    source(&mut answer).backoff = None;
    let memo = std::sync::Arc::new(crate::cache::CopyMemo::default());
    source(&mut answer).memo = Some(std::sync::Arc::clone(&memo));
    // Made by the first answer, copied into the second: the same bytes as serde's each time.
    assert_same(&answer);
    assert_same(&answer);
    let mut written = Vec::new();
    write_answer(&mut written, &answer);
    // Kept for the times it was made for: an answer from renewed times writes its own.
    source(&mut answer).expires_at = Some(at(1_795_172_800));
    source(&mut answer).final_url = Some(final_url("https://example.com/elsewhere.txt"));
    assert_same(&answer);
    let mut renewed = Vec::new();
    write_answer(&mut renewed, &answer);
    assert_ne!(written, renewed);
    // The memo holds the first answer's members, as written for it.
    let kept = memo
        .get_or_make((Some(at(1_795_000_000)), Some(at(1_795_086_400))), || {
            unreachable!("made by the first answer")
        })
        .expect("kept for the first answer's times");
    let text = std::str::from_utf8(kept).expect("JSON text");
    assert!(text.starts_with(r#"{"status":200,"fetched_at":"#), "{text}");
    assert!(
        text.ends_with(
            r#""final_url":"https://www.example.com/robots.txt","challenged":{"vendor":"cloudflare","marker":"cf-mitigated: challenge"}"#
        ),
        "{text}"
    );
}

#[test]
fn a_copys_memo_never_holds_more_than_its_charged_bound() {
    let mut answer = full();
    let url = "https://www.example.com/robots.txt";
    // The longest member a challenge writes.
    let longest_challenge = crate::fetch::challenge::KNOWN
        .into_iter()
        .max_by_key(|c| c.vendor.len() + c.marker.len())
        .expect("known challenges");
    *source(&mut answer) = Source {
        cache: Lookup::Hit,
        status: Some(599),
        fetched_at: Some(at(253_402_300_799)),
        sha256: Some([0xff; 32]),
        expires_at: Some(at(253_402_300_799)),
        bytes: Some(usize::MAX),
        final_url: Some(final_url(url).challenged(Some(longest_challenge))),
        backoff: None,
        memo: Some(std::sync::Arc::default()),
    };
    let mut out = Vec::new();
    write_answer(&mut out, &answer);
    let memo = source(&mut answer).memo.clone().expect("a memo");
    let kept = memo
        .get_or_make(
            (Some(at(253_402_300_799)), Some(at(253_402_300_799))),
            || unreachable!("made by the answer"),
        )
        .expect("kept");
    assert_eq!(
        kept.len(),
        crate::cache::CopyMemo::bound(url.len(), Some(longest_challenge))
    );
}

#[test]
fn every_variant() {
    for (i, reason) in Reason::ALL.into_iter().enumerate() {
        let mut answer = full();
        answer.reason = reason;
        answer.allowed = i % 2 == 0;
        source(&mut answer).cache = [
            Lookup::Hit,
            Lookup::Miss,
            Lookup::Stale,
            Lookup::Coalesced,
            Lookup::Shared,
        ][i % 5];
        // Allow or disallow; the `*` group or one naming the agent among one to three.
        let directive = if i % 2 == 0 { "allow" } else { "disallow" };
        let agents = ["*", "probe", "probe\nuser-agent: a\nuser-agent: b"][i % 3];
        (answer.rule, answer.group) =
            found(&format!("user-agent: {agents}\n{directive}: /x\n"), "/x");
        answer.crawl_delay = [None, Some(0.0), Some(1e-7), Some(86400.0)][i % 4];
        answer.agents.truncate(i % 3);
        // Only one source, either; then the other; then none.
        let keep = |source| {
            answer
                .usage
                .iter()
                .filter(|u| u.source == source)
                .cloned()
                .collect()
        };
        answer.usage = match i % 3 {
            0 => keep(UsageSource::ContentUsage),
            1 => keep(UsageSource::ContentSignal),
            _ => answer.usage.iter().take(1).cloned().collect(),
        };
        let mut pace = pace();
        pace.reserved = i % 2 == 1;
        pace.source = [
            IntervalSource::CrawlDelay,
            IntervalSource::Default,
            IntervalSource::Pushback,
        ][i % 3];
        pace.scope = if i % 2 == 0 {
            Scope::Local
        } else {
            Scope::Fleet
        };
        pace.slowdown = [1.0, 2.5, 64.0][i % 3];
        pace.retry_after_until = None;
        answer.pace = [
            Paced::NotAsked,
            Paced::Disallowed,
            Paced::Slot(Box::new(pace)),
        ][i % 3]
            .clone();
        assert_same(&answer);
    }
}

proptest! {
    #[test]
    fn any_strings_and_numbers(
        texts in proptest::collection::vec(any::<String>(), 6),
        line in any::<u32>(),
        status in any::<u16>(),
        bytes in any::<usize>(),
        secs in 0u64..253_402_300_800,
        delay in any::<f64>(),
        usage in proptest::collection::vec((any::<bool>(), any::<String>(), any::<bool>(), any::<u32>()), 0..6),
        digest in any::<[u8; 32]>(),
    ) {
        let mut answer = full();
        answer.url = texts[0].clone();
        // Any text after a product token, as a value; any a file's line can hold, as a token.
        if let Ok(agent) = AgentToken::new(&format!("Bot {}", texts[1])) {
            answer.agents[0] = agent;
        }
        let line_of = |text: &str| text.replace(['\n', '\r', '#'], "").trim().to_owned();
        if let Ok(agent) = AgentToken::new(&format!("Bot{}", line_of(&texts[2]))) {
            answer.agents[1] = agent;
        }
        // The pattern and a group's agent from a file, the rule on its line.
        let pattern = format!("/{}", line_of(&texts[3]).trim_end_matches('$'));
        let file = format!(
            "{}user-agent: probe/{}\ndisallow: {pattern}\n",
            "\n".repeat((line % 1000) as usize),
            line_of(&texts[4])
        );
        // The path the rule matches: its pattern as the engine compares it.
        let robots = RobotsTxt::parse(file.as_bytes());
        let path = robots
            .groups()
            .find_map(|group| group.rules().next())
            .map(|rule| rule.normalized_pattern().to_owned());
        (answer.rule, answer.group) = found(&file, &path.expect("a rule"));
        prop_assert!(answer.rule.is_some(), "{file:?}");
        answer.crawl_delay = Some(delay);
        let source = source(&mut answer);
        source.status = Some(status);
        source.bytes = Some(bytes);
        source.fetched_at = Some(at(secs));
        source.backoff.as_mut().unwrap().last_error = texts[5].clone();
        // Both forms: the end of a window, and none after the last one.
        source.backoff.as_mut().unwrap().until = (secs % 2 == 0).then(|| at(secs));
        source.sha256 = Some(digest);
        // As the engine gives them: sorted by source, then category, each category once.
        let mut usage: Vec<UsageItem> = usage
            .into_iter()
            .map(|(signal, category, allowed, line)| UsageItem {
                source: if signal { UsageSource::ContentSignal } else { UsageSource::ContentUsage },
                category: category.into(),
                preference: if allowed { Preference::Allowed } else { Preference::Disallowed },
                line,
            })
            .collect();
        usage.sort_by(|a, b| (a.source, &a.category).cmp(&(b.source, &b.category)));
        usage.dedup_by(|a, b| (a.source, &a.category) == (b.source, &b.category));
        answer.usage = usage.into_iter().collect();
        assert_same(&answer);
    }
}

proptest! {
    /// The hand-written `pace` member against serde's `PaceJson`, over any reservation.
    #[test]
    fn any_pace(
        lane in any::<String>(),
        not_before_ms in 0u64..253_402_300_800_000,
        wait_ms in any::<u32>(),
        interval_ms in any::<u32>(),
        crawl_delay_line in any::<Option<u32>>(),
        (reserved, capped, local) in any::<(bool, bool, bool)>(),
        slowdown in prop_oneof![Just(1.0), Just(2.0), any::<f64>()],
        retry_after_ms in proptest::option::of(0u64..253_402_300_800_000),
        (size, index) in (1u32..64, any::<Option<u32>>()),
        source in 0usize..3,
    ) {
        let mut answer = full();
        answer.pace = Paced::Slot(Box::new(Pace {
            lane,
            reserved,
            not_before: Timestamp::from_unix(Duration::from_millis(not_before_ms)),
            wait: Duration::from_millis(u64::from(wait_ms)),
            interval: Duration::from_millis(u64::from(interval_ms)),
            source: [IntervalSource::CrawlDelay, IntervalSource::Default, IntervalSource::Pushback][source],
            crawl_delay_line,
            capped,
            slowdown,
            retry_after_until: retry_after_ms.map(|ms| Timestamp::from_unix(Duration::from_millis(ms))),
            scope: if local { Scope::Local } else { Scope::Fleet },
            fleet: FleetShare::new(size, index.map(|i| i % size)).unwrap(),
        }));
        assert_same(&answer);
    }
}
