//! The service's settings: the flags of `robotsd serve`, their `ROBOTSD_*` environment
//! variables, and their validation into [`Settings`].
//!
//! Every number in SEMANTICS.md is a default here and a setting an operator can change. Each
//! flag can also be given as an environment variable (`--fetch-timeout` is
//! `ROBOTSD_FETCH_TIMEOUT`); a flag on the command line wins over its variable. This module is the
//! only place where robotsd reads its environment, and it does so only through clap.
//!
//! Value formats:
//! - durations use humantime's syntax ([`parse_duration`]): `500ms`, `5s`, `1m`, `24h`,
//!   `30days`, `1h 30m`; at most 100 years;
//! - sizes are bytes ([`parse_size`]): a plain integer (`512000`, `512_000`) or an integer with a
//!   unit, decimal (`kB`, `MB`, `GB`, `TB`: powers of 1000) or binary (`KiB`, `MiB`, `GiB`, `TiB`:
//!   powers of 1024); units are case-insensitive, fractions are not accepted;
//! - CIDRs ([`parse_cidr`]): `10.0.0.0/8`, `fd00::/8`, or a bare address meaning that one host;
//!   the environment variables of the repeatable `--allow-cidr` and `--deny-cidr` take a
//!   comma-separated list.
//!
//! [`ServeArgs::settings`] checks what clap cannot see in one value: zero time limits, minimums
//! above their maximums, an admin listener on the main listener's address, a proxy that is not
//! `http`/`https`, and so on; each [`ConfigError`] names the flag to fix. Decisions beyond the
//! brief: `--max-url-bytes` and `--max-user-agent-bytes` can only lower the built-in limits
//! ([`crate::origin::MAX_URL_BYTES`], [`crate::user_agent::MAX_USER_AGENT_BYTES`]), which the
//! parsers enforce whatever is configured; `--shutdown-grace 0` is allowed (exit without
//! draining); `--max-redirects 0` is allowed (a redirect is then "no robots.txt").

use std::net::SocketAddr;
use std::time::Duration;

use ipnet::IpNet;
use url::Url;

use crate::cache::CacheConfig;
use crate::cache::policy::{PolicyConfig, PolicyConfigError};
use crate::destination::DestinationPolicy;
use crate::fetch::{DEFAULT_USER_AGENT, FetchConfig};
use crate::origin::MAX_URL_BYTES;
use crate::user_agent::MAX_USER_AGENT_BYTES;

