//! The per-origin cache and backoff rules (SEMANTICS.md §4 and §5) as a plain state machine.
//!
//! No IO, no clock, no randomness: every function takes `now`, and the jitter of a retry delay
//! is passed in, so the 12-hour and 30-day rules are tested in microseconds and the async layer
//! around it ([`super::OriginCache`]) stays thin. The state of one origin is its last good copy
//! (the last successful fetch) and, during a run of failures, the backoff; or, briefly, a
//! refusal (a redirect to a destination robotsd will not contact). A [`Decision`] says what to
//! answer now and whether to fetch.

use std::sync::Arc;
use std::time::Duration;

use crate::clock::Timestamp;

use robotsd_engine::RobotsTxt;

/// The numbers of §4 and §5; each is a setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyConfig {
    /// Lifetime of a copy without `Cache-Control: max-age` (24 h).
    pub default_lifetime: Duration,
    /// Shortest lifetime, also for `no-cache`/`no-store` (1 min).
    pub min_lifetime: Duration,
    /// Longest lifetime a `max-age` can ask for (24 h).
    pub max_lifetime: Duration,
    /// From the first failure, everything is disallowed this long (12 h).
    pub disallow_window: Duration,
    /// Until this long after the first failure, the last good copy is used (30 days).
    pub last_copy_window: Duration,
    /// Shortest wait before retrying an unreachable robots.txt (1 min).
    pub retry_min: Duration,
    /// Longest wait before retrying (1 h).
    pub retry_max: Duration,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        const MINUTE: Duration = Duration::from_secs(60);
        const HOUR: Duration = Duration::from_secs(3600);
        PolicyConfig {
            default_lifetime: 24 * HOUR,
            min_lifetime: MINUTE,
            max_lifetime: 24 * HOUR,
            disallow_window: 12 * HOUR,
            last_copy_window: 30 * 24 * HOUR,
            retry_min: MINUTE,
            retry_max: HOUR,
        }
    }
}

/// A [`PolicyConfig`] whose numbers contradict each other; each variant names the fields by
/// their names in [`PolicyConfig`], so that a caller can say where they came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyConfigError {
    /// A zero where time must pass.
    #[error("{field} must be above zero")]
    Zero {
        /// The field.
        field: &'static str,
    },
    /// A minimum above its maximum.
    #[error("{field} ({value:?}) must not exceed {limit_field} ({limit:?})")]
    Exceeds {
        /// The field that is too large.
        field: &'static str,
        /// The field that bounds it.
        limit_field: &'static str,
        /// The first field's value.
        value: Duration,
        /// The second field's value.
        limit: Duration,
    },
}

impl PolicyConfig {
    /// Builds a policy from its numbers, given in the order of the fields, if they make sense
    /// together ([`PolicyConfig::validate`]).
    pub fn try_new(
        default_lifetime: Duration,
        min_lifetime: Duration,
        max_lifetime: Duration,
        disallow_window: Duration,
        last_copy_window: Duration,
        retry_min: Duration,
        retry_max: Duration,
    ) -> Result<PolicyConfig, PolicyConfigError> {
        let config = PolicyConfig {
            default_lifetime,
            min_lifetime,
            max_lifetime,
            disallow_window,
            last_copy_window,
            retry_min,
            retry_max,
        };
        config.validate().map(|()| config)
    }

    /// Checks that the numbers make sense together; the first contradiction found is reported.
    pub fn validate(&self) -> Result<(), PolicyConfigError> {
        let zero = |field, value: Duration| {
            if value.is_zero() {
                return Err(PolicyConfigError::Zero { field });
            }
            Ok(())
        };
        let at_most = |(field, value): (_, Duration), (limit_field, limit)| {
            if value > limit {
                return Err(PolicyConfigError::Exceeds {
                    field,
                    limit_field,
                    value,
                    limit,
                });
            }
            Ok(())
        };
        let (min, max, default) = (self.min_lifetime, self.max_lifetime, self.default_lifetime);
        zero("min_lifetime", min)?;
        at_most(("min_lifetime", min), ("max_lifetime", max))?;
        at_most(("min_lifetime", min), ("default_lifetime", default))?;
        at_most(("default_lifetime", default), ("max_lifetime", max))?;
        zero("retry_min", self.retry_min)?;
        at_most(("retry_min", self.retry_min), ("retry_max", self.retry_max))?;
        at_most(
            ("disallow_window", self.disallow_window),
            ("last_copy_window", self.last_copy_window),
        )
    }

