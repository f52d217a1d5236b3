//! A master and replica that three sentinels watch, under a fleet of robotsd processes pointed
//! at the sentinels (`--redis-sentinel`): the master dies by SIGKILL during checks, and the
//! fleet follows the promoted replica by itself.

use std::time::{Duration, SystemTime};

use futures_util::future::join_all;
use serde_json::Value;

use super::{Load, check, check_at, store_failures, store_up_on_every_replica};
use crate::pacing::{Site, fetch_paced, millis_since_epoch};
use crate::redis_sentinel::{MASTER_NAME, RedisSentinel};
use crate::support::{Robotsd, ok, origin, within};

async fn replica(sentinel: &RedisSentinel) -> Robotsd {
    Robotsd::start(
        &[
            "--allow-private-networks",
            "--redis-sentinel",
            &sentinel.addresses(),
            "--redis-sentinel-master",
            MASTER_NAME,
        ],
        false,
    )
    .await
}

#[tokio::test]
async fn the_fleet_follows_the_master_the_sentinels_promote() {
    let mut sentinel = RedisSentinel::start().await;
    let before = origin(|| ok("User-agent: *\nDisallow: /private\n")).await;
    let replicas = [
        replica(&sentinel).await,
        replica(&sentinel).await,
        replica(&sentinel).await,
    ];
    let fleet: Vec<&Robotsd> = replicas.iter().collect();
    // An origin fetched before the failover, by one replica, for the fleet.
    let (status, answer) = check(&replicas[0], &before.url("/a")).await;
    assert_eq!(
        (status, &answer["allowed"]),
        (200, &Value::Bool(true)),
        "{answer}"
    );
    assert_eq!(answer["robots"]["cache"], "miss", "{answer}");
    // Through the master the sentinels named: the others answer from its copy.
    for robotsd in &replicas[1..] {
        let (_, answer) = check(robotsd, &before.url("/b")).await;
        assert_eq!(answer["robots"]["cache"], "shared", "{answer}");
    }
    assert_eq!(before.hits(), 1);
    sentinel.wait_replicated().await;
    let old = sentinel.master_port().await.expect("a master");

    // The master dies while checks go on through every replica.
    let load = Load::start(&fleet, before.url("/a"), before.url("/private/x"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    sentinel.server(old).kill();
    let promoted = within(Duration::from_secs(60), || async {
        sentinel.master_port().await.is_some_and(|now| now != old)
    })
    .await
    .expect("the sentinels promoted the replica");

    // Every replica finds the new master by itself, no traffic needed, within 10 s.
    let up = store_up_on_every_replica(&fleet, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let answers = load.every_answer_right().await;
    assert!(answers > 30, "{answers} answers");
    // The failover happened under every replica's eyes: its reservations met the dead master.
    for robotsd in &replicas {
        assert!(
            store_failures(robotsd).await > 0.0,
            "a replica never met the failover"
        );
    }

    // A replica started after the failover answers the origin from the promoted master's copy.
    let fresh = replica(&sentinel).await;
    let hits = before.hits();
    let (status, answer) = check(&fresh, &before.url("/private/y")).await;
    assert_eq!(
        (status, &answer["allowed"]),
        (200, &Value::Bool(false)),
        "{answer}"
    );
    assert_eq!(answer["robots"]["cache"], "shared", "{answer}");
    assert_eq!(before.hits(), hits, "fetched again");

    // A new origin's cold checks across the fleet make one fetch.
    let all = [&replicas[0], &replicas[1], &replicas[2], &fresh];
    let after = origin(|| ok("User-agent: *\nDisallow: /\n")).await;
    let cold = after.url("/x");
    for (status, answer) in join_all(all.iter().map(|r| check(r, &cold))).await {
        assert_eq!(
            (status, &answer["allowed"]),
            (200, &Value::Bool(false)),
            "{answer}"
        );
    }
    assert_eq!(after.hits(), 1, "fetches of a new origin by the fleet");

    // Pacing slots are the fleet's again: workers on every replica, measured at the site.
    let site = Site::start("User-agent: *\nCrawl-delay: 0.5\n").await;
    let client = reqwest::Client::new();
    // By another name than the load's origin: lanes are by host, and the load's reservations
    // have filled 127.0.0.1's for a minute.
    let url = site.url("/page").replace("127.0.0.1", "localhost");
    let workers = all.iter().map(|replica| {
        let (client, url) = (&client, &url);
        async move {
            let mut paces = Vec::new();
            for _ in 0..3 {
                paces.push(fetch_paced(client, replica, url).await);
            }
            paces
        }
    });
    let paces: Vec<Value> = join_all(workers).await.into_iter().flatten().collect();
    let mut slots: Vec<u128> = paces
        .iter()
        .inspect(|pace| assert_eq!(pace["scope"], "fleet", "{pace}"))
        .map(|pace| millis_since_epoch(&pace["not_before"]))
        .collect();
    slots.sort();
    // Crawl-delay 0.5 s and the 50 ms guard band.
    assert!(slots.windows(2).all(|w| w[1] - w[0] >= 550), "{slots:?}");
    let arrivals: Vec<u128> = site
        .arrivals()
        .iter()
        .map(|at| {
            at.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_millis()
        })
        .collect();
    assert_eq!(arrivals.len(), 12);
    // At the site: never under the crawl-delay but for a worker's own stall (100 ms allowed on a
    // busy machine), far from the twice-the-rate of replicas pacing alone.
    let closest = arrivals.windows(2).map(|w| w[1] - w[0]).min().unwrap();
    assert!(
        closest >= 450,
        "two requests {closest} ms apart at the site: {arrivals:?}"
    );
    eprintln!("promoted after {promoted:?}; store up on each replica after {up:?}");
}

/// A fetch whose lease was taken on the master that then died: after the promotion, the other
/// replicas neither each fetch nor wait past the lease. The site sees at most two fetches (the
/// first holder's, and one more if the lease had not reached the replica before the master
/// died), never one per replica.
#[tokio::test]
async fn a_fetch_in_flight_through_the_failover_is_not_made_by_every_replica() {
    let mut sentinel = RedisSentinel::start().await;
    let replicas = [
        replica(&sentinel).await,
        replica(&sentinel).await,
        replica(&sentinel).await,
    ];
    let slow = origin(|| ok("User-agent: *\nDisallow: /private\n")).await;
    // Slower than the failover, well within --fetch-timeout (10 s) and the lease (15 s).
    slow.set_delay(Duration::from_secs(6));
    let first = {
        let (url, base) = (slow.url("/private/a"), replicas[0].url(""));
        tokio::spawn(async move { check_at(&reqwest::Client::new(), &base, &url, false).await })
    };
    assert!(
        within(Duration::from_secs(5), || async { slow.hits() == 1 })
            .await
            .is_some(),
        "the first replica did not fetch"
    );
    let old = sentinel.master_port().await.expect("a master");
    sentinel.server(old).kill();
    within(Duration::from_secs(60), || async {
        sentinel.master_port().await.is_some_and(|now| now != old)
    })
    .await
    .expect("the sentinels promoted the replica");
    store_up_on_every_replica(
        &replicas[1..].iter().collect::<Vec<_>>(),
        Duration::from_secs(10),
    )
    .await;
    // The first fetch is still in flight: the two others ask now.
    let other_url = slow.url("/private/b");
    let others = join_all(replicas[1..].iter().map(|r| check(r, &other_url))).await;
    let (status, answer) = first.await.unwrap();
    assert_eq!(
        (status, &answer["allowed"]),
        (200, &Value::Bool(false)),
        "{answer}"
    );
    for (status, answer) in &others {
        assert_eq!(
            (*status, &answer["allowed"]),
            (200, &Value::Bool(false)),
            "{answer}"
        );
    }
    assert!(
        slow.hits() <= 2,
        "{} fetches by three replicas",
        slow.hits()
    );
    eprintln!(
        "fetches of the origin whose fetch spanned the failover: {}",
        slow.hits()
    );
}
