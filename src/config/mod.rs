//! The service's settings: the flags of `robotsd serve`, their `ROBOTSD_*` environment
//! variables, and their validation into [`Settings`].
//!
//! Every number in SEMANTICS.md is a default here and a setting an operator can change. Each
//! flag can also be given as an environment variable (`--fetch-timeout` is
//! `ROBOTSD_FETCH_TIMEOUT`); a flag on the command line wins over its variable. This module is the
//! only place where robotsd reads its environment, and it does so only through clap.
//!
//! The flags come in one group per concern, each a clap struct flattened into [`ServeArgs`] under
//! its own help heading and kept in its own submodule: `network` (listeners and destinations),
//! `fetch`, `cache`, `limits`, `connections`, `logging`, `store`, `access`, `matching`, `pacing`, `rsl`, `tdmrep` and `bot_auth`; `values` holds the parsers every group shares
//! ([`parse_duration`], [`parse_size`], [`parse_cidr`]) and describes the value formats.
//!
//! A value that does not parse is refused by clap. What shows only in values together (zero time
//! limits, minimums above their maximums, an admin listener on the main listener's address, a
//! proxy that is not `http`/`https`, and so on) is refused where the values become a type: by
//! [`FetchConfig::try_new`] and [`PolicyConfig::try_new`], whose typed errors name the field at
//! fault, and, for this module's own [`Limits`] and [`LogSettings`], by the group that builds
//! them. One table, `FLAGS`, names the flag behind each field, so that every [`ConfigError`]
//! names the flag to fix while the fetcher and the cache know nothing of flags.
//!
//! [`PolicyConfig::try_new`]: crate::cache::policy::PolicyConfig::try_new

mod access;
mod bot_auth;
mod cache;
mod connections;
mod fetch;
mod limits;
mod logging;
mod matching;
mod network;
mod pacing;
mod rsl;
mod store;
mod tdmrep;
mod values;

use std::net::SocketAddr;
use std::time::Duration;

use crate::cache::CacheConfig;
use crate::destination::DestinationPolicy;
use crate::fetch::FetchConfig;

pub use access::AccessArgs;
pub use bot_auth::{BotAuthArgs, BotAuthSettings};
pub use cache::CacheArgs;
pub use connections::{ConnectionArgs, ConnectionLimits, MIN_HEADER_BYTES};
pub use fetch::FetchArgs;
pub use limits::{LimitArgs, Limits};
pub use logging::{AccessLog, LogArgs, LogFormat, LogSettings};
pub use matching::{DecodingName, MatchingArgs};
pub use network::NetworkArgs;
pub use pacing::{PacingArgs, PacingSettings};
pub use rsl::{RslArgs, RslSettings};
pub use store::{StoreArgs, StoreConfig};
pub use tdmrep::{TdmRepArgs, TdmRepSettings};
pub use values::{MAX_DURATION, parse_cidr, parse_duration, parse_size};

/// The flags of `robotsd serve` (also the default command), one group per concern.
///
/// Every flag has a `ROBOTSD_*` environment variable; turn them into checked [`Settings`] with
/// [`ServeArgs::settings`].
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Where robotsd listens and what it may fetch from.
    #[command(flatten)]
    pub network: NetworkArgs,
    /// How robots.txt is fetched.
    #[command(flatten)]
    pub fetch: FetchArgs,
    /// The cache and its lifetime and backoff rules.
    #[command(flatten)]
    pub cache: CacheArgs,
    /// Request and server limits.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Client connection limits.
    #[command(flatten)]
    pub connections: ConnectionArgs,
    /// Logging.
    #[command(flatten)]
    pub logging: LogArgs,
    /// The shared store.
    #[command(flatten)]
    pub store: StoreArgs,
    /// API access.
    #[command(flatten)]
    pub access: AccessArgs,
    /// How answers are matched.
    #[command(flatten)]
    pub matching: MatchingArgs,
    /// Fleet-wide politeness.
    #[command(flatten)]
    pub pacing: PacingArgs,
    /// RSL license terms.
    #[command(flatten)]
    pub rsl: RslArgs,
    /// TDMRep's well-known files.
    #[command(flatten)]
    pub tdmrep: TdmRepArgs,
    /// Web Bot Auth signatures.
    #[command(flatten)]
    pub bot_auth: BotAuthArgs,
}

