//! The settings of TDMRep's origin-wide file (`docs/page.md`, "TDMRep"): whether robotsd fetches
//! each origin's `/.well-known/tdmrep.json` for page answers, and the memory the files may hold,
//! checked into [`TdmRepSettings`].

use super::{ConfigError, parse_size};

/// TDMRep's well-known files, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TdmRepSettings {
    /// Whether the files are fetched for page answers (off by default).
    pub enabled: bool,
    /// Most bytes of files held.
    pub capacity_bytes: u64,
}

/// Bytes of `tdmrep.json` files held by default: a file of a few rules holds a few hundred
/// bytes, so this keeps tens of thousands of origins'.
pub const DEFAULT_TDMREP_CAPACITY: u64 = 8 * 1024 * 1024;

impl Default for TdmRepSettings {
    fn default() -> Self {
        TdmRepSettings {
            enabled: false,
            capacity_bytes: DEFAULT_TDMREP_CAPACITY,
        }
    }
}

/// The flags of TDMRep's well-known files.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "TDMRep")]
pub struct TdmRepArgs {
    /// Fetch each origin's `/.well-known/tdmrep.json` (W3C TDMRep) for `POST /v1/page`, kept and
    /// refreshed as robots.txt is, and report its rule for the page's URL under the page's own
    /// headers and `meta` tags. Off by default: one more request per origin. The variable takes
    /// true/false (also yes/no, on/off, 1/0).
    #[arg(long, env = "ROBOTSD_TDMREP")]
    #[arg(value_parser = clap::builder::BoolishValueParser::new())]
    pub tdmrep: bool,

    /// Memory bound of the `tdmrep.json` files a replica holds.
    #[arg(long, env = "ROBOTSD_TDMREP_CAPACITY", default_value = "8MiB")]
    #[arg(value_parser = parse_size, value_name = "BYTES")]
    pub tdmrep_capacity: u64,
}

impl TdmRepArgs {
    /// The checked [`TdmRepSettings`].
    pub(super) fn tdmrep_settings(&self) -> Result<TdmRepSettings, ConfigError> {
        if self.tdmrep_capacity == 0 {
            return Err(ConfigError::zero("tdmrep", "capacity_bytes"));
        }
        Ok(TdmRepSettings {
            enabled: self.tdmrep,
            capacity_bytes: self.tdmrep_capacity,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{error_of, settings};
    use super::*;

    #[test]
    fn off_by_default_and_turned_on_by_the_flag() {
        assert_eq!(settings(&[]).unwrap().tdmrep, TdmRepSettings::default());
        let on = settings(&["--tdmrep", "--tdmrep-capacity", "1MiB"])
            .unwrap()
            .tdmrep;
        assert!(on.enabled);
        assert_eq!(on.capacity_bytes, 1024 * 1024);
        assert!(
            error_of(&["--tdmrep-capacity", "0"])
                .to_string()
                .contains("--tdmrep-capacity")
        );
    }
}
