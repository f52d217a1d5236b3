//! The accept loop: robotsd's own, in place of `axum::serve`, because that one has no cap on
//! connections and runs hyper without its limits (axum sets no timer, so hyper's header timeout
//! never fires, and its read buffer is hyper's default of about 400 KB a connection).
//!
//! Per listener:
//! - a cap on open connections. A connection over it is answered 503 `connection-limit` and
//!   closed, and counted; the cap is lowered at start-up to leave room under the open-file limit
//!   for the other listener, fetches and the store, so `accept` itself never runs out;
//! - per connection, the header-read and idle timeouts ([`super::connection`]), a read buffer of
//!   `--max-header-bytes` (which is thereby the largest head, and times the cap the most all
//!   connections buffer), at most [`MAX_HEADERS`] header fields, and for HTTP/2 a stream cap and
//!   a header list limit;
//! - on shutdown, no new connections, and the open ones finish their requests in flight.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::body::ConnectionBodies;

use super::App;
use super::connection::{Activity, Expired, Watched, watch};
use super::head_errors::HeadErrors;
use crate::api::problem::ApiError;
use crate::config::ConnectionLimits;
use crate::metrics::ConnectionMetrics;

/// The most header fields in a request head: hyper's default, which the builder leaves as it is.
pub const MAX_HEADERS: usize = 100;

/// Connections being refused at once; past it, a refused connection is closed without a word.
const REFUSALS_AT_ONCE: usize = 64;

/// How long a refused connection gets to take its 503.
const REFUSAL_TIME: Duration = Duration::from_secs(1);

/// File descriptors kept free of client connections: the other listener's connections, fetches,
/// the store's connections, refusals in progress and the process's own.
const RESERVED_FILES: usize = 512;

/// The connection cap of the admin listener (probes and metrics): a handful of scrapers and
/// kubelets, never the fleet's traffic.
pub const ADMIN_MAX_CONNECTIONS: usize = 64;

/// How one listener serves its connections.
#[derive(Clone)]
pub struct ListenerConfig {
    /// The connection limits, the cap already fitted to the open-file limit.
    pub limits: ConnectionLimits,
    /// Its series.
    pub metrics: ConnectionMetrics,
}

/// The cap to apply given the open-file limit: `wanted`, lowered to leave [`RESERVED_FILES`]
/// (or half the files, under a small limit) to everything else.
pub fn connection_cap(wanted: usize, open_files: Option<u64>) -> usize {
    let Some(files) = open_files.and_then(|files| usize::try_from(files).ok()) else {
        return wanted;
    };
    let room = if files > 2 * RESERVED_FILES {
        files - RESERVED_FILES
    } else {
        files / 2
    };
    wanted.min(room.max(1))
}

/// The soft limit on open files, where the platform says (Linux's `/proc/self/limits`).
pub fn open_file_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// The hyper connection builder for `limits`.
fn builder(limits: &ConnectionLimits) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        // The watchdog keeps time instead: see `connection`.
        .header_read_timeout(None)
        // `max_headers` is left at hyper's default (MAX_HEADERS): setting it, even to that
        // value, moves the parsed headers from the stack to a heap allocation per request,
        // which measured 2,800 instructions of a cached check's 35,000.
        .max_buf_size(limits.max_header_bytes);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.http2_max_streams)
        .max_header_list_size(u32::try_from(limits.max_header_bytes).unwrap_or(u32::MAX));
    builder
}

