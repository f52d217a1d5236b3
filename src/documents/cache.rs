//! Documents kept per URL by the rules robotsd's robots.txt copies are kept by: the same policy
//! state machine ([`crate::cache::policy`]), so lifetimes (`Cache-Control` within the minimum
//! and maximum), the backoff after 429/5xx/network failures with its retry times and the 30-day
//! use of the last good copy, and refusals, all mean the same for a document of any
//! [`DocumentKind`] (an RSL license, an origin's `tdmrep.json`).
//!
//! At most one fetch of a URL runs at a time: lookups that need a document nobody holds wait for
//! the one fetch (bounded by the fetch's own time limit); an expired document is answered at once
//! while one background refresh runs; during a backoff nothing is sent before the retry time.
//! Entries are weighed by the bytes their document holds and bounded by the cache's capacity. A
//! document that would take more than [`DOCUMENT_SHARE`] of it is not held: its entry keeps the
//! outcome (invalid, charged as an entry without a document) for the copy's lifetime, so that
//! the cache neither flushes every other document for it nor drops it and fetches it again on
//! every lookup.
//!
//! Bodies are parsed off the async workers (`parser.rs`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use url::Url;

use super::DocumentKind;
use super::parser::ParserPool;
use crate::cache::FleetConfig;
use crate::cache::Lookup;
use crate::cache::policy::{FetchResult, OriginState, PolicyConfig};
use crate::clock::Clock;
use crate::fetch::{DocumentOutcome, Fetcher};
use crate::fetch_runtime::FetchRuntime;
use crate::kept::allocation;
use crate::origin::MAX_URL_BYTES;
use crate::store::Store;

/// What a successful fetch of a document's URL gave: a document, or a stable reason there is
/// none.
#[derive(Debug)]
pub enum Held<K: DocumentKind> {
    /// The document.
    Document(Arc<K::Document>),
    /// A body that is not a usable document of its kind.
    Invalid(K::Invalid),
    /// A 4xx, or a redirect that led nowhere: no document at that URL. The reason, at most
    /// [`crate::kept::MAX_KEPT_TEXT_BYTES`] (one read from the shared store is cut there).
    Missing(String),
}

impl<K: DocumentKind> Clone for Held<K> {
    fn clone(&self) -> Self {
        match self {
            Held::Document(doc) => Held::Document(Arc::clone(doc)),
            Held::Invalid(error) => Held::Invalid(error.clone()),
            Held::Missing(why) => Held::Missing(why.clone()),
        }
    }
}

impl<K: DocumentKind> Held<K> {
    /// Heap bytes held, for the weigher.
    pub fn heap_size(&self) -> usize {
        match self {
            Held::Document(doc) => K::document_heap_size(doc),
            Held::Invalid(error) => K::invalid_heap_size(error),
            Held::Missing(why) => crate::kept::string(why),
        }
    }
}

/// What the fetch layer observed, kept with the copy or the backoff.
#[derive(Debug, Clone)]
pub struct DocumentMeta {
    /// The final HTTP status, when a response was received.
    pub status: Option<u16>,
    /// When the fetch started.
    pub fetched_at: SystemTime,
    /// How long it took.
    pub duration: Duration,
    /// The URL the document came from, after redirects: at most
    /// [`crate::origin::MAX_URL_BYTES`] (robotsd fetches no longer URL).
    pub final_url: String,
    /// Body bytes read.
    pub bytes: usize,
    /// The body was cut at the size limit.
    pub truncated: bool,
    /// SHA-256 of the body read, when there was one.
    pub sha256: Option<[u8; 32]>,
    /// Why the fetch failed or was refused, for answers: at most
    /// [`crate::kept::MAX_KEPT_TEXT_BYTES`] (an error's text can hold a URL a site chose).
    pub error: Option<String>,
}

impl DocumentMeta {
    /// Heap bytes held, for the weigher.
    pub fn heap_size(&self) -> usize {
        crate::kept::string(&self.final_url) + self.error.as_ref().map_or(0, crate::kept::string)
    }
}

/// A run of failures to fetch a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentBackoff {
    /// The first failure of the run.
    pub since: SystemTime,
    /// Failures in a row.
    pub failures: u32,
    /// No request before this.
    pub next_retry: SystemTime,
    /// Why the last fetch failed.
    pub last_error: String,
}

