//! A master that Redis Sentinel names (`--redis-sentinel`, docs/fleet.md "Sentinel").
//!
//! One task per store asks the sentinels for the master of `--redis-sentinel-master` (the
//! sentinel checks it with `ROLE` before naming it), keeps one multiplexed connection to it, and
//! asks again whenever that master stops being one:
//! - a call on it fails with a closed connection, an I/O error, a timeout or `READONLY` (a
//!   demoted master: Sentinel reconfigures it as a replica and drops its clients);
//! - the sentinels announce `+switch-master` for the name, on the subscription the task keeps
//!   with one of them (which also covers an old master that went silent rather than away).
//!
//! While no master is known, calls wait for one, within the store's own time limit: the store is
//! down for robotsd only while there is no master, and the breaker and its recovery probe then
//! work exactly as for one server.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures_util::StreamExt as _;
use redis::aio::{MultiplexedConnection, PubSubStream};
use redis::sentinel::{SentinelClient, SentinelClientBuilder, SentinelServerType};
use redis::{AsyncConnectionConfig, ConnectionAddr, TlsMode};
use tokio::sync::{Notify, watch};

use super::StoreError;
use super::redis_config::{RedisStoreError, RedisTls, SentinelConfig};

/// How the master is reached, once the sentinels have named it.
pub(super) struct MasterSettings<'a> {
    /// The master's password (`--redis-password-file`).
    pub password: Option<&'a str>,
    /// Certificates beyond the system's roots, for the sentinels and the master alike.
    pub tls: Option<&'a RedisTls>,
    /// Time limits of the connection to the master.
    pub connect_timeout: Duration,
    /// Time limit of one reply.
    pub response_timeout: Duration,
}

/// The longest one lookup may take: asking the sentinels (each step has the client's own limit
/// of 1 s to connect and 0.5 s to answer) and connecting to the master they name. It runs in
/// the background, so it may take longer than one call to the store may.
const LOOKUP_LIMIT: Duration = Duration::from_secs(5);

/// The waits between lookups while no master is known: quick at first, then every 2 s.
const RETRY_WAITS: [Duration; 4] = [
    Duration::from_millis(250),
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
];

/// The channel on which sentinels announce a failover's new master.
const SWITCH_CHANNEL: &str = "+switch-master";

/// The master's connection as last looked up.
#[derive(Clone)]
struct Master {
    /// Which lookup made it, so that a failure on an old connection never discards a new one.
    generation: u64,
    /// `host:port`, for the log.
    address: String,
    connection: MultiplexedConnection,
}

/// The master the sentinels name, looked up and followed in the background. Cheap to share.
pub(super) struct SentinelMaster {
    name: String,
    current: watch::Sender<Option<Master>>,
    wake: Arc<Notify>,
    started: AtomicBool,
    generations: AtomicU64,
    /// The lookup client, until the task takes it.
    client: Mutex<Option<SentinelClient>>,
    connection_config: AsyncConnectionConfig,
}