/// The longest duration any setting accepts (100 years of 365 days); longer values would only
/// risk overflowing clock arithmetic.
pub const MAX_DURATION: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// The flags of `robotsd serve` (also the default command).
///
/// Every flag has a `ROBOTSD_*` environment variable; turn them into checked [`Settings`] with
/// [`ServeArgs::settings`].
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Address the API listens on.
    #[arg(
        long,
        env = "ROBOTSD_LISTEN",
        default_value = "0.0.0.0:8080",
        value_name = "ADDR",
        help_heading = "Listening"
    )]
    pub listen: SocketAddr,

    /// Separate address for /metrics, /livez, /readyz and /healthz; unset by default, which
    /// serves them on --listen.
    #[arg(
        long,
        env = "ROBOTSD_ADMIN_LISTEN",
        value_name = "ADDR",
        help_heading = "Listening"
    )]
    pub admin_listen: Option<SocketAddr>,

    /// User-Agent header robotsd sends when fetching robots.txt (printable ASCII).
    #[arg(
        long,
        env = "ROBOTSD_FETCH_USER_AGENT",
        default_value = DEFAULT_USER_AGENT,
        value_name = "STRING",
        help_heading = "Fetching robots.txt"
    )]
    pub fetch_user_agent: String,

    /// Time limit for establishing one connection when fetching robots.txt.
    #[arg(
        long,
        env = "ROBOTSD_CONNECT_TIMEOUT",
        default_value = "5s",
        value_parser = parse_duration,
        value_name = "DURATION",
        help_heading = "Fetching robots.txt"
    )]
    pub connect_timeout: Duration,

    /// Time limit for a whole robots.txt fetch, redirects and body included; at least
    /// --connect-timeout.
    #[arg(
        long,
        env = "ROBOTSD_FETCH_TIMEOUT",
        default_value = "10s",
        value_parser = parse_duration,
        value_name = "DURATION",
        help_heading = "Fetching robots.txt"
    )]
    pub fetch_timeout: Duration,

    /// Decoded bytes of a robots.txt kept and parsed (500 KiB = 512000 bytes); the rest is
    /// dropped, not an error.
    #[arg(
        long,
        env = "ROBOTSD_MAX_ROBOTS_BYTES",
        default_value = "500KiB",
        value_parser = parse_size,
        value_name = "BYTES",
        help_heading = "Fetching robots.txt"
    )]
    pub max_robots_bytes: u64,

    /// Redirect hops followed when fetching robots.txt; one more is treated as "no robots.txt"
    /// (0 follows none).
    #[arg(
        long,
        env = "ROBOTSD_MAX_REDIRECTS",
        default_value = "5",
        value_name = "N",
        help_heading = "Fetching robots.txt"
    )]
    pub max_redirects: u32,

    /// Outbound HTTP proxy (http:// or https:// URL) for every robots.txt fetch; unset by
    /// default. Proxy environment variables such as HTTPS_PROXY are never used.
    #[arg(
        long,
        env = "ROBOTSD_PROXY",
        hide_env_values = true,
        value_name = "URL",
        help_heading = "Fetching robots.txt"
    )]
    pub proxy: Option<Url>,

    /// Memory bound of the robots.txt cache: bytes of parsed rules held at once.
    #[arg(
        long,
        env = "ROBOTSD_CACHE_CAPACITY",
        default_value = "256MiB",
        value_parser = parse_size,
        value_name = "BYTES",
        help_heading = "Caching and backoff"
    )]
    pub cache_capacity: u64,

    /// Lifetime of a cached robots.txt whose response has no Cache-Control max-age; between
    /// --min-lifetime and --max-lifetime.
    #[arg(
        long,
        env = "ROBOTSD_DEFAULT_LIFETIME",
        default_value = "24h",
        value_parser = parse_duration,
        value_name = "DURATION",
        help_heading = "Caching and backoff"
    )]
    pub default_lifetime: Duration,

    /// Shortest lifetime of a cached robots.txt, also used for no-cache and no-store; above
    /// zero.
    #[arg(
        long,
        env = "ROBOTSD_MIN_LIFETIME",
        default_value = "1m",
        value_parser = parse_duration,
        value_name = "DURATION",
        help_heading = "Caching and backoff"
    )]
    pub min_lifetime: Duration,

    /// Longest lifetime a Cache-Control max-age can ask for; raise it to honour longer
    /// max-ages.
    #[arg(
        long,
        env = "ROBOTSD_MAX_LIFETIME",
        default_value = "24h",
        value_parser = parse_duration,
        value_name = "DURATION",
        help_heading = "Caching and backoff"
    )]
    pub max_lifetime: Duration,

    /// From the first failure to fetch an origin's robots.txt, everything there is disallowed
    /// this long; at most --last-copy-window.
    #[arg(
        long,
        env = "ROBOTSD_DISALLOW_WINDOW",
        default_value = "12h",
        value_parser = parse_duration,
        value_name = "DURATION",
        help_heading = "Caching and backoff"
    )]
    pub disallow_window: Duration,

    /// Until this long after the first failure, the last good copy of robots.txt is used;
    /// afterwards everything is allowed.
    #[arg(
        long,
        env = "ROBOTSD_LAST_COPY_WINDOW",
        default_value = "30days",
        value_parser = parse_duration,
        value_name = "DURATION",
        help_heading = "Caching and backoff"
    )]
    pub last_copy_window: Duration,

    /// Shortest wait before fetching an unreachable robots.txt again (429 and 503 retry here);
    /// above zero.
    #[arg(
        long,
        env = "ROBOTSD_RETRY_MIN",
        default_value = "1m",
        value_parser = parse_duration,
        value_name = "DURATION",
        help_heading = "Caching and backoff"
    )]
    pub retry_min: Duration,

    /// Longest wait before fetching an unreachable robots.txt again; retries back off
    /// exponentially from --retry-min up to this.
    #[arg(
        long,
        env = "ROBOTSD_RETRY_MAX",
        default_value = "1h",
        value_parser = parse_duration,
        value_name = "DURATION",
        help_heading = "Caching and backoff"
    )]
    pub retry_max: Duration,

    /// Allow fetching from loopback, private (RFC 1918), link-local, CGNAT and IPv6
    /// unique-local/site-local addresses; cloud metadata, multicast, broadcast and unspecified
    /// addresses stay refused. Off by default; the variable takes true/false (also yes/no,
    /// on/off, 1/0).
    #[arg(
        long,
        env = "ROBOTSD_ALLOW_PRIVATE_NETWORKS",
        value_parser = clap::builder::BoolishValueParser::new(),
        help_heading = "Destinations"
    )]
    pub allow_private_networks: bool,

    /// A network robotsd may fetch from whatever its address class (repeatable; the variable
    /// takes a comma-separated list). None by default.
    #[arg(
        long,
        env = "ROBOTSD_ALLOW_CIDR",
        value_delimiter = ',',
        value_parser = parse_cidr,
        value_name = "CIDR",
        help_heading = "Destinations"
    )]
    pub allow_cidr: Vec<IpNet>,

    /// A network robotsd never fetches from; wins over everything else (repeatable; the
    /// variable takes a comma-separated list). None by default.
    #[arg(
        long,
        env = "ROBOTSD_DENY_CIDR",
        value_delimiter = ',',
        value_parser = parse_cidr,
        value_name = "CIDR",
        help_heading = "Destinations"
    )]
    pub deny_cidr: Vec<IpNet>,

    /// Longest URL accepted in a check; can only lower the built-in limit of 8192 bytes.
    #[arg(
        long,
        env = "ROBOTSD_MAX_URL_BYTES",
        default_value_t = MAX_URL_BYTES as u64,
        value_parser = parse_size,
        value_name = "BYTES",
        help_heading = "Request limits"
    )]
    pub max_url_bytes: u64,

    /// Longest `ua` value accepted in a check; can only lower the built-in limit of 1024 bytes.
    #[arg(
        long,
        env = "ROBOTSD_MAX_USER_AGENT_BYTES",
        default_value_t = MAX_USER_AGENT_BYTES as u64,
        value_parser = parse_size,
        value_name = "BYTES",
        help_heading = "Request limits"
    )]
    pub max_user_agent_bytes: u64,

    /// Most checks in one batch request.
    #[arg(
        long,
        env = "ROBOTSD_MAX_BATCH",
        default_value = "1000",
        value_name = "N",
        help_heading = "Request limits"
    )]
    pub max_batch: usize,

    /// Largest request body accepted.
    #[arg(
        long,
        env = "ROBOTSD_MAX_BODY_BYTES",
        default_value = "1MiB",
        value_parser = parse_size,
        value_name = "BYTES",
        help_heading = "Request limits"
    )]
    pub max_body_bytes: u64,

    /// Time limit for answering one request, fetches included.
    #[arg(
        long,
        env = "ROBOTSD_REQUEST_TIMEOUT",
        default_value = "30s",
        value_parser = parse_duration,
        value_name = "DURATION",
        help_heading = "Request limits"
    )]
    pub request_timeout: Duration,

    /// Most requests in flight at once; beyond it robotsd answers 503 with Retry-After.
    #[arg(
        long,
        env = "ROBOTSD_CONCURRENCY_LIMIT",
        default_value = "1024",
        value_name = "N",
        help_heading = "Request limits"
    )]
    pub concurrency_limit: usize,

    /// Most distinct origins whose robots.txt one batch request fetches at once.
    #[arg(
        long,
        env = "ROBOTSD_BATCH_CONCURRENCY",
        default_value = "16",
        value_name = "N",
        help_heading = "Request limits"
    )]
    pub batch_concurrency: usize,

    /// On SIGTERM or Ctrl-C, how long requests in flight may finish before robotsd exits (0
    /// exits without draining).
    #[arg(
        long,
        env = "ROBOTSD_SHUTDOWN_GRACE",
        default_value = "25s",
        value_parser = parse_duration,
        value_name = "DURATION",
        help_heading = "Request limits"
    )]
    pub shutdown_grace: Duration,

    /// Log line format.
    #[arg(
        long,
        env = "ROBOTSD_LOG_FORMAT",
        value_enum,
        default_value = "text",
        value_name = "FORMAT",
        help_heading = "Logging"
    )]
    pub log_format: LogFormat,

    /// Which log lines are written: a tracing EnvFilter directive such as `info`,
    /// `warn,robotsd=debug` (RUST_LOG is not read).
    #[arg(
        long,
        env = "ROBOTSD_LOG_LEVEL",
        default_value = "info",
        value_name = "FILTER",
        help_heading = "Logging"
    )]
    pub log_level: String,
}

