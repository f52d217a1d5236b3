//! Where robotsd's time comes from: a [`Clock`] gives [`Timestamp`]s, wall-clock times that
//! only move forward, so tests that move the clock move every deadline and every time an answer
//! shows.
//!
//! The cache policy's deadlines (expiry, next retry, the 12-hour and 30-day windows) must not
//! jump when the system clock is stepped (NTP, a resumed VM), and they must mean the same to
//! every replica that shares them through the store, including one started a minute ago. So a
//! clock reads the wall clock once, when it is made, and from then on adds the monotonic time
//! that has passed: its timestamps are monotonic, comparable across processes (to the accuracy
//! of their clocks' synchronisation), and can lie before the process started.

use std::ops::{Add, AddAssign, Sub};
use std::time::{Duration, SystemTime};

/// A point in wall-clock time: the time since the Unix epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(Duration);

impl Timestamp {
    /// The Unix epoch.
    pub const EPOCH: Timestamp = Timestamp(Duration::ZERO);

    /// The time `since_epoch` after the Unix epoch.
    pub const fn from_unix(since_epoch: Duration) -> Timestamp {
        Timestamp(since_epoch)
    }

    /// A system time (times before the epoch are the epoch).
    pub fn from_system(at: SystemTime) -> Timestamp {
        Timestamp(
            at.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default(),
        )
    }

    /// As a system time.
    pub fn to_system(self) -> SystemTime {
        SystemTime::UNIX_EPOCH + self.0
    }

    /// The time since the Unix epoch.
    pub fn since_epoch(self) -> Duration {
        self.0
    }

    /// Milliseconds since the Unix epoch, as the shared store keeps times (saturating far
    /// after now).
    pub fn unix_millis(self) -> u64 {
        u64::try_from(self.0.as_millis()).unwrap_or(u64::MAX)
    }

    /// The time `ms` milliseconds after the Unix epoch, as read from the shared store: clamped
    /// to two hundred years, later than any deadline robotsd sets, so that no stored number
    /// overflows a deadline computed from it.
    pub fn from_unix_millis(ms: u64) -> Timestamp {
        const FAR: u64 = 200 * 365 * 24 * 3600 * 1000;
        Timestamp(Duration::from_millis(ms.min(FAR)))
    }

    /// How long after `earlier` this is (zero when it is not after it).
    pub fn saturating_duration_since(self, earlier: Timestamp) -> Duration {
        self.0.saturating_sub(earlier.0)
    }
}

impl Add<Duration> for Timestamp {
    type Output = Timestamp;

    /// Saturates instead of overflowing: settings are bounded far below, and a deadline past the
    /// end of time is still "never".
    fn add(self, rhs: Duration) -> Timestamp {
        Timestamp(self.0.saturating_add(rhs))
    }
}

impl Sub<Duration> for Timestamp {
    type Output = Timestamp;

    /// Saturates at the epoch.
    fn sub(self, rhs: Duration) -> Timestamp {
        Timestamp(self.0.saturating_sub(rhs))
    }
}

impl AddAssign<Duration> for Timestamp {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

/// A source of time. [`TokioClock`] in the service; tests use one they move by hand.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now.
    fn now(&self) -> Timestamp;
}

/// The wall clock read once, plus tokio's monotonic time since: tests with paused tokio time
/// move it too.
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    anchor: (tokio::time::Instant, Timestamp),
}

impl TokioClock {
    /// A clock anchored at the wall clock now.
    pub fn new() -> TokioClock {
        TokioClock {
            anchor: (
                tokio::time::Instant::now(),
                Timestamp::from_system(SystemTime::now()),
            ),
        }
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        TokioClock::new()
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Timestamp {
        let (instant, wall) = self.anchor;
        wall + instant.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_clock_follows_tokio_time_from_the_wall_clock() {
        let clock = TokioClock::new();
        let start = clock.now();
        let wall = Timestamp::from_system(SystemTime::now());
        assert!(wall.saturating_duration_since(start) < Duration::from_secs(1));
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert_eq!(
            clock.now().saturating_duration_since(start),
            Duration::from_secs(3600)
        );
    }

    #[test]
    fn timestamps_convert_and_saturate() {
        let at = Timestamp::from_unix(Duration::from_millis(1_795_000_000_123));
        assert_eq!(Timestamp::from_system(at.to_system()), at);
        assert_eq!(
            Timestamp::from_system(SystemTime::UNIX_EPOCH - Duration::from_secs(1)),
            Timestamp::EPOCH
        );
        assert_eq!(
            Timestamp::EPOCH.saturating_duration_since(at),
            Duration::ZERO
        );
        let _ = at + Duration::MAX;
    }
}
