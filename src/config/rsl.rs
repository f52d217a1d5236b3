//! The settings of RSL license terms (`docs/usage.md`, "RSL licenses"): whether robotsd fetches
//! the license documents a robots.txt names, and the memory they may hold, checked into
//! [`RslSettings`].

use super::{ConfigError, parse_size};

/// RSL license terms, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RslSettings {
    /// Whether license documents are fetched and their terms reported (off by default).
    pub enabled: bool,
    /// Most bytes of license documents held.
    pub capacity_bytes: u64,
}

/// Bytes of license documents held by default: a parsed RSL document of a few `<content>`
/// elements holds a few kilobytes, so this keeps thousands.
pub const DEFAULT_RSL_CAPACITY: u64 = 16 * 1024 * 1024;

impl Default for RslSettings {
    fn default() -> Self {
        RslSettings {
            enabled: false,
            capacity_bytes: DEFAULT_RSL_CAPACITY,
        }
    }
}

/// The flags of RSL license terms.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "RSL licenses")]
pub struct RslArgs {
    /// Fetch the RSL license documents that robots.txt files name (`License:` lines) and report
    /// the terms that cover each allowed URL in `usage.rsl`. Off by default: it sends requests
    /// to the URLs robots.txt files name, which may be on other sites than the one checked. The
    /// variable takes true/false (also yes/no, on/off, 1/0).
    #[arg(long, env = "ROBOTSD_RSL")]
    #[arg(value_parser = clap::builder::BoolishValueParser::new())]
    pub rsl: bool,

    /// Memory bound of the license documents a replica holds.
    #[arg(long, env = "ROBOTSD_RSL_CAPACITY", default_value = "16MiB")]
    #[arg(value_parser = parse_size, value_name = "BYTES")]
    pub rsl_capacity: u64,
}

impl RslArgs {
    /// The checked [`RslSettings`].
    pub(super) fn rsl_settings(&self) -> Result<RslSettings, ConfigError> {
        if self.rsl_capacity == 0 {
            return Err(ConfigError::zero("rsl", "capacity_bytes"));
        }
        Ok(RslSettings {
            enabled: self.rsl,
            capacity_bytes: self.rsl_capacity,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{error_of, settings};
    use super::*;

    #[test]
    fn off_by_default_and_turned_on_by_the_flag() {
        assert_eq!(settings(&[]).unwrap().rsl, RslSettings::default());
        let on = settings(&["--rsl", "--rsl-capacity", "1MiB"]).unwrap().rsl;
        assert!(on.enabled);
        assert_eq!(on.capacity_bytes, 1024 * 1024);
        assert!(
            error_of(&["--rsl-capacity", "0"])
                .to_string()
                .contains("--rsl-capacity")
        );
    }
}
