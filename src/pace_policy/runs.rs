//! Reservations of one lane that arrive together for the same request, taken as one run: the
//! slots that `count` reservations one after another would get, in one step of constant cost.
//!
//! Whoever decides for the fleet (the Redis script) is handed what queued while its last call
//! was out, one call for all of it (`store::coalesce`); a busy lane's queue is tens of
//! reservations, nearly always of one crawler's group and so of one request. One after another
//! at one `now`, they take the first free slot and then every period after it, until a slot
//! would be further ahead than the longest wait; from there every one is deferred to the same
//! time. A run says that in three numbers, where each reservation cost the script a loop and
//! the reply three numbers to build and to parse (BENCHMARKS.md, "Runs of one request").

use super::{PaceState, SlotGrant, SlotRequest};

/// The outcome of a run of reservations of one request, on the keeper's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotRun {
    /// The slot of the run's first reservation, granted or not.
    pub first: u64,
    /// How many of the run were granted: the first ones.
    pub granted: u64,
    /// The interval applied, after the slowdown.
    pub interval_ms: u64,
}

/// What a run's grants share: the keeper's state after the whole call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunShared {
    /// The keeper's now.
    pub now: u64,
    /// The slowdown applied, in thousandths.
    pub slowdown: u64,
    /// The `Retry-After` in force, if any (zero: none).
    pub blocked_until: u64,
    /// The last slot after the call.
    pub last_slot: u64,
}

impl SlotRun {
    /// The grant of the run's `index`th reservation of `request`.
    pub fn grant(&self, index: u64, request: SlotRequest, shared: RunShared) -> SlotGrant {
        let period = self.interval_ms.saturating_add(request.guard_ms);
        let reserved = index < self.granted;
        // A deferred one asks again when the slot after the granted ones is within the wait.
        let slot = self
            .first
            .saturating_add(period.saturating_mul(index.min(self.granted)));
        SlotGrant {
            reserved,
            at: if reserved {
                slot
            } else {
                slot.saturating_sub(request.max_wait_ms)
            },
            now: shared.now,
            interval_ms: self.interval_ms,
            slowdown: shared.slowdown,
            blocked_until: shared.blocked_until,
            last_slot: shared.last_slot,
        }
    }
}

impl PaceState {
    /// Reserves `count` slots for `request` at `now`, one after another, as `count` calls of
    /// [`PaceState::reserve`] would (`now` is past the epoch: zero is "never").
    pub fn reserve_run(&mut self, now: u64, request: SlotRequest, count: u64) -> SlotRun {
        let (_, interval_ms, period) = self.paced(now, request);
        let mut first = now.max(self.blocked_until);
        if self.last_slot > 0 {
            first = first.max(self.last_slot.saturating_add(period));
        }
        let granted = if first - now > request.max_wait_ms {
            0
        } else {
            // Slots a period apart from the first, up to the longest wait; all of them when the
            // period is zero.
            let room = now.saturating_add(request.max_wait_ms) - first;
            room.checked_div(period)
                .map_or(count, |more| count.min(more.saturating_add(1)))
        };
        if granted > 0 {
            self.last_slot = first.saturating_add(period.saturating_mul(granted - 1));
        }
        SlotRun {
            first,
            granted,
            interval_ms,
        }
    }

    /// What the grants of runs taken at `now` share, after them.
    pub fn run_shared(&self, now: u64) -> RunShared {
        RunShared {
            now,
            slowdown: self.slowdown_at(now),
            blocked_until: self.blocked_at(now),
            last_slot: self.last_slot,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::pace_policy::Signal;

    const T0: u64 = 1_795_000_000_000;

    /// Runs of any request at any state give, reservation by reservation, what one call each
    /// gives, and leave the same state.
    #[test]
    fn a_run_is_its_reservations_one_after_another() {
        let request = (0u64..3_000, 0u64..100, 0u64..5_000, 0u64..10_000, 0u64..3).prop_map(
            |(interval_ms, guard_ms, max_interval_ms, max_wait_ms, zero)| SlotRequest {
                interval_ms: if zero == 0 { 0 } else { interval_ms },
                max_interval_ms,
                max_wait_ms,
                guard_ms: if zero == 0 { 0 } else { guard_ms },
            },
        );
        let case = (
            proptest::collection::vec((0u64..3_000, request, 1u64..70), 1..6),
            (
                0u64..2,
                0u64..20_000,
                proptest::option::of(0u64..5_000),
                0u8..3,
            ),
        );
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        runner
            .run(&case, |(runs, (used, last, retry_after_ms, slowed))| {
                let mut one_by_one = PaceState::default();
                if used == 1 {
                    one_by_one.last_slot = T0 + last;
                }
                for _ in 0..slowed {
                    one_by_one.signal(T0, Signal::Pushback { retry_after_ms });
                }
                let mut as_runs = one_by_one;
                let mut now = T0;
                for (step, request, count) in runs {
                    now += step;
                    let singles: Vec<SlotGrant> = (0..count)
                        .map(|_| one_by_one.reserve(now, request))
                        .collect();
                    let run = as_runs.reserve_run(now, request, count);
                    let shared = as_runs.run_shared(now);
                    prop_assert_eq!(as_runs, one_by_one);
                    for (index, single) in singles.iter().enumerate() {
                        let mut single = *single;
                        // One by one, each grant shows the last slot after it; a run's, after
                        // the run.
                        single.last_slot = one_by_one.last_slot;
                        prop_assert_eq!(run.grant(index as u64, request, shared), single);
                    }
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn a_run_past_the_longest_wait_grants_the_first_ones_and_defers_the_rest_to_one_time() {
        let mut state = PaceState::default();
        let request = SlotRequest {
            interval_ms: 1_000,
            max_interval_ms: 60_000,
            max_wait_ms: 2_500,
            guard_ms: 0,
        };
        let run = state.reserve_run(T0, request, 5);
        assert_eq!(run.granted, 3);
        let shared = state.run_shared(T0);
        let ats: Vec<(bool, u64)> = (0..5)
            .map(|i| run.grant(i, request, shared))
            .map(|g| (g.reserved, g.at))
            .collect();
        assert_eq!(
            ats,
            [
                (true, T0),
                (true, T0 + 1_000),
                (true, T0 + 2_000),
                (false, T0 + 3_000 - 2_500),
                (false, T0 + 3_000 - 2_500)
            ]
        );
        assert_eq!(state.last_slot, T0 + 2_000);
    }
}
