//! [`RedisStore`]: the shared store on Redis, Valkey or a Redis Cluster, through redis-rs.
//!
//! Per origin, keys share a hash tag, so that a cluster keeps them in one slot: the record,
//! `robotsd:{<origin>}:rec`, one string of the schema version, the metadata (JSON) and the
//! deflated body ([`super::redis_record`]), and `robotsd:{<origin>}:lease`, the fetch lease's
//! token. A standalone
//! server is reached through redis-rs's `ConnectionManager`, which reconnects by itself; a
//! cluster through its async cluster connection, made on first use, which follows the slot map
//! and repairs its node connections by itself; a master that Sentinel names through [`super::sentinel`], which follows failovers.
//! None is needed at start: robotsd starts, and answers, with the store down.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{BoxFuture, FutureExt as _};
use redis::IntoConnectionInfo as _;
use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use tokio::sync::Mutex;

use super::coalesce::Coalescer;
use super::lua::{self, Lua};
use super::record::MAX_META_BYTES;
use super::redis_config::{RedisConfig, RedisStoreError, RedisTarget, redact};
use super::redis_lease::{self, LeaseScripts};
use super::redis_pace::{self, Scripts};
use super::redis_record::{self, hashed_record_key, record_key};
use super::sentinel::{MasterSettings, SentinelMaster};
use super::{BodyWrite, Lease, LendAnswer, Looked, PaceReading, SharedStore, StoreError};
use crate::pace_policy::{LendRequest, Signal, SlotGrant, SlotRequest, Timetable};
use crate::store::record::Encoded;

enum Connection {
    Single(ConnectionManager),
    Cluster(Box<Cluster>),
    Sentinel(Arc<SentinelMaster>),
}

struct Cluster {
    client: ClusterClient,
    /// The connection, once made (it repairs itself from then on).
    connection: Mutex<Option<ClusterConnection>>,
}

/// The shared store on Redis. Cheap to clone.
#[derive(Clone)]
pub struct RedisStore {
    connection: Arc<Connection>,
    config: Arc<RedisConfig>,
    scripts: Arc<Scripts>,
    record_scripts: Arc<RecordScripts>,
    /// Reservations of one lane that arrive together share a call, with the leases each was
    /// asked with (the last one's go).
    coalescer: Arc<Coalescer<(SlotRequest, Option<Arc<Timetable>>)>>,
    lease_scripts: Arc<LeaseScripts>,
}

