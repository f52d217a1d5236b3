//! Redis Sentinel as platform teams run it, on loopback ports: a master, one replica, and three
//! sentinels (`redis-server --sentinel`, Debian's package) that monitor the master under
//! [`MASTER_NAME`] with a quorum of two, and promote the replica a second or two after the
//! master stops answering. Every process is killed when the fixture is dropped; a missing
//! `redis-server` fails the test.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::redis_server::RedisServer;
use crate::support::free_port;

/// The name the sentinels monitor the master under.
pub const MASTER_NAME: &str = "robotsd-test";

/// A master, its replica, and three sentinels.
pub struct RedisSentinel {
    /// The master, then the replica: whichever is master now is [`RedisSentinel::master_port`].
    pub servers: Vec<RedisServer>,
    sentinels: Vec<(u16, Child)>,
    dir: PathBuf,
}

impl RedisSentinel {
    pub async fn start() -> RedisSentinel {
        RedisSentinel::start_with_replica_args(&[]).await
    }

    /// As [`RedisSentinel::start`], with `extra` arguments for the replica (e.g.
    /// `--enable-debug-command yes`, to stall it with `DEBUG SLEEP`).
    pub async fn start_with_replica_args(extra: &[&str]) -> RedisSentinel {
        let dir = std::env::temp_dir().join(format!(
            "robotsd-sentinel-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&dir).expect("a directory for the fixture's files");
        let master = RedisServer::start().await;
        let replica = RedisServer::start_with_args(
            ["--replicaof", "127.0.0.1", &master.port.to_string()]
                .iter()
                .chain(extra)
                .map(|arg| arg.to_string())
                .collect(),
            dir.clone(),
        )
        .await;
        let mut fixture = RedisSentinel {
            servers: vec![master, replica],
            sentinels: Vec::new(),
            dir,
        };
        for _ in 0..3 {
            let port = free_port();
            // A sentinel rewrites its file as it learns the others: one writable file each.
            let file = fixture.dir.join(format!("sentinel-{port}.conf"));
            let master_port = fixture.servers[0].port;
            std::fs::write(
                &file,
                format!(
                    "port {port}\nbind 127.0.0.1\ndir {dir}\n\
                     sentinel monitor {MASTER_NAME} 127.0.0.1 {master_port} 2\n\
                     sentinel down-after-milliseconds {MASTER_NAME} 1000\n\
                     sentinel failover-timeout {MASTER_NAME} 10000\n\
                     sentinel parallel-syncs {MASTER_NAME} 1\n",
                    dir = fixture.dir.display(),
                ),
            )
            .unwrap();
            let child = Command::new("redis-server")
                .arg(&file)
                .arg("--sentinel")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect(
                    "redis-server is required for these tests (Debian: apt-get install redis-server)",
                );
            fixture.sentinels.push((port, child));
        }
        fixture.wait_until_ready().await;
        fixture
    }

    /// `--redis-sentinel`'s value for these sentinels.
    pub fn addresses(&self) -> String {
        self.sentinels
            .iter()
            .map(|(port, _)| format!("127.0.0.1:{port}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The master's port as the first sentinel that answers names it.
    pub async fn master_port(&self) -> Option<u16> {
        for (port, _) in &self.sentinels {
            let reply: Option<(String, String)> = self
                .ask(
                    *port,
                    redis::cmd("SENTINEL")
                        .arg("get-master-addr-by-name")
                        .arg(MASTER_NAME),
                )
                .await
                .ok()
                .flatten();
            if let Some((_, master)) = reply {
                return master.parse().ok();
            }
        }
        None
    }

    /// The server on `port`.
    pub fn server(&mut self, port: u16) -> &mut RedisServer {
        self.servers
            .iter_mut()
            .find(|s| s.port == port)
            .expect("one of the fixture's servers")
    }

    /// Waits until the replica holds everything the master has been sent so far.
    pub async fn wait_replicated(&self) {
        let port = self.master_port().await.expect("a master");
        let server = self.servers.iter().find(|s| s.port == port).unwrap();
        let mut connection = server.connection().await.expect("the master answers");
        let acknowledged: i64 = redis::cmd("WAIT")
            .arg(1)
            .arg(5000)
            .query_async(&mut connection)
            .await
            .expect("WAIT");
        assert_eq!(acknowledged, 1, "the replica did not acknowledge");
    }

    /// Ready when the replica is in sync and every sentinel knows the master, the replica and
    /// the two other sentinels: before that, a dead master would not be failed over.
    async fn wait_until_ready(&self) {
        for _ in 0..600 {
            if self.ready().await {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the sentinels did not become ready");
    }

    async fn ready(&self) -> bool {
        let Ok(mut replica) = self.servers[1].connection().await else {
            return false;
        };
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query_async(&mut replica)
            .await
            .unwrap_or_default();
        if !info.contains("master_link_status:up") {
            return false;
        }
        for (port, _) in &self.sentinels {
            let replicas: Vec<redis::Value> = self
                .ask(
                    *port,
                    redis::cmd("SENTINEL").arg("replicas").arg(MASTER_NAME),
                )
                .await
                .unwrap_or_default();
            let others: Vec<redis::Value> = self
                .ask(
                    *port,
                    redis::cmd("SENTINEL").arg("sentinels").arg(MASTER_NAME),
                )
                .await
                .unwrap_or_default();
            if replicas.len() != 1 || others.len() != 2 {
                return false;
            }
        }
        true
    }

    async fn ask<T: redis::FromRedisValue>(
        &self,
        port: u16,
        command: &mut redis::Cmd,
    ) -> redis::RedisResult<T> {
        let client = redis::Client::open(format!("redis://127.0.0.1:{port}"))?;
        let mut connection = client.get_multiplexed_async_connection().await?;
        command.query_async(&mut connection).await
    }
}

impl Drop for RedisSentinel {
    fn drop(&mut self) {
        for (_, child) in &mut self.sentinels {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
