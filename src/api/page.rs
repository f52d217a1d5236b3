//! `POST /v1/page` (docs/page.md): after the fetch, a page's own rules for the crawler (its
//! `X-Robots-Tag` headers and robots `meta` tags) and its AI-use reservations (`Content-Usage`,
//! TDMRep), beside what robots.txt says of the URL. The reading is [`crate::page`]'s; this is
//! the JSON around it.

use std::borrow::Cow;
use std::collections::BTreeMap;

use axum::extract::State;
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::problem::{ApiError, BodyProblems, EdgeProblems, Problem};
use super::record::{
    CombinedJson, PageRuleJson, RecordJson, RecordRobots, RecordRobotsTxt, RecordTdm, RecordUsage,
};
use super::types::{CheckResponse, PreferenceValue, UserAgents};
use super::{AppState, JsonBody, JsonRequest, check_one};
use crate::checker::{CheckOptions, WorkMeter};
use crate::compute::Stop;
use crate::page::{self, PageAnswer, PageInput, ShownRule, UsageOrigin};
use robotsd_page::content_usage::HeaderUsage;
use robotsd_page::directives::Ignored;
use robotsd_page::page::RuleSource;
use robotsd_page::tdm::{Tdm, TdmSource};

/// The path, which the edge gives its own body limit (`--max-page-bytes`).
pub const PAGE_PATH: &str = "/v1/page";

/// `POST /v1/page`: a fetched page, as the worker received it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"url": "https://example.com/articles/1", "ua": "ExampleBot/1.0", "headers": [["Content-Type", "text/html; charset=utf-8"], ["X-Robots-Tag", "googlebot: nofollow"], ["Content-Usage", "train-ai=n"]], "html": "<!DOCTYPE html><html><head><meta name=\"robots\" content=\"max-snippet:50\"></head><body>…</body></html>"}))]
pub struct PageRequest {
    /// The page's URL (after redirects: the one whose response this is).
    #[serde(default)]
    pub url: String,
    /// The crawler, as `/v1/check` takes it: a product token or a whole User-Agent header, or
    /// several. Rules written for any of its product tokens apply to it.
    #[serde(default)]
    pub ua: UserAgents,
    /// The response headers as received, in order, repeated ones kept: `[name, value]` pairs.
    /// At most 256, names of at most 256 bytes, values of at most 16 KiB. Only those robotsd
    /// reads need be sent: `Robots-Tag`, `X-Robots-Tag`, `Content-Usage`, `tdm-reservation`,
    /// `tdm-policy`, and `Content-Type` for the document's charset.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// The document as text, when it is HTML; its first 2 MiB are read.
    #[serde(default)]
    pub html: Option<String>,
    /// The document's bytes, base64, instead of `html`: read in its own charset (byte order
    /// mark, `Content-Type`, a `meta` charset, else UTF-8 or windows-1252).
    #[serde(default)]
    pub html_base64: Option<String>,
    /// `true`: the answer carries a `record` to store beside the page (docs/page.md).
    #[serde(default)]
    pub record: bool,
}

