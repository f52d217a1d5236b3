//! The fleet tier (docs/fleet.md) against real Redis on loopback, with three replicas sharing
//! it: each replica is a checker with its own cache and its own connections, as a process of its
//! own would have. Each test runs on one `redis-server` and on a cluster of three masters
//! (`<test>::single`, `<test>::cluster`), except the one that kills Redis.

use std::time::Duration;

use futures_util::future::join_all;
use robotsd::cache::Lookup;
use robotsd::checker::{Checker, Reason};

use crate::redis_server::{RedisCluster, RedisServer, cluster_replica, replica};
use crate::support::*;

const RULES: &str = "User-agent: *\nDisallow: /private\n";

/// What the replicas share.
enum Backend {
    Single(RedisServer),
    Cluster(RedisCluster),
}

impl Backend {
    /// A replica whose connections are up: its first check (of an origin of its own) made them,
    /// so that a slow first connection on a loaded machine cannot pass for a store that is down.
    async fn replica(&self) -> Checker {
        let replica = match self {
            Backend::Single(server) => replica(&server.url()),
            Backend::Cluster(cluster) => cluster_replica(&cluster.url()),
        };
        let warm_up = origin(|| ok(RULES)).await;
        replica.check(&warm_up.url("/"), &["bot"]).await.unwrap();
        replica
    }

    async fn replicas(&self) -> [Checker; 3] {
        [
            self.replica().await,
            self.replica().await,
            self.replica().await,
        ]
    }

    /// Runs a command on the node that holds its key.
    async fn raw<T: redis::FromRedisValue>(&self, command: &redis::Cmd) -> T {
        match self {
            Backend::Single(server) => {
                let mut connection = server.connection().await.expect("a connection");
                command.query_async(&mut connection).await
            }
            Backend::Cluster(cluster) => {
                let mut connection = cluster.connection().await.expect("a connection");
                command.query_async(&mut connection).await
            }
        }
        .expect("a raw command")
    }
}

/// Runs each test `$name(&Backend)` as `$name::single` and `$name::cluster`.
macro_rules! on_single_and_cluster {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            use super::{Backend, RedisCluster, RedisServer};

            #[tokio::test]
            async fn single() {
                super::$name(&Backend::Single(RedisServer::start().await)).await
            }

            #[tokio::test]
            async fn cluster() {
                super::$name(&Backend::Cluster(RedisCluster::start().await)).await
            }
        }
    )*};
}

on_single_and_cluster!(
    cold_checks_across_three_replicas_send_one_fetch,
    a_backoff_seen_by_one_replica_is_honoured_by_the_others,
    a_restarted_replica_neither_refetches_nor_forgets_a_backoff,
    when_the_lease_holder_dies_exactly_one_other_replica_fetches_after_it_expires,
    garbage_and_future_schema_records_are_ignored_and_replaced,
);

async fn reason(checker: &Checker, url: &str) -> Reason {
    checker
        .check(url, &["bot"])
        .await
        .expect("an answer")
        .reason
}

async fn cold_checks_across_three_replicas_send_one_fetch(backend: &Backend) {
    let server = origin(|| ok(RULES)).await;
    // A slow origin, so that every check arrives while the one fetch is under way.
    server.set_delay(Duration::from_millis(200));
    let replicas = backend.replicas().await;
    let url = server.url("/private/x");
    let checks = replicas
        .iter()
        .flat_map(|replica| (0..30).map(|_| replica.check(&url, &["bot"])))
        .collect::<Vec<_>>();
    for answer in join_all(checks).await {
        assert_eq!(answer.expect("an answer").reason, Reason::MatchedRule);
    }
    assert_eq!(server.hits(), 1, "one fetch for the whole fleet");
}

async fn a_backoff_seen_by_one_replica_is_honoured_by_the_others(backend: &Backend) {
    let server = origin(|| status(503)).await;
    let [a, b, c] = backend.replicas().await;
    let url = server.url("/x");
    assert_eq!(reason(&a, &url).await, Reason::UnreachableDisallowAll);
    for other in [&b, &c] {
        let answer = other.check(&url, &["bot"]).await.unwrap();
        assert_eq!(answer.reason, Reason::UnreachableDisallowAll);
        assert_eq!(source(&answer).cache, Lookup::Shared);
        let backoff = source(&answer).backoff.clone().expect("the shared backoff");
        assert_eq!(backoff.failures, 1);
    }
    assert_eq!(server.hits(), 1, "nobody else probed the failing site");
}

