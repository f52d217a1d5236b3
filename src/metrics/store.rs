//! The shared store's series: whether it is up, every call by operation and outcome with its
//! latency, and the fetch leases. Registered always (deployment artefacts are checked against
//! every family robotsd can export); `robotsd_store_up` has a series only when a store is
//! configured, so an alert on it stays silent for a replica that runs alone.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prometheus::{
    Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGaugeVec, Opts,
};

use crate::cache::CacheStats;
use crate::store::{StoreOp, StoreOutcome};

/// The `result` label values of `robotsd_store_leases_total`.
const LEASE_RESULTS: [&str; 3] = ["taken", "waited", "expired"];

pub(super) struct StoreMetrics {
    pub(super) up: IntGaugeVec,
    pub(super) breaker_open: IntGaugeVec,
    pub(super) operations: IntCounterVec,
    pub(super) duration: HistogramVec,
    pub(super) leases: IntCounterVec,
    /// The lease totals last copied into `leases`, in `LEASE_RESULTS` order.
    leases_seen: [AtomicU64; 3],
    /// `operations` by `[op][outcome]` and `duration` by `[op]`, in [`StoreOp::ALL`] and
    /// [`StoreOutcome::ALL`] order: resolved once, not looked up by their labels on every call.
    operation_series: [[IntCounter; StoreOutcome::ALL.len()]; StoreOp::ALL.len()],
    duration_series: [Histogram; StoreOp::ALL.len()],
}

impl StoreMetrics {
    pub(super) fn new() -> StoreMetrics {
        let up = IntGaugeVec::new(
            Opts::new(
                "robotsd_store_up",
                "1 while the shared store answers, 0 from the first call that failed (an error, \
                 its time limit, a refusal) until a call or the background probe succeeds; no \
                 series without a store.",
            ),
            &["backend"],
        )
        .expect("valid metric");
        let breaker_open = IntGaugeVec::new(
            Opts::new(
                "robotsd_store_breaker_open",
                "1 while the shared store's circuit breaker is open (calls skip the store without \
                 waiting, after 3 failures in a row or one refusal), 0 while it is closed; no \
                 series without a store.",
            ),
            &["backend"],
        )
        .expect("valid metric");
        let operations = IntCounterVec::new(
            Opts::new(
                "robotsd_store_operations_total",
                "Calls to the shared store, by operation and outcome.",
            ),
            &["op", "outcome"],
        )
        .expect("valid metric");
        // 100 µs to ~1.6 s doubling: loopback Redis answers in well under a millisecond, and
        // the time limit is 250 ms by default.
        let duration = HistogramVec::new(
            HistogramOpts::new(
                "robotsd_store_operation_duration_seconds",
                "Time taken by calls to the shared store, by operation.",
            )
            .buckets(prometheus::exponential_buckets(0.000_1, 2.0, 15).expect("valid buckets")),
            &["op"],
        )
        .expect("valid metric");
        let leases = IntCounterVec::new(
            Opts::new(
                "robotsd_store_leases_total",
                "Fetch leases: taken by this replica, waited on (another replica's result came), \
                 expired (the wait ended without one, and this replica fetched).",
            ),
            &["result"],
        )
        .expect("valid metric");
        let operation_series = StoreOp::ALL.map(|op| {
            StoreOutcome::ALL
                .map(|outcome| operations.with_label_values(&[op.as_str(), outcome.as_str()]))
        });
        let duration_series = StoreOp::ALL.map(|op| duration.with_label_values(&[op.as_str()]));
        for result in LEASE_RESULTS {
            leases.with_label_values(&[result]);
        }
        StoreMetrics {
            up,
            breaker_open,
            operations,
            duration,
            leases,
            leases_seen: Default::default(),
            operation_series,
            duration_series,
        }
    }

    pub(super) fn observe(&self, op: StoreOp, outcome: StoreOutcome, took: Duration) {
        self.operation_series[op as usize][outcome as usize].inc();
        self.duration_series[op as usize].observe(took.as_secs_f64());
    }

    /// Refreshes the series read from the cache: the store's state, its breaker's, and the
    /// lease totals.
    pub(super) fn refresh(
        &self,
        store_up: Option<bool>,
        breaker_open: Option<bool>,
        stats: &CacheStats,
    ) {
        if let Some(up) = store_up {
            self.up.with_label_values(&["redis"]).set(i64::from(up));
        }
        if let Some(open) = breaker_open {
            self.breaker_open
                .with_label_values(&["redis"])
                .set(i64::from(open));
        }
        let totals = [
            stats.leases_taken.load(Ordering::Relaxed),
            stats.leases_waited.load(Ordering::Relaxed),
            stats.leases_expired.load(Ordering::Relaxed),
        ];
        for ((result, seen), total) in LEASE_RESULTS.iter().zip(&self.leases_seen).zip(totals) {
            super::sync_counter(&self.leases.with_label_values(&[result]), seen, total);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_series_are_indexed_by_the_order_of_every_operation_and_outcome() {
        for (index, op) in StoreOp::ALL.into_iter().enumerate() {
            assert_eq!(op as usize, index, "{op:?}");
        }
        for (index, outcome) in StoreOutcome::ALL.into_iter().enumerate() {
            assert_eq!(outcome as usize, index, "{outcome:?}");
        }
        let metrics = StoreMetrics::new();
        metrics.observe(
            StoreOp::Signal,
            StoreOutcome::Timeout,
            Duration::from_millis(3),
        );
        let counted = metrics.operations.with_label_values(&["signal", "timeout"]);
        assert_eq!(counted.get(), 1);
        let timed = metrics.duration.with_label_values(&["signal"]);
        assert_eq!(timed.get_sample_count(), 1);
        assert_eq!(
            metrics
                .operations
                .with_label_values(&["signal", "ok"])
                .get(),
            0
        );
    }
}
