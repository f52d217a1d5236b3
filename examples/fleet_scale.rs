//! The load of `benches/fleet_scale.sh`, on loopback only:
//!
//! - `fleet_scale fill REPLICAS FROM TO`: checks one URL of each origin `o{FROM}.test` …
//!   `o{TO-1}.test` through the batch API (`POST /v1/check`, 1,000 URLs a batch), the batches
//!   spread round-robin over the replicas, a few in flight;
//! - `fleet_scale replay REPLICAS ORIGINS CHECKS ZIPF CONCURRENCY [SEED]`: `CHECKS` single checks
//!   (`GET /v1/check`) of origins drawn from the first `ORIGINS` with Zipf's law of exponent
//!   `ZIPF` (the most asked origin is `o0.test`), spread round-robin over the replicas by
//!   `CONCURRENCY` workers on keep-alive connections. Prints one JSON line: how many answers came
//!   from each of the answer's `robots.cache` values, and the latency percentiles of each, as
//!   the client measured them. Runs with the same `SEED` (default 0) ask the same sequence.
//!
//! `REPLICAS` is a comma-separated list of base URLs. The origins are never contacted: robotsd
//! fetches their robots.txt through a sink acting as its proxy (`baseline_server --corpus`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::json;

const UA: &str = "SomeBot";

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).cloned().unwrap_or_else(|| usage());
    let replicas: Vec<String> = arg(1).split(',').map(str::to_owned).collect();
    let number = |i: usize| arg(i).parse::<u64>().unwrap_or_else(|_| usage());
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(300))
        .pool_max_idle_per_host(256)
        .build()
        .expect("HTTP client");
    match arg(0).as_str() {
        "fill" => fill(&client, &replicas, number(2), number(3)).await,
        "replay" => {
            let zipf: f64 = arg(4).parse().unwrap_or_else(|_| usage());
            let seed = args.get(6).map_or(0, |_| number(6));
            let replay = Replay {
                origins: number(2),
                checks: number(3),
                zipf,
                seed,
            };
            replay.run(&client, &replicas, number(5)).await;
        }
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: fleet_scale fill REPLICAS FROM TO\n       fleet_scale replay REPLICAS ORIGINS CHECKS ZIPF CONCURRENCY [SEED]"
    );
    std::process::exit(2)
}

fn check_url(origin: u64) -> String {
    format!("http://o{origin}.test/private/x")
}