/// The page's robots rules in force for the crawler, after Google's rules: general and
/// agent-specific rules add up, the more restrictive wins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"index": true, "follow": false, "snippet": true, "max_snippet": 50, "max_image_preview": null, "max_video_preview": null, "image_index": true, "translate": true, "index_if_embedded": false, "unavailable_after": null, "index_rule": null, "at": "2026-11-28T00:00:00Z", "uninterpreted": [], "rules": [{"rule": "nofollow", "agent": "googlebot", "header": 1}, {"rule": "max-snippet:50", "agent": null, "line": 1}]}))]
pub struct PageRobotsJson {
    /// No `noindex` or `none`: the page may be indexed.
    pub index: bool,
    /// No `nofollow` or `none`: its links may be followed.
    pub follow: bool,
    /// No `nosnippet` (nor `max-snippet:0`).
    pub snippet: bool,
    /// The longest text snippet in characters (`0` with no snippet); null: no limit.
    pub max_snippet: Option<u64>,
    /// `none`, `standard` or `large`; null: not stated (the search engine's default).
    pub max_image_preview: Option<&'static str>,
    /// The longest video preview in seconds (`0`: a static image at most, as with no snippet:
    /// Google's `nosnippet` is no text snippet or video preview); null: no limit.
    pub max_video_preview: Option<u64>,
    /// No `noimageindex`.
    pub image_index: bool,
    /// No `notranslate`.
    pub translate: bool,
    /// `indexifembedded` with `noindex` (it has no effect without).
    pub index_if_embedded: bool,
    /// The earliest `unavailable_after` (RFC 3339, UTC), or null. Once it is past (not later
    /// than `at`), `index` is false.
    pub unavailable_after: Option<String>,
    /// The rule that made `index` false: the first `noindex` or `none`, else the
    /// `unavailable_after` past at `at`; null when `index` is true.
    pub index_rule: Option<PageRuleJson>,
    /// The time the rules were read at (RFC 3339, UTC).
    pub at: String,
    /// Rules robotsd recognises but does not interpret (`noarchive`, `nocache`,
    /// `nositelinkssearchbox`, `noai`, `noimageai`), listed, never dropped.
    pub uninterpreted: Vec<&'static str>,
    /// Every rule that applied to the crawler, ignored ones included, headers first (at most 64;
    /// texts cut at 256 bytes). Only the listing is bounded: every rule counts in the verdicts
    /// above, whatever their number or length.
    pub rules: Vec<PageRuleJson>,
    /// How many rules applied, when `rules` lists fewer; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rules_total: Option<usize>,
}

/// The page's `Content-Usage` header (draft-ietf-aipref-attach-05).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"state": "stated", "categories": {"train-ai": "n"}, "headers": [2]}))]
pub struct ContentUsageHeaderJson {
    /// `absent`, `unparseable` (not an RFC 9651 Dictionary: every preference unknown), or
    /// `stated`.
    pub state: &'static str,
    /// The categories with a `y` or `n`, by label as written (at most 16, labels of at most 64
    /// bytes).
    pub categories: BTreeMap<String, PreferenceValue>,
    /// How many it stated, when `categories` shows fewer; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub categories_total: Option<usize>,
    /// The positions of its field lines among the request's headers.
    pub headers: Vec<usize>,
}

/// TDMRep (W3C): whether text and data mining rights are reserved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"reservation": true, "source": "header", "policy": "https://provider.com/policies/policy.json", "policy_source": "well_known", "invalid": [], "well_known": {"url": "https://example.com/.well-known/tdmrep.json", "state": "rule", "rule": 1}}))]
pub struct TdmJson {
    /// `true`: reserved (`1`); `false`: not reserved (`0`); null: unset (no layer gave `0` or
    /// `1`). A value other than `0` and `1` sets nothing (see `invalid`), so it never erases
    /// one given before; one layer giving both `1` and `0` reserves.
    pub reservation: Option<bool>,
    /// Where the reservation came from: `well_known` (the origin's `tdmrep.json`, with
    /// `--tdmrep`), `header`, or `meta` (the document's); each supersedes the one before. Null
    /// when unset.
    pub source: Option<&'static str>,
    /// The TDM policy's URL, only with a reservation of `1`.
    pub policy: Option<String>,
    /// Where the policy came from.
    pub policy_source: Option<&'static str>,
    /// The layers (`well_known`, `header`, `meta`) that gave a `tdm-reservation` other than `0`
    /// or `1`: a protocol error, which set nothing.
    pub invalid: Vec<&'static str>,
    /// What the origin's `/.well-known/tdmrep.json` says of the URL; present with `--tdmrep`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub well_known: Option<WellKnownJson>,
}

