//! A circuit breaker for the shared store, as a plain state machine on an injected `now`: after
//! `threshold` failures in a row it opens, and calls fail at once instead of each waiting for
//! the store's time limit; after `cooldown` one call is let through to probe, and its outcome
//! closes or reopens the breaker. A dead Redis then costs a miss nothing but a branch.

use std::time::Duration;

use crate::clock::Timestamp;

/// Where the breaker stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakerState {
    /// Calls go through.
    Closed {
        /// Failures in a row so far.
        failures: u32,
    },
    /// Calls fail at once until `until`.
    Open {
        /// When a probe may go through.
        until: Timestamp,
    },
    /// One probe is in flight; other calls fail at once until `until`, when another probe may go
    /// (a probe whose caller gave up never reports).
    Probing {
        /// When another probe may go.
        until: Timestamp,
    },
}

/// The breaker.
#[derive(Debug, Clone)]
pub struct Breaker {
    state: BreakerState,
    threshold: u32,
    cooldown: Duration,
}

impl Breaker {
    /// A closed breaker that opens after `threshold` failures in a row (at least one) and
    /// probes again after `cooldown`.
    pub fn new(threshold: u32, cooldown: Duration) -> Breaker {
        Breaker {
            state: BreakerState::Closed { failures: 0 },
            threshold: threshold.max(1),
            cooldown,
        }
    }

    /// Where it stands.
    pub fn state(&self) -> BreakerState {
        self.state
    }

    /// Whether the store is believed up (closed).
    pub fn is_closed(&self) -> bool {
        matches!(self.state, BreakerState::Closed { .. })
    }

    /// Whether a call may go to the store now; when the cooldown is over, the call that asks
    /// becomes the probe.
    pub fn allow(&mut self, now: Timestamp) -> bool {
        match self.state {
            BreakerState::Closed { .. } => true,
            BreakerState::Open { until } | BreakerState::Probing { until } if now >= until => {
                self.state = BreakerState::Probing {
                    until: now + self.cooldown,
                };
                true
            }
            BreakerState::Open { .. } | BreakerState::Probing { .. } => false,
        }
    }

    /// A call that was allowed succeeded.
    pub fn success(&mut self) {
        self.state = BreakerState::Closed { failures: 0 };
    }

    /// A call was refused by a store that answers but will not do what robotsd needs (writes
    /// refused): open at once, whatever the count.
    pub fn trip(&mut self, now: Timestamp) {
        self.state = BreakerState::Open {
            until: now + self.cooldown,
        };
    }

    /// A call that was allowed failed (an error or its time limit).
    pub fn failure(&mut self, now: Timestamp) {
        self.state = match self.state {
            BreakerState::Closed { failures } if failures + 1 < self.threshold => {
                BreakerState::Closed {
                    failures: failures + 1,
                }
            }
            _ => BreakerState::Open {
                until: now + self.cooldown,
            },
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COOLDOWN: Duration = Duration::from_secs(5);

    #[test]
    fn opens_after_the_threshold_and_fails_fast() {
        let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
        let mut breaker = Breaker::new(3, COOLDOWN);
        for _ in 0..2 {
            assert!(breaker.allow(t0));
            breaker.failure(t0);
            assert!(breaker.is_closed());
        }
        assert!(breaker.allow(t0));
        breaker.failure(t0);
        assert!(!breaker.is_closed());
        assert!(!breaker.allow(t0 + COOLDOWN - Duration::from_millis(1)));
    }

    #[test]
    fn a_refusal_opens_it_at_once() {
        let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
        let mut breaker = Breaker::new(5, COOLDOWN);
        breaker.trip(t0);
        assert_eq!(
            breaker.state(),
            BreakerState::Open {
                until: t0 + COOLDOWN
            }
        );
        assert!(!breaker.allow(t0));
    }

    #[test]
    fn a_success_resets_the_count() {
        let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
        let mut breaker = Breaker::new(2, COOLDOWN);
        breaker.failure(t0);
        breaker.success();
        breaker.failure(t0);
        assert!(breaker.is_closed());
    }

    #[test]
    fn one_probe_after_the_cooldown_closes_or_reopens_it() {
        let t0 = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
        let mut breaker = Breaker::new(1, COOLDOWN);
        breaker.failure(t0);
        let later = t0 + COOLDOWN;
        assert!(breaker.allow(later), "the probe");
        assert!(!breaker.allow(later), "only one probe at a time");
        assert!(
            breaker.allow(later + COOLDOWN),
            "a probe that never reported is replaced"
        );
        breaker.failure(later);
        assert_eq!(
            breaker.state(),
            BreakerState::Open {
                until: later + COOLDOWN
            }
        );
        assert!(breaker.allow(later + 2 * COOLDOWN));
        breaker.success();
        assert!(breaker.is_closed());
        assert!(breaker.allow(later + COOLDOWN));
    }
}