/// What a lookup is answered from for one document's URL.
#[derive(Debug)]
pub enum DocumentState<K: DocumentKind> {
    /// A fetched document (during a backoff: the last good one, within the last-copy window).
    Held(Held<K>),
    /// Never fetched successfully, or the last good copy is too old: the fetch failed.
    Failed(String),
    /// The URL, or a redirect's destination, is one robotsd will not contact.
    Refused(String),
}

/// A document URL's state and where it came from.
#[derive(Debug)]
pub struct DocumentView<K: DocumentKind> {
    /// The document, or why there is none.
    pub state: DocumentState<K>,
    /// The fetch the state comes from, if any.
    pub meta: Option<DocumentMeta>,
    /// When the copy expires.
    pub expires_at: Option<SystemTime>,
    /// How the cache was used.
    pub cache: Lookup,
    /// The current backoff, while the URL is unreachable.
    pub backoff: Option<DocumentBackoff>,
}

/// One document URL's entry.
pub(super) struct Entry<K: DocumentKind> {
    /// The URL, parsed once.
    url: Url,
    /// The URL as written where it was found: the cache's key.
    key: String,
    state: Mutex<OriginState<DocumentMeta, Held<K>>>,
    fetching: Arc<tokio::sync::Mutex<()>>,
    weight: AtomicU32,
}

/// A document URL known to be an absolute http(s) URL, and its cache entry
/// ([`DocumentCache::resolve`]).
pub struct DocumentHandle<K: DocumentKind>(Arc<Entry<K>>);

impl<K: DocumentKind> Clone for DocumentHandle<K> {
    fn clone(&self) -> Self {
        DocumentHandle(Arc::clone(&self.0))
    }
}

impl<K: DocumentKind> std::fmt::Debug for DocumentHandle<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DocumentHandle").field(&self.0.key).finish()
    }
}

/// `written` as a document URL: an absolute http(s) URL with a host, within [`MAX_URL_BYTES`] as
/// written and once parsed (percent-encoding can triple it), as a checked URL is: the entry
/// keeps it, and its fetch's final URL.
pub fn document_url(written: &str) -> Option<Url> {
    if written.len() > MAX_URL_BYTES {
        return None;
    }
    Url::parse(written).ok().filter(|u| {
        matches!(u.scheme(), "http" | "https")
            && u.host().is_some()
            && u.as_str().len() <= MAX_URL_BYTES
    })
}

impl<K: DocumentKind> Entry<K> {
    /// Bytes charged for the entry (its map key apart): the fixed overhead, its URL as parsed
    /// and as written, and what its state holds.
    fn held_bytes(&self) -> u32 {
        let held = allocation(self.url.as_str().len())
            + allocation(self.key.len())
            + self
                .lock()
                .heap_size(DocumentMeta::heap_size, Held::heap_size);
        u32::try_from(held)
            .unwrap_or(u32::MAX)
            .saturating_add(ENTRY_OVERHEAD_BYTES)
    }

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, OriginState<DocumentMeta, Held<K>>> {
        // Updates are single assignments: a poisoned lock still holds a whole state.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// What document fetches ended in, for metrics: a closed set.
pub const FETCH_OUTCOMES: [&str; 5] = ["document", "invalid", "missing", "unreachable", "refused"];

/// Counters the metrics layer reads.
#[derive(Debug, Default)]
pub struct DocumentStats {
    /// Fetches by outcome, in [`FETCH_OUTCOMES`] order.
    pub fetches: [std::sync::atomic::AtomicU64; 5],
}

/// Bytes charged for an entry besides its document.
const ENTRY_OVERHEAD_BYTES: u32 = 512;

/// The most of a cache's capacity one document may take: an eighth (2 MiB of `--rsl-capacity`'s
/// default 16 MiB, ten times the heaviest license measured in BENCHMARKS.md), so that one site's
/// document never flushes more than an eighth of everyone's, and one always fits.
pub const DOCUMENT_SHARE: u64 = 8;

/// The store, as a document cache uses it. Defined beside the cache that holds it rather than
/// in fleet.rs, which reads and writes through it: fleet.rs names the cache's entries, so it
/// stands above this file (issue 42).
#[derive(Debug, Clone)]
pub(crate) struct DocumentFleet {
    pub(crate) store: Store,
    pub(crate) config: FleetConfig,
}

/// Documents of one kind by URL. Cheap to clone; clones share everything.
pub struct DocumentCache<K: DocumentKind> {
    entries: moka::sync::Cache<String, Arc<Entry<K>>>,
    pub(super) fetcher: Fetcher,
    pub(super) policy: Arc<PolicyConfig>,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) limits: K::Limits,
    pub(super) parsers: ParserPool,
    /// The most bytes one document may be charged ([`DOCUMENT_SHARE`]).
    pub(super) share: u64,
    fleet: Option<DocumentFleet>,
    stats: Arc<DocumentStats>,
    fetch_runtime: FetchRuntime,
}

impl<K: DocumentKind> Clone for DocumentCache<K> {
    fn clone(&self) -> Self {
        DocumentCache {
            entries: self.entries.clone(),
            fetcher: self.fetcher.clone(),
            policy: Arc::clone(&self.policy),
            clock: Arc::clone(&self.clock),
            limits: self.limits,
            parsers: self.parsers.clone(),
            share: self.share,
            fleet: self.fleet.clone(),
            stats: Arc::clone(&self.stats),
            fetch_runtime: self.fetch_runtime.clone(),
        }
    }
}

impl<K: DocumentKind> std::fmt::Debug for DocumentCache<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DocumentCache")
            .field("kind", &K::NAME)
            .field("entries", &self.entries.entry_count())
            .finish_non_exhaustive()
    }
}