    /// How long a successful fetch is used: its `max-age` (zero for `no-cache`/`no-store`), else
    /// the default, within [min, max].
    pub fn lifetime(&self, max_age: Option<Duration>) -> Duration {
        max_age
            .unwrap_or(self.default_lifetime)
            .clamp(self.min_lifetime, self.max_lifetime)
    }

    /// How long to wait before the next retry after `failures` failures in a row.
    ///
    /// `Retry-After` is honoured within [retry_min, retry_max]; 429 and 503 (`short`) retry at the
    /// short end; otherwise the wait doubles from `retry_min` up to `retry_max`, with "equal
    /// jitter" (half fixed, half random from `jitter` in [0, 1)) so that many robotsd instances
    /// do not retry a recovering site in step.
    pub fn retry_delay(
        &self,
        failures: u32,
        short: bool,
        retry_after: Option<Duration>,
        jitter: f64,
    ) -> Duration {
        let jitter = if jitter.is_finite() {
            jitter.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let delay = match retry_after {
            Some(after) => after,
            None if short => self.retry_min + self.retry_min.mul_f64(jitter / 2.0),
            None => {
                let exponent = failures.saturating_sub(1).min(30);
                let full = self
                    .retry_min
                    .saturating_mul(1u32 << exponent)
                    .min(self.retry_max);
                full / 2 + (full / 2).mul_f64(jitter)
            }
        };
        delay.clamp(self.retry_min, self.retry_max)
    }
}

/// What a robots.txt says, as far as the service is concerned.
#[derive(Debug, Clone)]
pub enum Rules {
    /// A robots.txt was fetched and parsed (2xx).
    Parsed(Arc<RobotsTxt>),
    /// There is no robots.txt (4xx other than 429; too many redirects): everything is allowed.
    NoRobots,
}

/// A successful fetch kept for answering. `R` is what the document says: a robots.txt's
/// [`Rules`] here, an RSL license document in [`crate::rsl`], which keeps its copies by the same
/// rules.
#[derive(Debug, Clone)]
pub struct Copy<M, R = Rules> {
    /// What it says.
    pub rules: R,
    /// When it was fetched.
    pub fetched_at: Timestamp,
    /// When it expires.
    pub expires_at: Timestamp,
    /// What the fetch layer wants to remember (status, sizes, final URL).
    pub meta: M,
}

/// A fetch that went to a destination robotsd refuses to contact (a redirect to a private
/// address): no robots.txt and no verdict, remembered briefly so that checks asking again do not
/// make robotsd ask the origin again.
#[derive(Debug, Clone)]
pub struct Refusal<M> {
    /// When it was seen.
    pub at: Timestamp,
    /// When the origin may be asked again.
    pub expires_at: Timestamp,
    /// What the fetch layer wants to remember (which destination, and why).
    pub meta: M,
}

/// A run of failures.
#[derive(Debug, Clone)]
pub struct Backoff<M> {
    /// The first failure of the run (the 12-hour and 30-day clocks start here).
    pub since: Timestamp,
    /// Failures in a row.
    pub failures: u32,
    /// No request is sent to the origin before this.
    pub next_retry: Timestamp,
    /// What the fetch layer remembers of the last failure.
    pub last: M,
}

/// The outcome of one fetch, as the policy needs it.
#[derive(Debug, Clone)]
pub enum FetchResult<M, R = Rules> {
    /// 2xx, 3xx-as-404 and 4xx: a usable answer.
    Success {
        /// What it says.
        rules: R,
        /// `Cache-Control: max-age` (zero for `no-cache`/`no-store`), if any.
        max_age: Option<Duration>,
        /// Kept with the copy.
        meta: M,
    },
    /// 429, 5xx and network failures.
    Unreachable {
        /// `Retry-After`, if the origin sent one.
        retry_after: Option<Duration>,
        /// 429 or 503: the site asked to come back soon.
        short: bool,
        /// Kept with the backoff.
        meta: M,
    },
    /// A destination on the way was refused: nothing was sent there.
    Refused {
        /// Kept with the refusal.
        meta: M,
    },
    /// 304 to a revalidation of the copy (RFC 9111 §4.3.4): the copy is current, and lives
    /// `max_age` (or the default) from now. Without a copy, nothing but the fetch's time changes.
    NotModified {
        /// `Cache-Control: max-age` of the 304, if any.
        max_age: Option<Duration>,
        /// The copy's, renewed by the 304.
        meta: M,
    },
}

/// Everything known about one origin.
#[derive(Debug, Clone)]
pub struct OriginState<M, R = Rules> {
    /// The last successful fetch.
    pub copy: Option<Copy<M, R>>,
    /// The current run of failures, if the last fetch failed.
    pub backoff: Option<Backoff<M>>,
    /// The refusal, if the last fetch was refused.
    pub refusal: Option<Refusal<M>>,
    /// When the last fetch completed: the next is not sent before the shortest lifetime has
    /// passed, even if the copy it brought has been dropped for memory since.
    pub last_fetch: Option<Timestamp>,
}

impl<M, R> Default for OriginState<M, R> {
    fn default() -> Self {
        OriginState {
            copy: None,
            backoff: None,
            refusal: None,
            last_fetch: None,
        }
    }
}

/// What to answer from while an origin is in backoff (the §5 table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackoffBasis {
    /// Less than 12 h since the first failure: everything is disallowed.
    DisallowAll,
    /// 12 h to 30 days: the last good copy.
    LastGoodCopy,
    /// 12 h to 30 days without a copy: everything is allowed.
    AllowAllNoCopy,
    /// 30 days or more: as if there were no robots.txt.
    AllowAllAfter30Days,
}

