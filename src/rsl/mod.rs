//! RSL 1.0 license terms for a checked URL (`docs/usage.md`, "RSL licenses").
//!
//! A robots.txt names license documents with `License:` lines (the engine reports them). When
//! the operator turns it on (`--rsl`), robotsd fetches each document through the robots.txt
//! fetch path, keeps it per license URL by the robots.txt cache rules ([`crate::documents`], as
//! the kind [`Rsl`]), reads it within fixed bounds ([`document`]) and, for a URL that may be
//! fetched, reports the terms of
//! the `<content>` that covers it (`pattern`), or a typed state saying why there are none.
//! Nothing here changes a verdict, and no failure here fails a check.

pub mod document;
mod error;
mod pattern;
mod prescan;

use std::sync::Arc;

use robotsd_engine::RobotsTxt;

use crate::cache::Lookup;
use crate::documents::{
    DocumentBackoff, DocumentCache, DocumentHandle, DocumentKind, DocumentState, DocumentView, Held,
};
use crate::origin::Target;
pub use document::{Content, LicenseTerms, RslDocument};
pub use error::RslError;

/// RSL 1.0 license documents, as a kind of document robotsd keeps.
#[derive(Debug, Clone, Copy)]
pub struct Rsl;

impl DocumentKind for Rsl {
    type Document = RslDocument;
    type Invalid = RslError;
    type Limits = document::Limits;
    const NAME: &'static str = "rsl";
    const STORE_PREFIX: &'static str = "rsl:";

    fn parse(
        body: &[u8],
        truncated: bool,
        limits: &document::Limits,
    ) -> Result<RslDocument, RslError> {
        RslDocument::parse(body, truncated, limits)
    }
    fn document_heap_size(document: &RslDocument) -> usize {
        document.heap_size()
    }
    fn invalid_heap_size(invalid: &RslError) -> usize {
        invalid.heap_size()
    }
    fn too_heavy(bytes: usize, share: u64) -> RslError {
        RslError::TooHeavy { bytes, share }
    }
    fn busy(budget_ms: u64) -> RslError {
        RslError::Busy(budget_ms)
    }
    fn overtime(budget_ms: u64) -> RslError {
        RslError::Overtime(budget_ms)
    }
    fn parser_failed() -> RslError {
        RslError::ParserFailed
    }
}

/// License documents by license URL (`--rsl-capacity`).
pub type LicenseCache = DocumentCache<Rsl>;

/// A license URL's entry in the [`LicenseCache`].
pub type LicenseHandle = DocumentHandle<Rsl>;

/// A license URL's state and where it came from.
pub type LicenseView = DocumentView<Rsl>;

/// The longest license URL fetched, in bytes: the common bound on URLs (browsers, sitemaps).
/// A longer one is reported `not_fetched`, never cut to fit: a cut URL is another URL. It also
/// covers the lines the engine cut at its line limit (16,663 bytes), as those are longer.
pub const MAX_LICENSE_URL_BYTES: usize = 2_048;

/// `License:` lines looked at per check.
const MAX_SCANNED_LINES: usize = 1_000;

/// Distinct license URLs reported, and so fetched, for one robots.txt: a file of thousands of
/// `License:` lines costs one check a bounded number of fetches and gets an answer of bounded
/// size (the lines themselves are all in `/v1/robots`, and the answer counts the others in
/// `rsl_total`).
pub const MAX_REPORTED_PER_FILE: usize = crate::bounds::MAX_RSL_REPORTS;

/// Why a `License:` line has no terms for the URL: a closed set, as answers spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RslState {
    /// A `<content>` of the document covers the URL: its terms are given.
    Covered,
    /// The document is valid RSL, and none of its `<content>` elements covers the URL.
    NotCovered,
    /// The document could not be fetched (a 4xx, a 5xx, 429, a time-out, a network failure),
    /// and no good copy of it is held.
    FetchFailed,
    /// It was fetched, and is not an RSL 1.0 document robotsd can read (not XML, a DTD, the
    /// wrong namespace, over the size, nesting, attribute, namespace or text bounds, heavier
    /// than its share of `--rsl-capacity`, or not parsed within its time budget).
    Invalid,
    /// The license URL, or a redirect on the way, leads to a destination robotsd does not
    /// contact (a private address, unless allowed).
    Refused,
    /// Not fetched: not an absolute http(s) URL, longer than [`MAX_LICENSE_URL_BYTES`], or (in
    /// a batch past its deadline) not held yet.
    NotFetched,
}

impl RslState {
    /// The name answers use.
    pub fn as_str(self) -> &'static str {
        match self {
            RslState::Covered => "covered",
            RslState::NotCovered => "not_covered",
            RslState::FetchFailed => "fetch_failed",
            RslState::Invalid => "invalid",
            RslState::Refused => "refused",
            RslState::NotFetched => "not_fetched",
        }
    }
}

