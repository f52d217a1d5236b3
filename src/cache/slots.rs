//! Where the cache keeps its entries: one [`Slot`] per origin, in one of two maps.
//!
//! - `copies`: origins whose robots.txt has been fetched, weighed by the bytes their parsed file
//!   holds and bounded by `--cache-capacity`. Its admission policy (moka's TinyLFU) lets a new
//!   origin in only in place of ones used less often, so origins named once cannot flush the
//!   ones crawlers keep asking about.
//! - `states`: origins without a copy in `copies`, bounded by count: those not fetched yet (so
//!   that concurrent first checks share one fetch, whatever `copies` admits), and those whose
//!   copy was evicted while their state still restrains fetching: a fetch in flight, a backoff,
//!   a refusal, or a fetch less than the shortest lifetime ago. Eviction drops the parsed file
//!   and moves the rest here, so memory pressure never sends a fetch the rules forbid.
//!
//! This is the cache's storage port. [`super::OriginCache`] runs the policy and the single
//! flight, and asks this type only for an origin's slot, to settle it after a fetch, and for its
//! usage; nothing about moka shows through.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::policy::{OriginState, PolicyConfig};
use super::{CacheStats, Remembered};
use crate::clock::Clock;
use crate::origin::Origin;

/// One origin's entry.
#[derive(Debug)]
pub(crate) struct Slot {
    /// A std mutex, not tokio's: it is held only to read or update the state, never across an
    /// await, and checks take it on every call.
    state: Mutex<OriginState<Remembered>>,
    /// Held by whoever fetches this origin's robots.txt: at most one fetch at a time.
    pub(crate) fetching: Arc<tokio::sync::Mutex<()>>,
    /// Bytes charged to the cache for this entry, updated after each fetch.
    weight: AtomicU32,
    /// Whether it is in the map of copies (inserted, and not evicted since). Kept here so that
    /// settling an entry does not look it up, which would count as a use.
    in_copies: AtomicBool,
    /// When the state was last compared with the shared store (milliseconds since the epoch;
    /// unused without one).
    pub(crate) synced_ms: AtomicU64,
}

/// Bytes charged for an entry beyond its parsed file: the entry and the cache's bookkeeping.
const SLOT_OVERHEAD_BYTES: u32 = 512;

impl Slot {
    fn new() -> Slot {
        Slot {
            state: Mutex::new(OriginState::default()),
            fetching: Arc::new(tokio::sync::Mutex::new(())),
            weight: AtomicU32::new(SLOT_OVERHEAD_BYTES),
            in_copies: AtomicBool::new(false),
            synced_ms: AtomicU64::new(0),
        }
    }

    /// The origin's state, locked.
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, OriginState<Remembered>> {
        // A panic while holding the lock cannot leave the state half-updated (updates are single
        // assignments), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Origin states kept apart from the parsed files: one per this many bytes of capacity.
const STATE_BYTES: u64 = 8 * 1024;

/// The fewest origin states kept apart, however small the capacity.
const MIN_STATES: u64 = 1024;

/// The entries. Cheap to clone; clones share the maps.
#[derive(Clone)]
pub(crate) struct Slots {
    copies: moka::future::Cache<Origin, Arc<Slot>>,
    states: moka::sync::Cache<Origin, Arc<Slot>>,
}

impl Slots {
    /// Empty maps: copies held under `capacity_bytes`, evictions counted in `stats`, and what
    /// restrains fetching judged by `policy` on `clock`.
    pub(crate) fn new(
        capacity_bytes: u64,
        stats: Arc<CacheStats>,
        clock: Arc<dyn Clock>,
        policy: Arc<PolicyConfig>,
    ) -> Slots {
        // Least recently used first, and no admission policy: a new origin's state must be
        // kept, or its concurrent first checks would not share one fetch.
        let states = moka::sync::Cache::builder()
            .max_capacity((capacity_bytes / STATE_BYTES).max(MIN_STATES))
            .eviction_policy(moka::policy::EvictionPolicy::lru())
            .build();
        let resting = states.clone();
        let copies = moka::future::Cache::builder()
            .max_capacity(capacity_bytes)
            .weigher(|origin: &Origin, slot: &Arc<Slot>| {
                let key = u32::try_from(origin.key().len()).unwrap_or(u32::MAX);
                slot.weight.load(Ordering::Relaxed).saturating_add(key)
            })
            .eviction_listener(move |origin: Arc<Origin>, slot: Arc<Slot>, cause| {
                if cause != moka::notification::RemovalCause::Size {
                    return;
                }
                stats.evictions.fetch_add(1, Ordering::Relaxed);
                slot.in_copies.store(false, Ordering::Relaxed);
                let fetching = slot.fetching.try_lock().is_err();
                let keep = {
                    let mut state = slot.lock();
                    state.drop_copy();
                    fetching || state.restrains_fetching(clock.now(), &policy)
                };
                if keep {
                    slot.weight.store(SLOT_OVERHEAD_BYTES, Ordering::Relaxed);
                    resting.insert(Origin::clone(&origin), slot);
                }
            })
            .build();
        Slots { copies, states }
    }

    /// The origin's slot, if it has one.
    pub(crate) async fn get(&self, origin: &Origin) -> Option<Arc<Slot>> {
        match self.copies.get(origin).await {
            Some(slot) => Some(slot),
            None => self.states.get(origin),
        }
    }

    /// The origin's slot, created empty if there is none.
    pub(crate) async fn get_or_insert(&self, origin: &Origin) -> Arc<Slot> {
        if let Some(slot) = self.copies.get(origin).await {
            return slot;
        }
        self.states
            .get_with_by_ref(origin, || Arc::new(Slot::new()))
    }

    /// After a fetch: the slot holds a copy now (or a backoff or refusal), charged at
    /// `parsed_bytes` (zero for none), and competes for a place in `copies`.
    pub(crate) async fn settle(&self, origin: &Origin, slot: &Arc<Slot>, parsed_bytes: usize) {
        let weight =
            SLOT_OVERHEAD_BYTES.saturating_add(u32::try_from(parsed_bytes).unwrap_or(u32::MAX));
        let previous = slot.weight.swap(weight, Ordering::Relaxed);
        let held = slot.in_copies.swap(true, Ordering::Relaxed);
        // Inserting again makes the map weigh the entry again; an unchanged entry is left alone.
        if !held || previous != weight {
            self.copies.insert(origin.clone(), Arc::clone(slot)).await;
        }
        if !held {
            self.states.invalidate(origin);
        }
    }

    /// The capacity in bytes that copies are weighed against.
    pub(crate) fn capacity_bytes(&self) -> u64 {
        self.copies.policy().max_capacity().unwrap_or(u64::MAX)
    }

    /// Origins held with a copy, and the bytes they hold, after pending housekeeping. (The
    /// states kept apart are bounded by count and hold no file.)
    pub(crate) async fn usage(&self) -> (u64, u64) {
        self.copies.run_pending_tasks().await;
        (self.copies.entry_count(), self.copies.weighted_size())
    }

    /// How many slots satisfy `predicate`.
    pub(crate) fn count(&self, predicate: impl Fn(&Slot) -> bool) -> usize {
        let copies = self.copies.iter().filter(|(_, slot)| predicate(slot));
        let states = self.states.iter().filter(|(_, slot)| predicate(slot));
        copies.count() + states.count()
    }
}
