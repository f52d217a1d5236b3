//! JSON response bodies written straight into one buffer.
//!
//! `axum::Json` serialises into a `BytesMut` that starts at 128 bytes and grows by copying, and
//! every small write goes through its `BufMut` checks; for the ~500-byte check answer that was a
//! fifth of a cached check's instructions. Here the value is written into a `Vec` sized for a
//! typical answer, which becomes the body without a copy.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::problem::ApiError;

/// Room for a typical check answer (about 500 bytes), so most answers take one allocation.
pub const INITIAL_CAPACITY: usize = 1024;

/// A `200 OK` `application/json` response of the wrapped value.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonBody<T>(pub T);

impl<T: Serialize> IntoResponse for JsonBody<T> {
    fn into_response(self) -> Response {
        let mut body = Vec::with_capacity(INITIAL_CAPACITY);
        if let Err(error) = serde_json::to_writer(&mut body, &self.0) {
            // Only a failing `Serialize` impl gets here (writing to a Vec cannot fail), which
            // would be a bug: answer as one, not with half a document.
            tracing::error!(%error, "serialising a response failed");
            return ApiError::Internal.into_response();
        }
        response(body)
    }
}

/// A `200 OK` response with `body`, which must be a JSON document. Built by hand: axum's
/// `(headers, Vec<u8>)` sets `application/octet-stream` first and then replaces it, two header
/// writes for one.
pub fn response(body: Vec<u8>) -> Response {
    let mut response = Response::new(axum::body::Body::from(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[tokio::test]
    async fn writes_the_same_document_as_serde_json() {
        let value = serde_json::json!({"allowed": false, "url": "http://a.test/\u{e9}\"x"});
        let response = JsonBody(&value).into_response();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("body");
        assert_eq!(body, serde_json::to_vec(&value).expect("json"));
    }

    #[tokio::test]
    async fn a_failing_serialize_is_a_problem_not_half_a_document() {
        struct Broken;
        impl Serialize for Broken {
            fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(serde::ser::Error::custom("broken"))
            }
        }
        let response = JsonBody(Broken).into_response();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            super::super::problem::PROBLEM_JSON
        );
    }
}
