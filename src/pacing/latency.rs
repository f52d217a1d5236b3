//! Slowing down as a site slows (draft-illyes-webbotauth-cbcp §2.3: back-out logic "preferably
//! also" on "a change in the relative response time of the server"; Scrapy's AutoThrottle is the
//! per-process model). A report may carry the response time its worker measured; each lane keeps
//! a baseline of them, and a response much slower than the baseline is a `Signal::Slow` for
//! the lane: its slowdown grows by half for the whole fleet, capped and decaying as a 429's does
//! (`crate::pace_policy`), at most once every [`SLOW_EVERY_MS`] a lane: the workers fetching
//! from a slowing site all see it at once, and their reports are one sign, not many.
//!
//! The baseline is this replica's: an exponentially weighted mean of the response times its
//! reports carried, an eighth of each new one, once [`MIN_SAMPLES`] have come; a slow response
//! counts a sixty-fourth, so that a site that stays slow for some forty responses becomes its own
//! new baseline and the slowdown it caused decays, while one that slows under load is still
//! read as slowing as long as the load lasts. Only the slowdown is shared: a fleet's replicas each see a part of
//! the same site's responses, so their baselines agree closely, and any one of them that sees
//! the site slow widens the interval for all. Lanes are kept in a bounded cache, forgotten after
//! [`IDLE`] without a report.

use std::time::Duration;

/// Responses before a lane's baseline is trusted.
pub const MIN_SAMPLES: u32 = 5;
/// A response is slow at this many times the baseline …
pub const SLOW_RATIO: u64 = 2;
/// … and at least this much over it, so that a fast site's jitter (20 ms against 8) is not
/// read as slowing.
pub const SLOW_MARGIN_MS: u64 = 250;
/// The longest response time taken in; a longer one counts as this.
pub const MAX_RESPONSE_MS: u64 = 600_000;
/// A lane's slow responses make at most one `Signal::Slow` this often.
pub const SLOW_EVERY_MS: u64 = 1_000;
/// A lane without a report for this long is forgotten.
pub const IDLE: Duration = Duration::from_secs(30 * 60);
/// What a lane's entry costs: its key's buffer and the table's entry with the baseline, as the
/// pacing state's entries are charged (`local`).
pub fn entry_bytes(lane: &str) -> u32 {
    let bytes = crate::kept::allocation(lane.len())
        + crate::kept::table_entry_bytes(std::mem::size_of::<(String, Baseline)>());
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

/// What a response time says of its site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Nothing beyond what the report's status says.
    Usual,
    /// Slow against the baseline: a `Signal::Slow` for the lane.
    Slow,
    /// Slow, but the lane slowed for it less than [`SLOW_EVERY_MS`] ago: no sign of its own,
    /// and no success either (that would ease what the sign just did).
    StillSlow,
}

/// One lane's baseline: the mean in milliseconds, and how many responses made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Baseline {
    mean_ms: u64,
    samples: u32,
    /// When a response was last read as slow (ms since the epoch; 0: never).
    slow_at: u64,
}

/// The baselines of the lanes this replica has reports for.
#[derive(Clone)]
pub struct Latency {
    lanes: moka::sync::Cache<String, Baseline>,
}

impl std::fmt::Debug for Latency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Latency")
            .field("lanes", &self.lanes.entry_count())
            .finish()
    }
}

impl Latency {
    /// Baselines in at most `capacity_bytes`, each charged [`entry_bytes`].
    pub fn new(capacity_bytes: u64) -> Latency {
        Latency {
            lanes: moka::sync::Cache::builder()
                .max_capacity(capacity_bytes)
                .weigher(|lane: &String, _| entry_bytes(lane))
                .time_to_idle(IDLE)
                .build(),
        }
    }

    /// Takes in a response time of `lane`'s site at `now_ms`, and says what it means.
    pub fn observe(&self, lane: &str, response_ms: u64, now_ms: u64) -> Reading {
        let response_ms = response_ms.min(MAX_RESPONSE_MS);
        let before = self.lanes.get(lane);
        let (mut after, slow) = step(before, response_ms);
        let reading = match slow {
            false => Reading::Usual,
            true if now_ms >= after.slow_at.saturating_add(SLOW_EVERY_MS) => {
                after.slow_at = now_ms;
                Reading::Slow
            }
            true => Reading::StillSlow,
        };
        self.lanes.insert(lane.to_owned(), after);
        reading
    }
}