impl ServeArgs {
    /// Checks the flags together and builds the [`Settings`].
    pub fn settings(&self) -> Result<Settings, ConfigError> {
        let admin_listen = self.network.admin_listen()?;
        let fetch = self.fetch.fetch_config()?;
        let limits = self.limits.limits()?;
        Ok(Settings {
            listen: self.network.listen,
            admin_listen,
            store: self.store.store_config(&fetch)?,
            fetch,
            cache: self.cache.cache_config()?,
            destinations: self.network.destinations(),
            dns: self.network.dns()?,
            connections: self.connections.connection_limits(&limits)?,
            limits,
            log: self.logging.log_settings()?,
            api_tokens: self.access.api_tokens()?,
            operator_identified: self.fetch.identifies_operator(),
            percent_decoding: self.matching.percent_decoding.into(),
            ui: !self.access.no_ui,
            pacing: self.pacing.pacing_settings()?,
            rsl: self.rsl.rsl_settings()?,
            tdmrep: self.tdmrep.tdmrep_settings()?,
            // The card names the operator's contact, checked with the fetch settings.
            bot_auth: self
                .bot_auth
                .bot_auth_settings()?
                .map(|bot_auth| bot_auth.with_contact(self.fetch.operator_contact.clone())),
            fetch_nice: self.fetch.fetch_nice,
        })
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
    /// How host names are resolved.
    pub dns: crate::dns::DnsConfig,
    /// Request and server limits.
    pub limits: Limits,
    /// Client connection limits.
    pub connections: ConnectionLimits,
    /// Logging.
    pub log: LogSettings,
    /// The shared store, if any (none: the in-memory cache alone).
    pub store: Option<StoreConfig>,
    /// The bearer tokens the API requires, if any (none: the API is open).
    pub api_tokens: Option<crate::auth::ApiTokens>,
    /// Whether the fetch User-Agent says how to reach the operator (`--operator-contact` or
    /// `--fetch-user-agent`); robotsd warns at start when it does not.
    pub operator_identified: bool,
    /// How percent-encoded unreserved characters compare when a request does not say (Google's
    /// way: not decoded).
    pub percent_decoding: robotsd_engine::PercentDecoding,
    /// Whether the tester page is served at `/` (`--no-ui` turns it off).
    pub ui: bool,
    /// Fleet-wide politeness.
    pub pacing: PacingSettings,
    /// RSL license terms.
    pub rsl: RslSettings,
    /// TDMRep's well-known files.
    pub tdmrep: TdmRepSettings,
    /// Web Bot Auth signatures, when on (`--wba-keys`).
    pub bot_auth: Option<BotAuthSettings>,
    /// The nice value of the threads fetches run on (`crate::fetch_runtime`).
    pub fetch_nice: u8,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            listen: SocketAddr::from(([0, 0, 0, 0], 8080)),
            admin_listen: None,
            fetch: FetchConfig::default(),
            cache: CacheConfig::default(),
            destinations: DestinationPolicy::default(),
            dns: crate::dns::DnsConfig::default(),
            limits: Limits::default(),
            connections: ConnectionLimits::default(),
            log: LogSettings::default(),
            store: None,
            api_tokens: None,
            operator_identified: false,
            percent_decoding: robotsd_engine::PercentDecoding::Google,
            ui: true,
            pacing: PacingSettings::default(),
            rsl: RslSettings::default(),
            tdmrep: TdmRepSettings::default(),
            bot_auth: None,
            fetch_nice: crate::fetch_runtime::DEFAULT_NICE,
        }
    }
}

