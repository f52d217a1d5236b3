//! A Redis Cluster with a replica per master, whose master dies under a fleet of robotsd
//! processes that were given that very node's address: answers go on, the replicas follow the
//! promoted replica by themselves, and what was replicated before the failover is still shared
//! after it.

use std::time::Duration;

use serde_json::Value;

use super::{Load, check, store_up_on_every_replica};
use crate::redis_server::RedisCluster;
use crate::support::{OriginServer, Robotsd, ok, origin, within};

async fn replica(url: &str) -> Robotsd {
    Robotsd::start(
        &[
            "--allow-private-networks",
            "--redis-url",
            url,
            "--redis-cluster",
        ],
        false,
    )
    .await
}

fn robots_hits(site: &OriginServer) -> usize {
    site.hits()
}

#[tokio::test]
async fn a_master_killed_under_load_is_followed_and_what_it_replicated_is_still_shared() {
    let mut cluster = RedisCluster::start_with_replicas().await;
    let before = origin(|| ok("User-agent: *\nDisallow: /private\n")).await;
    let record = format!("robotsd:{{{}}}:rec", before.base());
    let master = cluster
        .master_of(&record)
        .expect("a master serves the record");
    // The replicas are given the node that will die: they must not need it after their first
    // connection.
    let seed = cluster.url_of(master);
    let replicas = [
        replica(&seed).await,
        replica(&seed).await,
        replica(&seed).await,
    ];
    // An origin fetched before the failover, by one replica, for the fleet.
    let (status, answer) = check(&replicas[0], &before.url("/a")).await;
    assert_eq!(
        (status, answer["allowed"].clone()),
        (200, Value::Bool(true)),
        "{answer}"
    );
    cluster.wait_replicated(master).await;

    // The master of the origin's record dies, while checks go on through every replica.
    let load = Load::start(
        &replicas.iter().collect::<Vec<_>>(),
        before.url("/a"),
        before.url("/private/x"),
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    cluster.kill_node(master);
    let promoted = within(Duration::from_secs(30), || async {
        cluster.master_of(&record).is_some_and(|now| now != master)
    })
    .await
    .expect("the cluster promoted the replica");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let answers = load.every_answer_right().await;
    assert!(answers > 30, "{answers} answers");

    // Every replica finds the store up again by itself, no traffic needed.
    store_up_on_every_replica(
        &replicas.iter().collect::<Vec<_>>(),
        Duration::from_secs(20),
    )
    .await;

    // A replica started after the failover answers the origin from the promoted master's copy.
    let survivor = (0..cluster.nodes.len()).find(|&i| i != master).unwrap();
    let fresh = replica(&cluster.url_of(survivor)).await;
    let hits = robots_hits(&before);
    let (status, answer) = check(&fresh, &before.url("/private/y")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["allowed"], false, "{answer}");
    assert_eq!(answer["robots"]["cache"], "shared", "{answer}");
    assert_eq!(robots_hits(&before), hits, "fetched again");

    // A new origin's cold checks across the fleet make one fetch, once every replica's cluster
    // client has the new slot map: right away when it has already met the dead master's slots,
    // after its next slot refresh when it has not (on a loaded machine, that took a few
    // seconds once). Each try is a new origin; 20 s allow for a busy machine.
    let all = [&replicas[0], &replicas[1], &replicas[2], &fresh];
    let started = tokio::time::Instant::now();
    let mut tries = Vec::new();
    loop {
        let after = origin(|| ok("User-agent: *\nDisallow: /\n")).await;
        let cold = after.url("/x");
        let answers = futures_util::future::join_all(all.iter().map(|r| check(r, &cold))).await;
        for (status, answer) in &answers {
            assert_eq!(
                (*status, answer["allowed"].clone()),
                (200, Value::Bool(false)),
                "{answer}"
            );
        }
        tries.push(robots_hits(&after));
        if robots_hits(&after) == 1 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "fetches of each new origin, try by try: {tries:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    eprintln!("promoted after {promoted:?}; fetches of new origins, try by try: {tries:?}");
}
