//! Where the cache keeps its entries: one [`Slot`] per origin in a map bounded by the bytes the
//! entries hold, least recently used entries evicted first.
//!
//! This is the cache's storage port. [`super::OriginCache`] runs the policy and the single
//! flight, and asks this type only for an origin's slot, to weigh it again after a fetch, and for
//! its usage; nothing about moka shows through. A shared store behind the cache (the fleet tier)
//! is a second storage of the same shape, reached from the same few calls.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::policy::OriginState;
use super::{CacheStats, Remembered};
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

/// The entries, weighed by bytes. Cheap to clone; clones share the map.
#[derive(Clone)]
pub(crate) struct Slots {
    map: moka::future::Cache<Origin, Arc<Slot>>,
}

impl Slots {
    /// An empty map holding at most `capacity_bytes`; evictions are counted in `stats`.
    pub(crate) fn new(capacity_bytes: u64, stats: Arc<CacheStats>) -> Slots {
        let map = moka::future::Cache::builder()
            .max_capacity(capacity_bytes)
            .weigher(|origin: &Origin, slot: &Arc<Slot>| {
                let key = u32::try_from(origin.key().len()).unwrap_or(u32::MAX);
                slot.weight.load(Ordering::Relaxed).saturating_add(key)
            })
            .eviction_listener(move |_origin, _slot, cause| {
                if cause == moka::notification::RemovalCause::Size {
                    stats.evictions.fetch_add(1, Ordering::Relaxed);
                }
            })
            .build();
        Slots { map }
    }

    /// The origin's slot, created empty if there is none.
    pub(crate) async fn get_or_insert(&self, origin: &Origin) -> Arc<Slot> {
        self.map
            .get_with_by_ref(origin, async { Arc::new(Slot::new()) })
            .await
    }

    /// Charges the slot for the parsed file it now holds (`parsed_bytes`, zero for none).
    pub(crate) async fn reweigh(&self, origin: &Origin, slot: &Arc<Slot>, parsed_bytes: usize) {
        let weight =
            SLOT_OVERHEAD_BYTES.saturating_add(u32::try_from(parsed_bytes).unwrap_or(u32::MAX));
        // Re-inserting makes the map weigh the entry again.
        if slot.weight.swap(weight, Ordering::Relaxed) != weight {
            self.map.insert(origin.clone(), Arc::clone(slot)).await;
        }
    }

    /// The capacity in bytes that entries are weighed against.
    pub(crate) fn capacity_bytes(&self) -> u64 {
        self.map.policy().max_capacity().unwrap_or(u64::MAX)
    }

    /// Entries and bytes held, after pending housekeeping.
    pub(crate) async fn usage(&self) -> (u64, u64) {
        self.map.run_pending_tasks().await;
        (self.map.entry_count(), self.map.weighted_size())
    }

    /// How many slots satisfy `predicate`.
    pub(crate) fn count(&self, predicate: impl Fn(&Slot) -> bool) -> usize {
        self.map.iter().filter(|(_, slot)| predicate(slot)).count()
    }
}
