//! The logging settings: the line format, the filter of which lines are written, and which
//! requests get an access-log line, checked into [`LogSettings`].
//!
//! The access log is off for successful requests by default ([`AccessLog::Errors`]): traffic is
//! what the metrics are for (`robotsd_http_requests_total` by route and status), and a line for
//! each of thousands of cached checks a second would cost about a tenth of the throughput and
//! flood the log pipeline with lines nobody reads. What goes wrong (a 5xx: overload, time limits,
//! bugs) is logged; `--access-log all` logs every request.
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

/// Which requests get an access-log line (route, method, status, latency, cache result; never
/// the URL or user agent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, clap::ValueEnum)]
pub enum AccessLog {
    /// None.
    Off,
    /// Requests answered with a server error (5xx): overload, time limits, bugs.
    #[default]
    Errors,
    /// Every request.
    All,
}

impl AccessLog {
    /// Whether a request answered with `status` gets a line.
    pub fn logs(self, status: u16) -> bool {
        match self {
            AccessLog::Off => false,
            AccessLog::Errors => status >= 500,
            AccessLog::All => true,
        }
    }
}

/// How and what to log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSettings {
    /// Text or JSON lines (text).
    pub format: LogFormat,
    /// A `tracing_subscriber::EnvFilter` directive string, already checked to parse (`info`).
    pub level: String,
    /// Which requests get an access-log line (server errors).
    pub access: AccessLog,
}

impl Default for LogSettings {
    fn default() -> Self {
        LogSettings {
            format: LogFormat::Text,
            level: "info".to_string(),
            access: AccessLog::Errors,
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

    /// Which requests get an access-log line (at info, target `robotsd::access`): `errors`
    /// (5xx), `all`, or `off`. Traffic as a whole is in the metrics.
    #[arg(long, env = "ROBOTSD_ACCESS_LOG", default_value = "errors")]
    #[arg(value_enum, value_name = "WHICH")]
    pub access_log: AccessLog,
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
            access: self.access_log,
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
    fn the_access_log_keeps_server_errors_by_default() {
        assert_eq!(settings(&[]).unwrap().log.access, AccessLog::Errors);
        for (access, logged) in [
            (AccessLog::Errors, [false, false, true, true]),
            (AccessLog::All, [true; 4]),
            (AccessLog::Off, [false; 4]),
        ] {
            assert_eq!([200, 404, 503, 504].map(|s| access.logs(s)), logged);
        }
        assert_eq!(
            settings(&["--access-log", "all"]).unwrap().log.access,
            AccessLog::All
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
