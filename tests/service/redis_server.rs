//! A real `redis-server` (Debian's package) on a loopback port, started and stopped by the test,
//! and replicas of robotsd sharing it. A missing `redis-server` fails the test: it never skips.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use robotsd::cache::{CacheConfig, FleetConfig, OriginCache};
use robotsd::checker::Checker;
use robotsd::clock::{Clock, TokioClock};
use robotsd::fetch::Fetcher;
use robotsd::store::{RedisConfig, RedisStore, Store, StoreSettings};

use crate::support::{fetch_config, loopback_allowed};

/// A `redis-server` process on 127.0.0.1, killed when dropped.
pub struct RedisServer {
    pub port: u16,
    child: Option<Child>,
    /// Extra arguments (cluster mode) and the directory its files go to.
    args: Vec<String>,
    dir: Option<PathBuf>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

impl RedisServer {
    /// Starts a server that keeps nothing on disk.
    pub async fn start() -> RedisServer {
        let mut server = RedisServer {
            port: free_port(),
            child: None,
            args: Vec::new(),
            dir: None,
        };
        server.restart().await;
        server
    }

    /// Starts the server again on the same port (after [`RedisServer::kill`]), empty.
    pub async fn restart(&mut self) {
        let mut command = Command::new("redis-server");
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        let child = command
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ])
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect(
                "redis-server is required for these tests (Debian: apt-get install redis-server)",
            );
        self.child = Some(child);
        for _ in 0..200 {
            if let Ok(mut connection) = self.connection().await
                && redis::cmd("PING")
                    .query_async::<String>(&mut connection)
                    .await
                    .is_ok()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("redis-server on port {} did not start", self.port);
    }

    /// Kills the server.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// A plain connection, for looking at or tampering with what robotsd stored.
    pub async fn connection(&self) -> redis::RedisResult<redis::aio::MultiplexedConnection> {
        redis::Client::open(self.url())?
            .get_multiplexed_async_connection()
            .await
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Three `redis-server`s in cluster mode on 127.0.0.1, joined into one cluster of three masters
/// with `redis-cli --cluster create`.
pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
    dir: PathBuf,
}

impl RedisCluster {
    pub async fn start() -> RedisCluster {
        let dir = std::env::temp_dir().join(format!(
            "robotsd-cluster-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).expect("a directory for the cluster's files");
        let mut nodes = Vec::new();
        for _ in 0..3 {
            let port = free_port();
            let mut node = RedisServer {
                port,
                child: None,
                args: vec![
                    "--cluster-enabled".into(),
                    "yes".into(),
                    "--cluster-node-timeout".into(),
                    "5000".into(),
                    "--cluster-config-file".into(),
                    format!("nodes-{port}.conf"),
                ],
                dir: Some(dir.clone()),
            };
            node.restart().await;
            nodes.push(node);
        }
        let addresses: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let status = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addresses)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli is required for the cluster tests");
        assert!(status.success(), "redis-cli --cluster create failed");
        let cluster = RedisCluster { nodes, dir };
        // Ready when every node sees the whole cluster: a node still learning the slot map
        // answers MOVED, which a test would take for a store that loses writes.
        for _ in 0..200 {
            let mut ready = 0;
            for node in &cluster.nodes {
                if let Ok(mut connection) = node.connection().await
                    && let Ok(info) = redis::cmd("CLUSTER")
                        .arg("INFO")
                        .query_async::<String>(&mut connection)
                        .await
                    && info.contains("cluster_state:ok")
                    && info.contains("cluster_known_nodes:3")
                    && info.contains("cluster_slots_ok:16384")
                {
                    ready += 1;
                }
            }
            if ready == cluster.nodes.len() {
                return cluster;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the cluster did not become ready");
    }

    /// A node's URL: robotsd discovers the others.
    pub fn url(&self) -> String {
        self.nodes[0].url()
    }

    /// A cluster connection, for looking at or tampering with what robotsd stored.
    pub async fn connection(&self) -> redis::RedisResult<redis::cluster_async::ClusterConnection> {
        redis::cluster::ClusterClient::new(vec![self.url()])?
            .get_async_connection()
            .await
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The store's settings in these tests: quick to give up and quick to retry.
pub fn store_settings() -> StoreSettings {
    StoreSettings {
        // Generous: a loaded CI machine must not pass for a store that is down.
        timeout: Duration::from_secs(2),
        breaker_threshold: 2,
        breaker_cooldown: Duration::from_millis(300),
    }
}

/// A replica: its own cache and connections, sharing `redis_url` with the others.
pub fn replica(redis_url: &str) -> Checker {
    replica_of(redis_url, false)
}

/// A replica of a fleet sharing a Redis Cluster, reached through `node_url`.
pub fn cluster_replica(node_url: &str) -> Checker {
    replica_of(node_url, true)
}

fn replica_of(redis_url: &str, cluster: bool) -> Checker {
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
    let store = RedisStore::new(RedisConfig {
        url: redis_url.to_string(),
        password: None,
        cluster,
        connect_timeout: Duration::from_secs(2),
        response_timeout: Duration::from_secs(2),
        tls: None,
    })
    .expect("a redis URL");
    let store = Store::new(Arc::new(store), store_settings(), Arc::clone(&clock));
    let fetcher = Fetcher::new(fetch_config(), loopback_allowed()).expect("fetcher");
    let cache = OriginCache::with_clock(CacheConfig::default(), fetcher, clock).with_store(
        store,
        FleetConfig {
            lease_ttl: Duration::from_secs(3),
            poll_interval: Duration::from_millis(20),
            sync_interval: Duration::from_secs(60),
        },
    );
    Checker::new(cache)
}
