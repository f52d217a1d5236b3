//! Where the cache keeps its entries: one [`Slot`] per origin, in a [`WTinyLfu`] of three
//! lists.
//!
//! - The window: origins whose robots.txt was fetched lately, least recently used first, bounded
//!   by [`WINDOW_PERCENT`] of `--cache-capacity` in bytes. Every copy starts here, so that a new
//!   origin has the time to show it is used before it must earn a place in the main list.
//! - The main list: the rest of the capacity, for copies that left the window. TinyLFU's
//!   admission lets one in only in place of ones used less often, so origins named once cannot
//!   flush the ones crawlers keep asking about. Every lookup counts a use, so a site crawled
//!   since its fetch leaves the window with the uses that win it a place.
//! - Resting: origins without a copy, bounded by count: those not fetched yet (so that
//!   concurrent first checks share one fetch, whatever the main list admits), and those whose
//!   copy was evicted while their state still restrains fetching: a fetch in flight, a backoff,
//!   a refusal, or a fetch less than the shortest lifetime ago. Eviction drops the parsed file
//!   and keeps the rest, so memory pressure never sends a fetch the rules forbid.
//!
//! Without the window, a new origin competed at once with the least recently used copies, its
//! one use against theirs: at a full cache, a third of the sites a crawler began (the test
//! `new_sites_at_a_full_cache_are_answered_while_they_are_crawled`) were refused a place on
//! their fetch, and their next checks within the minute were answered `cache-full`.
//!
//! This is the cache's storage port. [`super::OriginCache`] runs the policy and the single
//! flight, and asks this type only for an origin's slot, to settle it after a fetch, and for its
//! usage.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::policy::{OriginState, PolicyConfig};
use super::wtinylfu::{Capacity, Fate, WTinyLfu, entry_bytes};
use super::{CacheStats, Remembered, state_weight};
use crate::clock::Clock;
use crate::kept::allocation;
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
    /// When the state was last compared with the shared store (milliseconds since the epoch;
    /// unused without one).
    pub(crate) synced_ms: AtomicU64,
}

/// Bytes an origin's entry holds beside its state's own heap: the slot and its fetch lock (each
/// in an `Arc`'s allocation, beside its two counts), the origin's key and URL, and the table's
/// node and slot. Counted from the types, so that a field added to any of them is charged.
fn slot_bytes(origin: &Origin) -> usize {
    use std::mem::size_of;
    let counts = 2 * size_of::<usize>();
    allocation(counts + size_of::<Slot>())
        + allocation(counts + size_of::<tokio::sync::Mutex<()>>())
        + origin.heap_size()
        + entry_bytes::<Arc<Slot>>()
}

/// What an entry's blocks cost, `bytes` as [`allocation`] counts them, with the allocator's share
/// beside them: a sixteenth. An entry is made among a fetch's and a parse's transient blocks, and
/// what they free is left in pages the entry's blocks keep in use, so that the process grows by
/// more than the blocks: by 5 to 15 % in release builds filled with 150,000 entries of one kind
/// (copies, backoffs, names that do not exist; tests/service/memory_charge.rs, which holds every
/// kind within 15 %, and BENCHMARKS.md "Memory charged and memory held").
fn with_allocator_share(bytes: usize) -> usize {
    bytes.saturating_add(bytes / 16)
}

/// An empty slot for `origin`, and what it holds.
fn new_slot(origin: &Origin) -> (Arc<Slot>, u32) {
    (Arc::new(Slot::new(origin.clone())), weight(origin, 0))
}

/// The weight of `origin`'s entry whose state holds `held_bytes`: the slot and the state, with
/// the allocator's share.
fn weight(origin: &Origin, held_bytes: usize) -> u32 {
    let bytes = with_allocator_share(slot_bytes(origin).saturating_add(held_bytes));
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

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

/// The entries. Cheap to clone; clones share them.
#[derive(Clone)]
pub(crate) struct Slots {
    entries: Arc<WTinyLfu<Arc<Slot>>>,
    capacity_bytes: u64,
}

fn key(slot: &Arc<Slot>) -> &str {
    slot.origin.key()
}

impl Slots {
    /// No entries: copies held under `capacity_bytes` (window and main together), evictions
    /// counted in `stats`, and what restrains fetching judged by `policy` on `clock`.
    pub(crate) fn new(
        capacity_bytes: u64,
        stats: Arc<CacheStats>,
        clock: Arc<dyn Clock>,
        policy: Arc<PolicyConfig>,
    ) -> Slots {
        let capacity = Capacity {
            bytes: capacity_bytes,
            window_percent: WINDOW_PERCENT,
            resting: (capacity_bytes / STATE_BYTES).max(MIN_STATES),
        };
        let entries = WTinyLfu::new(capacity, key, move |slot: &Arc<Slot>| {
            stats.evictions.fetch_add(1, Ordering::Relaxed);
            let fetching = slot.fetching.try_lock().is_err();
            let mut state = slot.lock();
            state.drop_copy();
            if fetching || state.restrains_fetching(clock.now(), &policy) {
                Fate::Rest(weight(&slot.origin, state_weight(&state)))
            } else {
                Fate::Forget
            }
        });
        Slots {
            entries: Arc::new(entries),
            capacity_bytes,
        }
    }

    /// The slot of the origin whose key is `key` ([`Origin::key`]), if it has one.
    pub(crate) fn get(&self, key: &str) -> Option<Arc<Slot>> {
        self.entries.get(key)
    }

    /// Whether anything is kept for the origin, without counting the look as a use.
    pub(crate) fn contains(&self, origin: &Origin) -> bool {
        self.entries.contains(origin.key())
    }

    /// The origin's slot, created empty if there is none.
    pub(crate) fn get_or_insert(&self, origin: &Origin) -> Arc<Slot> {
        self.entries
            .get_or_rest(origin.key(), true, || new_slot(origin))
    }

    /// The slot of an origin [`Slots::get`] just found none for, created empty (or the one a
    /// concurrent first check created meanwhile), without counting a second use toward the
    /// origin's admission.
    pub(crate) fn new_state(&self, origin: &Origin) -> Arc<Slot> {
        self.entries
            .get_or_rest(origin.key(), false, || new_slot(origin))
    }

    /// After a fetch: the slot holds a copy now (or a backoff or refusal), charged at
    /// `held_bytes` (what its state holds: the parsed file, kept body, final URLs and reasons)
    /// beside the slot itself ([`slot_bytes`]). A slot without a copy enters the window.
    pub(crate) fn settle(&self, slot: &Arc<Slot>, held_bytes: usize) {
        self.entries.weigh(slot, weight(&slot.origin, held_bytes));
    }

    /// The capacity in bytes that copies are weighed against (window and main together).
    pub(crate) fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// Origins held with a copy, and the bytes they hold. (The resting states are bounded by
    /// count and hold no file: [`Slots::resting`].)
    pub(crate) fn usage(&self) -> (u64, u64) {
        self.entries.weighed()
    }

    /// Origin states kept apart from the copies (evicted while their state still restrains
    /// fetching, or made by a first check and not yet fetched), and the bytes they hold.
    pub(crate) fn resting(&self) -> (u64, u64) {
        self.entries.resting()
    }

    /// How many slots satisfy `predicate`.
    pub(crate) fn count(&self, predicate: impl Fn(&Slot) -> bool) -> usize {
        self.entries.count(|slot| predicate(slot))
    }
}
