//! Load-benchmark helpers (`benches/load.sh`), on loopback only:
//! - `baseline_server ADDR`: a minimal axum handler returning a constant JSON body, the
//!   reference point for robotsd's cached `/v1/check` throughput;
//! - `baseline_server ADDR --sink`: answers every request, proxy-style absolute URIs included,
//!   with a small robots.txt, so robotsd can fill its cache with many origins without any of
//!   them being contacted.

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;

const BODY: &str = r#"{"allowed":false,"verdict":"disallow","reason":"matched_rule","url":"http://127.0.0.1:18081/private/report","robots_url":"http://127.0.0.1:18081/robots.txt","agent":{"input":["SomeBot"],"tokens":["SomeBot"]},"rule":{"directive":"disallow","pattern":"/private","line":2},"group":{"agents":["*"],"lines":[1],"global":true},"crawl_delay":null,"robots":{"status":200,"fetched_at":"2026-11-22T00:18:55Z","expires_at":"2026-11-23T00:18:55Z","bytes":125,"final_url":"http://127.0.0.1:18081/robots.txt","cache":"hit","backoff":null}}"#;

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:18099".to_string());
    let sink = args.next().as_deref() == Some("--sink");
    let app = if sink {
        Router::new()
            .fallback(|| async { "User-agent: *\nDisallow: /private\nAllow: /private/press\n" })
    } else {
        Router::new().fallback(|| async {
            ([(header::CONTENT_TYPE, "application/json")], BODY).into_response()
        })
    };
    let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
    axum::serve(listener, app).await.expect("serve");
}
