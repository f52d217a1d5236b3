//! The shared, origin-keyed robots.txt cache (SEMANTICS.md §4 and §5): one entry per origin for
//! every user-agent, holding the parsed file (shared, never copied), what the fetch observed and
//! the backoff state, bounded by the bytes the parsed files hold.
//!
//! The rules live in [`policy`], a plain state machine; this layer only runs them: it asks the
//! policy what to do, fetches when told, and guarantees at most one fetch per origin at a time.
//! Checks for an origin whose robots.txt is being fetched wait for that fetch (bounded by the
//! fetch's own time limit) rather than starting another; an expired copy is answered at once
//! while one background refresh runs; during a backoff nothing is sent before the retry time,
//! however many checks arrive.

mod fetch_log;
mod fleet;
mod kept_body;
mod lease;
mod memo;
pub mod policy;
mod prior;
mod refresh;
mod remembered;
mod slots;
mod snapshot;
mod wtinylfu;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::clock::{Clock, TokioClock};
use crate::fetch::{FetchKind, FetchOutcome, Fetcher, Revalidate};
use crate::fetch_runtime::FetchRuntime;
use crate::origin::Origin;
use crate::store::{BreakerState, Store};
use fleet::Fleet;
pub use fleet::FleetConfig;
pub use kept_body::KeptBody;
use lease::Look;
pub use memo::{CopyMemo, MemoKey};
use policy::{Decision, FetchResult, OriginState, PolicyConfig};
use prior::Prior;
pub(crate) use remembered::Remembered;
use remembered::{Detail, fetch_result, state_weight};
use slots::{Slot, Slots};
pub use snapshot::{BackoffInfo, Basis, CopyInfo, Snapshot};
use snapshot::{snapshot_of, unreachable_after_fetch};

/// Cache settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheConfig {
    /// Most bytes of parsed robots.txt (and bookkeeping) held at once (256 MiB).
    pub capacity_bytes: u64,
    /// Lifetimes and backoff.
    pub policy: PolicyConfig,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            capacity_bytes: 256 * 1024 * 1024,
            policy: PolicyConfig::default(),
        }
    }
}

/// How the answer was obtained from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Lookup {
    /// A fresh copy, or a backoff answer, was there.
    Hit,
    /// Nothing was known: this check fetched.
    Miss,
    /// The copy had expired: answered from it while a refresh runs.
    Stale,
    /// Another check was fetching: this one waited for that fetch.
    Coalesced,
    /// Nothing was known here; another replica's result was taken from the shared store.
    Shared,
}

impl Lookup {
    /// The name used in answers, metric labels and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Lookup::Hit => "hit",
            Lookup::Miss => "miss",
            Lookup::Stale => "stale",
            Lookup::Coalesced => "coalesced",
            Lookup::Shared => "shared",
        }
    }
}

/// Counters the metrics layer reads.
#[derive(Debug, Default)]
pub struct CacheStats {
    /// Entries evicted to respect the capacity.
    pub evictions: AtomicU64,
    /// Checks answered `cache-full`: their origin's copy was dropped for memory within the
    /// minimum lifetime of its fetch, and no store held it.
    pub refusals: AtomicU64,
    /// Fetches sent to origins.
    pub fetches: AtomicU64,
    /// Fetches running now.
    pub fetches_in_flight: AtomicU64,
    /// Fetch leases taken in the shared store.
    pub leases_taken: AtomicU64,
    /// Waits for another replica's fetch that ended with its result.
    pub leases_waited: AtomicU64,
    /// Waits that ended without a result: the holder's lease expired, or the wait gave up.
    pub leases_expired: AtomicU64,
}

/// Told of every fetch: the kind of its outcome, how long it took and the bot challenge it met,
/// if any. The metrics layer installs one.
pub type FetchObserver =
    Arc<dyn Fn(FetchKind, Duration, Option<crate::fetch::challenge::Challenge>) + Send + Sync>;

/// The shared origin cache. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct OriginCache {
    slots: Slots,
    fetcher: Fetcher,
    policy: Arc<PolicyConfig>,
    clock: Arc<dyn Clock>,
    stats: Arc<CacheStats>,
    observer: Option<FetchObserver>,
    fleet: Option<Fleet>,
    fetch_runtime: FetchRuntime,
}

