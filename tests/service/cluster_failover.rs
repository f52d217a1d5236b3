//! A Redis Cluster with a replica per master, whose master dies under a fleet of robotsd
//! processes (docs/fleet.md, "Failover"): answers go on, the replicas follow the promoted
//! replica by themselves, and what was replicated before the failover is still shared after it.

use std::time::Duration;

use serde_json::Value;

use crate::redis_server::RedisCluster;
use crate::support::{OriginServer, Robotsd, json_of, ok, origin};

async fn check(robotsd: &Robotsd, url: &str) -> (u16, Value) {
    let check = url::Url::parse_with_params(
        &robotsd.url("/v1/check"),
        [("url", url), ("ua", "FleetBot")],
    )
    .unwrap();
    let response = reqwest::Client::new()
        .get(check)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .expect("robotsd answered");
    let status = response.status().as_u16();
    (status, json_of(response).await)
}

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

/// Polls `cond` for up to `limit`: the time it took, or `None`.
async fn within<F, Fut>(limit: Duration, mut cond: F) -> Option<Duration>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = tokio::time::Instant::now();
    while started.elapsed() < limit {
        if cond().await {
            return Some(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

#[tokio::test]
async fn a_master_killed_under_load_is_followed_and_what_it_replicated_is_still_shared() {
    let mut cluster = RedisCluster::start_with_replicas().await;
    let before = origin(|| ok("User-agent: *\nDisallow: /private\n")).await;
    let replicas = [
        replica(&cluster.url()).await,
        replica(&cluster.url()).await,
        replica(&cluster.url()).await,
    ];
    // An origin fetched before the failover, by one replica, for the fleet.
    let (status, answer) = check(&replicas[0], &before.url("/a")).await;
    assert_eq!(
        (status, answer["allowed"].clone()),
        (200, Value::Bool(true)),
        "{answer}"
    );
    let record = format!("robotsd:{{{}}}:rec", before.base());
    let master = cluster
        .master_of(&record)
        .expect("a master serves the record");
    cluster.wait_replicated(master).await;

    // The master of the origin's record dies, while checks go on through every replica.
    let load = {
        let urls = replicas.iter().map(|r| r.url("")).collect::<Vec<_>>();
        let (a, private) = (before.url("/a"), before.url("/private/x"));
        tokio::spawn(async move {
            let client = reqwest::Client::new();
            let mut answers = Vec::new();
            let started = tokio::time::Instant::now();
            while started.elapsed() < Duration::from_secs(6) {
                for base in &urls {
                    for (url, allowed) in [(&a, true), (&private, false)] {
                        let check = url::Url::parse_with_params(
                            &format!("{base}/v1/check"),
                            [("url", url.as_str()), ("ua", "FleetBot")],
                        )
                        .unwrap();
                        let response = client
                            .get(check)
                            .timeout(Duration::from_secs(30))
                            .send()
                            .await
                            .expect("robotsd answered");
                        let status = response.status().as_u16();
                        let body = json_of(response).await;
                        answers.push((status, body["allowed"] == allowed, body));
                    }
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            answers
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    cluster.kill_node(master);
    let promoted = within(Duration::from_secs(30), || async {
        cluster.master_of(&record).is_some_and(|now| now != master)
    })
    .await
    .expect("the cluster promoted the replica");
    let answers = load.await.unwrap();
    assert!(answers.len() > 30, "{} answers", answers.len());
    for (status, right, body) in &answers {
        assert!(*status == 200 && *right, "{status} {body}");
    }

    // Every replica finds the store up again by itself, no traffic needed.
    for robotsd in &replicas {
        let up = within(Duration::from_secs(20), || async {
            robotsd.metric("robotsd_store_up{backend=\"redis\"}").await == 1.0
        })
        .await;
        assert!(up.is_some(), "a replica did not find the promoted master");
    }

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
