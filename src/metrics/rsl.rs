//! RSL license terms (`--rsl`, docs/usage.md): `robotsd_rsl_reports_total{state}`, the license
//! reports check answers carried, `robotsd_rsl_fetches_total{outcome}`, the license documents
//! fetched, and the license cache's size. Every label comes from a closed set.

use std::sync::atomic::{AtomicU64, Ordering};

use prometheus::{IntCounter, IntCounterVec, IntGauge, Opts};

use crate::documents::FETCH_OUTCOMES;
use crate::rsl::{Licenses, RslReport, RslState};

/// Every state, in the order of the series.
const STATES: [RslState; 6] = [
    RslState::Covered,
    RslState::NotCovered,
    RslState::FetchFailed,
    RslState::Invalid,
    RslState::Refused,
    RslState::NotFetched,
];

pub(super) struct RslMetrics {
    pub(super) reports: IntCounterVec,
    report_series: [IntCounter; 6],
    pub(super) fetches: IntCounterVec,
    fetch_series: [IntCounter; 5],
    /// The fetch totals last copied from the license cache.
    fetches_seen: [AtomicU64; 5],
    pub(super) documents: IntGauge,
    pub(super) weight: IntGauge,
}

impl RslMetrics {
    pub(super) fn new() -> RslMetrics {
        let reports = IntCounterVec::new(
            Opts::new(
                "robotsd_rsl_reports_total",
                "RSL license reports in check answers (--rsl), by state: covered, not_covered, \
                 fetch_failed, invalid, refused, not_fetched.",
            ),
            &["state"],
        )
        .expect("valid metric");
        let fetches = IntCounterVec::new(
            Opts::new(
                "robotsd_rsl_fetches_total",
                "RSL license documents fetched (--rsl), by outcome: document, invalid (not RSL \
                 robotsd can read), missing (4xx), unreachable (429, 5xx, network), refused.",
            ),
            &["outcome"],
        )
        .expect("valid metric");
        let documents = IntGauge::new(
            "robotsd_rsl_documents",
            "License URLs the license cache holds (--rsl).",
        )
        .expect("valid metric");
        let weight = IntGauge::new(
            "robotsd_rsl_weight_bytes",
            "Bytes charged for the license cache's entries, against --rsl-capacity.",
        )
        .expect("valid metric");
        RslMetrics {
            report_series: STATES.map(|s| reports.with_label_values(&[s.as_str()])),
            fetch_series: FETCH_OUTCOMES.map(|o| fetches.with_label_values(&[o])),
            fetches_seen: Default::default(),
            reports,
            fetches,
            documents,
            weight,
        }
    }

    /// Counts the reports of one answer.
    pub(super) fn observe(&self, reports: &[RslReport]) {
        for report in reports {
            if let Some(i) = STATES.iter().position(|s| *s == report.state) {
                self.report_series[i].inc();
            }
        }
    }

    /// Copies the license cache's counters and size.
    pub(super) fn refresh(&self, licenses: &Licenses) {
        let cache = licenses.cache();
        for (i, total) in cache.stats().fetches.iter().enumerate() {
            super::sync_counter(
                &self.fetch_series[i],
                &self.fetches_seen[i],
                total.load(Ordering::Relaxed),
            );
        }
        let (entries, bytes) = cache.usage();
        self.documents.set(super::saturating_i64(entries));
        self.weight.set(super::saturating_i64(bytes));
    }
}
