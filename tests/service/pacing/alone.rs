//! Replicas that decide fetch slots alone (docs/politeness.md, "Replicas pacing alone"): three
//! `robotsd` processes without a store, and three whose `redis-server` is killed mid-crawl,
//! measured where the site sees them: its own log of when each page request arrived.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::Value;

use super::{Site, millis_since_epoch, reserve};
use crate::logging::collect_lines;
use crate::redis_server::RedisServer;
use crate::support::{Robotsd, eventually};

/// The site's crawl-delay, and the guard band the replicas add to it: wide, so that a worker
/// the busy machine wakes late, or a request the site logs late, still leaves a whole
/// crawl-delay between two arrivals.
const CRAWL_DELAY_MS: u128 = 500;
const GUARD: &str = "200ms";
/// How late a worker may start its fetch after its slot, as the clients allow.
const LATENESS: Duration = Duration::from_millis(25);

/// Three replicas, each told the fleet's size and its own index, with `extra` flags; their JSON
/// log lines as they come.
async fn fleet(extra: &[&str]) -> Vec<(Robotsd, Arc<Mutex<Vec<Value>>>)> {
    let mut replicas = Vec::new();
    for index in 0..3 {
        let index = index.to_string();
        let mut args = vec![
            "--allow-private-networks",
            "--log-format=json",
            "--pace-guard",
            GUARD,
            "--fleet-size",
            "3",
            "--fleet-index",
            &index,
        ];
        args.extend_from_slice(extra);
        let mut replica = Robotsd::start_with(&args, false, Stdio::piped()).await;
        let lines = collect_lines(replica.take_stderr().unwrap());
        replicas.push((replica, lines));
    }
    replicas
}

/// The start-up line that says who decides the slots.
async fn pacing_line(lines: &Mutex<Vec<Value>>) -> Value {
    let find = || {
        lines
            .lock()
            .unwrap()
            .iter()
            .find(|line| line["fields"]["decided_by"].is_string())
            .map(|line| line["fields"].clone())
    };
    assert!(eventually(|| find().is_some()).await, "no pacing line");
    find().unwrap()
}

/// A polite worker, as the clients are: reserve, wait for the slot, and fetch unless woken more
/// than [`LATENESS`] after it (then the slot is given up and another asked for). The paces of
/// the slots it fetched in.
async fn crawl(client: &reqwest::Client, replica: &Robotsd, urls: Vec<String>) -> Vec<Value> {
    let mut fetched = Vec::new();
    for url in urls {
        loop {
            let pace = reserve(client, replica, &url).await;
            let answered = tokio::time::Instant::now();
            let wait = Duration::from_millis(pace["wait_ms"].as_u64().unwrap());
            tokio::time::sleep(wait).await;
            if pace["outcome"] != "reserved" || answered.elapsed() > wait + LATENESS {
                continue;
            }
            client.get(&url).send().await.expect("the site answered");
            fetched.push(pace);
            break;
        }
    }
    fetched
}

/// The smallest gap between two page requests the site logged, in milliseconds.
fn closest_arrivals(site: &Site) -> u128 {
    let arrivals = site.arrivals();
    let closest = arrivals
        .windows(2)
        .map(|w| w[1].duration_since(w[0]).unwrap().as_millis())
        .min()
        .expect("two arrivals");
    eprintln!(
        "{} requests at the site, the closest {closest} ms apart",
        arrivals.len()
    );
    closest
}

