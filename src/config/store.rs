//! The shared store's settings (docs/fleet.md): where Redis is, how long robotsd waits for it,
//! and how replicas share a fetch, checked into a [`StoreConfig`]. Without `--redis-url` there is
//! no store and nothing else here matters: the in-memory cache is the whole story.

use std::path::PathBuf;
use std::time::Duration;

use super::values::parse_duration;
use super::{ConfigError, flag};
use crate::cache::FleetConfig;
use crate::fetch::FetchConfig;
use crate::store::{RedisConfig, RedisTarget, RedisTls, SentinelConfig, StoreSettings, redact};

/// The store robotsd shares origin state through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    /// Where Redis is.
    pub redis: RedisConfig,
    /// Time limit and circuit breaker of every call.
    pub settings: StoreSettings,
    /// Leases and staleness.
    pub fleet: FleetConfig,
}

/// The flags of the shared store.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Shared store (a fleet of replicas)")]
pub struct StoreArgs {
    /// Redis (or Valkey) that replicas share origin state through: redis://[user[:password]@]host[:port][/db],
    /// or rediss:// for TLS. Unset (and no --redis-sentinel): each replica keeps its own
    /// in-memory cache.
    #[arg(long, env = "ROBOTSD_REDIS_URL", value_name = "URL")]
    pub redis_url: Option<String>,

    /// Redis Sentinel, instead of --redis-url: the sentinels to ask for the master of
    /// --redis-sentinel-master, host:port each (port 26379 if left out), comma-separated.
    /// robotsd follows the master through failovers without a restart.
    #[arg(
        long,
        env = "ROBOTSD_REDIS_SENTINEL",
        value_name = "HOST:PORT[,HOST:PORT...]"
    )]
    #[arg(value_delimiter = ',')]
    pub redis_sentinel: Vec<String>,

    /// The name the sentinels monitor the master under (sentinel monitor NAME ...).
    #[arg(long, env = "ROBOTSD_REDIS_SENTINEL_MASTER", value_name = "NAME")]
    pub redis_sentinel_master: Option<String>,

    /// A file holding the sentinels' own password (requirepass in sentinel.conf), if they need
    /// one; the master's is --redis-password-file.
    #[arg(
        long,
        env = "ROBOTSD_REDIS_SENTINEL_PASSWORD_FILE",
        value_name = "PATH"
    )]
    pub redis_sentinel_password_file: Option<PathBuf>,

    /// With --redis-sentinel: speak TLS to the sentinels and to the master they name (with
    /// --redis-ca-file and --redis-client-cert as for rediss://). A --redis-url says TLS by its
    /// scheme instead.
    #[arg(long, env = "ROBOTSD_REDIS_TLS")]
    pub redis_tls: bool,

    /// A file holding the Redis password (a trailing newline is ignored), so that no secret is in
    /// the command line; overrides the URL's password.
    #[arg(long, env = "ROBOTSD_REDIS_PASSWORD_FILE", value_name = "PATH")]
    pub redis_password_file: Option<PathBuf>,

    /// PEM file of the CA certificate(s) that sign the Redis server's certificate (rediss://), in
    /// place of the system's trust store: a platform's own CA. Used for Redis only.
    #[arg(long, env = "ROBOTSD_REDIS_CA_FILE", value_name = "PATH")]
    pub redis_ca_file: Option<PathBuf>,

    /// PEM file of the client certificate (chain) robotsd shows a Redis that requires one
    /// (tls-auth-clients); with --redis-client-key.
    #[arg(long, env = "ROBOTSD_REDIS_CLIENT_CERT", value_name = "PATH")]
    pub redis_client_cert: Option<PathBuf>,

    /// PEM file of the private key of --redis-client-cert.
    #[arg(long, env = "ROBOTSD_REDIS_CLIENT_KEY", value_name = "PATH")]
    pub redis_client_key: Option<PathBuf>,

    /// The URL names a node of a Redis Cluster (the others are discovered).
    #[arg(long, env = "ROBOTSD_REDIS_CLUSTER")]
    pub redis_cluster: bool,

    /// Time limit of every call to the store; a slower store is treated as down.
    #[arg(long, env = "ROBOTSD_STORE_TIMEOUT", default_value = "250ms")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub store_timeout: Duration,

    /// How long a replica's fetch lease lasts: others wait at most this for a replica that died
    /// mid-fetch. At least --fetch-timeout.
    #[arg(long, env = "ROBOTSD_STORE_LEASE", default_value = "15s")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub store_lease: Duration,

    /// How long a replica answers from its own copy before comparing it with the store: the
    /// bound on how stale its answers can be against another replica's newer result.
    #[arg(long, env = "ROBOTSD_STORE_SYNC_INTERVAL", default_value = "60s")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub store_sync_interval: Duration,
}

