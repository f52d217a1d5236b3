//! Where the cache keeps its entries: one [`Slot`] per origin, in one of three maps.
//!
//! - `window`: origins whose robots.txt was fetched lately, least recently used first, bounded
//!   by [`WINDOW_PERCENT`] of `--cache-capacity` in bytes. Every copy starts here, so that a new
//!   origin has the time to show it is used before it must earn a place in `copies`.
//! - `copies`: the rest of the capacity, for copies that left the window. Its admission policy
//!   (moka's TinyLFU) lets one in only in place of ones used less often, so origins named once
//!   cannot flush the ones crawlers keep asking about. A use counts here even while the copy is
//!   in the window (every lookup asks `copies` first), so a site crawled since its fetch leaves
//!   the window with the uses that win it a place. Together this is W-TinyLFU (Einziger,
//!   Friedman and Manes, "TinyLFU: A Highly Efficient Cache Admission Policy", 2017), as
//!   Caffeine builds it; moka provides the TinyLFU part only.
//! - `states`: origins without a copy, bounded by count: those not fetched yet (so that
//!   concurrent first checks share one fetch, whatever `copies` admits), and those whose copy
//!   was evicted while their state still restrains fetching: a fetch in flight, a backoff, a
//!   refusal, or a fetch less than the shortest lifetime ago. Eviction drops the parsed file and
//!   moves the rest here, so memory pressure never sends a fetch the rules forbid.
//!
//! Without the window, a new origin competed at once with the least recently used copies, its
//! one use against theirs: at a full cache, a third of the sites a crawler began (the test
//! `new_sites_at_a_full_cache_are_answered_while_they_are_crawled`) were refused a place on
//! their fetch, and their next checks within the minute were answered `cache-full`.
//!
//! This is the cache's storage port. [`super::OriginCache`] runs the policy and the single
//! flight, and asks this type only for an origin's slot, to settle it after a fetch, and for its
//! usage; nothing about moka shows through.

use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::policy::{OriginState, PolicyConfig};
use super::{CacheStats, Remembered};
use crate::clock::Clock;
use crate::origin::Origin;

/// One origin's entry.
#[derive(Debug)]
pub(crate) struct Slot {
    /// The origin it is the entry of: what a check found by its key alone answers with.
    pub(crate) origin: Origin,
    /// A std mutex, not tokio's: it is held only to read or update the state, never across an
    /// await, and checks take it on every call.
    state: Mutex<OriginState<Remembered>>,
    /// Held by whoever fetches this origin's robots.txt: at most one fetch at a time.
    pub(crate) fetching: Arc<tokio::sync::Mutex<()>>,
    /// Bytes charged to the cache for this entry, updated after each fetch.
    weight: AtomicU32,
    /// Which map holds its copy: [`NOWHERE`], [`IN_WINDOW`] or [`IN_COPIES`]. Kept here so that
    /// settling an entry does not look it up, which would count as a use.
    place: AtomicU8,
    /// When the state was last compared with the shared store (milliseconds since the epoch;
    /// unused without one).
    pub(crate) synced_ms: AtomicU64,
}

/// Bytes charged for an entry beyond its parsed file: the entry and the cache's bookkeeping.
const SLOT_OVERHEAD_BYTES: u32 = 512;

/// [`Slot::place`]: no copy held (the slot is in `states`, or nowhere).
const NOWHERE: u8 = 0;
/// [`Slot::place`]: in the window.
const IN_WINDOW: u8 = 1;
/// [`Slot::place`]: in `copies`.
const IN_COPIES: u8 = 2;

/// The window's share of the capacity. Caffeine starts at 1 % and adapts; crawls are bursts on
/// one site after another, which favours a larger window, and a copy should stay in it for the
/// shortest lifetime (a minute) at a busy fleet's rate of new origins: at 256 MiB, 5 % holds
/// some 2,800 origins of the corpus's average (about 4.7 KB charged each), a minute of 47 new
/// origins a second.
pub(crate) const WINDOW_PERCENT: u64 = 5;

