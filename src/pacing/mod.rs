//! Politeness for the whole fleet (docs/politeness.md): robotsd hands out the times at which
//! workers may fetch from an origin, so that the site sees one fleet keeping its crawl-delay,
//! and slows that fleet down when the site pushes back.
//!
//! The rules are the pure state machine [`crate::pace_policy`], on milliseconds of an injected
//! clock, a layer below this one and the store, which both run it. The
//! [`Pacer`] runs them where the state is kept: in the shared store when there is one (one
//! atomic step there, on the store's own clock, through the store port), and otherwise, or
//! while the store is down, in a bounded table of this replica's own ([`local`]), where it
//! keeps its [`FleetShare`] of each site's rate (`--fleet-size`, `--fleet-index`), so that
//! replicas deciding alone still keep the crawl-delay together. A reservation never waits for
//! anything but one store call: a dead store makes pacing local, never blocking.

pub mod answer;
mod feedback;
pub mod lane;
pub mod latency;
mod lending;
mod local;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::clock::{Clock, Timestamp};
use crate::pace_policy::{
    FleetShare, FleetView, Lender, PaceConfig, PaceState, RENEW_MS, Signal, SlotGrant, SlotRequest,
    UNSLOWED, millis,
};
use crate::store::{PaceReading, Store, StoreError};
pub use feedback::{ConnectionFailure, Report, ReportError, SignalKind};
pub use lane::PaceKey;
use latency::{Latency, Reading};
use local::LocalPaces;

/// Where the interval of a reservation came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum IntervalSource {
    /// The `crawl-delay` line of the group that applied to the agent.
    CrawlDelay,
    /// The operator's `--default-crawl-delay`: the group states none.
    Default,
    /// Slowed down, or held back by a `Retry-After`, after the site pushed back.
    Pushback,
}

impl IntervalSource {
    /// The name answers give it.
    pub fn as_str(self) -> &'static str {
        match self {
            IntervalSource::CrawlDelay => "crawl_delay",
            IntervalSource::Default => "default",
            IntervalSource::Pushback => "pushback",
        }
    }
}

/// Where pacing state was kept for an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// In the shared store: for the whole fleet.
    Fleet,
    /// In this replica alone: there is no shared store, or it is down.
    Local,
}

impl Scope {
    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Fleet => "fleet",
            Scope::Local => "local",
        }
    }
}

/// A reservation's outcome, for the answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Pace {
    /// The lane the slot was taken in ([`PaceKey::lane`]).
    pub lane: String,
    /// Whether a slot was reserved; `false`: it would be further ahead than `--max-pace-wait`,
    /// nothing was taken, and the worker should ask again at `not_before`.
    pub reserved: bool,
    /// Reserved: when the fetch may start; deferred: when to ask again.
    pub not_before: Timestamp,
    /// How long from now until `not_before`.
    pub wait: Duration,
    /// The interval that applied, after any slowdown.
    pub interval: Duration,
    /// Where it came from.
    pub source: IntervalSource,
    /// The `crawl-delay` line, when the group has one.
    pub crawl_delay_line: Option<u32>,
    /// The crawl-delay was longer than `--max-crawl-delay` and was capped to it.
    pub capped: bool,
    /// The origin's slowdown factor (1 when the site has not pushed back).
    pub slowdown: f64,
    /// The end of a `Retry-After` the site asked for, while it lasts.
    pub retry_after_until: Option<Timestamp>,
    /// Where the slot was kept.
    pub scope: Scope,
    /// The replicas this one counts itself among when it decides alone.
    pub fleet: FleetShare,
}

/// A lane's pacing state, for `/v1/robots` and the feedback answer.
#[derive(Debug, Clone, PartialEq)]
pub struct PaceView {
    /// The lane.
    pub lane: String,
    /// The slowdown factor now (1: none).
    pub slowdown: f64,
    /// The end of a `Retry-After` the site asked for, while it lasts.
    pub retry_after_until: Option<Timestamp>,
    /// The last slot handed out, if any.
    pub last_slot: Option<Timestamp>,
    /// Where the state was read.
    pub scope: Scope,
}

