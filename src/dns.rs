//! Host names to addresses for the fetcher, asked of the name servers without a thread each and
//! kept for as long as their answers' TTLs allow.
//!
//! A fleet meets new hosts all day, and one host is looked up several times within seconds: its
//! `http` origin redirects to `https`, the `https` origin is checked on its own, `www.` follows.
//! The C library's `getaddrinfo` keeps nothing, blocks a thread for each lookup, and says
//! nothing of TTLs; robotsd asks the name servers of `/etc/resolv.conf` (or `--dns-server`) with
//! the hickory project's stub resolver, over UDP only, and keeps each answer, positive or
//! negative, for its TTL (at most [`MAX_KEPT`], a negative one at most [`NEGATIVE_MAX_TTL`]),
//! at most [`MAX_ADDRESSES`] addresses of it, in at most `--dns-cache-entries` answers. An
//! answer is cut only after every address in it has been vetted: one the destination policy
//! refuses is always among those kept, so that the name is refused rather than fetched from the
//! others (issue 58).
//! `--system-resolver` keeps `getaddrinfo`, for hosts that need what the C library reads
//! besides DNS (`/etc/nsswitch.conf`: mDNS, LDAP).
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
use std::time::{Duration, Instant};

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{
    ConnectionConfig, LookupIpStrategy, NameServerConfig, ResolverConfig, ResolverOpts,
};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::{DnsError as HickoryDnsError, NetError};
use hickory_resolver::proto::op::ResponseCode;

use crate::destination::{DestinationPolicy, NameLookup};

/// Answers kept by default: the last minutes of a crawl frontier's new hosts, which is when the
/// same host is looked up again (its `http` origin's redirect, its `https` origin, `www.`).
/// Each costs [`kept_answer_bytes`] (docs/deploy.md, "Memory").
pub const DEFAULT_CACHE_ENTRIES: u64 = 4_096;

/// Addresses kept and tried of one answer: more than a fetch ever gets through, and the bound
/// of an entry's size whatever a name server answers.
pub const MAX_ADDRESSES: usize = 16;

/// The longest an answer is kept, whatever its TTL.
pub const MAX_KEPT: Duration = Duration::from_secs(3_600);

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
    /// The answers kept, by host as the URL writes it; none with `--dns-cache-entries 0`.
    kept: Option<moka::sync::Cache<String, Answer>>,
    /// The policy every address of an answer is vetted against before the answer is cut.
    policy: DestinationPolicy,
}

/// What one kept answer costs: its name as the URL wrote it, the answer and its `addresses`,
/// and the table's entry. A name server's answer is cut to [`MAX_ADDRESSES`], so
/// `kept_answer_bytes(253, MAX_ADDRESSES)` bounds any answer (a DNS name is at most 253 bytes).
pub fn kept_answer_bytes(name: usize, addresses: usize) -> usize {
    use crate::kept::allocation;
    let addresses = addresses.min(MAX_ADDRESSES);
    allocation(name)
        + allocation(
            2 * std::mem::size_of::<usize>() + addresses * std::mem::size_of::<SocketAddr>(),
        )
        + crate::kept::table_entry_bytes(std::mem::size_of::<(String, Answer)>())
}

/// One name's answer, kept until its TTL ends.
#[derive(Debug, Clone)]
struct Answer {
    /// At most [`MAX_ADDRESSES`], port 0.
    addrs: Arc<[SocketAddr]>,
    /// The name does not exist (NXDOMAIN), rather than having no address.
    missing: bool,
    until: Instant,
}

impl Answer {
    fn result(&self, host: &str) -> std::io::Result<Vec<SocketAddr>> {
        if self.missing {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{host} does not exist"),
            ));
        }
        Ok(self.addrs.to_vec())
    }
}

/// Each answer leaves the cache when its TTL ends.
struct UntilItsTtl;