/// The record's scripts and the lease's release, built once.
struct RecordScripts {
    load: Lua,
    load_or_lease: Lua,
    lease: Lua,
    save: Lua,
    release: Lua,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Deletes the lease only if the caller's token still holds it.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
";

/// A time to live in whole milliseconds, at least one (`PX 0` is an error).
fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

/// A record script's call: the record scripts touch both keys.
fn record_call(script: &Lua, origin: &str) -> redis::Cmd {
    script.call(&[record_key(origin), hashed_record_key(origin)])
}

fn lease_key(origin: &str) -> String {
    format!("robotsd:{{{origin}}}:lease")
}

/// A call of a record script that may take the lease ([`redis_record::lease_script`],
/// [`redis_record::load_or_lease_script`]): the same keys and arguments.
fn leasing(
    script: &Lua,
    origin: &str,
    token: &str,
    ttl: Duration,
    max_body_bytes: usize,
) -> redis::Cmd {
    let mut command = script.call(&[
        record_key(origin),
        hashed_record_key(origin),
        lease_key(origin),
    ]);
    command
        .arg(MAX_META_BYTES)
        .arg(max_body_bytes)
        .arg(token)
        .arg(millis(ttl));
    command
}

/// The key the recovery probe writes (it expires after 10 s).
const PROBE_KEY: &str = "robotsd:probe";

/// The error codes of a Redis that answers but refuses writes (docs/fleet.md, "A Redis that
/// refuses"): out of memory under `noeviction`, a replica (a demoted master), a failed
/// persistence, too few replicas for `min-replicas-to-write`, a replica cut off from its master.
const REFUSALS: [&str; 5] = ["OOM", "READONLY", "MISCONF", "NOREPLICAS", "MASTERDOWN"];

fn failed(error: redis::RedisError) -> StoreError {
    // redis-rs's messages name the server, never the password.
    match error.code() {
        Some(code) if REFUSALS.contains(&code) => StoreError::Refused(error.to_string()),
        _ => StoreError::Failed(error.to_string()),
    }
}

/// The URL's connection settings, with `--redis-password-file`'s password if given.
fn connection_info(
    url: &str,
    config: &RedisConfig,
) -> Result<redis::ConnectionInfo, RedisStoreError> {
    let mut info = url
        .into_connection_info()
        .map_err(|e| bad_url(url, e.to_string()))?;
    if let Some(password) = &config.password {
        let settings = info.redis_settings().clone().set_password(password);
        info = info.set_redis_settings(settings);
    }
    Ok(info)
}

fn bad_url(url: &str, detail: String) -> RedisStoreError {
    RedisStoreError::Url {
        url: redact(url),
        detail,
    }
}

fn tls_error(error: redis::RedisError) -> RedisStoreError {
    RedisStoreError::Tls(error.to_string())
}

/// One server, through a connection manager that reconnects by itself.
fn single(url: &str, config: &RedisConfig) -> Result<Connection, RedisStoreError> {
    let info = connection_info(url, config)?;
    let client = match &config.tls {
        // build_with_tls parses the PEM now, so a bad file stops the start.
        Some(tls) => redis::Client::build_with_tls(info, tls.certificates()).map_err(tls_error)?,
        None => redis::Client::open(info).map_err(|e| bad_url(url, e.to_string()))?,
    };
    let manager_config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(config.connect_timeout))
        .set_response_timeout(Some(config.response_timeout))
        .set_number_of_retries(1);
    let manager = ConnectionManager::new_lazy_with_config(client, manager_config)
        .map_err(|e| bad_url(url, e.to_string()))?;
    Ok(Connection::Single(manager))
}

/// A cluster, by one of its nodes; the connection is made on first use.
fn cluster(url: &str, config: &RedisConfig) -> Result<Connection, RedisStoreError> {
    let info = connection_info(url, config)?;
    let mut builder = ClusterClient::builder([info])
        .connection_timeout(config.connect_timeout)
        .response_timeout(config.response_timeout)
        .retries(0);
    if let Some(tls) = &config.tls {
        if !url.starts_with("rediss://") {
            return Err(RedisStoreError::Tls(
                "certificates need a rediss:// URL".into(),
            ));
        }
        builder = builder.certs(tls.certificates());
    }
    let client = builder.build().map_err(|e| match &config.tls {
        Some(_) => tls_error(e),
        None => bad_url(url, e.to_string()),
    })?;
    Ok(Connection::Cluster(Box::new(Cluster {
        client,
        connection: Mutex::new(None),
    })))
}

impl RedisStore {
    /// A store for `config`. Nothing is waited for: connections are made on first use, and a
    /// Sentinel lookup starts in the background when there is a runtime.
    pub fn new(config: RedisConfig) -> Result<RedisStore, RedisStoreError> {
        let connection = match &config.target {
            RedisTarget::Server(url) => single(url, &config)?,
            RedisTarget::Cluster(url) => cluster(url, &config)?,
            RedisTarget::Sentinel(sentinel) => {
                let master = SentinelMaster::new(
                    sentinel,
                    MasterSettings {
                        password: config.password.as_deref(),
                        tls: config.tls.as_ref(),
                        connect_timeout: config.connect_timeout,
                        response_timeout: config.response_timeout,
                    },
                )?;
                master.start();
                Connection::Sentinel(master)
            }
        };
        Ok(RedisStore {
            connection: Arc::new(connection),
            config: Arc::new(config),
            scripts: Arc::new(Scripts::new()),
            coalescer: Arc::default(),
            lease_scripts: Arc::new(LeaseScripts::new()),
            record_scripts: Arc::new(RecordScripts {
                load: Lua::new(redis_record::LOAD),
                load_or_lease: Lua::new(redis_record::load_or_lease_script()),
                lease: Lua::new(redis_record::lease_script()),
                save: Lua::new(redis_record::SAVE),
                release: Lua::new(RELEASE),
            }),
        })
    }

