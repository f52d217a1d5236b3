//! The JSON shapes of the API, documented for OpenAPI. They are built from the library's
//! answers here so that the engine and the cache stay free of wire concerns (timestamps as RFC
//! 3339 strings, enums as lower-case names).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::cache::Lookup;
use crate::checker::{Answer, GroupInfo, GroupShown, Reason, Source};
use crate::fast::timestamp::rfc3339;
use robotsd_engine as robots;

pub use super::pace::{
    FeedbackItem, FeedbackRequest, FeedbackResponse, PaceJson, PaceStateJson, ReportRefused,
    ReportTaken,
};
pub use super::parsed::{
    AgentLineJson, DiagnosticJson, GroupDetailJson, LicenseJson, ParsedJson, SitemapJson,
    UsageLineJson, UsageSourceName,
};
use super::problem::Problem;
pub use super::rsl::{
    RslAmountJson, RslBackoffJson, RslContentJson, RslJson, RslLicenseJson, RslPaymentJson,
    RslScopeJson, RslSourceJson,
};
pub use super::values::{Directive, PreferenceJson, PreferenceValue, RuleJson, UsageJson};

/// `allow` or `disallow`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Fetching is allowed.
    Allow,
    /// Fetching is disallowed.
    Disallow,
}

/// The groups whose rules were considered (all groups naming the agent, merged; or all `*`
/// groups, merged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"agents": ["*"], "lines": [1], "global": true}))]
pub struct GroupJson {
    /// Their `user-agent` values as written: the first 16, each cut at 256 bytes of JSON.
    pub agents: Vec<String>,
    /// The line of each `user-agent` value (parallel to `agents`).
    pub lines: Vec<u32>,
    /// Whether these are the `*` groups.
    pub global: bool,
    /// How many `user-agent` lines the groups have, when `agents` shows fewer; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents_total: Option<usize>,
    /// `true` when `agents` was cut to the answer's bounds; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

impl GroupJson {
    /// Applied groups as an answer shows them.
    pub fn of(groups: robotsd_engine::AppliedGroups<'_>) -> GroupJson {
        let shown = GroupShown::of(groups);
        let mut cut = false;
        let (agents, lines): (Vec<String>, Vec<u32>) = shown
            .agents()
            .map(|(value, value_cut, line)| {
                cut |= value_cut;
                (value.into_owned(), line)
            })
            .unzip();
        let total = shown.agents_total(agents.len());
        GroupJson {
            global: shown.global(),
            agents_total: (total > agents.len()).then_some(total),
            truncated: (cut || total > agents.len()).then_some(true),
            agents,
            lines,
        }
    }
}

impl From<GroupInfo> for GroupJson {
    fn from(g: GroupInfo) -> Self {
        GroupJson::of(g.get())
    }
}

/// The agents asked about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"input": ["Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"], "tokens": ["Googlebot"]}))]
pub struct AgentJson {
    /// The `ua` values as given (a comma list's names apart): the first 8, each cut at 256
    /// bytes of JSON.
    pub input: Vec<String>,
    /// The product token used for each (parallel to `input`), each cut at 256 bytes of JSON.
    pub tokens: Vec<String>,
    /// How many agents were asked about, when `input` shows fewer; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_total: Option<usize>,
    /// `true` when `input` or `tokens` was cut to the answer's bounds; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

impl AgentJson {
    /// The agents of an answer, cut to the answer's bounds.
    fn of(agents: Vec<crate::checker::AgentToken>) -> AgentJson {
        use crate::bounds::{MAX_AGENT_JSON_BYTES, MAX_ECHOED_AGENTS, cut_owned};
        let total = agents.len();
        let mut truncated = total > MAX_ECHOED_AGENTS;
        let (input, tokens) = agents
            .into_iter()
            .take(MAX_ECHOED_AGENTS)
            .map(|agent| {
                let (input, input_cut) = cut_owned(agent.input(), MAX_AGENT_JSON_BYTES);
                let (token, token_cut) = cut_owned(agent.token(), MAX_AGENT_JSON_BYTES);
                truncated |= input_cut || token_cut;
                (input, token)
            })
            .unzip();
        AgentJson {
            input,
            tokens,
            input_total: (total > MAX_ECHOED_AGENTS).then_some(total),
            truncated: truncated.then_some(true),
        }
    }
}

/// A run of failures to fetch robots.txt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct BackoffJson {
    /// The first failure of the run (RFC 3339).
    pub since: String,
    /// Failures in a row.
    pub failures: u32,
    /// No request to the origin before this (RFC 3339).
    pub next_retry: String,
    /// When the answer's `reason` changes if the origin stays unreachable (RFC 3339): the end
    /// of the window that disallows everything (`unreachable_disallow_all`, 12 hours after
    /// `since` by default), or of the one that answers from the last good copy
    /// (`last_good_copy`, `unreachable_no_copy`: 30 days by default); null after both.
    pub until: Option<String>,
    /// Why the last fetch failed.
    pub last_error: String,
}

/// Where the robots.txt behind the answer came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"status": 200, "fetched_at": "2026-11-21T23:59:00Z", "sha256": "38ee13a89fd0de18fe5f1f192cb4179a600acc093eefb277f5a7f77660033e8f", "expires_at": "2026-11-22T23:59:00Z", "bytes": 34, "final_url": "https://example.com/robots.txt", "cache": "hit", "backoff": null}))]
pub struct RobotsSourceJson {
    /// HTTP status of the fetch, if a response was received.
    pub status: Option<u16>,
    /// When it was fetched (RFC 3339).
    pub fetched_at: Option<String>,
    /// The SHA-256 (lower-case hex) of the robots.txt copy the answer was computed from, as
    /// kept (decoded, at most 512,000 bytes); null when no file was parsed (404, unreachable).
    pub sha256: Option<String>,
    /// When the cached copy expires (RFC 3339).
    pub expires_at: Option<String>,
    /// Decoded body bytes kept (at most 512,000).
    pub bytes: Option<usize>,
    /// The URL it came from, after redirects.
    pub final_url: Option<String>,
    /// The fetch was answered by a bot challenge (a firewall asking for a browser), not by the
    /// site: its status is read as ever (a 403: no restriction; a 503: everything disallowed
    /// for a while), and this says why. Absent when it was not one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub challenged: Option<ChallengeJson>,
    /// How the cache was used.
    pub cache: Lookup,
    /// The current backoff, while robots.txt is unreachable.
    pub backoff: Option<BackoffJson>,
}

/// A bot challenge recognized in a robots.txt fetch's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"vendor": "cloudflare", "marker": "cf-mitigated: challenge"}))]
pub struct ChallengeJson {
    /// Whose: `cloudflare`, `aws-waf`, `datadome`, `human` or `imperva`.
    pub vendor: String,
    /// What showed it: a header (`cf-mitigated: challenge`, `x-amzn-waf-action`) or a marker in
    /// the page.
    pub marker: String,
}

impl From<Source> for RobotsSourceJson {
    fn from(s: Source) -> Self {
        RobotsSourceJson {
            status: s.status,
            fetched_at: s.fetched_at.map(rfc3339),
            sha256: s.sha256.map(|digest| crate::hex::hex(&digest)),
            expires_at: s.expires_at.map(rfc3339),
            bytes: s.bytes,
            challenged: s
                .final_url
                .as_ref()
                .and_then(crate::checker::FinalUrl::challenge)
                .map(|c| ChallengeJson {
                    vendor: c.vendor.to_owned(),
                    marker: c.marker.to_owned(),
                }),
            final_url: s.final_url.map(|url| url.as_str().to_owned()),
            cache: s.cache,
            backoff: s.backoff.map(|b| BackoffJson {
                since: rfc3339(b.since),
                failures: b.failures,
                next_retry: rfc3339(b.next_retry),
                until: b.until.map(rfc3339),
                last_error: b.last_error,
            }),
        }
    }
}

/// The answer to a check.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({
    "allowed": false, "verdict": "disallow", "reason": "matched_rule",
    "url": "https://example.com/private/page", "robots_url": "https://example.com/robots.txt",
    "agent": {"input": ["Googlebot"], "tokens": ["Googlebot"]},
    "rule": {"directive": "disallow", "pattern": "/private", "line": 2},
    "group": {"agents": ["*"], "lines": [1], "global": true}, "crawl_delay": null, "usage": null,
    "robots": {"status": 200, "fetched_at": "2026-11-21T23:59:00Z", "sha256": "38ee13a89fd0de18fe5f1f192cb4179a600acc093eefb277f5a7f77660033e8f", "expires_at": "2026-11-22T23:59:00Z", "bytes": 34, "final_url": "https://example.com/robots.txt", "cache": "miss", "backoff": null}
}))]
pub struct CheckResponse {
    /// Whether fetching the URL is allowed.
    pub allowed: bool,
    /// The same as a word.
    pub verdict: Verdict,
    /// Why (a closed set; see README.md).
    pub reason: Reason,
    /// The URL as normalised for matching.
    pub url: String,
    /// The robots.txt that applies.
    pub robots_url: String,
    /// The agents asked about and the product tokens used.
    pub agent: AgentJson,
    /// The rule that decided, or null when none matched.
    pub rule: Option<RuleJson>,
    /// The groups that applied, or null when none did.
    pub group: Option<GroupJson>,
    /// The applied groups' `crawl-delay` in seconds, for information (never part of the verdict).
    pub crawl_delay: Option<f64>,
    /// The AI usage preferences (`Content-Usage`, `Content-Signal`) that apply to the URL for
    /// the agent, or null when none does: always when the URL may not be fetched (no
    /// preferences are implied for it). For information: never part of the verdict.
    pub usage: Option<UsageJson>,
    /// Where the robots.txt came from; null for `/v1/evaluate`, which fetches nothing.
    pub robots: Option<RobotsSourceJson>,
    /// With `pace=true`: when this worker may fetch the URL, kept for the whole fleet; null
    /// when the URL may not be fetched (nothing is reserved). Absent without `pace=true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable)]
    pub pace: Option<Option<PaceJson>>,
    /// With `record=true` (`GET /v1/check`): what robots.txt said of the URL, compact, to
    /// store beside the page (docs/page.md). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<Box<super::record::RecordJson>>,
    /// With `sign=GET` (`GET /v1/check`) and an allowed URL: the Web Bot Auth headers for that
    /// request. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sign: Option<Box<super::sign::SignJson>>,
}