impl SentinelMaster {
    /// A master to look up through `config`'s sentinels; nothing is contacted before
    /// [`SentinelMaster::start`].
    pub(super) fn new(
        config: &SentinelConfig,
        master: MasterSettings<'_>,
    ) -> Result<Arc<SentinelMaster>, RedisStoreError> {
        let sentinels = config
            .sentinels
            .iter()
            .map(|(host, port)| match config.tls {
                true => ConnectionAddr::TcpTls {
                    host: host.clone(),
                    port: *port,
                    insecure: false,
                    tls_params: None,
                },
                false => ConnectionAddr::Tcp(host.clone(), *port),
            });
        let bad = |e: redis::RedisError| RedisStoreError::Sentinel(e.to_string());
        let mut builder =
            SentinelClientBuilder::new(sentinels, &config.master, SentinelServerType::Master)
                .map_err(bad)?;
        if let Some(password) = &config.password {
            builder = builder.set_client_to_sentinel_password(password);
        }
        if let Some(password) = master.password {
            builder = builder.set_client_to_redis_password(password);
        }
        if config.tls {
            builder = builder
                .set_client_to_sentinel_tls_mode(TlsMode::Secure)
                .set_client_to_redis_tls_mode(TlsMode::Secure);
            if let Some(tls) = master.tls {
                builder = builder
                    .set_client_to_sentinel_certificates(tls.certificates())
                    .set_client_to_redis_certificates(tls.certificates());
            }
        }
        // build() parses the certificates now, so a bad file stops the start.
        let client = builder.build().map_err(|e| match config.tls {
            true => RedisStoreError::Tls(e.to_string()),
            false => bad(e),
        })?;
        Ok(Arc::new(SentinelMaster {
            name: config.master.clone(),
            current: watch::Sender::new(None),
            wake: Arc::new(Notify::new()),
            started: AtomicBool::new(false),
            generations: AtomicU64::new(0),
            client: Mutex::new(Some(client)),
            connection_config: AsyncConnectionConfig::new()
                .set_connection_timeout(Some(master.connect_timeout))
                .set_response_timeout(Some(master.response_timeout)),
        }))
    }

    /// The master's connection and its generation, waiting for a lookup while none is known
    /// (the caller's time limit bounds the wait).
    pub(super) async fn connection(
        self: &Arc<Self>,
    ) -> Result<(u64, MultiplexedConnection), StoreError> {
        self.start();
        let mut receiver = self.current.subscribe();
        let master = receiver
            .wait_for(Option::is_some)
            .await
            .map_err(|_| StoreError::Failed("the sentinel lookup ended".into()))?;
        let master = master.as_ref().expect("waited for a master");
        Ok((master.generation, master.connection.clone()))
    }

    /// A call on the connection of `generation` failed with `error`: when it says that the
    /// master is gone or no longer a master, forget it and ask the sentinels again.
    pub(super) fn failed(&self, generation: u64, error: &redis::RedisError) {
        let lost = error.is_io_error()
            || error.is_connection_dropped()
            || error.is_timeout()
            || error.code() == Some("READONLY");
        if lost {
            self.forget(Some(generation), &error.to_string());
        }
    }

    /// Forgets the master (only if it is still the one of `generation`, when given) and wakes
    /// the lookup.
    fn forget(&self, generation: Option<u64>, why: &str) {
        self.current.send_if_modified(|current| match current {
            Some(master) if generation.is_none_or(|g| g == master.generation) => {
                tracing::info!(
                    master = %master.address,
                    name = %self.name,
                    why,
                    "the shared store's master is gone or demoted: asking the sentinels again"
                );
                *current = None;
                true
            }
            _ => false,
        });
        self.wake.notify_one();
    }

    /// Starts the lookup task, once: at start when there is a runtime already (so that the
    /// master is known, and a failover followed, before the first call), else on first use.
    pub(super) fn start(self: &Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.started.swap(true, Ordering::AcqRel) {
            return;
        }
        let Some(client) = self.client.lock().expect("not poisoned").take() else {
            return;
        };
        runtime.spawn(follow(Arc::downgrade(self), self.wake.clone(), client));
    }

    /// Asks the sentinels for the master and connects to it.
    async fn look_up(&self, client: &mut SentinelClient) -> redis::RedisResult<Master> {
        let master = client.async_get_client().await?;
        let address = master.get_connection_info().addr().to_string();
        let connection = master
            .get_multiplexed_async_connection_with_config(&self.connection_config)
            .await?;
        Ok(Master {
            generation: self.generations.fetch_add(1, Ordering::Relaxed) + 1,
            address,
            connection,
        })
    }
}