/// What to do for a check now.
#[derive(Debug)]
pub enum Decision<'a, M, R = Rules> {
    /// Nothing is known: fetch and wait for it.
    Fetch,
    /// Answer from the copy; `stale` when it has expired, in which case one background refresh
    /// should run (stale-while-revalidate).
    Copy {
        /// The copy.
        copy: &'a Copy<M, R>,
        /// Expired: refresh in the background.
        stale: bool,
    },
    /// In backoff: answer by `basis`; `retry_due` when the next retry time has come, in which
    /// case one background fetch should run.
    Backoff {
        /// The run of failures.
        backoff: &'a Backoff<M>,
        /// What to answer from.
        basis: BackoffBasis,
        /// When `basis` ends if the failures go on: the end of the disallow window, or of the
        /// last-copy window; `None` once both have passed.
        until: Option<Timestamp>,
        /// The last good copy, for [`BackoffBasis::LastGoodCopy`].
        copy: Option<&'a Copy<M, R>>,
        /// The next retry is due.
        retry_due: bool,
    },
    /// The last fetch was refused: answer with that error; `stale` when it has expired, in which
    /// case one background fetch should run.
    Refused {
        /// The refusal.
        refusal: &'a Refusal<M>,
        /// Expired: fetch again in the background.
        stale: bool,
    },
    /// The copy was dropped for memory less than the shortest lifetime after it was fetched:
    /// nothing to answer from, and no fetch before `until`.
    Cooling {
        /// When the origin may be fetched again.
        until: Timestamp,
    },
}