impl From<Answer> for CheckResponse {
    fn from(a: Answer) -> Self {
        CheckResponse {
            allowed: a.allowed,
            verdict: if a.allowed {
                Verdict::Allow
            } else {
                Verdict::Disallow
            },
            reason: a.reason,
            robots_url: a.robots_url(),
            url: a.url,
            agent: AgentJson::of(a.agents),
            rule: a.rule.map(Into::into),
            group: a.group.map(Into::into),
            crawl_delay: a.crawl_delay,
            usage: UsageJson::of(&a.usage, a.usage_cut, &a.rsl, a.rsl_total),
            robots: a.source.map(Into::into),
            pace: crate::fast::answer_json::pace_member(&a.pace),
            record: None,
            sign: None,
        }
    }
}

/// One or several `ua` values.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum UserAgents {
    /// One value.
    One(String),
    /// Several values (a crawler that answers to several names).
    Many(Vec<String>),
}

impl Default for UserAgents {
    /// None given: the item fails with `missing-user-agent` in its own slot.
    fn default() -> Self {
        UserAgents::Many(Vec::new())
    }
}

impl UserAgents {
    /// As a list.
    pub fn into_vec(self) -> Vec<String> {
        match self {
            UserAgents::One(ua) => vec![ua],
            UserAgents::Many(uas) => uas,
        }
    }
}

