//! What the operator is told of fetches: each failed or refused fetch, and the end of a backoff,
//! as a `warn` line naming the origin (the alert runbooks send operators to these lines).
//!
//! The lines are rate-limited per origin by the rules themselves: a failure starts or extends a
//! backoff, and nothing is fetched from that origin again before its retry time (a minute at
//! least, doubling to an hour); a refusal is remembered for the shortest lifetime. Across many
//! origins, the log writer drops what it cannot write rather than wait (and counts it).

use super::policy::OriginState;
use super::{Detail, Remembered};
use crate::clock::Timestamp;
use crate::origin::Origin;

/// Logs what the fetch that just completed at `now` changed: `was_in_backoff` before it,
/// `state` after it.
pub(super) fn fetched(
    origin: &Origin,
    was_in_backoff: bool,
    state: &OriginState<Remembered>,
    now: Timestamp,
) {
    if let Some(backoff) = &state.backoff {
        let reason = match &backoff.last.detail {
            Detail::Failed(reason) => reason.as_str(),
            _ => "",
        };
        let retry_in = backoff.next_retry.saturating_duration_since(now);
        tracing::warn!(
            origin = origin.key(),
            failures = backoff.failures,
            reason,
            retry_in = %humantime::format_duration(round_to_seconds(retry_in)),
            "robots.txt fetch failed: the origin is in backoff"
        );
    } else if let Some(refusal) = &state.refusal {
        if let Detail::Refused(error) = &refusal.meta.detail {
            tracing::warn!(
                origin = origin.key(),
                %error,
                "robots.txt fetch refused on the way: the destination is not allowed"
            );
        }
    } else if was_in_backoff {
        tracing::warn!(
            origin = origin.key(),
            "robots.txt fetched again: the origin's backoff is over"
        );
    }
}

/// Whole seconds: a retry time to the millisecond reads as noise.
fn round_to_seconds(duration: std::time::Duration) -> std::time::Duration {
    std::time::Duration::from_secs(duration.as_secs())
}
