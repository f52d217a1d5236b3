//! Politeness through every transition (issue 57, docs/politeness.md "Through every
//! transition"), measured where the site sees it: three `robotsd` processes with one
//! `redis-server` (or a Sentinel fleet), crawlers that fetch at `not_before`, a loopback proxy
//! between one replica and Redis that the test cuts, and the site's own log of when each page
//! request arrived. In every scenario no two requests reach the site closer than its
//! crawl-delay.

mod proxy;
mod scenarios;

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::logging::collect_lines;
use crate::pacing::Site;
use crate::support::Robotsd;

/// The site's crawl-delay.
const CRAWL_DELAY_MS: u128 = 500;
/// The guard band: wide, so that a worker the busy machine wakes late still leaves the site a
/// whole crawl-delay (a period is 700 ms).
const GUARD: &str = "200ms";
const PERIOD_MS: u128 = 700;
/// How late a worker may start its fetch after its slot, as the clients allow.
const LATENESS: Duration = Duration::from_millis(25);
const FLEET: usize = 3;

/// A process's JSON log lines as they come.
type Lines = Arc<Mutex<Vec<Value>>>;

/// One replica's place in the fleet: the process that runs it now (none while it restarts), and
/// its JSON log lines.
#[derive(Clone, Default)]
struct Slot {
    base: Arc<Mutex<Option<String>>>,
    lines: Arc<Mutex<Option<Lines>>>,
}

impl Slot {
    fn base(&self) -> Option<String> {
        self.base.lock().unwrap().clone()
    }

    fn lines(&self) -> Vec<Value> {
        match &*self.lines.lock().unwrap() {
            Some(lines) => lines.lock().unwrap().clone(),
            None => Vec::new(),
        }
    }
}

/// A replica's process with `index` and its store at `redis_url`, and its place.
async fn replica(index: usize, redis_url: &str, extra: &[&str], slot: &Slot) -> Robotsd {
    let index = index.to_string();
    let size = FLEET.to_string();
    let mut args = vec![
        "--allow-private-networks",
        "--log-format=json",
        "--pace-guard",
        GUARD,
        "--fleet-size",
        &size,
        "--fleet-index",
        &index,
    ];
    args.extend_from_slice(extra);
    if !redis_url.is_empty() {
        args.extend_from_slice(&["--redis-url", redis_url]);
    }
    let mut process = Robotsd::start_with(&args, false, Stdio::piped()).await;
    *slot.lines.lock().unwrap() = Some(collect_lines(process.take_stderr().unwrap()));
    *slot.base.lock().unwrap() = Some(format!("http://127.0.0.1:{}", process.port));
    process
}

/// What a worker got for one page it fetched.
#[derive(Debug, Clone)]
struct Fetched {
    scope: String,
    replica: usize,
}

