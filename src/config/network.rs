//! The network settings: where robotsd listens (`--listen`, `--admin-listen`) and which
//! destinations it may fetch robots.txt from (`--allow-private-networks`, `--allow-cidr`,
//! `--deny-cidr`) and how their names are resolved (`--dns-server`, `--dns-cache-entries`,
//! `--system-resolver`).
//!
//! Both are about addresses, and both are what an operator adjusts to fit robotsd into a network:
//! ports for the load balancer and the scraper, networks for the SSRF guard. The guard itself is
//! [`DestinationPolicy`]; this module only gathers its inputs. The one check clap cannot make on a
//! single value is here: the admin listener must not fight the main listener for a port.

use std::net::SocketAddr;

use clap::builder::BoolishValueParser;
use ipnet::IpNet;

use super::{ConfigError, parse_cidr};
use crate::destination::DestinationPolicy;
use crate::dns::DnsConfig;

/// The flags of the listeners and of the destination rules.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Network")]
pub struct NetworkArgs {
    /// Address the API listens on.
    #[arg(long, env = "ROBOTSD_LISTEN", default_value = "0.0.0.0:8080")]
    #[arg(value_name = "ADDR")]
    pub listen: SocketAddr,

    /// Separate address for /metrics, /livez, /readyz and /healthz; unset by default, which
    /// serves them on --listen.
    #[arg(long, env = "ROBOTSD_ADMIN_LISTEN")]
    #[arg(value_name = "ADDR")]
    pub admin_listen: Option<SocketAddr>,

    /// Allow fetching from loopback, private (RFC 1918), link-local, CGNAT and IPv6
    /// unique-local/site-local addresses; cloud metadata, multicast, broadcast and unspecified
    /// addresses stay refused. Off by default; the variable takes true/false (also yes/no,
    /// on/off, 1/0).
    #[arg(long, env = "ROBOTSD_ALLOW_PRIVATE_NETWORKS")]
    #[arg(value_parser = BoolishValueParser::new())]
    pub allow_private_networks: bool,

    /// A network robotsd may fetch from whatever its address class (repeatable; the variable
    /// takes a comma-separated list). None by default.
    #[arg(long, env = "ROBOTSD_ALLOW_CIDR")]
    #[arg(value_delimiter = ',', value_parser = parse_cidr, value_name = "CIDR")]
    pub allow_cidr: Vec<IpNet>,

    /// A network robotsd never fetches from; wins over everything else (repeatable; the
    /// variable takes a comma-separated list). None by default.
    #[arg(long, env = "ROBOTSD_DENY_CIDR")]
    #[arg(value_delimiter = ',', value_parser = parse_cidr, value_name = "CIDR")]
    pub deny_cidr: Vec<IpNet>,

    /// A name server to ask for the hosts robotsd fetches from: an IP address, with a port if
    /// not 53 (repeatable; the variable takes a comma-separated list). None by default: the
    /// servers of /etc/resolv.conf.
    #[arg(long, env = "ROBOTSD_DNS_SERVER")]
    #[arg(value_delimiter = ',', value_parser = parse_dns_server, value_name = "ADDR")]
    pub dns_server: Vec<SocketAddr>,

    /// Answers of the name servers kept, each for its TTL (a name that does not exist for at
    /// most 5 minutes); 0 keeps none.
    #[arg(long, env = "ROBOTSD_DNS_CACHE_ENTRIES", value_name = "COUNT")]
    #[arg(default_value_t = crate::dns::DEFAULT_CACHE_ENTRIES)]
    pub dns_cache_entries: u64,

    /// Resolve host names with the C library's getaddrinfo (which reads /etc/nsswitch.conf and
    /// keeps nothing) rather than robotsd's own cached resolver. Off by default; the variable
    /// takes true/false.
    #[arg(long, env = "ROBOTSD_SYSTEM_RESOLVER")]
    #[arg(value_parser = BoolishValueParser::new())]
    pub system_resolver: bool,
}

