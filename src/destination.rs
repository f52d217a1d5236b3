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
    #[error("destination {ip} is refused: {class} address")]
    Forbidden {
        /// The refused address, as resolved or written (not the embedded IPv4, if any).
        ip: IpAddr,
        /// Why it is refused.
        class: AddressClass,
    },
    /// The host name itself is refused before any lookup (`localhost`, `*.localhost`).
    #[error("destination {host} is refused: {class} name")]
    ForbiddenName {
        /// The refused name.
        host: String,
        /// Why it is refused.
        class: AddressClass,
    },
    /// The address is in the operator's deny list.
    #[error("destination {ip} is refused by the operator's deny list")]
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
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn net(s: &str) -> IpNet {
        s.parse().unwrap()
    }

    fn default_refuses(addr: &str, class: AddressClass) {
        let ip = ip(addr);
        assert_eq!(
            DestinationPolicy::default().check_ip(ip),
            Err(DestinationError::Forbidden { ip, class }),
            "{addr}"
        );
    }

    fn private_allowed() -> DestinationPolicy {
        DestinationPolicy::new(true, Vec::new(), Vec::new())
    }

    fn url_host_result(
        policy: &DestinationPolicy,
        url: &str,
    ) -> (url::Host<String>, Result<(), DestinationError>) {
        let url = url::Url::parse(url).unwrap();
        let host = url.host().unwrap();
        (host.to_owned(), policy.check_url_host(&host))
    }

    fn url_refused_as_loopback_v4(url: &str) {
        let (host, result) = url_host_result(&DestinationPolicy::default(), url);
        assert_eq!(host, url::Host::<String>::Ipv4(Ipv4Addr::new(127, 0, 0, 1)));
        assert_eq!(
            result,
            Err(DestinationError::Forbidden {
                ip: ip("127.0.0.1"),
                class: AddressClass::Loopback
            })
        );
    }

    #[test]
    fn loopback_v4_refused() {
        default_refuses("127.0.0.1", AddressClass::Loopback);
    }

    #[test]
    fn url_plain_loopback_refused() {
        url_refused_as_loopback_v4("http://127.0.0.1/robots.txt");
    }

    #[test]
    fn url_short_form_127_1_refused() {
        url_refused_as_loopback_v4("http://127.1/robots.txt");
    }

    #[test]
    fn url_decimal_integer_refused() {
        url_refused_as_loopback_v4("http://2130706433/robots.txt");
    }

    #[test]
    fn url_hex_short_form_refused() {
        url_refused_as_loopback_v4("http://0x7f.1/robots.txt");
    }

    #[test]
    fn url_octal_refused() {
        url_refused_as_loopback_v4("http://0177.0.0.1/robots.txt");
    }

    #[test]
    fn url_ipv6_loopback_refused() {
        let (_, result) = url_host_result(&DestinationPolicy::default(), "http://[::1]/");
        assert_eq!(
            result,
            Err(DestinationError::Forbidden {
                ip: ip("::1"),
                class: AddressClass::Loopback
            })
        );
    }

    #[test]
    fn ipv4_mapped_dotted_loopback_refused() {
        let (_, result) =
            url_host_result(&DestinationPolicy::default(), "http://[::ffff:127.0.0.1]/");
        assert_eq!(
            result,
            Err(DestinationError::Forbidden {
                ip: ip("::ffff:127.0.0.1"),
                class: AddressClass::Loopback
            })
        );
    }

    #[test]
    fn ipv4_mapped_hex_loopback_refused() {
        default_refuses("::ffff:7f00:1", AddressClass::Loopback);
    }

    #[test]
    fn ipv4_translated_loopback_refused() {
        default_refuses("::ffff:0:7f00:1", AddressClass::Loopback);
    }

    #[test]
    fn ipv4_compatible_private_refused() {
        default_refuses("::10.0.0.1", AddressClass::Private);
    }

    #[test]
    fn unspecified_v4_refused() {
        default_refuses("0.0.0.0", AddressClass::Unspecified);
        default_refuses("0.1.2.3", AddressClass::Unspecified);
    }

    #[test]
    fn unspecified_v6_refused() {
        default_refuses("::", AddressClass::Unspecified);
    }

    #[test]
    fn localhost_name_refused() {
        let (_, result) = url_host_result(&DestinationPolicy::default(), "http://localhost/");
        assert_eq!(
            result,
            Err(DestinationError::ForbiddenName {
                host: "localhost".into(),
                class: AddressClass::Loopback
            })
        );
    }

    #[test]
    fn localhost_subdomain_refused() {
        let (_, result) = url_host_result(&DestinationPolicy::default(), "http://foo.localhost/");
        assert!(matches!(
            result,
            Err(DestinationError::ForbiddenName {
                class: AddressClass::Loopback,
                ..
            })
        ));
    }

    #[test]
    fn localhost_trailing_dot_and_case_refused() {
        for url in ["http://LOCALHOST./", "http://a.b.LocalHost/"] {
            let (_, result) = url_host_result(&DestinationPolicy::default(), url);
            assert!(result.is_err(), "{url}");
        }
    }

    #[test]
    fn names_merely_containing_localhost_accepted() {
        for url in ["http://notlocalhost/", "http://localhost.example.com/"] {
            let (_, result) = url_host_result(&DestinationPolicy::default(), url);
            assert_eq!(result, Ok(()), "{url}");
        }
    }

    #[test]
    fn ordinary_domain_left_to_resolver() {
        let (_, result) = url_host_result(&DestinationPolicy::default(), "https://example.com/");
        assert_eq!(result, Ok(()));
    }

    #[test]
    fn localhost_name_accepted_with_allow_private() {
        let (_, result) = url_host_result(&private_allowed(), "http://localhost/");
        assert_eq!(result, Ok(()));
    }

    #[test]
    fn non_special_scheme_ip_literal_refused() {
        let (_, result) = url_host_result(&DestinationPolicy::default(), "foo://127.0.0.1/");
        assert!(result.is_err());
    }

    #[test]
    fn aws_metadata_v4_refused() {
        default_refuses("169.254.169.254", AddressClass::Metadata);
    }

    #[test]
    fn private_10_refused() {
        default_refuses("10.0.0.1", AddressClass::Private);
    }

    #[test]
    fn private_172_16_refused() {
        default_refuses("172.16.0.1", AddressClass::Private);
    }

    #[test]
    fn private_192_168_refused() {
        default_refuses("192.168.1.1", AddressClass::Private);
    }

    #[test]
    fn cgnat_refused() {
        default_refuses("100.64.0.1", AddressClass::Cgnat);
    }

    #[test]
    fn aws_metadata_v6_refused() {
        default_refuses("fd00:ec2::254", AddressClass::Metadata);
    }

    #[test]
    fn alibaba_metadata_refused() {
        default_refuses("100.100.100.200", AddressClass::Metadata);
    }

    #[test]
    fn nat64_well_known_loopback_refused() {
        default_refuses("64:ff9b::7f00:1", AddressClass::Loopback);
    }

    #[test]
    fn nat64_local_use_private_refused() {
        default_refuses("64:ff9b:1::a00:1", AddressClass::Private);
    }

    #[test]
    fn nat64_local_use_undecodable_layout_refused() {
        default_refuses("64:ff9b:1:5db8:d8:2200::", AddressClass::Reserved);
    }

    #[test]
    fn nat64_public_accepted() {
        assert_eq!(
            DestinationPolicy::default().check_ip(ip("64:ff9b::5db8:d822")),
            Ok(())
        );
    }

    #[test]
    fn six_to_four_loopback_refused() {
        default_refuses("2002:7f00:1::", AddressClass::Loopback);
    }

    #[test]
    fn six_to_four_private_refused() {
        default_refuses("2002:c0a8:101::1", AddressClass::Private);
    }

    #[test]
    fn teredo_refused() {
        default_refuses("2001:0:4136:e378:8000:63bf:3fff:fdd2", AddressClass::Teredo);
    }

    #[test]
    fn link_local_v6_refused() {
        default_refuses("fe80::1", AddressClass::LinkLocal);
    }

    #[test]
    fn unique_local_refused() {
        default_refuses("fc00::1", AddressClass::UniqueLocal);
    }

    #[test]
    fn site_local_refused() {
        default_refuses("fec0::1", AddressClass::SiteLocal);
    }

    #[test]
    fn multicast_v6_refused() {
        default_refuses("ff02::1", AddressClass::Multicast);
    }

    #[test]
    fn multicast_v4_refused() {
        default_refuses("224.0.0.1", AddressClass::Multicast);
    }

    #[test]
    fn broadcast_refused() {
        default_refuses("255.255.255.255", AddressClass::Broadcast);
    }

    #[test]
    fn documentation_v4_refused() {
        default_refuses("192.0.2.1", AddressClass::Documentation);
    }

    #[test]
    fn documentation_v6_refused() {
        default_refuses("2001:db8::1", AddressClass::Documentation);
    }

    #[test]
    fn discard_v6_refused() {
        default_refuses("100::1", AddressClass::Discard);
    }

    #[test]
    fn reserved_240_refused() {
        default_refuses("240.0.0.1", AddressClass::Reserved);
    }

    #[test]
    fn benchmarking_refused() {
        default_refuses("198.18.0.1", AddressClass::Benchmarking);
    }

    #[test]
    fn public_v4_accepted() {
        assert_eq!(
            DestinationPolicy::default().check_ip(ip("93.184.216.34")),
            Ok(())
        );
    }

    #[test]
    fn public_v6_accepted() {
        assert_eq!(
            DestinationPolicy::default().check_ip(ip("2606:4700::1111")),
            Ok(())
        );
    }

    #[test]
    fn public_v4_mapped_accepted() {
        assert_eq!(
            DestinationPolicy::default().check_ip(ip("::ffff:93.184.216.34")),
            Ok(())
        );
    }

    #[test]
    fn allow_private_accepts_private_classes() {
        let policy = private_allowed();
        for addr in ["127.0.0.1", "10.0.0.1", "::1", "fd12::1", "::ffff:10.0.0.1"] {
            assert_eq!(policy.check_ip(ip(addr)), Ok(()), "{addr}");
        }
    }

    #[test]
    fn allow_private_still_refuses_metadata() {
        let policy = private_allowed();
        for addr in ["169.254.169.254", "fd00:ec2::254", "100.100.100.200"] {
            assert!(matches!(
                policy.check_ip(ip(addr)),
                Err(DestinationError::Forbidden {
                    class: AddressClass::Metadata,
                    ..
                })
            ));
        }
    }

    #[test]
    fn allow_private_still_refuses_unspecified() {
        let policy = private_allowed();
        assert!(policy.check_ip(ip("0.0.0.0")).is_err());
        assert!(policy.check_ip(ip("::")).is_err());
    }

    #[test]
    fn allow_private_still_refuses_multicast() {
        assert!(private_allowed().check_ip(ip("224.0.0.1")).is_err());
    }

    #[test]
    fn allow_cidr_opens_exactly_that_range() {
        let policy = DestinationPolicy::new(false, vec![net("127.0.0.2/32")], Vec::new());
        assert_eq!(policy.check_ip(ip("127.0.0.2")), Ok(()));
        assert!(policy.check_ip(ip("127.0.0.1")).is_err());
    }

    #[test]
    fn allow_cidr_can_open_metadata() {
        let policy = DestinationPolicy::new(false, vec![net("169.254.169.254/32")], Vec::new());
        assert_eq!(policy.check_ip(ip("169.254.169.254")), Ok(()));
    }

    #[test]
    fn deny_cidr_refuses_public_address() {
        let policy = DestinationPolicy::new(false, Vec::new(), vec![net("93.184.216.0/24")]);
        let ip = ip("93.184.216.34");
        assert_eq!(policy.check_ip(ip), Err(DestinationError::Denied { ip }));
    }

    #[test]
    fn deny_cidr_matches_embedded_ipv4() {
        let policy = DestinationPolicy::new(false, Vec::new(), vec![net("93.184.216.0/24")]);
        assert!(policy.check_ip(ip("::ffff:93.184.216.34")).is_err());
    }

    #[test]
    fn deny_cidr_beats_allow_private() {
        let policy = DestinationPolicy::new(true, Vec::new(), vec![net("10.1.0.0/16")]);
        assert_eq!(
            policy.check_ip(ip("10.1.2.3")),
            Err(DestinationError::Denied { ip: ip("10.1.2.3") })
        );
        assert_eq!(policy.check_ip(ip("10.2.0.1")), Ok(()));
    }

    #[test]
    fn deny_cidr_beats_allow_cidr() {
        let policy =
            DestinationPolicy::new(false, vec![net("127.0.0.0/8")], vec![net("127.0.0.1/32")]);
        assert!(policy.check_ip(ip("127.0.0.1")).is_err());
        assert_eq!(policy.check_ip(ip("127.0.0.2")), Ok(()));
    }

    #[test]
    fn error_messages_name_the_class() {
        let err = DestinationError::Forbidden {
            ip: ip("169.254.169.254"),
            class: AddressClass::Metadata,
        };
        assert_eq!(
            err.to_string(),
            "destination 169.254.169.254 is refused: cloud metadata address"
        );
    }

    #[tokio::test]
    async fn resolver_refuses_localhost_by_default() {
        use reqwest::dns::Resolve;
        let resolver = PolicyResolver::default();
        let err = match resolver.resolve("localhost".parse().unwrap()).await {
            Ok(_) => panic!("localhost must be refused"),
            Err(e) => e,
        };
        let found = find_destination_error(err.as_ref()).expect("a DestinationError");
        assert!(matches!(
            found,
            DestinationError::ForbiddenName {
                class: AddressClass::Loopback,
                ..
            }
        ));
    }

    #[tokio::test]
    async fn resolver_allows_localhost_with_allow_private() {
        use reqwest::dns::Resolve;
        let resolver = PolicyResolver::new(private_allowed());
        let addrs: Vec<SocketAddr> = match resolver.resolve("localhost".parse().unwrap()).await {
            Ok(addrs) => addrs.collect(),
            Err(e) => panic!("localhost should resolve: {e}"),
        };
        assert!(!addrs.is_empty());
        assert!(addrs.iter().all(|a| a.ip().is_loopback() && a.port() == 0));
    }

    #[tokio::test]
    async fn resolver_vets_ip_literal_names() {
        // Resolving an IP literal needs no DNS, and still goes through the policy.
        let err = PolicyResolver::default()
            .resolve_checked("127.0.0.1")
            .await
            .unwrap_err();
        assert!(matches!(
            err,
            DestinationError::Forbidden {
                class: AddressClass::Loopback,
                ..
            }
        ));
    }

    #[tokio::test]
    async fn refusal_is_recoverable_from_reqwest_error() {
        // The resolver refuses before any socket is opened, so this touches no network.
        let client = reqwest::Client::builder()
            .no_proxy()
            .dns_resolver(std::sync::Arc::new(PolicyResolver::default()))
            .build()
            .unwrap();
        let err = client
            .get("http://localhost:9/robots.txt")
            .send()
            .await
            .unwrap_err();
        assert!(
            find_destination_error(&err).is_some(),
            "no DestinationError in {err:?}"
        );
    }

    #[test]
    fn find_destination_error_looks_inside_io_errors() {
        let inner = DestinationError::Denied {
            ip: ip("93.184.216.34"),
        };
        let io = std::io::Error::other(inner.clone());
        assert_eq!(find_destination_error(&io), Some(&inner));
    }
}