impl StoreArgs {
    /// The checked [`StoreConfig`], `None` without `--redis-url` or `--redis-sentinel`.
    pub(super) fn store_config(
        &self,
        fetch: &FetchConfig,
    ) -> Result<Option<StoreConfig>, ConfigError> {
        let Some(target) = self.target()? else {
            return Ok(None);
        };
        for (field, value) in [
            ("settings.timeout", self.store_timeout),
            ("fleet.sync_interval", self.store_sync_interval),
        ] {
            if value.is_zero() {
                return Err(ConfigError::zero("store", field));
            }
        }
        if self.store_lease < fetch.total_timeout {
            return Err(ConfigError::Exceeds {
                flag: flag("fetch", "total_timeout"),
                value: humantime::format_duration(fetch.total_timeout).to_string(),
                limit_flag: flag("store", "fleet.lease_ttl"),
                limit: humantime::format_duration(self.store_lease).to_string(),
            });
        }
        let password = secret(&self.redis_password_file, "redis.password")?;
        let tls = self.tls(&target)?;
        Ok(Some(StoreConfig {
            redis: RedisConfig {
                target,
                password,
                connect_timeout: self.store_timeout,
                response_timeout: self.store_timeout,
                tls,
            },
            settings: StoreSettings {
                timeout: self.store_timeout,
                ..StoreSettings::default()
            },
            fleet: FleetConfig {
                lease_ttl: self.store_lease,
                sync_interval: self.store_sync_interval,
                ..FleetConfig::default()
            },
        }))
    }