/// Where an answer's license document came from.
#[derive(Debug, Clone, PartialEq)]
pub struct RslSource {
    /// HTTP status of the fetch, if a response was received.
    pub status: Option<u16>,
    /// When it was fetched.
    pub fetched_at: Option<std::time::SystemTime>,
    /// When the copy expires.
    pub expires_at: Option<std::time::SystemTime>,
    /// SHA-256 of the document's bytes.
    pub sha256: Option<[u8; 32]>,
    /// Bytes read.
    pub bytes: Option<usize>,
    /// The URL it came from, after redirects.
    pub final_url: Option<String>,
    /// How the cache was used.
    pub cache: Lookup,
    /// The current backoff, while the document is unreachable.
    pub backoff: Option<DocumentBackoff>,
}

/// The terms one `License:` line gives a URL.
#[derive(Debug, Clone, PartialEq)]
pub struct RslReport {
    /// The license URL as written.
    pub license_url: String,
    /// The line of the `License:` directive.
    pub line: u32,
    /// Terms, or why there are none.
    pub state: RslState,
    /// Why, for states other than `covered` and `not_covered`.
    pub reason: Option<String>,
    /// The document, and the `<content>` elements that cover the URL that the answer shows
    /// (for `covered`).
    pub covered: Option<(Arc<RslDocument>, Vec<usize>)>,
    /// How many `<content>` elements cover the URL, shown or not.
    pub contents_total: usize,
    /// Whether `license_url` was cut or a covering `<content>` left out.
    pub truncated: bool,
    /// Where the document came from (`None` when it was not fetched).
    pub source: Option<RslSource>,
}

/// The license reports of an answer, and how many distinct license URLs its robots.txt names
/// (among its first 1,000 `License:` lines).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RslReports {
    /// One report per license URL, for the first [`MAX_REPORTED_PER_FILE`].
    pub reports: Vec<RslReport>,
    /// Distinct license URLs, reported or not.
    pub total: usize,
}

impl RslReport {
    fn new(license_url: &str, line: u32, state: RslState, reason: Option<String>) -> RslReport {
        let (license_url, truncated) =
            crate::bounds::cut_owned(license_url, crate::bounds::MAX_LICENSE_URL_JSON_BYTES);
        RslReport {
            license_url,
            line,
            state,
            reason,
            covered: None,
            contents_total: 0,
            truncated,
            source: None,
        }
    }
}

/// At least the bytes of the JSON `usage.rsl` shows `content` in: its texts as escaped, and a
/// generous allowance for the keys and punctuation around each (the writer's fixed parts).
fn content_json_size(content: &Content) -> usize {
    use crate::bounds::json_len;
    let text = |t: &str| json_len(t) + 3;
    let optional = |t: &Option<String>| t.as_deref().map_or(4, text);
    let scope = |s: &document::Scope| {
        40 + s
            .usage
            .iter()
            .chain(&s.user)
            .chain(&s.geo)
            .map(|v| text(v))
            .sum::<usize>()
    };
    let licenses: usize = content
        .licenses
        .iter()
        .map(|l| {
            40 + scope(&l.permits)
                + scope(&l.prohibits)
                + l.payment.as_ref().map_or(4, |p| {
                    80 + optional(&p.kind)
                        + optional(&p.standard)
                        + optional(&p.custom)
                        + p.amounts
                            .iter()
                            .map(|a| 30 + text(&a.value) + optional(&a.currency))
                            .sum::<usize>()
                })
        })
        .sum();
    100 + text(&content.url) + optional(&content.server) + optional(&content.lastmod) + licenses
}

/// Cuts the covering contents of `reports` to what an answer shows: at most
/// [`bounds::MAX_RSL_CONTENTS`](crate::bounds::MAX_RSL_CONTENTS) a report, and
/// [`bounds::MAX_RSL_CONTENTS_JSON_BYTES`](crate::bounds::MAX_RSL_CONTENTS_JSON_BYTES) of them
/// in all, in report order.
fn bound_contents(reports: &mut [RslReport]) {
    let mut budget = crate::bounds::MAX_RSL_CONTENTS_JSON_BYTES;
    for report in reports {
        let Some((doc, at)) = &mut report.covered else {
            continue;
        };
        let mut kept = 0;
        for &i in at.iter().take(crate::bounds::MAX_RSL_CONTENTS) {
            let size = content_json_size(&doc.contents[i]);
            if size > budget {
                break;
            }
            budget -= size;
            kept += 1;
        }
        if kept < at.len() {
            at.truncate(kept);
            report.truncated = true;
        }
    }
}

impl RslReport {
    /// The `<content>` elements that cover the URL, in document order (for `covered`).
    pub fn contents(&self) -> impl Iterator<Item = &Content> {
        self.covered
            .iter()
            .flat_map(|(doc, at)| at.iter().map(|&i| &doc.contents[i]))
    }
}

/// Which `<content>` elements of `doc` cover `target`: of those whose `url` matches, the most
/// specific, as RFC 9309 ranks rules (the longest path pattern). Every one tied for it is
/// returned, so that document order never decides (RSL 1.0 §3.1.1; `docs/usage.md`).
pub fn covering(doc: &RslDocument, target: &Target) -> Vec<usize> {
    let mut best = Vec::new();
    let mut longest = 0;
    for (i, content) in doc.contents.iter().enumerate() {
        if !content.pattern.matches(target) {
            continue;
        }
        let len = content.pattern.specificity;
        if best.is_empty() || len > longest {
            best.clear();
            longest = len;
        }
        if len == longest {
            best.push(i);
        }
    }
    best
}

