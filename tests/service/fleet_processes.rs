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
