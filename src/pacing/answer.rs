//! The `pace` member of a check's answer (`pace=true`, docs/politeness.md), as the API shows a
//! reservation: its shape is the pacing layer's, so that every writer of an answer (the API's
//! serde types and the hand-written writer in `fast`) takes it from here, below them both.

use serde::Serialize;
use utoipa::ToSchema;

use super::{IntervalSource, Pace, Scope};
use crate::clock::Timestamp;

/// Whether a slot was reserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PaceOutcome {
    /// Fetch at `not_before`, not earlier.
    Reserved,
    /// The next slot is further ahead than `--max-pace-wait`: nothing was reserved; ask again
    /// at `not_before` (requeue the URL).
    Deferred,
}

/// What the worker does at `not_before`: a deferred answer must never read as "fetch".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PaceNext {
    /// Fetch the URL: the slot at `not_before` is this worker's.
    Fetch,
    /// Do not fetch: nothing was reserved. Ask again at `not_before` (or requeue the URL).
    AskAgain,
}

/// RFC 3339 in UTC to the millisecond: slots are closer together than a second.
pub fn rfc3339_millis(at: Timestamp) -> String {
    humantime::format_rfc3339_millis(at.to_system()).to_string()
}

/// When this worker may fetch the URL, for the whole fleet (`pace=true`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(example = json!({"outcome": "reserved", "next": "fetch", "lane": "host:example.com", "not_before": "2026-11-25T06:00:01.500Z", "wait_ms": 1500, "interval_ms": 1000, "interval_source": "crawl_delay", "crawl_delay_line": 3, "capped": false, "slowdown": 1.0, "retry_after_until": null, "scope": "fleet", "fleet_size": 3, "fleet_index": 1}))]
pub struct PaceJson {
    /// `reserved` or `deferred`.
    pub outcome: PaceOutcome,
    /// What to do at `not_before`: `fetch` (reserved) or `ask_again` (deferred: nothing was
    /// reserved, so fetching then would be under the site's crawl-delay).
    pub next: PaceNext,
    /// The lane the slot is in: the fetches that share one pace (`--pace-key`: by host by
    /// default, `host:example.com`; or `origin:https://example.com:8443`,
    /// `site:example.co.uk`, `address:192.0.2.7`, which is `host:` while robotsd knows no
    /// address). Each keeps its own crawl-delay after the lane's last slot.
    pub lane: String,
    /// Reserved: the time the fetch may start (RFC 3339, milliseconds); deferred: when to ask
    /// again. On the clock of the fleet's store (Redis's), or of this replica without one.
    pub not_before: String,
    /// Milliseconds from the answer until `not_before`: wait this long, whatever your clock
    /// says.
    pub wait_ms: u64,
    /// The interval kept before this slot, in milliseconds, after any slowdown.
    pub interval_ms: u64,
    /// `crawl_delay` (the group's line), `default` (`--default-crawl-delay`: the group states
    /// none) or `pushback` (the site answered 429, 5xx or timed out: slowed down).
    pub interval_source: IntervalSource,
    /// The line of the group's `crawl-delay`, if it has one.
    pub crawl_delay_line: Option<u32>,
    /// The crawl-delay was longer than `--max-crawl-delay` and was capped to it.
    pub capped: bool,
    /// The origin's slowdown factor: 1 unless the site pushed back.
    pub slowdown: f64,
    /// The end of a `Retry-After` the site asked for (RFC 3339), while it lasts.
    pub retry_after_until: Option<String>,
    /// Who decided the slot: `fleet` (the shared store, for every replica) or `local` (this
    /// replica alone: no store is configured, or it is down or refusing; then it keeps
    /// 1/`fleet_size` of the site's rate).
    pub scope: Scope,
    /// How many replicas this one counts itself among when it decides alone
    /// (`--fleet-size`): alone, its slots are `fleet_size` intervals (and guard bands) apart,
    /// so that the fleet together keeps the site's rate.
    pub fleet_size: u32,
    /// This replica's place among them (`--fleet-index`, `0..fleet_size`): alone, its slots
    /// fall on its own phase of the interval, so that every gap at the site holds. Null when
    /// not set: then only the rate holds.
    pub fleet_index: Option<u32>,
}

impl From<&Pace> for PaceJson {
    fn from(p: &Pace) -> Self {
        PaceJson {
            outcome: if p.reserved {
                PaceOutcome::Reserved
            } else {
                PaceOutcome::Deferred
            },
            next: if p.reserved {
                PaceNext::Fetch
            } else {
                PaceNext::AskAgain
            },
            lane: p.lane.clone(),
            not_before: rfc3339_millis(p.not_before),
            wait_ms: crate::pace_policy::millis(p.wait),
            interval_ms: crate::pace_policy::millis(p.interval),
            interval_source: p.source,
            crawl_delay_line: p.crawl_delay_line,
            capped: p.capped,
            slowdown: p.slowdown,
            retry_after_until: p.retry_after_until.map(rfc3339_millis),
            scope: p.scope,
            fleet_size: p.fleet.size(),
            fleet_index: p.fleet.index(),
        }
    }
}