/// The baseline after one response, and whether the response was slow against the one before.
fn step(before: Option<Baseline>, response_ms: u64) -> (Baseline, bool) {
    let Some(Baseline {
        mean_ms,
        samples,
        slow_at,
    }) = before
    else {
        return (
            Baseline {
                mean_ms: response_ms,
                samples: 1,
                slow_at: 0,
            },
            false,
        );
    };
    let slow = samples >= MIN_SAMPLES
        && response_ms >= mean_ms.saturating_mul(SLOW_RATIO)
        && response_ms >= mean_ms.saturating_add(SLOW_MARGIN_MS);
    // Until trusted, a plain mean of what came; then an eighth (a sixty-fourth for a slow one).
    let weight = if samples < MIN_SAMPLES {
        u64::from(samples) + 1
    } else if slow {
        64
    } else {
        8
    };
    let mean_ms = if response_ms >= mean_ms {
        mean_ms + (response_ms - mean_ms) / weight
    } else {
        mean_ms - (mean_ms - response_ms) / weight
    };
    (
        Baseline {
            mean_ms,
            samples: samples.saturating_add(1),
            slow_at,
        },
        slow,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(times: &[u64]) -> Vec<bool> {
        let mut baseline = None;
        times
            .iter()
            .map(|&ms| {
                let (after, slow) = step(baseline, ms);
                baseline = Some(after);
                slow
            })
            .collect()
    }

    #[test]
    fn a_response_much_slower_than_the_baseline_is_slow_once_it_is_trusted() {
        // Four samples are not a baseline yet: a slow fifth is not read as slowing.
        assert_eq!(run(&[20, 20, 20, 20, 900]), [false; 5]);
        assert_eq!(
            run(&[20, 20, 20, 20, 20, 900, 21]),
            [false, false, false, false, false, true, false]
        );
    }

    #[test]
    fn jitter_of_a_fast_site_is_not_slowing() {
        // Three times the baseline, but under the margin.
        assert!(!run(&[10, 10, 10, 10, 10, 200]).iter().any(|&s| s));
        // Over the margin but not twice the baseline.
        assert!(!run(&[800, 800, 800, 800, 800, 1_300]).iter().any(|&s| s));
    }

    #[test]
    fn a_site_that_stays_slow_becomes_its_own_baseline() {
        let mut times = vec![20; 5];
        times.extend([1_000; 80]);
        let slow = run(&times);
        assert!(slow[5], "the first slow response is read as slowing");
        let last = slow.iter().rposition(|&s| s).unwrap();
        assert!(last < 60, "still slowing after {last} responses");
        assert!(!slow[84]);
    }

    #[test]
    fn lanes_are_apart_and_times_capped() {
        let latency = Latency::new(16 * 1024);
        let t = 1_795_000_000_000;
        for _ in 0..5 {
            assert_eq!(latency.observe("host:a", 30, t), Reading::Usual);
            assert_eq!(latency.observe("host:b", 3_000, t), Reading::Usual);
        }
        assert_eq!(latency.observe("host:a", 1_000, t), Reading::Slow);
        assert_eq!(latency.observe("host:b", 1_000, t), Reading::Usual);
        assert_eq!(latency.observe("host:b", u64::MAX, t), Reading::Slow);
    }

    #[test]
    fn a_burst_of_slow_responses_is_one_sign_a_second() {
        let latency = Latency::new(16 * 1024);
        let t = 1_795_000_000_000;
        for _ in 0..5 {
            latency.observe("host:a", 30, t);
        }
        let burst: Vec<_> = (0..8)
            .map(|i| latency.observe("host:a", 900, t + i * 10))
            .collect();
        assert_eq!(burst[0], Reading::Slow);
        assert!(burst[1..].iter().all(|r| *r == Reading::StillSlow));
        assert_eq!(
            latency.observe("host:a", 900, t + SLOW_EVERY_MS),
            Reading::Slow
        );
    }
}