/// The flag that sets each field of [`Settings`], by the field's path there. A domain type's
/// error names only its own field; the group that built it knows where the type sits in
/// [`Settings`], and this table turns the two into the flag an operator has to fix.
const FLAGS: [(&str, &str); 81] = [
    ("listen", "--listen"),
    ("admin_listen", "--admin-listen"),
    ("destinations.allow_private", "--allow-private-networks"),
    ("destinations.allow", "--allow-cidr"),
    ("destinations.deny", "--deny-cidr"),
    ("dns.servers", "--dns-server"),
    ("dns.cache_entries", "--dns-cache-entries"),
    ("dns.system", "--system-resolver"),
    ("fetch.user_agent", "--fetch-user-agent"),
    ("operator_identified", "--operator-contact"),
    ("fetch.connect_timeout", "--connect-timeout"),
    ("fetch.total_timeout", "--fetch-timeout"),
    ("fetch.max_body_bytes", "--max-robots-bytes"),
    ("fetch.max_redirects", "--max-redirects"),
    ("fetch.proxy", "--proxy"),
    ("fetch_nice", "--fetch-nice"),
    ("cache.capacity_bytes", "--cache-capacity"),
    ("cache.policy.default_lifetime", "--default-lifetime"),
    ("cache.policy.min_lifetime", "--min-lifetime"),
    ("cache.policy.max_lifetime", "--max-lifetime"),
    ("cache.policy.disallow_window", "--disallow-window"),
    ("cache.policy.last_copy_window", "--last-copy-window"),
    ("cache.policy.retry_min", "--retry-min"),
    ("cache.policy.retry_max", "--retry-max"),
    ("limits.max_url_bytes", "--max-url-bytes"),
    ("limits.max_user_agent_bytes", "--max-user-agent-bytes"),
    ("limits.max_agents", "--max-agents"),
    ("limits.max_agent_names", "--max-agent-names"),
    ("limits.max_request_work", "--max-request-work"),
    ("limits.max_batch", "--max-batch"),
    ("limits.max_body_bytes", "--max-body-bytes"),
    ("limits.max_page_bytes", "--max-page-bytes"),
    ("limits.request_timeout", "--request-timeout"),
    ("limits.concurrency_limit", "--concurrency-limit"),
    ("limits.batch_concurrency", "--batch-concurrency"),
    ("limits.shutdown_grace", "--shutdown-grace"),
    ("connections.max_connections", "--max-connections"),
    ("connections.header_read_timeout", "--header-read-timeout"),
    ("connections.idle_timeout", "--idle-timeout"),
    ("connections.body_read_timeout", "--body-read-timeout"),
    ("connections.max_header_bytes", "--max-header-bytes"),
    ("connections.http2_max_streams", "--http2-max-streams"),
    (
        "connections.max_body_bytes_in_flight",
        "--max-body-bytes-in-flight",
    ),
    ("log.format", "--log-format"),
    ("log.level", "--log-level"),
    ("log.access", "--access-log"),
    ("store.redis.url", "--redis-url"),
    ("store.redis.password", "--redis-password-file"),
    ("store.redis.cluster", "--redis-cluster"),
    ("store.redis.sentinel", "--redis-sentinel"),
    ("store.redis.sentinel.master", "--redis-sentinel-master"),
    (
        "store.redis.sentinel.password",
        "--redis-sentinel-password-file",
    ),
    ("store.redis.sentinel.tls", "--redis-tls"),
    ("store.redis.tls.ca", "--redis-ca-file"),
    ("store.redis.tls.client_cert", "--redis-client-cert"),
    ("store.redis.tls.client_key", "--redis-client-key"),
    ("store.settings.timeout", "--store-timeout"),
    ("store.fleet.lease_ttl", "--store-lease"),
    ("store.fleet.sync_interval", "--store-sync-interval"),
    ("api_tokens", "--api-token-file"),
    ("percent_decoding", "--percent-decoding"),
    ("ui", "--no-ui"),
    ("pacing.policy.default_interval", "--default-crawl-delay"),
    ("pacing.policy.max_interval", "--max-crawl-delay"),
    ("pacing.policy.max_wait", "--max-pace-wait"),
    ("pacing.policy.max_retry_after", "--max-retry-after"),
    ("pacing.policy.guard", "--pace-guard"),
    ("pacing.key", "--pace-key"),
    ("pacing.capacity_bytes", "--pace-capacity"),
    ("pacing.fleet.size", "--fleet-size"),
    ("pacing.fleet.index", "--fleet-index"),
    ("pacing.fleet.offset", "--fleet-index-offset"),
    ("rsl.enabled", "--rsl"),
    ("rsl.capacity_bytes", "--rsl-capacity"),
    ("tdmrep.enabled", "--tdmrep"),
    ("tdmrep.capacity_bytes", "--tdmrep-capacity"),
    ("bot_auth.keys", "--wba-keys"),
    ("bot_auth.agent", "--wba-agent"),
    ("bot_auth.ttl", "--wba-ttl"),
    ("bot_auth.product_token", "--wba-product-token"),
    ("fetch.challenge_unreachable", "--challenge-as"),
];

/// ` plus --fleet-index-offset (N)`, when there is one.
fn offset_shown(offset: u32) -> String {
    match offset {
        0 => String::new(),
        offset => format!(" plus {} ({offset})", flag("pacing.fleet", "offset")),
    }
}

