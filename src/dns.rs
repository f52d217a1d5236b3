//! Host names to addresses for the fetcher, asked of the name servers without a thread each and
//! kept for as long as their answers' TTLs allow.
//!
//! A fleet meets new hosts all day, and one host is looked up several times within seconds: its
//! `http` origin redirects to `https`, the `https` origin is checked on its own, `www.` follows.
//! The C library's `getaddrinfo` keeps nothing, blocks a thread for each lookup, and says
//! nothing of TTLs; robotsd asks the name servers of `/etc/resolv.conf` (or `--dns-server`) with
//! the hickory project's stub resolver, which keeps each answer, positive or negative, for its
//! TTL (a negative one for at most [`NEGATIVE_MAX_TTL`]), in at most `--dns-cache-entries`
//! answers. `--system-resolver` keeps `getaddrinfo`, for hosts that need what the C library
//! reads besides DNS (`/etc/nsswitch.conf`: mDNS, LDAP).
//!
//! Every answer, cached or not, is still vetted by [`crate::destination::PolicyResolver`]
//! before a connection is made; a cache changes when a name is asked, never which addresses may
//! be reached. A name with a dot in it is asked as written, fully qualified: a URL's host is
//! not a name to complete with the pod's search domains (Kubernetes' `ndots:5` would otherwise
//! ask four wrong names first); a single label (`http://intranet/`) still goes through them.
//! Each lookup's time is bounded by the resolver's own timeout and attempts and, above them, by
//! the fetch's `--connect-timeout`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{LookupIpStrategy, NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::net::runtime::TokioRuntimeProvider;

use crate::destination::NameLookup;

/// Answers kept by default: a day of a crawl frontier's new hosts at a few a second, each at a
/// few hundred bytes.
pub const DEFAULT_CACHE_ENTRIES: u64 = 10_000;

/// The longest a name that does not exist is remembered, whatever its zone's SOA says: a site
/// whose name was just registered is fetched again within minutes.
pub const NEGATIVE_MAX_TTL: Duration = Duration::from_secs(300);

/// How host names are resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DnsConfig {
    /// robotsd's own stub resolver, with a cache.
    Cached {
        /// The name servers to ask; those of `/etc/resolv.conf` when empty.
        servers: Vec<SocketAddr>,
        /// Answers kept at most (0: none kept, every lookup asks).
        cache_entries: u64,
    },
    /// The C library's `getaddrinfo`, on a blocking thread, nothing kept.
    System,
}

impl Default for DnsConfig {
    fn default() -> Self {
        DnsConfig::Cached {
            servers: Vec::new(),
            cache_entries: DEFAULT_CACHE_ENTRIES,
        }
    }
}

/// Why the resolver could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum DnsError {
    /// `/etc/resolv.conf` could not be read or names no server.
    #[error(
        "cannot read the name servers of /etc/resolv.conf ({0}); name one with --dns-server, or \
         use the C library's resolver with --system-resolver"
    )]
    SystemConfig(String),
    /// The resolver refused its configuration.
    #[error("cannot set up the DNS resolver: {0}")]
    Build(String),
}

/// robotsd's stub resolver, shared by every fetch. Cheap to clone.
#[derive(Clone)]
pub struct Dns {
    resolver: Arc<TokioResolver>,
}

impl std::fmt::Debug for Dns {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dns").finish_non_exhaustive()
    }
}

impl Dns {
    /// The resolver `config` describes; `None` for [`DnsConfig::System`].
    pub fn new(config: &DnsConfig) -> Result<Option<Dns>, DnsError> {
        let DnsConfig::Cached {
            servers,
            cache_entries,
        } = config
        else {
            return Ok(None);
        };
        let (resolver_config, mut options) = if servers.is_empty() {
            hickory_resolver::system_conf::read_system_conf()
                .map_err(|e| DnsError::SystemConfig(e.to_string()))?
        } else {
            let servers = servers.iter().map(|&addr| name_server(addr)).collect();
            (
                ResolverConfig::from_name_servers(servers),
                ResolverOpts::default(),
            )
        };
        if resolver_config.name_servers().is_empty() {
            return Err(DnsError::SystemConfig("no nameserver line".to_owned()));
        }
        options.cache_size = *cache_entries;
        options.negative_max_ttl = Some(NEGATIVE_MAX_TTL);
        // One question where getaddrinfo asks two: AAAA only for a name without an A record.
        // Every address returned is vetted, and none other is ever connected to, so an AAAA
        // left unasked cannot be a way around the policy.
        options.ip_strategy = LookupIpStrategy::Ipv4thenIpv6;
        // The kernel's random ephemeral port for each question's socket, rather than a random
        // port of the resolver's choosing and a `bind` until one is free: as unpredictable to a
        // spoofer, and cheaper (BENCHMARKS.md, "Names on the miss path").
        options.os_port_selection = true;
        let resolver =
            TokioResolver::builder_with_config(resolver_config, TokioRuntimeProvider::default())
                .with_options(options)
                .build()
                .map_err(|e| DnsError::Build(e.to_string()))?;
        Ok(Some(Dns {
            resolver: Arc::new(resolver),
        }))
    }

    /// The addresses of `host` (port 0), from the cache while its answer lives.
    pub async fn lookup(&self, host: &str) -> std::io::Result<Vec<SocketAddr>> {
        match self.resolver.lookup_ip(&*qualified(host)).await {
            Ok(found) => Ok(found.iter().map(|ip| SocketAddr::new(ip, 0)).collect()),
            // Said plainly: the answer's `last_error` is read by people, and the resolver's own
            // message for these is its query's `Debug`.
            Err(error) if error.is_nx_domain() => Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{host} does not exist"),
            )),
            Err(error) if error.is_no_records_found() => Ok(Vec::new()),
            Err(error) => Err(std::io::Error::other(error.to_string())),
        }
    }

    /// This resolver as the fetcher's [`NameLookup`].
    pub fn name_lookup(&self) -> NameLookup {
        let dns = self.clone();
        Arc::new(move |host: String| {
            let dns = dns.clone();
            Box::pin(async move { dns.lookup(&host).await })
        })
    }
}

/// The name to ask for `host`: fully qualified when it has a dot, so that no search domain is
/// tried before it; a single label as it is, for the search domains to complete.
fn qualified(host: &str) -> std::borrow::Cow<'_, str> {
    if host.contains('.') && !host.ends_with('.') {
        format!("{host}.").into()
    } else {
        host.into()
    }
}

/// A name server asked over UDP, and over TCP for an answer too long for a datagram.
fn name_server(addr: SocketAddr) -> NameServerConfig {
    let mut server = NameServerConfig::udp_and_tcp(addr.ip());
    for connection in &mut server.connections {
        connection.port = addr.port();
    }
    server
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_builds_nothing() {
        assert!(Dns::new(&DnsConfig::System).unwrap().is_none());
    }

    #[test]
    fn a_host_with_a_dot_is_asked_fully_qualified() {
        assert_eq!(qualified("example.com"), "example.com.");
        assert_eq!(qualified("example.com."), "example.com.");
        assert_eq!(qualified("intranet"), "intranet");
    }

    #[test]
    fn a_named_server_keeps_its_port() {
        let server = name_server("127.0.0.1:5353".parse().unwrap());
        assert_eq!(server.connections.len(), 2);
        assert!(server.connections.iter().all(|c| c.port == 5353));
    }
}
