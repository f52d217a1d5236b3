//! The pacing rules of one origin (docs/politeness.md) as a plain state machine on an injected
//! `now`, in whole milliseconds so that the Redis script (`store::redis_pace`) can run the same
//! arithmetic and agree to the millisecond. It sits below both the store, which runs it in Redis
//! and in memory, and [`crate::pacing`], which hands out its slots.
//!
//! An origin's state is the start of the last slot handed out, the end of a `Retry-After` the
//! site asked for, and a slowdown factor with the time it was last changed. A reservation takes
//! the earliest time that keeps the asker's interval after the last slot and is past any
//! `Retry-After`; it is refused (deferred) when that is further ahead than the longest wait. A
//! site's pushback doubles the slowdown, a site answering slower than its baseline multiplies it
//! by 1.5 ([`Signal::Slow`]); it decays by half every [`SLOWDOWN_HALF_LIFE_MS`], and each
//! success reported takes a tenth of what is left.
//!
//! Whoever decides for the whole fleet (the shared store) keeps each interval after the last
//! slot. A replica that decides alone, without a store or while it is down, knows nothing of
//! the other replicas' slots, so it keeps its [`FleetShare`]: 1/N of the rate, on its own phase
//! of the interval when it knows its index.

use std::time::Duration;

mod fleet_view;
mod lender;
mod runs;
mod timetable;
pub use fleet_view::FleetView;
pub use lender::{Lender, LenderEvent};
pub use runs::{RunShared, SlotRun};
pub use timetable::{LEASE_MS, Lease, LendRequest, Lending, Lent, RENEW_MS, Timetable, lend};

/// A slowdown of ×1, in thousandths (the factor is kept as an integer so that Lua's doubles and
/// Rust agree exactly).
pub const UNSLOWED: u64 = 1000;
/// The largest slowdown, ×64: a bound on the number, below the interval cap in practice.
pub const MAX_SLOWDOWN: u64 = 64 * UNSLOWED;
/// The excess slowdown halves this often without a new pushback.
pub const SLOWDOWN_HALF_LIFE_MS: u64 = 60_000;
/// A reported success keeps this many tenths of the excess slowdown.
pub const SUCCESS_KEEPS_TENTHS: u64 = 9;
/// A site answering slower than its baseline multiplies the slowdown by this many tenths
/// (×1.5): gentler than a pushback's doubling, since slowness is a hint (cbcp §2.3) where a 429
/// is a request.
pub const SLOW_GROWS_TENTHS: u64 = 15;

/// The pacing settings; each is a flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaceConfig {
    /// The interval of an origin whose robots.txt states no crawl-delay for the agent (1 s).
    pub default_interval: Duration,
    /// The largest interval: a longer crawl-delay is capped to it, and a slowdown never makes
    /// the interval longer (60 s).
    pub max_interval: Duration,
    /// A slot further ahead than this is not reserved (60 s).
    pub max_wait: Duration,
    /// The longest `Retry-After` honoured (10 min).
    pub max_retry_after: Duration,
    /// Added to every interval between two slots (50 ms), so that a worker that starts its
    /// fetch a little late (a timer, a busy event loop: the clients allow 25 ms) followed by one
    /// on time still leaves the site a gap of the whole interval.
    pub guard: Duration,
}

impl Default for PaceConfig {
    fn default() -> Self {
        PaceConfig {
            default_interval: Duration::from_secs(1),
            max_interval: Duration::from_secs(60),
            max_wait: Duration::from_secs(60),
            max_retry_after: Duration::from_secs(600),
            guard: Duration::from_millis(50),
        }
    }
}

/// A [`PaceConfig`] whose numbers contradict each other.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PaceConfigError {
    /// A zero where time must pass.
    #[error("{field} must be above zero")]
    Zero {
        /// The field.
        field: &'static str,
    },
    /// The default interval above the largest one.
    #[error("default_interval ({default:?}) must not exceed max_interval ({max:?})")]
    DefaultAboveMax {
        /// The default interval.
        default: Duration,
        /// The largest interval.
        max: Duration,
    },
}

impl PaceConfig {
    /// Checks that the numbers fit together.
    pub fn validate(&self) -> Result<(), PaceConfigError> {
        for (field, value) in [
            ("max_interval", self.max_interval),
            ("max_wait", self.max_wait),
        ] {
            if value.is_zero() {
                return Err(PaceConfigError::Zero { field });
            }
        }
        if self.default_interval > self.max_interval {
            return Err(PaceConfigError::DefaultAboveMax {
                default: self.default_interval,
                max: self.max_interval,
            });
        }
        Ok(())
    }

    /// How long an origin's state is kept after its last change: past the longest wait and
    /// interval, the longest `Retry-After`, and the time a slowdown takes to decay (below a
    /// thousandth of its excess after 16 half-lives), so that forgetting it changes nothing.
    pub fn keep(&self) -> Duration {
        (self.max_wait + self.max_interval)
            .max(self.max_retry_after)
            .max(Duration::from_millis(16 * SLOWDOWN_HALF_LIFE_MS))
            + Duration::from_secs(60)
    }