    /// Which Redis: a server or cluster by `--redis-url`, or the master that `--redis-sentinel`
    /// names; `None` without either.
    fn target(&self) -> Result<Option<RedisTarget>, ConfigError> {
        let error = |field: &str, detail: String| ConfigError::Store {
            flag: flag("store", field),
            detail,
        };
        if let Some(url) = &self.redis_url {
            if !self.redis_sentinel.is_empty() {
                return Err(error(
                    "redis.sentinel",
                    format!("not with {}: choose one", flag("store", "redis.url")),
                ));
            }
            if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
                return Err(error(
                    "redis.url",
                    format!("{} is not a redis:// or rediss:// URL", redact(url)),
                ));
            }
            if self.redis_tls {
                return Err(error(
                    "redis.sentinel.tls",
                    "is for --redis-sentinel; a --redis-url says TLS by its scheme, rediss://"
                        .into(),
                ));
            }
            if self.redis_sentinel_master.is_some() || self.redis_sentinel_password_file.is_some() {
                let field = match self.redis_sentinel_master {
                    Some(_) => "redis.sentinel.master",
                    None => "redis.sentinel.password",
                };
                return Err(error(
                    field,
                    format!(
                        "is for --redis-sentinel, not {}",
                        flag("store", "redis.url")
                    ),
                ));
            }
            return Ok(Some(match self.redis_cluster {
                true => RedisTarget::Cluster(url.clone()),
                false => RedisTarget::Server(url.clone()),
            }));
        }
        if self.redis_sentinel.is_empty() {
            // A Sentinel setting without sentinels would leave the store off without a word.
            let orphan = [
                (
                    "redis.sentinel.master",
                    self.redis_sentinel_master.is_some(),
                ),
                (
                    "redis.sentinel.password",
                    self.redis_sentinel_password_file.is_some(),
                ),
                ("redis.sentinel.tls", self.redis_tls),
            ];
            if let Some((field, _)) = orphan.iter().find(|(_, set)| *set) {
                return Err(error(
                    field,
                    format!("needs {}", flag("store", "redis.sentinel")),
                ));
            }
            return Ok(None);
        }
        if self.redis_cluster {
            return Err(error(
                "redis.cluster",
                format!("not with {}", flag("store", "redis.sentinel")),
            ));
        }
        let Some(master) = self.redis_sentinel_master.clone().filter(|m| !m.is_empty()) else {
            return Err(error(
                "redis.sentinel.master",
                format!(
                    "is needed with {}: the name the sentinels monitor the master under",
                    flag("store", "redis.sentinel")
                ),
            ));
        };
        let sentinels = self
            .redis_sentinel
            .iter()
            .map(|item| sentinel_address(item).map_err(|detail| error("redis.sentinel", detail)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(RedisTarget::Sentinel(SentinelConfig {
            sentinels,
            master,
            password: secret(
                &self.redis_sentinel_password_file,
                "redis.sentinel.password",
            )?,
            tls: self.redis_tls,
        })))
    }

    /// The TLS files, read, if any is given: only for TLS (a `rediss://` URL, or Sentinel with
    /// `--redis-tls`), and a client certificate only with its key. Whether they hold usable PEM
    /// is for the store to say.
    fn tls(&self, target: &RedisTarget) -> Result<Option<RedisTls>, ConfigError> {
        let files = [
            ("redis.tls.ca", &self.redis_ca_file),
            ("redis.tls.client_cert", &self.redis_client_cert),
            ("redis.tls.client_key", &self.redis_client_key),
        ];
        let Some((field, _)) = files.iter().find(|(_, path)| path.is_some()) else {
            return Ok(None);
        };
        let detail = match target {
            RedisTarget::Server(url) | RedisTarget::Cluster(url)
                if !url.starts_with("rediss://") =>
            {
                Some(format!(
                    "needs a rediss:// --redis-url, not {}",
                    redact(url)
                ))
            }
            RedisTarget::Sentinel(sentinel) if !sentinel.tls => {
                Some("needs --redis-tls with --redis-sentinel".to_string())
            }
            _ => None,
        };
        if let Some(detail) = detail {
            return Err(ConfigError::Store {
                flag: flag("store", field),
                detail,
            });
        }
        let bytes = |field: &str, path: &Option<PathBuf>| -> Result<Option<Vec<u8>>, ConfigError> {
            path.as_ref()
                .map(|path| read(path, field).map(String::into_bytes))
                .transpose()
        };
        let client = match (
            bytes("redis.tls.client_cert", &self.redis_client_cert)?,
            bytes("redis.tls.client_key", &self.redis_client_key)?,
        ) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            (cert, _) => {
                let (given, missing) = match cert {
                    Some(_) => ("redis.tls.client_cert", "redis.tls.client_key"),
                    None => ("redis.tls.client_key", "redis.tls.client_cert"),
                };
                return Err(ConfigError::Store {
                    flag: flag("store", given),
                    detail: format!("needs {} too", flag("store", missing)),
                });
            }
        };
        Ok(Some(RedisTls {
            ca: bytes("redis.tls.ca", &self.redis_ca_file)?,
            client,
        }))
    }
}