impl<K: DocumentKind> DocumentCache<K> {
    /// A cache of at most `capacity_bytes`, fetching with `fetcher` (its destination policy,
    /// limits and user agent) by `policy`'s rules, on `clock`.
    pub fn new(
        capacity_bytes: u64,
        fetcher: Fetcher,
        policy: PolicyConfig,
        clock: Arc<dyn Clock>,
    ) -> DocumentCache<K> {
        let entries = moka::sync::Cache::builder()
            .max_capacity(capacity_bytes)
            .weigher(|url: &String, entry: &Arc<Entry<K>>| {
                let key = u32::try_from(allocation(url.len())).unwrap_or(u32::MAX);
                key.saturating_add(entry.weight.load(Ordering::Relaxed))
            })
            .build();
        DocumentCache {
            entries,
            fetcher: fetcher.with_clock(Arc::clone(&clock)),
            policy: Arc::new(policy),
            clock,
            limits: K::Limits::default(),
            parsers: ParserPool::default(),
            share: capacity_bytes / DOCUMENT_SHARE,
            fleet: None,
            stats: Arc::default(),
            fetch_runtime: FetchRuntime::caller(),
        }
    }

    /// The same cache, fetching on `runtime` (by default, on the runtime of the request that
    /// needs the document).
    pub fn with_fetch_runtime(mut self, runtime: FetchRuntime) -> DocumentCache<K> {
        self.fetch_runtime = runtime;
        self
    }

    /// The counters.
    pub fn stats(&self) -> &DocumentStats {
        &self.stats
    }

    /// The same cache, sharing documents with other replicas through `store` (`--redis-url`).
    pub fn with_store(mut self, store: Store, config: FleetConfig) -> DocumentCache<K> {
        self.fleet = Some(DocumentFleet { store, config });
        self
    }

    /// Documents held and the bytes charged for them, after pending housekeeping.
    pub fn usage(&self) -> (u64, u64) {
        self.entries.run_pending_tasks();
        (self.entries.entry_count(), self.entries.weighted_size())
    }

    /// The entry of the document URL `written` (as where it was found writes it), made when
    /// there is none; `None` when it is not an absolute http(s) URL within [`MAX_URL_BYTES`]
    /// ([`document_url`]). A URL asked about before is not parsed again.
    pub fn resolve(&self, written: &str) -> Option<DocumentHandle<K>> {
        if let Some(entry) = self.entries.get(written) {
            return Some(DocumentHandle(entry));
        }
        let url = document_url(written)?;
        let entry = self.entries.get_with(written.to_owned(), || {
            let entry = Entry {
                url,
                key: written.to_owned(),
                state: Mutex::new(OriginState::default()),
                fetching: Arc::new(tokio::sync::Mutex::new(())),
                weight: AtomicU32::new(0),
            };
            entry.weight.store(entry.held_bytes(), Ordering::Relaxed);
            Arc::new(entry)
        });
        Some(DocumentHandle(entry))
    }

