//! Prometheus metrics for the service: HTTP traffic, check verdicts, the origin cache and
//! robots.txt fetches, rendered in the text exposition format for a `/metrics` endpoint.
//!
//! Series names and labels are a public contract (listed in the README), so they are spelled out
//! here once and never derived from input. Every label takes its value from a small closed set:
//! routes are matched path templates, methods outside the standard ones collapse to `other`, and
//! verdicts, reasons, cache results and fetch outcomes are checked against their known names. A
//! URL, origin or user agent can therefore never become a label, which keeps both the series
//! count bounded and what clients send out of the metrics.
//!
//! [`Metrics`] owns its own [`Registry`] rather than using the process-wide default one, so tests
//! and several instances in one process never see each other's series.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prometheus::{
    HistogramOpts, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry, TextEncoder,
};

use crate::cache::{Lookup, OriginCache};
use crate::checker::Reason;
use crate::fetch::FetchKind;
use crate::store::{StoreOp, StoreOutcome};

mod bot_auth;
mod challenges;
mod connections;
mod documents;
mod http;
mod pacing;
mod resting;
pub use bot_auth::SignatureOf;
mod rsl;
mod store;
mod tdmrep;
mod usage;

pub use connections::{ConnectionMetrics, LISTENERS};
pub use http::RouteSeries;

/// The route label of requests no route matched (404s from the fallback): the raw path would let
/// any client mint new series.
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// The label used when a caller passes a value outside the label's known set; seeing it in the
/// output means a caller bug, but it keeps the series count bounded meanwhile.
pub const OTHER_LABEL: &str = "other";

/// The `result` label values of `robotsd_cache_lookups_total`, as `cache::Lookup` serialises.
const LOOKUP_RESULTS: [&str; 5] = ["hit", "miss", "stale", "coalesced", "shared"];

/// The service's metrics. Cheap to clone; clones share the same series.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Registry,
    /// Every family name the registry can export, kept from registration because `gather()`
    /// leaves out labelled families that have no series yet.
    family_names: Vec<String>,
    http: http::HttpMetrics,
    checks: IntCounterVec,
    /// `checks` by `[allowed][reason]`, resolved on first use: a label lookup hashes the values
    /// and takes a lock, once per check otherwise.
    check_series: [[std::sync::OnceLock<IntCounter>; Reason::ALL.len()]; 2],
    /// `robotsd_cache_lookups_total` by [`Lookup`], in `LOOKUP_RESULTS` order: the label set is
    /// closed and small, so every series exists from the start.
    lookup_series: [IntCounter; 5],
    cache_entries: IntGauge,
    cache_weight_bytes: IntGauge,
    cache_capacity_bytes: IntGauge,
    cache_evictions: IntCounter,
    /// The eviction count last copied into `cache_evictions`; see [`sync_counter`].
    evictions_seen: AtomicU64,
    cache_refusals: IntCounter,
    /// The refusal count last copied into `cache_refusals`.
    refusals_seen: AtomicU64,
    origins_in_backoff: IntGauge,
    fetches: IntCounterVec,
    fetch_duration: prometheus::Histogram,
    fetches_in_flight: IntGauge,
    store: store::StoreMetrics,
    connections: connections::ConnectionFamilies,
    /// `robotsd_robots_refreshes_total` by result: `[refused, refreshed]`.
    refreshes: [IntCounter; 2],
    usage: usage::UsageMetrics,
    rsl: rsl::RslMetrics,
    tdmrep: documents::DocumentCacheMetrics,
    pacing: pacing::PaceMetrics,
    resting: resting::RestingMetrics,
    signatures: bot_auth::SignatureMetrics,
    challenges: challenges::ChallengeMetrics,
    log_dropped: IntCounter,
    /// The dropped-line total last copied into `log_dropped`; see [`sync_counter`].
    log_dropped_seen: AtomicU64,
    /// Where the dropped-line total is kept (the log writer), once installed.
    log_dropped_source: std::sync::OnceLock<LogDropSource>,
}

