//! The probes and the metrics, and their OpenAPI descriptions (the handlers themselves are
//! plain axum routes on the admin listener).

use axum::extract::State;
use axum::http::header;
use std::sync::atomic::Ordering;

use axum::response::{IntoResponse, Response};

use super::AppState;

pub(super) async fn livez() -> &'static str {
    "ok\n"
}

pub(super) async fn readyz(State(state): State<AppState>) -> Response {
    if state.ready.load(Ordering::Acquire) {
        "ready\n".into_response()
    } else {
        (axum::http::StatusCode::SERVICE_UNAVAILABLE, "draining\n").into_response()
    }
}

pub(super) async fn metrics(State(state): State<AppState>) -> Response {
    state.metrics.refresh_pacing(state.checker.pacer());
    if let Some(licenses) = state.checker.licenses() {
        state.metrics.refresh_rsl(licenses);
    }
    if let Some(files) = &state.tdmrep {
        state.metrics.refresh_tdmrep(files);
    }
    let text = state.metrics.render(state.checker.cache()).await;
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

// The probe and metrics routes are plain axum routes (they may live on the admin listener);
// these stubs only describe them in the OpenAPI document.

/// Liveness: the process is up (`/healthz` is an alias).
#[utoipa::path(get, path = "/livez", tag = "operations", responses((status = 200, description = "Alive.", body = String, content_type = "text/plain")))]
#[allow(dead_code)]
pub(super) async fn livez_doc() {}

/// Readiness: 503 while draining for shutdown.
#[utoipa::path(get, path = "/readyz", tag = "operations", responses(
    (status = 200, description = "Ready.", body = String, content_type = "text/plain"),
    (status = 503, description = "Draining.", body = String, content_type = "text/plain")))]
#[allow(dead_code)]
pub(super) async fn readyz_doc() {}

/// Prometheus metrics (text exposition format).
#[utoipa::path(get, path = "/metrics", tag = "operations", responses((status = 200, description = "Metrics.", body = String, content_type = "text/plain")))]
#[allow(dead_code)]
pub(super) async fn metrics_doc() {}
