//! The origin states the cache keeps apart from its copies (the resting list): an origin evicted
//! while its state still restrains fetching (a backoff, a fetch within the shortest lifetime),
//! or made by a first check and not yet fetched. They are bounded by count, not weighed against
//! `--cache-capacity`, so they have series of their own: how many, and the bytes charged for
//! them (each its slot and state as a weighed entry is charged, without a copy).

use prometheus::IntGauge;

use crate::cache::OriginCache;

pub(super) struct RestingMetrics {
    pub(super) entries: IntGauge,
    pub(super) bytes: IntGauge,
}

impl RestingMetrics {
    pub(super) fn new() -> RestingMetrics {
        RestingMetrics {
            entries: IntGauge::new(
                "robotsd_cache_resting_entries",
                "Origin states kept apart from the cache's copies (evicted while in backoff or \
                 fetched within the shortest lifetime), bounded by count: one per 8 KiB of \
                 --cache-capacity, at least 1,024.",
            )
            .expect("valid metric"),
            bytes: IntGauge::new(
                "robotsd_cache_resting_bytes",
                "Bytes charged for the origin states kept apart from the cache's copies, beside \
                 robotsd_cache_weight_bytes.",
            )
            .expect("valid metric"),
        }
    }

    /// Copies the cache's resting list's size.
    pub(super) fn refresh(&self, cache: &OriginCache) {
        let (entries, bytes) = cache.resting();
        self.entries.set(super::saturating_i64(entries));
        self.bytes.set(super::saturating_i64(bytes));
    }
}
