//! The series of a cache of documents fetched beside robots.txt ([`crate::documents`]): its
//! fetches by outcome, and the entries it holds with the bytes charged for them. RSL licenses
//! and TDMRep's files each have one set, under their own names. Every label comes from a
//! closed set.

use std::sync::atomic::{AtomicU64, Ordering};

use prometheus::{IntCounter, IntCounterVec, IntGauge, Opts};

use crate::documents::{DocumentCache, DocumentKind, FETCH_OUTCOMES};

/// The names and help texts of one cache's series.
pub(super) struct Names {
    pub(super) fetches: (&'static str, &'static str),
    pub(super) held: (&'static str, &'static str),
    pub(super) weight: (&'static str, &'static str),
}

pub(super) struct DocumentCacheMetrics {
    pub(super) fetches: IntCounterVec,
    fetch_series: [IntCounter; 5],
    /// The fetch totals last copied from the cache.
    fetches_seen: [AtomicU64; 5],
    pub(super) held: IntGauge,
    pub(super) weight: IntGauge,
}

impl DocumentCacheMetrics {
    pub(super) fn new(names: Names) -> DocumentCacheMetrics {
        let fetches = IntCounterVec::new(Opts::new(names.fetches.0, names.fetches.1), &["outcome"])
            .expect("valid metric");
        DocumentCacheMetrics {
            fetch_series: FETCH_OUTCOMES.map(|o| fetches.with_label_values(&[o])),
            fetches_seen: Default::default(),
            fetches,
            held: IntGauge::new(names.held.0, names.held.1).expect("valid metric"),
            weight: IntGauge::new(names.weight.0, names.weight.1).expect("valid metric"),
        }
    }

    /// Copies the cache's counters and size.
    pub(super) fn refresh<K: DocumentKind>(&self, cache: &DocumentCache<K>) {
        for (i, total) in cache.stats().fetches.iter().enumerate() {
            super::sync_counter(
                &self.fetch_series[i],
                &self.fetches_seen[i],
                total.load(Ordering::Relaxed),
            );
        }
        let (entries, bytes) = cache.usage();
        self.held.set(super::saturating_i64(entries));
        self.weight.set(super::saturating_i64(bytes));
    }
}
