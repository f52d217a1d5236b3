//! What a set's sieve is charged, worked out when the charge is first asked for.
//!
//! The parse used to count every sieve's segments, states and trie nodes exactly (issue 40), so
//! that a cache charges a parsed file what its indexes will hold before they are built. That count
//! was a tenth of the parse of the corpus, paid by every parse, while only a cache asks for a
//! file's weight (issue 58: the parse against Google's reference). So it is made when
//! [`crate::RobotsTxt::heap_size`] is first called, and kept: the weight never changes after.

use std::sync::OnceLock;

/// A set's sieve charge: none when the set cannot build a sieve, else counted once.
#[derive(Debug, Clone)]
pub(crate) struct SieveCharge {
    may_sieve: bool,
    bytes: OnceLock<u32>,
}

impl SieveCharge {
    /// The charge of a set that may build a sieve, or of one that cannot (nothing).
    pub(crate) fn new(may_sieve: bool) -> SieveCharge {
        SieveCharge {
            may_sieve,
            bytes: OnceLock::new(),
        }
    }

    /// The bytes charged: `count` works them out the first time.
    pub(crate) fn bytes(&self, count: impl FnOnce() -> usize) -> usize {
        if !self.may_sieve {
            return 0;
        }
        *self
            .bytes
            .get_or_init(|| u32::try_from(count()).unwrap_or(u32::MAX)) as usize
    }
}