impl Slot {
    fn new(origin: Origin) -> Slot {
        Slot {
            origin,
            state: Mutex::new(OriginState::default()),
            fetching: Arc::new(tokio::sync::Mutex::new(())),
            weight: AtomicU32::new(SLOT_OVERHEAD_BYTES),
            place: AtomicU8::new(NOWHERE),
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
    window: moka::sync::Cache<Origin, Arc<Slot>>,
    copies: moka::sync::Cache<Origin, Arc<Slot>>,
    states: moka::sync::Cache<Origin, Arc<Slot>>,
    capacity_bytes: u64,
}

/// What a map charges for an entry: its slot's weight and its key.
fn weigh(origin: &Origin, slot: &Arc<Slot>) -> u32 {
    let key = u32::try_from(origin.key().len()).unwrap_or(u32::MAX);
    slot.weight.load(Ordering::Relaxed).saturating_add(key)
}

impl Slots {
    /// Empty maps: copies held under `capacity_bytes` (window and the rest together), evictions
    /// counted in `stats`, and what restrains fetching judged by `policy` on `clock`.
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
        let window_bytes = capacity_bytes / 100 * WINDOW_PERCENT;
        let copies = moka::sync::Cache::builder()
            .max_capacity(capacity_bytes - window_bytes)
            .weigher(weigh)
            .eviction_listener(move |origin: Arc<Origin>, slot: Arc<Slot>, cause| {
                if cause != moka::notification::RemovalCause::Size {
                    return;
                }
                stats.evictions.fetch_add(1, Ordering::Relaxed);
                slot.place.store(NOWHERE, Ordering::Relaxed);
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
        let admitted = copies.clone();
        // Least recently used first; what leaves it competes for a place in `copies` (a copy
        // heavier than the whole window goes there at once).
        let window = moka::sync::Cache::builder()
            .max_capacity(window_bytes)
            .eviction_policy(moka::policy::EvictionPolicy::lru())
            .weigher(weigh)
            .eviction_listener(move |origin: Arc<Origin>, slot: Arc<Slot>, cause| {
                if cause != moka::notification::RemovalCause::Size {
                    return;
                }
                slot.place.store(IN_COPIES, Ordering::Relaxed);
                admitted.insert(Origin::clone(&origin), slot);
            })
            .build();
        Slots {
            window,
            copies,
            states,
            capacity_bytes,
        }
    }

    /// The slot of the origin whose key is `key` ([`Origin::key`]), if it has one.
    pub(crate) fn get(&self, key: &str) -> Option<Arc<Slot>> {
        // `copies` first, even for an origin in the window: the look counts as a use there.
        self.copies
            .get(key)
            .or_else(|| self.window.get(key))
            .or_else(|| self.states.get(key))
    }

    /// Whether anything is kept for the origin, without counting the look as a use.
    pub(crate) fn contains(&self, origin: &Origin) -> bool {
        self.copies.contains_key(origin)
            || self.window.contains_key(origin)
            || self.states.contains_key(origin)
    }

    /// The origin's slot, created empty if there is none.
    pub(crate) fn get_or_insert(&self, origin: &Origin) -> Arc<Slot> {
        if let Some(slot) = self.copies.get(origin).or_else(|| self.window.get(origin)) {
            return slot;
        }
        self.new_state(origin)
    }

    /// The slot of an origin [`Slots::get`] just found none for, created empty in `states`
    /// (or the one a concurrent first check created there). Not looked for again in `copies`
    /// and the window: a slot enters them only from `states`, after a fetch, so an origin with
    /// none anywhere a moment ago has none there now; and a second look in `copies` would count
    /// a second use toward the origin's admission.
    pub(crate) fn new_state(&self, origin: &Origin) -> Arc<Slot> {
        self.states
            .get_with_by_ref(origin, || Arc::new(Slot::new(origin.clone())))
    }

    /// After a fetch: the slot holds a copy now (or a backoff or refusal), charged at
    /// `held_bytes` beside the slot's overhead (what its state holds: the parsed file, kept
    /// body, final URLs and reasons). A slot without a place enters the window.
    pub(crate) fn settle(&self, origin: &Origin, slot: &Arc<Slot>, held_bytes: usize) {
        let weight =
            SLOT_OVERHEAD_BYTES.saturating_add(u32::try_from(held_bytes).unwrap_or(u32::MAX));
        let previous = slot.weight.swap(weight, Ordering::Relaxed);
        let place = slot
            .place
            .compare_exchange(NOWHERE, IN_WINDOW, Ordering::Relaxed, Ordering::Relaxed)
            .unwrap_or_else(|held| held);
        // Inserting again makes the map weigh the entry again; an unchanged entry is left alone.
        match place {
            NOWHERE => {
                self.window.insert(origin.clone(), Arc::clone(slot));
                self.states.invalidate(origin);
            }
            IN_WINDOW if previous != weight => {
                self.window.insert(origin.clone(), Arc::clone(slot));
            }
            IN_COPIES if previous != weight => {
                self.copies.insert(origin.clone(), Arc::clone(slot));
            }
            _ => {}
        }
    }

    /// The capacity in bytes that copies are weighed against (window and the rest together).
    pub(crate) fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// Origins held with a copy, and the bytes they hold, after pending housekeeping. (The
    /// states kept apart are bounded by count and hold no file.)
    pub(crate) fn usage(&self) -> (u64, u64) {
        // The window first: what it evicts moves to `copies`, whose housekeeping then admits it
        // or not.
        self.window.run_pending_tasks();
        self.copies.run_pending_tasks();
        (
            self.window.entry_count() + self.copies.entry_count(),
            self.window.weighted_size() + self.copies.weighted_size(),
        )
    }

    /// How many slots satisfy `predicate`.
    pub(crate) fn count(&self, predicate: impl Fn(&Slot) -> bool) -> usize {
        let window = self.window.iter().filter(|(_, slot)| predicate(slot));
        let copies = self.copies.iter().filter(|(_, slot)| predicate(slot));
        let states = self.states.iter().filter(|(_, slot)| predicate(slot));
        window.count() + copies.count() + states.count()
    }
}
