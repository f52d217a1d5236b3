//! Lanes and reports as a fleet sees them: which origins share a pace, and which reports robotsd
//! takes (docs/politeness.md), through `robotsd` processes and a real `redis-server`.

use serde_json::{Value, json};

use super::{Site, millis_since_epoch, replicas, reserve};
use crate::redis_server::RedisServer;
use crate::support::{Robotsd, post_value};

/// Reports about origins nobody checked are answered `applied: false` and leave nothing in
/// Redis, while a checked origin's Retry-After reaches every replica.
#[tokio::test]
async fn reports_about_origins_nobody_checked_leave_nothing_in_redis() {
    let redis = RedisServer::start().await;
    let mut connection = redis.connection().await.unwrap();
    let site = Site::start("User-agent: *\nCrawl-delay: 0.1\n").await;
    let replicas = replicas(&redis, &[]).await;
    let client = reqwest::Client::new();
    // One origin checked (without pace=true): its record is in Redis.
    let checked = client
        .get(
            url::Url::parse_with_params(
                &replicas[0].url("/v1/check"),
                [("url", site.url("/a").as_str()), ("ua", "FleetBot")],
            )
            .unwrap(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(checked.status(), 200);
    let keys_before: u64 = redis::cmd("DBSIZE")
        .query_async(&mut connection)
        .await
        .unwrap();

    for chunk in 0..5 {
        let reports: Vec<Value> = (0..1_000)
            .map(|i| {
                json!({"url": format!("https://made-up-{chunk}-{i}.test/x"), "status": 429,
                    "retry_after": "600"})
            })
            .collect();
        let (status, answer) = post_value(
            &replicas[chunk % 3].url("/v1/feedback"),
            &json!({ "reports": reports }),
        )
        .await;
        assert_eq!(status, 200, "{answer}");
        for result in answer["results"].as_array().unwrap() {
            assert_eq!(result["applied"], false, "{result}");
            assert_eq!(result["pace"]["slowdown"], 1.0, "{result}");
        }
    }
    let keys_after: u64 = redis::cmd("DBSIZE")
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!(
        keys_after <= keys_before + 100,
        "{keys_before} keys before, {keys_after} after"
    );

    // The checked origin, reported through another replica, holds back a third.
    let (status, answer) = post_value(
        &replicas[1].url("/v1/feedback"),
        &json!({"reports": [{"url": site.url("/b"), "status": 429, "retry_after": "30"}]}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["results"][0]["applied"], true, "{answer}");
    let held = reserve(&client, &replicas[2], &site.url("/c")).await;
    assert_eq!(held["interval_source"], "pushback", "{held}");
    assert!(held["wait_ms"].as_u64().unwrap() > 20_000, "{held}");
}

/// Lanes by host by default: two origins of one host (two ports) share its pace, as the site
/// sees it; by origin each has its own.
#[tokio::test]
async fn origins_of_one_host_share_a_lane_by_default_and_not_by_origin() {
    let one = Site::start("User-agent: *\nCrawl-delay: 0.5\n").await;
    let two = Site::start("User-agent: *\nCrawl-delay: 0.5\n").await;
    let client = reqwest::Client::new();
    for (args, apart) in [(&[][..], true), (&["--pace-key", "origin"][..], false)] {
        let mut all = vec!["--allow-private-networks"];
        all.extend_from_slice(args);
        let robotsd = Robotsd::start(&all, false).await;
        let first = reserve(&client, &robotsd, &one.url("/a")).await;
        let second = reserve(&client, &robotsd, &two.url("/b")).await;
        let gap = millis_since_epoch(&second["not_before"])
            .saturating_sub(millis_since_epoch(&first["not_before"]));
        if apart {
            assert_eq!(first["lane"], "host:127.0.0.1", "{first}");
            assert_eq!(second["lane"], "host:127.0.0.1", "{second}");
            assert!(gap >= 500, "{gap} ms: {first} {second}");
        } else {
            assert_eq!(first["lane"], format!("origin:{}", one.url("")), "{first}");
            // Its own lane: the second origin's first slot is now, however long it took to ask.
            assert_eq!(second["wait_ms"], 0, "{gap} ms: {first} {second}");
        }
    }
}

/// A connection refused or reset is reported as such: a pushback, counted apart from timeouts.
#[tokio::test]
async fn refused_and_reset_connections_are_reported_as_such() {
    let site = Site::start("User-agent: *\nCrawl-delay: 0.1\n").await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    let client = reqwest::Client::new();
    reserve(&client, &robotsd, &site.url("/a")).await;
    let (status, answer) = post_value(
        &robotsd.url("/v1/feedback"),
        &json!({"reports": [
            {"url": site.url("/a"), "connection": "refused"},
            {"url": site.url("/b"), "connection": "reset"},
            {"url": site.url("/d"), "connection": "reset", "timeout": true},
        ]}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let results = answer["results"].as_array().unwrap();
    assert_eq!(results[0]["applied"], true, "{answer}");
    // Doubled twice; the slowdown decays between the two reports (half-life 60 s), so it is a
    // hair under 4 when time passes between them.
    let slowdown = results[1]["pace"]["slowdown"].as_f64().unwrap();
    assert!(slowdown > 3.5 && slowdown <= 4.0, "{answer}");
    assert_eq!(
        results[2]["error"]["type"], "urn:robotsd:problem:invalid-report",
        "{answer}"
    );
    // A failure robotsd does not know is a malformed body, said plainly.
    let (status, answer) = post_value(
        &robotsd.url("/v1/feedback"),
        &json!({"reports": [{"url": site.url("/c"), "connection": "closed"}]}),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["detail"]
            .as_str()
            .unwrap()
            .contains("expected `refused` or `reset`"),
        "{answer}"
    );
    for kind in ["refused", "reset"] {
        let series = format!("robotsd_pace_reports_total{{signal=\"{kind}\"}}");
        assert_eq!(robotsd.metric(&series).await, 1.0, "{kind}");
    }
    assert_eq!(
        robotsd
            .metric("robotsd_pace_reports_total{signal=\"timeout\"}")
            .await,
        0.0
    );
}

/// Lanes by address: `localhost` and `127.0.0.1` are two host names of one server, and with
/// `--pace-key address` they share its pace; by host (the default) each name has its own.
#[tokio::test]
async fn two_names_of_one_address_share_a_lane_by_address_and_not_by_host() {
    let site = Site::start("User-agent: *\nCrawl-delay: 0.5\n").await;
    let by_name = site.url("/b").replace("127.0.0.1", "localhost");
    let client = reqwest::Client::new();
    for (key, shared) in [("address", true), ("host", false)] {
        let robotsd = Robotsd::start(&["--allow-private-networks", "--pace-key", key], false).await;
        let first = reserve(&client, &robotsd, &site.url("/a")).await;
        let second = reserve(&client, &robotsd, &by_name).await;
        let gap = millis_since_epoch(&second["not_before"])
            .saturating_sub(millis_since_epoch(&first["not_before"]));
        if shared {
            assert_eq!(first["lane"], "address:127.0.0.1", "{first}");
            assert_eq!(second["lane"], "address:127.0.0.1", "{second}");
            assert!(gap >= 500, "{gap} ms: {first} {second}");
        } else {
            assert_eq!(second["lane"], "host:localhost", "{second}");
            assert_eq!(second["wait_ms"], 0, "{gap} ms: {first} {second}");
        }
    }
}

/// A fleet by address: the address travels with the robots.txt record, so a replica that took
/// the copy from Redis reserves in the same lane, and a report reaching a replica that never
/// checked the origin lands in that lane too.
#[tokio::test]
async fn by_address_a_fleet_shares_the_lane_and_its_pushback() {
    let redis = RedisServer::start().await;
    let site = Site::start("User-agent: *\nCrawl-delay: 0.5\n").await;
    let by_name = site.url("/b").replace("127.0.0.1", "localhost");
    let replicas = replicas(&redis, &["--pace-key", "address"]).await;
    let client = reqwest::Client::new();
    let first = reserve(&client, &replicas[0], &site.url("/a")).await;
    let second = reserve(&client, &replicas[1], &by_name).await;
    assert_eq!(first["lane"], "address:127.0.0.1", "{first}");
    assert_eq!(second["lane"], "address:127.0.0.1", "{second}");
    let gap = millis_since_epoch(&second["not_before"])
        .saturating_sub(millis_since_epoch(&first["not_before"]));
    assert!(gap >= 500, "{gap} ms: {first} {second}");

    // The third replica never checked `localhost`: the address comes from the record.
    let (status, answer) = post_value(
        &replicas[2].url("/v1/feedback"),
        &json!({"reports": [{"url": by_name, "status": 429, "retry_after": "30"}]}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["results"][0]["applied"], true, "{answer}");
    assert_eq!(
        answer["results"][0]["pace"]["lane"], "address:127.0.0.1",
        "{answer}"
    );
    // And it holds back the other name of the server, through the replica that checked it.
    let held = reserve(&client, &replicas[0], &site.url("/c")).await;
    assert_eq!(held["interval_source"], "pushback", "{held}");
    assert!(held["wait_ms"].as_u64().unwrap() > 20_000, "{held}");
}

/// Through `--proxy` robotsd connects to the proxy and never learns the server's address:
/// lanes by address are by host, and the lane says so.
#[tokio::test]
async fn by_address_through_a_proxy_the_lane_is_the_host() {
    let site = Site::start("User-agent: *\nCrawl-delay: 0.5\n").await;
    // The site answers the proxied requests itself (their targets are absolute URLs).
    let proxy = site.url("");
    let robotsd = Robotsd::start(
        &[
            "--allow-private-networks",
            "--pace-key",
            "address",
            "--proxy",
            &proxy,
        ],
        false,
    )
    .await;
    let client = reqwest::Client::new();
    let pace = reserve(&client, &robotsd, &site.url("/a")).await;
    assert_eq!(pace["lane"], "host:127.0.0.1", "{pace}");
    assert_eq!(pace["outcome"], "reserved", "{pace}");
}
