//! What every request passes through around the router, as one hand-written service: request
//! metrics and the log line, the request target's length limit, the body read under its own
//! deadline before anything else is taken, the concurrency limit that sheds load, the request
//! time limit, and a 500 problem instead of a dropped connection when a handler panics.
//!
//! It wraps the whole router rather than being added with `Router::layer`, which wraps every
//! route on its own: each such layer costs a boxed service clone and a boxed future per request,
//! and the three `from_fn` layers this replaces were a fifth of a cached check's instructions.
//! The price is that the router's `MatchedPath` is not known out here, so the route label comes
//! from [`RouteLabels`], built from the same lists the router is built from (see `server::app`).
//!
//! `GET /v1/check`, the hot path, goes further: the edge answers it itself through
//! [`api::check_query`], the function the router's handler calls, so it passes none of the
//! router's layers (route matching, the path and body-limit extensions, a boxed route future,
//! the compression split), which were 5,700 of a cached check's 37,400 instructions. Every limit
//! here applies to it as to any guarded route.

use std::convert::Infallible;
use std::future::Future;
use std::net::IpAddr;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, HttpBody as _};
use axum::extract::Request;
use axum::http::Method;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt as _;
use tokio::sync::Semaphore;
use tower::{Layer, Service, ServiceExt as _};

use super::body::{BodyHold, Budgets, ConnectionBodies, declared_length, read_body, unread};
use super::in_flight::InFlight;
use super::route_labels::RouteLabels;
use crate::api::problem::ApiError;
use crate::api::{self, AppState, CacheResult};
use crate::compute::Caller;
use crate::config::AccessLog;
use crate::metrics::{Metrics, RouteSeries};

/// The limits applied to the guarded routes.
#[derive(Debug, Clone)]
pub struct Guard {
    /// One place per request in flight; none left means shed.
    pub permits: Arc<InFlight>,
    /// Past this, the request is answered 504.
    pub time_limit: Duration,
    /// A request declaring a larger body (`Content-Length`) is answered 413 at once, before any
    /// of it is read and without a `100 Continue`; one sending more is answered 413 when it has.
    pub max_body_bytes: usize,
    /// The same for `POST /v1/page`, whose body carries a whole document.
    pub max_page_bytes: usize,
    /// A body must be in within this of the head: it is read before a permit is taken, so a
    /// slow sender holds a connection, never one of the permits.
    pub body_time_limit: Duration,
    /// One permit per byte of request body held, over every connection and HTTP/2 stream
    /// (`--max-body-bytes-in-flight`): a body is charged as it arrives (its whole declared
    /// length up front) until its request is answered, and one that finds too few is answered
    /// 503, so that bodies in flight never hold more than this however many streams send them.
    pub body_budget: Arc<Semaphore>,
    /// When set, a request without one of these bearer tokens is answered 401 before anything
    /// else is done for it.
    pub tokens: Option<crate::auth::TokenGate>,
}

/// The longest request target (path and query) read: room for the longest URL and `ua`
/// accepted, each percent-encoded in full (3 × (8192 + 1024) bytes), and the parameter names.
pub const MAX_TARGET_BYTES: usize = 32 * 1024;

/// A [`Layer`] adding [`Edge`].
#[derive(Clone)]
pub struct EdgeLayer {
    shared: Arc<Shared>,
}

struct Shared {
    metrics: Metrics,
    routes: RouteLabels,
    guard: Guard,
    access_log: AccessLog,
    checks: Option<AppState>,
}

impl EdgeLayer {
    /// Records into `metrics`, labels with `routes`, applies `guard` to the guarded routes, and
    /// writes an access-log line for the requests `access_log` asks for. With `checks` (the
    /// public app), it answers `GET /v1/check` itself from that state rather than passing it to
    /// the router.
    pub fn new(
        metrics: Metrics,
        routes: RouteLabels,
        guard: Guard,
        access_log: AccessLog,
        checks: Option<AppState>,
    ) -> EdgeLayer {
        EdgeLayer {
            shared: Arc::new(Shared {
                metrics,
                routes,
                guard,
                access_log,
                checks,
            }),
        }
    }
}

impl<S> Layer<S> for EdgeLayer {
    type Service = Edge<S>;

    fn layer(&self, inner: S) -> Edge<S> {
        Edge {
            inner,
            shared: Arc::clone(&self.shared),
        }
    }
}

/// The service [`EdgeLayer`] adds.
#[derive(Clone)]
pub struct Edge<S> {
    inner: S,
    shared: Arc<Shared>,
}