    /// The entry of `written` if there is one, without making it.
    pub fn held(&self, written: &str) -> Option<DocumentHandle<K>> {
        self.entries.get(written).map(DocumentHandle)
    }

    /// What to answer from for the document now if that needs no fetch in the foreground.
    pub fn peek(&self, handle: &DocumentHandle<K>) -> Option<DocumentView<K>> {
        let entry = &handle.0;
        self.answer(&entry.url, &entry.key, entry, Lookup::Hit)
    }

    /// What to answer from for the document now; fetches, and waits for the fetch, when nothing
    /// is known; starts one background fetch when the copy has expired or a retry is due.
    pub async fn lookup(&self, handle: &DocumentHandle<K>) -> DocumentView<K> {
        let entry = &handle.0;
        let (url, key) = (&entry.url, entry.key.as_str());
        if let Some(view) = self.answer(url, key, entry, Lookup::Hit) {
            return view;
        }
        let (guard, coalesced) = match Arc::clone(&entry.fetching).try_lock_owned() {
            Ok(guard) => (guard, false),
            Err(_) => (Arc::clone(&entry.fetching).lock_owned().await, true),
        };
        let lookup = if coalesced {
            Lookup::Coalesced
        } else {
            Lookup::Miss
        };
        if coalesced && let Some(view) = self.answer(url, key, entry, lookup) {
            return view;
        }
        // Where fetches run, holding the entry's lock to the end: a request that stops waiting
        // leaves the fetch to finish for the requests that wait on the lock.
        let fetch = {
            let (cache, url, key, entry) =
                (self.clone(), url.clone(), key.to_owned(), Arc::clone(entry));
            self.fetch_runtime.spawn(async move {
                let shared = cache.fetch(&url, &key, &entry).await;
                drop(guard);
                shared
            })
        };
        let shared = match fetch.await {
            Ok(shared) => shared,
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            // The fetch threads stopped (the service is ending): nothing was fetched.
            Err(_) => false,
        };
        let lookup = if shared { Lookup::Shared } else { lookup };
        self.answer(url, key, entry, lookup)
            .unwrap_or_else(|| DocumentView {
                state: DocumentState::Failed("the document was not fetched".into()),
                meta: None,
                expires_at: None,
                cache: lookup,
                backoff: None,
            })
    }

    /// The view of the entry's state, `None` when there is nothing to answer from yet. Starts a
    /// background fetch when one is due.
    fn answer(
        &self,
        url: &Url,
        key: &str,
        entry: &Arc<Entry<K>>,
        lookup: Lookup,
    ) -> Option<DocumentView<K>> {
        let now = self.clock.now();
        let state = entry.lock();
        let config = &self.policy;
        let (view, refresh) = if let Some(backoff) = &state.backoff {
            let elapsed = now.saturating_duration_since(backoff.since);
            let copy = state
                .copy
                .as_ref()
                .filter(|_| elapsed < config.last_copy_window);
            let backoff_view = DocumentBackoff {
                since: backoff.since.to_system(),
                failures: backoff.failures,
                next_retry: backoff.next_retry.to_system(),
                last_error: backoff.last.error.clone().unwrap_or_default(),
            };
            let view = match copy {
                Some(copy) => DocumentView {
                    state: DocumentState::Held(copy.rules.clone()),
                    meta: Some(copy.meta.clone()),
                    expires_at: Some(copy.expires_at.to_system()),
                    cache: lookup,
                    backoff: Some(backoff_view),
                },
                None => DocumentView {
                    state: DocumentState::Failed(backoff_view.last_error.clone()),
                    meta: Some(backoff.last.clone()),
                    expires_at: None,
                    cache: lookup,
                    backoff: Some(backoff_view),
                },
            };
            (view, now >= backoff.next_retry)
        } else if let Some(refusal) = &state.refusal {
            let view = DocumentView {
                state: DocumentState::Refused(refusal.meta.error.clone().unwrap_or_default()),
                meta: Some(refusal.meta.clone()),
                expires_at: Some(refusal.expires_at.to_system()),
                cache: lookup,
                backoff: None,
            };
            (view, now >= refusal.expires_at)
        } else if let Some(copy) = &state.copy {
            let stale = now >= copy.expires_at;
            let view = DocumentView {
                state: DocumentState::Held(copy.rules.clone()),
                meta: Some(copy.meta.clone()),
                expires_at: Some(copy.expires_at.to_system()),
                cache: if stale && lookup == Lookup::Hit {
                    Lookup::Stale
                } else {
                    lookup
                },
                backoff: None,
            };
            (view, stale)
        } else {
            return None;
        };
        drop(state);
        if refresh {
            self.refresh_in_background(url, key, entry);
        }
        Some(view)
    }

