//! Load-benchmark helpers (`benches/load.sh`), on loopback only:
//! - `baseline_server ADDR`: a minimal axum handler returning a constant JSON body, the
//!   reference point for robotsd's cached `/v1/check` throughput;
//! - `baseline_server ADDR --sink`: answers every request, proxy-style absolute URIs included,
//!   with a small robots.txt, so robotsd can fill its cache with many origins without any of
//!   them being contacted.
//! - `baseline_server ADDR --corpus DIR`: the same sink, but each origin gets one file of DIR (the
//!   real corpus), chosen by a hash of its host, so that `benches/fleet_scale.sh` stores bodies of
//!   real sizes for a million origins.

use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderMap, Uri, header};
use axum::response::IntoResponse;

const BODY: &str = r#"{"allowed":false,"verdict":"disallow","reason":"matched_rule","url":"http://127.0.0.1:18081/private/report","robots_url":"http://127.0.0.1:18081/robots.txt","agent":{"input":["SomeBot"],"tokens":["SomeBot"]},"rule":{"directive":"disallow","pattern":"/private","line":2},"group":{"agents":["*"],"lines":[1],"global":true},"crawl_delay":null,"robots":{"status":200,"fetched_at":"2026-11-22T00:18:55Z","expires_at":"2026-11-23T00:18:55Z","bytes":125,"final_url":"http://127.0.0.1:18081/robots.txt","cache":"hit","backoff":null}}"#;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:18099".to_string());
    let mode = args.next();
    let app = match mode.as_deref() {
        Some("--sink") => Router::new()
            .fallback(|| async { "User-agent: *\nDisallow: /private\nAllow: /private/press\n" }),
        Some("--corpus") => {
            let dir = args.next().expect("--corpus DIR");
            let files = Arc::new(corpus(&dir));
            Router::new().fallback(move |uri: Uri, headers: HeaderMap| {
                let files = Arc::clone(&files);
                async move {
                    // Proxy-style requests carry the origin in the URI; direct ones in Host.
                    let host = uri
                        .host()
                        .map(str::to_owned)
                        .or_else(|| {
                            let host = headers.get(header::HOST)?.to_str().ok()?;
                            Some(host.to_owned())
                        })
                        .unwrap_or_default();
                    let pick = fnv1a(host.as_bytes()) % files.len() as u64;
                    files[usize::try_from(pick).unwrap_or(0)].clone()
                }
            })
        }
        _ => Router::new().fallback(|| async {
            ([(header::CONTENT_TYPE, "application/json")], BODY).into_response()
        }),
    };
    let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
    axum::serve(listener, app).await.expect("serve");
}

/// Every file of `dir`, sorted by name so that an origin gets the same file on every run.
fn corpus(dir: &str) -> Vec<Vec<u8>> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("corpus directory")
        .map(|entry| entry.expect("corpus entry").path())
        .collect();
    paths.sort();
    let files: Vec<_> = paths
        .iter()
        .map(|path| std::fs::read(path).expect("corpus file"))
        .collect();
    assert!(!files.is_empty(), "{dir} has no files");
    files
}

/// FNV-1a: spreads the hosts o0.test, o1.test, … evenly over the corpus.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
