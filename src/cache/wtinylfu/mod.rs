//! A W-TinyLFU cache over one hash table per shard (Einziger, Friedman and Manes, "TinyLFU: A
//! Highly Efficient Cache Admission Policy", 2017), with a third list for entries kept without
//! a value to weigh.
//!
//! - The **window** takes every new value, least recently used first, within its share of the
//!   bytes. What leaves it competes for a place in the main list.
//! - The **main** list holds the rest of the bytes. A candidate from the window enters when
//!   there is room, or when it was used more often than all the entries it would displace
//!   together, least recent first ([`sketch`]); otherwise it is the one evicted. So keys named
//!   once cannot flush the ones in use, and a new key has the window's time to show it is used.
//! - The **resting** list, least recently used first and bounded by count, holds entries not yet
//!   given a value to weigh, and evicted ones whose owner still needs them ([`Fate::Rest`]).
//!
//! Every lookup counts a use of its key, found or not, on any list: a key used while in the
//! window leaves it with the uses that win it a place.
//!
//! Why our own rather than moka, which served here before: a window and a main cache in moka
//! were two maps, so a lookup of a key in the window cost two lookups and two read records, the
//! largest part of a cached check's instructions; and moka's housekeeping runs later, so what a
//! cache held at a given moment was a matter of timing. Here a lookup is one keyed hash, one
//! shard's lock, one table probe and a sketch update, and every limit holds when a call returns.
//!
//! How it differs from Caffeine: no read buffers (a shard's lock is held for a lookup, which
//! many shards keep uncontended), a fixed window share rather than an adaptive one, a main list
//! in plain recency order rather than segmented, and each shard its own policy over its share of
//! the bytes: a hot key competes within its shard.

mod shard;
mod sketch;
#[cfg(test)]
mod tests;

use std::hash::{BuildHasher, RandomState};
use std::sync::{Mutex, MutexGuard};

pub use shard::{Fate, entry_bytes};
use shard::{Limits, Region, Shard};
use sketch::Sketch;

/// The limits of a cache.
#[derive(Clone, Copy, Debug)]
pub struct Capacity {
    /// Bytes of the window and the main list together.
    pub bytes: u64,
    /// The window's share of `bytes`, in percent.
    pub window_percent: u64,
    /// Entries on the resting list.
    pub resting: u64,
}

/// The least share of the bytes a shard is given: a smaller cache has fewer shards, so that
/// the largest values still fit a shard's main list.
const MIN_SHARD_BYTES: u64 = 16 * 1024 * 1024;

/// The most shards, whatever the machine.
const MAX_SHARDS: usize = 64;

/// Bytes per key the sketch is sized for: one word of counters per this many bytes.
const SKETCH_BYTES_PER_KEY: u64 = 4096;

/// The fewest words of counters a shard's sketch has (8 KiB): in a smaller sketch, the keys of
/// a scan collide so often that each seems used as often as the keys in use.
const MIN_SKETCH_KEYS: u64 = 1024;

/// The cache. Values carry their own key, which `key` reads.
pub struct WTinyLfu<V> {
    shards: Box<[Mutex<Shard<V>>]>,
    hasher: RandomState,
    key: fn(&V) -> &str,
    fate: Box<dyn Fn(&V) -> Fate + Send + Sync>,
}

impl<V> std::fmt::Debug for WTinyLfu<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WTinyLfu")
            .field("shards", &self.shards.len())
            .finish_non_exhaustive()
    }
}

/// Shards for a cache of `bytes` on this machine: four per core, a power of two, each with at
/// least [`MIN_SHARD_BYTES`].
fn shard_count(bytes: u64) -> usize {
    let cores = std::thread::available_parallelism().map_or(4, std::num::NonZero::get);
    let by_size = usize::try_from(bytes / MIN_SHARD_BYTES).unwrap_or(usize::MAX);
    let by_size = if by_size == 0 {
        1
    } else {
        1 << by_size.ilog2()
    };
    (cores * 4).next_power_of_two().min(by_size).min(MAX_SHARDS)
}

impl<V: Clone> WTinyLfu<V> {
    /// An empty cache within `capacity`. `fate` says what becomes of an entry evicted to make
    /// room; it runs under a shard's lock.
    pub fn new(
        capacity: Capacity,
        key: fn(&V) -> &str,
        fate: impl Fn(&V) -> Fate + Send + Sync + 'static,
    ) -> WTinyLfu<V> {
        WTinyLfu::with_shards(capacity, shard_count(capacity.bytes), key, fate)
    }

