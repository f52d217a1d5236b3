//! The caller whose turn a request's compute work takes, as the edge found it.

use std::convert::Infallible;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use crate::compute::Caller;

/// The request's [`Caller`], which the edge puts in its extensions (by token, else by address);
/// [`Caller::Unknown`] for a request that did not pass the edge.
pub(super) struct CallerOf(pub Caller);

impl<S: Send + Sync> FromRequestParts<S> for CallerOf {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Infallible> {
        Ok(CallerOf(
            parts
                .extensions
                .get::<Caller>()
                .copied()
                .unwrap_or_default(),
        ))
    }
}