    /// Sends a command on a connection. A cluster connection, once made, is kept whatever fails:
    /// redis-rs repairs it from every node of the slot map it knows, where a new one could only
    /// start from the node the URL names, which may be the master that died.
    async fn query(&self, command: &redis::Cmd) -> Result<redis::Value, StoreError> {
        self.query_script(None, command).await
    }

    /// [`RedisStore::query`] of a call of `script` (an `EVALSHA`), when given: a Redis that
    /// does not hold it yet is given it, and the call made again, on the same connection.
    async fn query_script(
        &self,
        script: Option<&Lua>,
        command: &redis::Cmd,
    ) -> Result<redis::Value, StoreError> {
        async fn on(
            script: Option<&Lua>,
            command: &redis::Cmd,
            connection: &mut impl ConnectionLike,
        ) -> redis::RedisResult<redis::Value> {
            match (command.query_async(connection).await, script) {
                (Err(error), Some(script)) if lua::missing(&error) => {
                    let _: redis::Value = script.load().query_async(connection).await?;
                    command.query_async(connection).await
                }
                (answer, _) => answer,
            }
        }
        match &*self.connection {
            Connection::Single(manager) => on(script, command, &mut manager.clone())
                .await
                .map_err(failed),
            Connection::Cluster(cluster) => {
                // The connection is multiplexed: calls share a clone of it, and only making it is
                // done under the lock (once, however many calls wait).
                let mut connection = {
                    let mut slot = cluster.connection.lock().await;
                    match &*slot {
                        Some(connection) => connection.clone(),
                        None => {
                            let connection = cluster
                                .client
                                .get_async_connection()
                                .await
                                .map_err(failed)?;
                            *slot = Some(connection.clone());
                            connection
                        }
                    }
                };
                on(script, command, &mut connection).await.map_err(failed)
            }
            Connection::Sentinel(master) => {
                let (generation, mut connection) = master.connection().await?;
                let result = on(script, command, &mut connection).await;
                if let Err(error) = &result {
                    master.failed(generation, error);
                }
                result.map_err(failed)
            }
        }
    }

    /// Runs `command` and converts its reply.
    async fn run<T: redis::FromRedisValue>(&self, command: &redis::Cmd) -> Result<T, StoreError> {
        let value = self.query(command).await?;
        redis::from_redis_value(value).map_err(|e| StoreError::Failed(e.to_string()))
    }

    /// Runs a call of `script` and converts its reply.
    async fn run_script<T: redis::FromRedisValue>(
        &self,
        script: &Lua,
        command: &redis::Cmd,
    ) -> Result<T, StoreError> {
        let value = self.query_script(Some(script), command).await?;
        redis::from_redis_value(value).map_err(|e| StoreError::Failed(e.to_string()))
    }
}

