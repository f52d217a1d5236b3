//! Destination policy: the guard that keeps robotsd from being turned into a proxy onto the
//! network it runs in (server-side request forgery).
//!
//! robotsd fetches `/robots.txt` from hosts that callers name, so without a guard a caller could
//! make it request loopback services, the private network, or a cloud metadata endpoint and learn
//! from the answer whether they exist (SEMANTICS.md §6). The policy refuses by default every
//! destination that is not a public unicast address: loopback, private, link-local (cloud
//! metadata included), CGNAT, unspecified, multicast, broadcast, reserved and documentation
//! ranges, and the IPv6 forms that smuggle one of those inside an IPv4-embedding prefix.
//!
//! The check has to happen on the addresses the connection will actually use, not on the URL
//! text: a name can resolve to anything, and a second lookup could answer differently (DNS
//! rebinding). [`PolicyResolver`] is therefore plugged into reqwest as its DNS resolver; it vets
//! every address a name resolves to and hands reqwest only vetted addresses, so there is no
//! second lookup to race. IP-literal hosts never reach a resolver, which is why
//! [`DestinationPolicy::check_url_host`] exists and must be applied to the URL and to every
//! redirect hop.
//!
//! Operators can open the private ranges (a sidecar crawling an intranet) or name CIDRs
//! explicitly; an explicit deny list wins over everything.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use ipnet::IpNet;

/// Why an address is not an ordinary public destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// `0.0.0.0/8` ("this network") or `::`; connecting to it reaches the local host.
    Unspecified,
    /// `127.0.0.0/8`, `::1`, and the `localhost` names.
    Loopback,
    /// RFC 1918 private networks: `10/8`, `172.16/12`, `192.168/16`.
    Private,
    /// Link-local: `169.254/16`, `fe80::/10`.
    LinkLocal,
    /// Carrier-grade NAT shared space `100.64/10`.
    Cgnat,
    /// A cloud metadata endpoint: `169.254.169.254`, `fd00:ec2::254`, `100.100.100.200`.
    Metadata,
    /// Multicast: `224/4`, `ff00::/8`.
    Multicast,
    /// The limited broadcast address `255.255.255.255`.
    Broadcast,
    /// Reserved or special-purpose space: `192.0.0/24`, `192.88.99/24`, `240/4`, the rest of
    /// `::/8`, and local-use NAT64 addresses whose embedding cannot be decoded.
    Reserved,
    /// Documentation ranges: `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`,
    /// `3fff::/20`.
    Documentation,
    /// Benchmarking ranges: `198.18/15`, `2001:2::/48`.
    Benchmarking,
    /// IPv6 unique local addresses `fc00::/7`.
    UniqueLocal,
    /// Deprecated IPv6 site-local addresses `fec0::/10`.
    SiteLocal,
    /// The IPv6 discard-only prefix `100::/64`.
    Discard,
    /// Teredo `2001::/32`: the real endpoint is encoded in the address and reached through a
    /// relay, so the address says nothing trustworthy about where the bytes end up.
    Teredo,
}

impl AddressClass {
    /// Whether "allow private networks" opens this class.
    ///
    /// Only ranges that an intranet crawler legitimately needs are covered. Unspecified,
    /// multicast, broadcast and above all cloud metadata stay refused, because opening the
    /// intranet must not also hand out the instance's credentials.
    pub fn is_private_network(self) -> bool {
        matches!(
            self,
            AddressClass::Loopback
                | AddressClass::Private
                | AddressClass::LinkLocal
                | AddressClass::Cgnat
                | AddressClass::UniqueLocal
                | AddressClass::SiteLocal
        )
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddressClass::Unspecified => "unspecified",
            AddressClass::Loopback => "loopback",
            AddressClass::Private => "private network",
            AddressClass::LinkLocal => "link-local",
            AddressClass::Cgnat => "carrier-grade NAT",
            AddressClass::Metadata => "cloud metadata",
            AddressClass::Multicast => "multicast",
            AddressClass::Broadcast => "broadcast",
            AddressClass::Reserved => "reserved",
            AddressClass::Documentation => "documentation",
            AddressClass::Benchmarking => "benchmarking",
            AddressClass::UniqueLocal => "unique local",
            AddressClass::SiteLocal => "site-local",
            AddressClass::Discard => "discard-only",
            AddressClass::Teredo => "Teredo",
        })
    }
}

