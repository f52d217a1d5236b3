//! TDMRep's origin-wide files (`--tdmrep`, docs/page.md): `robotsd_tdmrep_fetches_total{outcome}`,
//! the `tdmrep.json` files fetched, and the size of the cache that holds them.

use super::documents::{DocumentCacheMetrics, Names};

/// The series of the `tdmrep.json` cache.
pub(super) fn metrics() -> DocumentCacheMetrics {
    DocumentCacheMetrics::new(Names {
        fetches: (
            "robotsd_tdmrep_fetches_total",
            "Origins' /.well-known/tdmrep.json fetched (--tdmrep), by outcome: document, \
             invalid (not TDMRep's JSON array of rules), missing (4xx), unreachable (429, \
             5xx, network), refused.",
        ),
        held: (
            "robotsd_tdmrep_files",
            "Origins' tdmrep.json URLs the cache holds (--tdmrep).",
        ),
        weight: (
            "robotsd_tdmrep_weight_bytes",
            "Bytes charged for the tdmrep.json cache's entries, against --tdmrep-capacity.",
        ),
    })
}
