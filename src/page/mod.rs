//! After the fetch (docs/page.md): a fetched page's own rules for the crawler, read with the
//! page crate ([`robotsd_page`]) and combined with what robots.txt says of the URL, within the
//! answer's bounds. No IO here: the robots.txt answer comes from the checker, the page from the
//! caller.
//!
//! A page robots.txt disallows is not read: a crawler that obeys robots.txt never fetches it,
//! so its rules are never seen (Google), and no usage preference is implied for it (aipref).

use robotsd_engine::{Preference, UsageSource};
use robotsd_page::content_usage::HeaderUsage;
use robotsd_page::directives::Ignored;
use robotsd_page::page::{self, PageRule};
use robotsd_page::robots::RobotsRules;
use robotsd_page::tdm::{Tdm, TdmSource};

use crate::bounds;
use crate::checker::Answer;
use crate::tdmrep::{WellKnown, WellKnownState};

/// The most headers a page may be sent with.
pub const MAX_HEADERS: usize = 256;

/// The longest header name, in bytes.
pub const MAX_HEADER_NAME_BYTES: usize = 256;

/// The longest header value, in bytes (a long `Link` or `Content-Security-Policy` fits).
pub const MAX_HEADER_VALUE_BYTES: usize = 16 * 1024;

/// How much of a document is read, in bytes: the first 2 MiB, as Googlebot reads HTML.
pub const MAX_DOCUMENT_BYTES: usize = 2 * 1024 * 1024;

/// The most rules an answer lists; past it, `rules_total` says how many applied. Every rule
/// counts in the verdicts whatever their number.
pub const MAX_RULES: usize = page::MAX_LISTED_RULES;

/// The longest rule text an answer shows, in JSON bytes; a longer one is cut.
pub const MAX_RULE_TEXT_BYTES: usize = 256;

/// The longest `tdm-policy` an answer shows, in bytes; a longer one is left out.
pub const MAX_POLICY_BYTES: usize = 2048;

/// Why a page cannot be read as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    /// More headers than [`MAX_HEADERS`].
    #[error("a page may be sent with at most {MAX_HEADERS} headers; this one has {0}")]
    TooManyHeaders(usize),
    /// A header name that is empty, too long, or not a token.
    #[error("header {index}: {problem}")]
    HeaderName {
        /// Its position.
        index: usize,
        /// What is wrong.
        problem: &'static str,
    },
    /// A header value over [`MAX_HEADER_VALUE_BYTES`].
    #[error("header {index}: a value of {len} bytes, over {MAX_HEADER_VALUE_BYTES}")]
    HeaderValue {
        /// Its position.
        index: usize,
        /// Its length.
        len: usize,
    },
}

/// A fetched page as a worker hands it over.
#[derive(Debug, Clone, Default)]
pub struct PageInput {
    /// Its response headers as received, in order, repeated ones kept.
    pub headers: Vec<(String, String)>,
    /// Its document, as text, at most [`MAX_DOCUMENT_BYTES`] (see [`document_text`]).
    pub document: Option<String>,
    /// The document was longer than [`MAX_DOCUMENT_BYTES`], and only its start was read.
    pub document_cut: bool,
    /// The encoding the document was read in.
    pub encoding: Option<&'static str>,
}

/// Checks the headers against the bounds.
pub fn check_headers(headers: &[(String, String)]) -> Result<(), PageError> {
    if headers.len() > MAX_HEADERS {
        return Err(PageError::TooManyHeaders(headers.len()));
    }
    for (index, (name, value)) in headers.iter().enumerate() {
        let problem = if name.is_empty() {
            Some("an empty name")
        } else if name.len() > MAX_HEADER_NAME_BYTES {
            Some("a name over 256 bytes")
        } else if !name.bytes().all(is_token_byte) {
            Some("a name that is not an HTTP field name (RFC 9110 token)")
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(PageError::HeaderName { index, problem });
        }
        if value.len() > MAX_HEADER_VALUE_BYTES {
            return Err(PageError::HeaderValue {
                index,
                len: value.len(),
            });
        }
    }
    Ok(())
}

fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The document as text: the first [`MAX_DOCUMENT_BYTES`] of `bytes`, decoded by its charset
/// (byte order mark, the `Content-Type` header among `headers`, a `meta` charset, else UTF-8 or
/// windows-1252); whether it was cut; and the encoding.
pub fn document_text(bytes: &[u8], headers: &[(String, String)]) -> (String, bool, &'static str) {
    let cut = bytes.len() > MAX_DOCUMENT_BYTES;
    let bytes = &bytes[..bytes.len().min(MAX_DOCUMENT_BYTES)];
    let content_type = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-type"))
        .map(|(_, value)| value.as_str());
    let (text, encoding) = robotsd_page::html::decode(bytes, content_type);
    (text.into_owned(), cut, encoding)
}

/// A document given as text, cut to [`MAX_DOCUMENT_BYTES`] at a character boundary.
pub fn document_string(mut text: String) -> (String, bool) {
    if text.len() <= MAX_DOCUMENT_BYTES {
        return (text, false);
    }
    let mut end = MAX_DOCUMENT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    (text, true)
}

/// A rule as the answer lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShownRule {
    /// The rule as written, cut to [`MAX_RULE_TEXT_BYTES`].
    pub text: String,
    /// The agent it named, if any, cut as the text.
    pub agent: Option<String>,
    /// Where it was written.
    pub source: page::RuleSource,
    /// Why it was ignored; `None` when it applies.
    pub ignored: Option<Ignored>,
    /// Its words, when it is unknown as a whole and each word is a rule (see
    /// [`PageRule::looks_like`]).
    pub looks_like: Option<Vec<String>>,
}

/// The page's robots rules for the crawler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRobots {
    /// What they add up to.
    pub rules: RobotsRules,
    /// The rules, at most [`MAX_RULES`].
    pub shown: Vec<ShownRule>,
    /// How many there were, when `shown` holds fewer.
    pub total: Option<usize>,
    /// The rule that made `rules.index` false (see [`page::PageRead::index_rule`]).
    pub index_rule: Option<ShownRule>,
    /// The time they were read at, in seconds since the Unix epoch: an `unavailable_after`
    /// not later is in force.
    pub at: i64,
}

/// Where a combined preference came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageOrigin {
    /// A `Content-Usage` line of robots.txt.
    RobotsTxt,
    /// The page's `Content-Usage` header.
    Header,
}

/// One aipref category, combined over robots.txt and the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Combined {
    /// The category's label.
    pub category: &'static str,
    /// Any `n`: `n`; else any `y`: `y`; else unknown.
    pub value: Option<Preference>,
    /// The statements that gave it a value.
    pub sources: Vec<UsageOrigin>,
}

/// The page's usage statements, beside robots.txt's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageUsage {
    /// The `Content-Usage` header: absent, unparseable, or the preferences it states (at most
    /// [`bounds::MAX_USAGE_CATEGORIES`], labels of at most [`bounds::MAX_USAGE_LABEL_BYTES`]).
    pub header: HeaderUsage,
    /// How many the header stated, when `header` shows fewer.
    pub header_total: Option<usize>,
    /// The positions of its field lines among the headers.
    pub header_lines: Vec<usize>,
    /// TDMRep, after the layers.
    pub tdm: Tdm,
    /// The origin's `tdmrep.json` for the URL, with `--tdmrep`.
    pub well_known: Option<WellKnown>,
    /// Per aipref category.
    pub combined: Vec<Combined>,
}

/// What robotsd answers for a fetched page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageAnswer {
    /// Its robots rules; `None` when robots.txt disallows the URL (not read).
    pub robots: Option<PageRobots>,
    /// Its usage statements; `None` when robots.txt disallows the URL (not read).
    pub usage: Option<PageUsage>,
}