/// One item of a batch in its `checks` form.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckItem {
    /// The URL to check.
    pub url: String,
    /// The agent(s) to check for. Required: an item without one gets `missing-user-agent` in
    /// its slot, and the rest of the batch is answered.
    #[serde(default)]
    pub ua: UserAgents,
}

/// The same agent(s) for every URL.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UrlsBatch {
    /// The agent(s).
    pub ua: UserAgents,
    /// The URLs, answered in this order.
    pub urls: Vec<String>,
}

/// A list of checks, answered in this order.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChecksBatch {
    /// The checks.
    pub checks: Vec<CheckItem>,
}

/// A batch of checks: one agent and many URLs, or a list of (url, ua) pairs. Unknown fields
/// are refused, so that a request matches exactly one form.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(untagged)]
#[schema(example = json!({"ua": "Googlebot", "urls": ["https://example.com/a", "https://example.com/private/b"]}))]
pub enum BatchRequest {
    /// The same agent(s) for every URL.
    Urls(UrlsBatch),
    /// A list of checks.
    Checks(ChecksBatch),
}

/// Only the verdict (`?view=verdict`): for fleets that check every URL and need nothing else.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
// No other property: a full answer must not also match this schema (`oneOf`).
#[serde(deny_unknown_fields)]
#[schema(example = json!({"allowed": false, "reason": "matched_rule"}))]
pub struct VerdictResponse {
    /// Whether the URL may be fetched.
    pub allowed: bool,
    /// Why, as in the full answer.
    pub reason: Reason,
    /// With `pace=true`, as in the full answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable)]
    pub pace: Option<Option<PaceJson>>,
    /// With `record=true` (`GET /v1/check`), as in the full answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<Box<super::record::RecordJson>>,
    /// With `sign=GET` (`GET /v1/check`), as in the full answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sign: Option<Box<super::sign::SignJson>>,
}