/// Bounds on what one request may ask and on the server as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest URL accepted in a check, at most [`MAX_URL_BYTES`] (8192).
    pub max_url_bytes: usize,
    /// Longest `ua` value accepted, at most [`MAX_USER_AGENT_BYTES`] (1024).
    pub max_user_agent_bytes: usize,
    /// Most checks in one batch request (1000).
    pub max_batch: usize,
    /// Largest request body accepted (1 MiB).
    pub max_body_bytes: usize,
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
            max_batch: 1000,
            max_body_bytes: MIB as usize,
            request_timeout: Duration::from_secs(30),
            concurrency_limit: 1024,
            batch_concurrency: 16,
            shutdown_grace: Duration::from_secs(25),
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
}

impl Default for LogSettings {
    fn default() -> Self {
        LogSettings {
            format: LogFormat::Text,
            level: "info".to_string(),
        }
    }
}

/// Everything `robotsd serve` needs, checked; the default equals parsing no flags and no
/// environment.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Where the API listens (`0.0.0.0:8080`).
    pub listen: SocketAddr,
    /// Where /metrics and the health endpoints listen when separate (none: on `listen`).
    pub admin_listen: Option<SocketAddr>,
    /// How robots.txt is fetched.
    pub fetch: FetchConfig,
    /// The cache and its lifetime and backoff rules.
    pub cache: CacheConfig,
    /// Which destinations may be fetched from.
    pub destinations: DestinationPolicy,
    /// Request and server limits.
    pub limits: Limits,
    /// Logging.
    pub log: LogSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            listen: SocketAddr::from(([0, 0, 0, 0], 8080)),
            admin_listen: None,
            fetch: FetchConfig::default(),
            cache: CacheConfig::default(),
            destinations: DestinationPolicy::default(),
            limits: Limits::default(),
            log: LogSettings::default(),
        }
    }
}

/// A combination of settings that cannot work; each variant names the flag to fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A time limit, count or size that must be above zero is zero.
    #[error("{flag} must be above zero")]
    Zero {
        /// The flag, e.g. `--fetch-timeout`.
        flag: &'static str,
    },
    /// A value exceeds the value of another flag that bounds it.
    #[error("{flag} ({value}) must not exceed {limit_flag} ({limit})")]
    Exceeds {
        /// The flag whose value is too large.
        flag: &'static str,
        /// Its value, as given.
        value: String,
        /// The flag that bounds it.
        limit_flag: &'static str,
        /// That flag's value.
        limit: String,
    },
    /// A value above a built-in limit that can only be lowered.
    #[error("{flag} ({value}) is above the built-in limit of {max}; it can only be lowered")]
    AboveBuiltIn {
        /// The flag.
        flag: &'static str,
        /// Its value.
        value: u64,
        /// The built-in limit.
        max: u64,
    },
    /// A size that does not fit this platform's address space.
    #[error("{flag} ({value}) is too large for this platform")]
    TooLarge {
        /// The flag.
        flag: &'static str,
        /// Its value.
        value: u64,
    },
    /// The lifetime and backoff settings contradict each other (a check of
    /// [`PolicyConfig::validate`] not already covered by a more specific error).
    #[error("{flag}: {source}")]
    Policy {
        /// The flag the contradiction was found on.
        flag: &'static str,
        /// What the policy reported.
        source: PolicyConfigError,
    },
    /// `--admin-listen` would bind the same port as `--listen`.
    #[error(
        "--admin-listen ({admin}) must not bind the same address and port as --listen ({listen})"
    )]
    AdminListenCollides {
        /// The `--listen` address.
        listen: SocketAddr,
        /// The `--admin-listen` address.
        admin: SocketAddr,
    },
    /// The proxy URL is not an `http` or `https` URL with a host.
    #[error("--proxy {url}: {detail}")]
    Proxy {
        /// The URL without its credentials.
        url: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The fetch user agent cannot be sent as a header value.
    #[error("--fetch-user-agent must be non-empty printable ASCII")]
    UserAgent,
    /// The log filter does not parse.
    #[error("--log-level {value:?} is not a valid filter directive: {detail}")]
    LogLevel {
        /// The directive string.
        value: String,
        /// The parser's complaint.
        detail: String,
    },
}

