//! Compression of the API's larger answers and of request bodies, through tower-http, kept off
//! the hot path.
//!
//! Answers over 1 KiB (batches, `/v1/robots`, evaluations) are compressed when the client
//! accepts gzip, br or zstd, and request bodies may come in those encodings (their decoded size
//! is held to `--max-body-bytes` like any body). A single check's answer is smaller than that, so
//! `GET /v1/check` bypasses both layers: wrapping every request in them measured 8,000 of a cached
//! check's 41,000 instructions, to compress nothing.

use std::convert::Infallible;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::http::Method;
use axum::response::Response;
use futures_util::future::Either;
use tower::Service;
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::SizeAbove;
use tower_http::decompression::{DecompressionBody, RequestDecompressionLayer};

/// The smallest answer worth compressing.
const MIN_COMPRESSED_BYTES: u16 = 1024;

/// The route whose answers are never compressed: a single check's.
const PLAIN: (Method, &str) = (Method::GET, "/v1/check");

/// `inner` with compression on every request but a single check.
pub fn compressed<S>(inner: S) -> Split<S, impl super::App>
where
    S: super::App,
{
    let compressed = tower::ServiceBuilder::new()
        .map_response(into_body)
        // An encoding it cannot decode passes through, to be refused as a problem by the API.
        .layer(RequestDecompressionLayer::new().pass_through_unaccepted(true))
        .layer(CompressionLayer::new().compress_when(SizeAbove::new(MIN_COMPRESSED_BYTES)))
        .map_request(|request: Request<DecompressionBody<Body>>| request.map(Body::new))
        .service(inner.clone());
    Split {
        plain: inner,
        compressed,
    }
}

/// A response with the API's body type, whatever body the layers gave it.
fn into_body<R>(response: axum::http::Response<R>) -> Response
where
    R: axum::body::HttpBody<Data = bytes::Bytes> + Send + 'static,
    R::Error: Into<axum::BoxError>,
{
    response.map(Body::new)
}

/// Sends a single check to `plain` and everything else to `compressed`.
#[derive(Clone)]
pub struct Split<P, C> {
    plain: P,
    compressed: C,
}

impl<P, C> Service<Request> for Split<P, C>
where
    P: Service<Request, Response = Response, Error = Infallible> + Clone,
    C: Service<Request, Response = Response, Error = Infallible> + Clone,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<P::Future, C::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Both are routers under layers that are always ready; asked anyway, as `call` needs.
        std::task::ready!(self.plain.poll_ready(cx))?;
        self.compressed.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if request.method() == PLAIN.0 && request.uri().path() == PLAIN.1 {
            Either::Left(self.plain.call(request))
        } else {
            Either::Right(self.compressed.call(request))
        }
    }
}
