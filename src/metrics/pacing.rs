//! Fleet-wide politeness (docs/politeness.md): reservations by outcome and scope, how far ahead
//! the reserved slots were, the sites' answers as workers reported them, the origins slowed
//! down now, and whether this replica decides slots alone and as which share of the fleet. No series carries an origin: every label comes from a closed set.

use prometheus::{Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, Opts};

use crate::pacing::{AloneCause, PaceEvent, Pacer, Scope, SignalKind};

pub(super) struct PaceMetrics {
    pub(super) reservations: IntCounterVec,
    pub(super) known_deferrals: IntCounter,
    pub(super) wait: Histogram,
    pub(super) reports: IntCounterVec,
    pub(super) slowed: IntGauge,
    pub(super) held: IntGauge,
    pub(super) held_bytes: IntGauge,
    pub(super) fleet_size: IntGauge,
    pub(super) fleet_index: IntGauge,
    pub(super) alone: IntGauge,
    pub(super) alone_total: IntCounterVec,
    pub(super) duplicate_index: IntGauge,
    /// `alone_total` in [`AloneCause::ALL`] order.
    alone_series: [IntCounter; AloneCause::ALL.len()],
    /// `reservations` by `[scope][reserved]`: fleet then local; deferred then reserved.
    reservation_series: [[IntCounter; 2]; 2],
    /// `reports` in [`SignalKind::ALL`] order.
    report_series: [IntCounter; SignalKind::ALL.len()],
}

impl PaceMetrics {
    pub(super) fn new() -> PaceMetrics {
        let reservations = IntCounterVec::new(
            Opts::new(
                "robotsd_pace_reservations_total",
                "Fetch slots asked for (pace=true), by outcome (reserved; deferred: further \
                 ahead than --max-pace-wait, nothing reserved) and scope (fleet: in the shared \
                 store; local: this replica alone, without a store or while it is down).",
            ),
            &["outcome", "scope"],
        )
        .expect("valid metric");
        let known_deferrals = IntCounter::new(
            "robotsd_pace_deferrals_known_total",
            "Deferrals answered from what the shared store last said of the lane, without a \
             store call: its slots were further ahead than --max-pace-wait then, and they only \
             move later (counted in robotsd_pace_reservations_total{outcome=\"deferred\",\
             scope=\"fleet\"} too).",
        )
        .expect("valid metric");
        // 10 ms to ~82 s doubling: slots are a crawl-delay apart, and at most a minute ahead
        // by default.
        let wait = Histogram::with_opts(
            HistogramOpts::new(
                "robotsd_pace_wait_seconds",
                "How far ahead of the answer the reserved fetch slots were.",
            )
            .buckets(prometheus::exponential_buckets(0.01, 2.0, 14).expect("valid buckets")),
        )
        .expect("valid metric");
        let reports = IntCounterVec::new(
            Opts::new(
                "robotsd_pace_reports_total",
                "What the sites answered, as workers reported it (POST /v1/feedback): success, \
                 pushback (429 or 5xx), retry_after (a 429 or 503 with Retry-After), timeout.",
            ),
            &["signal"],
        )
        .expect("valid metric");
        let slowed = IntGauge::new(
            "robotsd_pace_origins_slowed",
            "Origins slowed down now after pushing back, as this replica last saw them.",
        )
        .expect("valid metric");
        let held = IntGauge::new(
            "robotsd_pace_origins",
            "Origins whose pacing state this replica holds (bounded by --pace-capacity).",
        )
        .expect("valid metric");
        let held_bytes = IntGauge::new(
            "robotsd_pace_weight_bytes",
            "Bytes the pacing states this replica holds are charged against --pace-capacity.",
        )
        .expect("valid metric");
        let fleet_size = IntGauge::new(
            "robotsd_pace_fleet_size",
            "The replicas this one counts itself among (--fleet-size): deciding slots alone, it \
             keeps 1/this of each site's rate.",
        )
        .expect("valid metric");
        let fleet_index = IntGauge::new(
            "robotsd_pace_fleet_index",
            "This replica's place in the fleet (--fleet-index), its phase of each interval when \
             it decides alone; -1 when not set.",
        )
        .expect("valid metric");
        let alone = IntGauge::new(
            "robotsd_pace_alone",
            "1 while this replica decides fetch slots alone (no shared store configured, or its \
             last call failed: from the first failure, before the breaker opens), at \
             1/robotsd_pace_fleet_size of each site's rate; 0 while the shared store decides \
             them for the fleet.",
        )
        .expect("valid metric");
        let alone_total = IntCounterVec::new(
            Opts::new(
                "robotsd_pace_alone_total",
                "Reservations (reserved or deferred) this replica decided alone, by cause: \
                 no_store (none configured), store_down (an error, its time limit, or its breaker \
                 open), store_refusing (it refused the write), index_taken (another process \
                 renews this replica's index: deferred).",
            ),
            &["cause"],
        )
        .expect("valid metric");
        let duplicate_index = IntGauge::new(
            "robotsd_pace_index_duplicate",
            "1 while another live robotsd process renews this replica's --fleet-index in the \
             shared store (two replicas claim one index: a surge, or two releases sharing a \
             store); this one then lends no place and decides no slot alone.",
        )
        .expect("valid metric");
        let alone_series =
            AloneCause::ALL.map(|cause| alone_total.with_label_values(&[cause.as_str()]));
        let by_scope = |scope: Scope| {
            ["deferred", "reserved"]
                .map(|outcome| reservations.with_label_values(&[outcome, scope.as_str()]))
        };
        let reservation_series = [by_scope(Scope::Fleet), by_scope(Scope::Local)];
        let report_series = SignalKind::ALL.map(|kind| reports.with_label_values(&[kind.as_str()]));
        PaceMetrics {
            reservations,
            known_deferrals,
            wait,
            reports,
            slowed,
            held,
            held_bytes,
            fleet_size,
            fleet_index,
            alone,
            alone_total,
            duplicate_index,
            alone_series,
            reservation_series,
            report_series,
        }
    }

    pub(super) fn observe(&self, event: PaceEvent) {
        let scope_index = |scope| match scope {
            Scope::Fleet => 0,
            Scope::Local => 1,
        };
        match event {
            PaceEvent::Reserved { scope, wait } => {
                self.reservation_series[scope_index(scope)][1].inc();
                self.wait.observe(wait.as_secs_f64());
            }
            PaceEvent::Deferred { scope, known } => {
                self.reservation_series[scope_index(scope)][0].inc();
                if known {
                    self.known_deferrals.inc();
                }
            }
            PaceEvent::Alone(cause) => self.alone_series[cause as usize].inc(),
            PaceEvent::Reported(kind) => {
                if let Some(i) = SignalKind::ALL.iter().position(|k| *k == kind) {
                    self.report_series[i].inc();
                }
            }
        }
    }

    pub(super) fn refresh(&self, pacer: &Pacer) {
        self.slowed
            .set(i64::try_from(pacer.origins_slowed()).unwrap_or(i64::MAX));
        let (held, bytes) = pacer.usage();
        self.held.set(i64::try_from(held).unwrap_or(i64::MAX));
        self.held_bytes
            .set(i64::try_from(bytes).unwrap_or(i64::MAX));
        let share = pacer.share();
        self.fleet_size.set(i64::from(share.size()));
        self.fleet_index.set(share.index().map_or(-1, i64::from));
        self.alone.set(i64::from(pacer.alone()));
        self.duplicate_index.set(i64::from(pacer.duplicate_index()));
    }
}
