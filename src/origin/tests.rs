//! The tests of `origin`.

use super::*;
use std::collections::HashSet;
use std::net::{Ipv4Addr, Ipv6Addr};

fn origin(url: &str) -> Origin {
    parse_target(url).expect("valid URL").origin().clone()
}

fn path(url: &str) -> String {
    parse_target(url).expect("valid URL").path().to_owned()
}

// --- errors ---

#[test]
fn too_long_input_is_refused() {
    let url = format!("https://example.com/{}", "a".repeat(MAX_URL_BYTES));
    assert_eq!(
        parse_target(&url),
        Err(TargetError::TooLong {
            len: url.len(),
            max: MAX_URL_BYTES
        })
    );
}

#[test]
fn url_at_the_limit_is_accepted() {
    let prefix = "https://example.com/";
    let url = format!("{prefix}{}", "a".repeat(MAX_URL_BYTES - prefix.len()));
    assert_eq!(parse_target(&url).expect("at the limit").url(), url);
}

#[test]
fn too_long_after_percent_encoding_is_refused() {
    // 3,000 two-byte characters: 6,000 bytes as given, 18,000 once percent-encoded.
    let url = format!("https://example.com/{}", "é".repeat(3000));
    assert!(url.len() <= MAX_URL_BYTES);
    assert!(matches!(
        parse_target(&url),
        Err(TargetError::TooLong { len, max: MAX_URL_BYTES }) if len > MAX_URL_BYTES
    ));
}

#[test]
fn empty_input_is_relative() {
    assert_eq!(parse_target(""), Err(TargetError::Relative));
    assert_eq!(parse_target("   "), Err(TargetError::Relative));
}

#[test]
fn absolute_path_is_relative() {
    assert_eq!(parse_target("/path"), Err(TargetError::Relative));
}

#[test]
fn host_without_scheme_is_relative() {
    assert_eq!(parse_target("example.com/x"), Err(TargetError::Relative));
}

#[test]
fn scheme_relative_is_relative() {
    assert_eq!(parse_target("//example.com/x"), Err(TargetError::Relative));
}

#[test]
fn host_and_port_without_scheme_is_relative() {
    assert_eq!(parse_target("example.com:80/x"), Err(TargetError::Relative));
    assert_eq!(parse_target("localhost:8080"), Err(TargetError::Relative));
    assert_eq!(parse_target("localhost:8080/x"), Err(TargetError::Relative));
}

#[test]
fn javascript_is_unsupported_scheme() {
    assert_eq!(
        parse_target("javascript:alert(1)"),
        Err(TargetError::UnsupportedScheme("javascript".into()))
    );
}

#[test]
fn other_schemes_are_named() {
    for (url, scheme) in [
        ("ftp://example.com/file", "ftp"),
        ("FTP://example.com/file", "ftp"),
        ("ftp://", "ftp"),
        ("file:///etc/passwd", "file"),
        ("data:text/plain,hi", "data"),
        ("mailto:someone@example.com", "mailto"),
        ("ws://example.com/", "ws"),
    ] {
        assert_eq!(
            parse_target(url),
            Err(TargetError::UnsupportedScheme(scheme.into())),
            "{url}"
        );
    }
}

#[test]
fn long_scheme_is_cut_in_the_error() {
    let url = format!("{}:x", "a".repeat(500));
    assert_eq!(
        parse_target(&url),
        Err(TargetError::UnsupportedScheme("a".repeat(64)))
    );
}

#[test]
fn scheme_without_host_is_no_host() {
    assert_eq!(parse_target("http://"), Err(TargetError::NoHost));
    assert_eq!(parse_target("https://"), Err(TargetError::NoHost));
    assert_eq!(parse_target("https://:8080/"), Err(TargetError::NoHost));
}

#[test]
fn bad_port_is_malformed() {
    assert!(matches!(
        parse_target("https://example.com:99999/"),
        Err(TargetError::Malformed(_))
    ));
}

#[test]
fn bad_host_is_malformed() {
    assert!(matches!(
        parse_target("https://exa mple.com/"),
        Err(TargetError::Malformed(_))
    ));
    assert!(matches!(
        parse_target("http://[::1/"),
        Err(TargetError::Malformed(_))
    ));
}

// --- origin ---

#[test]
fn scheme_and_host_are_lower_cased() {
    let origin = origin("HTTPS://EXAMPLE.COM/Path");
    assert_eq!(origin.key(), "https://example.com");
    assert_eq!(origin.scheme(), Scheme::Https);
    assert_eq!(origin.host_str(), "example.com");
    assert_eq!(origin.host(), &Host::Domain("example.com".to_owned()));
}

