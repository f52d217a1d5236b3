//! A Redis that answers but refuses writes (docs/fleet.md, "When Redis is down, slow or
//! refusing writes"): robotsd treats it as down, says so in its log and in `robotsd_store_up`,
//! answers alone meanwhile, and shares again once the store accepts writes, through a real
//! `redis-server` and the binary.

use std::time::Duration;

use serde_json::Value;

use crate::redis_server::RedisServer;
use crate::support::{Robotsd, json_of, lines_of, ok, origin, within};

/// Polls `cond` for up to 30 s: a bound a busy machine never reaches when things work (the
/// recovery probe runs every 2 s at most).
async fn within_30s<F, Fut>(cond: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    within(Duration::from_secs(30), cond).await.is_some()
}

async fn pace(robotsd: &Robotsd, url: &str) -> Value {
    let check = url::Url::parse_with_params(
        &robotsd.url("/v1/check"),
        [("url", url), ("ua", "FleetBot"), ("pace", "true")],
    )
    .unwrap();
    let response = reqwest::get(check).await.expect("robotsd answered");
    assert_eq!(response.status(), 200);
    json_of(response).await["pace"].clone()
}

#[tokio::test]
async fn a_redis_that_refuses_writes_is_down_said_and_shared_with_again_once_it_accepts_them() {
    let redis = RedisServer::start().await;
    let mut connection = redis.connection().await.unwrap();
    let site = origin(|| ok("User-agent: *\nCrawl-delay: 0.1\n")).await;
    let mut robotsd = Robotsd::start_with(
        &[
            "--allow-private-networks",
            "--redis-url",
            &redis.url(),
            "--log-format",
            "json",
        ],
        false,
        std::process::Stdio::piped(),
    )
    .await;
    let lines = lines_of(robotsd.take_stderr().unwrap());
    assert_eq!(pace(&robotsd, &site.url("/a")).await["scope"], "fleet");
    assert_eq!(
        robotsd.metric("robotsd_store_up{backend=\"redis\"}").await,
        1.0
    );

    // Every write now fails with OOM (noeviction is Redis's default policy); reads still work.
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg("1")
        .query_async(&mut connection)
        .await
        .unwrap();
    // Still answered, from this replica alone.
    assert_eq!(pace(&robotsd, &site.url("/b")).await["scope"], "local");
    assert!(
        within_30s(|| async { robotsd.metric("robotsd_store_up{backend=\"redis\"}").await == 0.0 })
            .await,
        "a store that refuses writes is not up"
    );
    let said = |lines: &[String]| {
        lines.iter().any(|l| {
            l.contains("WARN") && l.contains("the shared store is down") && l.contains("OOM")
        })
    };
    assert!(
        within_30s(|| async { said(&lines.lock().unwrap()) }).await,
        "no WARN line: {:?}",
        lines.lock().unwrap()
    );
    // Answers go on meanwhile, on their own.
    assert_eq!(pace(&robotsd, &site.url("/c")).await["scope"], "local");

    // Writes accepted again: up again without traffic, and sharing again.
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg("0")
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!(
        within_30s(|| async { robotsd.metric("robotsd_store_up{backend=\"redis\"}").await == 1.0 })
            .await,
        "the store accepts writes again"
    );
    assert_eq!(pace(&robotsd, &site.url("/d")).await["scope"], "fleet");
    let _ = robotsd.exited();
}

/// After a failover, a connection that still reaches the old master, now a replica, gets
/// `READONLY` for every write: the same shape, the same answer.
#[tokio::test]
async fn a_replica_that_answers_readonly_is_down_until_it_is_a_master_again() {
    let master = RedisServer::start().await;
    let replica = RedisServer::start().await;
    let mut connection = replica.connection().await.unwrap();
    let address = url::Url::parse(&master.url()).unwrap();
    let _: () = redis::cmd("REPLICAOF")
        .arg(address.host_str().unwrap())
        .arg(address.port().unwrap())
        .query_async(&mut connection)
        .await
        .unwrap();
    let site = origin(|| ok("User-agent: *\nCrawl-delay: 0.1\n")).await;
    let mut robotsd = Robotsd::start_with(
        &[
            "--allow-private-networks",
            "--redis-url",
            &replica.url(),
            "--log-format",
            "json",
        ],
        false,
        std::process::Stdio::piped(),
    )
    .await;
    let lines = lines_of(robotsd.take_stderr().unwrap());
    assert_eq!(pace(&robotsd, &site.url("/a")).await["scope"], "local");
    assert!(
        within_30s(|| async { robotsd.metric("robotsd_store_up{backend=\"redis\"}").await == 0.0 })
            .await
    );
    assert!(
        within_30s(|| async {
            lines
                .lock()
                .unwrap()
                .iter()
                .any(|l| l.contains("the shared store is down") && l.contains("read only replica"))
        })
        .await,
        "{:?}",
        lines.lock().unwrap()
    );
    // Promoted: a master again, up again without traffic.
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query_async(&mut connection)
        .await
        .unwrap();
    assert!(
        within_30s(|| async { robotsd.metric("robotsd_store_up{backend=\"redis\"}").await == 1.0 })
            .await
    );
    assert_eq!(pace(&robotsd, &site.url("/b")).await["scope"], "fleet");
    let _ = robotsd.exited();
}
