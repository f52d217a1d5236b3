//! The settings of the robots.txt cache: its memory bound, and the lifetime and backoff rules of
//! SEMANTICS.md §4 and §5, which become a [`CacheConfig`].
//!
//! Whether the lifetimes and windows fit together is the cache policy's business, so the checks
//! live in [`PolicyConfig::try_new`]; its error names a field of [`PolicyConfig`], and this module
//! names the flag behind it.

use std::time::Duration;

use super::{ConfigError, parse_duration, parse_size};
use crate::cache::CacheConfig;
use crate::cache::policy::{PolicyConfig, PolicyConfigError};

/// Where [`PolicyConfig`] sits in [`super::Settings`], to name the flag of a field.
const POLICY: &str = "cache.policy";

/// The flags of caching and backoff.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Caching and backoff")]
pub struct CacheArgs {
    /// Memory bound of the robots.txt cache: bytes of parsed rules held at once.
    #[arg(long, env = "ROBOTSD_CACHE_CAPACITY", default_value = "256MiB")]
    #[arg(value_parser = parse_size, value_name = "BYTES")]
    pub cache_capacity: u64,

    /// Lifetime of a cached robots.txt whose response has no Cache-Control max-age; between
    /// --min-lifetime and --max-lifetime.
    #[arg(long, env = "ROBOTSD_DEFAULT_LIFETIME", default_value = "24h")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub default_lifetime: Duration,

    /// Shortest lifetime of a cached robots.txt, also used for no-cache and no-store; above
    /// zero.
    #[arg(long, env = "ROBOTSD_MIN_LIFETIME", default_value = "1m")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub min_lifetime: Duration,

    /// Longest lifetime a Cache-Control max-age can ask for; raise it to honour longer
    /// max-ages.
    #[arg(long, env = "ROBOTSD_MAX_LIFETIME", default_value = "24h")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub max_lifetime: Duration,

    /// From the first failure to fetch an origin's robots.txt, everything there is disallowed
    /// this long; at most --last-copy-window.
    #[arg(long, env = "ROBOTSD_DISALLOW_WINDOW", default_value = "12h")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub disallow_window: Duration,

    /// Until this long after the first failure, the last good copy of robots.txt is used;
    /// afterwards everything is allowed.
    #[arg(long, env = "ROBOTSD_LAST_COPY_WINDOW", default_value = "30days")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub last_copy_window: Duration,

    /// Shortest wait before fetching an unreachable robots.txt again (429 and 503 retry here);
    /// above zero.
    #[arg(long, env = "ROBOTSD_RETRY_MIN", default_value = "1m")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub retry_min: Duration,

    /// Longest wait before fetching an unreachable robots.txt again; retries back off
    /// exponentially from --retry-min up to this.
    #[arg(long, env = "ROBOTSD_RETRY_MAX", default_value = "1h")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub retry_max: Duration,
}

impl CacheArgs {
    /// The checked [`CacheConfig`].
    pub(super) fn cache_config(&self) -> Result<CacheConfig, ConfigError> {
        if self.cache_capacity == 0 {
            return Err(ConfigError::zero("cache", "capacity_bytes"));
        }
        let policy = PolicyConfig::try_new(
            self.default_lifetime,
            self.min_lifetime,
            self.max_lifetime,
            self.disallow_window,
            self.last_copy_window,
            self.retry_min,
            self.retry_max,
        )?;
        Ok(CacheConfig {
            capacity_bytes: self.cache_capacity,
            policy,
        })
    }
}

impl From<PolicyConfigError> for ConfigError {
    fn from(error: PolicyConfigError) -> Self {
        match error {
            PolicyConfigError::Zero { field } => ConfigError::zero(POLICY, field),
            PolicyConfigError::Exceeds {
                field,
                limit_field,
                value,
                limit,
            } => ConfigError::exceeds(POLICY, (field, value), (limit_field, limit)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::error_of;
    use super::*;

    #[test]
    fn policy_errors_name_the_flag() {
        let err = ConfigError::from(PolicyConfigError::Exceeds {
            field: "retry_min",
            limit_field: "retry_max",
            value: Duration::from_secs(7200),
            limit: Duration::from_secs(3600),
        });
        assert_eq!(
            err.to_string(),
            "--retry-min (2h) must not exceed --retry-max (1h)"
        );
        let err = ConfigError::from(PolicyConfigError::Zero {
            field: "min_lifetime",
        });
        assert_eq!(err.to_string(), "--min-lifetime must be above zero");
    }

    #[test]
    fn minimums_above_maximums_are_refused() {
        for (args, flag, limit_flag) in [
            (
                &["--connect-timeout=20s"][..],
                "--connect-timeout",
                "--fetch-timeout",
            ),
            (&["--min-lifetime=2d"], "--min-lifetime", "--max-lifetime"),
            (
                &[
                    "--min-lifetime=2h",
                    "--max-lifetime=3h",
                    "--default-lifetime=1h",
                ],
                "--min-lifetime",
                "--default-lifetime",
            ),
            (
                &["--max-lifetime=1h"],
                "--default-lifetime",
                "--max-lifetime",
            ),
            (&["--retry-min=2h"], "--retry-min", "--retry-max"),
            (
                &["--disallow-window=31days"],
                "--disallow-window",
                "--last-copy-window",
            ),
        ] {
            let err = error_of(args);
            assert!(
                matches!(
                    &err,
                    ConfigError::Exceeds { flag: f, limit_flag: l, .. } if *f == flag && *l == limit_flag
                ),
                "{args:?}: {err:?}"
            );
        }
        assert_eq!(
            error_of(&["--retry-min=2h"]).to_string(),
            "--retry-min (2h) must not exceed --retry-max (1h)"
        );
    }
}
