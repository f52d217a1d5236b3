//! Which fetches share one pace: an origin's lane (docs/politeness.md, "What a reservation means").
//!
//! A site's crawl-delay protects the server behind it, and `http://example.com`,
//! `https://example.com` and `https://example.com:8443` are one server: paced by origin, it
//! would get the fleet's rate three times. So lanes are by host by default, as crawlers that are
//! polite at scale queue (Apache Nutch's `fetcher.queue.mode` byHost, StormCrawler's
//! `partition.url.mode`), and can be by registrable domain (`site`, by the Public Suffix List),
//! by the server's IP address (`address`, Nutch's byIP), or by origin as before.

use std::net::IpAddr;

use crate::origin::Origin;

/// How origins are grouped into lanes (`--pace-key`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum PaceKey {
    /// The host: every scheme and port of it share one lane.
    #[default]
    Host,
    /// The origin (scheme, host, port): each its own lane.
    Origin,
    /// The registrable domain, by the Public Suffix List (`www.example.co.uk` and
    /// `img.example.co.uk` share `example.co.uk`); a host without one (an IP address, `localhost`,
    /// a public suffix itself) is its own lane.
    Site,
    /// The IP address the origin's server answered from when robotsd fetched its robots.txt
    /// (`localhost` and `127.0.0.1` share one); while robotsd knows none (through `--proxy`, or
    /// before a fetch got an answer), the host.
    Address,
}

impl PaceKey {
    /// The flag's value.
    pub fn as_str(self) -> &'static str {
        match self {
            PaceKey::Host => "host",
            PaceKey::Origin => "origin",
            PaceKey::Site => "site",
            PaceKey::Address => "address",
        }
    }

    /// `origin`'s lane: the kind, a colon, and the host, domain, address or origin it stands for
    /// (`host:example.com`, `site:example.co.uk`, `address:192.0.2.7`,
    /// `origin:https://example.com:8443`), so that lanes of two kinds never share a key in the
    /// store. `address` is where the origin's server answered robotsd's last fetch of its
    /// robots.txt, when known; lanes by address fall back to the host without it, and the lane
    /// says so (`host:`).
    pub fn lane(self, origin: &Origin, address: Option<IpAddr>) -> String {
        let name = match (self, address) {
            (PaceKey::Origin, _) => origin.key(),
            (PaceKey::Host, _) | (PaceKey::Address, None) => origin.host_str(),
            (PaceKey::Address, Some(IpAddr::V4(v4))) => {
                return format!("address:{v4}");
            }
            // Bracketed, as a host is: `address:[::1]`.
            (PaceKey::Address, Some(IpAddr::V6(v6))) => match v6.to_ipv4_mapped() {
                Some(v4) => return format!("address:{v4}"),
                None => return format!("address:[{v6}]"),
            },
            (PaceKey::Site, _) => match origin.host() {
                url::Host::Domain(domain) => psl::domain_str(domain).unwrap_or(domain),
                _ => origin.host_str(),
            },
        };
        let kind = match self {
            PaceKey::Address => PaceKey::Host,
            other => other,
        }
        .as_str();
        // Built by hand rather than with `format!`: one lane per paced check.
        let mut lane = String::with_capacity(kind.len() + 1 + name.len());
        lane.push_str(kind);
        lane.push(':');
        lane.push_str(name);
        lane
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lane(key: PaceKey, url: &str) -> String {
        let url = url::Url::parse(url).unwrap();
        key.lane(&Origin::from_url(&url).unwrap(), None)
    }

    fn lane_at(key: PaceKey, url: &str, address: &str) -> String {
        let url = url::Url::parse(url).unwrap();
        key.lane(
            &Origin::from_url(&url).unwrap(),
            Some(address.parse().unwrap()),
        )
    }

    #[test]
    fn by_host_the_schemes_and_ports_of_a_host_share_a_lane() {
        for url in [
            "http://example.com/a",
            "https://example.com/b",
            "https://example.com:8443/c",
        ] {
            assert_eq!(lane(PaceKey::Host, url), "host:example.com", "{url}");
        }
        assert_eq!(
            lane(PaceKey::Host, "https://www.example.com/"),
            "host:www.example.com"
        );
        assert_eq!(lane(PaceKey::Host, "http://[::1]:8080/"), "host:[::1]");
        assert_eq!(
            lane(PaceKey::Host, "http://127.0.0.1:8080/"),
            "host:127.0.0.1"
        );
    }

    #[test]
    fn by_origin_each_origin_is_its_own_lane() {
        assert_eq!(
            lane(PaceKey::Origin, "https://example.com:8443/c"),
            "origin:https://example.com:8443"
        );
        assert_ne!(
            lane(PaceKey::Origin, "http://example.com/"),
            lane(PaceKey::Origin, "https://example.com/")
        );
    }

    #[test]
    fn by_site_the_registrable_domain_by_the_public_suffix_list() {
        assert_eq!(
            lane(PaceKey::Site, "https://www.example.co.uk/"),
            "site:example.co.uk"
        );
        assert_eq!(
            lane(PaceKey::Site, "https://img.example.co.uk/"),
            "site:example.co.uk"
        );
        assert_eq!(
            lane(PaceKey::Site, "https://a.b.example.com/"),
            "site:example.com"
        );
        // A private suffix of the list: each user's site is its own.
        assert_eq!(
            lane(PaceKey::Site, "https://alice.github.io/"),
            "site:alice.github.io"
        );
        // No registrable domain: the host itself.
        assert_eq!(lane(PaceKey::Site, "http://127.0.0.1:1/"), "site:127.0.0.1");
        assert_eq!(lane(PaceKey::Site, "http://localhost/"), "site:localhost");
    }

    #[test]
    fn by_address_the_names_of_one_server_share_a_lane() {
        for url in [
            "http://localhost:8080/",
            "https://127.0.0.1/",
            "http://www.test/",
        ] {
            assert_eq!(
                lane_at(PaceKey::Address, url, "127.0.0.1"),
                "address:127.0.0.1",
                "{url}"
            );
        }
        assert_eq!(
            lane_at(PaceKey::Address, "http://v6.test/", "2001:db8::1"),
            "address:[2001:db8::1]"
        );
        // An IPv4 peer seen on a dual-stack socket is that IPv4 server.
        assert_eq!(
            lane_at(PaceKey::Address, "http://v4.test/", "::ffff:192.0.2.7"),
            "address:192.0.2.7"
        );
        // Without an address (through a proxy, or before a fetch got an answer): by host, and
        // the lane says so.
        assert_eq!(
            lane(PaceKey::Address, "https://example.com:8443/"),
            "host:example.com"
        );
        // The other kinds ignore it.
        assert_eq!(
            lane_at(PaceKey::Host, "http://localhost/", "127.0.0.1"),
            "host:localhost"
        );
    }
}