/// The origin's `/.well-known/tdmrep.json`, for the page's URL (`--tdmrep`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct WellKnownJson {
    /// The file's URL.
    pub url: String,
    /// `rule` (a rule covers the URL: the first that matches), `no_rule`, `missing` (no file:
    /// a 4xx), `invalid` (not TDMRep's JSON array of rules), `fetch_failed`, or `refused` (a
    /// destination robotsd does not contact).
    pub state: &'static str,
    /// The covering rule's position in the file's array, from 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<usize>,
    /// Why there is no rule, when the file could not be used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl WellKnownJson {
    fn of(well_known: &crate::tdmrep::WellKnown) -> WellKnownJson {
        use crate::tdmrep::WellKnownState as S;
        let (state, rule, reason) = match &well_known.state {
            S::Rule(rule) => ("rule", Some(rule.index), None),
            S::NoRule => ("no_rule", None, None),
            S::Missing(why) => ("missing", None, Some(why.clone())),
            S::Invalid(why) => ("invalid", None, Some(why.clone())),
            S::Failed(why) => ("fetch_failed", None, Some(why.clone())),
            S::Refused(why) => ("refused", None, Some(why.clone())),
        };
        WellKnownJson {
            url: well_known.url.clone(),
            state,
            rule,
            reason,
        }
    }
}

/// The page's AI-use statements, beside robots.txt's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct PageUsageJson {
    /// robots.txt's preferences for the URL, as `/v1/check` gives them (`usage` there), or
    /// null when none applies.
    pub robots_txt: Option<super::values::UsageJson>,
    /// The page's `Content-Usage` header.
    pub content_usage_header: ContentUsageHeaderJson,
    /// TDMRep, from the headers and the document.
    pub tdm: TdmJson,
    /// The revision of aipref's vocabulary `combined` follows: `draft-ietf-aipref-vocab-08`.
    pub vocabulary: &'static str,
    /// Per category of aipref's vocabulary (`train-ai`, `ai-use`, `search`), combined over
    /// robots.txt's statement and the header's (§5.1: any `n` is `n`, else any `y` is `y`, else
    /// unknown). No category inherits another's value (§5). A use that qualifies as Search
    /// (§4.3: selecting assets and directing users to them, with a link, excerpts only to judge
    /// relevance, no summaries) is decided by `search` alone, whatever `train-ai` and `ai-use`
    /// say; a generated summary or answer is not Search.
    pub combined: BTreeMap<&'static str, CombinedJson>,
}

/// What robotsd makes of a fetched page, for the crawler.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PageResponse {
    /// Whether robots.txt allows the URL, as `check.allowed`.
    pub allowed: bool,
    /// robots.txt's answer for the URL, as `GET /v1/check` gives it.
    pub check: CheckResponse,
    /// The page's robots rules for the crawler; null when robots.txt disallows the URL: a
    /// crawler that obeys it never fetches the page, so its rules are never read.
    pub robots: Option<PageRobotsJson>,
    /// Its AI-use statements; null when robots.txt disallows the URL (no preference is implied
    /// for it).
    pub usage: Option<PageUsageJson>,
    /// Only the document's first 2 MiB were read (as Googlebot reads HTML), so a rule past them
    /// is not in the answer; absent otherwise. The one thing that can leave a rule unread:
    /// every header and every `meta` tag of what is read counts, whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document_cut: Option<bool>,
    /// The charset the document was read in, when one was sent.
    pub encoding: Option<&'static str>,
    /// With `"record": true` in the request: what the page and its robots.txt said, compact,
    /// to store beside the page (its URL, the time, robots.txt's SHA-256 and deciding rule, the
    /// page's rules in force and its AI-use statements with their sources, robotsd's version).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<RecordJson>,
}

fn ignored_name(ignored: Ignored) -> &'static str {
    match ignored {
        Ignored::Unknown => "unknown",
        Ignored::Unparseable => "unparseable",
    }
}

fn source_name(source: Option<TdmSource>) -> Option<&'static str> {
    source.map(TdmSource::as_str)
}

impl PageRuleJson {
    fn of(rule: ShownRule) -> PageRuleJson {
        let (header, line) = match rule.source {
            RuleSource::Header { index } => (Some(index), None),
            RuleSource::Meta { line } => (None, Some(line)),
        };
        PageRuleJson {
            rule: rule.text,
            agent: rule.agent,
            header,
            line,
            ignored: rule.ignored.map(ignored_name),
            looks_like: rule.looks_like,
        }
    }
}