/// Why a replica decided a reservation alone (`robotsd_pace_alone_total{cause}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AloneCause {
    /// No shared store is configured: every reservation is this replica's.
    NoStore,
    /// The store did not answer: an error, its time limit, or its breaker open.
    StoreDown,
    /// The store answered but refused the write (`OOM`, `READONLY`, …).
    StoreRefusing,
    /// Another live process renews this replica's index: the slot was deferred, since its places
    /// are not this one's to use.
    IndexTaken,
}

impl AloneCause {
    /// Every cause, in label order.
    pub const ALL: [AloneCause; 4] = [
        AloneCause::NoStore,
        AloneCause::StoreDown,
        AloneCause::StoreRefusing,
        AloneCause::IndexTaken,
    ];

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            AloneCause::NoStore => "no_store",
            AloneCause::StoreDown => "store_down",
            AloneCause::StoreRefusing => "store_refusing",
            AloneCause::IndexTaken => "index_taken",
        }
    }

    fn of(error: &StoreError) -> AloneCause {
        match error {
            StoreError::Refused(_) => AloneCause::StoreRefusing,
            _ => AloneCause::StoreDown,
        }
    }
}

/// What happened, for metrics.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PaceEvent {
    /// A slot was reserved, this far ahead.
    Reserved {
        /// Where.
        scope: Scope,
        /// How far ahead.
        wait: Duration,
    },
    /// A slot was too far ahead: nothing was reserved.
    Deferred {
        /// Where.
        scope: Scope,
        /// Known from this replica's view of the fleet's state, without a store call.
        known: bool,
    },
    /// A reservation (reserved or deferred, counted above too) was decided by this replica
    /// alone, and why.
    Alone(AloneCause),
    /// A worker reported what the site answered.
    Reported(SignalKind),
}

/// Told of every [`PaceEvent`]; the metrics layer installs one.
pub type PaceObserver = Arc<dyn Fn(PaceEvent) + Send + Sync>;

/// Hands out fetch slots and takes in the sites' pushback. Cheap to clone.
#[derive(Clone)]
pub struct Pacer {
    config: Arc<PaceConfig>,
    key: PaceKey,
    share: FleetShare,
    local: LocalPaces,
    latency: Latency,
    store: Option<Store>,
    clock: Arc<dyn Clock>,
    observer: Option<PaceObserver>,
    /// Whether this replica's last reservation was decided alone although a store is
    /// configured: its change is said once in the log, each way.
    deciding_alone: Arc<AtomicBool>,
    /// This replica's lease on its places, when it lends them ([`Pacer::start_lending`]).
    lender: Option<Arc<std::sync::Mutex<Lender>>>,
}

impl std::fmt::Debug for Pacer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pacer")
            .field("config", &self.config)
            .field("share", &self.share)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

fn timestamp(ms: u64) -> Timestamp {
    Timestamp::from_unix(Duration::from_millis(ms))
}

fn factor(slowdown: u64) -> f64 {
    slowdown.max(UNSLOWED) as f64 / UNSLOWED as f64
}

impl Pacer {
    /// A pacer keeping its state in this replica, in at most `capacity_bytes`, on `clock`: an
    /// eighth of it for the lanes' response-time baselines, the rest for their slots.
    pub fn new(config: PaceConfig, capacity_bytes: u64, clock: Arc<dyn Clock>) -> Pacer {
        let baselines = capacity_bytes / 8;
        let local = LocalPaces::new(capacity_bytes - baselines, config.keep());
        Pacer {
            config: Arc::new(config),
            key: PaceKey::default(),
            share: FleetShare::WHOLE,
            local,
            latency: Latency::new(baselines),
            store: None,
            clock,
            observer: None,
            deciding_alone: Arc::default(),
            lender: None,
        }
    }

