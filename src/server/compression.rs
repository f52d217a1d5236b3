//! Compression of the API's larger answers and of request bodies, through tower-http.
//!
//! Answers over 1 KiB (batches, `/v1/robots`, evaluations) are compressed when the client
//! accepts gzip, br or zstd, and request bodies may come in those encodings (their decoded size
//! is held to `--max-body-bytes` like any body). A single check's answer is smaller than that,
//! and `GET /v1/check` never reaches these layers: the edge answers it without the router (see
//! `server::edge`). Wrapping it in them measured 8,000 of a cached check's 41,000 instructions,
//! to compress nothing.

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::{NotForContentType, Predicate as _, SizeAbove};
use tower_http::decompression::{DecompressionBody, RequestDecompressionLayer};

/// The smallest answer worth compressing.
const MIN_COMPRESSED_BYTES: u16 = 1024;

/// `inner` with compression of answers and decompression of request bodies.
pub fn compressed<S>(inner: S) -> impl super::Routes
where
    S: super::Routes,
{
    tower::ServiceBuilder::new()
        .map_response(into_body)
        // An encoding it cannot decode passes through, to be refused as a problem by the API.
        .layer(RequestDecompressionLayer::new().pass_through_unaccepted(true))
        .layer(
            CompressionLayer::new().compress_when(
                SizeAbove::new(MIN_COMPRESSED_BYTES)
                    // Its Content-Digest and signatures are over the bytes as written.
                    .and(NotForContentType::const_new(
                        crate::api::directory::CONTENT_TYPE,
                    )),
            ),
        )
        .map_request(|request: Request<DecompressionBody<Body>>| request.map(Body::new))
        .service(inner)
}

/// A response with the API's body type, whatever body the layers gave it.
fn into_body<R>(response: axum::http::Response<R>) -> Response
where
    R: axum::body::HttpBody<Data = bytes::Bytes> + Send + 'static,
    R::Error: Into<axum::BoxError>,
{
    response.map(Body::new)
}
