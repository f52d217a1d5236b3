//! The check answer written as JSON by hand: the hot path of the service.
//!
//! `serde_json` escapes every key and goes through its `Serializer` machinery field by field,
//! and the answer first had to be converted into the documented [`CheckResponse`] shape, with its
//! own strings. Writing the known shape straight from the library's [`Answer`] takes a fraction
//! of the instructions (BENCHMARKS.md). The output is byte-for-byte what
//! `serde_json::to_vec(&CheckResponse::from(answer))` produces, which the tests check over
//! every variant and over arbitrary strings, so [`CheckResponse`] stays the one documented shape.
//!
//! [`CheckResponse`]: crate::api::types::CheckResponse

use std::time::SystemTime;

use crate::checker::{Answer, Source, UsageItem};
use robotsd_engine::{Directive, Preference, UsageSource};

/// Appends `answer` as the JSON of a `CheckResponse` to `out`.
pub fn write_answer(out: &mut Vec<u8>, answer: &Answer) {
    out.extend_from_slice(if answer.allowed {
        br#"{"allowed":true,"verdict":"allow","reason":""#
    } else {
        br#"{"allowed":false,"verdict":"disallow","reason":""#
    });
    out.extend_from_slice(answer.reason.as_str().as_bytes());
    out.extend_from_slice(br#"","url":"#);
    string(out, &answer.url);
    out.extend_from_slice(br#","robots_url":"#);
    string(out, &answer.robots_url);
    out.extend_from_slice(br#","agent":{"input":["#);
    list(out, answer.agents.iter().map(|a| a.input.as_str()));
    out.extend_from_slice(br#"],"tokens":["#);
    list(out, answer.agents.iter().map(|a| a.token.as_str()));
    out.extend_from_slice(br#"]},"rule":"#);
    match &answer.rule {
        Some(rule) => {
            out.extend_from_slice(match rule.directive {
                Directive::Allow => br#"{"directive":"allow","pattern":"#,
                Directive::Disallow => br#"{"directive":"disallow","pattern":"#,
            });
            string(out, &rule.pattern);
            out.extend_from_slice(br#","line":"#);
            number(out, rule.line);
            out.push(b'}');
        }
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","group":"#);
    match &answer.group {
        Some(group) => {
            out.extend_from_slice(br#"{"agents":["#);
            list(out, group.agents.iter().map(String::as_str));
            out.extend_from_slice(br#"],"lines":["#);
            for (i, line) in group.lines.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                number(out, *line);
            }
            out.extend_from_slice(if group.global {
                br#"],"global":true}"#
            } else {
                br#"],"global":false}"#
            });
        }
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","crawl_delay":"#);
    match answer.crawl_delay {
        // Rare, and float formatting is serde_json's to get exactly right.
        Some(delay) => serde_json_value(out, &delay),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","usage":"#);
    usage(out, &answer.usage);
    out.extend_from_slice(br#","robots":"#);
    optional(out, answer.source.as_ref(), source);
    crate::api::write_pace_member(out, &answer.pace);
    out.push(b'}');
}

/// `UsageJson`: by source, then by category; the items come sorted that way, as a `BTreeMap`
/// orders keys.
fn usage(out: &mut Vec<u8>, items: &[UsageItem]) {
    if items.is_empty() {
        out.extend_from_slice(b"null");
        return;
    }
    let split = items.partition_point(|item| item.source == UsageSource::ContentUsage);
    out.extend_from_slice(br#"{"content_usage":"#);
    preferences(out, &items[..split]);
    out.extend_from_slice(br#","content_signal":"#);
    preferences(out, &items[split..]);
    out.push(b'}');
}

fn preferences(out: &mut Vec<u8>, items: &[UsageItem]) {
    if items.is_empty() {
        out.extend_from_slice(b"null");
        return;
    }
    for (i, item) in items.iter().enumerate() {
        out.push(if i == 0 { b'{' } else { b',' });
        match &item.category {
            // The vocabulary's own labels (`train-ai`, …) need no escape.
            std::borrow::Cow::Borrowed(label) => {
                out.push(b'"');
                out.extend_from_slice(label.as_bytes());
                out.push(b'"');
            }
            std::borrow::Cow::Owned(label) => string(out, label),
        }
        out.extend_from_slice(match item.preference {
            Preference::Allowed => br#":{"value":"y","line":"#,
            Preference::Disallowed => br#":{"value":"n","line":"#,
        });
        number(out, item.line);
        out.push(b'}');
    }
    out.push(b'}');
}

fn source(out: &mut Vec<u8>, source: &Source) {
    out.extend_from_slice(br#"{"status":"#);
    optional(out, source.status, number);
    out.extend_from_slice(br#","fetched_at":"#);
    optional(out, source.fetched_at, timestamp);
    out.extend_from_slice(br#","sha256":"#);
    optional(out, source.sha256.as_ref(), crate::hex::push_quoted_digest);
    out.extend_from_slice(br#","expires_at":"#);
    optional(out, source.expires_at, timestamp);
    out.extend_from_slice(br#","bytes":"#);
    optional(out, source.bytes, number);
    out.extend_from_slice(br#","final_url":"#);
    optional(out, source.final_url.as_deref(), string);
    out.extend_from_slice(br#","cache":""#);
    out.extend_from_slice(source.cache.as_str().as_bytes());
    out.extend_from_slice(br#"","backoff":"#);
    match &source.backoff {
        Some(backoff) => {
            out.extend_from_slice(br#"{"since":"#);
            timestamp(out, backoff.since);
            out.extend_from_slice(br#","failures":"#);
            number(out, backoff.failures);
            out.extend_from_slice(br#","next_retry":"#);
            timestamp(out, backoff.next_retry);
            out.extend_from_slice(br#","until":"#);
            optional(out, backoff.until, timestamp);
            out.extend_from_slice(br#","last_error":"#);
            string(out, &backoff.last_error);
            out.push(b'}');
        }
        None => out.extend_from_slice(b"null"),
    }
    out.push(b'}');
}

fn optional<T>(out: &mut Vec<u8>, value: Option<T>, write: impl FnOnce(&mut Vec<u8>, T)) {
    match value {
        Some(value) => write(out, value),
        None => out.extend_from_slice(b"null"),
    }
}

fn list<'a>(out: &mut Vec<u8>, items: impl Iterator<Item = &'a str>) {
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        string(out, item);
    }
}

/// A JSON string. Most values (URLs, tokens, patterns) need no escape and are copied whole; the
/// others are left to serde_json, so escapes are spelt exactly as everywhere else in the API.
fn string(out: &mut Vec<u8>, value: &str) {
    if needs_escape(value.as_bytes()) {
        serde_json_value(out, value);
    } else {
        out.push(b'"');
        out.extend_from_slice(value.as_bytes());
        out.push(b'"');
    }
}

/// Whether any byte is a control character, `"` or `\\`. Written as a fold over fixed-size
/// chunks, without an early exit, so that it compiles to vector compares: a byte-at-a-time
/// `any` took more instructions than the rest of the answer.
fn needs_escape(bytes: &[u8]) -> bool {
    let special = |b: u8| (b < 0x20) | (b == b'"') | (b == b'\\');
    let mut chunks = bytes.chunks_exact(16);
    let mut found = false;
    for chunk in &mut chunks {
        found |= chunk.iter().fold(false, |acc, &b| acc | special(b));
        if found {
            return true;
        }
    }
    chunks.remainder().iter().any(|&b| special(b))
}

fn number(out: &mut Vec<u8>, value: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
}

/// A quoted RFC 3339 timestamp, as `types::rfc3339` writes it.
fn timestamp(out: &mut Vec<u8>, at: SystemTime) {
    out.push(b'"');
    super::timestamp::write_rfc3339(out, at);
    out.push(b'"');
}

fn serde_json_value<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Strings and finite or non-finite floats always serialise; a Vec cannot fail to grow.
    let _ = serde_json::to_writer(out, value);
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use proptest::prelude::*;

    use super::*;
    use crate::api::types::CheckResponse;
    use crate::cache::Lookup;
    use crate::checker::{AgentToken, BackoffState, GroupInfo, Paced, Reason, RuleInfo, UsageItem};
    use crate::clock::Timestamp;
    use crate::pacing::{IntervalSource, Pace, Scope};

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn full() -> Answer {
        Answer {
            allowed: false,
            reason: Reason::MatchedRule,
            url: "https://example.com/private/x?q=1".into(),
            robots_url: "https://example.com/robots.txt".into(),
            agents: vec![
                AgentToken {
                    input: "Mozilla/5.0 (compatible; Googlebot/2.1)".into(),
                    token: "Googlebot".into(),
                },
                AgentToken {
                    input: "Other".into(),
                    token: "Other".into(),
                },
            ],
            rule: Some(RuleInfo {
                directive: Directive::Disallow,
                pattern: "/private".into(),
                line: 7,
            }),
            group: Some(GroupInfo {
                agents: vec!["googlebot".into(), "other".into()],
                lines: vec![3, 4],
                global: false,
            }),
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
            source: Some(Source {
                cache: Lookup::Stale,
                status: Some(200),
                fetched_at: Some(at(1_795_000_000)),
                sha256: Some([0xa5; 32]),
                expires_at: Some(at(1_795_086_400)),
                bytes: Some(512_000),
                final_url: Some("https://www.example.com/robots.txt".into()),
                backoff: Some(BackoffState {
                    since: at(1_795_000_100),
                    failures: 3,
                    next_retry: at(1_795_003_700),
                    until: Some(at(1_795_043_300)),
                    last_error: "connection refused".into(),
                }),
            }),
            pace: Paced::Slot(pace()),
        }
    }

    fn pace() -> Pace {
        Pace {
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
            robots_url: _,
            agents: _,
            rule: _,
            group: _,
            crawl_delay: _,
            crawl_delay_line: _,
            usage: _,
            source: _,
            pace: _,
        } = &answer;
        let mut out = Vec::new();
        write_answer(&mut out, &answer);
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
        });
        assert_same(&answer);
        // A robots.txt given with the request: nothing was fetched.
        answer.source = None;
        assert_same(&answer);
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
            answer.rule.as_mut().unwrap().directive = if i % 2 == 0 {
                Directive::Allow
            } else {
                Directive::Disallow
            };
            answer.group.as_mut().unwrap().global = i % 3 == 0;
            answer.crawl_delay = [None, Some(0.0), Some(1e-7), Some(86400.0)][i % 4];
            answer.agents.truncate(i % 3);
            answer.group.as_mut().unwrap().lines.truncate(i % 3);
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
            answer.pace = [Paced::NotAsked, Paced::Disallowed, Paced::Slot(pace)][i % 3].clone();
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
            answer.agents[0].input = texts[1].clone();
            answer.agents[1].token = texts[2].clone();
            let rule = answer.rule.as_mut().unwrap();
            rule.pattern = texts[3].clone();
            rule.line = line;
            answer.group.as_mut().unwrap().agents[0] = texts[4].clone();
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
}
