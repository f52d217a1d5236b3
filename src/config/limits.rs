//! The request limits: what one request may ask (URL and `ua` lengths, agents, batch size, body
//! size, work, time) and what the server takes on at once (requests in flight, fetches per batch,
//! shutdown grace), checked into [`Limits`].
//!
//! `--max-url-bytes` and `--max-user-agent-bytes` can only lower the built-in limits
//! ([`MAX_URL_BYTES`], [`MAX_USER_AGENT_BYTES`]), which the parsers enforce whatever is
//! configured, so a higher value would promise what the parsers refuse; `--max-agent-names` can
//! only lower [`MAX_AGENT_NAMES`], the most names a value of that length can list.
//! `--shutdown-grace 0` is allowed: robotsd then exits without draining.

use std::time::Duration;

use super::values::MIB;
use super::{ConfigError, parse_duration, parse_size};
use crate::origin::MAX_URL_BYTES;
use crate::user_agent::{MAX_AGENT_NAMES, MAX_USER_AGENT_BYTES};

/// Where [`Limits`] sits in [`super::Settings`], to name the flag of a field.
const SECTION: &str = "limits";

/// Bounds on what one request may ask and on the server as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest URL accepted in a check, at most [`MAX_URL_BYTES`] (8192).
    pub max_url_bytes: usize,
    /// Longest `ua` value accepted, at most [`MAX_USER_AGENT_BYTES`] (1024).
    pub max_user_agent_bytes: usize,
    /// Most agents one check names (its `ua` values' names, repeats counted), and most distinct
    /// agents one request names (32).
    pub max_agents: usize,
    /// Most names one `ua` value lists (`A,B,C`), at most [`MAX_AGENT_NAMES`] (16).
    pub max_agent_names: usize,
    /// The work one request may ask before any of it is done: items × agents × rules to match
    /// (50,000,000; `docs/behaviour.md`, "What one request may cost").
    pub max_request_work: u64,
    /// Most checks in one batch request (1000).
    pub max_batch: usize,
    /// Largest request body accepted (1 MiB).
    pub max_body_bytes: usize,
    /// Largest `POST /v1/page` body accepted, a page's headers and document (4 MiB).
    pub max_page_bytes: usize,
    /// Time limit for answering one request (30 s).
    pub request_timeout: Duration,
    /// Most requests in flight; beyond it 503 with `Retry-After` (1024).
    pub concurrency_limit: usize,
    /// Most distinct origins one batch fetches at once (16).
    pub batch_concurrency: usize,
    /// How long requests in flight may finish after a shutdown signal (25 s).
    pub shutdown_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_url_bytes: MAX_URL_BYTES,
            max_user_agent_bytes: MAX_USER_AGENT_BYTES,
            max_agents: 32,
            max_agent_names: 16,
            max_request_work: 50_000_000,
            max_batch: 1000,
            max_body_bytes: MIB as usize,
            max_page_bytes: 4 * MIB as usize,
            request_timeout: Duration::from_secs(30),
            concurrency_limit: 1024,
            batch_concurrency: 16,
            shutdown_grace: Duration::from_secs(25),
        }
    }
}

/// The flags of the request limits.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Request limits")]
pub struct LimitArgs {
    /// Longest URL accepted in a check; can only lower the built-in limit of 8192 bytes.
    #[arg(long, env = "ROBOTSD_MAX_URL_BYTES", default_value_t = MAX_URL_BYTES as u64)]
    #[arg(value_parser = parse_size, value_name = "BYTES")]
    pub max_url_bytes: u64,

    /// Longest `ua` value accepted in a check; can only lower the built-in limit of 1024 bytes.
    #[arg(long, env = "ROBOTSD_MAX_USER_AGENT_BYTES")]
    #[arg(default_value_t = MAX_USER_AGENT_BYTES as u64)]
    #[arg(value_parser = parse_size, value_name = "BYTES")]
    pub max_user_agent_bytes: u64,

    /// Most agents one check may name (the names of its `ua` values, repeats counted), and most
    /// distinct agents one request may name across its items.
    #[arg(long, env = "ROBOTSD_MAX_AGENTS", default_value = "32")]
    #[arg(value_name = "N")]
    pub max_agents: usize,

    /// Most names one `ua` value may list (`MyBot,MyBot-Image`); can only lower the built-in
    /// limit of 512 (a value of 1024 bytes lists at most that many).
    #[arg(long, env = "ROBOTSD_MAX_AGENT_NAMES", default_value = "16")]
    #[arg(value_name = "N")]
    pub max_agent_names: u64,

    /// The work one request may ask, counted before any is done: items × agents × rules to
    /// match (the rules of the robots.txt when robotsd holds it); past it, 413 too-much-work.
    #[arg(long, env = "ROBOTSD_MAX_REQUEST_WORK", default_value = "50000000")]
    #[arg(value_name = "N")]
    pub max_request_work: u64,

    /// Most checks in one batch request.
    #[arg(long, env = "ROBOTSD_MAX_BATCH", default_value = "1000")]
    #[arg(value_name = "N")]
    pub max_batch: usize,

    /// Largest request body accepted.
    #[arg(long, env = "ROBOTSD_MAX_BODY_BYTES", default_value = "1MiB")]
    #[arg(value_parser = parse_size, value_name = "BYTES")]
    pub max_body_bytes: u64,

