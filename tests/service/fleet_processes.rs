//! The fleet tier (docs/fleet.md) as a fleet of processes: each replica a `robotsd` process of
//! its own, with its own connections, breaker and clock, against a real `redis-server` started
//! and stopped by the test.

use std::time::Duration;

use futures_util::future::join_all;

use crate::redis_server::RedisServer;
use crate::support::*;

const RULES: &str = "User-agent: *\nDisallow: /private\n";
const STORE_UP: &str = "robotsd_store_up{backend=\"redis\"}";

#[tokio::test]
async fn replicas_see_redis_come_back_without_traffic_and_share_the_next_burst() {
    let mut redis = RedisServer::start().await;
    let url = redis.url();
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(
            Robotsd::start(
                &[
                    "--allow-private-networks",
                    "--redis-url",
                    &url,
                    "--store-timeout",
                    "200ms",
                ],
                true,
            )
            .await,
        );
    }
    let client = reqwest::Client::new();
    let check = |replica: &Robotsd, url: String| {
        let request = client.get(
            url::Url::parse_with_params(
                &replica.url("/v1/check"),
                [("url", url), ("ua", "bot".into())],
            )
            .unwrap(),
        );
        async move {
            let response = request.send().await.expect("robotsd answered");
            assert_eq!(response.status(), 200);
            json_of(response).await
        }
    };

    redis.kill();
    // A few checks of new origins: answered, each replica fetching alone, until the breaker
    // opens.
    for (i, replica) in replicas.iter().enumerate() {
        for _ in 0..4 {
            let site = origin(|| ok(RULES)).await;
            let answer = check(replica, site.url("/private")).await;
            assert_eq!(answer["allowed"], false, "replica {i}: {answer}");
        }
        assert_eq!(replica.metric(STORE_UP).await, 0.0, "replica {i}");
    }

    redis.restart().await;
    let back = tokio::time::Instant::now();
    // No traffic: each replica finds out by itself.
    for (i, replica) in replicas.iter().enumerate() {
        assert!(
            eventually_async(|| async { replica.metric(STORE_UP).await == 1.0 }).await,
            "replica {i} still reports the store down"
        );
    }
    let took = back.elapsed();
    assert!(took < Duration::from_secs(5), "{took:?} to see Redis back");

    // The first burst after the outage is shared: one fetch for 30 concurrent checks of a new
    // origin over the three replicas.
    let site = origin(|| ok(RULES)).await;
    site.set_delay(Duration::from_millis(200));
    let burst = (0..30).map(|i| check(&replicas[i % 3], site.url(&format!("/private/{i}"))));
    for answer in join_all(burst).await {
        assert_eq!(answer["allowed"], false, "{answer}");
    }
    assert_eq!(
        site.hits(),
        1,
        "the burst after the outage fetched {} times",
        site.hits()
    );
}

