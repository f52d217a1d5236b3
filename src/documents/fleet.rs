//! A document cache's side of the shared store (`--redis-url`): a document URL's state is
//! written to the store after each fetch, in the same record format as an origin's robots.txt
//! (under the key `<kind's prefix><URL>`, `rsl:…` or `tdmrep:…`, never an origin), and read from
//! it before fetching; the fleet-wide lease makes one replica fetch while the others wait for its
//! result. As for robots.txt, the store is never needed to answer: when it fails, a replica
//! fetches by itself, still one fetch at a time per URL.

use std::sync::Arc;
use std::time::Duration;

use url::Url;

use super::DocumentKind;
use super::cache::{DocumentCache, DocumentFleet, DocumentMeta, Entry, Held};
use crate::cache::policy::{Backoff, Copy, OriginState};
use crate::clock::Timestamp;
use crate::store::record::{StoredBackoff, StoredCopy, StoredFetch, from_ms, to_ms};
use crate::store::{BodyWrite, Lease, Record};

type State<K> = OriginState<DocumentMeta, Held<K>>;

/// The store key of a document URL: apart from every origin's (`scheme://…`) and from other
/// kinds'.
fn store_key<K: DocumentKind>(url: &Url) -> String {
    format!("{}{url}", K::STORE_PREFIX)
}

fn stored_fetch(meta: &DocumentMeta) -> StoredFetch {
    StoredFetch {
        status: meta.status,
        bytes: meta.bytes,
        truncated: meta.truncated,
        final_url: meta.final_url.clone(),
        redirects: 0,
        fetched_at_ms: to_ms(meta.fetched_at),
        duration_ms: u64::try_from(meta.duration.as_millis()).unwrap_or(u64::MAX),
        address: None,
        etag: None,
        last_modified: None,
        challenge: None,
    }
}

/// The meta of a stored fetch (its body's SHA-256 is set by whoever reads the body).
fn document_meta(stored: &StoredFetch, error: Option<String>) -> DocumentMeta {
    DocumentMeta {
        status: stored.status,
        fetched_at: from_ms(stored.fetched_at_ms),
        duration: Duration::from_millis(stored.duration_ms),
        final_url: stored.final_url.clone(),
        bytes: stored.bytes,
        truncated: stored.truncated,
        sha256: None,
        error,
    }
}

/// When the state last took in a fetch's outcome: which of two states is newer.
fn last_change<K: DocumentKind>(state: &State<K>) -> Option<Timestamp> {
    let copy = state.copy.as_ref().map(|c| c.fetched_at);
    let backoff = state
        .backoff
        .as_ref()
        .map(|b| Timestamp::from_system(b.last.fetched_at) + b.last.duration);
    copy.max(backoff)
}

/// The record of a state (refusals stay with the replica that saw them, as for robots.txt).
fn export<K: DocumentKind>(state: &State<K>) -> Record {
    Record {
        copy: state.copy.as_ref().map(|copy| StoredCopy {
            fetch: stored_fetch(&copy.meta),
            no_robots: match &copy.rules {
                Held::Missing(why) => Some(why.clone()),
                _ => None,
            },
            kept_at_ms: copy.fetched_at.unix_millis(),
            expires_at_ms: copy.expires_at.unix_millis(),
        }),
        backoff: state.backoff.as_ref().map(|b| StoredBackoff {
            since_ms: b.since.unix_millis(),
            failures: b.failures,
            next_retry_ms: b.next_retry.unix_millis(),
            last: stored_fetch(&b.last),
            reason: b.last.error.clone().unwrap_or_default(),
        }),
    }
}

impl<K: DocumentKind> DocumentCache<K> {
    /// The state a record describes, its document read again from the stored body (on a
    /// parser, as a fetched one is); `None` when the record cannot be used, or when the body
    /// could not be read for a passing reason (no parser free): this replica fetches then.
    async fn import(&self, record: &Record, body: Option<Vec<u8>>) -> Option<State<K>> {
        let copy = match &record.copy {
            None => None,
            Some(stored) => {
                let (held, sha256) = match (&stored.no_robots, body) {
                    (Some(why), _) => (Held::Missing(why.clone()), None),
                    (None, Some(body)) => {
                        let sha256 = super::read::sha256(&body);
                        let read = self.read(body.into(), stored.fetch.truncated).await;
                        if read.transient {
                            return None;
                        }
                        (read.held, Some(sha256))
                    }
                    (None, None) => return None,
                };
                let mut meta = document_meta(&stored.fetch, None);
                meta.sha256 = sha256;
                Some(Copy {
                    rules: held,
                    fetched_at: Timestamp::from_unix_millis(stored.kept_at_ms),
                    expires_at: Timestamp::from_unix_millis(stored.expires_at_ms),
                    meta,
                })
            }
        };
        let backoff = record.backoff.as_ref().map(|b| Backoff {
            since: Timestamp::from_unix_millis(b.since_ms),
            failures: b.failures,
            next_retry: Timestamp::from_unix_millis(b.next_retry_ms),
            last: document_meta(&b.last, Some(b.reason.clone())),
        });
        let last_fetch = copy.as_ref().map(|c| c.fetched_at).max(
            backoff
                .as_ref()
                .map(|b| Timestamp::from_system(b.last.fetched_at) + b.last.duration),
        );
        Some(OriginState {
            copy,
            backoff,
            refusal: None,
            last_fetch,
        })
    }

