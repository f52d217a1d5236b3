//! The transitions of docs/politeness.md's table, one test each.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use super::proxy::{Cut, Proxy};
use super::{
    FLEET, Slot, assert_polite, crawl, crawl_with, line_with, rate, replica, until_arrivals,
};
use crate::pacing::Site;
use crate::redis_sentinel::{MASTER_NAME, RedisSentinel};
use crate::redis_server::RedisServer;
use crate::support::Robotsd;

const ROBOTS: &str = "User-agent: *\nCrawl-delay: 0.5\n";

/// Three replicas on `redis`, replica 0 through `proxy` when given.
async fn fleet(redis: &RedisServer, proxy: Option<&Proxy>) -> (Vec<Slot>, Vec<Robotsd>) {
    let slots: Vec<Slot> = (0..FLEET).map(|_| Slot::default()).collect();
    let mut processes = Vec::new();
    for (index, slot) in slots.iter().enumerate() {
        let url = match (index, proxy) {
            (0, Some(proxy)) => format!("redis://127.0.0.1:{}", proxy.port),
            _ => redis.url(),
        };
        processes.push(replica(index, &url, &[], slot).await);
    }
    (slots, processes)
}

/// One replica cut off from Redis for 10 s (`cut`), the other two on it, then healed.
async fn one_replica_cut_off(cut: Cut) {
    let redis = RedisServer::start().await;
    let proxy = Proxy::start(SocketAddr::from(([127, 0, 0, 1], redis.port))).await;
    let site = Arc::new(Site::start(ROBOTS).await);
    let (slots, _processes) = fleet(&redis, Some(&proxy)).await;
    let stop = Instant::now() + Duration::from_secs(45);
    let crawling = crawl(&site, &slots, stop);
    let chaos = async {
        until_arrivals(&site, 6).await;
        let up_from = SystemTime::now();
        tokio::time::sleep(Duration::from_secs(5)).await;
        let cut_at = SystemTime::now();
        proxy.set(cut);
        tokio::time::sleep(Duration::from_secs(10)).await;
        let healed_at = SystemTime::now();
        proxy.set(Cut::Pass);
        (up_from, cut_at, healed_at)
    };
    let (fetched, (up_from, cut_at, healed_at)) = tokio::join!(crawling, chaos);
    assert_polite(&format!("one replica cut off ({cut:?})"), &site, &fetched);
    // The cut replica said it was alone, and said so at once (the workers read its counter).
    assert!(
        line_with(&slots[0].lines(), "the shared store is down for robotsd").is_some(),
        "the cut replica never said the store was down"
    );
    // Everything up: close to one fetch a period. Cut off: the others keep theirs.
    let up = rate(&site, up_from, cut_at);
    let during = rate(&site, cut_at, healed_at);
    eprintln!("one replica cut off ({cut:?}): {up:.2} a period up, {during:.2} while cut off");
    assert!(up >= 0.8, "{up:.2} fetches a period with everything up");
    assert!(
        during >= 0.3,
        "{during:.2} fetches a period while one replica was cut off"
    );
}

#[tokio::test]
async fn one_replica_reset_off_redis_never_brings_two_fetches_under_the_crawl_delay() {
    one_replica_cut_off(Cut::Reset).await;
}

#[tokio::test]
async fn one_replica_blackholed_off_redis_never_brings_two_fetches_under_the_crawl_delay() {
    one_replica_cut_off(Cut::Blackhole).await;
}

#[tokio::test]
async fn redis_killed_and_back_empty_never_brings_two_fetches_under_the_crawl_delay() {
    let mut redis = RedisServer::start().await;
    let site = Arc::new(Site::start(ROBOTS).await);
    let (slots, _processes) = fleet(&redis, None).await;
    let stop = Instant::now() + Duration::from_secs(40);
    let crawling = crawl(&site, &slots, stop);
    let chaos = async {
        until_arrivals(&site, 6).await;
        tokio::time::sleep(Duration::from_secs(3)).await;
        redis.kill();
        tokio::time::sleep(Duration::from_secs(4)).await;
        redis.restart().await;
    };
    let (fetched, ()) = tokio::join!(crawling, chaos);
    assert_polite("Redis killed, back empty 4 s later", &site, &fetched);
    assert!(fetched.iter().any(|f| f.scope == "fleet"));
    for slot in &slots {
        assert!(
            line_with(&slot.lines(), "answers again").is_some(),
            "a replica never said the store answered again"
        );
    }
}

#[tokio::test]
async fn a_replica_restarted_mid_crawl_never_brings_two_fetches_under_the_crawl_delay() {
    let redis = RedisServer::start().await;
    let site = Arc::new(Site::start(ROBOTS).await);
    let (slots, mut processes) = fleet(&redis, None).await;
    let stop = Instant::now() + Duration::from_secs(40);
    let crawling = crawl(&site, &slots, stop);
    let chaos = async {
        until_arrivals(&site, 6).await;
        tokio::time::sleep(Duration::from_secs(3)).await;
        // Killed, and a new process with the same index a second later.
        *slots[1].base.lock().unwrap() = None;
        drop(processes.remove(1));
        tokio::time::sleep(Duration::from_secs(1)).await;
        let again = replica(1, &redis.url(), &[], &slots[1]).await;
        processes.insert(1, again);
        processes
    };
    let (fetched, _processes) = tokio::join!(crawling, chaos);
    assert_polite("a replica restarted", &site, &fetched);
    assert!(fetched.iter().any(|f| f.replica == 1 && f.scope == "fleet"));
}