async fn a_restarted_replica_neither_refetches_nor_forgets_a_backoff(backend: &Backend) {
    let good = origin(|| ok(RULES)).await;
    let failing = origin(|| status(500)).await;
    {
        let before = backend.replica().await;
        assert_eq!(
            reason(&before, &good.url("/private")).await,
            Reason::MatchedRule
        );
        assert_eq!(
            reason(&before, &failing.url("/x")).await,
            Reason::UnreachableDisallowAll
        );
    }
    // A new process: nothing in its own cache.
    let after = backend.replica().await;
    let answer = after.check(&good.url("/private"), &["bot"]).await.unwrap();
    assert_eq!(answer.reason, Reason::MatchedRule);
    assert_eq!(source(&answer).cache, Lookup::Shared);
    assert_eq!(
        reason(&after, &failing.url("/x")).await,
        Reason::UnreachableDisallowAll
    );
    assert_eq!((good.hits(), failing.hits()), (1, 1));
}

#[tokio::test]
async fn with_redis_down_replicas_answer_alone_and_share_again_when_it_returns() {
    let mut redis = RedisServer::start().await;
    let [a, b] = [replica(&redis.url()), replica(&redis.url())];
    redis.kill();
    let alone = origin(|| ok(RULES)).await;
    for replica in [&a, &b] {
        let started = tokio::time::Instant::now();
        assert_eq!(
            reason(replica, &alone.url("/private")).await,
            Reason::MatchedRule
        );
        assert!(started.elapsed() < Duration::from_secs(3), "no long stall");
    }
    assert_eq!(alone.hits(), 2, "each replica fetched for itself");

    redis.restart().await;
    // The breaker lets a probe through after its cooldown, and the connection comes back: then
    // what one replica fetches, the other takes from the store.
    assert!(
        eventually_async(|| async {
            let server = origin(|| ok(RULES)).await;
            let _ = a.check(&server.url("/private"), &["bot"]).await;
            let answer = b.check(&server.url("/private"), &["bot"]).await.unwrap();
            source(&answer).cache == Lookup::Shared
        })
        .await
    );
    let fresh = origin(|| ok(RULES)).await;
    assert_eq!(
        reason(&a, &fresh.url("/private")).await,
        Reason::MatchedRule
    );
    let answer = b.check(&fresh.url("/private"), &["bot"]).await.unwrap();
    assert_eq!(source(&answer).cache, Lookup::Shared);
    assert_eq!(fresh.hits(), 1, "shared again");
}

async fn when_the_lease_holder_dies_exactly_one_other_replica_fetches_after_it_expires(
    backend: &Backend,
) {
    let server = origin(|| ok(RULES)).await;
    let key = format!("robotsd:{{{}}}:lease", server.base());
    let [_, b, c] = backend.replicas().await;
    // A replica took the lease and died before storing anything.
    let mut set = redis::cmd("SET");
    set.arg(&key).arg("a-dead-replica").arg("PX").arg(1000);
    let () = backend.raw(&set).await;
    let url = server.url("/private");
    let started = tokio::time::Instant::now();
    let (from_b, from_c) = tokio::join!(b.check(&url, &["bot"]), c.check(&url, &["bot"]));
    assert_eq!(from_b.unwrap().reason, Reason::MatchedRule);
    assert_eq!(from_c.unwrap().reason, Reason::MatchedRule);
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "they waited"
    );
    assert_eq!(server.hits(), 1, "one of them fetched");
}

async fn garbage_and_future_schema_records_are_ignored_and_replaced(backend: &Backend) {
    for (version, meta) in [("2", "{\"copy\":{\"some\":\"future\"}}"), ("1", "not json")] {
        let server = origin(|| ok(RULES)).await;
        let key = format!("robotsd:{{{}}}:record", server.base());
        let mut hset = redis::cmd("HSET");
        hset.arg(&key)
            .arg(&["v", version, "m", meta, "b", "garbage"][..]);
        let _: i64 = backend.raw(&hset).await;
        let replica = backend.replica().await;
        assert_eq!(
            reason(&replica, &server.url("/private")).await,
            Reason::MatchedRule
        );
        assert_eq!(server.hits(), 1, "the unreadable record was not used");
        let mut hget = redis::cmd("HGET");
        hget.arg(&key).arg("v");
        let stored: String = backend.raw(&hget).await;
        assert_eq!(stored, "1", "and it was replaced");
        // Another replica now shares the replacement.
        let other = backend.replica().await;
        assert_eq!(
            reason(&other, &server.url("/private")).await,
            Reason::MatchedRule
        );
        assert_eq!(server.hits(), 1);
    }
}