impl<S> Edge<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    /// The answer to `request`, with `held` dropped once it is made (the listener's mark of a
    /// request in flight). The listener hands this future to hyper as it is, which keeps it in
    /// its slot for the connection's request in flight, where a tower [`Service`] must name its
    /// future and so box it (an allocation and a free of a few kilobytes a request), and a
    /// wrapper would copy it once more.
    /// `peer` is the address of the connection the request came on, if known: the caller whose
    /// turn its compute work takes, unless it shows a token.
    pub fn answer<H: Send + 'static>(
        &self,
        request: Request,
        peer: Option<IpAddr>,
        held: H,
    ) -> impl Future<Output = Result<Response, Infallible>> + Send + 'static + use<S, H> {
        // tokio's clock (std's unless a test pauses it), so that the time limit's deadline can be
        // taken from it without a second clock read.
        let started = tokio::time::Instant::now();
        let shared = Arc::clone(&self.shared);
        let inner = self.inner.clone();
        async move {
            let id = super::request_id::request_id(request.headers());
            let (route, is_guarded, series) = shared.routes.route(request.uri().path());
            let method = request.method().clone();
            let target = request
                .uri()
                .path_and_query()
                .map_or(0, |p| p.as_str().len());
            let check = shared
                .checks
                .as_ref()
                .filter(|_| method == Method::GET && route == api::CHECK_PATH);
            let serve = async {
                if target > MAX_TARGET_BYTES {
                    let problem = ApiError::UriTooLong {
                        max: MAX_TARGET_BYTES,
                    };
                    (problem.into_response(), None)
                } else if let Some(state) = check {
                    guarded(
                        &shared.guard,
                        started,
                        request,
                        peer,
                        |request, caller| async move {
                            api::check_query(state, request.uri().query(), caller).await
                        },
                    )
                    .await
                } else if is_guarded {
                    guarded(
                        &shared.guard,
                        started,
                        request,
                        peer,
                        |mut request, caller| {
                            request.extensions_mut().insert(caller);
                            routed(inner, request)
                        },
                    )
                    .await
                } else {
                    (unguarded(inner, request).await, None)
                }
            };
            // A panic is a bug, but one request's bug: answer it and keep the connection.
            let (mut response, cache) = match AssertUnwindSafe(serve).catch_unwind().await {
                Ok(answered) => answered,
                Err(_panic) => {
                    let request_id = id.to_str().unwrap_or("-");
                    tracing::error!(route, request_id, "a handler panicked");
                    (ApiError::Internal.into_response(), None)
                }
            };
            let answered = Answered {
                route,
                series,
                method: &method,
                response: &response,
                cache,
                id: &id,
            };
            observe(&shared, &answered, started.elapsed());
            response
                .headers_mut()
                .insert(super::request_id::X_REQUEST_ID.clone(), id);
            drop(held);
            Ok(response)
        }
    }
}

/// The edge as a tower service, for callers that take one (tests, `oneshot`); the listener hands
/// [`Edge::answer`]'s future to hyper itself.
impl<S> Service<Request> for Edge<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Readiness is the inner service's business, awaited per request by `oneshot` below.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        Box::pin(self.answer(request, None, ()))
    }
}

/// The router's response, and the cache result a check's handler left in it.
async fn routed<S>(inner: S, request: Request) -> (Response, Option<CacheResult>)
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    let response = inner.oneshot(request).await.unwrap_or_else(|e| match e {});
    let cache = response.extensions().get::<CacheResult>().copied();
    (response, cache)
}

/// Serves a route outside the limits (probes, metrics, the API reference). The API reference's
/// asset server answers an unknown asset with a bare 404; it becomes the same problem as any
/// other unknown path.
async fn unguarded<S>(inner: S, request: Request) -> Response
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    let path = request.uri().path().to_owned();
    let response = inner.oneshot(request).await.unwrap_or_else(|e| match e {});
    let bare = !response
        .headers()
        .contains_key(axum::http::header::CONTENT_TYPE);
    if response.status() == axum::http::StatusCode::NOT_FOUND && bare {
        return ApiError::NotFound(path).into_response();
    }
    response
}