    fn with_shards(
        capacity: Capacity,
        shards: usize,
        key: fn(&V) -> &str,
        fate: impl Fn(&V) -> Fate + Send + Sync + 'static,
    ) -> WTinyLfu<V> {
        let count = u64::try_from(shards).unwrap_or(1);
        let window_bytes = capacity.bytes / 100 * capacity.window_percent / count;
        let limits = Limits {
            window_bytes,
            main_bytes: capacity.bytes / count - window_bytes,
            resting: usize::try_from(capacity.resting.div_ceil(count)).unwrap_or(usize::MAX),
        };
        let keys = (capacity.bytes / count / SKETCH_BYTES_PER_KEY).max(MIN_SKETCH_KEYS);
        let shards = (0..shards)
            .map(|_| {
                let sketch = Sketch::new(usize::try_from(keys).unwrap_or(usize::MAX));
                Mutex::new(Shard::new(limits, sketch))
            })
            .collect();
        WTinyLfu {
            shards,
            hasher: RandomState::new(),
            key,
            fate: Box::new(fate),
        }
    }

    /// The hash of `key` and its shard, locked.
    fn shard(&self, key: &str) -> (u64, MutexGuard<'_, Shard<V>>) {
        let hash = self.hasher.hash_one(key);
        let at = usize::try_from(hash >> 40).unwrap_or(0) & (self.shards.len() - 1);
        // A poisoned shard is used as it is: only a bug panics under the lock, and refusing
        // every later check of the shard's keys would turn that bug into an outage.
        let shard = self.shards[at].lock().unwrap_or_else(|p| p.into_inner());
        (hash, shard)
    }

    /// The value of `key`, counting the use.
    pub fn get(&self, key: &str) -> Option<V> {
        let (hash, mut shard) = self.shard(key);
        shard.sketch.increment(hash);
        let i = shard.find(hash, |value| (self.key)(value) == key)?;
        shard.touch(i);
        Some(shard.value(i).clone())
    }

    /// Whether `key` has an entry, without counting a use.
    pub fn contains(&self, key: &str) -> bool {
        let (hash, shard) = self.shard(key);
        shard.find(hash, |value| (self.key)(value) == key).is_some()
    }

    /// The value of `key`, or the value `make()` gives put on the resting list, holding the
    /// bytes it gives beside it; counting the use when `count`.
    pub fn get_or_rest(&self, key: &str, count: bool, make: impl FnOnce() -> (V, u32)) -> V {
        let (hash, mut shard) = self.shard(key);
        if count {
            shard.sketch.increment(hash);
        }
        if let Some(i) = shard.find(hash, |value| (self.key)(value) == key) {
            shard.touch(i);
            return shard.value(i).clone();
        }
        let (value, weight) = make();
        shard.insert(hash, value.clone(), weight, Region::Resting);
        shard.enforce(&self.fate);
        value
    }

    /// Gives `value` a weight: an entry resting, or none, enters the window; a weighed one is
    /// weighed again. An entry of the same key holding another value takes this one. Counts no
    /// use, and keeps the entry's place in recency order unless it moves.
    pub fn weigh(&self, value: &V, weight: u32) {
        let key = (self.key)(value);
        let (hash, mut shard) = self.shard(key);
        match shard.find(hash, |held| (self.key)(held) == key) {
            Some(i) => {
                shard.replace(i, value.clone(), weight);
                if shard.region(i) == Region::Resting {
                    shard.move_to(i, Region::Window);
                }
            }
            None => {
                shard.insert(hash, value.clone(), weight, Region::Window);
            }
        }
        shard.enforce(&self.fate);
    }

    /// Entries and bytes weighed (the window and main lists).
    pub fn weighed(&self) -> (u64, u64) {
        self.each_shard(|shard| shard.weighed())
            .fold((0, 0), |(len, bytes), (l, b)| (len + l, bytes + b))
    }

    /// Entries and bytes resting.
    pub fn resting(&self) -> (u64, u64) {
        self.each_shard(|shard| shard.resting())
            .fold((0, 0), |(len, bytes), (l, b)| (len + l, bytes + b))
    }

    /// How many values, on any list, satisfy `predicate`.
    pub fn count(&self, predicate: impl Fn(&V) -> bool) -> usize {
        self.each_shard(|shard| shard.values().filter(|value| predicate(value)).count())
            .sum()
    }

    /// `f` of each shard in turn, each locked only for its own call.
    fn each_shard<'a, T>(
        &'a self,
        f: impl Fn(&Shard<V>) -> T + 'a,
    ) -> impl Iterator<Item = T> + 'a {
        self.shards
            .iter()
            .map(move |shard| f(&shard.lock().unwrap_or_else(|p| p.into_inner())))
    }
}