    /// Takes the store's state for `url` when it is newer than this replica's: `true` when it
    /// did.
    async fn pull(
        &self,
        url: &Url,
        key: &str,
        entry: &Arc<Entry<K>>,
        fleet: &DocumentFleet,
    ) -> bool {
        let max = self.fetcher.config().max_body_bytes;
        let Ok(Some(loaded)) = fleet.store.load(&store_key::<K>(url), max).await else {
            return false;
        };
        self.take_in(key, entry, loaded).await
    }

    /// Takes in a record read from the store if it is newer than the entry's state: `true` when
    /// it did.
    async fn take_in(
        &self,
        key: &str,
        entry: &Arc<Entry<K>>,
        (record, body): (Record, Option<Vec<u8>>),
    ) -> bool {
        let Some(mut state) = self.import(&record, body).await else {
            return false;
        };
        {
            let mut local = entry.lock();
            if last_change(&state) <= last_change(&local) {
                return false;
            }
            state.last_fetch = state.last_fetch.max(local.last_fetch);
            *local = state;
        }
        self.reweigh(key, entry);
        true
    }

    /// Writes the entry's state after this replica's fetch; `body` is what the fetch read, if
    /// it read a document. Best effort: a store that fails only means the others fetch too.
    async fn push(
        &self,
        url: &Url,
        entry: &Arc<Entry<K>>,
        body: Option<&[u8]>,
        fleet: &DocumentFleet,
        lease: Option<&str>,
    ) {
        let Some((record, holds_body)) = ({
            let state = entry.lock();
            (state.refusal.is_none()).then(|| {
                let holds_body = state
                    .copy
                    .as_ref()
                    .is_some_and(|c| !matches!(c.rules, Held::Missing(_)));
                (export(&state), holds_body)
            })
        }) else {
            // A refusal is this replica's own: nothing is stored, the lease only let go.
            if let Some(token) = lease {
                let _ = fleet.store.release(&store_key::<K>(url), token).await;
            }
            return;
        };
        let write = match body {
            Some(body) => BodyWrite::Set(crate::store::record::deflate_body(body)),
            None if holds_body => BodyWrite::Keep,
            None => BodyWrite::Remove,
        };
        let ttl = self.policy.max_lifetime + self.policy.last_copy_window;
        let _ = fleet
            .store
            .save(&store_key::<K>(url), &record, &write, ttl, lease)
            .await;
    }

    /// Whether the entry's state calls for a fetch now.
    fn fetch_due(&self, entry: &Entry<K>) -> bool {
        entry.lock().fetch_due(self.clock.now(), &self.policy)
    }

    /// The fleet-wide single flight for a document URL, as for an origin's robots.txt: the
    /// replica that takes the lease fetches and stores; the others wait for its result, and
    /// fetch themselves only when the lease expires without one or the store fails. The caller
    /// holds the entry's fetch lock. `true` when the state came from another replica.
    pub(super) async fn fetch_shared(
        &self,
        url: &Url,
        key: &str,
        entry: &Arc<Entry<K>>,
        fleet: &DocumentFleet,
    ) -> bool {
        if self.pull(url, key, entry, fleet).await && !self.fetch_due(entry) {
            return true;
        }
        let lease = store_key::<K>(url);
        let token = format!("{:032x}", rand::random::<u128>());
        let deadline = tokio::time::Instant::now() + 2 * fleet.config.lease_ttl;
        loop {
            let max = self.fetcher.config().max_body_bytes;
            match fleet
                .store
                .try_lease(&lease, &token, fleet.config.lease_ttl, max)
                .await
            {
                Ok(Lease::Taken(record)) => {
                    // The previous holder stored its result before releasing the lease: the
                    // record came with it.
                    let taken = match record {
                        Some(record) => self.take_in(key, entry, record).await,
                        None => false,
                    };
                    let shared = taken && !self.fetch_due(entry);
                    if shared {
                        let _ = fleet.store.release(&lease, &token).await;
                    } else {
                        let body = self.fetch_now(url, key, entry).await;
                        self.push(url, entry, body.as_deref(), fleet, Some(&token))
                            .await;
                    }
                    return shared;
                }
                Ok(Lease::Held) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(fleet.config.poll_interval).await;
                    if self.pull(url, key, entry, fleet).await && !self.fetch_due(entry) {
                        return true;
                    }
                }
                Ok(Lease::Held) | Err(_) => break,
            }
        }
        let body = self.fetch_now(url, key, entry).await;
        self.push(url, entry, body.as_deref(), fleet, None).await;
        false
    }
}