/// Why a destination was refused, or why it could not be vetted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DestinationError {
    /// The address belongs to a class the policy refuses.
    #[error("destination {ip} is refused: {class} address ({})", opening(*.class))]
    Forbidden {
        /// The refused address, as resolved or written (not the embedded IPv4, if any).
        ip: IpAddr,
        /// Why it is refused.
        class: AddressClass,
    },
    /// The host name itself is refused before any lookup (`localhost`, `*.localhost`).
    #[error("destination {host} is refused: {class} name ({})", opening(*.class))]
    ForbiddenName {
        /// The refused name.
        host: String,
        /// Why it is refused.
        class: AddressClass,
    },
    /// The address is in the operator's deny list.
    #[error("destination {ip} is refused by the operator's deny list (--deny-cidr)")]
    Denied {
        /// The refused address.
        ip: IpAddr,
    },
    /// The name resolved to no address at all (a failure of the name, not a refusal: see
    /// [`DestinationError::is_resolution_failure`]).
    #[error("{host} resolved to no addresses")]
    NoAddresses {
        /// The name that was looked up.
        host: String,
    },
    /// The lookup itself failed.
    #[error("could not resolve {host}: {message}")]
    Resolve {
        /// The name that was looked up.
        host: String,
        /// The resolver's error message.
        message: String,
    },
}

/// What the operator of robotsd can set to open `class`: the caller of a refused check learns
/// whom to ask, and for what, rather than only that it was refused.
fn opening(class: AddressClass) -> &'static str {
    if class.is_private_network() {
        "robotsd's operator can allow private networks with --allow-private-networks, or this \
         range with --allow-cidr"
    } else {
        "robotsd's operator can allow this range with --allow-cidr"
    }
}

impl DestinationError {
    /// Whether the name could not be resolved (no answer, no address), rather than an address
    /// refused by the policy. A robots.txt that cannot be fetched because of DNS is unreachable
    /// (SEMANTICS.md §3): the backoff applies, not a refusal.
    pub fn is_resolution_failure(&self) -> bool {
        matches!(
            self,
            DestinationError::Resolve { .. } | DestinationError::NoAddresses { .. }
        )
    }

    /// Heap bytes the error holds, for a cache that keeps it (a refusal is kept for the
    /// shortest lifetime). A host is at most a fetched URL's length.
    pub fn heap_size(&self) -> usize {
        match self {
            DestinationError::Forbidden { .. } | DestinationError::Denied { .. } => 0,
            DestinationError::ForbiddenName { host, .. }
            | DestinationError::NoAddresses { host } => crate::kept::string(host),
            DestinationError::Resolve { host, message } => {
                crate::kept::string(host) + crate::kept::string(message)
            }
        }
    }
}

/// Which destinations robotsd may connect to.
///
/// The default refuses every non-public address; see [`DestinationPolicy::check_ip`] for the
/// order in which the rules apply.
#[derive(Debug, Clone, Default)]
pub struct DestinationPolicy {
    allow_private: bool,
    allow: Vec<IpNet>,
    deny: Vec<IpNet>,
}

impl DestinationPolicy {
    /// A policy that opens the private-network classes when `allow_private_networks` is set
    /// (see [`AddressClass::is_private_network`]), accepts the `allow` CIDRs whatever their
    /// class, and refuses the `deny` CIDRs whatever else is said.
    pub fn new(allow_private_networks: bool, allow: Vec<IpNet>, deny: Vec<IpNet>) -> Self {
        DestinationPolicy {
            allow_private: allow_private_networks,
            allow,
            deny,
        }
    }

    /// Whether the private-network classes are open.
    pub fn allows_private_networks(&self) -> bool {
        self.allow_private
    }

    /// The operator's explicitly allowed CIDRs.
    pub fn allow_cidrs(&self) -> &[IpNet] {
        &self.allow
    }

    /// The operator's explicitly denied CIDRs.
    pub fn deny_cidrs(&self) -> &[IpNet] {
        &self.deny
    }

