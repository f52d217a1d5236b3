//! The shared store's settings (docs/fleet.md): where Redis is, how long robotsd waits for it,
//! and how replicas share a fetch, checked into a [`StoreConfig`]. Without `--redis-url` there is
//! no store and nothing else here matters: the in-memory cache is the whole story.

use std::path::PathBuf;
use std::time::Duration;

use super::values::parse_duration;
use super::{ConfigError, flag};
use crate::cache::FleetConfig;
use crate::fetch::FetchConfig;
use crate::store::{RedisConfig, StoreSettings, redact};

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
                let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Store {
                    flag: flag("store", "redis.password"),
                    detail: format!("{}: {e}", path.display()),
                })?;
                Some(text.trim_end_matches(['\r', '\n']).to_string())
            }
        };
        Ok(Some(StoreConfig {
            redis: RedisConfig {
                url: url.clone(),
                password,
                cluster: self.redis_cluster,
                connect_timeout: self.store_timeout,
                response_timeout: self.store_timeout,
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
}
