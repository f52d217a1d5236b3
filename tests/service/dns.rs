//! Host names resolved by robotsd's own resolver (`src/dns.rs`), seen from a name server on
//! 127.0.0.1 that counts its questions: the real binary with `--dns-server`, origins on
//! 127.0.0.1 under names of their own. A name is asked once while its answer lives and again
//! after its TTL; an answer from the name server is vetted as any other, so a name that leads to
//! loopback is refused unless the operator allows private networks.

use std::net::IpAddr;
use std::time::Duration;

use crate::dns_server::DnsServer;
use crate::support::*;

const A: u16 = 1;
const LOOPBACK: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

/// `GET /v1/check` of `url` for `ua=bot`: the HTTP status and the JSON answer.
async fn check(robotsd: &Robotsd, url: &str) -> (u16, serde_json::Value) {
    let target: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
    let response = reqwest::get(robotsd.url(&format!("/v1/check?url={target}&ua=bot")))
        .await
        .expect("robotsd answers");
    let status = response.status().as_u16();
    (status, json_of(response).await)
}

async fn robotsd_asking(dns: &DnsServer, more: &[&str]) -> Robotsd {
    let server = dns.addr().to_string();
    let mut args = vec!["--dns-server", server.as_str()];
    args.extend_from_slice(more);
    Robotsd::start(&args, false).await
}

#[tokio::test]
async fn a_name_is_asked_once_while_its_answer_lives() {
    let dns = DnsServer::start();
    dns.set("site.test", &[LOOPBACK], 300);
    let first = origin(|| ok("User-agent: *\nDisallow: /private\n")).await;
    let second = origin(|| ok("User-agent: *\nAllow: /\n")).await;
    let robotsd = robotsd_asking(&dns, &["--allow-private-networks"]).await;

    // Two origins of one host (two ports, as `http` and `https` of one site would be).
    let on = |origin: &OriginServer, path: &str| {
        format!("http://site.test:{}{path}", origin.addr.port())
    };
    let (status, answer) = check(&robotsd, &on(&first, "/private/x")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["allowed"], false, "{answer}");
    let (status, answer) = check(&robotsd, &on(&second, "/private/x")).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["allowed"], true, "{answer}");

    assert_eq!(
        (first.hits(), second.hits()),
        (1, 1),
        "each origin fetched once"
    );
    assert_eq!(
        dns.questions_of("site.test", A),
        1,
        "the second origin's fetch used the answer kept from the first"
    );
}

#[tokio::test]
async fn a_name_is_asked_again_once_its_ttl_has_passed() {
    let dns = DnsServer::start();
    dns.set("brief.test", &[LOOPBACK], 1);
    let first = origin(|| ok("User-agent: *\nAllow: /\n")).await;
    let second = origin(|| ok("User-agent: *\nAllow: /\n")).await;
    let robotsd = robotsd_asking(&dns, &["--allow-private-networks"]).await;

    let url = |origin: &OriginServer| format!("http://brief.test:{}/", origin.addr.port());
    assert_eq!(check(&robotsd, &url(&first)).await.0, 200);
    assert_eq!(dns.questions_of("brief.test", A), 1);
    // Twice the TTL and more: however slow the machine, the answer has expired.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert_eq!(check(&robotsd, &url(&second)).await.0, 200);
    assert_eq!(second.hits(), 1);
    assert_eq!(dns.questions_of("brief.test", A), 2);
}

#[tokio::test]
async fn a_name_that_leads_to_loopback_is_refused_by_default() {
    let dns = DnsServer::start();
    dns.set("rebound.test", &[LOOPBACK], 300);
    let origin = origin(|| ok("User-agent: *\nAllow: /\n")).await;
    let robotsd = robotsd_asking(&dns, &[]).await;

    let url = format!("http://rebound.test:{}/", origin.addr.port());
    let (status, answer) = check(&robotsd, &url).await;
    assert_eq!(status, 422, "{answer}");
    assert_eq!(
        answer["type"],
        "urn:robotsd:problem:destination-not-allowed"
    );
    assert!(dns.questions("rebound.test") >= 1, "the name was asked");
    assert_eq!(origin.hits(), 0, "no request reached the origin");
}

#[tokio::test]
async fn a_name_that_does_not_exist_is_an_unreachable_robots_txt() {
    let dns = DnsServer::start();
    let robotsd = robotsd_asking(&dns, &["--allow-private-networks"]).await;

    let (status, answer) = check(&robotsd, "http://nowhere.test:9/page").await;
    assert_eq!(status, 200, "{answer}");
    // SEMANTICS.md §3: a robots.txt that cannot be fetched is unreachable, and the answer
    // fails closed toward the site.
    assert_eq!(answer["allowed"], false, "{answer}");
    assert_eq!(answer["reason"], "unreachable_disallow_all", "{answer}");
    let error = answer["robots"]["backoff"]["last_error"].as_str().unwrap();
    assert!(error.ends_with("nowhere.test does not exist"), "{error}");
    assert!(dns.questions("nowhere.test") >= 1);
}