    /// The same pacer, keeping its state for the fleet in `store` (here only while it is down).
    pub fn with_store(mut self, store: Store) -> Pacer {
        self.store = Some(store);
        self
    }

    /// The same pacer, with lanes by `key` (by host unless set).
    pub fn with_key(mut self, key: PaceKey) -> Pacer {
        self.key = key;
        self
    }

    /// `origin`'s lane, with `address` where its server answered robotsd's last fetch of its
    /// robots.txt, if known (for lanes by address).
    pub fn lane(
        &self,
        origin: &crate::origin::Origin,
        address: Option<std::net::IpAddr>,
    ) -> String {
        self.key.lane(origin, address)
    }

    /// How origins are grouped into lanes.
    pub fn key(&self) -> PaceKey {
        self.key
    }

    /// The same pacer, counting itself as `share` of the fleet when it decides alone.
    pub fn with_share(mut self, share: FleetShare) -> Pacer {
        self.share = share;
        self
    }

    /// The replicas this one counts itself among when it decides alone.
    pub fn share(&self) -> FleetShare {
        self.share
    }

    /// Whether slots are decided by this replica alone now: no shared store is configured, or
    /// its last call failed (from the first failure, not once the breaker opens).
    pub fn alone(&self) -> bool {
        self.scope() == Scope::Local
    }

    /// The same pacer, telling `observer` of every event.
    pub fn with_observer(mut self, observer: PaceObserver) -> Pacer {
        self.observer = Some(observer);
        self
    }

    /// The settings.
    pub fn config(&self) -> &PaceConfig {
        &self.config
    }

    fn observe(&self, event: PaceEvent) {
        if let Some(observer) = &self.observer {
            observer(event);
        }
    }

    fn now_ms(&self) -> u64 {
        millis(self.clock.now().since_epoch())
    }

    /// Reserves the next fetch slot of `lane` for a check whose group states `crawl_delay`
    /// (seconds, and its line: of the checked origin's robots.txt, kept after the lane's last
    /// slot whatever origin took it), or says when to ask again.
    pub async fn reserve(&self, lane: impl Into<String>, crawl_delay: Option<(f64, u32)>) -> Pace {
        // Owned, so that the answer takes the lane without copying it.
        let owned = lane.into();
        let lane = owned.as_str();
        let (interval_ms, capped) = self.config.base_interval(crawl_delay.map(|(s, _)| s));
        let request = SlotRequest {
            interval_ms,
            max_interval_ms: millis(self.config.max_interval),
            max_wait_ms: millis(self.config.max_wait),
            guard_ms: millis(self.config.guard),
        };
        let decided = match &self.store {
            Some(store) => match self.reserve_in_fleet(store, lane, request).await {
                Ok(decided) => Ok(decided),
                Err(error) => Err(AloneCause::of(&error)),
            },
            None => Err(AloneCause::NoStore),
        };
        let (grant, scope, known) = match decided {
            Ok((grant, known)) => {
                self.decided_alone(None);
                (grant, Scope::Fleet, known)
            }
            Err(cause) => {
                let (grant, cause) = self.reserve_alone(lane, request, cause);
                self.decided_alone(Some(cause));
                (grant, Scope::Local, false)
            }
        };
        let pace = pace(
            owned,
            grant,
            (scope, self.share),
            crawl_delay.map(|(_, line)| line),
            capped,
        );
        self.observe(if pace.reserved {
            PaceEvent::Reserved {
                scope,
                wait: pace.wait,
            }
        } else {
            PaceEvent::Deferred { scope, known }
        });
        pace
    }