    /// The interval a check asks with, from its group's crawl-delay in seconds (none: the
    /// default); `true` when the crawl-delay was capped.
    pub fn base_interval(&self, crawl_delay: Option<f64>) -> (u64, bool) {
        let max = millis(self.max_interval);
        match crawl_delay {
            // The engine keeps only finite, non-negative values; anything else would be a bug,
            // and the default is the safe reading of it.
            Some(seconds) if seconds.is_finite() && seconds >= 0.0 => {
                let ms = (seconds * 1000.0).ceil();
                if ms > max as f64 {
                    (max, true)
                } else {
                    (ms as u64, false)
                }
            }
            _ => (millis(self.default_interval), false),
        }
    }
}

/// Whole milliseconds of `d`, saturating.
pub fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// One origin's pacing state, as the store keeps it. Times are milliseconds since the epoch on
/// the clock of whoever keeps it (Redis's own, in a fleet); zero is "never".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PaceState {
    /// The start of the last slot handed out.
    pub last_slot: u64,
    /// No slot before this (a `Retry-After`).
    pub blocked_until: u64,
    /// The slowdown in thousandths when it was last set (at least [`UNSLOWED`]; zero reads as
    /// [`UNSLOWED`]).
    pub slowdown: u64,
    /// When it was last set.
    pub slowdown_at: u64,
}

/// What a reservation asks for: the interval the asker's group wants, and how far ahead it
/// may wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotRequest {
    /// The interval before this slot, in milliseconds, before any slowdown.
    pub interval_ms: u64,
    /// The largest interval a slowdown can make, in milliseconds.
    pub max_interval_ms: u64,
    /// The longest wait, in milliseconds.
    pub max_wait_ms: u64,
    /// The guard band added after the interval, in milliseconds ([`PaceConfig::guard`]).
    pub guard_ms: u64,
}

/// The replicas a replica counts itself among when it decides slots alone (`--fleet-size`,
/// `--fleet-index`, docs/politeness.md): without a shared store, or while it is down, each of
/// `size` replicas keeps 1/`size` of a site's rate, so that together they keep it; with its
/// `index`, each also keeps its own phase of the interval, so that every gap at the site holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FleetShare {
    size: u32,
    index: Option<u32>,
}

/// A [`FleetShare`] that cannot be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FleetShareError {
    /// A fleet of no replicas.
    #[error("the fleet size must be above zero")]
    Empty,
    /// An index outside `0..size`.
    #[error("the fleet index ({index}) must be below the fleet size ({size})")]
    IndexOutside {
        /// The index.
        index: u32,
        /// The fleet size.
        size: u32,
    },
}

impl FleetShare {
    /// A fleet of one: the replica keeps the whole rate.
    pub const WHOLE: FleetShare = FleetShare {
        size: 1,
        index: None,
    };

    /// One of `size` replicas, the `index`th (`0..size`) when known.
    pub fn new(size: u32, index: Option<u32>) -> Result<FleetShare, FleetShareError> {
        if size == 0 {
            return Err(FleetShareError::Empty);
        }
        match index {
            Some(index) if index >= size => Err(FleetShareError::IndexOutside { index, size }),
            _ => Ok(FleetShare { size, index }),
        }
    }

    /// How many replicas pace alone together.
    pub fn size(self) -> u32 {
        self.size
    }

    /// This replica's place among them, when known.
    pub fn index(self) -> Option<u32> {
        self.index
    }
}

impl Default for FleetShare {
    fn default() -> Self {
        FleetShare::WHOLE
    }
}

/// The first time at or after `at` that lies `index` periods into a cycle of `size` periods
/// counted from the epoch (saturating far in the future).
fn on_phase(at: u64, period: u64, size: u64, index: u64) -> u64 {
    let cycle = period.saturating_mul(size);
    let offset = period.saturating_mul(index) % cycle;
    let into = at % cycle;
    let ahead = if offset >= into {
        offset - into
    } else {
        cycle - (into - offset)
    };
    at.saturating_add(ahead)
}

/// The outcome of a reservation, on the keeper's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotGrant {
    /// Whether the slot was reserved (`false`: it is further ahead than the longest wait, and
    /// nothing was taken).
    pub reserved: bool,
    /// Reserved: when the fetch may start; deferred: when to ask again.
    pub at: u64,
    /// The keeper's now.
    pub now: u64,
    /// The interval applied, after the slowdown.
    pub interval_ms: u64,
    /// The slowdown applied, in thousandths.
    pub slowdown: u64,
    /// The `Retry-After` in force, if any (zero: none).
    pub blocked_until: u64,
    /// The last slot kept after the reservation (and after any that shared its call on the
    /// store): what a [`FleetView`] starts from.
    pub last_slot: u64,
}

