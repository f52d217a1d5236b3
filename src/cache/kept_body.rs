//! The body of a parsed robots.txt, kept deflated beside its parse, so that `/v1/robots` can show
//! the file as it was fetched (the tester's Edit mode starts from it, comments and all) without
//! fetching it again. The parse does not keep the text, and a robots.txt deflates to about a
//! quarter of its size; the kept bytes are charged to the cache's byte budget with the parse.
//!
//! Its SHA-256 names the copy in every answer computed from it (`robots.sha256`): an answer
//! depends on the file it came from, and a crawler that records the hash can tell which version
//! of a site's robots.txt (and of its usage preferences) it acted on. It is the hash of the bytes
//! kept (decoded, cut at the fetch limit), so `curl --compressed … | sha256sum` gives the same
//! digest for a file under the limit.

use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::store::record::{deflate_body, inflate};

/// A robots.txt body, deflated, and the SHA-256 of its bytes. Cheap to clone.
#[derive(Debug, Clone)]
pub struct KeptBody {
    deflated: Arc<[u8]>,
    sha256: [u8; 32],
}

impl KeptBody {
    /// Keeps `body`, deflated, with its digest.
    pub fn keep(body: &[u8]) -> KeptBody {
        KeptBody {
            // Exactly sized: the encoder's buffer has slack, and this is kept for a day per
            // origin.
            deflated: Arc::from(deflate_body(body)),
            sha256: Sha256::digest(body).into(),
        }
    }

    /// The body, deflated as the store keeps it too.
    pub fn deflated(&self) -> &[u8] {
        &self.deflated
    }

    /// Bytes held on the heap.
    pub fn heap_size(&self) -> usize {
        self.deflated.len()
    }

    /// The SHA-256 of the body.
    pub fn sha256(&self) -> [u8; 32] {
        self.sha256
    }

    /// The body again, if it inflates within `max` bytes (it always does unless memory was
    /// corrupted: it was deflated from at most the fetch limit).
    pub fn text(&self, max: usize) -> Option<Vec<u8>> {
        inflate(&self.deflated, max).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_exact_bytes_in_less_room() {
        let body = "# comment\nUser-agent: *\nDisallow: /private\n".repeat(50);
        let kept = KeptBody::keep(body.as_bytes());
        assert!(kept.heap_size() < body.len() / 5, "{}", kept.heap_size());
        assert_eq!(kept.text(body.len()).as_deref(), Some(body.as_bytes()));
        assert_eq!(kept.text(body.len() - 1), None);
    }

    #[test]
    fn names_the_copy_by_the_sha256_of_its_bytes() {
        // `printf 'User-agent: *\nDisallow: /private\n' | sha256sum`
        let kept = KeptBody::keep(b"User-agent: *\nDisallow: /private\n");
        let hex: String = kept.sha256().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "38ee13a89fd0de18fe5f1f192cb4179a600acc093eefb277f5a7f77660033e8f"
        );
        assert_ne!(
            KeptBody::keep(b"User-agent: *\nDisallow: /privat\n").sha256(),
            kept.sha256()
        );
    }
}
