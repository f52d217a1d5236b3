//! A replica's view of a lane's state on the shared store, from the store's last answer about
//! it: enough to know, without asking again, that a reservation would be deferred.
//!
//! A fleet that hammers a busy site soon has its slots a minute ahead, and from then on nearly
//! every reservation is a deferral: a store call that writes nothing and answers "ask again
//! later" (BENCHMARKS.md, "Deferrals known without a call"). What the store keeps moves only
//! one way, so a view of it stays a lower bound: the last slot and the end of a `Retry-After`
//! only grow, and a slowdown, whatever it does, never makes an interval shorter than the
//! asker's own. The store's clock is read in its call, after the call left this replica, so
//! this replica's clock plus what the store's was ahead of it at the send is never behind the
//! store's. A reservation the view defers, the store would defer too, and no sooner: a slot is
//! never handed out from a view, and one that is free is never withheld past the time the view
//! tells the asker to come back.
//!
//! Only the store's own loss of its state (a flush, a failover that lost writes) makes a view
//! wrong, and then it defers until the time it already named, toward the site.

use super::{PaceState, SlotGrant, SlotRequest, UNSLOWED};

/// What the store last answered about a lane, with when this replica sent the call, on this
/// replica's clock (milliseconds since the epoch, as the store's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FleetView {
    /// The lane's last slot after the call.
    last_slot: u64,
    /// The end of the `Retry-After` in force then (zero: none).
    blocked_until: u64,
    /// The slowdown the call applied, in thousandths.
    slowdown: u64,
    /// The store's now during the call.
    store_now: u64,
    /// This replica's now when it sent the call: before the store read its clock.
    sent: u64,
}

impl FleetView {
    /// The view a store's `grant` gives, for a call this replica sent at `sent` on its own
    /// clock.
    pub fn new(grant: &SlotGrant, sent: u64) -> FleetView {
        FleetView {
            last_slot: grant.last_slot,
            blocked_until: grant.blocked_until,
            slowdown: grant.slowdown.max(UNSLOWED),
            store_now: grant.now,
            sent,
        }
    }

    /// Whether this view was read later on the store than `other`: the later of two answers
    /// that arrive out of order is kept.
    pub fn newer_than(&self, other: &FleetView) -> bool {
        self.store_now >= other.store_now
    }

    /// The store's now at `now` on this replica's clock, or later: never behind it (the store's
    /// clock is taken to run at this replica's rate).
    fn store_now_at(&self, now: u64) -> u64 {
        self.store_now.saturating_add(now.saturating_sub(self.sent))
    }

    /// The deferral the store would answer `request` at `now` (this replica's clock), when the
    /// view shows the store would defer it; `None` when it might grant a slot, and only the
    /// store can say. The time to ask again is the earliest the store could grant it.
    pub fn deferral(&self, now: u64, request: SlotRequest) -> Option<SlotGrant> {
        let store_now = self.store_now_at(now);
        // The store applies at least the asker's interval: a slowdown is never below ×1, and the
        // cap is never below the interval asked for.
        let mut at = store_now.max(self.blocked_until);
        if self.last_slot > 0 {
            at = at.max(
                self.last_slot
                    .saturating_add(request.interval_ms)
                    .saturating_add(request.guard_ms),
            );
        }
        if at - store_now <= request.max_wait_ms {
            return None;
        }
        // The slowdown as it has decayed since, for the answer: success reports elsewhere may
        // have eased it more, so it does not enter the decision.
        let slowdown = PaceState {
            slowdown: self.slowdown,
            slowdown_at: self.store_now,
            ..PaceState::default()
        }
        .slowdown_at(store_now);
        let slowed = request.interval_ms.saturating_mul(slowdown) / UNSLOWED;
        Some(SlotGrant {
            reserved: false,
            at: at - request.max_wait_ms,
            now: store_now,
            interval_ms: slowed.min(request.max_interval_ms.max(request.interval_ms)),
            slowdown,
            blocked_until: if self.blocked_until > store_now {
                self.blocked_until
            } else {
                0
            },
            last_slot: self.last_slot,
        })
    }
}

#[cfg(test)]
mod tests;