#[tokio::test]
async fn three_replicas_without_a_store_keep_the_crawl_delay_together_at_the_site() {
    let client = reqwest::Client::new();
    // The hazard first: without --fleet-size, each replica keeps the site's whole rate, and the
    // first slot of each is now. It says so when it starts.
    let hazard = Site::start("User-agent: *\nCrawl-delay: 0.5\n").await;
    let mut unset = Vec::new();
    for _ in 0..3 {
        let mut replica = Robotsd::start_with(
            &["--allow-private-networks", "--log-format=json"],
            false,
            Stdio::piped(),
        )
        .await;
        let lines = collect_lines(replica.take_stderr().unwrap());
        unset.push((replica, lines));
    }
    let line = pacing_line(&unset[0].1).await;
    assert_eq!(line["decided_by"], "alone", "{line}");
    assert_eq!(line["fleet_size"], 1, "{line}");
    assert!(
        line["message"].as_str().unwrap().contains("whole rate"),
        "{line}"
    );
    let page = hazard.url("/a");
    let slots: Vec<u128> = join_all(
        unset
            .iter()
            .map(|(replica, _)| reserve(&client, replica, &page)),
    )
    .await
    .iter()
    .map(|pace| millis_since_epoch(&pace["not_before"]))
    .collect();
    let spread = slots.iter().max().unwrap() - slots.iter().min().unwrap();
    assert!(spread < CRAWL_DELAY_MS, "{slots:?}");
    drop(unset);

    // Told the fleet's size and their indices, they keep the crawl-delay together.
    let site = Site::start("User-agent: *\nCrawl-delay: 0.5\n").await;
    let replicas = fleet(&[]).await;
    for (index, (_, lines)) in replicas.iter().enumerate() {
        let line = pacing_line(lines).await;
        assert_eq!(line["decided_by"], "alone", "{line}");
        assert_eq!(line["fleet_size"], 3, "{line}");
        assert_eq!(line["fleet_index"], index, "{line}");
    }
    // Two workers a replica, three pages each.
    let workers = replicas.iter().flat_map(|(replica, _)| {
        (0..2).map(|w| {
            let urls = (0..3)
                .map(|p| site.url(&format!("/r{}/w{w}/{p}", replica.port)))
                .collect();
            crawl(&client, replica, urls)
        })
    });
    let paces: Vec<Vec<Value>> = join_all(workers).await;
    for (worker, fetched) in paces.iter().enumerate() {
        let index = worker / 2;
        for pace in fetched {
            assert_eq!(pace["scope"], "local", "{pace}");
            assert_eq!(pace["fleet_size"], 3, "{pace}");
            assert_eq!(pace["fleet_index"], index, "{pace}");
        }
    }
    assert_eq!(site.arrivals().len(), 18);
    let closest = closest_arrivals(&site);
    assert!(
        closest >= CRAWL_DELAY_MS,
        "two requests {closest} ms apart at the site"
    );
    for (index, (replica, _)) in replicas.iter().enumerate() {
        assert_eq!(replica.metric("robotsd_pace_alone").await, 1.0);
        assert_eq!(replica.metric("robotsd_pace_fleet_size").await, 3.0);
        assert_eq!(
            replica.metric("robotsd_pace_fleet_index").await,
            index as f64
        );
    }
}

