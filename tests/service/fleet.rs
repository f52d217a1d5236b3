//! The fleet tier (docs/fleet.md) as a fleet: each replica a `robotsd` process of its own (the
//! test binary's), with its own cache, connections, breaker and clock, configured by its flags,
//! against real Redis on loopback. Each test runs on one `redis-server`, on a cluster of three
//! masters, and on a cluster of three masters that speaks TLS only and requires client
//! certificates (`<test>::single`, `<test>::cluster`, `<test>::tls_cluster`).

use std::process::{Command, Stdio};
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::Value;

use crate::redis_server::{RedisCluster, RedisServer};
use crate::support::*;

const RULES: &str = "User-agent: *\nDisallow: /private\n";

/// What the replicas share.
enum Backend {
    Single(RedisServer),
    Cluster(RedisCluster),
    TlsCluster(RedisCluster),
}

/// A replica process.
struct Replica(Robotsd);

impl Replica {
    /// The answer to a check of `url` for `bot`.
    async fn check(&self, url: &str) -> Value {
        let check =
            url::Url::parse_with_params(&self.0.url("/v1/check"), [("url", url), ("ua", "bot")])
                .unwrap();
        let response = reqwest::get(check).await.expect("robotsd answered");
        assert_eq!(response.status(), 200);
        json_of(response).await
    }
}

impl Backend {
    /// The flags that make a replica of this backend's fleet: quick leases, so that a dead
    /// holder delays the others 3 s, and a generous store time limit, so that a loaded machine
    /// cannot pass for a store that is down.
    fn args(&self) -> Vec<String> {
        let mut args: Vec<String> = [
            "--allow-private-networks",
            "--connect-timeout",
            "2s",
            "--fetch-timeout",
            "3s",
            "--store-lease",
            "3s",
            "--store-timeout",
            "2s",
        ]
        .map(String::from)
        .into();
        match self {
            Backend::Single(server) => args.extend(["--redis-url".into(), server.url()]),
            Backend::Cluster(cluster) => {
                args.extend([
                    "--redis-url".into(),
                    cluster.url(),
                    "--redis-cluster".into(),
                ]);
            }
            Backend::TlsCluster(cluster) => {
                args.extend([
                    "--redis-url".into(),
                    cluster.url(),
                    "--redis-cluster".into(),
                ]);
                args.extend(cluster.client_tls_args());
            }
        }
        args
    }

    /// A replica whose connections are up: its first check (of an origin of its own) made them,
    /// so that a slow first connection on a loaded machine cannot pass for a store that is down.
    async fn replica(&self) -> Replica {
        self.replica_with(&[]).await
    }

    /// A replica with flags of its own beside the backend's.
    async fn replica_with(&self, extra: &[&str]) -> Replica {
        let args = self.args();
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        args.extend(extra);
        let replica = Replica(Robotsd::start(&args, false).await);
        let warm_up = origin(|| ok(RULES)).await;
        replica.check(&warm_up.url("/")).await;
        assert_eq!(
            replica
                .0
                .metric("robotsd_store_up{backend=\"redis\"}")
                .await,
            1.0,
            "the replica reaches the store"
        );
        replica
    }

    async fn replicas(&self) -> [Replica; 3] {
        [
            self.replica().await,
            self.replica().await,
            self.replica().await,
        ]
    }

    /// Empties every server's script cache (`SCRIPT FLUSH`), as a new or restarted server,
    /// or a replica just promoted, starts.
    fn flush_scripts(&self) {
        let nodes: Vec<(u16, Vec<String>)> = match self {
            Backend::Single(server) => vec![(server.port, Vec::new())],
            Backend::Cluster(cluster) => {
                cluster.nodes.iter().map(|n| (n.port, Vec::new())).collect()
            }
            Backend::TlsCluster(cluster) => cluster
                .nodes
                .iter()
                .map(|n| (n.port, cluster.cli_tls_args()))
                .collect(),
        };
        for (port, tls) in nodes {
            let output = Command::new("timeout")
                .args(["10", "redis-cli"])
                .args(["-h", "127.0.0.1", "-p", &port.to_string()])
                .args(tls)
                .args(["SCRIPT", "FLUSH"])
                .stderr(Stdio::null())
                .output()
                .expect("redis-cli is required for these tests");
            let out = String::from_utf8_lossy(&output.stdout);
            assert!(
                output.status.success() && out.trim() == "OK",
                "SCRIPT FLUSH: {out}"
            );
        }
    }