/// The answer of `GET /v1/check`: in full, or only the verdict (`?view=verdict`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(untagged)]
pub enum CheckAnswer {
    /// The default view.
    Full(Box<CheckResponse>),
    /// `?view=verdict`.
    Verdict(VerdictResponse),
}

/// One answer of a batch: the answer (in full, or only the verdict), or the problem with that
/// item.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(untagged)]
pub enum BatchItem {
    /// The item's answer.
    Answer(Box<CheckResponse>),
    /// The item's verdict (`?view=verdict`).
    Verdict(VerdictResponse),
    /// What was wrong with the item; the rest of the batch is unaffected.
    Error {
        /// The problem, as the single-check endpoint would have answered it.
        error: Problem,
    },
}

/// Answers of a batch, in the order of the request.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BatchResponse {
    /// One per item.
    pub results: Vec<BatchItem>,
    /// `true` when the answer reached its bound (8 MiB): from the item that reached it on, each
    /// answer is given as `view=verdict` gives it. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

/// `POST /v1/evaluate`: a robots.txt tester that touches no network.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"robots_txt": "User-agent: *\nDisallow: /private\n", "ua": "Googlebot", "urls": ["https://example.com/private/x", "https://example.com/ok"]}))]
pub struct EvaluateRequest {
    /// The robots.txt body, as text.
    pub robots_txt: Option<String>,
    /// The robots.txt body as base64, for exact bytes (a BOM, invalid UTF-8); instead of
    /// `robots_txt`.
    pub robots_txt_b64: Option<String>,
    /// The agent(s). `user_agent` and `user_agents` (the names of `robotsd eval --jsonl`) are
    /// taken too.
    #[serde(alias = "user_agent", alias = "user_agents")]
    pub ua: UserAgents,
    /// One URL.
    pub url: Option<String>,
    /// Several URLs.
    pub urls: Option<Vec<String>>,
    /// How the URL and the rules compare: `google` (escapes compared as text, as Google's
    /// reference) or `rfc9309` (RFC 9309's one form: unreserved escapes decoded, `%2A` and `%24`
    /// matching the URL's `*` and `$`, the query's general delimiters compared encoded).
    /// Default: the server's `--percent-decoding`.
    #[serde(default)]
    pub percent_decoding: Option<PercentDecodingName>,
    /// `parsed`: also answer with the parsed file (groups, sitemaps, per-line diagnostics), as
    /// `/v1/robots` shows a fetched one.
    #[serde(default)]
    pub include: Option<EvaluateInclude>,
}

/// What `/v1/evaluate` may add to its answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum EvaluateInclude {
    /// The parsed file.
    Parsed,
}

/// The answer of `POST /v1/evaluate`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EvaluateResponse {
    /// One answer or problem per URL, in order.
    pub results: Vec<BatchItem>,
    /// `true` when `results` reached its bound (8 MiB): from the item that reached it on, each
    /// answer is given as `view=verdict` gives it. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// The parsed file, with `"include": "parsed"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parsed: Option<ParsedJson>,
    /// Where the text was cut, in bytes, when it was longer than a fetch keeps (512,000 by
    /// default, as Google reads 500 KiB): what follows was ignored, as it would be if fetched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_at_bytes: Option<usize>,
}

/// How the URL and the rules compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PercentDecodingName {
    /// As Google's reference: escapes compared as text.
    Google,
    /// As RFC 9309 §2.2.2 and §2.2.3: one form for both sides (unreserved escapes decoded, `%2A`
    /// and `%24` matching the URL's `*` and `$`, the query's general delimiters encoded).
    Rfc9309,
}

impl From<PercentDecodingName> for robots::PercentDecoding {
    fn from(name: PercentDecodingName) -> Self {
        match name {
            PercentDecodingName::Google => robots::PercentDecoding::Google,
            PercentDecodingName::Rfc9309 => robots::PercentDecoding::Rfc9309,
        }
    }
}

/// What robotsd holds for an origin.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RobotsResponse {
    /// The origin (scheme, host, port).
    pub origin: String,
    /// Its robots.txt.
    pub robots_url: String,
    /// `parsed`, `no_robots_txt`, `unreachable` or `refused`.
    pub state: String,
    /// The fetch behind it, and the backoff if any.
    pub robots: RobotsSourceJson,
    /// The parsed file, when there is one (in backoff: the last good copy, if any).
    pub parsed: Option<ParsedJson>,
    /// The file's text as fetched (comments included; bytes that are not UTF-8 shown as
    /// U+FFFD), with `include=robots_txt` and a parsed file held; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub robots_txt: Option<String>,
    /// The origin's pacing state (docs/politeness.md), or null when none is kept.
    pub pace: Option<PaceStateJson>,
}
