//! The settings of fleet-wide politeness (docs/politeness.md): the interval when robots.txt
//! states no crawl-delay, the caps that keep a crawl-delay or a site's pushback from stopping a
//! fleet, the longest wait a reservation may hand out, and the memory the pacing state may
//! hold, checked into [`PacingSettings`].

use std::time::Duration;

use super::{ConfigError, parse_duration, parse_size};
use crate::pace_policy::{FleetShare, FleetShareError, PaceConfig, PaceConfigError};
use crate::pacing::PaceKey;

/// Where [`PaceConfig`] sits in [`super::Settings`], to name the flag of a field.
const POLICY: &str = "pacing.policy";

/// Fleet-wide pacing, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacingSettings {
    /// Intervals, caps and waits.
    pub policy: PaceConfig,
    /// Most bytes of pacing state this replica holds (its own, or its view of the fleet's).
    pub capacity_bytes: u64,
    /// How origins share a pace.
    pub key: PaceKey,
    /// The replicas this one counts itself among when it decides slots alone.
    pub fleet: FleetShare,
}

impl Default for PacingSettings {
    fn default() -> Self {
        PacingSettings {
            policy: PaceConfig::default(),
            capacity_bytes: crate::checker::DEFAULT_PACE_CAPACITY,
            key: PaceKey::default(),
            fleet: FleetShare::WHOLE,
        }
    }
}

/// The flags of pacing.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Fleet-wide politeness (pace=true)")]
pub struct PacingArgs {
    /// The interval between two fetches from an origin whose robots.txt states no crawl-delay
    /// for the agent: one request a second, as most crawlers default to.
    #[arg(long, env = "ROBOTSD_DEFAULT_CRAWL_DELAY", default_value = "1s")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub default_crawl_delay: Duration,

    /// The longest interval: a longer crawl-delay (a `Crawl-delay: 86400`) is capped to it, and
    /// a site's pushback never slows an origin down beyond it.
    #[arg(long, env = "ROBOTSD_MAX_CRAWL_DELAY", default_value = "60s")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub max_crawl_delay: Duration,

    /// A slot further ahead than this is not reserved: the answer says when to ask again, so
    /// that a crawler requeues the URL instead of holding it.
    #[arg(long, env = "ROBOTSD_MAX_PACE_WAIT", default_value = "60s")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub max_pace_wait: Duration,

    /// The longest Retry-After a reported 429 or 503 holds an origin's fleet back.
    #[arg(long, env = "ROBOTSD_MAX_RETRY_AFTER", default_value = "10m")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub max_retry_after: Duration,

    /// Added to every interval between two fetch slots of an origin, so that a worker starting
    /// a little late (the clients allow 25 ms) never leaves the site a gap under its crawl-delay.
    #[arg(long, env = "ROBOTSD_PACE_GUARD", default_value = "50ms")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub pace_guard: Duration,

    /// Which fetches share one pace (a lane): `host` (every scheme and port of a host, as polite
    /// crawlers queue), `origin` (scheme, host and port), `site` (the registrable domain, by
    /// the Public Suffix List), or `address` (the IP address the server answered robotsd's
    /// robots.txt fetch from; by host through `--proxy`, where robotsd never learns it).
    #[arg(long, env = "ROBOTSD_PACE_KEY", default_value = "host", value_enum)]
    pub pace_key: PaceKey,

    /// Memory bound of the pacing state this replica holds (about 450 bytes an origin).
    #[arg(long, env = "ROBOTSD_PACE_CAPACITY", default_value = "32MiB")]
    #[arg(value_parser = parse_size, value_name = "BYTES")]
    pub pace_capacity: u64,

    /// How many replicas run: whenever this one decides a slot alone (no shared store, or the
    /// store down or refusing), it keeps 1/N of each site's rate, so that N replicas pacing
    /// alone still keep the crawl-delay together. Set it to the replicas' number (the
    /// autoscaler's maximum): too low, the sites get more than they asked for.
    #[arg(
        long,
        env = "ROBOTSD_FLEET_SIZE",
        default_value_t = 1,
        value_name = "N"
    )]
    pub fleet_size: u32,

    /// This replica's place among them, 0 to N-1 (a StatefulSet's ordinal): deciding alone, it
    /// takes its own phase of each interval, so that every gap at the site holds, not only the
    /// rate.
    #[arg(long, env = "ROBOTSD_FLEET_INDEX", value_name = "K")]
    pub fleet_index: Option<u32>,

    /// Added to `--fleet-index`: the first index of this release, when several releases (each
    /// numbering its pods from 0) share one store and one fleet size. Nothing without an index.
    #[arg(
        long,
        env = "ROBOTSD_FLEET_INDEX_OFFSET",
        default_value_t = 0,
        value_name = "K"
    )]
    pub fleet_index_offset: u32,
}

