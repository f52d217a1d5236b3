//! A real `redis-server` (Debian's package) on a loopback port, started and stopped by the test:
//! one server, or a cluster of three masters, in plain text or TLS only with client certificates.
//! A missing `redis-server` fails the test: it never skips.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A `redis-server` process on 127.0.0.1, killed when dropped.
pub struct RedisServer {
    pub port: u16,
    child: Option<Child>,
    /// Extra arguments (cluster mode, TLS) and the directory its files go to.
    args: Vec<String>,
    dir: Option<PathBuf>,
    /// It speaks TLS only (on `port`).
    tls: bool,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The highest port a cluster node may listen on: redis-server puts its cluster bus 10,000
/// above, and refuses to start when that is past 65,535.
const HIGHEST_CLUSTER_PORT: u16 = 55_535;

/// A free port for a cluster node, whose cluster bus port is free too. (The kernel hands out
/// ports up to 60,999 here: a node on one of the highest would not start.)
fn free_cluster_port() -> u16 {
    for _ in 0..1000 {
        let port = free_port();
        if port <= HIGHEST_CLUSTER_PORT && TcpListener::bind(("127.0.0.1", port + 10_000)).is_ok() {
            return port;
        }
    }
    panic!("no free port pair for a cluster node");
}

impl RedisServer {
    /// Starts a server that keeps nothing on disk but what replication writes (a server made a
    /// replica syncs through a snapshot file), in a directory of its own, never the checkout.
    pub async fn start() -> RedisServer {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("robotsd-redis-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory for the server's files");
        let mut server = RedisServer {
            port,
            child: None,
            args: Vec::new(),
            dir: Some(dir),
            tls: false,
        };
        server.restart().await;
        server
    }

