//! The problems the edge and the body readers answer before a handler runs, described once for
//! the OpenAPI document: each route lists them among its responses.

use super::Problem;

/// What the server's edge may answer on any API route before (or instead of) its handler; each
/// route's OpenAPI responses include these.
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)] // Only its OpenAPI description is used.
pub enum EdgeProblems {
    /// 414 `uri-too-long`.
    #[response(
        status = 414,
        description = "The request target is longer than 32 KiB.",
        content_type = "application/problem+json"
    )]
    UriTooLong(Problem),
    /// 431 `headers-too-large`.
    #[response(
        status = 431,
        description = "The request head is larger than --max-header-bytes, or has more than 100 header fields.",
        content_type = "application/problem+json"
    )]
    HeadTooLarge(Problem),
    /// 503 `overloaded`, `bodies-in-flight` or `connection-limit`.
    #[response(
        status = 503,
        description = "At the concurrency limit (overloaded), the bytes of request bodies in flight (bodies-in-flight: --max-body-bytes-in-flight) or the connection limit, or (on checks) the origin's robots.txt was dropped from a full cache right after its fetch (cache-full); retry after the Retry-After header.",
        content_type = "application/problem+json"
    )]
    Unavailable(Problem),
    /// 401 `unauthorized`.
    #[response(
        status = 401,
        description = "With --api-token-file: no `Authorization: Bearer` header with one of its tokens.",
        content_type = "application/problem+json"
    )]
    Unauthorized(Problem),
    /// 504 `timeout`.
    #[response(
        status = 504,
        description = "The request took longer than the request time limit.",
        content_type = "application/problem+json"
    )]
    Timeout(Problem),
}

/// What the edge may answer on the API routes that take a body, besides [`EdgeProblems`].
#[derive(utoipa::IntoResponses)]
#[allow(dead_code)] // Only its OpenAPI description is used.
pub enum BodyProblems {
    /// 408 `body-timeout`.
    #[response(
        status = 408,
        description = "The body did not arrive within the body-read time limit.",
        content_type = "application/problem+json"
    )]
    BodyTimeout(Problem),
    /// 413 `body-too-large`, `batch-too-large` or `too-much-work`.
    #[response(
        status = 413,
        description = "Too many items, too large a body, or more work than one request may ask (items × agents × rules, --max-request-work).",
        content_type = "application/problem+json"
    )]
    TooLarge(Problem),
}