#[test]
fn idn_is_punycode() {
    assert_eq!(
        origin("http://müller.eu/"),
        origin("http://xn--mller-kva.eu/")
    );
    assert_eq!(origin("http://MÜLLER.eu/").key(), "http://xn--mller-kva.eu");
}

#[test]
fn default_port_is_dropped() {
    let origin443 = origin("https://example.com:443/");
    assert_eq!(origin443, origin("https://example.com/"));
    assert_eq!(origin443.port(), None);
    assert_eq!(origin443.port_or_default(), 443);
    assert_eq!(origin("http://example.com:80/").key(), "http://example.com");
}

#[test]
fn non_default_port_is_kept() {
    let origin = origin("https://example.com:8181/");
    assert_eq!(origin.key(), "https://example.com:8181");
    assert_eq!(origin.port(), Some(8181));
    assert_eq!(origin.port_or_default(), 8181);
    assert_eq!(origin.host_str(), "example.com");
}

#[test]
fn other_schemes_default_port_is_kept() {
    assert_eq!(
        origin("http://example.com:443/").key(),
        "http://example.com:443"
    );
    assert_eq!(
        origin("https://example.com:80/").key(),
        "https://example.com:80"
    );
}

#[test]
fn http_and_https_differ() {
    assert_ne!(
        origin("http://example.com/"),
        origin("https://example.com/")
    );
}

#[test]
fn ipv6_is_canonical() {
    let origin = origin("http://[0:0::1]/");
    assert_eq!(origin.key(), "http://[::1]");
    assert_eq!(origin.host_str(), "[::1]");
    assert_eq!(origin.host(), &Host::<String>::Ipv6(Ipv6Addr::LOCALHOST));
}

#[test]
fn ipv6_with_port_displays_in_brackets() {
    let origin = origin("http://[::1]:8080/x");
    assert_eq!(origin.to_string(), "http://[::1]:8080");
    assert_eq!(origin.host_str(), "[::1]");
    assert_eq!(origin.port(), Some(8080));
}

#[test]
fn ipv4_is_canonical() {
    let short = origin("http://127.1/");
    assert_eq!(short.key(), "http://127.0.0.1");
    assert_eq!(short.host(), &Host::<String>::Ipv4(Ipv4Addr::LOCALHOST));
    assert_eq!(origin("http://0x7f.0.0.1/"), short);
}

#[test]
fn userinfo_is_ignored() {
    let target = parse_target("https://user:pw@example.com/a").expect("valid");
    assert_eq!(target.origin().key(), "https://example.com");
    assert_eq!(target.url(), "https://example.com/a");
}

#[test]
fn fragment_is_ignored() {
    let target = parse_target("https://example.com/p#frag").expect("valid");
    assert_eq!(target.url(), "https://example.com/p");
    assert_eq!(target.path(), "/p");
}

#[test]
fn display_is_the_key() {
    let origin = origin("https://example.com/x?y");
    assert_eq!(origin.to_string(), "https://example.com");
    assert_eq!(origin.to_string(), origin.key());
}

#[test]
fn robots_url_is_origin_slash_robots_txt() {
    assert_eq!(
        origin("https://user@EXAMPLE.com:443/a/b?c#d")
            .robots_url()
            .as_str(),
        "https://example.com/robots.txt"
    );
    assert_eq!(
        origin("http://[::1]:8080/x").robots_url().as_str(),
        "http://[::1]:8080/robots.txt"
    );
}

#[test]
fn origin_can_be_looked_up_by_key() {
    let set: HashSet<Origin> = [origin("https://example.com/a")].into_iter().collect();
    assert!(set.contains("https://example.com"));
    assert!(set.contains(&origin("https://EXAMPLE.com:443/b")));
    assert!(!set.contains("http://example.com"));
}

#[test]
fn from_url_refuses_other_schemes() {
    let url = Url::parse("ftp://example.com/").expect("valid");
    assert_eq!(
        Origin::from_url(&url),
        Err(TargetError::UnsupportedScheme("ftp".into()))
    );
}

#[test]
fn trailing_dot_is_its_own_origin() {
    assert_ne!(
        origin("http://example.com./"),
        origin("http://example.com/")
    );
}

// --- path ---

#[test]
fn escapes_are_upper_cased() {
    assert_eq!(path("https://example.com/a%2fb"), "/a%2Fb");
    assert_eq!(path("https://example.com/a%2Fb"), "/a%2Fb");
}

#[test]
fn escapes_in_query_are_upper_cased() {
    let target = parse_target("https://example.com/a%2fb?x=%2f%zz").expect("valid");
    assert_eq!(target.path(), "/a%2Fb?x=%2F%zz");
    assert_eq!(target.url(), "https://example.com/a%2Fb?x=%2F%zz");
}