impl std::fmt::Debug for OriginCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OriginCache")
            .field("policy", &self.policy)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// What [`OriginCache::find`] has for an origin at once.
// The snapshot stays inline: it is the common case, and boxing it would spend the allocation
// this split exists to save.
#[allow(clippy::large_enum_variant)]
pub enum Found<'a> {
    /// The slot answers alone: a cached check's case, with nothing to wait for.
    Now(Snapshot),
    /// A fetch, another check's fetch, or the shared store, to wait for: boxed, so that the
    /// future of a check that waits for none of them stays small (a cached check moves it).
    Later(futures_util::future::BoxFuture<'a, Snapshot>),
}

/// An origin's entry, found by its key ([`OriginCache::known`]).
pub struct Known(Arc<Slot>);

impl Known {
    /// The entry's origin.
    pub fn origin(&self) -> &Origin {
        &self.0.origin
    }
}

impl std::fmt::Debug for Known {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Known").field(self.origin()).finish()
    }
}

impl OriginCache {
    /// A cache that fetches with `fetcher`, on tokio's clock.
    pub fn new(config: CacheConfig, fetcher: Fetcher) -> OriginCache {
        OriginCache::with_clock(config, fetcher, Arc::new(TokioClock::new()))
    }

    /// A cache on the given clock; its fetcher takes wall-clock time from the same clock.
    pub fn with_clock(config: CacheConfig, fetcher: Fetcher, clock: Arc<dyn Clock>) -> OriginCache {
        let stats = Arc::new(CacheStats::default());
        let policy = Arc::new(config.policy);
        OriginCache {
            slots: Slots::new(
                config.capacity_bytes,
                Arc::clone(&stats),
                Arc::clone(&clock),
                Arc::clone(&policy),
            ),
            fetcher: fetcher.with_clock(Arc::clone(&clock)),
            policy,
            clock,
            stats,
            observer: None,
            fleet: None,
            fetch_runtime: FetchRuntime::caller(),
        }
    }

    /// The same cache, starting its fetches on `runtime` (by default, on the runtime of the
    /// check that needs one).
    pub fn with_fetch_runtime(mut self, runtime: FetchRuntime) -> OriginCache {
        self.fetch_runtime = runtime;
        self
    }

    /// The same cache, sharing origin state with other replicas through `store`.
    pub fn with_store(mut self, store: Store, config: FleetConfig) -> OriginCache {
        self.fleet = Some(Fleet {
            store,
            config,
            max_body_bytes: self.fetcher.config().max_body_bytes,
        });
        self
    }

    /// The same cache, telling `observer` of every fetch.
    pub fn with_fetch_observer(mut self, observer: FetchObserver) -> OriginCache {
        self.observer = Some(observer);
        self
    }

    /// The cache's clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The counters.
    pub fn stats(&self) -> &CacheStats {
        &self.stats
    }

    /// The fetcher.
    pub fn fetcher(&self) -> &Fetcher {
        &self.fetcher
    }

    /// The capacity in bytes that entries are weighed against (`CacheConfig::capacity_bytes`).
    pub fn capacity_bytes(&self) -> u64 {
        self.slots.capacity_bytes()
    }

    /// Entries and bytes held, after pending housekeeping.
    pub async fn usage(&self) -> (u64, u64) {
        self.slots.usage()
    }

    /// Origin states kept apart from the copies (bounded by count, not weighed against the
    /// capacity), and the bytes charged for them.
    pub fn resting(&self) -> (u64, u64) {
        self.slots.resting()
    }

    /// Whether the shared store answered its last call; `None` without one.
    pub fn store_up(&self) -> Option<bool> {
        self.fleet.as_ref().map(|fleet| fleet.store.is_up())
    }

    /// Whether the shared store's circuit breaker is open (or probing); `None` without one.
    pub fn store_breaker_open(&self) -> Option<bool> {
        self.fleet
            .as_ref()
            .map(|fleet| !matches!(fleet.store.breaker(), BreakerState::Closed { .. }))
    }

    /// Origins currently in backoff.
    pub fn origins_in_backoff(&self) -> usize {
        self.slots.count(|slot| slot.lock().backoff.is_some())
    }

