//! Deferrals a replica knows from what Redis last answered about a lane
//! (`pace_policy::FleetView`): answered without a store call, never a slot handed out or
//! withheld that Redis would not, and the site still sees the crawl-delay.

use std::time::Duration;

use futures_util::future::join_all;

use super::{Site, millis_since_epoch, replicas, reserve};
use crate::redis_server::RedisServer;

#[tokio::test]
async fn a_replica_defers_a_full_lane_without_asking_redis_and_the_site_still_sees_the_crawl_delay()
{
    let redis = RedisServer::start().await;
    // Slots 5.05 s apart (the crawl-delay and the guard band), at most 1 s ahead: after one slot
    // the lane is full for about four seconds, a wide margin on a busy machine.
    let site = Site::start("User-agent: *\nCrawl-delay: 5\n").await;
    let fleet = replicas(&redis, &["--max-pace-wait", "1s", "--store-timeout", "2s"]).await;
    let (a, b) = (&fleet[0], &fleet[1]);
    let client = reqwest::Client::new();
    let url = site.url("/page");

    // The other replica holds the site's robots.txt too (its reads of the record are script
    // calls of their own).
    let check = url::Url::parse_with_params(
        &b.url("/v1/check"),
        [("url", &url), ("ua", &"FleetBot".into())],
    )
    .unwrap();
    assert_eq!(client.get(check).send().await.unwrap().status(), 200);
    let first = reserve(&client, a, &url).await;
    assert_eq!(first["outcome"], "reserved", "{first}");
    client.get(&url).send().await.expect("the site answered");
    let slot = millis_since_epoch(&first["not_before"]);
    assert_eq!(a.metric("robotsd_pace_deferrals_known_total").await, 0.0);

    // Redis's answer showed the lane's last slot: until the next one is within the longest wait,
    // the replica knows Redis would defer, and says so without a call.
    let calls = redis.script_calls().await;
    let known = reserve(&client, a, &url).await;
    assert_eq!(redis.script_calls().await, calls, "{known}");
    assert_eq!(known["outcome"], "deferred", "{known}");
    assert_eq!(known["scope"], "fleet", "{known}");
    let ask_again = millis_since_epoch(&known["not_before"]);
    assert_eq!(ask_again, slot + 5_050 - 1_000, "{known}");
    assert_eq!(known["interval_ms"], 5_000, "{known}");
    assert_eq!(a.metric("robotsd_pace_deferrals_known_total").await, 1.0);
    assert_eq!(
        a.metric(r#"robotsd_pace_reservations_total{outcome="deferred",scope="fleet"}"#)
            .await,
        1.0
    );
    // Another replica, which has not heard of the lane, asks Redis and is told the same.
    let other = reserve(&client, b, &url).await;
    assert_eq!(redis.script_calls().await, calls + 1, "{other}");
    assert_eq!(
        millis_since_epoch(&other["not_before"]),
        ask_again,
        "{other}"
    );

    // At that time the view no longer knows: both replicas ask Redis, one of them gets the
    // next slot, and the site sees the two fetches the crawl-delay apart.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    tokio::time::sleep(Duration::from_millis(
        u64::try_from(ask_again.saturating_sub(now)).unwrap(),
    ))
    .await;
    let paces = join_all([a, b].map(|replica| reserve(&client, replica, &url))).await;
    let granted: Vec<_> = paces
        .iter()
        .filter(|p| p["outcome"] == "reserved")
        .collect();
    assert_eq!(granted.len(), 1, "{paces:?}");
    assert_eq!(millis_since_epoch(&granted[0]["not_before"]), slot + 5_050);
    tokio::time::sleep(Duration::from_millis(
        granted[0]["wait_ms"].as_u64().unwrap(),
    ))
    .await;
    client.get(&url).send().await.expect("the site answered");
    let arrivals = site.arrivals();
    assert_eq!(arrivals.len(), 2);
    let gap = arrivals[1].duration_since(arrivals[0]).unwrap();
    assert!(gap >= Duration::from_secs(5), "two fetches {gap:?} apart");
}