    /// Starts a server with extra arguments (a replica's `--replicaof`), in `dir`: a replica
    /// writes the snapshot it syncs from there.
    pub async fn start_with_args(args: Vec<String>, dir: PathBuf) -> RedisServer {
        let mut server = RedisServer {
            port: free_port(),
            child: None,
            args,
            dir: Some(dir),
            tls: false,
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
            if self.tls {
                // The cluster's readiness check below speaks TLS to it.
                if tokio::net::TcpStream::connect(("127.0.0.1", self.port))
                    .await
                    .is_ok()
                {
                    return;
                }
            } else if let Ok(mut connection) = self.connection().await
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

    /// Script calls the server has run (`INFO commandstats`: `EVALSHA` and `EVAL`), the pacing
    /// scripts and the record's: robotsd's round trips for its record and its slots.
    pub async fn script_calls(&self) -> u64 {
        let mut connection = self.connection().await.unwrap();
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query_async(&mut connection)
            .await
            .unwrap();
        info.lines()
            .filter(|line| {
                line.starts_with("cmdstat_evalsha:") || line.starts_with("cmdstat_eval:")
            })
            .filter_map(|line| {
                line.split("calls=")
                    .nth(1)?
                    .split(',')
                    .next()?
                    .parse::<u64>()
                    .ok()
            })
            .sum()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        // Only the directory `start` made for this server; a cluster's is the cluster's.
        if let Some(dir) = &self.dir
            && dir
                .file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("robotsd-redis-"))
        {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// Three `redis-server`s in cluster mode on 127.0.0.1, joined into one cluster of three masters
/// with `redis-cli --cluster create`; in plain text, or TLS only.
pub struct RedisCluster {
    pub nodes: Vec<RedisServer>,
    dir: PathBuf,
    tls: bool,
}

impl RedisCluster {
    /// Three masters in plain text.
    pub async fn start() -> RedisCluster {
        RedisCluster::start_with(false, 0).await
    }

    /// Three masters that speak TLS only (client, replication and cluster bus), with a
    /// certificate signed by a CA of the test's own, requiring client certificates.
    pub async fn start_tls() -> RedisCluster {
        RedisCluster::start_with(true, 0).await
    }

    /// Three masters with one replica each, in plain text: a master that dies is replaced by
    /// its replica, promoted by the cluster within about a second (`cluster-node-timeout`).
    pub async fn start_with_replicas() -> RedisCluster {
        RedisCluster::start_with(false, 1).await
    }

    async fn start_with(tls: bool, replicas: usize) -> RedisCluster {
        let dir = std::env::temp_dir().join(format!(
            "robotsd-cluster-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).expect("a directory for the cluster's files");
        if tls {
            crate::redis_tls::make_certificates(&dir);
        }
        let file = |name: &str| dir.join(name).to_str().unwrap().to_string();
        let mut nodes = Vec::new();
        // A replica's master is declared failed after the node timeout: short when there are
        // replicas to promote, so that a failover is over in about a second.
        let node_timeout = if replicas > 0 { "1000" } else { "5000" };
        for _ in 0..3 * (1 + replicas) {
            let port = free_cluster_port();
            let mut args: Vec<String> = vec![
                "--cluster-enabled".into(),
                "yes".into(),
                "--cluster-node-timeout".into(),
                node_timeout.into(),
                "--cluster-config-file".into(),
                format!("nodes-{port}.conf"),
            ];
            if tls {
                args.extend([
                    "--port".into(),
                    "0".into(),
                    "--tls-port".into(),
                    port.to_string(),
                    "--tls-cert-file".into(),
                    file("server.pem"),
                    "--tls-key-file".into(),
                    file("server.key"),
                    // The cluster bus connects node to node: each shows a client certificate.
                    "--tls-client-cert-file".into(),
                    file("client.pem"),
                    "--tls-client-key-file".into(),
                    file("client.key"),
                    "--tls-ca-cert-file".into(),
                    file("ca.pem"),
                    "--tls-auth-clients".into(),
                    "yes".into(),
                    "--tls-cluster".into(),
                    "yes".into(),
                    "--tls-replication".into(),
                    "yes".into(),
                ]);
            }
            let mut node = RedisServer {
                port,
                child: None,
                args,
                dir: Some(dir.clone()),
                tls,
            };
            node.restart().await;
            nodes.push(node);
        }
        let cluster = RedisCluster { nodes, dir, tls };
        let addresses: Vec<String> = cluster
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        // Bounded: a cluster that cannot join would otherwise keep redis-cli waiting forever.
        let status = Command::new("timeout")
            .args(["60", "redis-cli"])
            .args(cluster.cli_tls_args())
            .args(["--cluster", "create"])
            .args(&addresses)
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli is required for the cluster tests");
        assert!(status.success(), "redis-cli --cluster create failed");
        // Ready when every node sees the whole cluster: a node still learning the slot map
        // answers MOVED, which a test would take for a store that loses writes.
        for _ in 0..200 {
            let ready = cluster.nodes.iter().all(|node| {
                let info = Command::new("timeout")
                    .args(["10", "redis-cli"])
                    .args(["-h", "127.0.0.1", "-p", &node.port.to_string()])
                    .args(cluster.cli_tls_args())
                    .args(["CLUSTER", "INFO"])
                    .stderr(Stdio::null())
                    .output()
                    .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                    .unwrap_or_default();
                info.contains("cluster_state:ok")
                    && info.contains(&format!("cluster_known_nodes:{}", addresses.len()))
                    && info.contains("cluster_slots_ok:16384")
            });
            if ready {
                return cluster;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the cluster did not become ready");
    }

    /// The node that serves `key` as its master now, by `CLUSTER NODES` asked of the first node
    /// still running; `None` while no master serves it (a failover in progress).
    pub fn master_of(&self, key: &str) -> Option<usize> {
        let ask = |args: &[&str]| -> String {
            for node in self.nodes.iter().filter(|n| n.child.is_some()) {
                let out = Command::new("timeout")
                    .args(["10", "redis-cli", "-h", "127.0.0.1", "-p"])
                    .arg(node.port.to_string())
                    .args(args)
                    .stderr(Stdio::null())
                    .output();
                if let Ok(out) = out
                    && out.status.success()
                {
                    return String::from_utf8_lossy(&out.stdout).into_owned();
                }
            }
            panic!("no node answers");
        };
        let slot: u16 = ask(&["CLUSTER", "KEYSLOT", key]).trim().parse().unwrap();
        // `CLUSTER SHARDS` would be simpler, but needs Redis 7.0's RESP shape; CLUSTER NODES
        // lines: id addr flags master ping pong epoch state slots…
        let nodes = ask(&["CLUSTER", "NODES"]);
        for line in nodes.lines() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // A master suspected (`fail?`) still serves; one the cluster agreed is down does not.
            let flags: Vec<&str> = fields.get(2).map_or(vec![], |f| f.split(',').collect());
            if fields.len() < 9 || !flags.contains(&"master") || flags.contains(&"fail") {
                continue;
            }
            let serves = fields[8..].iter().any(|range| match range.split_once('-') {
                Some((a, b)) => a.parse::<u16>().unwrap() <= slot && slot <= b.parse().unwrap(),
                None => range.parse::<u16>().ok() == Some(slot),
            });
            if serves {
                let port: u16 = fields[1]
                    .split(['@', ':'])
                    .nth(1)
                    .and_then(|p| p.parse().ok())
                    .unwrap();
                return self.nodes.iter().position(|n| n.port == port);
            }
        }
        None
    }

    /// The URL of node `index` (a node still running, for a replica started after a failover).
    pub fn url_of(&self, index: usize) -> String {
        format!("redis://127.0.0.1:{}", self.nodes[index].port)
    }

    /// Waits (up to 30 s) until the replicas of node `index`, a master, have every write it
    /// took: Redis replicates asynchronously, and a record written a moment before its master
    /// dies is lost, as Redis documents.
    pub async fn wait_replicated(&self, index: usize) {
        let port = self.nodes[index].port.to_string();
        for _ in 0..300 {
            let info = Command::new("timeout")
                .args(["10", "redis-cli", "-h", "127.0.0.1", "-p", &port])
                .args(["INFO", "replication"])
                .stderr(Stdio::null())
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            let field = |name: &str| {
                info.lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(|v| v.trim().to_string())
            };
            let master = field("master_repl_offset:").and_then(|v| v.parse::<u64>().ok());
            let replica = field("slave0:").and_then(|v| {
                v.split(',')
                    .find_map(|kv| kv.strip_prefix("offset="))
                    .and_then(|o| o.parse::<u64>().ok())
            });
            if let (Some(master), Some(replica)) = (master, replica)
                && replica >= master
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the replica of node {index} did not catch up");
    }

    /// Kills node `index` at once (SIGKILL), as a machine dies.
    pub fn kill_node(&mut self, index: usize) {
        self.nodes[index].kill();
    }

    /// A node's URL: robotsd discovers the others.
    pub fn url(&self) -> String {
        let scheme = if self.tls { "rediss" } else { "redis" };
        format!("{scheme}://127.0.0.1:{}", self.nodes[0].port)
    }

    fn file(&self, name: &str) -> String {
        self.dir.join(name).to_str().unwrap().to_string()
    }

    /// robotsd's flags for the cluster's CA and a client certificate (none in plain text).
    pub fn client_tls_args(&self) -> Vec<String> {
        if !self.tls {
            return Vec::new();
        }
        vec![
            "--redis-ca-file".into(),
            self.file("ca.pem"),
            "--redis-client-cert".into(),
            self.file("client.pem"),
            "--redis-client-key".into(),
            self.file("client.key"),
        ]
    }

    /// `redis-cli`'s flags for the same (none in plain text).
    pub fn cli_tls_args(&self) -> Vec<String> {
        if !self.tls {
            return Vec::new();
        }
        vec![
            "--tls".into(),
            "--cacert".into(),
            self.file("ca.pem"),
            "--cert".into(),
            self.file("client.pem"),
            "--key".into(),
            self.file("client.key"),
        ]
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
