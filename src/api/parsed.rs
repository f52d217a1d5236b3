//! The parsed robots.txt as `/v1/robots` and `/v1/evaluate` show it: its groups, lines and
//! findings, one JSON shape for both (documented for OpenAPI).

use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use super::values::{PreferenceValue, RuleJson};
use robotsd_engine::{self as robots, DiagnosticKind};

/// A `user-agent` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct AgentLineJson {
    /// The value as written.
    pub value: String,
    /// Its line.
    pub line: u32,
}

/// A group of robots.txt.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct GroupDetailJson {
    /// Its `user-agent` lines.
    pub agents: Vec<AgentLineJson>,
    /// Its `allow`/`disallow` lines, in file order.
    pub rules: Vec<RuleJson>,
    /// Its first valid `crawl-delay`, in seconds.
    pub crawl_delay: Option<f64>,
    /// Its `content-usage` and `content-signal` lines (AI usage preferences), in file order.
    pub usage: Vec<UsageLineJson>,
}

/// A `content-usage` or `content-signal` line of a group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"source": "content-usage", "line": 5, "path": "/ai-ok/", "statement": "train-ai=y", "preferences": {"train-ai": "y"}}))]
pub struct UsageLineJson {
    /// `content-usage` or `content-signal`.
    pub source: UsageSourceName,
    /// Its line.
    pub line: u32,
    /// The path it applies to, as written, or null for the whole site.
    pub path: Option<String>,
    /// The statement of preference as written.
    pub statement: String,
    /// The explicit preferences it states, by label (a repeated label once, with its last
    /// value); empty when the statement does not parse (see the line's diagnostics).
    pub preferences: BTreeMap<String, PreferenceValue>,
}

/// Which convention a preference line follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum UsageSourceName {
    /// `Content-Usage:` (IETF aipref).
    ContentUsage,
    /// `Content-Signal:` (Cloudflare's Content Signals Policy).
    ContentSignal,
}

impl From<robots::UsageSource> for UsageSourceName {
    fn from(s: robots::UsageSource) -> Self {
        match s {
            robots::UsageSource::ContentUsage => UsageSourceName::ContentUsage,
            robots::UsageSource::ContentSignal => UsageSourceName::ContentSignal,
        }
    }
}

/// A `sitemap:` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SitemapJson {
    /// The URL as written.
    pub url: String,
    /// Its line.
    pub line: u32,
}

/// A `License:` line (RSL 1.0): the URL of a license document that states on what terms the
/// site's content may be used. Reported only: it changes no verdict and no group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct LicenseJson {
    /// The license document's URL as written.
    pub url: String,
    /// Its line.
    pub line: u32,
}

/// What was found on a line of robots.txt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct DiagnosticJson {
    /// The line.
    pub line: u32,
    /// One of `accepted_typo`, `missing_colon`, `line_too_long`, `unknown_key`,
    /// `unsupported_key`, `reported_only` (a key Google's rules do not use but robotsd reports:
    /// `crawl-delay`, whose value is the group's `crawl_delay`, `content-usage` and
    /// `content-signal`, the AI usage preferences, and `license`, listed in `licenses`),
    /// `not_a_directive`, `rule_outside_group`, `preference_syntax` (a preference statement
    /// that is not an RFC 9651 dictionary: it states nothing), `invalid_preference_value` (a
    /// label whose value is not `y`/`n`, or `yes`/`no` for `content-signal`; `key` is the
    /// label), `unknown_preference_label` (a label outside the vocabulary implemented, reported
    /// as written; `key` is the label).
    pub kind: String,
    /// The key concerned, if any (cut to 64 bytes).
    pub key: Option<String>,
}

fn diagnostic_kind(kind: DiagnosticKind, key: Option<&str>) -> String {
    // Google ignores crawl-delay, the usage preferences and RSL's `License:`, so the engine
    // calls them unsupported; robotsd reports them (a crawler may honour them; the license
    // lines are in `licenses`, and `--rsl` reads their documents), which `unsupported_key`
    // would seem to deny.
    const REPORTED: [&str; 4] = ["crawl-delay", "content-usage", "content-signal", "license"];
    if kind == DiagnosticKind::UnsupportedKey
        && key.is_some_and(|key| REPORTED.iter().any(|r| key.eq_ignore_ascii_case(r)))
    {
        return "reported_only".to_string();
    }
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// A parsed robots.txt, as the tester and `/v1/robots` show it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ParsedJson {
    /// The groups, in file order.
    pub groups: Vec<GroupDetailJson>,
    /// The sitemaps.
    pub sitemaps: Vec<SitemapJson>,
    /// The `License:` lines (RSL 1.0), wherever they are in the file.
    pub licenses: Vec<LicenseJson>,
    /// Per-line findings (at most 1,024 kept).
    pub diagnostics: Vec<DiagnosticJson>,
    /// Number of lines.
    pub lines: u32,
}

impl From<&robots::RobotsTxt> for ParsedJson {
    fn from(r: &robots::RobotsTxt) -> Self {
        ParsedJson {
            groups: r
                .groups()
                .map(|g| GroupDetailJson {
                    agents: g
                        .agents()
                        .map(|a| AgentLineJson {
                            value: a.value.into_owned(),
                            line: a.line,
                        })
                        .collect(),
                    rules: g
                        .rules()
                        .map(|rule| RuleJson {
                            directive: rule.directive().into(),
                            pattern: rule.pattern().into_owned(),
                            line: rule.line(),
                            truncated: None,
                        })
                        .collect(),
                    crawl_delay: g.crawl_delay().map(|d| d.seconds),
                    usage: g
                        .usage_lines()
                        .map(|l| UsageLineJson {
                            source: l.source().into(),
                            line: l.line(),
                            path: l.path().map(|p| p.into_owned()),
                            statement: l.statement().into_owned(),
                            preferences: l
                                .preferences()
                                .map(|(label, p)| (label.to_owned(), p.into()))
                                .collect(),
                        })
                        .collect(),
                })
                .collect(),
            sitemaps: r
                .sitemaps()
                .map(|s| SitemapJson {
                    url: s.url.into_owned(),
                    line: s.line,
                })
                .collect(),
            licenses: r
                .licenses()
                .map(|l| LicenseJson {
                    url: l.url.into_owned(),
                    line: l.line,
                })
                .collect(),
            diagnostics: r
                .diagnostics()
                .map(|d| DiagnosticJson {
                    line: d.line,
                    kind: diagnostic_kind(d.kind, d.key.as_deref()),
                    key: d.key.map(|k| k.into_owned()),
                })
                .collect(),
            lines: r.stats().lines,
        }
    }
}