/// Reads the running total of log lines dropped because the log writer's queue was full.
pub type LogDropSource = Arc<dyn Fn() -> u64 + Send + Sync>;

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// A fresh set of series in a registry of its own, with `robotsd_build_info` set and, on
    /// Linux, the standard `process_*` series.
    pub fn new() -> Metrics {
        let registry = Registry::new();

        let http = http::HttpMetrics::new();
        let checks = IntCounterVec::new(
            Opts::new(
                "robotsd_checks_total",
                "Checks answered, by verdict and reason.",
            ),
            &["verdict", "reason"],
        )
        .expect("valid metric");
        let cache_lookups = IntCounterVec::new(
            Opts::new(
                "robotsd_cache_lookups_total",
                "Origin cache lookups made by checks, by result.",
            ),
            &["result"],
        )
        .expect("valid metric");
        let cache_entries = IntGauge::new(
            "robotsd_cache_entries",
            "Origins whose robots.txt (or its absence) the cache holds.",
        )
        .expect("valid");
        let cache_weight_bytes = IntGauge::new(
            "robotsd_cache_weight_bytes",
            "Approximate bytes held by the cache, as weighed against its capacity.",
        )
        .expect("valid metric");
        let cache_capacity_bytes = IntGauge::new(
            "robotsd_cache_capacity_bytes",
            "The capacity robotsd_cache_weight_bytes is held under (--cache-capacity).",
        )
        .expect("valid metric");
        let cache_evictions = IntCounter::new(
            "robotsd_cache_evictions_total",
            "Origins whose robots.txt was evicted from the cache (or refused a place) for its capacity.",
        )
        .expect("valid metric");
        let cache_refusals = IntCounter::new(
            "robotsd_cache_full_total",
            "Checks answered 503 cache-full: their origin's robots.txt was dropped from the full \
             cache within the minimum lifetime of its fetch, and no shared store held it.",
        )
        .expect("valid metric");
        let origins_in_backoff = IntGauge::new(
            "robotsd_origins_in_backoff",
            "Origins whose robots.txt is currently unreachable and in backoff.",
        )
        .expect("valid metric");
        let fetches = IntCounterVec::new(
            Opts::new(
                "robotsd_robots_fetches_total",
                "robots.txt fetches completed, by outcome.",
            ),
            &["outcome"],
        )
        .expect("valid metric");
        // 1 ms to ~33 s doubling: covers a nearby origin up to a raised fetch timeout.
        let fetch_duration = prometheus::Histogram::with_opts(
            HistogramOpts::new(
                "robotsd_robots_fetch_duration_seconds",
                "Time taken by robots.txt fetches, redirects and body included.",
            )
            .buckets(prometheus::exponential_buckets(0.001, 2.0, 16).expect("valid buckets")),
        )
        .expect("valid metric");
        let fetches_in_flight = IntGauge::new(
            "robotsd_robots_fetches_in_flight",
            "robots.txt fetches running now.",
        )
        .expect("valid metric");
        let build_info = IntGaugeVec::new(
            Opts::new(
                "robotsd_build_info",
                "Always 1; the labels describe the running build.",
            ),
            &["version"],
        )
        .expect("valid metric");
        build_info
            .with_label_values(&[env!("CARGO_PKG_VERSION")])
            .set(1);

        // Zero-valued series from the start, so `rate()` and absence alerts work before the
        // first event of each kind; the sets are small and closed.
        let lookup_series = LOOKUP_RESULTS.map(|result| cache_lookups.with_label_values(&[result]));
        for outcome in FetchKind::ALL.map(FetchKind::as_str) {
            fetches.with_label_values(&[outcome]);
        }

        let store = store::StoreMetrics::new();
        let log_dropped = IntCounter::new(
            "robotsd_log_lines_dropped_total",
            "Log lines dropped because the log writer's queue was full (a slow or stalled reader \
             of robotsd's stderr): dropped instead of blocking requests.",
        )
        .expect("valid metric");
        let connections = connections::ConnectionFamilies::new();
        let refreshes = IntCounterVec::new(
            Opts::new(
                "robotsd_robots_refreshes_total",
                "Operator refreshes (POST /v1/robots/refresh): `refreshed`, or `refused` because \
                 the origin was fetched too recently or is in backoff.",
            ),
            &["result"],
        )
        .expect("valid metric");
        let refresh_series =
            ["refused", "refreshed"].map(|result| refreshes.with_label_values(&[result]));
        let usage = usage::UsageMetrics::new();
        let rsl = rsl::RslMetrics::new();
        let tdmrep = tdmrep::metrics();
        let pacing = pacing::PaceMetrics::new();
        let resting = resting::RestingMetrics::new();
        let signatures = bot_auth::SignatureMetrics::new();
        let challenges = challenges::ChallengeMetrics::new();
        let collectors: [Box<dyn prometheus::core::Collector>; 48] = [
            Box::new(http.requests.clone()),
            Box::new(http.duration.clone()),
            Box::new(checks.clone()),
            Box::new(cache_lookups.clone()),
            Box::new(cache_entries.clone()),
            Box::new(cache_weight_bytes.clone()),
            Box::new(resting.entries.clone()),
            Box::new(resting.bytes.clone()),
            Box::new(signatures.family.clone()),
            Box::new(challenges.family.clone()),
            Box::new(cache_capacity_bytes.clone()),
            Box::new(cache_evictions.clone()),
            Box::new(cache_refusals.clone()),
            Box::new(origins_in_backoff.clone()),
            Box::new(fetches.clone()),
            Box::new(fetch_duration.clone()),
            Box::new(fetches_in_flight.clone()),
            Box::new(build_info),
            Box::new(store.up.clone()),
            Box::new(store.breaker_open.clone()),
            Box::new(store.operations.clone()),
            Box::new(store.duration.clone()),
            Box::new(store.leases.clone()),
            Box::new(log_dropped.clone()),
            Box::new(connections.open.clone()),
            Box::new(connections.refused.clone()),
            Box::new(connections.timeouts.clone()),
            Box::new(refreshes),
            Box::new(usage.family.clone()),
            Box::new(rsl.reports.clone()),
            Box::new(rsl.cache.fetches.clone()),
            Box::new(rsl.cache.held.clone()),
            Box::new(rsl.cache.weight.clone()),
            Box::new(tdmrep.fetches.clone()),
            Box::new(tdmrep.held.clone()),
            Box::new(tdmrep.weight.clone()),
            Box::new(pacing.reservations.clone()),
            Box::new(pacing.known_deferrals.clone()),
            Box::new(pacing.wait.clone()),
            Box::new(pacing.reports.clone()),
            Box::new(pacing.slowed.clone()),
            Box::new(pacing.held.clone()),
            Box::new(pacing.held_bytes.clone()),
            Box::new(pacing.fleet_size.clone()),
            Box::new(pacing.fleet_index.clone()),
            Box::new(pacing.alone.clone()),
            Box::new(pacing.alone_total.clone()),
            Box::new(pacing.duplicate_index.clone()),
        ];
        let mut family_names = Vec::new();
        for collector in collectors {
            family_names.extend(collector.desc().iter().map(|desc| desc.fq_name.clone()));
            // Only a duplicate or malformed descriptor fails, which the fixed names above rule out.
            registry
                .register(collector)
                .expect("metric names are unique");
        }
        #[cfg(target_os = "linux")]
        {
            use prometheus::core::Collector as _;
            let process = prometheus::process_collector::ProcessCollector::for_self();
            family_names.extend(process.desc().iter().map(|desc| desc.fq_name.clone()));
            registry
                .register(Box::new(process))
                .expect("process metric names are unique");
        }
        family_names.sort();

        Metrics {
            inner: Arc::new(Inner {
                registry,
                family_names,
                http,
                checks,
                check_series: Default::default(),
                lookup_series,
                cache_entries,
                cache_weight_bytes,
                cache_capacity_bytes,
                cache_evictions,
                evictions_seen: AtomicU64::new(0),
                cache_refusals,
                refusals_seen: AtomicU64::new(0),
                origins_in_backoff,
                fetches,
                fetch_duration,
                fetches_in_flight,
                store,
                connections,
                refreshes: refresh_series,
                usage,
                rsl,
                tdmrep,
                pacing,
                resting,
                signatures,
                challenges,
                log_dropped,
                log_dropped_seen: AtomicU64::new(0),
                log_dropped_source: std::sync::OnceLock::new(),
            }),
        }
    }

    /// The name of every metric family `/metrics` can show, sorted; a histogram's samples add
    /// `_bucket`, `_sum` and `_count` to its name. Deployment artefacts (alerts, dashboards) are
    /// checked against this list so they never query a series robotsd does not export.
    pub fn family_names(&self) -> &[String] {
        &self.inner.family_names
    }

    /// Records one operator refresh: done, or refused as too soon.
    pub fn observe_refresh(&self, refreshed: bool) {
        self.inner.refreshes[usize::from(refreshed)].inc();
    }

    /// The connection series of `listener`, one of [`LISTENERS`].
    pub fn connections(&self, listener: &str) -> ConnectionMetrics {
        debug_assert!(LISTENERS.contains(&listener), "{listener}");
        self.inner.connections.of(listener)
    }

    /// Records one HTTP response: `robotsd_http_requests_total{route,method,status}` and
    /// `robotsd_http_request_duration_seconds{route}`.
    ///
    /// `route` must be a route template (e.g. `/v1/check`) or [`UNMATCHED_ROUTE`], never a raw
    /// path; the server's edge service takes care of that. Non-standard methods are recorded as
    /// [`OTHER_LABEL`].
    pub fn observe_http(&self, route: &str, method: &str, status: u16, elapsed: Duration) {
        self.inner.http.observe(route, method, status, elapsed);
    }

    /// [`Metrics::observe_http`] for one of the app's routes, with its [`RouteSeries`]: the
    /// series it uses most are resolved once, on their first use. `series` must always be given
    /// with the same `route`, and to the same `Metrics`.
    pub fn observe_route(
        &self,
        series: &RouteSeries,
        route: &str,
        method: &str,
        status: u16,
        elapsed: Duration,
    ) {
        self.inner
            .http
            .observe_route(series, route, method, status, elapsed);
    }

    /// Records one answered check: `robotsd_checks_total{verdict,reason}` and
    /// `robotsd_cache_lookups_total{result}`. The labels are typed, so nothing a client sends can
    /// become one.
    pub fn observe_check(&self, allowed: bool, reason: Reason, lookup: Lookup) {
        let verdict = if allowed { "allow" } else { "disallow" };
        let resolve = || {
            self.inner
                .checks
                .with_label_values(&[verdict, reason.as_str()])
        };
        // A reason added without growing `Reason::ALL` has no slot: it is still counted, by label.
        match self.inner.check_series[usize::from(allowed)].get(reason as usize) {
            Some(series) => series.get_or_init(resolve).inc(),
            None => resolve().inc(),
        }
        let index = match lookup {
            Lookup::Hit => 0,
            Lookup::Miss => 1,
            Lookup::Stale => 2,
            Lookup::Coalesced => 3,
            Lookup::Shared => 4,
        };
        debug_assert_eq!(LOOKUP_RESULTS[index], lookup.as_str());
        self.inner.lookup_series[index].inc();
    }

    /// Records the AI usage preferences of one answered check:
    /// `robotsd_usage_preferences_total{source,category,value}`.
    pub fn observe_usage(&self, items: &[crate::checker::UsageItem]) {
        self.inner.usage.observe(items);
    }

    /// `robotsd_rsl_reports_total{state}`, for one answer's license reports.
    pub fn observe_rsl(&self, reports: &[crate::rsl::RslReport]) {
        self.inner.rsl.observe(reports);
    }

    /// Refreshes the license series from `licenses`; call before [`Metrics::render`].
    pub fn refresh_rsl(&self, licenses: &crate::rsl::Licenses) {
        self.inner.rsl.refresh(licenses);
    }

    /// The `tdmrep.json` cache's fetch counters and size, copied before a scrape (`--tdmrep`).
    pub fn refresh_tdmrep(&self, files: &crate::tdmrep::TdmRepFiles) {
        self.inner.tdmrep.refresh(files.cache());
    }

    /// Records one completed robots.txt fetch: `robotsd_robots_fetches_total{outcome}` and
    /// `robotsd_robots_fetch_duration_seconds`.
    ///
    /// Fetches in flight are not reported here: [`Metrics::render`] reads them from the cache's
    /// counters.
    pub fn observe_fetch(&self, outcome: FetchKind, elapsed: Duration) {
        self.inner
            .fetches
            .with_label_values(&[outcome.as_str()])
            .inc();
        self.inner.fetch_duration.observe(elapsed.as_secs_f64());
    }

    /// Records a robots.txt fetch answered by `vendor`'s bot challenge:
    /// `robotsd_robots_challenges_total{vendor}`.
    pub fn observe_challenge(&self, vendor: &'static str) {
        self.inner.challenges.observe(vendor);
    }

    /// Reports `robotsd_log_lines_dropped_total` from `source` from now on (the first source
    /// installed stays).
    pub fn count_dropped_log_lines(&self, source: LogDropSource) {
        let _ = self.inner.log_dropped_source.set(source);
    }

    /// Records a pacing event: `robotsd_pace_reservations_total`, `robotsd_pace_wait_seconds`,
    /// `robotsd_pace_reports_total`.
    pub fn observe_pace(&self, event: crate::pacing::PaceEvent) {
        self.inner.pacing.observe(event);
    }

    /// Refreshes the pacing gauges from `pacer`; call before [`Metrics::render`].
    pub fn refresh_pacing(&self, pacer: &crate::pacing::Pacer) {
        self.inner.pacing.refresh(pacer);
    }

    /// Records one Web Bot Auth signature made with the key `kid`:
    /// `robotsd_wba_signatures_total{kid,of}`.
    pub fn observe_signature(&self, kid: &str, of: SignatureOf) {
        self.inner.signatures.observe(kid, of);
    }

    /// Records one call to the shared store: `robotsd_store_operations_total{op,outcome}` and
    /// `robotsd_store_operation_duration_seconds{op}`.
    pub fn observe_store(&self, op: StoreOp, outcome: StoreOutcome, took: Duration) {
        self.inner.store.observe(op, outcome, took);
    }

    /// Refreshes the cache series from `cache` (entries, weight, capacity, evictions, origins in backoff,
    /// fetches in flight) and returns every series in the Prometheus text exposition format
    /// (content type [`prometheus::TEXT_FORMAT`]).
    ///
    /// A `Metrics` is meant to be rendered against one cache for its whole life: the evictions
    /// counter follows that cache's running total.
    pub async fn render(&self, cache: &OriginCache) -> String {
        let inner = &self.inner;
        let (entries, bytes) = cache.usage().await;
        inner.cache_entries.set(saturating_i64(entries));
        inner.cache_weight_bytes.set(saturating_i64(bytes));
        inner.resting.refresh(cache);
        inner
            .cache_capacity_bytes
            .set(saturating_i64(cache.capacity_bytes()));
        inner
            .origins_in_backoff
            .set(saturating_i64(cache.origins_in_backoff() as u64));
        let stats = cache.stats();
        inner.fetches_in_flight.set(saturating_i64(
            stats.fetches_in_flight.load(Ordering::Relaxed),
        ));
        sync_counter(
            &inner.cache_evictions,
            &inner.evictions_seen,
            stats.evictions.load(Ordering::Relaxed),
        );
        sync_counter(
            &inner.cache_refusals,
            &inner.refusals_seen,
            stats.refusals.load(Ordering::Relaxed),
        );
        inner
            .store
            .refresh(cache.store_up(), cache.store_breaker_open(), stats);
        if let Some(source) = inner.log_dropped_source.get() {
            sync_counter(&inner.log_dropped, &inner.log_dropped_seen, source());
        }

        let families = inner.registry.gather();
        let mut out = String::new();
        if let Err(error) = TextEncoder::new().encode_utf8(&families, &mut out) {
            // Only malformed metric families fail to encode; serve what was written rather than
            // losing the whole scrape.
            tracing::error!(%error, "encoding metrics failed");
        }
        out
    }
}

/// Adds to `counter` whatever `total` gained since the last call, so a counter we cannot set
/// follows a running total kept elsewhere (`CacheStats::evictions`).
///
/// Chosen over a custom collector because the total lives in the cache, which is built apart
/// from [`Metrics`] and only reachable at scrape time; this keeps the series a plain counter.
/// `fetch_max` makes concurrent scrapes add each eviction exactly once, even when they read the
/// total in one order and get here in the other.
fn sync_counter(counter: &IntCounter, seen: &AtomicU64, total: u64) {
    let previous = seen.fetch_max(total, Ordering::Relaxed);
    if total > previous {
        counter.inc_by(total - previous);
    }
}

fn saturating_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests;
