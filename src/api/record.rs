//! The record a page answer gives to travel with the data (issue 41): what the page and its
//! robots.txt said of it when it was fetched, compact enough to store beside every page of a
//! dataset. aipref's vocabulary asks that preferences about training travel with what is trained
//! on the content (draft-ietf-aipref-vocab-08 §3.3); a crawler that keeps this record beside a
//! page can show, later and without robotsd, which file and which line allowed the fetch and
//! what the publisher stated about its use (docs/page.md, "A record to keep with the page").

use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use super::page::{CombinedJson, PageResponse, PageRuleJson};
use super::types::{RuleJson, UsageJson};

/// The record's format and version: a reader keys on it.
pub const RECORD_FORMAT: &str = "robotsd-record/1";

/// A page answer's record, to store beside the page.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({"format": "robotsd-record/1", "url": "https://example.com/articles/1", "at": "2026-11-28T00:00:00Z", "robotsd": "0.1.0", "robots_txt": {"allowed": true, "sha256": "38ee13a89fd0de18fe5f1f192cb4179a600acc093eefb277f5a7f77660033e8f", "rule": {"directive": "allow", "pattern": "/articles/", "line": 3}}, "robots": {"index": true, "follow": true, "snippet": true, "index_rule": null}, "usage": {"vocabulary": "draft-ietf-aipref-vocab-08", "robots_txt": {"content_usage": {"train-ai": {"value": "n", "line": 4}}, "content_signal": null}, "content_usage_header": {"train-ai": "n"}, "combined": {"ai-use": {"value": null, "sources": []}, "search": {"value": null, "sources": []}, "train-ai": {"value": "n", "sources": ["robots_txt", "header"]}}, "tdm": {"reservation": true, "source": "meta", "policy": null}}}))]
pub struct RecordJson {
    /// `robotsd-record/1`.
    pub format: &'static str,
    /// The page's URL, as robots.txt's answer normalised it.
    pub url: String,
    /// When robotsd read the page (RFC 3339, UTC).
    pub at: String,
    /// The robotsd version that read it.
    pub robotsd: &'static str,
    /// What robots.txt said of the URL: the copy's SHA-256 (of the bytes served) and the
    /// deciding rule.
    pub robots_txt: RecordRobotsTxt,
    /// The page's robots rules in force; null when robots.txt disallows the URL (not read).
    pub robots: Option<RecordRobots>,
    /// The AI-use statements, with their sources; null when robots.txt disallows the URL.
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

/// The AI-use statements about the page, with their sources.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RecordUsage {
    /// The revision of aipref's vocabulary followed.
    pub vocabulary: &'static str,
    /// robots.txt's preferences for the URL, each with its line; null when none applies.
    pub robots_txt: Option<UsageJson>,
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
    /// The record of `answer`, read at `at` (RFC 3339).
    pub fn of(answer: &PageResponse, at: String) -> RecordJson {
        let check = &answer.check;
        RecordJson {
            format: RECORD_FORMAT,
            url: check.url.clone(),
            at,
            robotsd: env!("CARGO_PKG_VERSION"),
            robots_txt: RecordRobotsTxt {
                allowed: check.allowed,
                sha256: check.robots.as_ref().and_then(|r| r.sha256.clone()),
                rule: check.rule.clone(),
            },
            robots: answer.robots.as_ref().map(|r| RecordRobots {
                index: r.index,
                follow: r.follow,
                snippet: r.snippet,
                index_rule: r.index_rule.clone(),
            }),
            usage: answer.usage.as_ref().map(|u| RecordUsage {
                vocabulary: u.vocabulary,
                robots_txt: u.robots_txt.clone(),
                content_usage_header: u.content_usage_header.categories.clone(),
                combined: u.combined.clone(),
                tdm: RecordTdm {
                    reservation: u.tdm.reservation,
                    source: u.tdm.source,
                    policy: u.tdm.policy.clone(),
                },
            }),
        }
    }
}
