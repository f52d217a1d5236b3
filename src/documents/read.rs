//! How a document cache reads what a fetch (or the shared store) gave it: a body parsed on the
//! parser pool within its kind's bounds and its share of the capacity, and a fetch's outcome as
//! the cache policy takes it in.

use std::sync::Arc;
use std::time::Duration;

use sha2::Digest;

use super::DocumentKind;
use super::cache::{DocumentCache, DocumentMeta, Held};
use super::parser::PoolError;
use crate::cache::policy::FetchResult;
use crate::fetch::DocumentOutcome;
use crate::kept::kept_text;

/// How a body was read.
pub(super) struct Read<K: DocumentKind> {
    /// The document, or why there is none.
    pub(super) held: Held<K>,
    /// The outcome says nothing lasting about the document (no parser was free, or the parse
    /// ran out of time): it is kept for the shortest lifetime only.
    pub(super) transient: bool,
}

/// The SHA-256 of a document's bytes.
pub(super) fn sha256(body: &[u8]) -> [u8; 32] {
    sha2::Sha256::digest(body).into()
}

impl<K: DocumentKind> DocumentCache<K> {
    /// Reads a fetched or stored body (`truncated`: cut at the size limit) on a parser, within
    /// the document bounds and the document's share of the capacity.
    pub(super) async fn read(&self, body: bytes::Bytes, truncated: bool) -> Read<K> {
        let limits = self.limits;
        let parsed = self
            .parsers
            .run(move || K::parse(&body, truncated, &limits))
            .await;
        let budget_ms = u64::try_from(self.parsers.budget().as_millis()).unwrap_or(u64::MAX);
        let (held, transient) = match parsed {
            Ok(Ok(doc)) if K::document_heap_size(&doc) as u64 > self.share => (
                Held::Invalid(K::too_heavy(K::document_heap_size(&doc), self.share)),
                false,
            ),
            Ok(Ok(doc)) => (Held::Document(Arc::new(doc)), false),
            Ok(Err(error)) => (Held::Invalid(error), false),
            Err(PoolError::Busy) => (Held::Invalid(K::busy(budget_ms)), true),
            Err(PoolError::Overtime) => (Held::Invalid(K::overtime(budget_ms)), true),
            Err(PoolError::Panicked) => (Held::Invalid(K::parser_failed()), false),
        };
        Read { held, transient }
    }

    /// The policy's view of an outcome.
    pub(super) async fn result(
        &self,
        outcome: DocumentOutcome,
    ) -> FetchResult<DocumentMeta, Held<K>> {
        let meta_of = |m: &crate::fetch::FetchMeta, body: Option<&[u8]>, error: Option<String>| {
            DocumentMeta {
                status: m.status,
                fetched_at: m.fetched_at,
                duration: m.duration,
                final_url: m.final_url.as_str().to_owned(),
                bytes: m.bytes,
                truncated: m.truncated,
                sha256: body.map(sha256),
                error,
            }
        };
        match outcome {
            DocumentOutcome::Body {
                body,
                max_age,
                meta,
            } => {
                let meta = meta_of(&meta, Some(&body), None);
                let read = self.read(body, meta.truncated).await;
                FetchResult::Success {
                    rules: read.held,
                    // Read again after the shortest lifetime.
                    max_age: if read.transient {
                        Some(Duration::ZERO)
                    } else {
                        max_age
                    },
                    meta,
                }
            }
            DocumentOutcome::Missing {
                reason,
                max_age,
                meta,
            } => {
                let why = match reason {
                    crate::fetch::NoRobotsReason::Status(code) => format!("HTTP status {code}"),
                    crate::fetch::NoRobotsReason::RedirectLimit => "too many redirects".into(),
                    crate::fetch::NoRobotsReason::RedirectLoop => "a redirect loop".into(),
                    crate::fetch::NoRobotsReason::BadRedirect => {
                        "a redirect to nowhere usable".into()
                    }
                };
                FetchResult::Success {
                    rules: Held::Missing(why),
                    max_age,
                    meta: meta_of(&meta, None, None),
                }
            }
            DocumentOutcome::Unreachable {
                reason,
                retry_after,
                meta,
            } => {
                let short = matches!(reason, crate::fetch::UnreachableReason::Status(429 | 503));
                FetchResult::Unreachable {
                    retry_after,
                    short,
                    meta: meta_of(&meta, None, Some(kept_text(reason.to_string()))),
                }
            }
            DocumentOutcome::Refused { error, meta } => FetchResult::Refused {
                meta: meta_of(&meta, None, Some(kept_text(error.to_string()))),
            },
            // Documents are fetched without validators, so a 304 is no answer to them: a
            // server not answering properly.
            DocumentOutcome::NotModified { meta, .. } => FetchResult::Unreachable {
                retry_after: None,
                short: false,
                meta: meta_of(
                    &meta,
                    None,
                    Some("HTTP status 304 to an unconditional GET".into()),
                ),
            },
        }
    }
}