    /// Runs a command with `redis-cli` on the node that holds its key (`-c` follows a
    /// cluster's redirections): its output.
    fn raw(&self, command: &[&str]) -> String {
        let (port, tls) = match self {
            Backend::Single(server) => (server.port, Vec::new()),
            Backend::Cluster(cluster) => (cluster.nodes[0].port, Vec::new()),
            Backend::TlsCluster(cluster) => (cluster.nodes[0].port, cluster.cli_tls_args()),
        };
        let output = Command::new("timeout")
            .args(["10", "redis-cli"])
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-c"])
            .args(tls)
            .args(command)
            .stderr(Stdio::null())
            .output()
            .expect("redis-cli is required for these tests");
        assert!(output.status.success(), "redis-cli {command:?}");
        String::from_utf8_lossy(&output.stdout).trim().to_string()
    }
}

/// Runs each test `$name(&Backend)` on one server, a cluster, and a TLS cluster.
macro_rules! on_every_backend {
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

            #[tokio::test]
            async fn tls_cluster() {
                super::$name(&Backend::TlsCluster(RedisCluster::start_tls().await)).await
            }
        }
    )*};
}

on_every_backend!(
    cold_checks_across_three_replicas_send_one_fetch,
    a_backoff_seen_by_one_replica_is_honoured_by_the_others,
    a_restarted_replica_neither_refetches_nor_forgets_a_backoff,
    when_a_replica_is_killed_holding_the_lease_exactly_one_other_fetches_after_it_expires,
    garbage_and_future_schema_records_are_ignored_and_replaced,
    a_record_an_earlier_build_kept_as_a_hash_is_read,
    a_backoff_keeps_the_last_good_copy_for_the_fleet,
    a_store_that_lost_its_scripts_is_given_them_again,
    an_origin_without_a_record_is_not_called_unreadable,
    a_copy_the_full_cache_dropped_is_answered_from_the_store,
);

