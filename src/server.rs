//! Running the service: the axum app with its limits (request time limit, a concurrency limit
//! that sheds load with 503 + `Retry-After`, body size), request logs and metrics, on bound
//! listeners, with graceful shutdown: `/readyz` turns 503, no new connections are accepted, and
//! requests in flight drain within a bound. [`run`] takes bound listeners so tests can bind
//! `127.0.0.1:0`.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use utoipa_swagger_ui::SwaggerUi;

use crate::api::problem::ApiError;
use crate::api::{self, AppState, CacheResult, Shared};
use crate::cache::OriginCache;
use crate::checker::Checker;
use crate::config::Settings;
use crate::fetch::Fetcher;
use crate::metrics::Metrics;

/// Why the service could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The fetcher could not be built from the settings.
    #[error(transparent)]
    Fetcher(#[from] crate::fetch::FetcherError),
    /// Serving failed.
    #[error("server error: {0}")]
    Io(#[from] std::io::Error),
}

/// The shared state for the settings.
pub fn state(settings: &Settings) -> Result<AppState, ServeError> {
    let fetcher = Fetcher::new(settings.fetch.clone(), settings.destinations.clone())?;
    let metrics = Metrics::new();
    let observed = metrics.clone();
    let cache = OriginCache::new(settings.cache.clone(), fetcher).with_fetch_observer(Arc::new(
        move |outcome, took| observed.observe_fetch(outcome, took),
    ));
    Ok(AppState::new(Shared {
        checker: Checker::new(cache),
        metrics,
        limits: settings.limits.clone(),
        ready: Arc::new(AtomicBool::new(true)),
    }))
}

/// The public app: API, docs and OpenAPI, and the probes and metrics unless they have their
/// own listener.
pub fn app(state: AppState, with_admin: bool) -> Router {
    let api = api::api_router(state.clone());
    let limits = &state.limits;
    let guard = Guard {
        permits: Arc::new(Semaphore::new(limits.concurrency_limit)),
        time_limit: limits.request_timeout,
    };
    let api = api
        .layer(from_fn_with_state(guard, limit))
        .layer(DefaultBodyLimit::max(limits.max_body_bytes));
    let mut app = Router::new()
        .merge(api)
        .merge(SwaggerUi::new("/docs").url("/openapi.json", api::openapi()));
    if with_admin {
        app = app.merge(api::admin_router(state.clone()));
    }
    finish(app, state)
}

/// The admin app: probes and metrics only.
pub fn admin_app(state: AppState) -> Router {
    finish(api::admin_router(state.clone()), state)
}

/// Fallbacks, logs, metrics and panic handling, common to both apps.
fn finish(app: Router, state: AppState) -> Router {
    // Outermost first: metrics and the log see every response, the panic's 500 included.
    app.fallback(api::not_found)
        .method_not_allowed_fallback(api::method_not_allowed)
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(|_panic| {
            tracing::error!("a handler panicked");
            ApiError::Internal.into_response()
        }))
        .layer(from_fn_with_state(state.metrics.clone(), observe))
}

/// The API's limits, applied by one middleware (each middleware layer costs a service clone
/// per request).
#[derive(Clone)]
struct Guard {
    permits: Arc<Semaphore>,
    time_limit: Duration,
}

/// Sheds load beyond the concurrency limit with 503 + `Retry-After`, and answers 504 past the
/// request time limit.
async fn limit(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let Ok(_permit) = guard.permits.try_acquire_owned() else {
        return ApiError::Overloaded { retry_after: 1 }.into_response();
    };
    match tokio::time::timeout(guard.time_limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => ApiError::Timeout(guard.time_limit.as_secs().max(1)).into_response(),
    }
}

/// Metrics and one log line per request: route template, method, status, latency, cache result.
/// Never the query string (it holds URLs and user agents).
async fn observe(State(metrics): State<Metrics>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    // Cloning `MatchedPath` clones an `Arc`, not the path.
    let route = request.extensions().get::<MatchedPath>().cloned();
    let response = next.run(request).await;
    let route = route
        .as_ref()
        .map_or(crate::metrics::UNMATCHED_ROUTE, MatchedPath::as_str);
    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    metrics.observe_http(route, method.as_str(), status, elapsed);
    if tracing::enabled!(tracing::Level::INFO) {
        let cache = response
            .extensions()
            .get::<CacheResult>()
            .map(|c| format!("{:?}", c.0).to_lowercase());
        tracing::info!(
            route,
            method = %method,
            status,
            latency_ms = elapsed.as_secs_f64() * 1000.0,
            cache = cache.as_deref().unwrap_or("-"),
            "request"
        );
    }
    response
}

/// Serves until `shutdown` completes, then drains within `limits.shutdown_grace`.
pub async fn run(
    state: AppState,
    listener: TcpListener,
    admin: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let grace = state.limits.shutdown_grace;
    let ready = Arc::clone(&state.ready);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        // Readiness fails first, so that load balancers stop sending before the listener closes.
        ready.store(false, Ordering::Release);
        tracing::info!("shutting down: draining requests in flight");
        let _ = stop_tx.send(true);
    });
    let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|stop| *stop).await;
    };
    let main = axum::serve(listener, app(state.clone(), admin.is_none()))
        .with_graceful_shutdown(stopped(stop_rx.clone()));
    let admin_server = admin.map(|admin| {
        axum::serve(admin, admin_app(state.clone()))
            .with_graceful_shutdown(stopped(stop_rx.clone()))
    });
    let drained = async {
        match admin_server {
            Some(admin_server) => {
                let (a, b) = tokio::join!(main, admin_server);
                a.and(b)
            }
            None => main.await,
        }
    };
    let deadline = async {
        stopped(stop_rx.clone()).await;
        tokio::time::sleep(grace).await;
    };
    tokio::select! {
        result = drained => result?,
        () = deadline => tracing::warn!(grace_s = grace.as_secs_f64(), "drain bound reached: closing remaining connections"),
    }
    Ok(())
}

/// Completes on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {},
        () = terminate => {},
    }
}