    /// Decides whether robotsd may connect to `ip`.
    ///
    /// The deny list is checked first so that an operator can always close a hole; the allow
    /// list next so that an operator can open exactly one service (even a metadata address)
    /// without opening a whole class; only then the address class. CIDR lists match both the
    /// address as given and the IPv4 address it embeds, so `::ffff:10.0.0.1` cannot dodge a
    /// deny entry for `10.0.0.0/8`.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), DestinationError> {
        let embedded = match ip {
            IpAddr::V6(v6) => embedded_ipv4(v6).map(IpAddr::V4),
            IpAddr::V4(_) => None,
        };
        let matches = |nets: &[IpNet]| {
            nets.iter()
                .any(|net| net.contains(&ip) || embedded.is_some_and(|v4| net.contains(&v4)))
        };
        if matches(&self.deny) {
            return Err(DestinationError::Denied { ip });
        }
        if matches(&self.allow) {
            return Ok(());
        }
        match classify(ip) {
            None => Ok(()),
            Some(class) if self.allow_private && class.is_private_network() => Ok(()),
            Some(class) => Err(DestinationError::Forbidden { ip, class }),
        }
    }

    /// Whether robotsd may contact a parsed origin's host: [`DestinationPolicy::check_url_host`]
    /// for the host the origin was parsed into.
    pub fn check_origin(&self, origin: &crate::origin::Origin) -> Result<(), DestinationError> {
        let host = match origin.host() {
            url::Host::Domain(name) => url::Host::Domain(name.as_str()),
            url::Host::Ipv4(address) => url::Host::Ipv4(*address),
            url::Host::Ipv6(address) => url::Host::Ipv6(*address),
        };
        self.check_url_host(&host)
    }

    /// Vets the host of a URL (the request URL or a redirect target) before fetching it.
    ///
    /// IP literals are checked here because reqwest connects to them without consulting the
    /// resolver. The `url` crate has already normalised the obfuscated IPv4 spellings
    /// (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`) for http(s) URLs. Other names are left
    /// to [`PolicyResolver`], which sees the addresses they really resolve to; only the
    /// `localhost` names are refused up front, since RFC 6761 reserves them for loopback.
    pub fn check_url_host(&self, host: &url::Host<&str>) -> Result<(), DestinationError> {
        match host {
            url::Host::Ipv4(v4) => self.check_ip(IpAddr::V4(*v4)),
            url::Host::Ipv6(v6) => self.check_ip(IpAddr::V6(*v6)),
            url::Host::Domain(name) => self.check_name(name),
        }
    }

    fn check_name(&self, name: &str) -> Result<(), DestinationError> {
        // Non-special schemes leave IP literals as opaque domains; vet them anyway rather than
        // rely on every caller restricting the scheme first.
        let bare = name
            .strip_prefix('[')
            .and_then(|s| s.strip_suffix(']'))
            .unwrap_or(name);
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return self.check_ip(ip);
        }
        if is_localhost_name(name) && !self.allow_private {
            return Err(DestinationError::ForbiddenName {
                host: name.to_owned(),
                class: AddressClass::Loopback,
            });
        }
        Ok(())
    }
}

/// `localhost`, `*.localhost`, with or without the trailing root dot, in any case.
fn is_localhost_name(name: &str) -> bool {
    let name = name.strip_suffix('.').unwrap_or(name);
    let Some(tail_start) = name.len().checked_sub("localhost".len()) else {
        return false;
    };
    let Some(tail) = name.get(tail_start..) else {
        return false;
    };
    tail.eq_ignore_ascii_case("localhost")
        && (tail_start == 0 || name.as_bytes()[tail_start - 1] == b'.')
}

/// The class that makes `ip` something other than a public unicast destination, if any.
///
/// IPv6 addresses that embed an IPv4 address are judged as that IPv4 address, because that is
/// where translators and relays deliver the packets.
pub fn classify(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// Whether `ip` lies in `net/len`, on plain integers so the tables below can stay literal.
fn v4_in(ip: u32, net: [u8; 4], len: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - len).unwrap_or(0);
    ip & mask == u32::from_be_bytes(net) & mask
}

fn v6_in(ip: u128, net: Ipv6Addr, len: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - len).unwrap_or(0);
    ip & mask == u128::from(net) & mask
}