    /// One background fetch, unless one is running.
    fn refresh_in_background(&self, url: &Url, key: &str, entry: &Arc<Entry<K>>) {
        let Ok(guard) = Arc::clone(&entry.fetching).try_lock_owned() else {
            return;
        };
        let (cache, url, key, entry) =
            (self.clone(), url.clone(), key.to_owned(), Arc::clone(entry));
        self.fetch_runtime.spawn(async move {
            // Checked again under the lock: another fetch may have just completed.
            if entry.lock().fetch_due(cache.clock.now(), &cache.policy) {
                cache.fetch(&url, &key, &entry).await;
            }
            drop(guard);
        });
    }

    /// Fetches `url`, through the fleet when there is one; the caller holds the entry's fetch
    /// lock. `true` when another replica's result was taken instead.
    async fn fetch(&self, url: &Url, key: &str, entry: &Arc<Entry<K>>) -> bool {
        match &self.fleet {
            Some(fleet) => self.fetch_shared(url, key, entry, fleet).await,
            None => {
                self.fetch_now(url, key, entry).await;
                false
            }
        }
    }

    /// Fetches `url` and takes the outcome in; the body read, when a document was read.
    pub(super) async fn fetch_now(
        &self,
        url: &Url,
        key: &str,
        entry: &Arc<Entry<K>>,
    ) -> Option<bytes::Bytes> {
        let outcome = self.fetcher.fetch_document(url).await;
        let body = match &outcome {
            DocumentOutcome::Body { body, .. } => Some(body.clone()),
            _ => None,
        };
        let result = self.result(outcome).await;
        let kind = match &result {
            FetchResult::Success {
                rules: Held::Document(_),
                ..
            } => 0,
            FetchResult::Success {
                rules: Held::Invalid(_),
                ..
            } => 1,
            FetchResult::Success { .. } => 2,
            // Documents are never revalidated: `read` makes a 304 unreachable.
            FetchResult::Unreachable { .. } | FetchResult::NotModified { .. } => 3,
            FetchResult::Refused { .. } => 4,
        };
        self.stats.fetches[kind].fetch_add(1, Ordering::Relaxed);
        let now = self.clock.now();
        entry
            .lock()
            .apply(result, now, rand::random::<f64>(), &self.policy);
        self.reweigh(key, entry);
        body
    }

    /// Charges the entry for what it holds now: the document, and every string its fetches
    /// left (final URLs, reasons, error texts), each at what its allocation costs.
    pub(super) fn reweigh(&self, key: &str, entry: &Arc<Entry<K>>) {
        let weight = entry.held_bytes();
        if entry.weight.swap(weight, Ordering::Relaxed) != weight {
            // Inserting again is what makes the cache weigh the entry anew.
            self.entries.insert(key.to_owned(), Arc::clone(entry));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_url_is_at_most_8_kib_as_written_and_as_parsed() {
        let of = |path: String| format!("https://example.com/{path}");
        let fits = of("a".repeat(MAX_URL_BYTES - of(String::new()).len()));
        assert_eq!(
            document_url(&fits).map(|u| u.as_str().len()),
            Some(MAX_URL_BYTES)
        );
        assert_eq!(document_url(&format!("{fits}a")), None);
        // 6 KB as written, 18 KB once percent-encoded.
        assert_eq!(document_url(&of("é".repeat(3000))), None);
        assert!(document_url(&of("é".repeat(1000))).is_some());
    }
}