/// A sentinel's `host[:port]` (`[v6]:port` for IPv6); the port is Sentinel's 26379 if left out.
fn sentinel_address(item: &str) -> Result<(String, u16), String> {
    let item = item.trim();
    let url = url::Url::parse(&format!("redis://{item}"))
        .ok()
        .filter(|url| url.username().is_empty() && url.password().is_none())
        .filter(|url| matches!(url.path(), "" | "/") && url.query().is_none())
        .ok_or_else(|| format!("{item:?} is not host:port"))?;
    let host = match url.host() {
        Some(url::Host::Domain(name)) => name.to_string(),
        Some(url::Host::Ipv4(ip)) => ip.to_string(),
        Some(url::Host::Ipv6(ip)) => ip.to_string(),
        None => return Err(format!("{item:?} names no host")),
    };
    Ok((host, url.port().unwrap_or(26379)))
}

/// A file holding a secret, read, without its trailing newline.
fn secret(path: &Option<PathBuf>, field: &str) -> Result<Option<String>, ConfigError> {
    path.as_ref()
        .map(|path| {
            Ok(read(path, field)?
                .trim_end_matches(['\r', '\n'])
                .to_string())
        })
        .transpose()
}

/// A file of a setting, read whole; an error names the setting's flag and the path.
fn read(path: &std::path::Path, field: &str) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|e| ConfigError::Store {
        flag: flag("store", field),
        detail: format!("{}: {e}", path.display()),
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{error_of, settings};
    use crate::store::RedisTarget;

    #[test]
    fn no_redis_url_no_store() {
        assert_eq!(settings(&[]).unwrap().store, None);
    }

    #[test]
    fn a_redis_url_makes_a_store() {
        let store = settings(&["--redis-url", "redis://127.0.0.1:6379/0"])
            .unwrap()
            .store
            .expect("a store");
        assert_eq!(
            store.redis.target,
            RedisTarget::Server("redis://127.0.0.1:6379/0".into())
        );
    }

    #[test]
    fn sentinels_name_the_master() {
        let path = std::env::temp_dir().join(format!("robotsd-spw-{}", std::process::id()));
        std::fs::write(&path, "s3ntinel\n").unwrap();
        let store = settings(&[
            "--redis-sentinel",
            "10.0.0.1:26380, sentinel-2,[fd00::7]:26381",
            "--redis-sentinel-master",
            "mymaster",
            "--redis-sentinel-password-file",
            path.to_str().unwrap(),
        ])
        .unwrap()
        .store
        .expect("a store");
        std::fs::remove_file(&path).unwrap();
        let RedisTarget::Sentinel(sentinel) = store.redis.target else {
            panic!("{:?}", store.redis.target);
        };
        assert_eq!(
            sentinel.sentinels,
            [
                ("10.0.0.1".to_string(), 26380),
                ("sentinel-2".to_string(), 26379),
                ("fd00::7".to_string(), 26381)
            ]
        );
        assert_eq!(sentinel.master, "mymaster");
        assert_eq!(sentinel.password.as_deref(), Some("s3ntinel"));
        assert!(!sentinel.tls);
    }

    #[test]
    fn sentinel_settings_that_cannot_work_name_their_flag() {
        let cases: [(&[&str], &str); 8] = [
            (
                &["--redis-url", "redis://x", "--redis-sentinel-master", "m"],
                "--redis-sentinel-master",
            ),
            (&["--redis-sentinel", "10.0.0.1"], "--redis-sentinel-master"),
            (&["--redis-sentinel-master", "m"], "--redis-sentinel"),
            (
                &[
                    "--redis-sentinel",
                    "10.0.0.1",
                    "--redis-url",
                    "redis://x",
                    "--redis-sentinel-master",
                    "m",
                ],
                "--redis-sentinel",
            ),
            (
                &[
                    "--redis-sentinel",
                    "user:pw@10.0.0.1",
                    "--redis-sentinel-master",
                    "m",
                ],
                "--redis-sentinel",
            ),
            (
                &[
                    "--redis-sentinel",
                    "10.0.0.1",
                    "--redis-sentinel-master",
                    "m",
                    "--redis-cluster",
                ],
                "--redis-cluster",
            ),
            (&["--redis-url", "redis://x", "--redis-tls"], "--redis-tls"),
            (
                &[
                    "--redis-sentinel",
                    "10.0.0.1",
                    "--redis-sentinel-master",
                    "m",
                    "--redis-ca-file",
                    "/nonexistent/ca.pem",
                ],
                "--redis-tls",
            ),
        ];
        for (args, flag) in cases {
            let message = error_of(args).to_string();
            assert!(message.contains(flag), "{args:?}: {message}");
        }
    }

    #[test]
    fn bad_store_settings_name_their_flag() {
        let cases: [(&[&str], &str); 4] = [
            (&["--redis-url", "http://x"], "--redis-url"),
            (
                &["--redis-url", "redis://x", "--store-timeout", "0"],
                "--store-timeout",
            ),
            (
                &["--redis-url", "redis://x", "--store-lease", "5s"],
                "--store-lease",
            ),
            (
                &[
                    "--redis-url",
                    "redis://x",
                    "--redis-password-file",
                    "/nonexistent/pw",
                ],
                "--redis-password-file",
            ),
        ];
        for (args, flag) in cases {
            let message = error_of(args).to_string();
            assert!(message.contains(flag), "{args:?}: {message}");
        }
    }

    #[test]
    fn the_password_file_is_read_and_never_shown() {
        let path = std::env::temp_dir().join(format!("robotsd-pw-{}", std::process::id()));
        std::fs::write(&path, "s3cret\n").unwrap();
        let store = settings(&[
            "--redis-url",
            "redis://:urlpass@127.0.0.1",
            "--redis-password-file",
            path.to_str().unwrap(),
        ])
        .unwrap()
        .store
        .unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(store.redis.password.as_deref(), Some("s3cret"));
        let shown = format!("{store:?}");
        assert!(
            !shown.contains("s3cret") && !shown.contains("urlpass"),
            "{shown}"
        );
    }

    #[test]
    fn tls_files_are_read_for_a_rediss_url_only() {
        let dir = std::env::temp_dir().join(format!("robotsd-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str| {
            let path = dir.join(name);
            std::fs::write(&path, format!("{name} PEM")).unwrap();
            path.to_str().unwrap().to_string()
        };
        let (ca, cert, key) = (file("ca"), file("cert"), file("key"));
        let store = settings(&[
            "--redis-url",
            "rediss://127.0.0.1:6380",
            "--redis-ca-file",
            &ca,
            "--redis-client-cert",
            &cert,
            "--redis-client-key",
            &key,
        ])
        .unwrap()
        .store
        .unwrap();
        let tls = store.redis.tls.expect("certificates");
        assert_eq!(tls.ca.as_deref(), Some(&b"ca PEM"[..]));
        assert_eq!(
            tls.client,
            Some((b"cert PEM".to_vec(), b"key PEM".to_vec()))
        );
        let cases: [(&[&str], &str); 3] = [
            (
                &["--redis-url", "redis://127.0.0.1", "--redis-ca-file", &ca],
                "--redis-ca-file",
            ),
            (
                &[
                    "--redis-url",
                    "rediss://127.0.0.1",
                    "--redis-client-cert",
                    &cert,
                ],
                "--redis-client-key",
            ),
            (
                &[
                    "--redis-url",
                    "rediss://127.0.0.1",
                    "--redis-ca-file",
                    "/nonexistent/ca.pem",
                ],
                "--redis-ca-file",
            ),
        ];
        for (args, flag) in cases {
            let message = error_of(args).to_string();
            assert!(message.contains(flag), "{args:?}: {message}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            settings(&["--redis-url", "rediss://127.0.0.1"])
                .unwrap()
                .store
                .unwrap()
                .redis
                .tls,
            None,
            "the system's roots, no client certificate"
        );
    }
}