impl SharedStore for RedisStore {
    fn load<'a>(
        &'a self,
        origin: &'a str,
        max_body_bytes: usize,
    ) -> BoxFuture<'a, Result<Option<Encoded>, StoreError>> {
        async move {
            let script = &self.record_scripts.load;
            let mut command = record_call(script, origin);
            command.arg(MAX_META_BYTES).arg(max_body_bytes);
            redis_record::loaded(self.query_script(Some(script), &command).await?)
        }
        .boxed()
    }

    fn save<'a>(
        &'a self,
        origin: &'a str,
        version: &'a str,
        meta: &'a [u8],
        body: &'a BodyWrite,
        ttl: Duration,
        release: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        async move {
            let (mode, body): (&str, &[u8]) = match body {
                BodyWrite::Set(body) => ("set", body),
                BodyWrite::Keep => ("keep", b""),
                BodyWrite::Remove => ("remove", b""),
            };
            let script = &self.record_scripts.save;
            let mut command = script.call(&[
                record_key(origin),
                hashed_record_key(origin),
                lease_key(origin),
            ]);
            command
                .arg(redis_record::frame(version, meta))
                .arg(mode)
                .arg(body)
                .arg(millis(ttl))
                .arg(release.unwrap_or_default());
            self.query_script(Some(script), &command).await.map(drop)
        }
        .boxed()
    }

    fn try_lease<'a>(
        &'a self,
        origin: &'a str,
        token: &'a str,
        ttl: Duration,
        max_body_bytes: usize,
    ) -> BoxFuture<'a, Result<Lease<Encoded>, StoreError>> {
        async move {
            let script = &self.record_scripts.lease;
            let command = leasing(script, origin, token, ttl, max_body_bytes);
            let reply = self.query_script(Some(script), &command).await?;
            redis_record::leased(reply)
        }
        .boxed()
    }

    fn load_or_lease<'a>(
        &'a self,
        origin: &'a str,
        token: &'a str,
        ttl: Duration,
        max_body_bytes: usize,
    ) -> BoxFuture<'a, Result<Looked<Encoded>, StoreError>> {
        async move {
            let script = &self.record_scripts.load_or_lease;
            let command = leasing(script, origin, token, ttl, max_body_bytes);
            let reply = self.query_script(Some(script), &command).await?;
            redis_record::looked(reply)
        }
        .boxed()
    }

    fn release<'a>(
        &'a self,
        origin: &'a str,
        token: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        async move {
            let script = &self.record_scripts.release;
            let mut command = script.call(&[lease_key(origin)]);
            command.arg(token);
            let _: i64 = self.run_script(script, &command).await?;
            Ok(())
        }
        .boxed()
    }

    fn reserve<'a>(
        &'a self,
        origin: &'a str,
        request: SlotRequest,
        keep: Duration,
        timetable: Option<Arc<Timetable>>,
    ) -> BoxFuture<'a, Result<SlotGrant, StoreError>> {
        let store = self.clone();
        let call = move |lane: String, asked: Vec<(SlotRequest, Option<Arc<Timetable>>)>, keep| {
            let store = store.clone();
            async move {
                let requests: Vec<SlotRequest> =
                    asked.iter().map(|(request, _)| *request).collect();
                let runs = redis_pace::runs(&requests);
                // One replica's reservations: the newest leases it read go.
                match asked.into_iter().rev().find_map(|(_, timetable)| timetable) {
                    Some(timetable) => {
                        // The lane and the leases share a server except in a cluster.
                        let check = !matches!(&*store.connection, Connection::Cluster(_));
                        let scripts = &store.lease_scripts;
                        let command = redis_lease::reserve(
                            scripts,
                            redis_pace::pace_key(&lane),
                            &runs,
                            &timetable,
                            check,
                            keep,
                        );
                        let reply = store.run_script(&scripts.reserve, &command).await?;
                        redis_lease::granted(reply, &runs)
                    }
                    None => {
                        let command = redis_pace::reserve(&store.scripts, &lane, &runs, keep);
                        let reply = store.run_script(&store.scripts.reserve, &command).await?;
                        redis_pace::granted(reply, &runs)
                    }
                }
            }
        };
        self.coalescer
            .reserve(origin, (request, timetable), keep, call)
            .boxed()
    }

    fn lend<'a>(
        &'a self,
        request: &'a LendRequest,
        size: u32,
        keep: Duration,
    ) -> BoxFuture<'a, Result<LendAnswer, StoreError>> {
        async move {
            let scripts = &self.lease_scripts;
            let command = redis_lease::lend(scripts, request, size, keep);
            redis_lease::lent(self.run_script(&scripts.lend, &command).await?)
        }
        .boxed()
    }

    fn signal<'a>(
        &'a self,
        lane: &'a str,
        origin: &'a str,
        signal: Signal,
        keep: Duration,
    ) -> BoxFuture<'a, Result<Option<PaceReading>, StoreError>> {
        // Into `lane`'s state; when the lane has none, only if `origin`'s record shows that some
        // replica checked it. The record is in the origin's hash slot and the state in the
        // lane's, so that is a second call, made only for a lane's first report.
        async move {
            let command = |create| redis_pace::signal(&self.scripts, lane, signal, keep, create);
            let script = &self.scripts.signal;
            if let Some(reading) = redis_pace::reading(self.run_script(script, &command(0)).await?)?
            {
                return Ok(Some(reading));
            }
            let mut exists = redis::cmd("EXISTS");
            exists.arg(record_key(origin));
            let checked: i64 = self.run(&exists).await?;
            if checked == 0 {
                return Ok(None);
            }
            redis_pace::reading(self.run_script(script, &command(1)).await?)
        }
        .boxed()
    }

    fn pace<'a>(
        &'a self,
        origin: &'a str,
    ) -> BoxFuture<'a, Result<Option<PaceReading>, StoreError>> {
        async move {
            let command = redis_pace::read(&self.scripts, origin);
            redis_pace::reading(self.run_script(&self.scripts.read, &command).await?)
        }
        .boxed()
    }

    fn ping(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        async move {
            // A write, so that a Redis that answers but refuses writes stays down; one small key
            // that expires by itself.
            let mut probe = redis::cmd("SET");
            probe.arg(PROBE_KEY).arg("1").arg("PX").arg(10_000);
            let _: String = self.run(&probe).await?;
            Ok(())
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RedisTls;

    #[tokio::test]
    async fn credentials_never_show() {
        assert_eq!(
            redact("rediss://robotsd:s3cret@redis.internal:6380/0"),
            "rediss://redis.internal:6380/0"
        );
        let config = RedisConfig {
            target: RedisTarget::Server("redis://:s3cret@127.0.0.1:6379".into()),
            password: Some("other-s3cret".into()),
            connect_timeout: Duration::from_secs(1),
            response_timeout: Duration::from_secs(1),
            tls: None,
        };
        let shown = format!("{config:?} {:?}", RedisStore::new(config.clone()).unwrap());
        assert!(!shown.contains("s3cret"), "{shown}");
        let with_key = RedisConfig {
            tls: Some(RedisTls {
                ca: None,
                client: Some((b"a certificate".to_vec(), b"s3cret key".to_vec())),
            }),
            ..config
        };
        let shown = format!("{with_key:?}");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("client: true"), "{shown}");
    }

    #[test]
    fn certificates_that_are_not_pem_stop_the_start() {
        let config = RedisConfig {
            target: RedisTarget::Server("rediss://127.0.0.1:6380".into()),
            password: None,
            connect_timeout: Duration::from_secs(1),
            response_timeout: Duration::from_secs(1),
            tls: Some(RedisTls {
                ca: None,
                client: Some((b"not a certificate".to_vec(), b"not a key".to_vec())),
            }),
        };
        let error = RedisStore::new(config).unwrap_err();
        assert!(matches!(error, RedisStoreError::Tls(_)), "{error}");
        assert!(error.to_string().contains("--redis-client-key"), "{error}");
    }

    #[test]
    fn an_origin_s_keys_share_a_hash_tag() {
        assert_eq!(
            lease_key("https://example.com:8443"),
            "robotsd:{https://example.com:8443}:lease"
        );
    }
}