// Specific entries come before the ranges that contain them (metadata inside link-local and
// CGNAT, broadcast inside 240/4), so the reported class is the most telling one.
const V4_CLASSES: &[([u8; 4], u32, AddressClass)] = &[
    ([255, 255, 255, 255], 32, AddressClass::Broadcast),
    ([169, 254, 169, 254], 32, AddressClass::Metadata),
    ([100, 100, 100, 200], 32, AddressClass::Metadata),
    ([0, 0, 0, 0], 8, AddressClass::Unspecified),
    ([127, 0, 0, 0], 8, AddressClass::Loopback),
    ([10, 0, 0, 0], 8, AddressClass::Private),
    ([172, 16, 0, 0], 12, AddressClass::Private),
    ([192, 168, 0, 0], 16, AddressClass::Private),
    ([169, 254, 0, 0], 16, AddressClass::LinkLocal),
    ([100, 64, 0, 0], 10, AddressClass::Cgnat),
    ([224, 0, 0, 0], 4, AddressClass::Multicast),
    ([192, 0, 0, 0], 24, AddressClass::Reserved),
    ([192, 88, 99, 0], 24, AddressClass::Reserved),
    ([192, 0, 2, 0], 24, AddressClass::Documentation),
    ([198, 51, 100, 0], 24, AddressClass::Documentation),
    ([203, 0, 113, 0], 24, AddressClass::Documentation),
    ([198, 18, 0, 0], 15, AddressClass::Benchmarking),
    ([240, 0, 0, 0], 4, AddressClass::Reserved),
];

fn classify_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    let bits = u32::from(ip);
    V4_CLASSES
        .iter()
        .find(|(net, len, _)| v4_in(bits, *net, *len))
        .map(|&(_, _, class)| class)
}

const NAT64_WELL_KNOWN: Ipv6Addr = Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0);
const NAT64_LOCAL_USE: Ipv6Addr = Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0);
const SIX_TO_FOUR: Ipv6Addr = Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0);
const IPV4_TRANSLATED: Ipv6Addr = Ipv6Addr::new(0, 0, 0, 0, 0xffff, 0, 0, 0);

/// The IPv4 address that packets to `ip` are really delivered to, for the prefixes that embed
/// one. Teredo is deliberately absent: it is refused as a class of its own.
fn embedded_ipv4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = u128::from(ip);
    let low32 = Ipv4Addr::from(bits as u32);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    if v6_in(bits, IPV4_TRANSLATED, 96) {
        return Some(low32);
    }
    // IPv4-compatible (deprecated); `::` and `::1` are their own classes, not 0.0.0.0/0.0.0.1.
    if bits >> 32 == 0 && bits > 1 {
        return Some(low32);
    }
    if v6_in(bits, NAT64_WELL_KNOWN, 96) {
        return Some(low32);
    }
    // The local-use NAT64 prefix may be carved up with any RFC 6052 prefix length, which moves
    // the embedded address; only the /96 layout (zeros between the /48 and the last 32 bits)
    // can be decoded unambiguously. Other layouts are refused in `classify_v6`.
    if v6_in(bits, NAT64_LOCAL_USE, 96) {
        return Some(low32);
    }
    if v6_in(bits, SIX_TO_FOUR, 16) {
        return Some(Ipv4Addr::from((bits >> 80) as u32));
    }
    None
}

// Exact special addresses are matched before the embedding forms: the metadata address lives
// inside fc00::/7, and `::`/`::1` inside the IPv4-compatible range.
const V6_EXACT: &[(Ipv6Addr, u32, AddressClass)] = &[
    (
        Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254),
        128,
        AddressClass::Metadata,
    ),
    (Ipv6Addr::UNSPECIFIED, 128, AddressClass::Unspecified),
    (Ipv6Addr::LOCALHOST, 128, AddressClass::Loopback),
];

const V6_RANGES: &[(Ipv6Addr, u32, AddressClass)] = &[
    (
        Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0),
        8,
        AddressClass::Multicast,
    ),
    (
        Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0),
        10,
        AddressClass::LinkLocal,
    ),
    (
        Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0),
        10,
        AddressClass::SiteLocal,
    ),
    (
        Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
        7,
        AddressClass::UniqueLocal,
    ),
    (
        Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0),
        32,
        AddressClass::Teredo,
    ),
    (
        Ipv6Addr::new(0x2001, 0x2, 0, 0, 0, 0, 0, 0),
        48,
        AddressClass::Benchmarking,
    ),
    (
        Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
        32,
        AddressClass::Documentation,
    ),
    (
        Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0),
        20,
        AddressClass::Documentation,
    ),
    (
        Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0),
        64,
        AddressClass::Discard,
    ),
    (NAT64_LOCAL_USE, 48, AddressClass::Reserved),
    // Whatever of ::/8 is left after the embedding forms is unassigned and never a web host.
    (Ipv6Addr::UNSPECIFIED, 8, AddressClass::Reserved),
];