/// The flag of `field` in `section` (its path in [`Settings`], empty for a top-level field).
fn flag(section: &str, field: &str) -> &'static str {
    FLAGS
        .iter()
        .find(|&&(path, _)| {
            let in_section = match section {
                "" => Some(path),
                _ => path
                    .strip_prefix(section)
                    .and_then(|rest| rest.strip_prefix('.')),
            };
            in_section == Some(field)
        })
        // Only reached if a domain error names a field missing here, which the tests of each
        // error would catch; a vaguer message beats a panic at start-up.
        .map_or("a setting", |&(_, flag)| flag)
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
    /// A size below the least the server can work with.
    #[error("{flag} ({value}) is below the minimum of {min}")]
    BelowMinimum {
        /// The flag.
        flag: &'static str,
        /// Its value.
        value: u64,
        /// The minimum.
        min: u64,
    },
    /// A size that does not fit this platform's address space.
    #[error("{flag} ({value}) is too large for this platform")]
    TooLarge {
        /// The flag.
        flag: &'static str,
        /// Its value.
        value: u64,
    },
    /// `--fleet-index` (with `--fleet-index-offset`) outside `0..--fleet-size`.
    #[error(
        "{} ({index}){} must be below {} ({size}): replicas are numbered from 0",
        flag("pacing.fleet", "index"),
        offset_shown(*offset),
        flag("pacing.fleet", "size")
    )]
    FleetIndexOutside {
        /// The index given.
        index: u32,
        /// The offset added to it (`--fleet-index-offset`).
        offset: u32,
        /// The fleet size.
        size: u32,
    },
    /// `--admin-listen` would bind the same port as `--listen`.
    #[error(
        "{} ({admin}) must not bind the same address and port as {} ({listen})",
        flag("", "admin_listen"),
        flag("", "listen")
    )]
    AdminListenCollides {
        /// The `--listen` address.
        listen: SocketAddr,
        /// The `--admin-listen` address.
        admin: SocketAddr,
    },
    /// `--system-resolver` and `--dns-server` both given: the C library asks only the servers
    /// of /etc/resolv.conf.
    #[error(
        "{} and {} are both set: getaddrinfo asks only the servers of /etc/resolv.conf",
        flag("dns", "system"),
        flag("dns", "servers")
    )]
    ResolverConflict,
    /// The proxy URL is not an `http` or `https` URL with a host.
    #[error("{} {url}: {detail}", flag("fetch", "proxy"))]
    Proxy {
        /// The URL without its credentials.
        url: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The operator contact is empty or has spaces.
    #[error(
        "{} must be a URL or mailto: address without spaces",
        flag("", "operator_identified")
    )]
    Contact,
    /// The fetch user agent cannot be sent as a header value.
    #[error("{} must be non-empty printable ASCII", flag("fetch", "user_agent"))]
    UserAgent,
    /// A shared store setting is unusable (a URL that is not Redis's, an unreadable password
    /// file).
    #[error("{flag}: {detail}")]
    Store {
        /// The flag.
        flag: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// The API token file cannot be read or holds no usable token.
    #[error("{flag} {detail}")]
    TokenFile {
        /// The flag.
        flag: &'static str,
        /// The file and what is wrong with it.
        detail: String,
    },
    /// A Web Bot Auth setting is unusable (a key file that cannot be read or holds no usable
    /// key set, an agent that is not an https URI, a lifetime out of range). Never quotes a key.
    #[error("{flag} {detail}")]
    BotAuth {
        /// The flag.
        flag: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// The log filter does not parse.
    #[error(
        "{} {value:?} is not a valid filter directive: {detail}",
        flag("log", "level")
    )]
    LogLevel {
        /// The directive string.
        value: String,
        /// The parser's complaint.
        detail: String,
    },
}

impl ConfigError {
    /// `field` of `section` is zero.
    fn zero(section: &str, field: &str) -> Self {
        ConfigError::Zero {
            flag: flag(section, field),
        }
    }

    /// `field` of `section` exceeds `limit_field`, which bounds it.
    fn exceeds(
        section: &str,
        (field, value): (&str, Duration),
        (limit_field, limit): (&str, Duration),
    ) -> Self {
        ConfigError::Exceeds {
            flag: flag(section, field),
            value: humantime::format_duration(value).to_string(),
            limit_flag: flag(section, limit_field),
            limit: humantime::format_duration(limit).to_string(),
        }
    }

    /// A size for `field` of `section` as a `usize`, if this platform can hold it.
    fn to_usize(section: &str, field: &str, value: u64) -> Result<usize, ConfigError> {
        usize::try_from(value).map_err(|_| ConfigError::TooLarge {
            flag: flag(section, field),
            value,
        })
    }
}

#[cfg(test)]
mod tests;
