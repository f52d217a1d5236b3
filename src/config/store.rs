//! The shared store's settings (docs/fleet.md): where Redis is, how long robotsd waits for it,
//! and how replicas share a fetch, checked into a [`StoreConfig`]. Without `--redis-url` there is
//! no store and nothing else here matters: the in-memory cache is the whole story.

use std::path::PathBuf;
use std::time::Duration;

use super::values::parse_duration;
use super::{ConfigError, flag};
use crate::cache::FleetConfig;
use crate::fetch::FetchConfig;
use crate::store::{RedisConfig, RedisTls, StoreSettings, redact};

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
    /// or rediss:// for TLS. Unset: each replica keeps its own in-memory cache.
    #[arg(long, env = "ROBOTSD_REDIS_URL", value_name = "URL")]
    pub redis_url: Option<String>,

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
    /// The checked [`StoreConfig`], `None` without `--redis-url`.
    pub(super) fn store_config(
        &self,
        fetch: &FetchConfig,
    ) -> Result<Option<StoreConfig>, ConfigError> {
        let Some(url) = &self.redis_url else {
            return Ok(None);
        };
        if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
            return Err(ConfigError::Store {
                flag: flag("store", "redis.url"),
                detail: format!("{} is not a redis:// or rediss:// URL", redact(url)),
            });
        }
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
        let password = match &self.redis_password_file {
            None => None,
            Some(path) => {
                let text = read(path, "redis.password")?;
                Some(text.trim_end_matches(['\r', '\n']).to_string())
            }
        };
        let tls = self.tls(url)?;
        Ok(Some(StoreConfig {
            redis: RedisConfig {
                url: url.clone(),
                password,
                cluster: self.redis_cluster,
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

    /// The TLS files, read, if any is given: only for a `rediss://` URL, and a client
    /// certificate only with its key. Whether they hold usable PEM is for the store to say.
    fn tls(&self, url: &str) -> Result<Option<RedisTls>, ConfigError> {
        let files = [
            ("redis.tls.ca", &self.redis_ca_file),
            ("redis.tls.client_cert", &self.redis_client_cert),
            ("redis.tls.client_key", &self.redis_client_key),
        ];
        let Some((field, _)) = files.iter().find(|(_, path)| path.is_some()) else {
            return Ok(None);
        };
        if !url.starts_with("rediss://") {
            return Err(ConfigError::Store {
                flag: flag("store", field),
                detail: format!("needs a rediss:// --redis-url, not {}", redact(url)),
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
        assert_eq!(store.redis.url, "redis://127.0.0.1:6379/0");
        assert!(!store.redis.cluster);
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