impl PacingArgs {
    /// The checked [`PacingSettings`].
    pub(super) fn pacing_settings(&self) -> Result<PacingSettings, ConfigError> {
        if self.pace_capacity == 0 {
            return Err(ConfigError::zero("pacing", "capacity_bytes"));
        }
        let policy = PaceConfig {
            default_interval: self.default_crawl_delay,
            max_interval: self.max_crawl_delay,
            max_wait: self.max_pace_wait,
            max_retry_after: self.max_retry_after,
            guard: self.pace_guard,
        };
        policy.validate()?;
        let index = match self.fleet_index {
            Some(index) => Some(index.checked_add(self.fleet_index_offset).ok_or(
                ConfigError::FleetIndexOutside {
                    index: u32::MAX,
                    offset: self.fleet_index_offset,
                    size: self.fleet_size,
                },
            )?),
            None => None,
        };
        let fleet = FleetShare::new(self.fleet_size, index).map_err(|error| match error {
            FleetShareError::IndexOutside { index, size } => ConfigError::FleetIndexOutside {
                index: index - self.fleet_index_offset,
                offset: self.fleet_index_offset,
                size,
            },
            FleetShareError::Empty => error.into(),
        })?;
        Ok(PacingSettings {
            policy,
            capacity_bytes: self.pace_capacity,
            key: self.pace_key,
            fleet,
        })
    }
}

impl From<PaceConfigError> for ConfigError {
    fn from(error: PaceConfigError) -> Self {
        match error {
            PaceConfigError::Zero { field } => ConfigError::zero(POLICY, field),
            PaceConfigError::DefaultAboveMax { default, max } => {
                ConfigError::exceeds(POLICY, ("default_interval", default), ("max_interval", max))
            }
        }
    }
}

impl From<FleetShareError> for ConfigError {
    fn from(error: FleetShareError) -> Self {
        match error {
            FleetShareError::Empty => ConfigError::zero("pacing.fleet", "size"),
            FleetShareError::IndexOutside { index, size } => ConfigError::FleetIndexOutside {
                index,
                offset: 0,
                size,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::error_of;
    use super::super::tests::parse;
    use super::*;

    #[test]
    fn the_defaults_and_the_flags() {
        let settings = parse(&[]).unwrap().settings().unwrap();
        assert_eq!(settings.pacing, PacingSettings::default());
        let settings = parse(&[
            "--default-crawl-delay=250ms",
            "--max-crawl-delay=30s",
            "--max-pace-wait=2m",
            "--max-retry-after=1h",
            "--pace-capacity=1MiB",
            "--pace-guard=10ms",
            "--pace-key=site",
            "--fleet-size=3",
            "--fleet-index=2",
        ])
        .unwrap()
        .settings()
        .unwrap();
        assert_eq!(
            settings.pacing.policy,
            PaceConfig {
                default_interval: Duration::from_millis(250),
                max_interval: Duration::from_secs(30),
                max_wait: Duration::from_secs(120),
                max_retry_after: Duration::from_secs(3600),
                guard: Duration::from_millis(10),
            }
        );
        assert_eq!(settings.pacing.capacity_bytes, 1 << 20);
        assert_eq!(settings.pacing.key, PaceKey::Site);
        assert_eq!(settings.pacing.fleet, FleetShare::new(3, Some(2)).unwrap());
    }

    #[test]
    fn contradictions_name_the_flags() {
        assert_eq!(
            error_of(&["--default-crawl-delay=2m"]).to_string(),
            "--default-crawl-delay (2m) must not exceed --max-crawl-delay (1m)"
        );
        assert_eq!(
            error_of(&["--max-pace-wait=0s"]).to_string(),
            "--max-pace-wait must be above zero"
        );
        assert_eq!(
            error_of(&["--pace-capacity=0"]).to_string(),
            "--pace-capacity must be above zero"
        );
        assert_eq!(
            error_of(&["--fleet-size=0"]).to_string(),
            "--fleet-size must be above zero"
        );
        assert_eq!(
            error_of(&["--fleet-size=3", "--fleet-index=3"]).to_string(),
            "--fleet-index (3) must be below --fleet-size (3): replicas are numbered from 0"
        );
        assert_eq!(
            error_of(&[
                "--fleet-size=6",
                "--fleet-index=2",
                "--fleet-index-offset=4"
            ])
            .to_string(),
            "--fleet-index (2) plus --fleet-index-offset (4) must be below --fleet-size (6): \
             replicas are numbered from 0"
        );
        let settings = parse(&[
            "--fleet-size=6",
            "--fleet-index=2",
            "--fleet-index-offset=3",
        ])
        .unwrap()
        .settings()
        .unwrap();
        assert_eq!(settings.pacing.fleet.index(), Some(5));
        // Without an index, an offset changes nothing.
        let settings = parse(&["--fleet-size=6", "--fleet-index-offset=3"])
            .unwrap()
            .settings()
            .unwrap();
        assert_eq!(settings.pacing.fleet.index(), None);
        assert_eq!(
            error_of(&["--fleet-index=1"]).to_string(),
            "--fleet-index (1) must be below --fleet-size (1): replicas are numbered from 0"
        );
    }
}