/// License terms for checks: the license cache and how to use it. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Licenses {
    cache: LicenseCache,
}

impl Licenses {
    /// Terms from documents kept in `cache`.
    pub fn new(cache: LicenseCache) -> Licenses {
        Licenses { cache }
    }

    /// The cache.
    pub fn cache(&self) -> &LicenseCache {
        &self.cache
    }

    /// One report per distinct license URL of `robots`, in file order, for `target`; fetches the
    /// documents not held (concurrently) unless `held_only`, in which case those are
    /// `not_fetched`.
    pub async fn reports(
        &self,
        robots: &RobotsTxt,
        target: &Target,
        held_only: bool,
    ) -> RslReports {
        // At most MAX_REPORTED_PER_FILE entries: a linear search beats hashing.
        let mut seen: Vec<String> = Vec::new();
        // The others are only counted, by hash (a file of a thousand distinct lines is rare).
        let mut others = std::collections::HashSet::new();
        let hasher = std::hash::RandomState::new();
        let mut pending = Vec::new();
        // The first lines only: a file of a hundred thousand copies of one line costs a check
        // no more than a thousand.
        for license in robots.licenses().take(MAX_SCANNED_LINES) {
            let written = license.url.trim();
            if seen.iter().any(|s| s == written) {
                continue;
            }
            if seen.len() == MAX_REPORTED_PER_FILE {
                others.insert(std::hash::BuildHasher::hash_one(&hasher, written));
                continue;
            }
            seen.push(written.to_owned());
            let too_long = written.len() > MAX_LICENSE_URL_BYTES;
            let handle = match (too_long, held_only) {
                (true, _) => None,
                (false, true) => self.cache.held(written),
                (false, false) => self.cache.resolve(written),
            };
            let why = match handle {
                Some(handle) => {
                    pending.push(Ok((written.to_owned(), license.line, handle)));
                    continue;
                }
                None if too_long => "the License URL is longer than 2,048 bytes",
                None if crate::documents::document_url(written).is_none() => {
                    "not an absolute http(s) URL"
                }
                None => "not held yet (a batch past its deadline fetches nothing)",
            };
            pending.push(Err(RslReport::new(
                written,
                license.line,
                RslState::NotFetched,
                Some(why.to_owned()),
            )));
        }
        let lookup = |p: Result<(String, u32, LicenseHandle), RslReport>| async move {
            let (written, line, handle) = p?;
            let view = if held_only {
                self.cache.peek(&handle)
            } else {
                Some(self.cache.lookup(&handle).await)
            };
            Ok(match view {
                Some(view) => report(&written, line, view, target),
                None => RslReport::new(
                    &written,
                    line,
                    RslState::NotFetched,
                    Some("not held yet (a batch past its deadline fetches nothing)".into()),
                ),
            })
        };
        let done: Vec<Result<RslReport, RslReport>> = if pending.len() == 1 {
            // The usual file names one license: no join machinery for it.
            vec![lookup(pending.remove(0)).await]
        } else {
            futures_util::future::join_all(pending.into_iter().map(lookup)).await
        };
        let mut reports: Vec<RslReport> =
            done.into_iter().map(|r| r.unwrap_or_else(|r| r)).collect();
        bound_contents(&mut reports);
        RslReports {
            total: reports.len() + others.len(),
            reports,
        }
    }
}

/// The report of one license URL from its cached view.
fn report(license_url: &str, line: u32, view: LicenseView, target: &Target) -> RslReport {
    let source = RslSource {
        status: view.meta.as_ref().and_then(|m| m.status),
        fetched_at: view.meta.as_ref().map(|m| m.fetched_at),
        expires_at: view.expires_at,
        sha256: view.meta.as_ref().and_then(|m| m.sha256),
        bytes: view.meta.as_ref().map(|m| m.bytes),
        final_url: view.meta.as_ref().map(|m| m.final_url.clone()),
        cache: view.cache,
        backoff: view.backoff,
    };
    let (state, reason, covered) = match view.state {
        DocumentState::Held(Held::Document(doc)) => {
            let at = covering(&doc, target);
            if at.is_empty() {
                (RslState::NotCovered, None, None)
            } else {
                (RslState::Covered, None, Some((doc, at)))
            }
        }
        DocumentState::Held(Held::Invalid(error)) => {
            (RslState::Invalid, Some(error.to_string()), None)
        }
        DocumentState::Held(Held::Missing(why)) | DocumentState::Failed(why) => {
            (RslState::FetchFailed, Some(why), None)
        }
        DocumentState::Refused(why) => (RslState::Refused, Some(why), None),
    };
    RslReport {
        contents_total: covered.as_ref().map_or(0, |(_, at)| at.len()),
        covered,
        source: Some(source),
        ..RslReport::new(license_url, line, state, reason)
    }
}
