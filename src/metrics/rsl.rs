//! RSL license terms (`--rsl`, docs/usage.md): `robotsd_rsl_reports_total{state}`, the license
//! reports check answers carried, `robotsd_rsl_fetches_total{outcome}`, the license documents
//! fetched, and the license cache's size. Every label comes from a closed set.

use prometheus::{IntCounter, IntCounterVec, Opts};

use super::documents::{DocumentCacheMetrics, Names};
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
    /// The license cache's fetches and size.
    pub(super) cache: DocumentCacheMetrics,
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
        RslMetrics {
            report_series: STATES.map(|s| reports.with_label_values(&[s.as_str()])),
            reports,
            cache: DocumentCacheMetrics::new(Names {
                fetches: (
                    "robotsd_rsl_fetches_total",
                    "RSL license documents fetched (--rsl), by outcome: document, invalid (not \
                     RSL robotsd can read), missing (4xx), unreachable (429, 5xx, network), \
                     refused.",
                ),
                held: (
                    "robotsd_rsl_documents",
                    "License URLs the license cache holds (--rsl).",
                ),
                weight: (
                    "robotsd_rsl_weight_bytes",
                    "Bytes charged for the license cache's entries, against --rsl-capacity.",
                ),
            }),
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
        self.cache.refresh(licenses.cache());
    }
}