impl<M, R> OriginState<M, R> {
    /// What to answer now, and whether to fetch.
    pub fn decide(&self, now: Timestamp, config: &PolicyConfig) -> Decision<'_, M, R> {
        if let Some(backoff) = &self.backoff {
            let elapsed = now.saturating_duration_since(backoff.since);
            let copy = self.copy.as_ref();
            let (basis, until) = if elapsed < config.disallow_window {
                (
                    BackoffBasis::DisallowAll,
                    Some(backoff.since + config.disallow_window),
                )
            } else if elapsed >= config.last_copy_window {
                (BackoffBasis::AllowAllAfter30Days, None)
            } else if copy.is_some() {
                (
                    BackoffBasis::LastGoodCopy,
                    Some(backoff.since + config.last_copy_window),
                )
            } else {
                (
                    BackoffBasis::AllowAllNoCopy,
                    Some(backoff.since + config.last_copy_window),
                )
            };
            return Decision::Backoff {
                backoff,
                basis,
                until,
                copy: copy.filter(|_| basis == BackoffBasis::LastGoodCopy),
                retry_due: now >= backoff.next_retry,
            };
        }
        if let Some(refusal) = &self.refusal {
            return Decision::Refused {
                refusal,
                stale: now >= refusal.expires_at,
            };
        }
        match &self.copy {
            None => match self.last_fetch {
                Some(at) if now < at + config.min_lifetime => Decision::Cooling {
                    until: at + config.min_lifetime,
                },
                _ => Decision::Fetch,
            },
            Some(copy) => Decision::Copy {
                copy,
                stale: now >= copy.expires_at,
            },
        }
    }

    /// Whether the state calls for a fetch now: nothing known, an expired copy or refusal, or a
    /// backoff's retry time come; never before the next retry time.
    pub fn fetch_due(&self, now: Timestamp, config: &PolicyConfig) -> bool {
        self.may_fetch(now)
            && matches!(
                self.decide(now, config),
                Decision::Fetch
                    | Decision::Copy { stale: true, .. }
                    | Decision::Backoff {
                        retry_due: true,
                        ..
                    }
                    | Decision::Refused { stale: true, .. }
            )
    }

    /// Whether a fetch may be sent now (never before the next retry time of a backoff).
    pub fn may_fetch(&self, now: Timestamp) -> bool {
        self.backoff.as_ref().is_none_or(|b| now >= b.next_retry)
    }

    /// How long before an unasked-for fetch (an operator's refresh) may be sent: the rest of the
    /// shortest lifetime since the last fetch, or of a backoff's wait, whichever is longer; zero
    /// when it may go now.
    pub fn wait_before_fetch(&self, now: Timestamp, config: &PolicyConfig) -> Duration {
        let gap = self
            .last_fetch
            .map(|at| (at + config.min_lifetime).saturating_duration_since(now));
        let retry = self
            .backoff
            .as_ref()
            .map(|b| b.next_retry.saturating_duration_since(now));
        gap.max(retry).unwrap_or_default()
    }

    /// Heap bytes the state holds, for a cache's weigher: the copy's rules and what its fetch
    /// left (`meta`), and what the last failure and the refusal left, each priced by the caller
    /// (this module knows neither type). A backoff keeps the last good copy, so both count.
    pub fn heap_size(&self, meta: impl Fn(&M) -> usize, rules: impl Fn(&R) -> usize) -> usize {
        self.copy
            .as_ref()
            .map_or(0, |c| rules(&c.rules) + meta(&c.meta))
            + self.backoff.as_ref().map_or(0, |b| meta(&b.last))
            + self.refusal.as_ref().map_or(0, |r| meta(&r.meta))
    }

    /// Drops the copy (the cache needs its memory), keeping what politeness needs: the backoff,
    /// a refusal, and when the last fetch was. In backoff, the §5 table then has no last good
    /// copy to answer from.
    pub fn drop_copy(&mut self) {
        self.copy = None;
    }

    /// Whether forgetting this state now could send a fetch the rules forbid: a backoff, a
    /// refusal not yet expired, or a fetch less than the shortest lifetime ago.
    pub fn restrains_fetching(&self, now: Timestamp, config: &PolicyConfig) -> bool {
        self.backoff.is_some()
            || self.refusal.as_ref().is_some_and(|r| now < r.expires_at)
            || self
                .last_fetch
                .is_some_and(|at| now < at + config.min_lifetime)
    }

    /// Takes in the outcome of a fetch that completed at `now`; `jitter` in [0, 1).
    pub fn apply(
        &mut self,
        result: FetchResult<M, R>,
        now: Timestamp,
        jitter: f64,
        config: &PolicyConfig,
    ) {
        self.last_fetch = Some(now);
        match result {
            FetchResult::Success {
                rules,
                max_age,
                meta,
            } => {
                self.copy = Some(Copy {
                    rules,
                    fetched_at: now,
                    expires_at: now + config.lifetime(max_age),
                    meta,
                });
                self.backoff = None;
                self.refusal = None;
            }
            FetchResult::Unreachable {
                retry_after,
                short,
                meta,
            } => {
                let (since, failures) = match &self.backoff {
                    Some(b) => (b.since, b.failures.saturating_add(1)),
                    None => (now, 1),
                };
                self.refusal = None;
                self.backoff = Some(Backoff {
                    since,
                    failures,
                    next_retry: now + config.retry_delay(failures, short, retry_after, jitter),
                    last: meta,
                });
            }
            FetchResult::NotModified { max_age, meta } => {
                if let Some(copy) = &mut self.copy {
                    copy.fetched_at = now;
                    copy.expires_at = now + config.lifetime(max_age);
                    copy.meta = meta;
                    self.backoff = None;
                    self.refusal = None;
                }
            }
            FetchResult::Refused { meta } => {
                // A refusal is not a robots.txt: it replaces what was known, is kept only as long
                // as the shortest lifetime (a site fixing its redirect is seen soon), and never
                // becomes the last good copy of a backoff.
                self.copy = None;
                self.backoff = None;
                self.refusal = Some(Refusal {
                    at: now,
                    expires_at: now + config.min_lifetime,
                    meta,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests;