#[tokio::test]
async fn three_replicas_whose_redis_is_killed_mid_crawl_keep_the_crawl_delay_at_the_site() {
    let mut redis = RedisServer::start().await;
    let url = redis.url();
    let site = Site::start("User-agent: *\nCrawl-delay: 0.5\n").await;
    // 1 s: a reservation slowed by a busy machine before the kill must still be the store's.
    let replicas = fleet(&["--redis-url", &url, "--store-timeout", "1s"]).await;
    for (_, lines) in &replicas {
        let line = pacing_line(lines).await;
        assert_eq!(line["decided_by"], "store", "{line}");
    }
    let client = reqwest::Client::new();
    // One worker a replica, six pages each; Redis is killed while they crawl.
    let workers = replicas.iter().enumerate().map(|(w, (replica, _))| {
        let urls = (0..6).map(|p| site.url(&format!("/w{w}/{p}"))).collect();
        crawl(&client, replica, urls)
    });
    let killer = async {
        let started = tokio::time::Instant::now();
        while site.arrivals().len() < 4 {
            assert!(started.elapsed() < Duration::from_secs(30), "no crawl");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        redis.kill();
    };
    let (paces, ()) = tokio::join!(join_all(workers), killer);
    let paces: Vec<&Value> = paces.iter().flatten().collect();
    assert!(
        paces.iter().any(|pace| pace["scope"] == "fleet"),
        "{paces:?}"
    );
    assert!(
        paces.iter().any(|pace| pace["scope"] == "local"),
        "{paces:?}"
    );
    assert_eq!(site.arrivals().len(), 18);
    let closest = closest_arrivals(&site);
    assert!(
        closest >= CRAWL_DELAY_MS,
        "two requests {closest} ms apart at the site"
    );
    for (replica, _) in &replicas {
        assert_eq!(replica.metric("robotsd_pace_alone").await, 1.0);
        assert_eq!(
            replica.metric("robotsd_store_up{backend=\"redis\"}").await,
            0.0
        );
    }
}

/// The first of `lines` whose message contains `text`.
fn line_with(lines: &Mutex<Vec<Value>>, text: &str) -> Option<Value> {
    lines
        .lock()
        .unwrap()
        .iter()
        .find(|line| {
            line["fields"]["message"]
                .as_str()
                .is_some_and(|message| message.contains(text))
        })
        .cloned()
}

#[tokio::test]
async fn the_first_slot_decided_alone_shows_at_once_in_the_answer_the_metrics_and_the_log() {
    let mut redis = RedisServer::start().await;
    let url = redis.url();
    let site = Site::start("User-agent: *\nCrawl-delay: 0.5\n").await;
    let mut replica = Robotsd::start_with(
        &[
            "--allow-private-networks",
            "--log-format=json",
            "--redis-url",
            &url,
            "--fleet-size",
            "3",
            "--fleet-index",
            "1",
        ],
        false,
        Stdio::piped(),
    )
    .await;
    let lines = collect_lines(replica.take_stderr().unwrap());
    let client = reqwest::Client::new();
    let first = reserve(&client, &replica, &site.url("/a")).await;
    assert_eq!(first["scope"], "fleet", "{first}");
    assert_eq!(replica.metric("robotsd_pace_alone").await, 0.0);

    // One failed call: the breaker (three in a row) is still closed, and everything says alone.
    redis.kill();
    let second = reserve(&client, &replica, &site.url("/b")).await;
    assert_eq!(second["scope"], "local", "{second}");
    assert_eq!(replica.metric("robotsd_pace_alone").await, 1.0);
    assert_eq!(
        replica
            .metric("robotsd_pace_alone_total{cause=\"store_down\"}")
            .await,
        1.0
    );
    assert_eq!(
        replica.metric("robotsd_store_up{backend=\"redis\"}").await,
        0.0
    );
    assert_eq!(
        replica
            .metric("robotsd_store_breaker_open{backend=\"redis\"}")
            .await,
        0.0
    );
    assert!(
        eventually(|| line_with(&lines, "decides fetch slots alone").is_some()).await,
        "no line for the first slot decided alone"
    );
    let line = line_with(&lines, "decides fetch slots alone").unwrap();
    assert_eq!(line["level"], "WARN", "{line}");
    assert_eq!(line["fields"]["cause"], "store_down", "{line}");
    assert_eq!(line["fields"]["fleet_index"], 1, "{line}");

    // Back, empty: seen without traffic, said once each way.
    redis.restart().await;
    assert!(
        crate::support::eventually_async(|| async {
            replica.metric("robotsd_store_up{backend=\"redis\"}").await == 1.0
        })
        .await,
        "the store's return was not seen"
    );
    assert!(line_with(&lines, "answers again").is_some());
    let third = reserve(&client, &replica, &site.url("/c")).await;
    assert_eq!(third["scope"], "fleet", "{third}");
    assert_eq!(replica.metric("robotsd_pace_alone").await, 0.0);
    assert!(
        eventually(|| line_with(&lines, "decides fetch slots for the fleet again").is_some()).await
    );
}
