//! Running the service: the axum app with its limits (request time limit, a concurrency limit
//! that sheds load with 503 + `Retry-After`, body size and body-read deadline), request logs and
//! metrics, on bound listeners with their connection limits ([`listener`]), with graceful
//! shutdown: `/readyz` turns 503, no new connections are accepted, and requests in flight drain
//! within a bound. [`run`] takes bound listeners so tests can bind `127.0.0.1:0`.

mod body;
mod compression;
mod connection;
mod deadline;
mod edge;
mod head_errors;
mod in_flight;
pub mod listener;
mod request_id;
mod route_labels;

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::response::Response;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower::Service;
use utoipa_swagger_ui::SwaggerUi;

use crate::api::{self, AppState, Shared};
use crate::cache::OriginCache;
use crate::checker::Checker;
use crate::clock::{Clock, TokioClock};
use crate::config::Settings;
use crate::dns::{Dns, DnsError};
use crate::documents::DocumentCache;
use crate::fetch::Fetcher;
use crate::fetch_runtime::FetchRuntime;
use crate::metrics::{Metrics, SignatureOf};
use crate::pace_policy::FleetShare;
use crate::pacing::{PaceKey, Pacer};
use crate::rsl::{LicenseCache, Licenses};
use crate::store::{RedisStore, Store};
use crate::tdmrep::{TdmRep, TdmRepFiles};
use edge::{EdgeLayer, Guard};
use in_flight::InFlight;
use listener::{ADMIN_MAX_CONNECTIONS, ListenerConfig};
use route_labels::RouteLabels;