impl moka::Expiry<String, Answer> for UntilItsTtl {
    fn expire_after_create(&self, _: &String, answer: &Answer, now: Instant) -> Option<Duration> {
        Some(answer.until.saturating_duration_since(now))
    }
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
            let (config, options) = hickory_resolver::system_conf::read_system_conf()
                .map_err(|e| DnsError::SystemConfig(e.to_string()))?;
            (over_udp(config), options)
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
        // Kept here rather than in the resolver, whose cache holds whole responses (a name
        // server may send a thousand records) by count.
        options.cache_size = 0;
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
        let kept = (*cache_entries > 0).then(|| {
            moka::sync::Cache::builder()
                .max_capacity(*cache_entries)
                // The most recent answers are the ones asked for again (a site's other origins,
                // seconds later); TinyLFU's admission would refuse a name seen once whenever the
                // cache is full of live answers, which in a crawl is every new name.
                .eviction_policy(moka::policy::EvictionPolicy::lru())
                .expire_after(UntilItsTtl)
                .build()
        });
        Ok(Some(Dns {
            resolver: Arc::new(resolver),
            kept,
            policy: DestinationPolicy::default(),
        }))
    }

    /// This resolver, keeping of a long answer the addresses `policy` refuses: the policy the
    /// fetcher vets every address with ([`crate::destination::PolicyResolver`]).
    pub fn vetted_by(mut self, policy: DestinationPolicy) -> Dns {
        self.policy = policy;
        self
    }

    /// The addresses of `host` (port 0), from the cache while its answer lives.
    pub async fn lookup(&self, host: &str) -> std::io::Result<Vec<SocketAddr>> {
        let kept = self.kept.as_ref().and_then(|kept| kept.get(host));
        if let Some(answer) = kept.filter(|answer| answer.until > Instant::now()) {
            return answer.result(host);
        }
        let asked = Instant::now();
        let answer = match self.resolver.lookup_ip(&*qualified(host)).await {
            Ok(found) => Answer {
                addrs: kept_of(found.iter(), &self.policy),
                missing: false,
                until: found.valid_until().min(asked + MAX_KEPT),
            },
            Err(NetError::Dns(HickoryDnsError::NoRecordsFound(none))) => {
                let ttl = Duration::from_secs(none.negative_ttl.unwrap_or(0).into());
                Answer {
                    addrs: Arc::new([]),
                    missing: none.response_code == ResponseCode::NXDomain,
                    until: asked + ttl.min(NEGATIVE_MAX_TTL),
                }
            }
            // Not kept: a server that failed may answer the next question.
            Err(error) => return Err(std::io::Error::other(error.to_string())),
        };
        if let Some(kept) = self.kept.as_ref().filter(|_| answer.until > asked) {
            kept.insert(host.to_owned(), answer.clone());
        }
        answer.result(host)
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

/// At most [`MAX_ADDRESSES`] of an answer's addresses (port 0), in its order, vetted before
/// any is dropped: when it holds more, the first address `policy` refuses takes the last place,
/// so that the name is refused as a whole as the fetcher's resolver refuses any name with a
/// forbidden address, rather than fetched from the addresses before it.
fn kept_of(
    found: impl Iterator<Item = std::net::IpAddr>,
    policy: &DestinationPolicy,
) -> Arc<[SocketAddr]> {
    let mut kept: Vec<SocketAddr> = Vec::with_capacity(MAX_ADDRESSES);
    let mut refused = None;
    for ip in found {
        if kept.len() < MAX_ADDRESSES {
            kept.push(SocketAddr::new(ip, 0));
        }
        if refused.is_none() && policy.check_ip(ip).is_err() {
            refused = Some(ip);
        }
    }
    if let Some(ip) = refused
        && !kept.iter().any(|a| a.ip() == ip)
        && let Some(last) = kept.last_mut()
    {
        *last = SocketAddr::new(ip, 0);
    }
    kept.into()
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

/// A name server asked over UDP only: an answer too long for a datagram (1,232 bytes with
/// EDNS) fails rather than being fetched over TCP, so that no name server, which strangers'
/// URLs choose, can make one lookup hold 64 KB.
fn name_server(addr: SocketAddr) -> NameServerConfig {
    let mut server = NameServerConfig::udp(addr.ip());
    for connection in &mut server.connections {
        connection.port = addr.port();
    }
    server
}

/// The same servers as `config`, each asked over UDP only ([`name_server`]).
fn over_udp(config: ResolverConfig) -> ResolverConfig {
    let (domain, search, servers) = config.into_parts();
    let servers = servers
        .into_iter()
        .map(|mut server| {
            let mut udp = ConnectionConfig::udp();
            udp.port = server.connections.first().map_or(53, |c| c.port);
            server.connections = vec![udp];
            server
        })
        .collect();
    ResolverConfig::from_parts(domain, search, servers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_answer_fits_the_deploy_rule() {
        // docs/deploy.md sizes the kept answers at 1.25 KiB each: the most one can cost.
        let largest = kept_answer_bytes(253, MAX_ADDRESSES);
        assert!(largest <= 1_280, "{largest}");
        assert_eq!(kept_answer_bytes(253, 100), largest);
        assert!(kept_answer_bytes(11, 1) < largest / 2);
    }

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
    fn the_servers_of_resolv_conf_are_asked_over_udp_on_their_ports() {
        let text = "search svc.cluster.local\nnameserver 10.96.0.10\nnameserver ::1\n";
        let (config, _) = hickory_resolver::system_conf::parse_resolv_conf(text).unwrap();
        let config = over_udp(config);
        assert_eq!(config.search().len(), 1);
        assert_eq!(config.name_servers().len(), 2);
        for server in config.name_servers() {
            assert_eq!(server.connections.len(), 1);
            assert_eq!(server.connections[0].port, 53);
            assert!(matches!(
                server.connections[0].protocol,
                hickory_resolver::config::ProtocolConfig::Udp
            ));
        }
    }

    #[test]
    fn a_named_server_keeps_its_port() {
        let server = name_server("127.0.0.1:5353".parse().unwrap());
        assert_eq!(server.connections.len(), 1);
        assert!(server.connections.iter().all(|c| c.port == 5353));
    }
}