impl ServeArgs {
    /// Checks the flags together and builds the [`Settings`].
    pub fn settings(&self) -> Result<Settings, ConfigError> {
        if let Some(admin) = self.admin_listen
            && binds_overlap(self.listen, admin)
        {
            return Err(ConfigError::AdminListenCollides {
                listen: self.listen,
                admin,
            });
        }

        Ok(Settings {
            listen: self.listen,
            admin_listen: self.admin_listen,
            fetch: self.fetch_config()?,
            cache: self.cache_config()?,
            destinations: DestinationPolicy::new(
                self.allow_private_networks,
                self.allow_cidr.clone(),
                self.deny_cidr.clone(),
            ),
            limits: self.limits()?,
            log: self.log_settings()?,
        })
    }

    fn fetch_config(&self) -> Result<FetchConfig, ConfigError> {
        let agent = &self.fetch_user_agent;
        if agent.trim().is_empty()
            || !agent
                .bytes()
                .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
        {
            return Err(ConfigError::UserAgent);
        }
        nonzero_duration("--connect-timeout", self.connect_timeout)?;
        nonzero_duration("--fetch-timeout", self.fetch_timeout)?;
        at_most_duration(
            ("--connect-timeout", self.connect_timeout),
            ("--fetch-timeout", self.fetch_timeout),
        )?;
        nonzero_size("--max-robots-bytes", self.max_robots_bytes)?;
        if let Some(proxy) = &self.proxy {
            check_proxy(proxy)?;
        }
        Ok(FetchConfig {
            user_agent: agent.clone(),
            connect_timeout: self.connect_timeout,
            total_timeout: self.fetch_timeout,
            max_body_bytes: to_usize("--max-robots-bytes", self.max_robots_bytes)?,
            max_redirects: self.max_redirects,
            proxy: self.proxy.clone(),
        })
    }

    fn cache_config(&self) -> Result<CacheConfig, ConfigError> {
        nonzero_size("--cache-capacity", self.cache_capacity)?;
        nonzero_duration("--min-lifetime", self.min_lifetime)?;
        at_most_duration(
            ("--min-lifetime", self.min_lifetime),
            ("--max-lifetime", self.max_lifetime),
        )?;
        at_most_duration(
            ("--min-lifetime", self.min_lifetime),
            ("--default-lifetime", self.default_lifetime),
        )?;
        at_most_duration(
            ("--default-lifetime", self.default_lifetime),
            ("--max-lifetime", self.max_lifetime),
        )?;
        nonzero_duration("--retry-min", self.retry_min)?;
        at_most_duration(
            ("--retry-min", self.retry_min),
            ("--retry-max", self.retry_max),
        )?;
        at_most_duration(
            ("--disallow-window", self.disallow_window),
            ("--last-copy-window", self.last_copy_window),
        )?;
        let policy = PolicyConfig {
            default_lifetime: self.default_lifetime,
            min_lifetime: self.min_lifetime,
            max_lifetime: self.max_lifetime,
            disallow_window: self.disallow_window,
            last_copy_window: self.last_copy_window,
            retry_min: self.retry_min,
            retry_max: self.retry_max,
        };
        policy.validate().map_err(|source| {
            let PolicyConfigError::Invalid { name, .. } = &source;
            ConfigError::Policy {
                flag: policy_flag(name),
                source,
            }
        })?;
        Ok(CacheConfig {
            capacity_bytes: self.cache_capacity,
            policy,
        })
    }

    fn limits(&self) -> Result<Limits, ConfigError> {
        let max_url_bytes = builtin_limit("--max-url-bytes", self.max_url_bytes, MAX_URL_BYTES)?;
        let max_user_agent_bytes = builtin_limit(
            "--max-user-agent-bytes",
            self.max_user_agent_bytes,
            MAX_USER_AGENT_BYTES,
        )?;
        nonzero_count("--max-batch", self.max_batch)?;
        nonzero_size("--max-body-bytes", self.max_body_bytes)?;
        nonzero_duration("--request-timeout", self.request_timeout)?;
        nonzero_count("--concurrency-limit", self.concurrency_limit)?;
        nonzero_count("--batch-concurrency", self.batch_concurrency)?;
        Ok(Limits {
            max_url_bytes,
            max_user_agent_bytes,
            max_batch: self.max_batch,
            max_body_bytes: to_usize("--max-body-bytes", self.max_body_bytes)?,
            request_timeout: self.request_timeout,
            concurrency_limit: self.concurrency_limit,
            batch_concurrency: self.batch_concurrency,
            shutdown_grace: self.shutdown_grace,
        })
    }

