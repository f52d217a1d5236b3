//! An operator's refresh of one origin: a fetch now rather than when the copy expires, within
//! the same politeness as every other fetch.

use std::sync::Arc;
use std::time::Duration;

use super::prior::Prior;
use super::{Lookup, OriginCache, Snapshot, unreachable_after_fetch};
use crate::origin::Origin;

impl OriginCache {
    /// Fetches `origin`'s robots.txt now, for an operator who knows it changed, and answers from
    /// the result. Still the single flight (a fetch already running is waited for, and its
    /// result answered), and still polite: `Err(retry_after)` when the origin was fetched less
    /// than the shortest lifetime ago, or is in a backoff whose retry time has not come.
    pub async fn refresh(&self, origin: &Origin) -> Result<Snapshot, Duration> {
        let slot = self.slots.get_or_insert(origin);
        let fetching = match Arc::clone(&slot.fetching).try_lock_owned() {
            Ok(guard) => guard,
            Err(_) => {
                // A fetch is running: its result is as fresh as a refresh's would be.
                drop(Arc::clone(&slot.fetching).lock_owned().await);
                let snapshot = self.answer_from_state(origin, &slot, Lookup::Coalesced);
                return Ok(snapshot.unwrap_or_else(|| unreachable_after_fetch(Lookup::Coalesced)));
            }
        };
        let wait = slot
            .lock()
            .wait_before_fetch(self.clock.now(), &self.policy);
        if !wait.is_zero() {
            return Err(wait);
        }
        self.fetch_detached(origin, &slot, fetching, Prior::Unread)
            .await;
        Ok(self
            .answer_from_state(origin, &slot, Lookup::Miss)
            .unwrap_or_else(|| unreachable_after_fetch(Lookup::Miss)))
    }
}