#[test]
fn broken_escape_is_kept() {
    assert_eq!(path("https://example.com/%zz%4a%"), "/%zz%4A%");
}

#[test]
fn non_ascii_is_percent_encoded() {
    assert_eq!(path("https://example.com/caf\u{e9}"), "/caf%C3%A9");
}

#[test]
fn bare_origin_is_slash() {
    assert_eq!(path("https://example.com"), "/");
}

#[test]
fn query_kept_fragment_dropped() {
    assert_eq!(path("https://example.com/p?q=1#frag"), "/p?q=1");
}

#[test]
fn empty_query_is_kept() {
    assert_eq!(path("https://example.com/?"), "/?");
    assert_eq!(path("https://example.com/?#frag"), "/?");
}

#[test]
fn space_is_percent_encoded() {
    assert_eq!(path("https://example.com/a b"), "/a%20b");
}

#[test]
fn dot_segments_are_resolved() {
    assert_eq!(path("https://example.com/a/../b/./c"), "/b/c");
    assert_eq!(path("https://example.com/a/%2e%2E/b"), "/b");
}

#[test]
fn params_are_part_of_the_path() {
    assert_eq!(
        path("https://example.com/a;jsessionid=1?x"),
        "/a;jsessionid=1?x"
    );
}

#[test]
fn path_matches_the_url() {
    let target = parse_target("https://example.com/caf\u{e9}?q=\u{e4} b#x").expect("valid");
    assert_eq!(target.path(), "/caf%C3%A9?q=%C3%A4%20b");
    assert_eq!(
        target.url(),
        format!("{}{}", target.origin(), target.path())
    );
}

#[test]
fn surrounding_whitespace_is_ignored() {
    assert_eq!(path("  https://example.com/x \n"), "/x");
}

// --- SEMANTICS §2 / Google's file-location table ---

const ROBOTS: &str = "https://example.com/robots.txt";

fn robots_for(url: &str) -> String {
    origin(url).robots_url().to_string()
}

#[test]
fn location_applies_to_root() {
    assert_eq!(robots_for("https://example.com/"), ROBOTS);
}

#[test]
fn location_applies_to_nested_file() {
    assert_eq!(robots_for("https://example.com/folder/file"), ROBOTS);
    assert_eq!(
        origin("https://example.com/folder/file"),
        origin("https://example.com/")
    );
}

#[test]
fn location_not_for_other_subdomain() {
    assert_ne!(
        origin("https://other.example.com/"),
        origin("https://example.com/")
    );
    assert_ne!(robots_for("https://other.example.com/"), ROBOTS);
}

#[test]
fn location_not_for_other_scheme() {
    assert_ne!(
        origin("http://example.com/"),
        origin("https://example.com/")
    );
    assert_ne!(robots_for("http://example.com/"), ROBOTS);
}

#[test]
fn location_not_for_other_port() {
    assert_ne!(
        origin("https://example.com:8181/"),
        origin("https://example.com/")
    );
    assert_eq!(
        robots_for("https://example.com:8181/"),
        "https://example.com:8181/robots.txt"
    );
}

#[test]
fn location_default_port_is_same_origin() {
    assert_eq!(
        origin("https://example.com:443/"),
        origin("https://example.com/")
    );
    assert_eq!(robots_for("https://example.com:443/"), ROBOTS);
}

#[test]
fn location_ip_host_only_its_own_origin() {
    let ip = origin("https://212.96.82.21/");
    assert_eq!(ip, origin("https://212.96.82.21/folder/file"));
    assert_eq!(ip.robots_url().as_str(), "https://212.96.82.21/robots.txt");
    assert_ne!(ip, origin("https://example.com/"));
    assert_ne!(ip, origin("http://212.96.82.21/"));
    assert_ne!(ip, origin("https://212.96.82.21:8181/"));
}

#[test]
fn a_fast_path_target_takes_an_origin_of_its_own_key_only() {
    let mut target = parse_target("http://example.com:8080/a?b").unwrap();
    assert_eq!(target.origin_key(), "http://example.com:8080");
    // Another origin's entry is never taken for this target's.
    target.know_origin(origin("http://other.example/"));
    assert_eq!(target.origin().key(), "http://example.com:8080");
    assert_eq!(target.origin().host_str(), "example.com");
    assert_eq!(target.origin().port(), Some(8080));
    let mut target = parse_target("https://127.0.0.1/").unwrap();
    target.know_origin(origin("https://127.0.0.1/x"));
    let (origin, url) = target.into_parts();
    assert_eq!(origin.key(), "https://127.0.0.1");
    assert_eq!(origin.host(), &Host::<String>::Ipv4(Ipv4Addr::LOCALHOST));
    assert_eq!(url, "https://127.0.0.1/");
}