    fn log_settings(&self) -> Result<LogSettings, ConfigError> {
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

/// Parses a duration in humantime's syntax (`5s`, `1m`, `24h`, `30days`, `1h 30m`, `0`), at most
/// [`MAX_DURATION`]. A number without a unit other than `0` is refused.
pub fn parse_duration(value: &str) -> Result<Duration, String> {
    let duration = humantime::parse_duration(value.trim())
        .map_err(|e| format!("{e} (expected e.g. 500ms, 5s, 1m, 24h, 30days)"))?;
    if duration > MAX_DURATION {
        return Err("too long: at most 100 years".to_string());
    }
    Ok(duration)
}

/// Parses a size in bytes: an integer (`_` allowed between digits) optionally followed by a
/// unit, `B`, decimal `kB`/`MB`/`GB`/`TB` (also `K`, `M`, `G`, `T`: powers of 1000) or binary
/// `KiB`/`MiB`/`GiB`/`TiB` (powers of 1024), case-insensitive, with optional space before it:
/// `512000`, `500KiB`, `256 MiB`, `1MB`.
pub fn parse_size(value: &str) -> Result<u64, String> {
    let value = value.trim();
    let split = value
        .find(|c: char| !(c.is_ascii_digit() || c == '_'))
        .unwrap_or(value.len());
    let (digits, unit) = value.split_at(split);
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return Err(format!(
            "invalid size {value:?} (expected bytes, e.g. 512000, 500KiB, 256MiB)"
        ));
    }
    let number: u64 = digits
        .replace('_', "")
        .parse()
        .map_err(|_| format!("size {value:?} is too large"))?;
    let multiplier: u64 = match unit.trim_start().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1000,
        "m" | "mb" => 1000 * 1000,
        "g" | "gb" => 1000 * 1000 * 1000,
        "t" | "tb" => 1000 * 1000 * 1000 * 1000,
        "ki" | "kib" => KIB,
        "mi" | "mib" => MIB,
        "gi" | "gib" => 1024 * MIB,
        "ti" | "tib" => 1024 * 1024 * MIB,
        _ => {
            return Err(format!(
                "unknown size unit {:?} in {value:?} (use B, kB, MB, GB, TB, KiB, MiB, GiB or TiB)",
                unit.trim_start()
            ));
        }
    };
    number
        .checked_mul(multiplier)
        .ok_or_else(|| format!("size {value:?} is too large"))
}

/// Parses a CIDR (`10.0.0.0/8`, `2001:db8::/32`) or a bare address, meaning that one host
/// (`/32` or `/128`); surrounding whitespace is ignored.
pub fn parse_cidr(value: &str) -> Result<IpNet, String> {
    let value = value.trim();
    if let Ok(net) = value.parse::<IpNet>() {
        return Ok(net);
    }
    value
        .parse::<std::net::IpAddr>()
        .map(IpNet::from)
        .map_err(|_| format!("invalid CIDR {value:?} (expected e.g. 10.0.0.0/8 or fd00::/8)"))
}

/// Whether two listeners would fight over one port: the same address, or a wildcard address
/// that covers the other (`0.0.0.0` covers IPv4, `[::]` covers both families on a dual-stack
/// host). Port 0 asks the OS for a free port and never collides.
fn binds_overlap(a: SocketAddr, b: SocketAddr) -> bool {
    if a.port() != b.port() || a.port() == 0 {
        return false;
    }
    let covers = |x: SocketAddr, y: SocketAddr| {
        x.ip().is_unspecified() && (x.is_ipv6() || x.is_ipv4() == y.is_ipv4())
    };
    a.ip() == b.ip() || covers(a, b) || covers(b, a)
}

fn check_proxy(proxy: &Url) -> Result<(), ConfigError> {
    let shown = || {
        let mut url = proxy.clone();
        // Credentials must not end up in an error message or a log line.
        let _ = url.set_username("");
        let _ = url.set_password(None);
        url.to_string()
    };
    if !matches!(proxy.scheme(), "http" | "https") {
        return Err(ConfigError::Proxy {
            url: shown(),
            detail: format!(
                "scheme {:?} is not supported; use http or https",
                proxy.scheme()
            ),
        });
    }
    if proxy.host_str().is_none_or(str::is_empty) {
        return Err(ConfigError::Proxy {
            url: shown(),
            detail: "has no host".to_string(),
        });
    }
    Ok(())
}

fn policy_flag(name: &str) -> &'static str {
    match name {
        "default_lifetime" => "--default-lifetime",
        "min_lifetime" => "--min-lifetime",
        "max_lifetime" => "--max-lifetime",
        "disallow_window" => "--disallow-window",
        "last_copy_window" => "--last-copy-window",
        "retry_min" => "--retry-min",
        "retry_max" => "--retry-max",
        _ => "the cache policy flags",
    }
}

fn nonzero_duration(flag: &'static str, value: Duration) -> Result<(), ConfigError> {
    if value.is_zero() {
        return Err(ConfigError::Zero { flag });
    }
    Ok(())
}

fn nonzero_size(flag: &'static str, value: u64) -> Result<(), ConfigError> {
    if value == 0 {
        return Err(ConfigError::Zero { flag });
    }
    Ok(())
}

fn nonzero_count(flag: &'static str, value: usize) -> Result<(), ConfigError> {
    if value == 0 {
        return Err(ConfigError::Zero { flag });
    }
    Ok(())
}

