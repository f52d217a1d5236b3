//! The logging settings: the line format and the filter of which lines are written, checked into
//! [`LogSettings`].
//!
//! The filter is parsed here, at start-up, so that a typo in `--log-level` stops robotsd with a
//! message naming the flag instead of silently logging at some other level.

use super::ConfigError;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// How and what to log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSettings {
    /// Text or JSON lines (text).
    pub format: LogFormat,
    /// A `tracing_subscriber::EnvFilter` directive string, already checked to parse (`info`).
    pub level: String,
}

impl Default for LogSettings {
    fn default() -> Self {
        LogSettings {
            format: LogFormat::Text,
            level: "info".to_string(),
        }
    }
}

/// The flags of logging.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Logging")]
pub struct LogArgs {
    /// Log line format.
    #[arg(long, env = "ROBOTSD_LOG_FORMAT", default_value = "text")]
    #[arg(value_enum, value_name = "FORMAT")]
    pub log_format: LogFormat,

    /// Which log lines are written: a tracing EnvFilter directive such as `info`,
    /// `warn,robotsd=debug` (RUST_LOG is not read).
    #[arg(long, env = "ROBOTSD_LOG_LEVEL", default_value = "info")]
    #[arg(value_name = "FILTER")]
    pub log_level: String,
}

impl LogArgs {
    /// The checked [`LogSettings`].
    pub(super) fn log_settings(&self) -> Result<LogSettings, ConfigError> {
        tracing_subscriber::EnvFilter::try_new(&self.log_level).map_err(|e| {
            ConfigError::LogLevel {
                value: self.log_level.clone(),
                detail: e.to_string(),
            }
        })?;
        Ok(LogSettings {
            format: self.log_format,
            level: self.log_level.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{error_of, parse, settings};
    use super::*;

    #[test]
    fn unknown_log_format_lists_the_choices() {
        let err = parse(&["--log-format", "yaml"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::InvalidValue);
        let message = err.to_string();
        assert!(message.contains("yaml"), "{message}");
        assert!(
            message.contains("text") && message.contains("json"),
            "{message}"
        );
    }

    #[test]
    fn log_level_must_be_a_filter() {
        let err = error_of(&["--log-level", "robotsd=loud"]);
        assert!(matches!(err, ConfigError::LogLevel { .. }));
        assert!(err.to_string().starts_with("--log-level"));
        settings(&["--log-level", "debug,hyper=warn"]).unwrap();
    }
}
