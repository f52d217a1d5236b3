//! This replica's lease on its places (docs/politeness.md, "Through every transition";
//! [`crate::pace_policy::timetable`]): renewed in the background every
//! [`RENEW_MS`](crate::pace_policy::RENEW_MS) through the store's port (its time limit and
//! breaker), so that the store hands out this replica's places only while it lends them, and
//! this replica, cut off, knows from when its own places are its again.
//!
//! Only for a replica with a store and a `--fleet-index`: without an index its places are not
//! known, and the store hands out slots as it did before (docs/politeness.md says what that
//! leaves).

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::pace_policy::{Lender, LenderEvent, RENEW_MS, millis};

use super::Pacer;

/// A lender's lock: its changes are single assignments, so a poisoned one is still whole.
pub(super) fn lock(lender: &Mutex<Lender>) -> MutexGuard<'_, Lender> {
    lender.lock().unwrap_or_else(|p| p.into_inner())
}

impl Pacer {
    /// Starts lending this replica's places to the store, when it has a store and an index and
    /// runs on a runtime: renewals every [`RENEW_MS`] from now on. Without them nothing changes.
    pub fn start_lending(mut self) -> Pacer {
        let (Some(store), Some(index)) = (self.store.clone(), self.share.index()) else {
            return self;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return self;
        };
        let holder = format!("{:016x}", rand::random::<u64>());
        let lender = Arc::new(Mutex::new(Lender::new(
            index,
            self.share.size(),
            holder,
            self.now_ms(),
        )));
        self.lender = Some(Arc::clone(&lender));
        let pacer = self.clone();
        runtime.spawn(async move {
            let mut ticks = tokio::time::interval(Duration::from_millis(RENEW_MS));
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                // Nothing is sent to a store seen down (the background probe says when it
                // answers again): a renewal never sent is a lease end never asked for, so the
                // lease runs out and this replica's own places are its again.
                if !store.is_up() {
                    continue;
                }
                let max_wait = millis(pacer.config.max_wait);
                let request = lock(&lender).request(pacer.now_ms(), max_wait);
                let size = pacer.share.size();
                let Ok(answer) = store.lend(&request, size, pacer.config.keep()).await else {
                    // The store's port says so; the lease runs out by itself.
                    continue;
                };
                let event = lock(&lender).answered(&answer.lending, answer.table);
                match event {
                    Some(LenderEvent::Duplicate { holder }) => tracing::warn!(
                        fleet_index = index,
                        other = holder,
                        this = request.holder,
                        "another robotsd process renews this replica's --fleet-index: two \
                         replicas claim one index (a surge, or two releases sharing a store); \
                         this one lends nothing and decides no slot alone until the index is its \
                         own (give each replica of every release its own index)"
                    ),
                    Some(LenderEvent::Resolved) => tracing::info!(
                        fleet_index = index,
                        "this replica's --fleet-index is its own again"
                    ),
                    None => {}
                }
            }
        });
        self
    }

    /// Whether another live process renews this replica's index.
    pub fn duplicate_index(&self) -> bool {
        self.lender
            .as_ref()
            .is_some_and(|lender| lock(lender).duplicate())
    }
}
