//! The origins of `benches/miss.sh`, on loopback only: `corpus_origin ADDR DIR` answers
//! `GET /robots.txt` with one file of DIR (the real corpus), chosen by the address the request
//! was sent to, so that one listener on `0.0.0.0:PORT` is as many origins as the 127.0.0.0/8
//! range holds (on Linux, a connection to any 127.a.b.c reaches it). Origin 127.a.b.c gets
//! file `(a << 16 | b << 8 | c) % files` of DIR sorted by name, the same one on every run.
//! Any other path is a 404.
//!
//! Origins 127.200.0.0 and up are slow: they send the head and the first half of the file at
//! once, and the rest only after [`STALL`], so that `benches/miss.sh` can hold a known number of
//! fetches in flight, mid-body, and read what they cost in memory.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use bytes::Bytes;
use futures_util::{FutureExt, StreamExt};

/// How long a slow origin holds the second half of its file.
const STALL: Duration = Duration::from_secs(6);

/// The first octet after 127 of the slow origins.
const SLOW_FROM: u8 = 200;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(addr), Some(dir)) = (args.next(), args.next()) else {
        eprintln!("usage: corpus_origin ADDR DIR");
        std::process::exit(2)
    };
    let files = Arc::new(corpus(&dir));
    let app = Router::new()
        .route("/robots.txt", get(robots))
        .fallback(|| async { StatusCode::NOT_FOUND })
        .with_state(files);
    let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .await
    .expect("serve");
}

/// The file of the origin asked for: the address in `Host` (the peer's, when `Host` holds no
/// address).
async fn robots(
    State(files): State<Arc<Vec<Bytes>>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> impl IntoResponse {
    let ip = headers
        .get(header::HOST)
        .and_then(|host| host.to_str().ok())
        .and_then(|host| host.rsplit_once(':').map_or(Some(host), |(ip, _)| Some(ip)))
        .and_then(|ip| ip.parse::<IpAddr>().ok())
        .unwrap_or(peer.ip());
    let (n, slow) = match ip {
        IpAddr::V4(v4) => (
            u64::from(u32::from(v4) & 0x00ff_ffff),
            v4.octets()[1] >= SLOW_FROM,
        ),
        IpAddr::V6(v6) => (u64::from(v6.segments()[7]), false),
    };
    let pick = usize::try_from(n % files.len() as u64).unwrap_or(0);
    let file = files[pick].clone();
    let body = if slow {
        let (first, rest) = (file.slice(..file.len() / 2), file.slice(file.len() / 2..));
        let later = async move {
            tokio::time::sleep(STALL).await;
            Ok::<_, std::io::Error>(rest)
        };
        Body::from_stream(futures_util::stream::iter([Ok(first)]).chain(later.into_stream()))
    } else {
        Body::from(file)
    };
    ([(header::CONTENT_TYPE, "text/plain")], body)
}

/// Every file of `dir`, sorted by name so that an origin gets the same file on every run.
fn corpus(dir: &str) -> Vec<Bytes> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("corpus directory")
        .map(|entry| entry.expect("corpus entry").path())
        .collect();
    paths.sort();
    let files: Vec<_> = paths
        .iter()
        .map(|path| Bytes::from(std::fs::read(path).expect("corpus file")))
        .collect();
    assert!(!files.is_empty(), "{dir} has no files");
    files
}