/// A polite worker on one replica until `stop`: reserve, wait for the slot, and fetch unless
/// woken more than [`LATENESS`] after it; a deferral is asked again at its time. When its
/// replica answers `scope: local`, its `robotsd_pace_alone` is read at once: it must say so.
async fn worker(
    client: reqwest::Client,
    site: Arc<Site>,
    slot: Slot,
    replica: usize,
    id: usize,
    stop: Instant,
) -> Vec<Fetched> {
    let mut fetched = Vec::new();
    let mut page = 0;
    while Instant::now() < stop {
        let Some(base) = slot.base() else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let url = site.url(&format!("/r{replica}/w{id}/{page}"));
        let check = url::Url::parse_with_params(
            &format!("{base}/v1/check"),
            [("url", url.as_str()), ("ua", "ChaosBot"), ("pace", "true")],
        )
        .unwrap();
        let answer = client
            .get(check)
            .timeout(Duration::from_secs(5))
            .send()
            .await;
        let Ok(answer) = answer else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let answered = tokio::time::Instant::now();
        let Ok(body) = answer.bytes().await else {
            continue;
        };
        let body: Value = serde_json::from_slice(&body).unwrap_or_default();
        let pace = &body["pace"];
        if !pace.is_object() {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        let wait = Duration::from_millis(pace["wait_ms"].as_u64().unwrap_or(100));
        if pace["scope"] == "local" {
            let metrics = client
                .get(format!("{base}/metrics"))
                .send()
                .await
                .and_then(|r| r.error_for_status());
            if let Ok(metrics) = metrics {
                // The counter, not the gauge: the store may answer again between the answer and
                // this read, and the gauge would rightly say so.
                let text = metrics.text().await.unwrap_or_default();
                let alone: f64 = text
                    .lines()
                    .filter(|line| line.starts_with("robotsd_pace_alone_total{"))
                    .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
                    .sum();
                assert!(
                    alone > 0.0,
                    "replica {replica} answered scope local, and its metrics do not count it"
                );
            }
        }
        tokio::time::sleep_until(answered + wait).await;
        if pace["outcome"] != "reserved" || answered.elapsed() > wait + LATENESS {
            continue;
        }
        if Instant::now() >= stop {
            break;
        }
        if client.get(&url).send().await.is_ok() {
            fetched.push(Fetched {
                scope: pace["scope"].as_str().unwrap_or_default().to_owned(),
                replica,
            });
            page += 1;
        }
    }
    fetched
}

/// Two workers on each of `slots` until `stop`.
async fn crawl(site: &Arc<Site>, slots: &[Slot], stop: Instant) -> Vec<Fetched> {
    crawl_with(site, slots, stop, 2).await
}

/// `workers` workers on each of `slots` until `stop`: more workers keep more slots reserved
/// ahead.
async fn crawl_with(
    site: &Arc<Site>,
    slots: &[Slot],
    stop: Instant,
    workers: usize,
) -> Vec<Fetched> {
    let client = reqwest::Client::new();
    let workers = slots.iter().enumerate().flat_map(|(replica, slot)| {
        (0..workers).map({
            let client = client.clone();
            move |id| {
                tokio::spawn(worker(
                    client.clone(),
                    Arc::clone(site),
                    slot.clone(),
                    replica,
                    id,
                    stop,
                ))
            }
        })
    });
    let mut fetched = Vec::new();
    for worker in futures_util::future::join_all(workers).await {
        fetched.extend(worker.expect("a worker panicked"));
    }
    fetched
}

/// Waits until the site has seen `count` requests (the fleet's first slots come a lease's
/// length after it starts), at most 30 s.
async fn until_arrivals(site: &Site, count: usize) {
    let started = Instant::now();
    while site.arrivals().len() < count {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the site saw {} requests in 30 s",
            site.arrivals().len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The gaps between the site's requests, in milliseconds, with the time of the later one.
fn gaps(site: &Site) -> Vec<(std::time::SystemTime, u128)> {
    site.arrivals()
        .windows(2)
        .map(|w| (w[1], w[1].duration_since(w[0]).unwrap().as_millis()))
        .collect()
}

/// Asserts that no two requests reached the site under the crawl-delay, and says what the site
/// saw: requests, the smallest gap, and those decided alone.
fn assert_polite(scenario: &str, site: &Site, fetched: &[Fetched]) {
    let gaps = gaps(site);
    let closest = gaps.iter().map(|g| g.1).min().expect("two requests");
    let local = fetched.iter().filter(|f| f.scope == "local").count();
    eprintln!(
        "{scenario}: {} requests at the site, {local} decided alone, the closest {closest} ms \
         apart",
        site.arrivals().len()
    );
    let under: Vec<u128> = gaps
        .iter()
        .map(|g| g.1)
        .filter(|&gap| gap < CRAWL_DELAY_MS)
        .collect();
    assert!(
        under.is_empty(),
        "{scenario}: {} gaps under the crawl-delay at the site: {under:?}",
        under.len()
    );
}

/// The site's rate between `from` and `to` (since the Unix epoch), in fetches a period.
fn rate(site: &Site, from: std::time::SystemTime, to: std::time::SystemTime) -> f64 {
    let seen = site
        .arrivals()
        .into_iter()
        .filter(|t| *t >= from && *t < to)
        .count();
    let span = to.duration_since(from).unwrap().as_millis();
    seen as f64 * PERIOD_MS as f64 / span as f64
}

/// The first of `lines` whose message contains `text`.
fn line_with(lines: &[Value], text: &str) -> Option<Value> {
    lines
        .iter()
        .find(|line| {
            line["fields"]["message"]
                .as_str()
                .is_some_and(|message| message.contains(text))
        })
        .cloned()
}