/// Every store call a replica has made, by `op`, from its metrics.
async fn store_calls(replica: &Robotsd) -> std::collections::BTreeMap<String, f64> {
    let text = reqwest::get(replica.admin_url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let mut calls = std::collections::BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("robotsd_store_operations_total{") else {
            continue;
        };
        let op = rest
            .split("op=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap();
        let value: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        *calls.entry(op.to_string()).or_insert(0.0) += value;
    }
    calls
}

/// The store calls made between two readings of [`store_calls`], those made only.
fn calls_made(
    before: &std::collections::BTreeMap<String, f64>,
    after: &std::collections::BTreeMap<String, f64>,
) -> Vec<(String, f64)> {
    after
        .iter()
        .map(|(op, n)| (op.clone(), n - before.get(op).copied().unwrap_or(0.0)))
        .filter(|(_, n)| *n > 0.0)
        .collect()
}

/// A replica's answer to a check of `url` for `bot`, as JSON.
async fn check_on(client: &reqwest::Client, replica: &Robotsd, url: &str) -> serde_json::Value {
    let request =
        url::Url::parse_with_params(&replica.url("/v1/check"), [("url", url), ("ua", "bot")])
            .unwrap();
    json_of(client.get(request).send().await.expect("robotsd answered")).await
}

/// A `redis-server` and two replica processes on it, with their defaults.
async fn two_replicas() -> (RedisServer, Robotsd, Robotsd) {
    let redis = RedisServer::start().await;
    let url = redis.url();
    let args = ["--allow-private-networks", "--redis-url", url.as_str()];
    let (a, b) = (
        Robotsd::start(&args, true).await,
        Robotsd::start(&args, true).await,
    );
    (redis, a, b)
}

#[tokio::test]
async fn a_miss_answered_from_redis_costs_one_round_trip() {
    // Held to the test's end: dropping it stops the server.
    let (_redis, a, b) = two_replicas().await;
    let client = reqwest::Client::new();
    // B's connection is made (its first call), so that only the measured check counts.
    let warm = origin(|| ok(RULES)).await;
    check_on(&client, &b, &warm.url("/")).await;
    let site = origin(|| ok(RULES)).await;
    assert_eq!(
        check_on(&client, &a, &site.url("/private")).await["robots"]["cache"],
        "miss"
    );
    let before = store_calls(&b).await;
    let answer = check_on(&client, &b, &site.url("/private")).await;
    assert_eq!(answer["robots"]["cache"], "shared", "{answer}");
    let made = calls_made(&before, &store_calls(&b).await);
    assert_eq!(
        made,
        [("load".to_string(), 1.0)],
        "store calls of one L1 miss"
    );
    assert_eq!(site.hits(), 1);
}

/// A miss that nobody has fetched costs two round trips: the read that finds nothing takes the
/// lease in the same script, and the write of the result releases it. Counted by the replica's
/// metrics and at the server (`INFO commandstats`: three script calls before the read took the
/// lease).
#[tokio::test]
async fn a_miss_fetched_under_the_lease_costs_two_round_trips() {
    let redis = RedisServer::start().await;
    let url = redis.url();
    let args = ["--allow-private-networks", "--redis-url", url.as_str()];
    let replica = Robotsd::start(&args, true).await;
    let client = reqwest::Client::new();
    // The connection is made (its first call), so that only the measured check counts.
    let warm = origin(|| ok(RULES)).await;
    check_on(&client, &replica, &warm.url("/")).await;
    let site = origin(|| ok(RULES)).await;
    let before = store_calls(&replica).await;
    let scripts_before = redis.script_calls().await;
    let answer = check_on(&client, &replica, &site.url("/private")).await;
    assert_eq!(answer["robots"]["cache"], "miss", "{answer}");
    let made = calls_made(&before, &store_calls(&replica).await);
    let made: Vec<(&str, f64)> = made.iter().map(|(op, n)| (op.as_str(), *n)).collect();
    assert_eq!(
        made,
        [("load", 1.0), ("save", 1.0)],
        "store calls of one miss fetched"
    );
    assert_eq!(
        redis.script_calls().await - scripts_before,
        2,
        "the read that took the lease, and the write that released it"
    );
    assert_eq!(site.hits(), 1);
    // The lease was let go with the write: another replica's refresh may take it at once.
    let mut connection = redis.connection().await.unwrap();
    let key = format!("robotsd:{{{}}}:lease", site.url("").trim_end_matches('/'));
    let held: Option<String> = redis::cmd("GET")
        .arg(&key)
        .query_async(&mut connection)
        .await
        .unwrap();
    assert_eq!(held, None, "{key}");
    let stored: bool = redis::cmd("EXISTS")
        .arg(key.replace(":lease", ":rec"))
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!(stored);
}

/// A replica whose cache is far too small for the origins it is asked about, as at a million
/// origins: a copy its cache drops (or does not admit, right after the fetch) is read back from
/// Redis, so no check answers `cache-full`, and no origin is fetched twice.
#[tokio::test]
async fn a_full_cache_answers_from_redis_what_it_dropped() {
    let redis = RedisServer::start().await;
    let url = redis.url();
    let replica = Robotsd::start(
        &[
            "--allow-private-networks",
            "--redis-url",
            &url,
            "--cache-capacity",
            "32KiB",
        ],
        true,
    )
    .await;
    // About a kilobyte of rules each: the cache holds a few dozen of the 150.
    let rules: String = (0..40).fold(RULES.to_owned(), |mut rules, n| {
        rules.push_str(&format!("Disallow: /section-{n}/archive\n"));
        rules
    });
    let mut sites = Vec::new();
    for _ in 0..150 {
        let rules = rules.clone();
        sites.push(origin(move || ok(&rules)).await);
    }
    let client = reqwest::Client::new();
    let urls: Vec<String> = sites.iter().map(|site| site.url("/private/x")).collect();
    for round in 0..3 {
        let body = serde_json::json!({"ua": "bot", "urls": urls});
        let response = client
            .post(replica.url("/v1/check"))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .expect("robotsd answered");
        assert_eq!(response.status(), 200);
        let answer = json_of(response).await;
        let results = answer["results"].as_array().expect("results");
        for result in results {
            assert_eq!(result["allowed"], false, "round {round}: {result}");
        }
    }
    let evictions = replica.metric("robotsd_cache_evictions_total").await;
    assert!(evictions > 0.0, "the cache never filled up");
    for (n, site) in sites.iter().enumerate() {
        assert_eq!(site.hits(), 1, "origin {n} fetched {} times", site.hits());
    }
}

/// A miss whose read finds the lease held (another replica is fetching the origin) waits for
/// that replica's result without asking for the lease itself: its read, then reads until the
/// result is there; no lease call, and one fetch for both.
#[tokio::test]
async fn a_miss_that_finds_the_lease_held_waits_without_asking_for_it() {
    let (redis, a, b) = two_replicas().await;
    let client = reqwest::Client::new();
    for replica in [&a, &b] {
        let warm = origin(|| ok(RULES)).await;
        check_on(&client, replica, &warm.url("/")).await;
    }
    let site = origin(|| ok(RULES)).await;
    // Slow enough that b's check comes while a's fetch is under way, on any machine.
    site.set_delay(Duration::from_secs(3));
    let target = site.url("/private");
    let lease = format!("robotsd:{{{}}}:lease", site.base());
    let waiter = async {
        let mut connection = redis.connection().await.unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let held: Option<String> = redis::cmd("GET")
                .arg(&lease)
                .query_async(&mut connection)
                .await
                .unwrap();
            if held.is_some() {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "a never took the lease"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let before = store_calls(&b).await;
        let answer = check_on(&client, &b, &target).await;
        (answer, calls_made(&before, &store_calls(&b).await))
    };
    let (fetched, (waited, calls)) = tokio::join!(check_on(&client, &a, &target), waiter);
    assert_eq!(fetched["robots"]["cache"], "miss", "{fetched}");
    assert_eq!(waited["allowed"], false, "{waited}");
    let calls: std::collections::BTreeMap<String, f64> = calls.into_iter().collect();
    assert_eq!(calls.get("lease"), None, "{calls:?}");
    assert!(
        calls.get("load").copied().unwrap_or(0.0) >= 2.0,
        "the read, then at least one for the result: {calls:?}"
    );
    assert_eq!(site.hits(), 1);
}
