//! What a check answers from: the [`Snapshot`] of an origin's state the cache hands the checker,
//! built from the policy's decision. No IO here.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use super::policy::{BackoffBasis, Decision, OriginState, PolicyConfig, Rules};
use super::{CopyMemo, Detail, KeptBody, Lookup, Remembered, policy};
use crate::clock::Timestamp;
use crate::destination::DestinationError;
use crate::fetch::{FetchMeta, NoRobotsReason};

/// What a check answers from, as the cache held it at that moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// How the cache was used.
    pub lookup: Lookup,
    /// What to answer from.
    pub basis: Basis,
    /// The fetch the rules came from (the last good copy's, in backoff), if any.
    pub copy: Option<CopyInfo>,
    /// The current run of failures, if any.
    pub backoff: Option<BackoffInfo>,
}

impl Snapshot {
    /// The IP address the origin's server answered the last fetch from that got an answer
    /// (the failed fetch's, in backoff, else the copy's), for lanes by address.
    pub fn address(&self) -> Option<IpAddr> {
        self.backoff
            .as_ref()
            .and_then(|backoff| backoff.last.address)
            .or_else(|| self.copy.as_ref().and_then(|copy| copy.meta.address))
    }
}

/// What to answer from.
#[derive(Debug, Clone)]
pub enum Basis {
    /// Rules (a parsed file, or "no robots.txt"), from a current or stale copy.
    Copy(Rules),
    /// In backoff, per the §5 table; `rules` is the last good copy's for
    /// [`BackoffBasis::LastGoodCopy`].
    Backoff {
        /// Which row of the table.
        basis: BackoffBasis,
        /// The last good copy's rules, for that row.
        rules: Option<Rules>,
    },
    /// The last fetch was refused on the way (a redirect to a destination robotsd will not
    /// contact): the check is an error, not a verdict.
    Refused(DestinationError),
    /// The copy was dropped for memory within the shortest lifetime of its fetch, and the origin
    /// is not fetched again before that has passed: the check is an error, not a verdict.
    Dropped {
        /// How long until the origin may be fetched again.
        retry_after: Duration,
    },
}

/// The fetch behind a copy.
#[derive(Debug, Clone)]
pub struct CopyInfo {
    /// When it was fetched.
    pub fetched_at: Timestamp,
    /// When it expires.
    pub expires_at: Timestamp,
    /// Why there is no robots.txt, when there is none.
    pub no_robots: Option<NoRobotsReason>,
    /// What the fetch observed (shared: every answer from this copy points at it).
    pub meta: Arc<FetchMeta>,
    /// The robots.txt as fetched, when it was parsed.
    pub body: Option<KeptBody>,
    /// What answers from this copy derive once and reuse.
    pub memo: Arc<CopyMemo>,
}

/// A run of failures.
#[derive(Debug, Clone)]
pub struct BackoffInfo {
    /// The first failure.
    pub since: Timestamp,
    /// Failures in a row.
    pub failures: u32,
    /// No request before this.
    pub next_retry: Timestamp,
    /// When the answer's basis ends if the failures go on (the policy's windows); `None`
    /// once both windows have passed.
    pub until: Option<Timestamp>,
    /// What the last failed fetch observed.
    pub last: Arc<FetchMeta>,
    /// Why the last fetch failed.
    pub reason: String,
}

/// What to answer from `state` at `now`, and whether a refresh is due; `None` when a
/// foreground fetch is needed.
pub(super) fn snapshot_of(
    state: &OriginState<Remembered>,
    now: Timestamp,
    lookup: Lookup,
    policy: &PolicyConfig,
) -> Option<(Snapshot, bool)> {
    Some(match state.decide(now, policy) {
        Decision::Fetch => return None,
        Decision::Copy { copy, stale } => (
            Snapshot {
                lookup: if stale && lookup == Lookup::Hit {
                    Lookup::Stale
                } else {
                    lookup
                },
                basis: Basis::Copy(copy.rules.clone()),
                copy: Some(copy_info(copy)),
                backoff: None,
            },
            stale,
        ),
        Decision::Backoff {
            backoff,
            basis,
            until,
            copy,
            retry_due,
        } => (
            Snapshot {
                lookup,
                basis: Basis::Backoff {
                    basis,
                    rules: copy.map(|c| c.rules.clone()),
                },
                copy: copy.map(copy_info),
                backoff: Some(BackoffInfo {
                    since: backoff.since,
                    failures: backoff.failures,
                    next_retry: backoff.next_retry,
                    until,
                    last: Arc::clone(&backoff.last.meta),
                    reason: match &backoff.last.detail {
                        Detail::Failed(reason) => reason.clone(),
                        _ => String::new(),
                    },
                }),
            },
            retry_due,
        ),
        Decision::Cooling { until } => (
            Snapshot {
                lookup,
                basis: Basis::Dropped {
                    retry_after: until.saturating_duration_since(now),
                },
                copy: None,
                backoff: None,
            },
            false,
        ),
        Decision::Refused { refusal, stale } => (
            Snapshot {
                lookup,
                basis: match &refusal.meta.detail {
                    Detail::Refused(error) => Basis::Refused(error.clone()),
                    // Only a refused fetch makes a refusal.
                    _ => unreachable_basis(),
                },
                copy: None,
                backoff: None,
            },
            stale,
        ),
    })
}

fn copy_info(copy: &policy::Copy<Remembered>) -> CopyInfo {
    CopyInfo {
        fetched_at: copy.fetched_at,
        expires_at: copy.expires_at,
        no_robots: match copy.meta.detail {
            Detail::NoRobots(reason) => Some(reason),
            _ => None,
        },
        meta: Arc::clone(&copy.meta.meta),
        body: match &copy.meta.detail {
            Detail::Parsed(body) => Some(body.clone()),
            _ => None,
        },
        memo: Arc::clone(&copy.meta.memo),
    }
}

/// A fetch always leaves the state answerable; this is only the type system's fallback.
pub(super) fn unreachable_after_fetch(lookup: Lookup) -> Snapshot {
    Snapshot {
        lookup,
        basis: unreachable_basis(),
        copy: None,
        backoff: None,
    }
}

/// The most cautious answer, for states the types allow but the cache never builds.
pub(super) fn unreachable_basis() -> Basis {
    Basis::Backoff {
        basis: BackoffBasis::DisallowAll,
        rules: None,
    }
}
