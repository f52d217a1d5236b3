//! The load of `benches/miss.sh`, on loopback only. Origin `i` is `http://127.a.b.c:PORT/`, the
//! address [`origin`] gives it, served by `corpus_origin` (with `ROBOTSD_BENCH_NAMES` set,
//! `http://o<i>.bench.test:PORT/`, for `benches/miss_names.sh`); API is robotsd's base URL.
//!
//! - `miss_load misses API PORT FROM COUNT CONCURRENCY`: one `GET /v1/check` of a URL of each
//!   origin of `FROM .. FROM+COUNT` (each a cold origin, so a fetch), at most `CONCURRENCY` at a
//!   time over kept connections. Prints one JSON line: origins a second, latency p50/p99, and
//!   how many answers came from each `robots.cache` value and `robots.status`.
//! - `miss_load hits API PORT FROM COUNT RATE STOP_FILE MAX_SECONDS`: checks of the (already
//!   warm) origins `FROM .. FROM+COUNT` in turn, `RATE` a second on a fixed schedule, each on
//!   its own task so that a slow answer does not delay the next, until `STOP_FILE` exists or
//!   `MAX_SECONDS` have passed. One thread. Prints one JSON line: latency p50/p99/max, and how
//!   many answers were not cache hits.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[path = "common/origins.rs"]
mod origins;
use origins::{host, origin};

fn check_url(api: &str, port: u64, i: u64) -> String {
    let target = format!("http://{}:{port}/bench/page-{i}.html", host(i));
    let target: String = url::form_urlencoded::byte_serialize(target.as_bytes()).collect();
    format!("{api}/v1/check?url={target}&ua=bench")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).cloned().unwrap_or_else(|| usage());
    let number = |i: usize| arg(i).parse::<u64>().unwrap_or_else(|_| usage());
    let (api, port, from, count) = (arg(1), number(2), number(3), number(4));
    assert!(origin(from + count).starts_with("127."), "too many origins");
    match arg(0).as_str() {
        "misses" => {
            let concurrency = number(5);
            tokio::runtime::Runtime::new()
                .expect("runtime")
                .block_on(misses(&api, port, from, count, concurrency));
        }
        "hits" => {
            let (rate, stop, max) = (number(5), arg(6), number(7));
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime")
                .block_on(hits(&api, port, (from, count), rate, &stop, max));
        }
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: miss_load misses API PORT FROM COUNT CONCURRENCY\n       miss_load hits API PORT FROM COUNT RATE STOP_FILE MAX_SECONDS"
    );
    std::process::exit(2)
}

fn client(connections: usize) -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .pool_max_idle_per_host(connections)
        .no_proxy()
        .build()
        .expect("HTTP client")
}

/// One check: the answer's `robots.cache` and `robots.status` (or the HTTP status when it is not
/// a 200), and how long it took.
async fn check(client: &reqwest::Client, url: &str) -> (String, Duration) {
    let asked = Instant::now();
    let kind = match client.get(url).send().await {
        Ok(response) if response.status().is_success() => match response.text().await {
            Ok(body) => answer_kind(&body),
            Err(error) => format!("body error: {error}"),
        },
        Ok(response) => format!("http {}", response.status().as_u16()),
        Err(error) => format!("error: {error}"),
    };
    (kind, asked.elapsed())
}

/// `cache/status` of an answer, read without parsing the whole body.
fn answer_kind(body: &str) -> String {
    let field = |name: &str| {
        let robots = &body[body.find("\"robots\":{").unwrap_or(0)..];
        let key = format!("\"{name}\":");
        let start = robots.find(&key)? + key.len();
        let value = &robots[start..];
        let end = value.find([',', '}'])?;
        Some(value[..end].trim_matches('"').to_owned())
    };
    format!(
        "{}/{}",
        field("cache").unwrap_or_else(|| "?".into()),
        field("status").unwrap_or_else(|| "?".into())
    )
}

fn summary(mut times: Vec<Duration>, kinds: BTreeMap<String, u64>) -> serde_json::Value {
    times.sort_unstable();
    let ms = |q: f64| {
        let index = ((times.len().max(1) - 1) as f64 * q).round() as usize;
        times
            .get(index)
            .map_or(0.0, |t| (t.as_secs_f64() * 1e5).round() / 100.0)
    };
    serde_json::json!({
        "p50_ms": ms(0.5), "p99_ms": ms(0.99), "max_ms": ms(1.0), "answers": kinds,
    })
}

async fn misses(api: &str, port: u64, from: u64, count: u64, concurrency: u64) {
    let client = client(usize::try_from(concurrency).unwrap_or(usize::MAX));
    let next = Arc::new(AtomicU64::new(from));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (client, next, api) = (client.clone(), Arc::clone(&next), api.to_owned());
        workers.spawn(async move {
            let (mut times, mut kinds) = (Vec::new(), BTreeMap::<String, u64>::new());
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= from + count {
                    break;
                }
                let (kind, took) = check(&client, &check_url(&api, port, i)).await;
                *kinds.entry(kind).or_default() += 1;
                times.push(took);
            }
            (times, kinds)
        });
    }
    let (mut times, mut kinds) = (Vec::new(), BTreeMap::<String, u64>::new());
    while let Some(done) = workers.join_next().await {
        let (t, k) = done.expect("worker");
        times.extend(t);
        for (kind, n) in k {
            *kinds.entry(kind).or_default() += n;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let mut line = summary(times, kinds);
    line["origins"] = count.into();
    line["concurrency"] = concurrency.into();
    line["seconds"] = ((seconds * 1000.0).round() / 1000.0).into();
    line["per_second"] = (count as f64 / seconds).round().into();
    line["cpu_s"] = cpu_seconds().into();
    println!("{line}");
}

async fn hits(api: &str, port: u64, (from, count): (u64, u64), rate: u64, stop: &str, max: u64) {
    let client = client(64);
    let urls: Vec<String> = (from..from + count)
        .map(|i| check_url(api, port, i))
        .collect();
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate.max(1) as f64));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let started = Instant::now();
    let mut pending = tokio::task::JoinSet::new();
    let mut n = 0usize;
    while started.elapsed() < Duration::from_secs(max) {
        tick.tick().await;
        if n.is_multiple_of(64) && std::path::Path::new(stop).exists() {
            break;
        }
        let (client, url) = (client.clone(), urls[n % urls.len()].clone());
        pending.spawn(async move { check(&client, &url).await });
        n += 1;
    }
    let seconds = started.elapsed().as_secs_f64();
    let (mut times, mut kinds) = (Vec::new(), BTreeMap::<String, u64>::new());
    while let Some(done) = pending.join_next().await {
        let (kind, took) = done.expect("hit task");
        *kinds.entry(kind).or_default() += 1;
        times.push(took);
    }
    let mut line = summary(times, kinds);
    line["checks"] = n.into();
    line["seconds"] = ((seconds * 10.0).round() / 10.0).into();
    println!("{line}");
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
