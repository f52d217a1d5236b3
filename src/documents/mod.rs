//! Documents robotsd fetches beside robots.txt, kept by robots.txt's rules: RSL license documents
//! (`crate::rsl`, `--rsl`) and origins' `/.well-known/tdmrep.json` (`crate::tdmrep`,
//! `--tdmrep`). Each is fetched through the robots.txt fetch path (destination policy, limits,
//! redirects), kept per URL by the same cache policy (lifetimes, backoff, the last good copy,
//! refusals: [`cache`]), parsed off the async workers within a time budget (`parser.rs`), and
//! shared through the store with `--redis-url` (`fleet.rs`). A [`DocumentKind`] says how one kind
//! is read.

pub mod cache;
mod fleet;
mod parser;
mod read;

pub use cache::{
    DOCUMENT_SHARE, DocumentBackoff, DocumentCache, DocumentHandle, DocumentMeta, DocumentState,
    DocumentStats, DocumentView, FETCH_OUTCOMES, Held, document_url,
};

/// How one kind of document is read and kept.
pub trait DocumentKind: Send + Sync + 'static {
    /// The parsed document.
    type Document: std::fmt::Debug + Send + Sync + 'static;
    /// Why a body is not a usable document (an answer shows it as text).
    type Invalid: std::fmt::Debug + std::fmt::Display + Clone + Send + Sync + 'static;
    /// The bounds a parse is held to.
    type Limits: std::fmt::Debug + Default + Copy + Send + Sync + 'static;

    /// The kind's name, for logs.
    const NAME: &'static str;
    /// The prefix of its keys in the shared store, apart from origins' and other kinds'.
    const STORE_PREFIX: &'static str;

    /// Reads a body (`truncated`: cut at the fetch's size limit) within `limits`.
    fn parse(
        body: &[u8],
        truncated: bool,
        limits: &Self::Limits,
    ) -> Result<Self::Document, Self::Invalid>;
    /// Heap bytes a document holds, for the cache's weigher.
    fn document_heap_size(document: &Self::Document) -> usize;
    /// Heap bytes a reason holds.
    fn invalid_heap_size(invalid: &Self::Invalid) -> usize;
    /// A document heavier than its share of the cache (`bytes` over `share`).
    fn too_heavy(bytes: usize, share: u64) -> Self::Invalid;
    /// No parser came free within the budget (milliseconds): read again later.
    fn busy(budget_ms: u64) -> Self::Invalid;
    /// The parse outlived the budget (milliseconds): read again later.
    fn overtime(budget_ms: u64) -> Self::Invalid;
    /// The parser failed (a bug, reported as such).
    fn parser_failed() -> Self::Invalid;
}
