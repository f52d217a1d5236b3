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

/// The share of the body budget an HTTP/2 connection's streams hold together
/// (`ConnectionLimits::http2_body_bytes_per_connection`), put on each of its requests by the
/// listener. HTTP/1 carries one request at a time, so its connections need none.
#[derive(Clone)]
pub(crate) struct ConnectionBodies(pub(crate) Arc<Semaphore>);

/// The budgets a body's bytes are taken from: the server's, and its connection's share, if any.
pub(super) struct Budgets<'a> {
    /// Every body in flight (`--max-body-bytes-in-flight`).
    pub(super) server: &'a Arc<Semaphore>,
    /// The bodies of one HTTP/2 connection's streams.
    pub(super) connection: Option<&'a Arc<Semaphore>>,
}

/// The whole of `body`, if it is at most `max` bytes, arrives, and finds room in `budgets` as
/// it does (`held` grows with it).
pub(super) async fn read_body(
    body: Body,
    max: usize,
    budgets: &Budgets<'_>,
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
        held.grow(budgets, len as u64)?;
        read.extend_from_slice(&chunk);
    }
    Ok(read.freeze())
}

/// The bytes of the body budgets one request holds.
#[derive(Default)]
pub(super) struct BodyHold {
    server: Option<OwnedSemaphorePermit>,
    connection: Option<OwnedSemaphorePermit>,
}

impl BodyHold {
    /// Holds `bytes` in all, taking what is missing from each budget without waiting: a body
    /// that finds one spent is answered at once, so that a slow one never waits on others'
    /// (and its connection on it).
    pub(super) fn grow(&mut self, budgets: &Budgets<'_>, bytes: u64) -> Result<(), ApiError> {
        if let Some(connection) = budgets.connection {
            take(&mut self.connection, connection, bytes)?;
        }
        take(&mut self.server, budgets.server, bytes)
    }
}

/// Grows `held` to `bytes` permits of `budget`, or fails with nothing more taken.
fn take(
    held: &mut Option<OwnedSemaphorePermit>,
    budget: &Arc<Semaphore>,
    bytes: u64,
) -> Result<(), ApiError> {
    let have = held.as_ref().map_or(0, |p| p.num_permits() as u64);
    if bytes <= have {
        return Ok(());
    }
    let spent = ApiError::BodiesInFlight { retry_after: 1 };
    // Bodies are at most a few MiB, far below u32::MAX; a larger count cannot fit anyway.
    let more = u32::try_from(bytes - have).map_err(|_| spent.clone())?;
    let permit = Arc::clone(budget)
        .try_acquire_many_owned(more)
        .map_err(|_| spent)?;
    match held {
        Some(held) => held.merge(permit),
        None => *held = Some(permit),
    }
    Ok(())
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