/// Accepts and serves connections on `listener` with `app` until `stopped` completes, then
/// waits for the open connections to finish their requests in flight.
pub async fn serve<A: App>(
    listener: TcpListener,
    app: A,
    config: ListenerConfig,
    stopped: impl Future<Output = ()>,
) {
    let ListenerConfig { limits, metrics } = config;
    let builder = builder(&limits);
    let errors = HeadErrors {
        max_header_bytes: limits.max_header_bytes,
        max_headers: MAX_HEADERS,
    };
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let refusals = Arc::new(Semaphore::new(REFUSALS_AT_ONCE));
    let graceful = GracefulShutdown::new();
    let mut stopped = std::pin::pin!(stopped);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    accept_failed(&error).await;
                    continue;
                }
            },
            () = stopped.as_mut() => break,
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            metrics.refused.inc();
            if let Ok(refusing) = Arc::clone(&refusals).try_acquire_owned() {
                tokio::spawn(async move {
                    let _refusing = refusing;
                    let _ = tokio::time::timeout(REFUSAL_TIME, refuse(stream)).await;
                });
            }
            continue;
        };
        // Answers are small and latency-bound.
        let _ = stream.set_nodelay(true);
        let activity = Activity::new();
        let io = TokioIo::new(Watched::new(stream, Arc::clone(&activity), errors));
        let service = {
            let (app, activity) = (app.clone(), Arc::clone(&activity));
            // Made once per connection; only HTTP/2 requests carry it, so HTTP/1's cost nothing.
            let bodies = ConnectionBodies(Arc::new(Semaphore::new(
                limits
                    .http2_body_bytes_per_connection
                    .min(Semaphore::MAX_PERMITS),
            )));
            hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                let busy = activity.begin();
                let mut request = request.map(Body::new);
                if request.version() == hyper::Version::HTTP_2 {
                    request.extensions_mut().insert(bodies.clone());
                }
                app.answer(request, Some(peer.ip()), busy)
            })
        };
        let connection = graceful.watch(builder.serve_connection(io, service).into_owned());
        let connection = tokio::spawn(connection);
        let (metrics, limits) = (metrics.clone(), limits.clone());
        tokio::spawn(async move {
            let _slot = slot;
            metrics.open.inc();
            let expired = watch(
                connection,
                &activity,
                limits.header_read_timeout,
                limits.idle_timeout,
            )
            .await;
            metrics.open.dec();
            match expired {
                Some(Expired::Header) => metrics.header_timeouts.inc(),
                Some(Expired::Idle) => metrics.idle_timeouts.inc(),
                None => {}
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

/// After a failed `accept`: a connection that died in the backlog is nothing; anything else
/// (out of files, out of memory) gets a pause, so the loop does not spin on it.
async fn accept_failed(error: &std::io::Error) {
    use std::io::ErrorKind as K;
    if matches!(
        error.kind(),
        K::ConnectionAborted | K::ConnectionReset | K::ConnectionRefused | K::Interrupted
    ) {
        return;
    }
    tracing::warn!(error = %error, "accepting a connection failed");
    tokio::time::sleep(Duration::from_millis(50)).await;
}

/// Tells a connection over the cap why it is closed: a 503 problem, then the close, after
/// reading what it sent so that the close does not reset the answer away.
async fn refuse(mut stream: TcpStream) {
    let problem = ApiError::ConnectionLimit { retry_after: 1 }.problem();
    let body = serde_json::to_vec(&problem).unwrap_or_default();
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: {}\r\ncontent-length: {}\r\n\
         retry-after: 1\r\nconnection: close\r\n\r\n",
        crate::api::problem::PROBLEM_JSON,
        body.len()
    );
    if stream.write_all(head.as_bytes()).await.is_err() || stream.write_all(&body).await.is_err() {
        return;
    }
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 4096];
    while let Ok(n) = stream.read(&mut sink).await {
        if n == 0 {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_room_under_the_open_file_limit() {
        assert_eq!(connection_cap(2048, None), 2048);
        assert_eq!(connection_cap(2048, Some(1_048_576)), 2048);
        assert_eq!(connection_cap(2048, Some(1024)), 512);
        assert_eq!(connection_cap(2048, Some(2048)), 1536);
        assert_eq!(connection_cap(100, Some(1024)), 100);
        assert_eq!(connection_cap(2048, Some(1)), 1);
    }

    #[test]
    fn the_open_file_limit_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(open_file_limit().is_some_and(|n| n > 0));
        }
    }
}