fn at_most_duration(
    (flag, value): (&'static str, Duration),
    (limit_flag, limit): (&'static str, Duration),
) -> Result<(), ConfigError> {
    if value > limit {
        return Err(ConfigError::Exceeds {
            flag,
            value: humantime::format_duration(value).to_string(),
            limit_flag,
            limit: humantime::format_duration(limit).to_string(),
        });
    }
    Ok(())
}

fn builtin_limit(flag: &'static str, value: u64, max: usize) -> Result<usize, ConfigError> {
    nonzero_size(flag, value)?;
    if value > max as u64 {
        return Err(ConfigError::AboveBuiltIn {
            flag,
            value,
            max: max as u64,
        });
    }
    to_usize(flag, value)
}

fn to_usize(flag: &'static str, value: u64) -> Result<usize, ConfigError> {
    usize::try_from(value).map_err(|_| ConfigError::TooLarge { flag, value })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches, Parser};

    const MINUTE: Duration = Duration::from_secs(60);
    const HOUR: Duration = Duration::from_secs(3600);

    #[derive(Debug, Parser)]
    #[command(name = "t")]
    struct T {
        #[command(flatten)]
        a: ServeArgs,
    }

    /// Parses `args` with every `env` removed, so the real environment cannot leak in.
    fn parse(args: &[&str]) -> Result<ServeArgs, clap::Error> {
        let command = T::command().mut_args(|arg| arg.env(None));
        let matches =
            command.try_get_matches_from(std::iter::once("t").chain(args.iter().copied()))?;
        ServeArgs::from_arg_matches(&matches)
    }

    fn settings(args: &[&str]) -> Result<Settings, ConfigError> {
        parse(args).expect("arguments parse").settings()
    }

    #[test]
    fn no_flags_yield_the_defaults() {
        let parsed = settings(&[]).expect("defaults are valid");
        let default = Settings::default();
        assert_eq!(parsed.listen, default.listen);
        assert_eq!(parsed.admin_listen, default.admin_listen);
        assert_eq!(parsed.fetch, default.fetch);
        assert_eq!(parsed.cache, default.cache);
        assert_eq!(
            parsed.destinations.allows_private_networks(),
            default.destinations.allows_private_networks()
        );
        assert_eq!(
            parsed.destinations.allow_cidrs(),
            default.destinations.allow_cidrs()
        );
        assert_eq!(
            parsed.destinations.deny_cidrs(),
            default.destinations.deny_cidrs()
        );
        assert_eq!(parsed.limits, default.limits);
        assert_eq!(parsed.log, default.log);
    }

    #[test]
    fn defaults_are_the_documented_numbers() {
        let s = Settings::default();
        assert_eq!(s.listen, "0.0.0.0:8080".parse().unwrap());
        assert_eq!(s.fetch.user_agent, DEFAULT_USER_AGENT);
        assert_eq!(s.fetch.connect_timeout, Duration::from_secs(5));
        assert_eq!(s.fetch.total_timeout, Duration::from_secs(10));
        assert_eq!(s.fetch.max_body_bytes, 512_000);
        assert_eq!(s.fetch.max_redirects, 5);
        assert_eq!(s.fetch.proxy, None);
        assert_eq!(s.cache.capacity_bytes, 256 * MIB);
        let p = &s.cache.policy;
        assert_eq!(p.default_lifetime, 24 * HOUR);
        assert_eq!(p.min_lifetime, MINUTE);
        assert_eq!(p.max_lifetime, 24 * HOUR);
        assert_eq!(p.disallow_window, 12 * HOUR);
        assert_eq!(p.last_copy_window, 30 * 24 * HOUR);
        assert_eq!(p.retry_min, MINUTE);
        assert_eq!(p.retry_max, HOUR);
        assert!(!s.destinations.allows_private_networks());
        assert_eq!(s.limits.max_url_bytes, 8192);
        assert_eq!(s.limits.max_user_agent_bytes, 1024);
        assert_eq!(s.limits.max_batch, 1000);
        assert_eq!(s.limits.max_body_bytes, 1024 * 1024);
        assert_eq!(s.limits.request_timeout, Duration::from_secs(30));
        assert_eq!(s.limits.concurrency_limit, 1024);
        assert_eq!(s.limits.batch_concurrency, 16);
        assert_eq!(s.limits.shutdown_grace, Duration::from_secs(25));
        assert_eq!(s.log.format, LogFormat::Text);
        assert_eq!(s.log.level, "info");
    }

    #[test]
    fn flags_set_every_field() {
        let s = settings(&[
            "--listen=127.0.0.1:9000",
            "--admin-listen=127.0.0.1:9001",
            "--fetch-user-agent=MyBot/1.0",
            "--connect-timeout=2s",
            "--fetch-timeout=3s",
            "--max-robots-bytes=1MiB",
            "--max-redirects=0",
            "--proxy=http://user:pw@proxy.internal:3128",
            "--cache-capacity=1GiB",
            "--default-lifetime=2h",
            "--min-lifetime=30s",
            "--max-lifetime=7days",
            "--disallow-window=1h",
            "--last-copy-window=2days",
            "--retry-min=10s",
            "--retry-max=5m",
            "--allow-private-networks",
            "--allow-cidr=10.0.0.0/8",
            "--deny-cidr=10.1.0.0/16,10.2.0.0/16",
            "--max-url-bytes=4096",
            "--max-user-agent-bytes=512",
            "--max-batch=10",
            "--max-body-bytes=64KiB",
            "--request-timeout=1m",
            "--concurrency-limit=8",
            "--batch-concurrency=2",
            "--shutdown-grace=0",
            "--log-format=json",
            "--log-level=warn,robotsd=debug",
        ])
        .expect("valid");
        assert_eq!(s.listen, "127.0.0.1:9000".parse().unwrap());
        assert_eq!(s.admin_listen, Some("127.0.0.1:9001".parse().unwrap()));
        assert_eq!(s.fetch.user_agent, "MyBot/1.0");
        assert_eq!(s.fetch.connect_timeout, Duration::from_secs(2));
        assert_eq!(s.fetch.total_timeout, Duration::from_secs(3));
        assert_eq!(s.fetch.max_body_bytes, 1024 * 1024);
        assert_eq!(s.fetch.max_redirects, 0);
        assert_eq!(
            s.fetch.proxy.as_ref().map(Url::as_str),
            Some("http://user:pw@proxy.internal:3128/")
        );
        assert_eq!(s.cache.capacity_bytes, 1024 * MIB);
        assert_eq!(s.cache.policy.default_lifetime, 2 * HOUR);
        assert_eq!(s.cache.policy.min_lifetime, Duration::from_secs(30));
        assert_eq!(s.cache.policy.max_lifetime, 7 * 24 * HOUR);
        assert_eq!(s.cache.policy.disallow_window, HOUR);
        assert_eq!(s.cache.policy.last_copy_window, 2 * 24 * HOUR);
        assert_eq!(s.cache.policy.retry_min, Duration::from_secs(10));
        assert_eq!(s.cache.policy.retry_max, 5 * MINUTE);
        assert!(s.destinations.allows_private_networks());
        assert_eq!(
            s.destinations.allow_cidrs(),
            ["10.0.0.0/8".parse().unwrap()]
        );
        assert_eq!(
            s.destinations.deny_cidrs(),
            [
                "10.1.0.0/16".parse::<IpNet>().unwrap(),
                "10.2.0.0/16".parse().unwrap()
            ]
        );
        assert_eq!(
            s.limits,
            Limits {
                max_url_bytes: 4096,
                max_user_agent_bytes: 512,
                max_batch: 10,
                max_body_bytes: 64 * 1024,
                request_timeout: MINUTE,
                concurrency_limit: 8,
                batch_concurrency: 2,
                shutdown_grace: Duration::ZERO,
            }
        );
        assert_eq!(s.log.format, LogFormat::Json);
        assert_eq!(s.log.level, "warn,robotsd=debug");
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("1m"), Ok(MINUTE));
        assert_eq!(parse_duration("24h"), Ok(24 * HOUR));
        assert_eq!(parse_duration("30days"), Ok(30 * 24 * HOUR));
        assert_eq!(parse_duration("1h 30m"), Ok(90 * MINUTE));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration(" 0 "), Ok(Duration::ZERO));
        assert_eq!(parse_duration("1.5h"), Ok(90 * MINUTE));
        assert_eq!(
            parse_duration("100years"),
            Err("too long: at most 100 years".into())
        );
        for bad in [
            "",
            "5",
            "five seconds",
            "-1s",
            "5 parsecs",
            "99999999999999999999s",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("512000"), Ok(512_000));
        assert_eq!(parse_size("512_000"), Ok(512_000));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("10B"), Ok(10));
        assert_eq!(parse_size("500KiB"), Ok(512_000));
        assert_eq!(parse_size("256MiB"), Ok(256 * MIB));
        assert_eq!(parse_size("256 mib"), Ok(256 * MIB));
        assert_eq!(parse_size("1GiB"), Ok(1024 * MIB));
        assert_eq!(parse_size("2TiB"), Ok(2 * 1024 * 1024 * MIB));
        assert_eq!(parse_size("1kB"), Ok(1000));
        assert_eq!(parse_size("1K"), Ok(1000));
        assert_eq!(parse_size("3MB"), Ok(3_000_000));
        assert_eq!(parse_size("2G"), Ok(2_000_000_000));
        assert_eq!(parse_size("1Mi"), Ok(MIB));
        for bad in [
            "",
            "MiB",
            "-1",
            "1_",
            "1.5MiB",
            "12parsecs",
            "1 MiB extra",
            "_1",
            "1__0",
            "0x10",
            "18446744073709551616",
            "16777216TiB",
        ] {
            assert!(parse_size(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn cidrs_parse() {
        assert_eq!(parse_cidr("10.0.0.0/8"), Ok("10.0.0.0/8".parse().unwrap()));
        assert_eq!(parse_cidr(" ::1/128 "), Ok("::1/128".parse().unwrap()));
        assert_eq!(parse_cidr("192.0.2.7"), Ok("192.0.2.7/32".parse().unwrap()));
        assert_eq!(parse_cidr("fd00::1"), Ok("fd00::1/128".parse().unwrap()));
        for bad in ["", "10.0.0.0/33", "example.com", "10.0.0/8", "::1/129"] {
            assert!(parse_cidr(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn repeated_cidrs_parse() {
        let args = parse(&["--allow-cidr", "10.0.0.0/8", "--allow-cidr", "::1/128"]).unwrap();
        assert_eq!(
            args.allow_cidr,
            [
                "10.0.0.0/8".parse::<IpNet>().unwrap(),
                "::1/128".parse().unwrap()
            ]
        );
        assert!(args.deny_cidr.is_empty());
        let err = parse(&["--deny-cidr", "10.0.0.0/99"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
    }

    #[test]
    fn bad_values_are_rejected_by_clap() {
        for args in [
            &["--connect-timeout", "5"][..],
            &["--fetch-timeout", "soon"],
            &["--cache-capacity", "lots"],
            &["--max-body-bytes", "1.5MiB"],
            &["--listen", "localhost"],
            &["--proxy", "not a url"],
            &["--max-batch=-1"],
        ] {
            let err = parse(args).unwrap_err();
            assert!(
                matches!(
                    err.kind(),
                    clap::error::ErrorKind::ValueValidation | clap::error::ErrorKind::InvalidValue
                ),
                "{args:?}: {err}"
            );
        }
    }

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
    fn bool_flag_takes_no_value_on_the_command_line() {
        assert!(
            parse(&["--allow-private-networks"])
                .unwrap()
                .allow_private_networks
        );
        assert!(!parse(&[]).unwrap().allow_private_networks);
    }

    fn error_of(args: &[&str]) -> ConfigError {
        settings(args).expect_err("should be refused")
    }

    #[test]
    fn zero_limits_are_refused() {
        for (flag, value) in [
            ("--connect-timeout", "0s"),
            ("--fetch-timeout", "0"),
            ("--request-timeout", "0s"),
            ("--min-lifetime", "0s"),
            ("--retry-min", "0s"),
            ("--max-robots-bytes", "0"),
            ("--cache-capacity", "0"),
            ("--max-url-bytes", "0"),
            ("--max-user-agent-bytes", "0"),
            ("--max-batch", "0"),
            ("--max-body-bytes", "0"),
            ("--concurrency-limit", "0"),
            ("--batch-concurrency", "0"),
        ] {
            let err = error_of(&[flag, value]);
            assert!(
                matches!(err, ConfigError::Zero { flag: f } if f == flag),
                "{flag}: {err:?}"
            );
            assert_eq!(err.to_string(), format!("{flag} must be above zero"));
        }
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

    #[test]
    fn policy_errors_name_the_flag() {
        let source = PolicyConfigError::Invalid {
            name: "retry_min",
            detail: "must not exceed retry_max",
        };
        let err = ConfigError::Policy {
            flag: policy_flag("retry_min"),
            source,
        };
        assert_eq!(
            err.to_string(),
            "--retry-min: retry_min: must not exceed retry_max"
        );
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn built_in_limits_can_only_be_lowered() {
        let err = error_of(&["--max-url-bytes=8193"]);
        assert!(matches!(
            err,
            ConfigError::AboveBuiltIn {
                flag: "--max-url-bytes",
                value: 8193,
                max: 8192
            }
        ));
        assert_eq!(
            err.to_string(),
            "--max-url-bytes (8193) is above the built-in limit of 8192; it can only be lowered"
        );
        let err = error_of(&["--max-user-agent-bytes=2KiB"]);
        assert!(matches!(
            err,
            ConfigError::AboveBuiltIn {
                flag: "--max-user-agent-bytes",
                value: 2048,
                max: 1024
            }
        ));
        let s = settings(&["--max-url-bytes=8KiB", "--max-user-agent-bytes=1KiB"]).unwrap();
        assert_eq!(s.limits.max_url_bytes, MAX_URL_BYTES);
        assert_eq!(s.limits.max_user_agent_bytes, MAX_USER_AGENT_BYTES);
    }

    #[test]
    fn admin_listener_must_not_collide() {
        for (listen, admin) in [
            ("0.0.0.0:8080", "0.0.0.0:8080"),
            ("0.0.0.0:8080", "127.0.0.1:8080"),
            ("127.0.0.1:9000", "0.0.0.0:9000"),
            ("[::]:8080", "127.0.0.1:8080"),
            ("[::1]:8080", "[::]:8080"),
        ] {
            let err = error_of(&["--listen", listen, "--admin-listen", admin]);
            assert!(
                matches!(err, ConfigError::AdminListenCollides { .. }),
                "{listen} {admin}: {err:?}"
            );
            assert!(err.to_string().contains("--admin-listen"));
        }
        for (listen, admin) in [
            ("0.0.0.0:8080", "0.0.0.0:9090"),
            ("127.0.0.1:8080", "127.0.0.2:8080"),
            ("0.0.0.0:8080", "[::1]:8080"),
            ("127.0.0.1:0", "127.0.0.1:0"),
        ] {
            let s = settings(&["--listen", listen, "--admin-listen", admin])
                .unwrap_or_else(|e| panic!("{listen} {admin}: {e}"));
            assert_eq!(s.admin_listen, Some(admin.parse().unwrap()));
        }
    }

    #[test]
    fn proxy_must_be_http() {
        for good in ["http://proxy:3128", "https://proxy.example/"] {
            settings(&["--proxy", good]).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        let err = error_of(&["--proxy", "socks5://user:secret@proxy:1080"]);
        assert!(matches!(err, ConfigError::Proxy { .. }));
        let message = err.to_string();
        assert!(message.starts_with("--proxy "), "{message}");
        assert!(message.contains("socks5"), "{message}");
        assert!(!message.contains("secret"), "{message}");
        assert!(matches!(
            error_of(&["--proxy", "file:///tmp/x"]),
            ConfigError::Proxy { .. }
        ));
    }

    #[test]
    fn user_agent_must_be_a_header_value() {
        for bad in ["", "   ", "bot\nInjected: yes", "bötchen"] {
            let err = error_of(&["--fetch-user-agent", bad]);
            assert!(matches!(err, ConfigError::UserAgent), "{bad:?}: {err:?}");
        }
    }

    #[test]
    fn log_level_must_be_a_filter() {
        let err = error_of(&["--log-level", "robotsd=loud"]);
        assert!(matches!(err, ConfigError::LogLevel { .. }));
        assert!(err.to_string().starts_with("--log-level"));
        settings(&["--log-level", "debug,hyper=warn"]).unwrap();
    }

    #[test]
    fn every_argument_has_an_env_var() {
        let command = T::command();
        let mut checked = 0;
        for arg in command.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            let long = arg.get_long().expect("every setting is a long flag");
            let env = arg
                .get_env()
                .unwrap_or_else(|| panic!("--{long} has no env"))
                .to_str()
                .unwrap();
            let expected = format!("ROBOTSD_{}", long.to_ascii_uppercase().replace('-', "_"));
            assert_eq!(env, expected, "--{long}");
            assert!(arg.get_help().is_some(), "--{long} has no help");
            checked += 1;
        }
        assert_eq!(checked, 29, "arguments checked");
    }

    #[test]
    fn help_lists_every_env_var() {
        let mut command = T::command();
        let help = command.render_long_help().to_string();
        for arg in T::command().get_arguments() {
            if let Some(env) = arg.get_env() {
                let env = env.to_str().unwrap();
                assert!(
                    help.contains(&format!("env: {env}")),
                    "{env} missing:\n{help}"
                );
            }
        }
        assert!(help.contains("[default: 0.0.0.0:8080]"), "{help}");
        assert!(help.contains("[default: 256MiB]"), "{help}");
    }
}