/// Reads the body under its deadline, then sheds load beyond the concurrency limit with 503 +
/// `Retry-After`, and answers 504 past the request time limit; `serve` answers the rest. The
/// time limit counts from `started`, when the edge took the request, for a request without a
/// body to read (a check: nothing comes between), and from the end of the body otherwise.
/// `serve` is told the request's caller: by its token when tokens are configured, else by
/// `peer`, its connection's address.
async fn guarded<F, A>(
    guard: &Guard,
    started: tokio::time::Instant,
    request: Request,
    peer: Option<IpAddr>,
    serve: F,
) -> (Response, Option<CacheResult>)
where
    F: FnOnce(Request, Caller) -> A,
    A: Future<Output = (Response, Option<CacheResult>)>,
{
    let mut token = None;
    if let Some(tokens) = &guard.tokens {
        let authorization = request.headers().get(axum::http::header::AUTHORIZATION);
        let authorization = authorization.map(|value| value.as_bytes());
        if !tokens.admits(authorization) {
            return (ApiError::Unauthorized.into_response(), None);
        }
        token = authorization;
    }
    let caller = Caller::of(token, peer);
    // Held until the request is answered: the body's bytes live that long.
    let mut held = BodyHold::default();
    // A body hyper knows to be empty (no length, or a length of 0) has nothing to limit or
    // read, and a check has none: its `Content-Length` is not looked up.
    let (request, counted_from) = if request.body().is_end_stream() {
        (request, started)
    } else {
        let max_body_bytes = if request.uri().path() == crate::api::PAGE_PATH {
            guard.max_page_bytes
        } else {
            guard.max_body_bytes
        };
        let version = request.version();
        if declared_length(&request).is_some_and(|length| length > max_body_bytes as u64) {
            let too_large = ApiError::BodyTooLarge {
                max: max_body_bytes,
            };
            return (unread(too_large, version), None);
        }
        let connection = request.extensions().get::<ConnectionBodies>().cloned();
        let budgets = Budgets {
            server: &guard.body_budget,
            connection: connection.as_ref().map(|c| &c.0),
        };
        if let Some(length) = declared_length(&request)
            && let Err(error) = held.grow(&budgets, length)
        {
            return (unread(error, version), None);
        }
        let (parts, body) = request.into_parts();
        let read = tokio::time::timeout(
            guard.body_time_limit,
            read_body(body, max_body_bytes, &budgets, &mut held),
        );
        match read.await {
            Ok(Ok(body)) => (
                Request::from_parts(parts, Body::from(body)),
                tokio::time::Instant::now(),
            ),
            Ok(Err(error)) => return (unread(error, version), None),
            Err(_) => {
                let problem = ApiError::BodyTimeout(guard.body_time_limit.as_secs().max(1));
                return (unread(problem, version), None);
            }
        }
    };
    let Some(_place) = guard.permits.try_take() else {
        return (
            ApiError::Overloaded { retry_after: 1 }.into_response(),
            None,
        );
    };
    // A limit too far ahead to add to an instant (a flag in years) is none.
    let deadline = counted_from.checked_add(guard.time_limit);
    let serving = std::pin::pin!(serve(request, caller));
    match super::deadline::within(deadline, serving).await {
        Ok(answered) => answered,
        Err(_) => {
            let problem = ApiError::Timeout(guard.time_limit.as_secs().max(1));
            (problem.into_response(), None)
        }
    }
}

/// What the log line and the metrics say of an answered request.
struct Answered<'a> {
    /// The route template, never the path.
    route: &'a str,
    /// The route's series, for one of the app's exact routes.
    series: Option<&'a RouteSeries>,
    method: &'a axum::http::Method,
    response: &'a Response,
    cache: Option<CacheResult>,
    id: &'a axum::http::HeaderValue,
}