    /// Counts a reservation decided alone (`cause`) or by the store (`None`), and says in the
    /// log when a replica with a store starts or stops deciding alone: the first slot it decides
    /// alone is seen the moment it is decided, not once the store's breaker opens.
    fn decided_alone(&self, cause: Option<AloneCause>) {
        if let Some(cause) = cause {
            self.observe(PaceEvent::Alone(cause));
        }
        if self.store.is_none() {
            return;
        }
        let alone = cause.is_some();
        if self.deciding_alone.swap(alone, Ordering::AcqRel) == alone {
            return;
        }
        match cause {
            Some(cause) => tracing::warn!(
                cause = cause.as_str(),
                fleet_size = self.share.size(),
                fleet_index = self.share.index(),
                "this replica decides fetch slots alone, at its share of each site's rate, until \
                 the shared store answers again"
            ),
            None => tracing::info!("the shared store decides fetch slots for the fleet again"),
        }
    }

    /// A slot of `lane` from the fleet's store, with `true` when its deferral was known from
    /// this replica's view of the lane, without a call; the store's error when it did not
    /// answer.
    async fn reserve_in_fleet(
        &self,
        store: &Store,
        lane: &str,
        request: SlotRequest,
    ) -> Result<(SlotGrant, bool), StoreError> {
        // One lookup of the lane for the view before the call and the change after it.
        let held = self.local.entry(lane);
        let sent = self.now_ms();
        let view = local::lock(&held).fleet;
        // A store that is down decides nothing, and its last answer is no reason to say so.
        if let Some(deferral) = view.and_then(|view| view.deferral(sent, request))
            && store.is_up()
        {
            return Ok((deferral, true));
        }
        let timetable = self
            .lender
            .as_ref()
            .map(|lender| lending::lock(lender).timetable());
        let grant = store
            .reserve(lane, request, self.config.keep(), timetable)
            .await?;
        let mut held = local::lock(&held);
        // This replica's own state follows the fleet's, so that a fallback to local pacing
        // starts from the last slot it handed out.
        if grant.reserved {
            held.state.last_slot = held.state.last_slot.max(grant.at);
        }
        held.see(FleetView::new(&grant, sent));
        Ok((grant, false))
    }

    /// A slot of `lane` decided by this replica alone, as its share of the fleet, and why it was
    /// decided alone: `cause`, unless its index is another process's, when it is deferred (its
    /// places are not this replica's to use).
    fn reserve_alone(
        &self,
        lane: &str,
        request: SlotRequest,
        cause: AloneCause,
    ) -> (SlotGrant, AloneCause) {
        let now = self.now_ms();
        let share = self.share;
        let Some(lender) = &self.lender else {
            let grant = self.local.with(lane, |held| {
                held.state.reserve_share(now, request, share, 0)
            });
            return (grant, cause);
        };
        let mut lender = lending::lock(lender);
        let Some(floor) = lender.floor() else {
            let grant = self.local.with(lane, |held| SlotGrant {
                reserved: false,
                at: now.saturating_add(RENEW_MS),
                now,
                interval_ms: request.interval_ms,
                slowdown: held.state.slowdown_at(now),
                blocked_until: 0,
                last_slot: held.state.last_slot,
            });
            return (grant, AloneCause::IndexTaken);
        };
        let grant = self.local.with(lane, |held| {
            held.state.reserve_share(now, request, share, floor)
        });
        if grant.reserved {
            lender.used_alone(grant.at);
        }
        (grant, cause)
    }