fn classify_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    let bits = u128::from(ip);
    if let Some(&(_, _, class)) = V6_EXACT
        .iter()
        .find(|(net, len, _)| v6_in(bits, *net, *len))
    {
        return Some(class);
    }
    if let Some(v4) = embedded_ipv4(ip) {
        return classify_v4(v4);
    }
    V6_RANGES
        .iter()
        .find(|(net, len, _)| v6_in(bits, *net, *len))
        .map(|&(_, _, class)| class)
}

/// A reqwest DNS resolver that only ever returns addresses the policy accepts.
///
/// If any address a name resolves to is refused, the whole name fails: a name answering with a
/// mix of public and private addresses is the signature of a rebinding attack, and quietly
/// dropping the bad answers would still let the attacker choose when to flip.
#[derive(Clone, Default)]
pub struct PolicyResolver {
    policy: DestinationPolicy,
    /// Where names are looked up; the system resolver (`getaddrinfo`) when `None`.
    lookup: Option<NameLookup>,
}

/// Looks a host name up: its socket addresses (port 0), or why it has none. Tests put in one
/// they control, so that nothing is asked of the network.
pub type NameLookup = std::sync::Arc<
    dyn Fn(String) -> futures_util::future::BoxFuture<'static, std::io::Result<Vec<SocketAddr>>>
        + Send
        + Sync,
>;

impl std::fmt::Debug for PolicyResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyResolver")
            .field("policy", &self.policy)
            .field("custom_lookup", &self.lookup.is_some())
            .finish()
    }
}

impl PolicyResolver {
    /// A resolver enforcing `policy`, looking names up with the system resolver.
    pub fn new(policy: DestinationPolicy) -> Self {
        PolicyResolver {
            policy,
            lookup: None,
        }
    }

    /// A resolver enforcing `policy`, looking names up with `lookup`.
    pub fn with_lookup(policy: DestinationPolicy, lookup: NameLookup) -> Self {
        PolicyResolver {
            policy,
            lookup: Some(lookup),
        }
    }

    /// The policy this resolver enforces.
    pub fn policy(&self) -> &DestinationPolicy {
        &self.policy
    }

    /// Resolves `host` and vets every answer; the addresses carry port 0 for reqwest to fill.
    pub async fn resolve_checked(&self, host: &str) -> Result<Vec<SocketAddr>, DestinationError> {
        self.policy.check_name(host)?;
        let answers: Vec<SocketAddr> = match &self.lookup {
            Some(lookup) => lookup(host.to_owned()).await,
            None => tokio::net::lookup_host((host, 0))
                .await
                .map(|answers| answers.collect()),
        }
        .map_err(|e| DestinationError::Resolve {
            host: host.to_owned(),
            message: e.to_string(),
        })?;
        let mut addrs = Vec::new();
        for addr in answers {
            self.policy.check_ip(addr.ip())?;
            addrs.push(addr);
        }
        if addrs.is_empty() {
            return Err(DestinationError::NoAddresses {
                host: host.to_owned(),
            });
        }
        Ok(addrs)
    }
}

impl reqwest::dns::Resolve for PolicyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let resolver = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            match resolver.resolve_checked(&host).await {
                Ok(addrs) => Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs),
                Err(e) => Err(Box::new(e) as Box<dyn std::error::Error + Send + Sync>),
            }
        })
    }
}

/// Finds the [`DestinationError`] behind an error, typically a `reqwest::Error` from a fetch
/// whose resolution [`PolicyResolver`] refused, so the service can answer with a refusal rather
/// than a generic fetch failure.
pub fn find_destination_error<'a>(
    err: &'a (dyn std::error::Error + 'static),
) -> Option<&'a DestinationError> {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<DestinationError>() {
            return Some(found);
        }
        // `io::Error::source` skips the error it wraps, so look inside it explicitly.
        if let Some(found) = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<DestinationError>())
        {
            return Some(found);
        }
        current = e.source();
    }
    None
}

#[cfg(test)]
mod tests;