/// The scripts are called by their SHA-1 (`EVALSHA`): a server that no longer holds them
/// answers `NOSCRIPT`, and each call gives it the script and is made again, so that nothing
/// fails: the record is written and read, the lease taken and released, slots reserved.
async fn a_store_that_lost_its_scripts_is_given_them_again(backend: &Backend) {
    let server = origin(|| ok(RULES)).await;
    let [a, b, _] = backend.replicas().await;
    backend.flush_scripts();
    let url = server.url("/private/x");
    // A miss: the lease and the record's scripts, on servers that hold none.
    let answer = a.check(&url).await;
    assert_eq!(answer["reason"], "matched_rule", "{answer}");
    assert_eq!(answer["robots"]["cache"], "miss", "{answer}");
    backend.flush_scripts();
    // The record read by another replica, and slots reserved on the fleet's clock.
    let answer = b.check(&url).await;
    assert_eq!(answer["robots"]["cache"], "shared", "{answer}");
    for _ in 0..2 {
        backend.flush_scripts();
        let check = url::Url::parse_with_params(
            &b.0.url("/v1/check"),
            [("url", url.as_str()), ("ua", "bot"), ("pace", "true")],
        )
        .unwrap();
        let answer = json_of(reqwest::get(check).await.expect("robotsd answered")).await;
        assert_eq!(answer["allowed"], false, "{answer}");
        let allowed = url::Url::parse_with_params(
            &b.0.url("/v1/check"),
            [
                ("url", server.url("/public").as_str()),
                ("ua", "bot"),
                ("pace", "true"),
            ],
        )
        .unwrap();
        let answer = json_of(reqwest::get(allowed).await.expect("robotsd answered")).await;
        assert_eq!(answer["pace"]["scope"], "fleet", "{answer}");
    }
    assert_eq!(server.hits(), 1, "one fetch for the fleet");
    for replica in [&a, &b] {
        let metrics = replica.0.metrics().await;
        let errors: Vec<&str> = metrics
            .lines()
            .filter(|l| {
                l.starts_with("robotsd_store_operations_total{") && !l.contains(r#"outcome="ok""#)
            })
            .filter(|l| !l.ends_with(" 0"))
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
    }
}

async fn cold_checks_across_three_replicas_send_one_fetch(backend: &Backend) {
    let server = origin(|| ok(RULES)).await;
    // A slow origin, so that every check arrives while the one fetch is under way.
    server.set_delay(Duration::from_millis(200));
    let replicas = backend.replicas().await;
    let url = server.url("/private/x");
    let checks = replicas
        .iter()
        .flat_map(|replica| (0..30).map(|_| replica.check(&url)))
        .collect::<Vec<_>>();
    for answer in join_all(checks).await {
        assert_eq!(answer["reason"], "matched_rule", "{answer}");
    }
    assert_eq!(server.hits(), 1, "one fetch for the whole fleet");
}

async fn a_backoff_seen_by_one_replica_is_honoured_by_the_others(backend: &Backend) {
    let server = origin(|| status(503)).await;
    let [a, b, c] = backend.replicas().await;
    let url = server.url("/x");
    assert_eq!(a.check(&url).await["reason"], "unreachable_disallow_all");
    for other in [&b, &c] {
        let answer = other.check(&url).await;
        assert_eq!(answer["reason"], "unreachable_disallow_all", "{answer}");
        assert_eq!(answer["robots"]["cache"], "shared", "{answer}");
        assert_eq!(answer["robots"]["backoff"]["failures"], 1, "{answer}");
    }
    assert_eq!(server.hits(), 1, "nobody else probed the failing site");
}

async fn a_restarted_replica_neither_refetches_nor_forgets_a_backoff(backend: &Backend) {
    let good = origin(|| ok(RULES)).await;
    let failing = origin(|| status(500)).await;
    {
        let before = backend.replica().await;
        assert_eq!(
            before.check(&good.url("/private")).await["reason"],
            "matched_rule"
        );
        assert_eq!(
            before.check(&failing.url("/x")).await["reason"],
            "unreachable_disallow_all"
        );
        // Dropped: the process is killed.
    }
    let after = backend.replica().await;
    let answer = after.check(&good.url("/private")).await;
    assert_eq!(answer["reason"], "matched_rule");
    assert_eq!(answer["robots"]["cache"], "shared");
    assert_eq!(
        after.check(&failing.url("/x")).await["reason"],
        "unreachable_disallow_all"
    );
    assert_eq!((good.hits(), failing.hits()), (1, 1));
}

async fn when_a_replica_is_killed_holding_the_lease_exactly_one_other_fetches_after_it_expires(
    backend: &Backend,
) {
    let server = origin(|| ok(RULES)).await;
    server.set_delay(Duration::from_secs(2));
    let [a, b, c] = backend.replicas().await;
    let url = server.url("/private");
    // A takes the lease and starts fetching; it is killed (SIGKILL) mid-fetch, before it can
    // store anything or release the lease.
    let fetching = tokio::spawn({
        let check = url::Url::parse_with_params(
            &a.0.url("/v1/check"),
            [("url", url.as_str()), ("ua", "bot")],
        )
        .unwrap();
        async move { reqwest::get(check).await }
    });
    assert!(eventually(|| server.hits() == 1).await, "A fetched");
    let killed = tokio::time::Instant::now();
    drop(a);
    let _ = fetching.await;
    server.set_delay(Duration::ZERO);
    let (from_b, from_c) = tokio::join!(b.check(&url), c.check(&url));
    assert_eq!(from_b["reason"], "matched_rule", "{from_b}");
    assert_eq!(from_c["reason"], "matched_rule", "{from_c}");
    assert!(
        killed.elapsed() >= Duration::from_secs(2),
        "they waited for the dead holder's lease"
    );
    assert_eq!(
        server.hits(),
        2,
        "the dead replica's fetch, then one of B and C"
    );
}

async fn garbage_and_future_schema_records_are_ignored_and_replaced(backend: &Backend) {
    // Unreadable records in both layouts: the string of this build, and the hash of earlier
    // ones (read until replaced). Each: the key's suffix, the command, its arguments after the key.
    let future = "{\"copy\":{\"some\":\"future\"}}";
    let records = [
        (
            "record",
            "HSET",
            vec!["v", "2", "m", future, "b", "garbage"],
        ),
        (
            "record",
            "HSET",
            vec!["v", "1", "m", "not json", "b", "garbage"],
        ),
        ("rec", "SET", vec!["2\n2\n{}garbage"]),
        ("rec", "SET", vec!["1\n8\nnot json"]),
        ("rec", "SET", vec!["garbage"]),
        // Keys of the other type.
        ("rec", "HSET", vec!["v", "1"]),
        ("record", "SET", vec!["garbage"]),
    ];
    for (suffix, command, args) in records {
        let server = origin(|| ok(RULES)).await;
        let key = format!("robotsd:{{{}}}:{suffix}", server.base());
        backend.raw(&[&[command, key.as_str()][..], &args].concat());
        let replica = backend.replica().await;
        assert_eq!(
            replica.check(&server.url("/private")).await["reason"],
            "matched_rule"
        );
        assert_eq!(server.hits(), 1, "the unreadable record was not used");
        // Read as a record to replace, not as a failing store.
        let errors = replica
            .0
            .metric(r#"robotsd_store_operations_total{op="load",outcome="error"}"#)
            .await;
        assert_eq!(errors, 0.0, "{suffix} {command} {args:?}");
        let record = format!("robotsd:{{{}}}:rec", server.base());
        assert!(
            backend.raw(&["GET", &record]).starts_with("1\n"),
            "and it was replaced"
        );
        let hash = format!("robotsd:{{{}}}:record", server.base());
        assert_eq!(
            backend.raw(&["EXISTS", &hash]),
            "0",
            "an earlier build's hash is gone"
        );
        // Another replica now shares the replacement.
        let other = backend.replica().await;
        let answer = other.check(&server.url("/private")).await;
        assert_eq!(answer["reason"], "matched_rule");
        assert_eq!(answer["robots"]["cache"], "shared");
        assert_eq!(server.hits(), 1);
    }
}

/// An origin the store holds nothing for is a new origin, not an unreadable record: a fleet
/// meets thousands a minute, and each once logged a warning that its record was unreadable.
async fn an_origin_without_a_record_is_not_called_unreadable(backend: &Backend) {
    let args = backend.args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut robotsd = Robotsd::start_with(&args, false, Stdio::piped()).await;
    let lines = lines_of(robotsd.take_stderr().unwrap());
    let replica = Replica(robotsd);
    let unreadable = || -> Vec<String> {
        let lines = lines.lock().unwrap();
        let said = lines
            .iter()
            .filter(|line| line.contains("unreadable record"));
        said.cloned().collect()
    };
    for _ in 0..3 {
        let new = origin(|| ok(RULES)).await;
        assert_eq!(
            replica.check(&new.url("/private")).await["reason"],
            "matched_rule"
        );
    }
    // Garbage, for a control: it is said.
    let garbage = origin(|| ok(RULES)).await;
    let key = format!("robotsd:{{{}}}:rec", garbage.base());
    backend.raw(&["SET", &key, "garbage"]);
    replica.check(&garbage.url("/private")).await;
    let said = within(Duration::from_secs(30), || async {
        !unreadable().is_empty()
    })
    .await;
    assert!(said.is_some(), "the garbage record was not said");
    for line in unreadable() {
        assert!(line.contains(&garbage.base()), "{line}");
    }
}

/// With a store, a file the full cache dropped is answered from the store (docs/behaviour.md):
/// never `cache-full` while the store holds it, and never fetched again.
async fn a_copy_the_full_cache_dropped_is_answered_from_the_store(backend: &Backend) {
    let mut large = String::from("User-agent: *\nDisallow: /private\n");
    // 20 KB each, so that a 256 KiB cache cannot hold the twenty of them.
    while large.len() < 20 * 1024 {
        large.push_str(&format!("Disallow: /section-{}/\n", large.len()));
    }
    let replica = backend.replica_with(&["--cache-capacity", "256KiB"]).await;
    let mut servers = Vec::new();
    for _ in 0..20 {
        let large = large.clone();
        let server = origin(move || ok(&large)).await;
        assert_eq!(
            replica.check(&server.url("/private")).await["reason"],
            "matched_rule"
        );
        servers.push(server);
    }
    // Then the same origins from a second replica, which never fetched them: twice each, many
    // checks at once, as a crawler's workers ask.
    let other = backend.replica_with(&["--cache-capacity", "256KiB"]).await;
    for (n, server) in servers.iter().chain(&servers).enumerate() {
        let check = url::Url::parse_with_params(
            &other.0.url("/v1/check"),
            [("url", server.url("/private").as_str()), ("ua", "bot")],
        )
        .unwrap();
        let checks = (0..8).map(|_| async {
            let response = reqwest::get(check.clone()).await.unwrap();
            (response.status(), response.text().await.unwrap())
        });
        for (status, answer) in join_all(checks).await {
            assert_eq!(status, 200, "origin {n}: {answer}");
        }
        assert_eq!(server.hits(), 1, "origin {n} fetched again");
    }
}

/// A rolling upgrade: what a replica of an earlier build stored (a hash) is read by this one.
async fn a_record_an_earlier_build_kept_as_a_hash_is_read(backend: &Backend) {
    // A 404: a record of metadata alone, which redis-cli carries as text.
    let server = origin(|| status(404)).await;
    let first = backend.replica().await;
    assert_eq!(
        first.check(&server.url("/x")).await["reason"],
        "no_robots_txt"
    );
    let record = format!("robotsd:{{{}}}:rec", server.base());
    let value = backend.raw(&["GET", &record]);
    let mut frame = value.splitn(3, '\n');
    let (version, _length, meta) = (frame.next().unwrap(), frame.next(), frame.next().unwrap());
    let hash = format!("robotsd:{{{}}}:record", server.base());
    backend.raw(&["HSET", &hash, "v", version, "m", meta]);
    backend.raw(&["DEL", &record]);

    let upgraded = backend.replica().await;
    let answer = upgraded.check(&server.url("/x")).await;
    assert_eq!(answer["reason"], "no_robots_txt");
    assert_eq!(answer["robots"]["cache"], "shared", "{answer}");
    assert_eq!(server.hits(), 1, "read from the hash, not fetched again");
}

/// A failed refresh stores the backoff and keeps the stored body of the last good copy: another
/// replica answers from those rules without a fetch.
async fn a_backoff_keeps_the_last_good_copy_for_the_fleet(backend: &Backend) {
    // Lifetimes and a first backoff window of a second: the last good copy is answered a second
    // after the first failure (SEMANTICS.md §5).
    let short = [
        "--min-lifetime",
        "1s",
        "--default-lifetime",
        "1s",
        "--disallow-window",
        "1s",
    ];
    let server = origin(|| ok(RULES)).await;
    let first = backend.replica_with(&short).await;
    assert_eq!(
        first.check(&server.url("/private")).await["reason"],
        "matched_rule"
    );
    server.set_reply(|| status(503));
    tokio::time::sleep(Duration::from_millis(1200)).await;
    // The expired copy is answered while one refresh runs; it fails.
    assert_eq!(first.check(&server.url("/private")).await["allowed"], false);
    assert!(
        eventually(|| server.hits() == 2).await,
        "the refresh was not sent"
    );
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let backoff_stored = || async {
        let other = backend.replica_with(&short).await;
        other.check(&server.url("/private/x")).await
    };
    let mut answer = backoff_stored().await;
    for _ in 0..20 {
        if answer["robots"]["backoff"].is_object() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        answer = backoff_stored().await;
    }
    assert_eq!(answer["robots"]["cache"], "shared", "{answer}");
    assert_eq!(answer["robots"]["backoff"]["failures"], 1, "{answer}");
    assert_eq!(answer["reason"], "last_good_copy", "{answer}");
    assert_eq!(answer["rule"]["pattern"], "/private", "{answer}");
    assert_eq!(server.hits(), 2, "nobody else fetched");
}