/// What the site answered a worker for one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// A normal answer: the slowdown eases.
    Success,
    /// The site pushed back (429, 5xx, a timeout); `retry_after_ms` when it said how long.
    Pushback {
        /// The `Retry-After` asked for, in milliseconds, already capped.
        retry_after_ms: Option<u64>,
    },
    /// The site answered, but much slower than its recent baseline (`crate::pacing::latency`).
    Slow,
}

impl PaceState {
    /// The slowdown in thousandths at `now`: the excess over ×1 halves every
    /// [`SLOWDOWN_HALF_LIFE_MS`].
    pub fn slowdown_at(&self, now: u64) -> u64 {
        let set = self.slowdown.max(UNSLOWED);
        let excess = set - UNSLOWED;
        if excess == 0 {
            return UNSLOWED;
        }
        let elapsed = now.saturating_sub(self.slowdown_at) as f64;
        let kept = (excess as f64 * 2f64.powf(-elapsed / SLOWDOWN_HALF_LIFE_MS as f64)).floor();
        UNSLOWED + kept as u64
    }

    /// The slowdown at `now`, the interval `request` gets after it (capped), and the period a
    /// slot takes: that interval and the guard band.
    fn paced(&self, now: u64, request: SlotRequest) -> (u64, u64, u64) {
        let slowdown = self.slowdown_at(now);
        let slowed = request.interval_ms.saturating_mul(slowdown) / UNSLOWED;
        let interval_ms = slowed.min(request.max_interval_ms.max(request.interval_ms));
        (
            slowdown,
            interval_ms,
            interval_ms.saturating_add(request.guard_ms),
        )
    }

    /// The `Retry-After` in force at `now`, if any (zero: none), as a grant shows it.
    fn blocked_at(&self, now: u64) -> u64 {
        if self.blocked_until > now {
            self.blocked_until
        } else {
            0
        }
    }

    /// Reserves the earliest slot for `request` at `now`, or says when to ask again: the rule
    /// of whoever decides for the whole fleet (the shared store, or a replica that is the whole
    /// fleet).
    pub fn reserve(&mut self, now: u64, request: SlotRequest) -> SlotGrant {
        self.reserve_share(now, request, FleetShare::WHOLE, 0)
    }

    /// Reserves the earliest slot for `request` at `now` for a replica that decides alone as
    /// one of `share.size()` replicas: its slots are `size` periods (interval and guard band)
    /// apart, so that the replicas together keep the site's rate, and with an index they fall
    /// on the replica's own phase of a grid of periods from the epoch, so that two replicas'
    /// slots are a whole period apart too (on clocks that agree; the guard band absorbs a few
    /// milliseconds of skew). No slot before `floor`: the places before it are lent to the
    /// store ([`Lender::floor`]).
    pub fn reserve_share(
        &mut self,
        now: u64,
        request: SlotRequest,
        share: FleetShare,
        floor: u64,
    ) -> SlotGrant {
        let (slowdown, interval_ms, period) = self.paced(now, request);
        let size = u64::from(share.size);
        let mut at = now.max(self.blocked_until).max(floor);
        if self.last_slot > 0 {
            at = at.max(self.last_slot.saturating_add(period.saturating_mul(size)));
        }
        if let Some(index) = share.index
            && size > 1
            && period > 0
        {
            at = on_phase(at, period, size, u64::from(index));
        }
        let reserved = at - now <= request.max_wait_ms;
        if reserved {
            self.last_slot = at;
        } else {
            at -= request.max_wait_ms;
        }
        SlotGrant {
            reserved,
            at,
            now,
            interval_ms,
            slowdown,
            blocked_until: self.blocked_at(now),
            last_slot: self.last_slot,
        }
    }

    /// Takes in what the site answered at `now`.
    pub fn signal(&mut self, now: u64, signal: Signal) {
        let current = self.slowdown_at(now);
        self.slowdown = match signal {
            Signal::Success => UNSLOWED + (current - UNSLOWED) * SUCCESS_KEEPS_TENTHS / 10,
            Signal::Pushback { .. } => current.saturating_mul(2).min(MAX_SLOWDOWN),
            Signal::Slow => (current.saturating_mul(SLOW_GROWS_TENTHS) / 10).min(MAX_SLOWDOWN),
        };
        self.slowdown_at = now;
        if let Signal::Pushback {
            retry_after_ms: Some(after),
        } = signal
        {
            self.blocked_until = self.blocked_until.max(now.saturating_add(after));
        }
    }

    /// Whether the site's pushback still shows at `now` (a slowdown or a `Retry-After`).
    pub fn slowed(&self, now: u64) -> bool {
        self.slowdown_at(now) > UNSLOWED || self.blocked_until > now
    }
}

#[cfg(test)]
mod tests;
