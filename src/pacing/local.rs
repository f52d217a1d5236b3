//! The pacing state this replica keeps itself: the whole story without a shared store, the
//! fallback while the store is down, and this replica's view of the fleet's state otherwise:
//! its last slot, and what the store last answered about the lane ([`FleetView`]).
//! Bounded in bytes like the cache, and forgotten once it can no longer matter
//! ([`crate::pace_policy::PaceConfig::keep`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::pace_policy::{FleetView, PaceState};

/// What an entry costs: its key's buffer, the state and the view in their lock and `Arc`, and
/// the table's entry ([`crate::kept::table_entry_bytes`]).
fn entry_bytes(origin: &str) -> u32 {
    use crate::kept::{allocation, table_entry_bytes};
    use std::mem::size_of;
    let bytes = allocation(origin.len())
        + allocation(2 * size_of::<usize>() + size_of::<Mutex<Held>>())
        + table_entry_bytes(size_of::<(String, Arc<Mutex<Held>>)>());
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

/// What this replica holds of a lane.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Held {
    /// The state it paces by alone, which follows the fleet's slots while the store is up.
    pub(super) state: PaceState,
    /// What the store last answered about the lane, if it has.
    pub(super) fleet: Option<FleetView>,
}

impl Held {
    /// Keeps `view` unless the one held was read later on the store.
    pub(super) fn see(&mut self, view: FleetView) {
        if self.fleet.is_none_or(|held| view.newer_than(&held)) {
            self.fleet = Some(view);
        }
    }
}

/// The lock of an entry: its changes are single assignments, so a poisoned one is still whole.
pub(super) fn lock(held: &Mutex<Held>) -> std::sync::MutexGuard<'_, Held> {
    held.lock().unwrap_or_else(|p| p.into_inner())
}

/// Origin → pacing state, bounded.
#[derive(Clone)]
pub(super) struct LocalPaces {
    states: moka::sync::Cache<String, Arc<Mutex<Held>>>,
}

impl LocalPaces {
    /// A table holding at most `capacity_bytes`, each entry for at most `keep` after its last
    /// use.
    pub(super) fn new(capacity_bytes: u64, keep: Duration) -> LocalPaces {
        LocalPaces {
            states: moka::sync::Cache::builder()
                .max_capacity(capacity_bytes)
                .weigher(|origin: &String, _| entry_bytes(origin))
                .time_to_idle(keep)
                .build(),
        }
    }

    /// Runs `change` on what is held of the origin, made fresh when nothing is.
    pub(super) fn with<T>(&self, origin: &str, change: impl FnOnce(&mut Held) -> T) -> T {
        change(&mut lock(&self.entry(origin)))
    }

    /// The origin's state, if one is held.
    pub(super) fn get(&self, origin: &str) -> Option<PaceState> {
        self.states.get(origin).map(|held| lock(&held).state)
    }

    /// What is held of the origin, made fresh when nothing is: for a reservation that reads
    /// it before a store call and changes it after, with one lookup.
    pub(super) fn entry(&self, origin: &str) -> Arc<Mutex<Held>> {
        self.states
            .entry_by_ref(origin)
            .or_insert_with(|| Arc::new(Mutex::new(Held::default())))
            .into_value()
    }

    /// How many held states `pred` is true of.
    pub(super) fn count(&self, pred: impl Fn(&PaceState) -> bool) -> usize {
        self.states
            .iter()
            .filter(|(_, held)| pred(&lock(held).state))
            .count()
    }

    /// Entries and their weight, after pending housekeeping.
    pub(super) fn usage(&self) -> (u64, u64) {
        self.states.run_pending_tasks();
        (self.states.entry_count(), self.states.weighted_size())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_bounded_in_bytes() {
        // Keys of 28 bytes: room for 100 entries.
        let capacity = 100 * u64::from(entry_bytes("https://origin-00000.example"));
        let table = LocalPaces::new(capacity, Duration::from_secs(60));
        for i in 0..10_000 {
            table.with(&format!("https://origin-{i:05}.example"), |held| {
                held.state.last_slot = 1;
            });
        }
        let (entries, bytes) = table.usage();
        assert!(entries <= 100, "{entries} entries held");
        assert!(bytes <= capacity, "{bytes} bytes");
    }

    #[test]
    fn a_state_is_kept_between_uses() {
        let table = LocalPaces::new(1 << 20, Duration::from_secs(60));
        table.with("https://example.com", |held| held.state.last_slot = 42);
        assert_eq!(table.get("https://example.com").unwrap().last_slot, 42);
        assert_eq!(table.count(|state| state.last_slot == 42), 1);
        assert!(table.get("https://other.example").is_none());
    }
}