/// Why the service could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The fetcher could not be built from the settings.
    #[error(transparent)]
    Fetcher(#[from] crate::fetch::FetcherError),
    /// The shared store could not be set up from the settings.
    #[error(transparent)]
    Store(#[from] crate::store::RedisStoreError),
    /// The DNS resolver could not be set up from the settings.
    #[error(transparent)]
    Dns(#[from] crate::dns::DnsError),
    /// The Web Bot Auth signer could not be set up from the settings.
    #[error(transparent)]
    BotAuth(#[from] crate::bot_auth::BotAuthError),
    /// Serving failed.
    #[error("server error: {0}")]
    Io(#[from] std::io::Error),
}

/// The shared state for the settings, fetching on the runtime of the check that needs a fetch.
pub fn state(settings: &Settings) -> Result<AppState, ServeError> {
    state_with_clock(settings, Arc::new(TokioClock::new()))
}

/// The shared state for the settings, fetching on `fetches` (the service's fetch threads).
pub fn state_fetching_on(
    settings: &Settings,
    fetches: FetchRuntime,
) -> Result<AppState, ServeError> {
    build_state(settings, Arc::new(TokioClock::new()), fetches)
}

/// The shared state for the settings, on `clock` (tests move one by hand).
pub fn state_with_clock(
    settings: &Settings,
    clock: Arc<dyn Clock>,
) -> Result<AppState, ServeError> {
    build_state(settings, clock, FetchRuntime::caller())
}

/// The fetcher, resolving names as `--dns-server`, `--dns-cache-entries` and
/// `--system-resolver` say. Without `--dns-server`, a machine whose /etc/resolv.conf names no
/// server still fetches, through the C library's resolver, and says so at start.
fn fetcher(settings: &Settings) -> Result<Fetcher, ServeError> {
    let (fetch, destinations) = (settings.fetch.clone(), settings.destinations.clone());
    match Dns::new(&settings.dns) {
        Ok(Some(dns)) => {
            let lookup = dns.vetted_by(destinations.clone()).name_lookup();
            Ok(Fetcher::with_name_lookup(fetch, destinations, lookup)?)
        }
        Ok(None) => Ok(Fetcher::new(fetch, destinations)?),
        Err(error @ DnsError::SystemConfig(_)) => {
            tracing::warn!(%error, "resolving host names with the C library's getaddrinfo");
            Ok(Fetcher::new(fetch, destinations)?)
        }
        Err(error) => Err(error.into()),
    }
}

fn build_state(
    settings: &Settings,
    clock: Arc<dyn Clock>,
    fetches: FetchRuntime,
) -> Result<AppState, ServeError> {
    let metrics = Metrics::new();
    let signing = signing(settings, Arc::clone(&clock))?;
    let mut fetcher = fetcher(settings)?;
    if let Some(signing) = &signing {
        let observed = metrics.clone();
        fetcher = fetcher.with_signing(
            Arc::clone(signing),
            Arc::new(move |kid| observed.observe_signature(kid, SignatureOf::Fetch)),
        );
    }
    if settings.pacing.key == PaceKey::Address && settings.fetch.proxy.is_some() {
        // Said once at start: the answers' `pace.lane` (`host:…`) says it for every check.
        tracing::warn!(
            "--pace-key address through --proxy: robotsd connects to the proxy, never learns the \
             servers' addresses, and paces by host"
        );
    }
    let observed = metrics.clone();
    let mut cache = OriginCache::with_clock(settings.cache.clone(), fetcher, Arc::clone(&clock))
        .with_fetch_observer(Arc::new(move |outcome, took, challenge| {
            observed.observe_fetch(outcome, took);
            if let Some(found) = challenge {
                observed.observe_challenge(found.vendor);
            }
        }))
        .with_fetch_runtime(fetches.clone());
    let observed = metrics.clone();
    let mut pacer = Pacer::new(
        settings.pacing.policy.clone(),
        settings.pacing.capacity_bytes,
        Arc::clone(&clock),
    )
    .with_key(settings.pacing.key)
    .with_share(settings.pacing.fleet)
    .with_observer(Arc::new(move |event| observed.observe_pace(event)));
    log_pacing(settings.pacing.fleet, settings.store.is_some());
    let mut shared = None;
    if let Some(config) = &settings.store {
        // Nothing is waited for here (a Sentinel lookup starts in the background): robotsd
        // starts, and answers, with the store down.
        let redis = RedisStore::new(config.redis.clone())?;
        let observed = metrics.clone();
        let store = Store::new(Arc::new(redis), config.settings.clone(), clock).with_observer(
            Arc::new(move |op, outcome, took| observed.observe_store(op, outcome, took)),
        );
        // One store, one breaker: pacing and the cache see the store's health alike.
        pacer = pacer.with_store(store.clone()).start_lending();
        shared = Some((store.clone(), config.fleet.clone()));
        cache = cache.with_store(store, config.fleet.clone());
    }
    let licenses = settings.rsl.enabled.then(|| {
        // The robots.txt fetcher itself: the same destination policy, limits and user agent.
        let mut licenses = LicenseCache::new(
            settings.rsl.capacity_bytes,
            cache.fetcher().clone(),
            settings.cache.policy.clone(),
            Arc::clone(cache.clock()),
        )
        .with_fetch_runtime(fetches.clone());
        if let Some((store, fleet)) = shared.clone() {
            licenses = licenses.with_store(store, fleet);
        }
        Licenses::new(licenses)
    });
    let tdmrep = settings.tdmrep.enabled.then(|| {
        // The robots.txt fetcher and cache policy, as for licenses.
        let mut files = DocumentCache::<TdmRep>::new(
            settings.tdmrep.capacity_bytes,
            cache.fetcher().clone(),
            settings.cache.policy.clone(),
            Arc::clone(cache.clock()),
        )
        .with_fetch_runtime(fetches);
        if let Some((store, fleet)) = shared {
            files = files.with_store(store, fleet);
        }
        TdmRepFiles::new(files)
    });
    let mut checker = Checker::new(cache)
        .with_percent_decoding(settings.percent_decoding)
        .with_pacer(pacer);
    if let Some(licenses) = licenses {
        checker = checker.with_licenses(licenses);
    }
    Ok(AppState::new(Shared {
        checker,
        metrics,
        limits: settings.limits.clone(),
        connections: settings.connections.clone(),
        access_log: settings.log.access,
        api_tokens: settings.api_tokens.clone().map(crate::auth::TokenGate::new),
        ready: Arc::new(AtomicBool::new(true)),
        ui: settings.ui,
        tdmrep,
        signing,
    }))
}

/// The fleet's signer, with `--wba-keys`; said once at start, with a warning when anyone who
/// reaches the API could have requests signed.
fn signing(
    settings: &Settings,
    clock: Arc<dyn Clock>,
) -> Result<Option<Arc<crate::bot_auth::signing::Signing>>, ServeError> {
    let Some(bot_auth) = &settings.bot_auth else {
        return Ok(None);
    };
    let signing = crate::bot_auth::signing::Signing::new(
        Arc::clone(&bot_auth.keys),
        Some(bot_auth.file.clone()),
        &bot_auth.agent,
        bot_auth.ttl,
        clock,
    )?
    .with_card(bot_auth.product_token.clone(), bot_auth.contact.clone());
    tracing::info!(
        agent = signing.agent(),
        key = %signing.active_kid(),
        keys = bot_auth.keys.keys().len(),
        ttl_s = bot_auth.ttl.as_secs(),
        product_token = bot_auth.product_token.as_deref().unwrap_or("-"),
        "Web Bot Auth: signing allowed requests on request (sign=GET)"
    );
    if settings.api_tokens.is_none() {
        tracing::warn!(
            "Web Bot Auth without --api-token-file: anyone who reaches the API can have requests \
             signed with the fleet's key"
        );
    }
    Ok(Some(Arc::new(signing)))
}

/// Says once at start who decides the fetch slots and what this replica keeps when it decides
/// alone, so that a fleet pacing each replica at a site's whole rate is never silent.
fn log_pacing(fleet: FleetShare, store: bool) {
    let (size, index) = (fleet.size(), fleet.index());
    let index_field = index.map_or(-1, i64::from);
    match (store, size) {
        (true, 1) => tracing::warn!(
            fleet_size = size,
            fleet_index = index_field,
            decided_by = "store",
            "pacing: slots are decided by the shared store for the whole fleet; while it is down \
             or refusing, this replica decides alone at each site's whole rate (--fleet-size 1): \
             if it is one of several replicas, set --fleet-size to their number"
        ),
        (true, _) => tracing::info!(
            fleet_size = size,
            fleet_index = index_field,
            decided_by = "store",
            "pacing: slots are decided by the shared store for the whole fleet; while it is down \
             or refusing, this replica decides alone at 1/{size} of each site's rate"
        ),
        (false, 1) => tracing::info!(
            fleet_size = size,
            fleet_index = index_field,
            decided_by = "alone",
            "pacing: no shared store: this replica decides every slot alone, at each site's \
             whole rate (--fleet-size 1): run more replicas only with --fleet-size set to their \
             number, or with a shared store"
        ),
        (false, _) => tracing::info!(
            fleet_size = size,
            fleet_index = index_field,
            decided_by = "alone",
            "pacing: no shared store: this replica decides every slot alone, at 1/{size} of \
             each site's rate"
        ),
    }
    if size > 1 && index.is_none() {
        tracing::warn!(
            fleet_size = size,
            "pacing: --fleet-index is not set: replicas deciding alone keep each site's rate \
             together, but two of them may fetch within one interval of each other; give each \
             replica its own index, 0 to {}",
            size - 1
        );
    }
}

/// Where the API reference is served, and its OpenAPI document.
const DOCS: &str = "/docs";
const OPENAPI_JSON: &str = "/openapi.json";

/// The public router and its route labels, built from the same lists: the API's registration
/// (its OpenAPI paths), the API reference's paths, and the probes' when they share the listener.
fn public_routes(state: &AppState, with_admin: bool) -> (Router, RouteLabels) {
    let (api, api_paths) = api::api_router(state.clone());
    let mut router = Router::new()
        .merge(api)
        .merge(SwaggerUi::new(DOCS).url(OPENAPI_JSON, api::openapi()));
    let docs_prefix = format!("{DOCS}/");
    let mut labels = RouteLabels::new()
        .exact(api_paths, true)
        .exact([OPENAPI_JSON, DOCS, &docs_prefix], false)
        // SwaggerUi serves its assets under the prefix.
        .prefixed(&docs_prefix, &format!("{DOCS}/{{*rest}}"));
    if let Some((identity, paths)) = api::identity_router(state) {
        router = router.merge(identity);
        labels = labels.exact(paths, false);
    }
    if state.ui {
        router = router.merge(crate::ui::router());
        labels = labels.exact(crate::ui::PATHS, false);
    }
    if with_admin {
        router = router.merge(api::admin_router(state.clone()));
        labels = labels.exact(api::ADMIN_PATHS, false);
    }
    (router, labels)
}

/// The routes behind the edge: the router with its layers, as a tower service.
pub trait Routes:
    Service<Request, Response = Response, Error = Infallible, Future: Send + 'static>
    + Clone
    + Send
    + 'static
{
}

impl<S> Routes for S where
    S: Service<Request, Response = Response, Error = Infallible, Future: Send + 'static>
        + Clone
        + Send
        + 'static
{
}

/// A served app: what [`run`] serves on each connection. It is a tower service too, but the
/// listener calls [`App::answer`], whose future it need not box.
pub trait App: Routes {
    /// The answer to `request`, which came on a connection from `peer`, with `held` dropped
    /// once it is made.
    fn answer<H: Send + 'static>(
        &self,
        request: Request,
        peer: Option<std::net::IpAddr>,
        held: H,
    ) -> impl Future<Output = Result<Response, Infallible>> + Send + 'static + use<Self, H>;
}

impl<S: Routes> App for edge::Edge<S> {
    fn answer<H: Send + 'static>(
        &self,
        request: Request,
        peer: Option<std::net::IpAddr>,
        held: H,
    ) -> impl Future<Output = Result<Response, Infallible>> + Send + 'static + use<S, H> {
        edge::Edge::answer(self, request, peer, held)
    }
}

/// The public app: API, docs and OpenAPI, and the probes and metrics unless they have their
/// own listener.
pub fn app(state: AppState, with_admin: bool) -> impl App + use<> {
    let limits = &state.limits;
    let guard = Guard {
        permits: Arc::new(InFlight::new(limits.concurrency_limit)),
        time_limit: limits.request_timeout,
        max_body_bytes: limits.max_body_bytes,
        max_page_bytes: limits.max_page_bytes,
        body_time_limit: state.connections.body_read_timeout,
        body_budget: Arc::new(Semaphore::new(
            // Past the semaphore's most permits is no bound worth keeping anyway.
            state
                .connections
                .max_body_bytes_in_flight
                .min(Semaphore::MAX_PERMITS),
        )),
        tokens: state.api_tokens.clone(),
    };
    let (router, labels) = public_routes(&state, with_admin);
    let inner = compression::compressed(routed(router, &state));
    let edge = edge_layer(&state, labels, guard, Some(state.clone()));
    tower::ServiceBuilder::new().layer(edge).service(inner)
}

/// The admin app: probes and metrics only.
pub fn admin_app(state: AppState) -> impl App + use<> {
    // Nothing is guarded here, so the guard is never used.
    let guard = Guard {
        permits: Arc::new(InFlight::new(0)),
        time_limit: state.limits.request_timeout,
        max_body_bytes: state.limits.max_body_bytes,
        max_page_bytes: state.limits.max_page_bytes,
        body_time_limit: state.connections.body_read_timeout,
        body_budget: Arc::new(Semaphore::new(0)),
        tokens: None,
    };
    let labels = RouteLabels::new().exact(api::ADMIN_PATHS, false);
    let inner = routed(api::admin_router(state.clone()), &state);
    let edge = edge_layer(&state, labels, guard, None);
    tower::ServiceBuilder::new().layer(edge).service(inner)
}

/// The router with its fallbacks and the body limit.
fn routed(router: Router, state: &AppState) -> impl Routes + use<> {
    let router = router
        .fallback(api::not_found)
        .method_not_allowed_fallback(api::method_not_allowed);
    tower::ServiceBuilder::new()
        .layer(DefaultBodyLimit::max(state.limits.max_body_bytes))
        .service(router)
}

/// The edge (limits, panics, metrics, logs), common to both apps, answering checks itself with
/// `checks`. It wraps the router as a whole: see [`edge`] for why.
fn edge_layer(
    state: &AppState,
    routes: RouteLabels,
    guard: Guard,
    checks: Option<AppState>,
) -> EdgeLayer {
    EdgeLayer::new(
        state.metrics.clone(),
        routes,
        guard,
        state.access_log,
        checks,
    )
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
    let api_limits = &state.connections;
    let open_files = listener::open_file_limit();
    let cap = listener::connection_cap(api_limits.max_connections, open_files);
    if cap < api_limits.max_connections {
        tracing::warn!(
            max_connections = api_limits.max_connections,
            open_file_limit = open_files.unwrap_or_default(),
            cap,
            "--max-connections lowered to fit the open-file limit (raise `ulimit -n` to keep it)"
        );
    }
    // The admin listener outlives the API's drain, so that `/readyz` answers 503 meanwhile and
    // load balancers and the kubelet see the drain rather than a closed port.
    let (api_drained, admin_stop) = tokio::sync::oneshot::channel::<()>();
    let main = listener::serve(
        listener,
        app(state.clone(), admin.is_none()),
        ListenerConfig {
            limits: crate::config::ConnectionLimits {
                max_connections: cap,
                ..api_limits.clone()
            },
            metrics: state.metrics.connections("api"),
        },
        stopped(stop_rx.clone()),
    );
    let main = async move {
        main.await;
        let _ = api_drained.send(());
    };
    let admin_server = admin.map(|admin| {
        listener::serve(
            admin,
            admin_app(state.clone()),
            ListenerConfig {
                limits: crate::config::ConnectionLimits {
                    max_connections: ADMIN_MAX_CONNECTIONS,
                    ..api_limits.clone()
                },
                metrics: state.metrics.connections("admin"),
            },
            async move {
                let _ = admin_stop.await;
            },
        )
    });
    let drained = async {
        match admin_server {
            Some(admin_server) => {
                tokio::join!(main, admin_server);
            }
            None => main.await,
        }
    };
    let deadline = async {
        stopped(stop_rx.clone()).await;
        tokio::time::sleep(grace).await;
    };
    tokio::select! {
        () = drained => {},
        () = deadline => tracing::warn!(
            grace = %humantime::format_duration(grace),
            "drain bound reached: closing remaining connections"
        ),
    }
    Ok(())
}

/// Reloads, on each SIGHUP, what can be reloaded without a restart: the API token file
/// (`--api-token-file`). The handler is installed when this is called, before the returned
/// future first runs: without one, a SIGHUP would end the process without a log line.
pub fn reload_on_hangup(
    tokens: Option<crate::auth::TokenGate>,
    signing: Option<Arc<crate::bot_auth::signing::Signing>>,
) -> impl std::future::Future<Output = ()> + Send {
    #[cfg(unix)]
    let hangups = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
    async move {
        #[cfg(unix)]
        if let Some(mut hangups) = hangups {
            while hangups.recv().await.is_some() {
                reload(tokens.as_ref());
                if let Some(signing) = &signing {
                    reload_keys(signing);
                }
            }
        }
        #[cfg(not(unix))]
        let _ = (tokens, signing);
    }
}

/// What one SIGHUP does, said in the log either way.
fn reload(tokens: Option<&crate::auth::TokenGate>) {
    use crate::auth::Reloaded;
    let Some(gate) = tokens else {
        tracing::info!("SIGHUP: nothing to reload (no --api-token-file)");
        return;
    };
    let file = gate.file().map(|path| path.display().to_string());
    match gate.reload() {
        Ok(Reloaded::Tokens(count)) => {
            tracing::info!(tokens = count, file, "SIGHUP: API tokens reloaded");
        }
        Ok(Reloaded::NoFile) => tracing::info!("SIGHUP: nothing to reload"),
        Err(error) => tracing::error!(
            %error,
            file,
            "SIGHUP: the API token file cannot be used; the tokens in force are kept"
        ),
    }
}

/// The Web Bot Auth key file read again on SIGHUP, said in the log: a rotation names the key
/// that signed and the one that signs now; a file that cannot be used keeps the keys in force.
fn reload_keys(signing: &crate::bot_auth::signing::Signing) {
    match signing.reload() {
        Ok(reloaded) if reloaded.was != reloaded.now => tracing::warn!(
            was = %reloaded.was,
            now = %reloaded.now,
            keys = reloaded.keys,
            "SIGHUP: Web Bot Auth's active key rotated"
        ),
        Ok(reloaded) => tracing::info!(
            key = %reloaded.now,
            keys = reloaded.keys,
            "SIGHUP: Web Bot Auth keys reloaded"
        ),
        Err(error) => tracing::error!(
            %error,
            "SIGHUP: the Web Bot Auth key file cannot be used; the keys in force are kept"
        ),
    }
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

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::StatusCode;
    use tower::ServiceExt as _;

    use super::*;
    use crate::metrics::UNMATCHED_ROUTE;

    /// Every label is a route the app really serves, and every documented path has its label.
    #[tokio::test]
    async fn route_labels_match_the_routes_served() {
        // With Web Bot Auth and a product token: every route there is, the identity's too.
        let keys = crate::bot_auth::keys::KeySet::from_json(
            r#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU","status":"active"}]}"#,
        )
        .expect("RFC 9421's test key");
        let settings = Settings {
            bot_auth: Some(crate::config::BotAuthSettings {
                keys: Arc::new(keys),
                file: "keys.json".into(),
                agent: "https://bot.example/.well-known/http-message-signatures-directory".into(),
                ttl: std::time::Duration::from_secs(60),
                product_token: Some("ExampleBot".into()),
                contact: None,
            }),
            ..Settings::default()
        };
        let state = state(&settings).expect("state");
        let (_, with_admin) = public_routes(&state, true);
        for path in api::openapi().paths.paths.keys() {
            assert_eq!(with_admin.label(path), path, "documented {path}");
        }
        for admin in [true, false] {
            let (_, labels) = public_routes(&state, admin);
            let paths = labels.paths().chain(["/docs/swagger-ui.css"]);
            for path in paths {
                let request = Request::builder().uri(path).body(Body::empty()).unwrap();
                let response = app(state.clone(), admin).oneshot(request).await.unwrap();
                assert_ne!(
                    response.status(),
                    StatusCode::NOT_FOUND,
                    "{path} is labelled but not served"
                );
                assert_ne!(labels.label(path), UNMATCHED_ROUTE, "{path}");
            }
        }
        for path in api::ADMIN_PATHS {
            let request = Request::builder().uri(path).body(Body::empty()).unwrap();
            let response = admin_app(state.clone()).oneshot(request).await.unwrap();
            assert_ne!(response.status(), StatusCode::NOT_FOUND, "{path}");
        }
        // With the admin listener, the public app does not serve the probes.
        let request = Request::builder()
            .uri("/metrics")
            .body(Body::empty())
            .unwrap();
        let response = app(state.clone(), false).oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        let (_, without_admin) = public_routes(&state, false);
        assert_eq!(without_admin.label("/metrics"), UNMATCHED_ROUTE);
    }
}
