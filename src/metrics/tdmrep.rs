//! TDMRep's origin-wide files (`--tdmrep`, docs/page.md): `robotsd_tdmrep_fetches_total{outcome}`,
//! the `tdmrep.json` files fetched, and the size of the cache that holds them. Every label
//! comes from a closed set.

use std::sync::atomic::{AtomicU64, Ordering};

use prometheus::{IntCounter, IntCounterVec, IntGauge, Opts};

use crate::documents::FETCH_OUTCOMES;
use crate::tdmrep::TdmRepFiles;

pub(super) struct TdmRepMetrics {
    pub(super) fetches: IntCounterVec,
    fetch_series: [IntCounter; 5],
    /// The fetch totals last copied from the cache.
    fetches_seen: [AtomicU64; 5],
    pub(super) files: IntGauge,
    pub(super) weight: IntGauge,
}

impl TdmRepMetrics {
    pub(super) fn new() -> TdmRepMetrics {
        let fetches = IntCounterVec::new(
            Opts::new(
                "robotsd_tdmrep_fetches_total",
                "Origins' /.well-known/tdmrep.json fetched (--tdmrep), by outcome: document, \
                 invalid (not TDMRep's JSON array of rules), missing (4xx), unreachable (429, \
                 5xx, network), refused.",
            ),
            &["outcome"],
        )
        .expect("valid metric");
        let files = IntGauge::new(
            "robotsd_tdmrep_files",
            "Origins' tdmrep.json URLs the cache holds (--tdmrep).",
        )
        .expect("valid metric");
        let weight = IntGauge::new(
            "robotsd_tdmrep_weight_bytes",
            "Bytes charged for the tdmrep.json cache's entries, against --tdmrep-capacity.",
        )
        .expect("valid metric");
        TdmRepMetrics {
            fetch_series: FETCH_OUTCOMES.map(|o| fetches.with_label_values(&[o])),
            fetches_seen: Default::default(),
            fetches,
            files,
            weight,
        }
    }

    /// Copies the cache's counters and size.
    pub(super) fn refresh(&self, files: &TdmRepFiles) {
        let cache = files.cache();
        for (i, total) in cache.stats().fetches.iter().enumerate() {
            super::sync_counter(
                &self.fetch_series[i],
                &self.fetches_seen[i],
                total.load(Ordering::Relaxed),
            );
        }
        let (entries, bytes) = cache.usage();
        self.files.set(super::saturating_i64(entries));
        self.weight.set(super::saturating_i64(bytes));
    }
}
