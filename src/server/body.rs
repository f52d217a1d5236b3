//! A request's body, read before the request takes a permit: under its size limit, and within
//! the byte budget shared by every body in flight (`--max-body-bytes-in-flight`), so that the
//! memory bodies hold follows from that number rather than from connections × HTTP/2 streams ×
//! the body limit.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Version, header};
use axum::response::{IntoResponse as _, Response};
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt as _;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::api::problem::ApiError;

/// The whole of `body`, if it is at most `max` bytes, arrives, and finds room in `budget` as
/// it does (`held` grows with it).
pub(super) async fn read_body(
    body: Body,
    max: usize,
    budget: &Arc<Semaphore>,
    held: &mut BodyHold,
) -> Result<Bytes, ApiError> {
    let mut stream = body.into_data_stream();
    let mut read = BytesMut::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            ApiError::InvalidBody(format!("the request body could not be read: {e}"))
        })?;
        let len = read.len() + chunk.len();
        if len > max {
            return Err(ApiError::BodyTooLarge { max });
        }
        held.grow(budget, len as u64)?;
        read.extend_from_slice(&chunk);
    }
    Ok(read.freeze())
}

/// The bytes of the body budget one request holds.
#[derive(Default)]
pub(super) struct BodyHold {
    permit: Option<OwnedSemaphorePermit>,
}

impl BodyHold {
    /// Holds `bytes` in all, taking what is missing from `budget` without waiting: a body
    /// that finds the budget spent is answered at once, so that a slow one never waits on
    /// others' (and its connection on it).
    pub(super) fn grow(&mut self, budget: &Arc<Semaphore>, bytes: u64) -> Result<(), ApiError> {
        let held = self.permit.as_ref().map_or(0, |p| p.num_permits() as u64);
        if bytes <= held {
            return Ok(());
        }
        let spent = ApiError::BodiesInFlight { retry_after: 1 };
        // Bodies are at most a few MiB, far below u32::MAX; a larger count cannot fit anyway.
        let more = u32::try_from(bytes - held).map_err(|_| spent.clone())?;
        let permit = Arc::clone(budget)
            .try_acquire_many_owned(more)
            .map_err(|_| spent)?;
        match &mut self.permit {
            Some(held) => held.merge(permit),
            None => self.permit = Some(permit),
        }
        Ok(())
    }
}

/// The answer to a request whose body was not read whole (refused from its declared length, or
/// past the limit, the budget or the time as it arrived): the rest of the body cannot be told
/// from a next request, so the connection closes after the answer, and over HTTP/1 the answer
/// says so (`Connection: close`, RFC 9112 §9.6). Without it, a client that had sent the whole
/// body took the connection as kept alive, and its next request failed on it (found by the
/// request fuzzer). An HTTP/2 stream ends alone and takes no such header.
pub(super) fn unread(error: ApiError, version: Version) -> Response {
    let mut response = error.into_response();
    if version <= Version::HTTP_11 {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// The body length a request declares, if it declares one that parses.
pub(super) fn declared_length(request: &Request) -> Option<u64> {
    request
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}