/// Metrics for every request, and an access-log line for those the setting asks for: route
/// template, method, status, latency in whole microseconds, cache result, request id. Never the
/// query string (it holds URLs and user agents).
fn observe(shared: &Shared, answered: &Answered<'_>, elapsed: Duration) {
    let Answered {
        route,
        series,
        method,
        response,
        cache,
        id,
    } = *answered;
    let status = response.status().as_u16();
    let metrics = &shared.metrics;
    match series {
        Some(series) => metrics.observe_route(series, route, method.as_str(), status, elapsed),
        None => metrics.observe_http(route, method.as_str(), status, elapsed),
    }
    if shared.access_log.logs(status)
        && tracing::enabled!(target: "robotsd::access", tracing::Level::INFO)
    {
        let cache = cache.map(|c| c.0.as_str());
        tracing::info!(
            target: "robotsd::access",
            route,
            method = method.as_str(),
            status,
            latency_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX),
            cache = cache.unwrap_or("-"),
            request_id = id.to_str().unwrap_or("-"),
            "request"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::UNMATCHED_ROUTE;
    use axum::Router;
    use axum::body::Body;
    use axum::http::StatusCode;
    use axum::routing::get;

    fn routes() -> RouteLabels {
        RouteLabels::new()
            .exact(["/v1/slow", "/v1/fast", "/v1/panics"], true)
            .exact(["/livez"], false)
            .prefixed("/docs/", "/docs/{*rest}")
    }

    fn app(metrics: &Metrics, permits: usize, time_limit: Duration) -> Edge<Router> {
        let router = Router::new()
            .route(
                "/v1/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    "late"
                }),
            )
            .route("/v1/fast", get(|| async { "ok" }))
            .route("/livez", get(|| async { "ok" }))
            .route(
                "/v1/panics",
                get(|| async {
                    if true {
                        panic!("a bug");
                    }
                    "unreachable"
                }),
            )
            .route("/docs/{*rest}", get(|| async { "page" }));
        EdgeLayer::new(
            metrics.clone(),
            routes(),
            Guard {
                permits: Arc::new(InFlight::new(permits)),
                time_limit,
                max_body_bytes: 1024,
                max_page_bytes: 4096,
                body_time_limit: Duration::from_secs(1),
                body_budget: Arc::new(Semaphore::new(1 << 20)),
                tokens: None,
            },
            AccessLog::All,
            None,
        )
        .layer(router)
    }

    fn get_request(uri: &str) -> Request {
        axum::http::Request::builder()
            .uri(uri)
            .body(Body::empty())
            .expect("request")
    }

    async fn metrics_text(metrics: &Metrics) -> String {
        let fetcher = crate::fetch::Fetcher::new(
            crate::fetch::FetchConfig::default(),
            crate::destination::DestinationPolicy::default(),
        )
        .expect("fetcher");
        let cache = crate::cache::OriginCache::new(crate::cache::CacheConfig::default(), fetcher);
        metrics.render(&cache).await
    }

    #[test]
    fn labels_are_routes_or_unmatched_never_the_path() {
        assert_eq!(routes().label("/v1/fast"), "/v1/fast");
        assert_eq!(routes().label("/docs/swagger-ui.css"), "/docs/{*rest}");
        for path in [
            "/v1/fast/",
            "/v1/fas",
            "/V1/fast",
            "/v1/%66ast",
            "/secret.example/x",
        ] {
            assert_eq!(routes().label(path), UNMATCHED_ROUTE, "{path}");
        }
    }

    #[tokio::test]
    async fn records_each_request_under_its_route() {
        let metrics = Metrics::new();
        let app = app(&metrics, 10, Duration::from_secs(5));
        for uri in [
            "/v1/fast?url=https://secret.example/x",
            "/docs/a.css",
            "/nope/123",
        ] {
            app.clone()
                .oneshot(get_request(uri))
                .await
                .expect("infallible");
        }
        let text = metrics_text(&metrics).await;
        for line in [
            r#"robotsd_http_requests_total{method="GET",route="/v1/fast",status="200"} 1"#,
            r#"robotsd_http_requests_total{method="GET",route="/docs/{*rest}",status="200"} 1"#,
            r#"robotsd_http_requests_total{method="GET",route="unmatched",status="404"} 1"#,
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line}:\n{text}");
        }
        assert!(
            !text.contains("secret.example") && !text.contains("123\""),
            "{text}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn sheds_beyond_the_limit_and_times_out_guarded_routes_only() {
        let metrics = Metrics::new();
        let app = app(&metrics, 1, Duration::from_secs(2));
        let slow = tokio::spawn(app.clone().oneshot(get_request("/v1/slow")));
        // Let the slow request take the only permit.
        tokio::task::yield_now().await;
        let shed = app.clone().oneshot(get_request("/v1/fast")).await.unwrap();
        assert_eq!(shed.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(shed.headers()["retry-after"], "1");
        // Probes are never shed.
        let probe = app.clone().oneshot(get_request("/livez")).await.unwrap();
        assert_eq!(probe.status(), StatusCode::OK);

        let timed_out = slow.await.unwrap().unwrap();
        assert_eq!(timed_out.status(), StatusCode::GATEWAY_TIMEOUT);
        // The permit came back with the timed-out request.
        let after = app.oneshot(get_request("/v1/fast")).await.unwrap();
        assert_eq!(after.status(), StatusCode::OK);
        let text = metrics_text(&metrics).await;
        assert!(
            text.contains(
                r#"robotsd_http_requests_total{method="GET",route="/v1/slow",status="504"} 1"#
            ),
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_panic_is_a_500_problem_and_is_counted() {
        let metrics = Metrics::new();
        let app = app(&metrics, 1, Duration::from_secs(5));
        let response = app
            .clone()
            .oneshot(get_request("/v1/panics"))
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            response.headers()["content-type"],
            crate::api::problem::PROBLEM_JSON
        );
        // The panicking request gave its permit back.
        let after = app.oneshot(get_request("/v1/fast")).await.unwrap();
        assert_eq!(after.status(), StatusCode::OK);
        let text = metrics_text(&metrics).await;
        assert!(
            text.contains(
                r#"robotsd_http_requests_total{method="GET",route="/v1/panics",status="500"} 1"#
            ),
            "{text}"
        );
    }
}