    /// Takes in what `origin` answered a worker, into its `lane`: the lane's state after it, or
    /// `None` when robotsd holds nothing of either (nobody checked the origin, or it was
    /// forgotten) and the report changed nothing. `checked_here` says whether this replica holds
    /// the origin's robots.txt state; with a shared store, the store decides for the fleet (any
    /// replica's check counts).
    pub async fn report(
        &self,
        lane: &str,
        origin: &str,
        report: &Report,
        checked_here: bool,
    ) -> Option<PaceView> {
        let (mut signal, mut kind) = report.signal(self.clock.now(), self.config.max_retry_after);
        // Only an answer's time says how the site is doing; a pushback already says more.
        if let (Signal::Success, Some(ms)) = (signal, report.response_ms()) {
            match self.latency.observe(lane, ms, self.now_ms()) {
                Reading::Usual => {}
                Reading::Slow => (signal, kind) = (Signal::Slow, SignalKind::Slow),
                Reading::StillSlow => {
                    let view = self.view(lane).await;
                    if view.is_some() {
                        self.observe(PaceEvent::Reported(SignalKind::Slow));
                    }
                    return view;
                }
            }
        }
        let shared = match &self.store {
            Some(store) => store
                .signal(lane, origin, signal, self.config.keep())
                .await
                .ok(),
            None => None,
        };
        let view = match shared {
            Some(Some(reading)) => {
                self.local.with(lane, |held| {
                    let state = &mut held.state;
                    state.slowdown = reading.state.slowdown;
                    state.slowdown_at = reading.state.slowdown_at;
                    state.blocked_until = state.blocked_until.max(reading.state.blocked_until);
                });
                Some(view(lane, reading, Scope::Fleet))
            }
            Some(None) => None,
            None if checked_here || self.local.get(lane).is_some() => {
                let now = self.now_ms();
                let state = self.local.with(lane, |held| {
                    held.state.signal(now, signal);
                    held.state
                });
                Some(view(lane, PaceReading { state, now }, Scope::Local))
            }
            None => None,
        };
        if view.is_some() {
            self.observe(PaceEvent::Reported(kind));
        }
        view
    }

    /// Where a report would be kept now: in the fleet's store while it is up, else here.
    pub fn scope(&self) -> Scope {
        match &self.store {
            Some(store) if store.is_up() => Scope::Fleet,
            _ => Scope::Local,
        }
    }

    /// `lane`'s pacing state now, `None` when nothing is kept for it.
    pub async fn view(&self, lane: &str) -> Option<PaceView> {
        if let Some(store) = &self.store
            && let Ok(reading) = store.pace(lane).await
        {
            return reading.map(|reading| view(lane, reading, Scope::Fleet));
        }
        let state = self.local.get(lane)?;
        Some(view(
            lane,
            PaceReading {
                state,
                now: self.now_ms(),
            },
            Scope::Local,
        ))
    }

    /// Origins this replica knows to be slowed down now (by its own view of the fleet's state).
    pub fn origins_slowed(&self) -> usize {
        let now = self.now_ms();
        self.local.count(|state| state.slowed(now))
    }

    /// Origins with pacing state held in this replica, and their bytes.
    pub fn usage(&self) -> (u64, u64) {
        self.local.usage()
    }
}

fn pace(
    lane: String,
    grant: SlotGrant,
    (scope, fleet): (Scope, FleetShare),
    crawl_delay_line: Option<u32>,
    capped: bool,
) -> Pace {
    let pushed_back = grant.slowdown > UNSLOWED || grant.blocked_until > 0;
    Pace {
        lane,
        reserved: grant.reserved,
        not_before: timestamp(grant.at),
        wait: Duration::from_millis(grant.at.saturating_sub(grant.now)),
        interval: Duration::from_millis(grant.interval_ms),
        source: if pushed_back {
            IntervalSource::Pushback
        } else if crawl_delay_line.is_some() {
            IntervalSource::CrawlDelay
        } else {
            IntervalSource::Default
        },
        crawl_delay_line,
        capped,
        slowdown: factor(grant.slowdown),
        retry_after_until: (grant.blocked_until > 0).then(|| timestamp(grant.blocked_until)),
        scope,
        fleet,
    }
}

fn view(lane: &str, reading: PaceReading, scope: Scope) -> PaceView {
    let PaceReading { state, now } = reading;
    PaceView {
        lane: lane.to_owned(),
        slowdown: factor(state.slowdown_at(now)),
        retry_after_until: (state.blocked_until > now).then(|| timestamp(state.blocked_until)),
        last_slot: (state != PaceState::default() && state.last_slot > 0)
            .then(|| timestamp(state.last_slot)),
        scope,
    }
}

#[cfg(test)]
mod tests;