    /// Largest `POST /v1/page` body accepted: a fetched page's headers and document (robotsd
    /// reads the first 2 MiB of a document, as Googlebot reads HTML; room for JSON's escapes).
    #[arg(long, env = "ROBOTSD_MAX_PAGE_BYTES", default_value = "4MiB")]
    #[arg(value_parser = parse_size, value_name = "BYTES")]
    pub max_page_bytes: u64,

    /// Time limit for answering one request, fetches included.
    #[arg(long, env = "ROBOTSD_REQUEST_TIMEOUT", default_value = "30s")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub request_timeout: Duration,

    /// Most requests in flight at once; beyond it robotsd answers 503 with Retry-After.
    #[arg(long, env = "ROBOTSD_CONCURRENCY_LIMIT", default_value = "1024")]
    #[arg(value_name = "N")]
    pub concurrency_limit: usize,

    /// Most distinct origins whose robots.txt one batch request fetches at once.
    #[arg(long, env = "ROBOTSD_BATCH_CONCURRENCY", default_value = "16")]
    #[arg(value_name = "N")]
    pub batch_concurrency: usize,

    /// On SIGTERM or Ctrl-C, how long requests in flight may finish before robotsd exits (0
    /// exits without draining).
    #[arg(long, env = "ROBOTSD_SHUTDOWN_GRACE", default_value = "25s")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub shutdown_grace: Duration,
}

impl LimitArgs {
    /// The checked [`Limits`]: the built-in limits not raised, and nothing zero that would
    /// refuse every request (a zero shutdown grace refuses nothing).
    pub(super) fn limits(&self) -> Result<Limits, ConfigError> {
        let max_url_bytes = built_in("max_url_bytes", self.max_url_bytes, MAX_URL_BYTES)?;
        let max_user_agent_bytes = built_in(
            "max_user_agent_bytes",
            self.max_user_agent_bytes,
            MAX_USER_AGENT_BYTES,
        )?;
        let max_agent_names = built_in("max_agent_names", self.max_agent_names, MAX_AGENT_NAMES)?;
        for (field, zero) in [
            ("max_agents", self.max_agents == 0),
            ("max_request_work", self.max_request_work == 0),
            ("max_batch", self.max_batch == 0),
            ("max_body_bytes", self.max_body_bytes == 0),
            ("max_page_bytes", self.max_page_bytes == 0),
            ("request_timeout", self.request_timeout.is_zero()),
            ("concurrency_limit", self.concurrency_limit == 0),
            ("batch_concurrency", self.batch_concurrency == 0),
        ] {
            if zero {
                return Err(ConfigError::zero(SECTION, field));
            }
        }
        Ok(Limits {
            max_url_bytes,
            max_user_agent_bytes,
            max_agents: self.max_agents,
            max_agent_names,
            max_request_work: self.max_request_work,
            max_batch: self.max_batch,
            max_body_bytes: ConfigError::to_usize(SECTION, "max_body_bytes", self.max_body_bytes)?,
            max_page_bytes: ConfigError::to_usize(SECTION, "max_page_bytes", self.max_page_bytes)?,
            request_timeout: self.request_timeout,
            concurrency_limit: self.concurrency_limit,
            batch_concurrency: self.batch_concurrency,
            shutdown_grace: self.shutdown_grace,
        })
    }
}

/// `value` of `field` if it is above zero and at most the built-in `max`.
fn built_in(field: &'static str, value: u64, max: usize) -> Result<usize, ConfigError> {
    if value == 0 {
        return Err(ConfigError::zero(SECTION, field));
    }
    if value > max as u64 {
        return Err(ConfigError::AboveBuiltIn {
            flag: super::flag(SECTION, field),
            value,
            max: max as u64,
        });
    }
    ConfigError::to_usize(SECTION, field, value)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{error_of, settings};
    use super::*;

    #[test]
    fn built_in_limits_can_only_be_lowered() {
        for (arg, flag, value, max) in [
            ("--max-url-bytes=8193", "--max-url-bytes", 8193, 8192),
            (
                "--max-user-agent-bytes=2KiB",
                "--max-user-agent-bytes",
                2048,
                1024,
            ),
            ("--max-agent-names=513", "--max-agent-names", 513, 512),
        ] {
            let err = error_of(&[arg]);
            assert!(
                matches!(err, ConfigError::AboveBuiltIn { flag: f, value: v, max: m }
                    if f == flag && v == value && m == max),
                "{arg}: {err:?}"
            );
        }
        assert_eq!(
            error_of(&["--max-url-bytes=8193"]).to_string(),
            "--max-url-bytes (8193) is above the built-in limit of 8192; it can only be lowered"
        );
        let s = settings(&[
            "--max-url-bytes=8KiB",
            "--max-user-agent-bytes=1KiB",
            "--max-agent-names=512",
        ])
        .unwrap();
        assert_eq!(s.limits.max_url_bytes, MAX_URL_BYTES);
        assert_eq!(s.limits.max_user_agent_bytes, MAX_USER_AGENT_BYTES);
        assert_eq!(s.limits.max_agent_names, MAX_AGENT_NAMES);
    }
}