impl NetworkArgs {
    /// The admin listener's address, if it can be bound next to `--listen`.
    pub(super) fn admin_listen(&self) -> Result<Option<SocketAddr>, ConfigError> {
        match self.admin_listen {
            Some(admin) if binds_overlap(self.listen, admin) => {
                Err(ConfigError::AdminListenCollides {
                    listen: self.listen,
                    admin,
                })
            }
            admin => Ok(admin),
        }
    }

    /// How host names are resolved. Checked here rather than by clap, which would take
    /// `ROBOTSD_SYSTEM_RESOLVER=false` beside a server for a conflict.
    pub(super) fn dns(&self) -> Result<DnsConfig, ConfigError> {
        match (self.system_resolver, self.dns_server.is_empty()) {
            (true, true) => Ok(DnsConfig::System),
            (true, false) => Err(ConfigError::ResolverConflict),
            (false, _) => Ok(DnsConfig::Cached {
                servers: self.dns_server.clone(),
                cache_entries: self.dns_cache_entries,
            }),
        }
    }

    /// The destination rules; any combination of them is valid.
    pub(super) fn destinations(&self) -> DestinationPolicy {
        DestinationPolicy::new(
            self.allow_private_networks,
            self.allow_cidr.clone(),
            self.deny_cidr.clone(),
        )
    }
}

/// A name server's address: `IP` (port 53) or `IP:PORT` (`[IPv6]:PORT`).
fn parse_dns_server(value: &str) -> Result<SocketAddr, String> {
    if let Ok(ip) = value.parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, 53));
    }
    value
        .parse()
        .map_err(|_| format!("{value:?} is not an IP address or IP:PORT"))
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

#[cfg(test)]
mod tests {
    use super::super::tests::{error_of, parse, settings};
    use super::*;

    #[test]
    fn repeated_cidrs_parse() {
        let args = parse(&["--allow-cidr", "10.0.0.0/8", "--allow-cidr", "::1/128"]).unwrap();
        assert_eq!(
            args.network.allow_cidr,
            [
                "10.0.0.0/8".parse::<IpNet>().unwrap(),
                "::1/128".parse().unwrap()
            ]
        );
        assert!(args.network.deny_cidr.is_empty());
        let err = parse(&["--deny-cidr", "10.0.0.0/99"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
    }

    #[test]
    fn bool_flag_takes_no_value_on_the_command_line() {
        assert!(
            parse(&["--allow-private-networks"])
                .unwrap()
                .network
                .allow_private_networks
        );
        assert!(!parse(&[]).unwrap().network.allow_private_networks);
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
    fn name_servers_take_a_port_or_53() {
        let s = settings(&[
            "--dns-server",
            "10.0.0.2,[::1]:5353",
            "--dns-server",
            "127.0.0.1:53",
        ])
        .unwrap();
        let servers: Vec<SocketAddr> = ["10.0.0.2:53", "[::1]:5353", "127.0.0.1:53"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        assert_eq!(
            s.dns,
            DnsConfig::Cached {
                servers,
                cache_entries: crate::dns::DEFAULT_CACHE_ENTRIES
            }
        );
        let err = parse(&["--dns-server", "ns.example"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
    }

    #[test]
    fn the_system_resolver_is_asked_for_and_excludes_named_servers() {
        assert_eq!(settings(&[]).unwrap().dns, DnsConfig::default());
        let s = settings(&["--system-resolver", "--dns-cache-entries", "5"]).unwrap();
        assert_eq!(s.dns, DnsConfig::System);
        let err = error_of(&["--system-resolver", "--dns-server", "10.0.0.2"]);
        assert!(matches!(err, ConfigError::ResolverConflict), "{err:?}");
        assert_eq!(
            err.to_string(),
            "--system-resolver and --dns-server are both set: getaddrinfo asks only the servers \
             of /etc/resolv.conf"
        );
        // What the chart renders for an unset flag beside a server (`ROBOTSD_SYSTEM_RESOLVER=
        // false`, which clap's own conflict would refuse): false, not a conflict.
        let mut args = parse(&["--dns-server", "10.0.0.2"]).unwrap();
        args.network.system_resolver = false;
        assert!(matches!(
            args.settings().unwrap().dns,
            DnsConfig::Cached { .. }
        ));
    }
}