async fn fill(client: &reqwest::Client, replicas: &[String], from: u64, to: u64) {
    const BATCH: u64 = 1000;
    const IN_FLIGHT: usize = 6;
    let batches: Vec<(u64, u64)> = (from..to)
        .step_by(BATCH as usize)
        .map(|start| (start, (start + BATCH).min(to)))
        .collect();
    let started = Instant::now();
    let mut pending = tokio::task::JoinSet::new();
    for (n, (start, end)) in batches.into_iter().enumerate() {
        if pending.len() == IN_FLIGHT {
            pending
                .join_next()
                .await
                .expect("a batch")
                .expect("batch task");
        }
        let url = format!("{}/v1/check", replicas[n % replicas.len()]);
        let client = client.clone();
        pending.spawn(async move {
            let mut urls: Vec<String> = (start..end).map(check_url).collect();
            // A check whose robots.txt was still being fetched when the batch had to answer
            // (its deadline) is asked again: robotsd goes on fetching and answers from its cache.
            for _ in 0..20 {
                urls = unanswered(&client, &url, urls).await;
                if urls.is_empty() {
                    return;
                }
            }
            panic!(
                "{} checks of batch {start}..{end} never answered",
                urls.len()
            );
        });
    }
    while let Some(done) = pending.join_next().await {
        done.expect("batch task");
    }
    eprintln!(
        "filled o{from}..o{to} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Checks `urls` in one batch through `endpoint`; the URLs that got the batch deadline's problem.
/// Any other problem is a failure of the benchmark.
async fn unanswered(client: &reqwest::Client, endpoint: &str, urls: Vec<String>) -> Vec<String> {
    let body = json!({"ua": UA, "urls": urls});
    let bytes = client
        .post(endpoint)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .expect("batch request")
        .bytes()
        .await
        .expect("batch answer");
    let answer: serde_json::Value = serde_json::from_slice(&bytes).expect("batch JSON");
    let results = answer["results"].as_array().expect("results");
    let mut again = Vec::new();
    for (url, result) in urls.into_iter().zip(results) {
        if result.get("verdict").is_some() {
            continue;
        }
        let kind = result["type"].as_str().unwrap_or_default();
        assert!(kind.ends_with(":batch-deadline"), "{url}: {result}");
        again.push(url);
    }
    again
}

struct Replay {
    origins: u64,
    checks: u64,
    zipf: f64,
    seed: u64,
}

impl Replay {
    async fn run(&self, client: &reqwest::Client, replicas: &[String], concurrency: u64) {
        let cumulative = std::sync::Arc::new(zipf_cumulative(self.origins, self.zipf));
        let per_worker = self.checks / concurrency.max(1);
        let seed = self.seed.wrapping_mul(0xd1b5_4a32_d192_ed03) ^ 0x5eed;
        let started = Instant::now();
        let mut workers = tokio::task::JoinSet::new();
        for worker in 0..concurrency {
            let (client, cumulative) = (client.clone(), std::sync::Arc::clone(&cumulative));
            let replica = replicas[usize::try_from(worker).unwrap_or(0) % replicas.len()].clone();
            workers.spawn(async move {
                let mut rng = SplitMix(worker.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ seed);
                let mut seen: BTreeMap<String, Vec<Duration>> = BTreeMap::new();
                for _ in 0..per_worker {
                    let origin = sample(&cumulative, rng.unit());
                    let target: String =
                        url::form_urlencoded::byte_serialize(check_url(origin).as_bytes())
                            .collect();
                    let url = format!("{replica}/v1/check?url={target}&ua={UA}");
                    let asked = Instant::now();
                    let response = client.get(&url).send().await.expect("check");
                    let status = response.status();
                    let body = response.text().await.expect("check answer");
                    let took = asked.elapsed();
                    assert!(status.is_success(), "{status}: {body}");
                    seen.entry(cache_source(&body)).or_default().push(took);
                }
                seen
            });
        }
        let mut all: BTreeMap<String, Vec<Duration>> = BTreeMap::new();
        while let Some(seen) = workers.join_next().await {
            for (source, times) in seen.expect("replay worker") {
                all.entry(source).or_default().extend(times);
            }
        }
        let elapsed = started.elapsed().as_secs_f64();
        let total: usize = all.values().map(Vec::len).sum();
        let mut sources = serde_json::Map::new();
        for (source, times) in &mut all {
            times.sort_unstable();
            let ms = |q: f64| {
                let index = ((times.len() - 1) as f64 * q).round() as usize;
                (times[index].as_secs_f64() * 1e5).round() / 100.0
            };
            sources.insert(
                source.clone(),
                json!({"count": times.len(), "p50_ms": ms(0.5), "p99_ms": ms(0.99)}),
            );
        }
        let line = json!({
            "origins": self.origins, "checks": total, "zipf": self.zipf,
            "seconds": (elapsed * 10.0).round() / 10.0, "by_cache": sources,
        });
        println!("{line}");
    }
}

/// The answer's `robots.cache` (`hit`, `shared`, `miss`, …), read without parsing the whole body.
fn cache_source(body: &str) -> String {
    body.split_once("\"cache\":\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map_or_else(|| "none".to_owned(), |(source, _)| source.to_owned())
}

/// The cumulative probabilities of Zipf's law over `n` ranks with exponent `s`.
fn zipf_cumulative(n: u64, s: f64) -> Vec<f64> {
    let mut sum = 0.0;
    let mut cumulative: Vec<f64> = (1..=n)
        .map(|rank| {
            sum += 1.0 / (rank as f64).powf(s);
            sum
        })
        .collect();
    for value in &mut cumulative {
        *value /= sum;
    }
    cumulative
}

/// The rank (0-based, the origin's number) whose cumulative probability first reaches `u`.
fn sample(cumulative: &[f64], u: f64) -> u64 {
    cumulative.partition_point(|&p| p < u) as u64
}

/// SplitMix64: a small, seedable generator, so that a replay is the same sequence every run.
struct SplitMix(u64);

impl SplitMix {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}