    /// Whether this replica keeps anything of `origin` (a copy, a backoff, a fetch's trace): it
    /// was checked here, and not forgotten since.
    pub fn knows(&self, origin: &Origin) -> bool {
        self.slots.contains(origin)
    }

    /// What to answer from for `origin` now if that needs no fetch in the foreground; `None`
    /// when it would (nothing known, or nothing answerable).
    pub async fn peek(&self, origin: &Origin) -> Option<Snapshot> {
        let slot = self.slots.get(origin.key())?;
        self.answer_from_state(origin, &slot, Lookup::Hit)
    }

    /// What to answer from for `origin` now, fetching if nothing is known.
    pub async fn lookup(&self, origin: &Origin) -> Snapshot {
        match self.find(origin) {
            Found::Now(snapshot) => snapshot,
            Found::Later(wait) => wait.await,
        }
    }

    /// [`OriginCache::lookup`] in two steps: what the slot answers at once, else the wait.
    pub fn find(&self, origin: &Origin) -> Found<'_> {
        self.found(self.slots.get_or_insert(origin))
    }

    /// The entry of the origin whose key is `key` ([`Origin::key`]), if the cache has one: a
    /// cached check finds it by a slice of its URL, with no origin built.
    pub fn known(&self, key: &str) -> Option<Known> {
        self.slots.get(key).map(Known)
    }

    /// [`OriginCache::find`] for an entry found by [`OriginCache::known`].
    pub fn find_known(&self, known: Known) -> Found<'_> {
        self.found(known.0)
    }

    /// [`OriginCache::find`] for an origin [`OriginCache::known`] just found no entry for: its
    /// entry is made without looking for it again.
    pub fn find_unknown(&self, origin: &Origin) -> Found<'_> {
        self.found(self.slots.new_state(origin))
    }

    /// What `slot` answers at once, else the wait.
    fn found(&self, slot: Arc<Slot>) -> Found<'_> {
        match self.answer_from_state(&slot.origin, &slot, Lookup::Hit) {
            Some(snapshot) if !matches!(snapshot.basis, Basis::Dropped { .. }) => {
                Found::Now(snapshot)
            }
            held => {
                let origin = slot.origin.clone();
                Found::Later(Box::pin(async move {
                    let snapshot = self.lookup_further(&origin, slot, held).await;
                    if matches!(snapshot.basis, Basis::Dropped { .. }) {
                        self.stats.refusals.fetch_add(1, Ordering::Relaxed);
                    }
                    snapshot
                }))
            }
        }
    }

    /// [`OriginCache::lookup`] when the slot's state does not answer alone: `held` is what it
    /// gave (a copy dropped for memory), if anything.
    async fn lookup_further(
        &self,
        origin: &Origin,
        slot: Arc<Slot>,
        held: Option<Snapshot>,
    ) -> Snapshot {
        if let Some(snapshot) = held {
            return self.unless_dropped(origin, &slot, snapshot).await;
        }
        // Nothing known: one check fetches, the others wait for it.
        let (fetching, coalesced) = match Arc::clone(&slot.fetching).try_lock_owned() {
            Ok(guard) => (guard, false),
            Err(_) => (Arc::clone(&slot.fetching).lock_owned().await, true),
        };
        let lookup = if coalesced {
            Lookup::Coalesced
        } else {
            Lookup::Hit
        };
        if let Some(snapshot) = self.answer_from_state(origin, &slot, lookup) {
            return self.unless_dropped(origin, &slot, snapshot).await;
        }
        // Another replica may have fetched it: its result, if the store has one, is answered.
        // When the store holds nothing, the same read took the fleet's fetch lease.
        let prior = match self.look(origin, &slot).await {
            Look::Pulled(pulled) => {
                if let Some(snapshot) = self.answer_taken_in(origin, &slot, &pulled, Lookup::Shared)
                {
                    // A copy that expired in the store is answered, as any stale copy is, while
                    // one refresh runs: this check fetches nothing, so the refresh may start now.
                    drop(fetching);
                    if self.fetch_due(&slot) {
                        self.refresh_in_background(origin, &slot);
                    }
                    return snapshot;
                }
                Prior::Read
            }
            Look::Leased(token) => Prior::Leased(token),
            Look::Held => Prior::Held,
            // The store was just read above: the fetch need not read it again.
            Look::Nothing => Prior::Read,
        };
        let taken_in = self.fetch_detached(origin, &slot, fetching, prior).await;
        let lookup = if coalesced {
            Lookup::Coalesced
        } else {
            Lookup::Miss
        };
        match &taken_in {
            Some(state) => self.answer_taken_in(origin, &slot, state, lookup),
            None => self.answer_from_state(origin, &slot, lookup),
        }
        .unwrap_or_else(|| unreachable_after_fetch(lookup))
    }

    /// `snapshot`, unless it says the copy was dropped for memory and the shared store still
    /// holds it: then the store's copy.
    async fn unless_dropped(
        &self,
        origin: &Origin,
        slot: &Arc<Slot>,
        snapshot: Snapshot,
    ) -> Snapshot {
        if matches!(snapshot.basis, Basis::Dropped { .. })
            && let Some(pulled) = self.pull_copy(origin, slot).await
            && let Some(answer) = self.answer_taken_in(origin, slot, &pulled, Lookup::Shared)
        {
            return answer;
        }
        snapshot
    }

    /// Answers from the slot after a fetch or a pull took `taken_in` into it; or from
    /// `taken_in` itself when the cache has dropped it since (a full cache of origins asked as
    /// often does not admit a new one, and drops it as soon as it is inserted): the check that
    /// fetched, or read the store, answers from what it has in hand rather than refusing.
    fn answer_taken_in(
        &self,
        origin: &Origin,
        slot: &Arc<Slot>,
        taken_in: &OriginState<Remembered>,
        lookup: Lookup,
    ) -> Option<Snapshot> {
        match self.answer_from_state(origin, slot, lookup) {
            Some(snapshot) if !matches!(snapshot.basis, Basis::Dropped { .. }) => Some(snapshot),
            other => snapshot_of(taken_in, self.clock.now(), lookup, &self.policy)
                .map(|(snapshot, _)| snapshot)
                .or(other),
        }
    }

    /// Answers from the slot's state if the policy allows it, starting a background refresh
    /// when one is due; `None` when a foreground fetch is needed.
    fn answer_from_state(
        &self,
        origin: &Origin,
        slot: &Arc<Slot>,
        lookup: Lookup,
    ) -> Option<Snapshot> {
        let now = self.clock.now();
        let state = slot.lock();
        let (snapshot, refresh) = snapshot_of(&state, now, lookup, &self.policy)?;
        drop(state);
        if refresh {
            self.refresh_in_background(origin, slot);
        } else if lookup == Lookup::Hit {
            self.sync_in_background(origin, slot, now);
        }
        Some(snapshot)
    }

    /// Fetches as a task of its own, holding the single-flight lock (`fetching`), and waits for
    /// it: a caller that gives up (its request timed out, its client went away) must not cut
    /// the origin off mid-response and leave the next check to fetch again. Waiting checks and
    /// the next ones get its result.
    async fn fetch_detached(
        &self,
        origin: &Origin,
        slot: &Arc<Slot>,
        fetching: tokio::sync::OwnedMutexGuard<()>,
        prior: Prior,
    ) -> Option<OriginState<Remembered>> {
        let fetch = {
            let (cache, origin, slot) = (self.clone(), origin.clone(), Arc::clone(slot));
            self.fetch_runtime.spawn(async move {
                let _fetching = fetching;
                cache.fetch_into(&origin, &slot, prior).await
            })
        };
        match fetch.await {
            Ok(taken_in) => taken_in,
            // A bug in the fetch: fail this check as before, rather than answer from nothing.
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Err(_) => None,
        }
    }

    /// Starts one background fetch for the origin unless one is running.
    fn refresh_in_background(&self, origin: &Origin, slot: &Arc<Slot>) {
        let Ok(fetching) = Arc::clone(&slot.fetching).try_lock_owned() else {
            return;
        };
        let cache = self.clone();
        let origin = origin.clone();
        let slot = Arc::clone(slot);
        self.fetch_runtime.spawn(async move {
            let _fetching = fetching;
            // Another fetch may have finished between the decision and this task.
            let due = {
                let now = cache.clock.now();
                let state = slot.lock();
                state.may_fetch(now)
                    && !matches!(
                        state.decide(now, &cache.policy),
                        Decision::Copy { stale: false, .. }
                            | Decision::Refused { stale: false, .. }
                    )
            };
            if due {
                cache.fetch_into(&origin, &slot, Prior::Unread).await;
            }
        });
    }

    /// Fetches the origin's robots.txt, or takes another replica's result, and takes the outcome
    /// in. The caller holds `fetching`.
    /// `prior`: what the store said just before, if it was read (a foreground miss), so that it
    /// is not read again before the lease is taken, nor the lease taken twice.
    /// Returns the state taken in (as it was before the cache decided whether to keep its
    /// copy), if any.
    async fn fetch_into(
        &self,
        origin: &Origin,
        slot: &Arc<Slot>,
        prior: Prior,
    ) -> Option<OriginState<Remembered>> {
        match &self.fleet {
            Some(fleet) => self.fetch_shared(origin, slot, fleet, prior).await,
            None => Some(self.fetch_now(origin, slot).await.1),
        }
    }

    /// Fetches the origin's robots.txt and takes the outcome in; returns the body of a parsed
    /// file, for the store, and the state taken in, as it was before the cache decided whether
    /// to keep its copy. The caller holds `fetching`.
    async fn fetch_now(
        &self,
        origin: &Origin,
        slot: &Arc<Slot>,
    ) -> (FetchedBody, OriginState<Remembered>) {
        // A parsed copy's validators make the fetch conditional (RFC 9111 §4.3.1); if the copy
        // is gone by the time a 304 comes back (dropped for memory), it is fetched whole.
        let mut revalidate = slot.lock().copy.as_ref().and_then(|copy| {
            let meta = &copy.meta.meta;
            (matches!(copy.meta.detail, Detail::Parsed(_)) && !meta.validators.is_empty())
                .then(|| (meta.final_url.clone(), meta.validators.clone()))
        });
        loop {
            self.stats.fetches.fetch_add(1, Ordering::Relaxed);
            self.stats.fetches_in_flight.fetch_add(1, Ordering::Relaxed);
            let conditional = revalidate
                .as_ref()
                .map(|(url, validators)| Revalidate { url, validators });
            let outcome = self.fetcher.fetch(&origin.robots_url(), conditional).await;
            self.stats.fetches_in_flight.fetch_sub(1, Ordering::Relaxed);
            if let Some(observer) = &self.observer {
                let meta = outcome.meta();
                observer(outcome.kind(), meta.duration, meta.challenge);
            }
            let mut fetched = match &outcome {
                FetchOutcome::Refused { .. } => FetchedBody::Refused,
                _ => FetchedBody::None,
            };
            // The body deflated and digested before the slot is locked: checks of the origin
            // read the slot meanwhile. Once, for the copy and the store alike.
            // `Err`: a 304, which renews the copy the slot holds.
            let taken = match outcome {
                FetchOutcome::NotModified { max_age, meta } => Err((max_age, meta)),
                outcome => Ok(fetch_result(outcome)),
            };
            if let Ok(FetchResult::Success { meta, .. }) = &taken
                && let Detail::Parsed(kept) = &meta.detail
            {
                fetched = FetchedBody::Parsed(kept.clone());
            }
            let now = self.clock.now();
            let (taken_in, held_bytes) = {
                let mut state = slot.lock();
                let result = match taken {
                    Ok(result) => result,
                    Err((max_age, meta)) => match &state.copy {
                        Some(copy) => FetchResult::NotModified {
                            max_age,
                            meta: copy.meta.renewed(meta),
                        },
                        None => {
                            drop(state);
                            revalidate = None;
                            continue;
                        }
                    },
                };
                let was_in_backoff = state.backoff.is_some();
                state.apply(result, now, rand::random::<f64>(), &self.policy);
                fetch_log::fetched(origin, was_in_backoff, &state, now);
                (state.clone(), state_weight(&state))
            };
            self.slots.settle(slot, held_bytes);
            return (fetched, taken_in);
        }
    }
}

/// What a fetch leaves for the shared store.
enum FetchedBody {
    /// A parsed file's body, as the copy keeps it.
    Parsed(KeptBody),
    /// A refusal: this replica's own, not shared.
    Refused,
    /// Nothing new to store but the state.
    None,
}