#[tokio::test]
async fn a_name_server_that_never_answers_is_bounded_by_the_connect_timeout() {
    // Takes the questions and answers none.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").expect("a UDP port");
    let server = silent.local_addr().unwrap().to_string();
    let robotsd = Robotsd::start(
        &[
            "--dns-server",
            server.as_str(),
            "--connect-timeout",
            "1s",
            "--allow-private-networks",
        ],
        false,
    )
    .await;

    let asked = std::time::Instant::now();
    let (status, answer) = check(&robotsd, "http://silent.test:9/page").await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["reason"], "unreachable_disallow_all", "{answer}");
    // The resolver alone would wait 5 s twice; the fetch's connect timeout ends it first. The
    // bound is wide: only a lookup left unbounded could reach it.
    assert!(
        asked.elapsed() < Duration::from_secs(8),
        "{:?}",
        asked.elapsed()
    );
    let mut question = [0u8; 512];
    silent.set_nonblocking(true).unwrap();
    assert!(
        silent.recv(&mut question).is_ok(),
        "the name server was asked"
    );
}

fn resolver(dns: &DnsServer) -> robotsd::dns::Dns {
    let config = robotsd::dns::DnsConfig::Cached {
        servers: vec![dns.addr()],
        cache_entries: 64,
    };
    robotsd::dns::Dns::new(&config)
        .expect("a resolver")
        .expect("not the system's")
}

#[tokio::test]
async fn an_answer_is_kept_with_at_most_its_bounded_number_of_addresses() {
    let dns = DnsServer::start();
    let many: Vec<IpAddr> = (1..=40u8)
        .map(|i| IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, i)))
        .collect();
    dns.set("many.test", &many, 300);
    let resolver = resolver(&dns);

    let first = resolver.lookup("many.test").await.expect("an answer");
    assert_eq!(first.len(), robotsd::dns::MAX_ADDRESSES);
    assert_eq!(first[0].ip(), many[0]);
    let again = resolver.lookup("many.test").await.expect("the kept answer");
    assert_eq!(again, first);
    assert_eq!(dns.questions_of("many.test", A), 1);
}

#[tokio::test]
async fn a_forbidden_address_past_the_cut_is_kept_and_the_name_refused() {
    // Issue 58: the answer was cut to 16 addresses before they were vetted, so a private
    // address in the 17th record was dropped and the name fetched from the others.
    let dns = DnsServer::start();
    // Public addresses (nothing connects to them: only names are asked, of a loopback server).
    let mut many: Vec<IpAddr> = (1..=40u8)
        .map(|i| IpAddr::V4(std::net::Ipv4Addr::new(93, 184, 216, i)))
        .collect();
    let private = IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 17));
    many[16] = private;
    dns.set("mixed.test", &many, 300);
    let policy = robotsd::destination::DestinationPolicy::default();
    let resolver = resolver(&dns).vetted_by(policy.clone());

    let kept = resolver.lookup("mixed.test").await.expect("an answer");
    assert_eq!(kept.len(), robotsd::dns::MAX_ADDRESSES);
    assert!(kept.iter().any(|a| a.ip() == private), "{kept:?}");
    let vetting = robotsd::destination::PolicyResolver::with_lookup(policy, resolver.name_lookup());
    let refused = vetting
        .resolve_checked("mixed.test")
        .await
        .expect_err("a name with a private address is refused");
    assert!(
        matches!(
            refused,
            robotsd::destination::DestinationError::Forbidden { .. }
        ),
        "{refused:?}"
    );
    // Where the operator allows private networks, the first 16 are kept as before.
    let open = robotsd::destination::DestinationPolicy::new(true, Vec::new(), Vec::new());
    let resolver = self::resolver(&dns).vetted_by(open);
    let kept = resolver.lookup("mixed.test").await.expect("an answer");
    assert_eq!(kept.iter().map(|a| a.ip()).collect::<Vec<_>>(), many[..16]);
}

#[tokio::test]
async fn a_name_that_does_not_exist_is_remembered_for_its_negative_ttl() {
    let dns = DnsServer::start();
    let resolver = resolver(&dns);
    for _ in 0..3 {
        let error = resolver
            .lookup("gone.test")
            .await
            .expect_err("no such name");
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(error.to_string(), "gone.test does not exist");
    }
    // The server's SOA gives 60 s, far longer than three lookups take however busy the
    // machine: asked once for the three.
    assert_eq!(dns.questions_of("gone.test", A), 1);
}

#[tokio::test]
async fn a_full_cache_keeps_the_newest_answers() {
    let dns = DnsServer::start();
    let config = robotsd::dns::DnsConfig::Cached {
        servers: vec![dns.addr()],
        cache_entries: 8,
    };
    let resolver = robotsd::dns::Dns::new(&config).unwrap().unwrap();
    // A crawl's frontier: every name new, and a full cache of live answers.
    let names: Vec<String> = (0..64).map(|i| format!("site{i}.test")).collect();
    for name in &names {
        dns.set(name, &[LOOPBACK], 300);
        resolver.lookup(name).await.expect("an answer");
    }
    // Time for the cache's upkeep to decide what it keeps (it runs on later calls, every few
    // hundred milliseconds), and two more new names to give it the calls.
    for extra in ["upkeep1.test", "upkeep2.test"] {
        tokio::time::sleep(Duration::from_millis(600)).await;
        dns.set(extra, &[LOOPBACK], 300);
        resolver.lookup(extra).await.expect("an answer");
    }
    // The newest answers are the ones a crawl asks for again (a site's other origins).
    for name in &names[60..] {
        resolver.lookup(name).await.expect("an answer");
        assert_eq!(dns.questions_of(name, A), 1, "{name} was not kept");
    }
}