impl PageRobotsJson {
    fn of(robots: page::PageRobots) -> PageRobotsJson {
        let rules = robots.rules;
        PageRobotsJson {
            index: rules.index,
            follow: rules.follow,
            snippet: rules.snippet,
            max_snippet: rules.max_snippet,
            max_image_preview: rules.max_image_preview.map(|p| p.as_str()),
            max_video_preview: rules.max_video_preview,
            image_index: rules.image_index,
            translate: rules.translate,
            index_if_embedded: rules.index_if_embedded,
            unavailable_after: rules
                .unavailable_after
                .map(robotsd_page::date::format_rfc3339),
            uninterpreted: rules.uninterpreted,
            index_rule: robots.index_rule.map(PageRuleJson::of),
            at: robotsd_page::date::format_rfc3339(robots.at),
            rules: robots.shown.into_iter().map(PageRuleJson::of).collect(),
            rules_total: robots.total,
        }
    }
}

impl TdmJson {
    fn of(tdm: &Tdm, well_known: Option<&crate::tdmrep::WellKnown>) -> TdmJson {
        let policy = tdm.policy_in_force().map(str::to_owned);
        TdmJson {
            reservation: tdm.reservation,
            source: source_name(tdm.reservation_source),
            policy_source: policy.as_ref().and(source_name(tdm.policy_source)),
            policy,
            invalid: tdm.invalid.iter().map(|s| s.as_str()).collect(),
            well_known: well_known.map(WellKnownJson::of),
        }
    }
}

impl PageUsageJson {
    fn of(usage: page::PageUsage, robots_txt: Option<super::values::UsageJson>) -> PageUsageJson {
        let (state, categories) = match usage.header {
            HeaderUsage::Absent => ("absent", BTreeMap::new()),
            HeaderUsage::Unparseable => ("unparseable", BTreeMap::new()),
            HeaderUsage::Stated(stated) => (
                "stated",
                stated
                    .into_iter()
                    .map(|s| (s.category, s.preference.into()))
                    .collect(),
            ),
        };
        PageUsageJson {
            robots_txt,
            content_usage_header: ContentUsageHeaderJson {
                state,
                categories,
                categories_total: usage.header_total,
                headers: usage.header_lines,
            },
            tdm: TdmJson::of(&usage.tdm, usage.well_known.as_ref()),
            vocabulary: robotsd_engine::AIPREF_VOCABULARY,
            combined: usage
                .combined
                .into_iter()
                .map(|c| {
                    (
                        c.category,
                        CombinedJson {
                            value: c.value.map(Into::into),
                            sources: c
                                .sources
                                .into_iter()
                                .map(|s| match s {
                                    UsageOrigin::RobotsTxt => "robots_txt",
                                    UsageOrigin::Header => "header",
                                })
                                .collect(),
                        },
                    )
                })
                .collect(),
        }
    }
}

/// The request's document as text within the read bound, and the page as [`crate::page`]
/// reads it.
fn page_input(request: PageRequest) -> Result<PageInput, ApiError> {
    page::check_headers(&request.headers).map_err(|e| ApiError::InvalidPage(e.to_string()))?;
    let (document, document_cut, encoding) = match (request.html, request.html_base64) {
        (Some(_), Some(_)) => {
            return Err(ApiError::InvalidPage(
                "give the document as `html` or as `html_base64`, not both".into(),
            ));
        }
        (Some(html), None) => {
            let (text, cut) = page::document_string(html);
            (Some(text), cut, Some("UTF-8"))
        }
        (None, Some(encoded)) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded.trim())
                .map_err(|e| ApiError::InvalidPage(format!("html_base64: {e}")))?;
            let (text, cut, encoding) = page::document_text(&bytes, &request.headers);
            (Some(text), cut, Some(encoding))
        }
        (None, None) => (None, false, None),
    };
    Ok(PageInput {
        headers: request.headers,
        document,
        document_cut,
        encoding,
    })
}

