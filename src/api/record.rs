//! The record an answer gives to travel with the data (issue 41): what a page and its
//! robots.txt said of it when it was fetched, compact enough to store beside every page of a
//! dataset. `POST /v1/page` gives it whole; `GET /v1/check` gives robots.txt's part (the page
//! is not read there). aipref's vocabulary asks that preferences about training travel with what is trained
//! on the content (draft-ietf-aipref-vocab-08 §3.3); a crawler that keeps this record beside a
//! page can show, later and without robotsd, which file and which line allowed the fetch and
//! what the publisher stated about its use (docs/page.md, "A record to keep with the page").

use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use super::page::{CombinedJson, PageResponse, PageRuleJson};
use super::types::{RuleJson, UsageJson};
use crate::checker::Answer;

/// The record's format and version: a reader keys on it.
pub const RECORD_FORMAT: &str = "robotsd-record/1";

/// An answer's record, to store beside the page.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({"format": "robotsd-record/1", "url": "https://example.com/articles/1", "at": "2026-11-28T00:00:00Z", "robotsd": "0.1.0", "vocabulary": "draft-ietf-aipref-vocab-08", "robots_txt": {"allowed": true, "sha256": "38ee13a89fd0de18fe5f1f192cb4179a600acc093eefb277f5a7f77660033e8f", "rule": {"directive": "allow", "pattern": "/articles/", "line": 3}, "usage": {"content_usage": {"train-ai": {"value": "n", "line": 4}}, "content_signal": null}}, "robots": {"index": true, "follow": true, "snippet": true, "index_rule": null}, "usage": {"content_usage_header": {"train-ai": "n"}, "combined": {"ai-use": {"value": null, "sources": []}, "search": {"value": null, "sources": []}, "train-ai": {"value": "n", "sources": ["robots_txt", "header"]}}, "tdm": {"reservation": true, "source": "meta", "policy": null}}}))]
pub struct RecordJson {
    /// `robotsd-record/1`.
    pub format: &'static str,
    /// The page's URL, as robots.txt's answer normalised it.
    pub url: String,
    /// When robotsd read the page (RFC 3339, UTC).
    pub at: String,
    /// The robotsd version that read it.
    pub robotsd: &'static str,
    /// The revision of aipref's vocabulary the usage categories follow.
    pub vocabulary: &'static str,
    /// What robots.txt said of the URL: the copy's SHA-256 (of the bytes served), the deciding
    /// rule and its preferences for the URL.
    pub robots_txt: RecordRobotsTxt,
    /// The page's robots rules in force; null when the page was not read (a check, or a URL
    /// robots.txt disallows).
    pub robots: Option<RecordRobots>,
    /// The page's AI-use statements and the combined answer, with their sources; null when the
    /// page was not read.
    pub usage: Option<RecordUsage>,
}

/// What robots.txt said of the URL.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RecordRobotsTxt {
    /// Whether it allowed the URL.
    pub allowed: bool,
    /// The SHA-256 of the copy's bytes as served (hex); null when there was no file.
    pub sha256: Option<String>,
    /// The deciding rule (directive, pattern, line); null when none matched.
    pub rule: Option<RuleJson>,
    /// Its preferences for the URL (`Content-Usage`, `Content-Signal`, RSL licenses), as the
    /// check's `usage`; null when none applies, and always for a URL it disallows.
    pub usage: Option<UsageJson>,
}

/// The page's robots rules in force.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RecordRobots {
    /// The page may be indexed.
    pub index: bool,
    /// Its links may be followed.
    pub follow: bool,
    /// A snippet may be shown.
    pub snippet: bool,
    /// The rule that made `index` false, with where it was written.
    pub index_rule: Option<PageRuleJson>,
}

/// The page's AI-use statements, with their sources.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RecordUsage {
    /// The page's `Content-Usage` header: its categories with a `y` or `n`.
    pub content_usage_header: BTreeMap<String, super::types::PreferenceValue>,
    /// aipref's rule over both, per category.
    pub combined: BTreeMap<&'static str, CombinedJson>,
    /// TDMRep's reservation, where it came from, and the policy in force.
    pub tdm: RecordTdm,
}

/// TDMRep, as the record keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RecordTdm {
    /// `true`: reserved; `false`: not reserved; null: unset.
    pub reservation: Option<bool>,
    /// `well_known`, `header` or `meta`.
    pub source: Option<&'static str>,
    /// The policy's URL, with a reservation.
    pub policy: Option<String>,
}

impl RecordJson {
    /// The record of a page answer, read at `at` (RFC 3339).
    pub fn of(answer: &PageResponse, at: String) -> RecordJson {
        let check = &answer.check;
        RecordJson {
            robots: answer.robots.as_ref().map(|r| RecordRobots {
                index: r.index,
                follow: r.follow,
                snippet: r.snippet,
                index_rule: r.index_rule.clone(),
            }),
            usage: answer.usage.as_ref().map(|u| RecordUsage {
                content_usage_header: u.content_usage_header.categories.clone(),
                combined: u.combined.clone(),
                tdm: RecordTdm {
                    reservation: u.tdm.reservation,
                    source: u.tdm.source,
                    policy: u.tdm.policy.clone(),
                },
            }),
            ..RecordJson::robots_txt_only(
                check.url.clone(),
                at,
                RecordRobotsTxt {
                    allowed: check.allowed,
                    sha256: check.robots.as_ref().and_then(|r| r.sha256.clone()),
                    rule: check.rule.clone(),
                    usage: check.usage.clone(),
                },
            )
        }
    }

    /// The record of a check's answer, read at `at` (RFC 3339): robots.txt's part, since the
    /// page itself is not read.
    pub fn of_check(answer: &Answer, at: String) -> RecordJson {
        RecordJson::robots_txt_only(
            answer.url.clone(),
            at,
            RecordRobotsTxt {
                allowed: answer.allowed,
                sha256: answer
                    .source
                    .as_ref()
                    .and_then(|s| s.sha256)
                    .map(|digest| crate::hex::hex(&digest)),
                rule: answer.rule.clone().map(Into::into),
                usage: UsageJson::of(
                    &answer.usage,
                    answer.usage_cut,
                    &answer.rsl,
                    answer.rsl_total,
                ),
            },
        )
    }

    fn robots_txt_only(url: String, at: String, robots_txt: RecordRobotsTxt) -> RecordJson {
        RecordJson {
            format: RECORD_FORMAT,
            url,
            at,
            robotsd: env!("CARGO_PKG_VERSION"),
            vocabulary: robotsd_engine::AIPREF_VOCABULARY,
            robots_txt,
            robots: None,
            usage: None,
        }
    }
}

/// Adds the record of `answer` (read at `at`) to the answer's JSON in `out`, as its last member:
/// the answer's own bytes stay those of the fast writer, and only a check that asks for a
/// record pays for serde.
pub fn append(out: &mut Vec<u8>, answer: &Answer, at: String) {
    let record = RecordJson::of_check(answer, at);
    debug_assert_eq!(out.last(), Some(&b'}'));
    out.pop();
    out.extend_from_slice(b",\"record\":");
    // A record always serialises, and a Vec cannot fail to grow.
    let _ = serde_json::to_writer(&mut *out, &record);
    out.push(b'}');
}
