//! Where robotsd's time comes from: one [`Clock`] gives both the monotonic time the cache policy
//! runs on and the wall-clock time answers show, so tests that move the clock move both.
//!
//! The policy's deadlines (expiry, next retry, the 12-hour and 30-day windows) are monotonic
//! instants: a wall clock that steps (NTP, a VM resumed) must not expire a copy or end a backoff.
//! Answers show those instants as wall-clock times, converted against one [`Reading`] per answer.

use std::time::{Instant, SystemTime};

/// A source of time. [`TokioClock`] in the service; tests use one they move by hand.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current monotonic instant.
    fn now(&self) -> Instant;

    /// The current wall-clock time.
    fn wall(&self) -> SystemTime;

    /// Both, read together, for converting monotonic instants to wall-clock times.
    fn read(&self) -> Reading {
        Reading {
            instant: self.now(),
            wall: self.wall(),
        }
    }
}

/// The two clocks read at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// Monotonic time.
    pub instant: Instant,
    /// Wall-clock time at that instant.
    pub wall: SystemTime,
}

impl Reading {
    /// The wall-clock time of the monotonic instant `at`, relative to this reading.
    pub fn wall_at(self, at: Instant) -> SystemTime {
        if at >= self.instant {
            self.wall + (at - self.instant)
        } else {
            self.wall - (self.instant - at)
        }
    }
}

/// Tokio's monotonic clock, so that tests with paused tokio time move the cache's time too, and
/// the system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct TokioClock;

impl Clock for TokioClock {
    fn now(&self) -> Instant {
        tokio::time::Instant::now().into_std()
    }

    fn wall(&self) -> SystemTime {
        SystemTime::now()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn instants_convert_both_ways_around_the_reading() {
        let start = Instant::now();
        let reading = Reading {
            instant: start + Duration::from_secs(60),
            wall: SystemTime::UNIX_EPOCH + Duration::from_secs(1_000),
        };
        let later = reading.instant + Duration::from_secs(60);
        assert_eq!(
            reading.wall_at(later),
            SystemTime::UNIX_EPOCH + Duration::from_secs(1_060)
        );
        assert_eq!(
            reading.wall_at(start),
            SystemTime::UNIX_EPOCH + Duration::from_secs(940)
        );
    }
}
