//! The tests of `destination`.

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
    let (_, result) = url_host_result(&DestinationPolicy::default(), "http://[::ffff:127.0.0.1]/");
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
    let policy = DestinationPolicy::new(false, vec![net("127.0.0.0/8")], vec![net("127.0.0.1/32")]);
    assert!(policy.check_ip(ip("127.0.0.1")).is_err());
    assert_eq!(policy.check_ip(ip("127.0.0.2")), Ok(()));
}

#[test]
fn error_messages_name_the_class_and_what_would_open_it() {
    let err = DestinationError::Forbidden {
        ip: ip("169.254.169.254"),
        class: AddressClass::Metadata,
    };
    assert_eq!(
        err.to_string(),
        "destination 169.254.169.254 is refused: cloud metadata address (robotsd's operator can \
         allow this range with --allow-cidr)"
    );
    let err = DestinationError::Forbidden {
        ip: ip("10.0.0.1"),
        class: AddressClass::Private,
    };
    assert!(
        err.to_string()
            .ends_with("(robotsd's operator can allow private networks with --allow-private-networks, or this range with --allow-cidr)"),
        "{err}"
    );
    let err = DestinationError::Denied { ip: ip("10.0.0.1") };
    assert!(err.to_string().ends_with("(--deny-cidr)"), "{err}");
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