/// After the fetch: a page's own rules for the crawler and its AI-use reservations, beside
/// robots.txt's answer for its URL.
#[utoipa::path(
    post,
    path = "/v1/page",
    tag = "check",
    request_body = PageRequest,
    responses(
        (status = 200, description = "robots.txt's answer for the URL, and, when it allows the URL, the page's robots rules in force for the crawler (each with where it was written) and its AI-use statements combined with robots.txt's (docs/page.md).", body = PageResponse),
        (status = 400, description = "Not a page: a missing or invalid url or ua (or more agents than --max-agents and --max-agent-names allow), headers out of bounds, a document given twice or not base64.", body = Problem, content_type = "application/problem+json"),
        (status = 415, description = "The body is not declared as JSON (Content-Type: application/json).", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "robotsd will not contact this destination (for its robots.txt).", body = Problem, content_type = "application/problem+json"),
        BodyProblems,
        EdgeProblems,
    )
)]
pub(super) async fn page_post(
    State(state): State<AppState>,
    super::CallerOf(caller): super::CallerOf,
    body: JsonRequest,
) -> Result<JsonBody<PageResponse>, ApiError> {
    let body = super::read_body_within(body, state.limits.max_page_bytes)?;
    let request: PageRequest =
        serde_json::from_slice(&body).map_err(|e| ApiError::InvalidBody(e.to_string()))?;
    drop(body);
    if request.url.is_empty() {
        return Err(ApiError::Missing("url"));
    }
    let url = request.url.clone();
    let agents = request.ua.clone().into_vec();
    let want_record = request.record;
    let input = page_input(request)?;
    let options = CheckOptions {
        decoding: state.checker.percent_decoding(),
        pace: false,
        licenses: true,
        caller,
    };
    // One check, but its agents times its file's rules are charged before it matches.
    let meter = WorkMeter::new(state.limits.max_request_work);
    let check = check_one(
        &state,
        Cow::Borrowed(&url),
        &agents,
        options,
        super::View::Full,
        Some(&meter),
    )
    .await?;
    // The origin's file is the first layer of TDMRep: only for a page robots.txt allows (the
    // others are not read).
    let well_known = match (&state.tdmrep, check.allowed) {
        (Some(files), true) => match crate::origin::parse_target(&check.url) {
            Ok(target) => Some(files.for_url(target.origin(), &check.url).await),
            Err(_) => None,
        },
        _ => None,
    };
    let now = state.checker.cache().clock().now().since_epoch().as_secs();
    let now = i64::try_from(now).unwrap_or(i64::MAX);
    // The page is read on the compute threads: up to 2 MiB of HTML is milliseconds of work.
    let work = page_work(&input);
    let (answer, check) = state
        .checker
        .compute()
        .offload(work, caller, Stop::at(None), move |_| {
            (
                page::answer(&check, &input, well_known, now),
                (check, input.document_cut, input.encoding),
            )
        })
        .await
        .map_err(|error| {
            tracing::error!(%error, "a page's reading panicked on the compute threads");
            ApiError::Internal
        })?;
    let (check, document_cut, encoding) = check;
    let PageAnswer { robots, usage } = answer;
    let check = CheckResponse::from(*check);
    let mut response = PageResponse {
        allowed: check.allowed,
        robots: robots.map(PageRobotsJson::of),
        usage: usage.map(|u| PageUsageJson::of(u, check.usage.clone())),
        check,
        document_cut: document_cut.then_some(true),
        encoding,
        record: None,
    };
    if want_record {
        let at = robotsd_page::date::format_rfc3339(now);
        response.record = Some(record_of(&response, at));
    }
    Ok(JsonBody(response))
}

/// The record of a page answer, read at `at` (RFC 3339).
fn record_of(answer: &PageResponse, at: String) -> RecordJson {
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

/// A page's reading in the compute's units, for its caller's share: 64 a byte of its headers
/// and document, well above what reading a byte costs (2 MiB of HTML in up to 180 ms), so that
/// only a page of a few KiB counts as a small job ([`crate::compute::SMALL_WORK`]).
fn page_work(input: &PageInput) -> u64 {
    let headers: usize = input.headers.iter().map(|(n, v)| n.len() + v.len()).sum();
    let document = input.document.as_ref().map_or(0, String::len);
    u64::try_from(headers + document).map_or(u64::MAX, |bytes| bytes.saturating_mul(64))
}