#[tokio::test]
async fn a_duplicated_index_is_seen_and_with_the_store_down_never_brings_two_fetches_under_the_crawl_delay()
 {
    let mut redis = RedisServer::start().await;
    let site = Arc::new(Site::start(ROBOTS).await);
    let (mut slots, _processes) = fleet(&redis, None).await;
    // A fourth process with index 1 (a surge, or a second release): seen, and said.
    let surge = Slot::default();
    let _fourth = replica(1, &redis.url(), &[], &surge).await;
    slots.push(surge.clone());
    let seen = Instant::now();
    while line_with(&surge.lines(), "renews this replica's --fleet-index").is_none() {
        assert!(
            seen.elapsed() < Duration::from_secs(15),
            "the duplicated index was never said"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let metrics = reqwest::get(format!("{}/metrics", surge.base().unwrap()))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics
            .lines()
            .any(|line| line == "robotsd_pace_index_duplicate 1"),
        "{metrics}"
    );
    let stop = Instant::now() + Duration::from_secs(30);
    let crawling = crawl(&site, &slots, stop);
    let chaos = async {
        until_arrivals(&site, 6).await;
        tokio::time::sleep(Duration::from_secs(3)).await;
        redis.kill();
    };
    let (fetched, ()) = tokio::join!(crawling, chaos);
    assert_polite("a duplicated index, the store down", &site, &fetched);
    assert!(
        fetched.iter().any(|f| f.scope == "local"),
        "nothing was decided alone"
    );
}

/// Three replicas on the master Sentinel names.
async fn sentinel_fleet(sentinel: &RedisSentinel) -> (Vec<Slot>, Vec<Robotsd>) {
    let slots: Vec<Slot> = (0..FLEET).map(|_| Slot::default()).collect();
    let addresses = sentinel.addresses();
    let mut processes = Vec::new();
    for (index, slot) in slots.iter().enumerate() {
        let extra = [
            "--redis-sentinel",
            addresses.as_str(),
            "--redis-sentinel-master",
            MASTER_NAME,
        ];
        processes.push(replica(index, "", &extra, slot).await);
    }
    (slots, processes)
}

/// A Sentinel failover mid-crawl: the master SIGKILLed, the replica promoted; with `lose`, the
/// replica is first stalled (`DEBUG SLEEP`) and a large write backs up the replication stream,
/// so that the slots the master granted last never reach it.
async fn failover(lose: bool) {
    let mut sentinel = if lose {
        RedisSentinel::start_with_replica_args(&["--enable-debug-command", "yes"]).await
    } else {
        RedisSentinel::start().await
    };
    let site = Arc::new(Site::start(ROBOTS).await);
    let (slots, _processes) = sentinel_fleet(&sentinel).await;
    let stop = Instant::now() + Duration::from_secs(45);
    // Enough workers that slots are reserved seconds ahead: the lost ones are still to come
    // when the replica is promoted.
    let crawling = crawl_with(&site, &slots, stop, if lose { 6 } else { 2 });
    let chaos = async {
        until_arrivals(&site, 6).await;
        tokio::time::sleep(Duration::from_secs(3)).await;
        let master = sentinel.master_port().await.expect("a master");
        if lose {
            let replica = sentinel.servers.iter().find(|s| s.port != master).unwrap();
            let mut stalled = replica.connection().await.unwrap();
            tokio::spawn(async move {
                let _: redis::RedisResult<String> = redis::cmd("DEBUG")
                    .arg("SLEEP")
                    .arg(2)
                    .query_async(&mut stalled)
                    .await;
            });
            tokio::time::sleep(Duration::from_millis(100)).await;
            let mut writer = sentinel.server(master).connection().await.unwrap();
            let ballast = vec![b'x'; 32 << 20];
            let _: () = redis::cmd("SET")
                .arg("chaos:ballast")
                .arg(ballast)
                .query_async(&mut writer)
                .await
                .unwrap();
            // Slots granted now queue behind the ballast and die with the master.
            tokio::time::sleep(Duration::from_millis(1000)).await;
        }
        sentinel.server(master).kill();
        let promoted = Instant::now();
        while sentinel
            .master_port()
            .await
            .is_none_or(|port| port == master)
        {
            assert!(
                promoted.elapsed() < Duration::from_secs(30),
                "the sentinels did not promote the replica"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let (fetched, ()) = tokio::join!(crawling, chaos);
    let scenario = if lose {
        "Sentinel failover with lost writes"
    } else {
        "Sentinel failover"
    };
    assert_polite(scenario, &site, &fetched);
    assert!(fetched.iter().any(|f| f.scope == "fleet"));
}

#[tokio::test]
async fn a_sentinel_failover_never_brings_two_fetches_under_the_crawl_delay() {
    failover(false).await;
}

#[tokio::test]
async fn a_failover_that_loses_the_last_grants_never_brings_two_fetches_under_the_crawl_delay() {
    failover(true).await;
}
