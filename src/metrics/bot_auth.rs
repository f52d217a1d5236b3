//! Web Bot Auth's signatures, by the key that made them: a rotation shows as one key's series
//! flattening while the next one's climbs. The key id (a public thumbprint) is the label; a key
//! file holds a few keys, so the series are few.

use prometheus::{IntCounterVec, Opts};

/// What a signature was made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureOf {
    /// A crawler's request (`sign=` on a check).
    Request,
    /// The key directory's answer.
    Directory,
    /// A request robotsd sent itself (robots.txt, tdmrep.json, an RSL license).
    Fetch,
}

impl SignatureOf {
    fn label(self) -> &'static str {
        match self {
            SignatureOf::Request => "request",
            SignatureOf::Directory => "directory",
            SignatureOf::Fetch => "fetch",
        }
    }
}

pub(super) struct SignatureMetrics {
    pub(super) family: IntCounterVec,
}

impl SignatureMetrics {
    pub(super) fn new() -> SignatureMetrics {
        SignatureMetrics {
            family: IntCounterVec::new(
                Opts::new(
                    "robotsd_wba_signatures_total",
                    "Web Bot Auth signatures made (--wba-keys), by key id (its JWK thumbprint) \
                     and what they were for: `request` (sign= on a check), `directory` (the \
                     key directory's answer, one per key held) or `fetch` (a request robotsd \
                     sent itself: robots.txt, tdmrep.json, an RSL license).",
                ),
                &["kid", "of"],
            )
            .expect("valid metric"),
        }
    }

    pub(super) fn observe(&self, kid: &str, of: SignatureOf) {
        self.family.with_label_values(&[kid, of.label()]).inc();
    }
}
