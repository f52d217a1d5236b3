//! W3C TDMRep's origin-wide file (`--tdmrep`, docs/page.md "TDMRep"): each origin's
//! `/.well-known/tdmrep.json`, fetched through the robots.txt fetch path and kept by robots.txt's
//! rules as a kind of document ([`TdmRep`], [`crate::documents`]), read with the page crate
//! ([`robotsd_page::tdm::TdmFile`]), and matched against a page's URL for the first layer of its
//! TDMRep answer (the page's headers and `meta` tags supersede it).

use robotsd_page::tdm::{FileRule, TdmFile, TdmFileError};

use crate::documents::{
    DocumentCache, DocumentHandle, DocumentKind, DocumentState, DocumentView, Held,
};
use crate::kept::{allocation, string};
use crate::origin::Origin;

/// The path of the file on every origin.
pub const WELL_KNOWN_PATH: &str = "/.well-known/tdmrep.json";

/// Why a fetched `tdmrep.json` is not a file of rules robotsd reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TdmInvalid {
    /// Not the JSON array TDMRep defines.
    #[error("{0}")]
    File(TdmFileError),
    /// Cut at the fetch's size limit: the JSON does not end.
    #[error("longer than robotsd reads (cut at the fetch's size limit)")]
    Truncated,
    /// Heavier than its share of `--tdmrep-capacity`.
    #[error("{bytes} bytes once read, over this file's share of --tdmrep-capacity ({share})")]
    TooHeavy {
        /// What it would hold.
        bytes: usize,
        /// The most one file may hold.
        share: u64,
    },
    /// No parser came free in time; read again later.
    #[error("not read: no parser free within {0} ms")]
    Busy(u64),
    /// The parse outlived its budget; read again later.
    #[error("not read within {0} ms")]
    Overtime(u64),
    /// The parser failed.
    #[error("the parser failed")]
    ParserFailed,
}

/// The bounds of a parse: the page crate's own ([`robotsd_page::tdm::MAX_FILE_RULES`] rules,
/// values of at most [`robotsd_page::tdm::MAX_FILE_VALUE_BYTES`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct TdmLimits;

/// TDMRep's well-known files, as a kind of document robotsd keeps.
#[derive(Debug, Clone, Copy)]
pub struct TdmRep;

impl DocumentKind for TdmRep {
    type Document = TdmFile;
    type Invalid = TdmInvalid;
    type Limits = TdmLimits;
    const NAME: &'static str = "tdmrep";
    const STORE_PREFIX: &'static str = "tdmrep:";

    fn parse(body: &[u8], truncated: bool, _: &TdmLimits) -> Result<TdmFile, TdmInvalid> {
        if truncated {
            return Err(TdmInvalid::Truncated);
        }
        TdmFile::parse(body).map_err(TdmInvalid::File)
    }
    fn document_heap_size(file: &TdmFile) -> usize {
        allocation(file.rules.capacity() * std::mem::size_of::<FileRule>())
            + file
                .rules
                .iter()
                .map(|r| string(&r.location) + r.policy.as_ref().map_or(0, string))
                .sum::<usize>()
    }
    fn invalid_heap_size(invalid: &TdmInvalid) -> usize {
        match invalid {
            TdmInvalid::File(TdmFileError::Json(text)) => string(text),
            _ => 0,
        }
    }
    fn too_heavy(bytes: usize, share: u64) -> TdmInvalid {
        TdmInvalid::TooHeavy { bytes, share }
    }
    fn busy(budget_ms: u64) -> TdmInvalid {
        TdmInvalid::Busy(budget_ms)
    }
    fn overtime(budget_ms: u64) -> TdmInvalid {
        TdmInvalid::Overtime(budget_ms)
    }
    fn parser_failed() -> TdmInvalid {
        TdmInvalid::ParserFailed
    }
}

/// What an origin's file says of one URL, and why when it says nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WellKnownState {
    /// A rule of the file covers the URL (the first that matches).
    Rule(FileRule),
    /// The file was read, and no rule covers the URL: the reservation is unset by it.
    NoRule,
    /// There is no file (a 4xx, or a redirect to nowhere): the origin does not use TDMRep's file.
    Missing(String),
    /// A file that is not TDMRep's JSON array of rules.
    Invalid(String),
    /// It could not be fetched, and no good copy is held.
    Failed(String),
    /// The URL, or a redirect's destination, is one robotsd will not contact.
    Refused(String),
}

/// An origin's file, for one URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WellKnown {
    /// The file's URL.
    pub url: String,
    /// What it says.
    pub state: WellKnownState,
}

/// The files, by origin. Cheap to clone.
#[derive(Clone, Debug)]
pub struct TdmRepFiles {
    cache: DocumentCache<TdmRep>,
}

impl TdmRepFiles {
    /// Files kept in `cache`.
    pub fn new(cache: DocumentCache<TdmRep>) -> TdmRepFiles {
        TdmRepFiles { cache }
    }

    /// The cache.
    pub fn cache(&self) -> &DocumentCache<TdmRep> {
        &self.cache
    }

    /// What `origin`'s file says of `url` (a URL of that origin), fetching the file when it is
    /// not held.
    pub async fn for_url(&self, origin: &Origin, url: &str) -> WellKnown {
        let file_url = format!("{}{WELL_KNOWN_PATH}", origin.key());
        let state = match self.cache.resolve(&file_url) {
            Some(handle) => state_for(self.cache.lookup(&handle).await, url),
            // An origin's key and the path always make an absolute URL within bounds.
            None => WellKnownState::Failed("not a URL robotsd fetches".into()),
        };
        WellKnown {
            url: file_url,
            state,
        }
    }

    /// The entry of `origin`'s file, if held, for tests and metrics.
    pub fn held(&self, origin: &Origin) -> Option<DocumentHandle<TdmRep>> {
        self.cache
            .held(&format!("{}{WELL_KNOWN_PATH}", origin.key()))
    }
}

fn state_for(view: DocumentView<TdmRep>, url: &str) -> WellKnownState {
    match view.state {
        DocumentState::Held(Held::Document(file)) => match file.rule_for(url) {
            Some(rule) => WellKnownState::Rule(rule.clone()),
            None => WellKnownState::NoRule,
        },
        DocumentState::Held(Held::Invalid(invalid)) => WellKnownState::Invalid(invalid.to_string()),
        DocumentState::Held(Held::Missing(why)) => WellKnownState::Missing(why),
        DocumentState::Failed(why) => WellKnownState::Failed(why),
        DocumentState::Refused(why) => WellKnownState::Refused(why),
    }
}
