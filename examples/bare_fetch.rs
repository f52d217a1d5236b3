//! The physical floor of `benches/miss.sh`, on loopback only: a bare reqwest client fetching
//! `http://ORIGIN(i):PORT/robots.txt` once for each origin `i` of `FROM .. FROM+COUNT`, at
//! most `CONCURRENCY` at a time, with the settings of robotsd's fetcher where they matter
//! (`src/fetch/mod.rs`: rustls, gzip/brotli/deflate, no redirects followed, no retries, no
//! idle connections kept, so a new connection per origin, connect and total time limits, the
//! body read as a stream up to 512,000 bytes). Origin `i` is the address `127.a.b.c` that
//! `benches/miss.sh` gives it ([`origin`]), served by `corpus_origin`; with
//! `ROBOTSD_BENCH_NAMES` set, its name `o<i>.bench.test`, looked up by reqwest's own resolver
//! (the C library's `getaddrinfo`), for `benches/miss_names.sh`.
//!
//! `bare_fetch PORT FROM COUNT CONCURRENCY [--keep-alive] [--parse]` prints one JSON line:
//! origins, seconds, origins a second, fetch latency p50/p99, bytes and failures. With
//! `--keep-alive`, every request goes to origin `FROM` over kept connections: the origin
//! server's own ceiling. With `--parse`, each body is also parsed by robotsd's engine
//! (`RobotsTxt::parse`), as robotsd does before it answers: the floor of a fetch and a parse.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const MAX_BODY_BYTES: usize = 512_000;

#[path = "common/origins.rs"]
mod origins;
use origins::{host, origin};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize| -> u64 {
        args.get(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| usage())
    };
    let (port, from, count, concurrency) = (number(0), number(1), number(2), number(3));
    let keep_alive = args[4..].iter().any(|a| a == "--keep-alive");
    let parse = args[4..].iter().any(|a| a == "--parse");
    assert!(origin(from + count).starts_with("127."), "too many origins");
    let client = reqwest::Client::builder()
        .user_agent("bare_fetch (robotsd benchmark)")
        .redirect(reqwest::redirect::Policy::none())
        .retry(reqwest::retry::never())
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(10))
        .pool_max_idle_per_host(if keep_alive { usize::MAX } else { 0 })
        .no_proxy()
        .build()
        .expect("HTTP client");
    let next = Arc::new(AtomicU64::new(from));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (client, next) = (client.clone(), Arc::clone(&next));
        workers.spawn(async move {
            let (mut times, mut bytes, mut failures) = (Vec::new(), 0usize, 0u64);
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= from + count {
                    break;
                }
                let host = host(if keep_alive { from } else { i });
                let url = format!("http://{host}:{port}/robots.txt");
                let asked = Instant::now();
                match fetch(&client, &url, parse).await {
                    Ok(n) => bytes += n,
                    Err(error) => {
                        if failures == 0 {
                            eprintln!("{url}: {error}");
                        }
                        failures += 1;
                    }
                }
                times.push(asked.elapsed());
            }
            (times, bytes, failures)
        });
    }
    let (mut times, mut bytes, mut failures) = (Vec::new(), 0usize, 0u64);
    while let Some(done) = workers.join_next().await {
        let (t, b, f) = done.expect("worker");
        times.extend(t);
        bytes += b;
        failures += f;
    }
    let seconds = started.elapsed().as_secs_f64();
    times.sort_unstable();
    let ms = |q: f64| {
        let index = ((times.len().max(1) - 1) as f64 * q).round() as usize;
        times
            .get(index)
            .map_or(0.0, |t| (t.as_secs_f64() * 1e5).round() / 100.0)
    };
    println!(
        "{}",
        serde_json::json!({
            "origins": count, "concurrency": concurrency, "keep_alive": keep_alive, "parse": parse,
            "seconds": (seconds * 1000.0).round() / 1000.0,
            "per_second": (count as f64 / seconds).round(),
            "p50_ms": ms(0.5), "p99_ms": ms(0.99), "bytes": bytes, "failures": failures, "cpu_s": cpu_seconds(),
        })
    );
}

/// One fetch as robotsd's fetcher reads it: the status, then the body as a stream, cut at
/// [`MAX_BODY_BYTES`], and parsed when `parse`. The bytes kept.
async fn fetch(client: &reqwest::Client, url: &str, parse: bool) -> Result<usize, reqwest::Error> {
    let mut response = client.get(url).send().await?;
    let _status = response.status();
    let mut body = Vec::with_capacity(64 * 1024);
    while let Some(chunk) = response.chunk().await? {
        let room = MAX_BODY_BYTES - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if chunk.len() >= room {
            break;
        }
    }
    if parse {
        std::hint::black_box(robotsd_engine::RobotsTxt::parse(&body));
    }
    Ok(body.len())
}

fn usage() -> ! {
    eprintln!("usage: bare_fetch PORT FROM COUNT CONCURRENCY [--keep-alive]");
    std::process::exit(2)
}

/// CPU seconds this process has used (user and system, from `/proc/self/stat`, at the usual
/// 100 ticks a second); 0 where there is no such file.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name (which may hold spaces) in parentheses.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}
