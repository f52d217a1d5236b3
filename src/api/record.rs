//! The record an answer gives to travel with the data (issue 41): what a page and its
//! robots.txt said of it when it was fetched, compact enough to store beside every page of a
//! dataset. `POST /v1/page` gives it whole; `GET /v1/check` gives robots.txt's part (the page
//! is not read there). aipref's vocabulary asks that preferences about training travel with
//! what is trained on the content (draft-ietf-aipref-vocab-08 §3.3); a crawler that keeps this
//! record beside a page can show, later and without robotsd, which file and which line allowed
//! the fetch and what the publisher stated about its use (docs/page.md, "A record to keep with
//! the page").

use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use super::values::{PreferenceValue, RuleJson, UsageJson};
use crate::checker::Answer;

/// The record's format and version: a reader keys on it.
pub const RECORD_FORMAT: &str = "robotsd-record/1";

/// Where a rule was written: `header` (its position among the request's `headers`, from 0), or
/// `line` (the line of the document its `meta` tag ends on, from 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct PageRuleJson {
    /// The rule as written (`noindex`, `max-snippet:50`, `unavailable_after: 25 Jun 2010 15:00:00 PST`).
    pub rule: String,
    /// The agent it named (`X-Robots-Tag: googlebot: …`, `<meta name="googlebot">`), or null:
    /// every crawler.
    pub agent: Option<String>,
    /// Its header's position, when it was written in a header.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub header: Option<usize>,
    /// Its `meta` tag's line, when it was written in the document.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// `unknown` (not a rule) or `unparseable` (a value robotsd cannot read): ignored, as
    /// Google ignores it. Absent when the rule applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored: Option<&'static str>,
    /// Its words, when it is unknown as a whole but each word separated by spaces is a rule:
    /// `noindex nofollow` written without a comma looks like two rules, and Google reads it as
    /// one it does not know (so it restricts nothing). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub looks_like: Option<Vec<String>>,
}

/// One aipref category, combined by aipref's rule over robots.txt and the header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct CombinedJson {
    /// Any `n`: `n`; else any `y`: `y`; else null (unknown).
    pub value: Option<PreferenceValue>,
    /// The statements that gave it a value: `robots_txt`, `header`.
    pub sources: Vec<&'static str>,
}

/// An answer's record, to store beside the page.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({"format": "robotsd-record/1", "url": "https://example.com/articles/1", "at": "2026-11-28T00:00:00Z", "robotsd": "0.2.0", "vocabulary": "draft-ietf-aipref-vocab-08", "robots_txt": {"allowed": true, "sha256": "38ee13a89fd0de18fe5f1f192cb4179a600acc093eefb277f5a7f77660033e8f", "rule": {"directive": "allow", "pattern": "/articles/", "line": 3}, "usage": {"content_usage": {"train-ai": {"value": "n", "line": 4}}, "content_signal": null}}, "robots": {"index": true, "follow": true, "snippet": true, "index_rule": null}, "usage": {"content_usage_header": {"train-ai": "n"}, "combined": {"ai-use": {"value": null, "sources": []}, "search": {"value": null, "sources": []}, "train-ai": {"value": "n", "sources": ["robots_txt", "header"]}}, "tdm": {"reservation": true, "source": "meta", "policy": null}}}))]
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
    pub content_usage_header: BTreeMap<String, PreferenceValue>,
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

    /// A record of robots.txt's part, the page's (`robots`, `usage`) left null.
    pub(super) fn robots_txt_only(
        url: String,
        at: String,
        robots_txt: RecordRobotsTxt,
    ) -> RecordJson {
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
