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

use super::json::{
    BackoffMembers, SourceMembers, needs_escape, number, optional, serde_json_value, source_fetch,
    source_use, string, total, truncated,
};
use crate::bounds;
use crate::checker::{Answer, FinalUrl, GroupShown, Paced, Source, UsageItem};
use crate::pacing::answer::PaceJson;
use crate::rsl::RslReport;
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
    match &answer.origin {
        // A URL's origin seldom needs an escape (a host may hold a `"`, not a control).
        Some(origin) if !needs_escape(origin.key().as_bytes()) => {
            out.push(b'"');
            out.extend_from_slice(origin.key().as_bytes());
            out.extend_from_slice(b"/robots.txt\"");
        }
        _ => string(out, &answer.robots_url()),
    }
    out.extend_from_slice(br#","agent":{"input":["#);
    let shown = &answer.agents[..answer.agents.len().min(bounds::MAX_ECHOED_AGENTS)];
    let mut cut = echoed(out, shown.iter().map(|a| a.input()));
    out.extend_from_slice(br#"],"tokens":["#);
    cut |= echoed(out, shown.iter().map(|a| a.token()));
    out.push(b']');
    total(out, br#","input_total":"#, shown.len(), answer.agents.len());
    truncated(out, cut || shown.len() < answer.agents.len());
    out.extend_from_slice(br#"},"rule":"#);
    match &answer.rule {
        Some(rule) => {
            let (directive, line) = (rule.directive(), rule.line());
            out.extend_from_slice(match directive {
                Directive::Allow => br#"{"directive":"allow","pattern":"#,
                Directive::Disallow => br#"{"directive":"disallow","pattern":"#,
            });
            let (pattern, cut) = rule.pattern();
            string(out, &pattern);
            out.extend_from_slice(br#","line":"#);
            number(out, line);
            truncated(out, cut);
            out.push(b'}');
        }
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","group":"#);
    match &answer.group {
        Some(group) => write_group(out, &GroupShown::of(group.get())),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","crawl_delay":"#);
    match answer.crawl_delay {
        // Rare, and float formatting is serde_json's to get exactly right.
        Some(delay) => serde_json_value(out, &delay),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","usage":"#);
    usage(out, answer);
    out.extend_from_slice(br#","robots":"#);
    optional(out, answer.source.as_ref(), source);
    write_pace_member(out, &answer.pace);
    out.push(b'}');
}

/// `GroupJson`: the agents shown, their lines, and the totals when cut. One pass over the
/// agents, their lines kept aside: reading the groups' agents is most of the cost.
fn write_group(out: &mut Vec<u8>, group: &GroupShown<'_>) {
    out.extend_from_slice(br#"{"agents":["#);
    let mut lines = [0u32; bounds::MAX_GROUP_AGENTS];
    let (mut shown, mut cut) = (0, false);
    for (value, value_cut, line) in group.agents() {
        if shown > 0 {
            out.push(b',');
        }
        string(out, &value);
        cut |= value_cut;
        lines[shown] = line;
        shown += 1;
    }
    out.extend_from_slice(br#"],"lines":["#);
    for (i, line) in lines[..shown].iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        number(out, *line);
    }
    out.extend_from_slice(if group.global() {
        br#"],"global":true"#
    } else {
        br#"],"global":false"#
    });
    let agents_total = group.agents_total(shown);
    total(out, br#","agents_total":"#, shown, agents_total);
    truncated(out, cut || agents_total > shown);
    out.push(b'}');
}

/// The `pace` member of an answer: absent unless asked for, null for a disallowed URL.
pub fn pace_member(paced: &Paced) -> Option<Option<PaceJson>> {
    match paced {
        Paced::NotAsked => None,
        Paced::Disallowed => Some(None),
        Paced::Slot(pace) => Some(Some((&**pace).into())),
    }
}

/// Appends `,"pace":…` to an answer being written, when the check asked for a slot.
pub fn write_pace_member(out: &mut Vec<u8>, paced: &Paced) {
    match paced {
        Paced::NotAsked => {}
        Paced::Disallowed => out.extend_from_slice(br#","pace":null"#),
        Paced::Slot(pace) => {
            out.extend_from_slice(br#","pace":"#);
            super::pace_json::write_pace(out, pace);
        }
    }
}

/// `UsageJson`: by source, then by category; the items come sorted that way, as a `BTreeMap`
/// orders keys. `rsl` only when there are license reports (`--rsl`).
fn usage(out: &mut Vec<u8>, answer: &Answer) {
    let (items, rsl): (&[UsageItem], &[RslReport]) = (&answer.usage, &answer.rsl);
    // Preferences all cut (labels over their bound) still show, as their totals.
    if items.is_empty() && rsl.is_empty() && answer.usage_cut.is_none() {
        out.extend_from_slice(b"null");
        return;
    }
    let split = items.partition_point(|item| item.source == UsageSource::ContentUsage);
    out.extend_from_slice(br#"{"content_usage":"#);
    preferences(out, &items[..split]);
    out.extend_from_slice(br#","content_signal":"#);
    preferences(out, &items[split..]);
    if !rsl.is_empty() {
        out.extend_from_slice(br#","rsl":"#);
        super::rsl_json::write_rsl(out, rsl);
    }
    total(out, br#","rsl_total":"#, rsl.len(), answer.rsl_total);
    if let Some(cut) = answer.usage_cut {
        total(out, br#","content_usage_total":"#, split, cut.content_usage);
        total(
            out,
            br#","content_signal_total":"#,
            items.len() - split,
            cut.content_signal,
        );
    }
    truncated(
        out,
        answer.usage_cut.is_some() || answer.rsl_total > rsl.len(),
    );
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
    let backoff = source.backoff.as_ref().map(|backoff| BackoffMembers {
        since: backoff.since,
        failures: backoff.failures,
        next_retry: backoff.next_retry,
        until: Some(backoff.until),
        last_error: &backoff.last_error,
    });
    let members = SourceMembers {
        status: source.status,
        fetched_at: source.fetched_at,
        sha256: source.sha256.as_ref(),
        expires_at: source.expires_at,
        bytes: source.bytes,
        final_url: source.final_url.as_ref().map(FinalUrl::as_str),
        challenged: source.final_url.as_ref().and_then(FinalUrl::challenge),
        cache: source.cache,
        backoff,
    };
    // The fetch's members are the same in every answer from the copy: written once, then
    // copied (unless the memo was made for other times, which a copy never gives it).
    let kept = source.memo.as_ref().and_then(|memo| {
        memo.get_or_make((source.fetched_at, source.expires_at), || {
            let mut fetch = Vec::with_capacity(256);
            source_fetch(&mut fetch, &members);
            fetch
        })
    });
    match kept {
        Some(fetch) => out.extend_from_slice(fetch),
        None => source_fetch(out, &members),
    }
    source_use(out, &members);
}

/// A list of the agents asked about, each cut at [`bounds::MAX_AGENT_JSON_BYTES`]; whether any
/// was cut.
fn echoed<'a>(out: &mut Vec<u8>, items: impl Iterator<Item = &'a str>) -> bool {
    let mut cut = false;
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match bounds::cut_json(item, bounds::MAX_AGENT_JSON_BYTES) {
            Some(part) => {
                cut = true;
                string(out, part);
            }
            None => string(out, item),
        }
    }
    cut
}

#[cfg(test)]
#[path = "answer_json_tests.rs"]
mod tests;