/// Reads `page` for the crawler `check` answered for, beside that answer, with what the
/// origin's `tdmrep.json` says of its URL (`--tdmrep`) as TDMRep's first layer, at `now`
/// (seconds since the Unix epoch).
pub fn answer(
    check: &Answer,
    page: &PageInput,
    well_known: Option<WellKnown>,
    now: i64,
) -> PageAnswer {
    if !check.allowed {
        return PageAnswer {
            robots: None,
            usage: None,
        };
    }
    let tokens: Vec<&str> = check.agents.iter().map(|a| a.token()).collect();
    let headers: Vec<(&str, &str)> = page
        .headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let read = page::read(&headers, page.document.as_deref(), &tokens, now);
    let total = read.rules_total;
    let shown = read.rules.iter().take(MAX_RULES).map(shown_rule).collect();
    let mut tdm = Tdm::default();
    if let Some(WellKnown {
        state: WellKnownState::Rule(rule),
        ..
    }) = &well_known
    {
        tdm.layer(TdmSource::WellKnown, &rule.as_layer());
    }
    tdm.layer(TdmSource::Header, &read.tdm_header);
    tdm.layer(TdmSource::Meta, &read.tdm_meta);
    if tdm
        .policy
        .as_ref()
        .is_some_and(|p| p.len() > MAX_POLICY_BYTES)
    {
        tdm.policy = None;
    }
    let (header, header_total) = bounded_header(read.content_usage);
    let combined = combine(check, &header);
    PageAnswer {
        robots: Some(PageRobots {
            rules: read.robots,
            shown,
            total: (total > MAX_RULES).then_some(total),
            index_rule: read.index_rule.as_ref().map(shown_rule),
            at: now,
        }),
        usage: Some(PageUsage {
            header,
            header_total,
            header_lines: read.content_usage_headers,
            tdm,
            well_known,
            combined,
        }),
    }
}

fn shown_rule(rule: &PageRule) -> ShownRule {
    let (text, cut) = bounds::cut_owned(&rule.text, MAX_RULE_TEXT_BYTES);
    ShownRule {
        text,
        agent: rule
            .agent
            .as_deref()
            .map(|a| bounds::cut_owned(a, MAX_RULE_TEXT_BYTES).0),
        source: rule.source.clone(),
        ignored: rule.rule.as_ref().err().copied(),
        // Its words are the text's: shown with a text shown whole.
        looks_like: rule.looks_like.clone().filter(|_| !cut),
    }
}

fn bounded_header(header: HeaderUsage) -> (HeaderUsage, Option<usize>) {
    let HeaderUsage::Stated(stated) = header else {
        return (header, None);
    };
    let total = stated.len();
    let kept: Vec<_> = stated
        .into_iter()
        .filter(|s| s.category.len() <= bounds::MAX_USAGE_LABEL_BYTES)
        .take(bounds::MAX_USAGE_CATEGORIES)
        .collect();
    let cut = (kept.len() < total).then_some(total);
    (HeaderUsage::Stated(kept), cut)
}

/// aipref's rule for each category of its vocabulary, over robots.txt's statement for the URL
/// and the header's.
fn combine(check: &Answer, header: &HeaderUsage) -> Vec<Combined> {
    UsageSource::ContentUsage
        .vocabulary()
        .iter()
        .map(|&category| {
            let mut stated: Vec<(UsageOrigin, Preference)> = Vec::new();
            if let Some(item) = check
                .usage
                .iter()
                .find(|i| i.source == UsageSource::ContentUsage && i.category == category)
            {
                stated.push((UsageOrigin::RobotsTxt, item.preference));
            }
            if let HeaderUsage::Stated(members) = header
                && let Some(member) = members.iter().find(|m| m.category == category)
            {
                stated.push((UsageOrigin::Header, member.preference));
            }
            let value = [Preference::Disallowed, Preference::Allowed]
                .into_iter()
                .find(|p| stated.iter().any(|(_, s)| s == p));
            Combined {
                category,
                value,
                sources: stated.into_iter().map(|(origin, _)| origin).collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
