//! The body of a parsed robots.txt, kept deflated beside its parse, so that `/v1/robots` can show
//! the file as it was fetched (the tester's Edit mode starts from it, comments and all) without
//! fetching it again. The parse does not keep the text, and a robots.txt deflates to about a
//! fifth of its size; the kept bytes are charged to the cache's byte budget with the parse.

use std::sync::Arc;

use crate::store::record::{deflate_body, inflate};

/// A robots.txt body, deflated. Cheap to clone.
#[derive(Debug, Clone)]
pub struct KeptBody(Arc<[u8]>);

impl KeptBody {
    /// Keeps `body`, deflated.
    pub fn keep(body: &[u8]) -> KeptBody {
        // Exactly sized: the encoder's buffer has slack, and this is kept for a day per origin.
        KeptBody(Arc::from(deflate_body(body)))
    }

    /// Bytes held on the heap.
    pub fn heap_size(&self) -> usize {
        self.0.len()
    }

    /// The body again, if it inflates within `max` bytes (it always does unless memory was
    /// corrupted: it was deflated from at most the fetch limit).
    pub fn text(&self, max: usize) -> Option<Vec<u8>> {
        inflate(&self.0, max).ok()
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
}