/// The lookup task: finds the master whenever none is known, and keeps a subscription to a
/// sentinel's `+switch-master`. Ends when the store is dropped.
async fn follow(store: Weak<SentinelMaster>, wake: Arc<Notify>, mut client: SentinelClient) {
    let mut switches: Option<PubSubStream> = None;
    let mut attempt = 0;
    let mut last_address = None;
    loop {
        let Some(master) = store.upgrade() else {
            return;
        };
        let mut missing = false;
        if master.current.borrow().is_none() {
            match tokio::time::timeout(LOOKUP_LIMIT, master.look_up(&mut client)).await {
                Ok(Ok(found)) => {
                    if last_address.as_ref() != Some(&found.address) {
                        tracing::info!(
                            master = %found.address,
                            name = %master.name,
                            "the sentinels name the shared store's master"
                        );
                        last_address = Some(found.address.clone());
                    }
                    master.current.send_replace(Some(found));
                    attempt = 0;
                }
                Ok(Err(error)) => {
                    tracing::debug!(%error, name = %master.name, "no master from the sentinels yet");
                    missing = true;
                }
                Err(_) => {
                    tracing::debug!(name = %master.name, "the sentinel lookup timed out");
                    missing = true;
                }
            }
        }
        if switches.is_none() {
            switches = tokio::time::timeout(LOOKUP_LIMIT, subscribe(&mut client))
                .await
                .ok()
                .and_then(Result::ok);
            missing |= switches.is_none();
        }
        drop(master);
        let retry = missing.then(|| {
            let wait = RETRY_WAITS[attempt.min(RETRY_WAITS.len() - 1)];
            attempt += 1;
            wait
        });
        tokio::select! {
            () = wake.notified() => {}
            () = sleep(retry) => {}
            message = next(&mut switches) => match message {
                Some(payload) => {
                    if let Some(master) = store.upgrade()
                        && payload.split(' ').next() == Some(master.name.as_str())
                    {
                        master.forget(None, &format!("{SWITCH_CHANNEL} {payload}"));
                    }
                }
                // The sentinel went away: subscribe again, to whichever answers.
                None => switches = None,
            },
        }
    }
}

/// A subscription to a sentinel's failover announcements, with the first sentinel that
/// answers.
async fn subscribe(client: &mut SentinelClient) -> redis::RedisResult<PubSubStream> {
    let sentinel = client.async_get_sentinel_client().await?;
    let mut pubsub = sentinel.get_async_pubsub().await?;
    pubsub.subscribe(SWITCH_CHANNEL).await?;
    Ok(pubsub.into_on_message())
}

/// The next announcement's payload; `None` when the subscription ended; never, without one.
async fn next(switches: &mut Option<PubSubStream>) -> Option<String> {
    match switches {
        Some(stream) => stream
            .next()
            .await
            .map(|message| message.get_payload::<String>().unwrap_or_default()),
        None => std::future::pending().await,
    }
}

async fn sleep(wait: Option<Duration>) {
    match wait {
        Some(wait) => tokio::time::sleep(wait).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> SentinelConfig {
        SentinelConfig {
            sentinels: vec![("10.0.0.1".into(), 26379), ("::1".into(), 26380)],
            master: "mymaster".into(),
            password: Some("s3cret".into()),
            tls: false,
        }
    }

    #[test]
    fn shown_without_the_password() {
        let config = config();
        assert_eq!(
            config.to_string(),
            r#"master "mymaster" through sentinels 10.0.0.1:26379,[::1]:26380"#
        );
        assert!(!format!("{config:?}").contains("s3cret"));
    }

    #[test]
    fn certificates_that_are_not_pem_stop_the_start() {
        let tls = RedisTls {
            ca: None,
            client: Some((b"not a certificate".to_vec(), b"not a key".to_vec())),
        };
        let settings = MasterSettings {
            password: None,
            tls: Some(&tls),
            connect_timeout: Duration::from_secs(1),
            response_timeout: Duration::from_secs(1),
        };
        let config = SentinelConfig {
            tls: true,
            ..config()
        };
        let error = SentinelMaster::new(&config, settings)
            .err()
            .expect("an error");
        assert!(matches!(error, RedisStoreError::Tls(_)), "{error}");
    }
}
