//! The destination policy through the real fetch path (SEMANTICS.md §6). Loopback canaries
//! count every connection they accept: a refused destination must see none. Forbidden
//! addresses off this machine are only ever tried with the outbound proxy pointed at a loopback
//! sink, so that even a broken guard could not send a packet off the machine.

use std::sync::atomic::Ordering;
use std::time::Duration;

use robotsd::cache::CacheConfig;
use robotsd::checker::CheckError;
use robotsd::destination::DestinationPolicy;
use robotsd::fetch::FetchConfig;

use crate::support::*;

fn default_policy_checker() -> robotsd::checker::Checker {
    checker_with(
        DestinationPolicy::default(),
        fetch_config(),
        CacheConfig::default(),
        None,
    )
}

fn assert_refused(result: Result<robotsd::checker::Answer, CheckError>, what: &str) {
    match result {
        Err(CheckError::Destination(error)) => assert!(!error.to_string().is_empty(), "{what}"),
        other => panic!("{what}: expected a refused destination, got {other:?}"),
    }
}

#[tokio::test]
async fn loopback_in_every_spelling_is_refused_by_default() {
    let (v4, v4_count) = canary("127.0.0.1").await.expect("loopback canary");
    let port = v4.port();
    let checker = default_policy_checker();
    for host in [
        "127.0.0.1".to_string(),
        "127.1".into(),
        "2130706433".into(),
        "0x7f.1".into(),
        "0177.0.0.1".into(),
        "[::ffff:127.0.0.1]".into(),
        "0.0.0.0".into(),
        "localhost".into(),
    ] {
        let url = format!("http://{host}:{port}/robots-test");
        assert_refused(checker.check(&url, &["bot"]).await, &url);
    }
    if let Some((v6, v6_count)) = canary("::1").await {
        let url = format!("http://[::1]:{}/x", v6.port());
        assert_refused(checker.check(&url, &["bot"]).await, &url);
        // Real time on purpose (here and below): a grace period for a connection that must not
        // come; nothing to wait for if the guard works.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(v6_count.load(Ordering::SeqCst), 0);
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(v4_count.load(Ordering::SeqCst), 0, "the canary was reached");
}

#[tokio::test]
async fn a_redirect_from_an_allowed_origin_to_a_forbidden_one_is_refused() {
    let (canary_addr, canary_count) = canary("127.0.0.1").await.unwrap();
    let allowed = origin_on("127.0.0.2", move || {
        redirect(format!("http://{canary_addr}/robots.txt"))
    })
    .await;
    let policy = DestinationPolicy::new(false, vec!["127.0.0.2/32".parse().unwrap()], vec![]);
    let checker = checker_with(policy, fetch_config(), CacheConfig::default(), None);
    assert_refused(
        checker.check(&allowed.url("/page"), &["bot"]).await,
        "redirect",
    );
    assert_eq!(allowed.hits(), 1, "the allowed origin was asked");
    // The refusal is remembered briefly: a second check does not ask the origin again.
    assert_refused(
        checker.check(&allowed.url("/page"), &["bot"]).await,
        "again",
    );
    assert_eq!(allowed.hits(), 1);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(canary_count.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn forbidden_addresses_off_this_machine_are_refused_before_the_proxy() {
    // The sink stands in for the outside world: every fetch goes through it as a proxy.
    let (sink, sink_count) = raw_server(|mut stream| async move {
        use tokio::io::AsyncWriteExt;
        read_head(&mut stream).await;
        let _ = stream
            .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
            .await;
    })
    .await;
    let fetch = FetchConfig {
        proxy: Some(format!("http://{sink}").parse().unwrap()),
        ..fetch_config()
    };
    // 127.0.0.3 is allowed only to show that requests do go through the proxy.
    let policy = DestinationPolicy::new(false, vec!["127.0.0.3/32".parse().unwrap()], vec![]);
    let checker = checker_with(policy, fetch, CacheConfig::default(), None);
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://192.168.1.1/",
        "http://172.16.0.1/",
        "http://100.64.0.1/",
        "http://[fd00:ec2::254]/",
        "http://100.100.100.200/",
        "http://[64:ff9b::a00:1]/",
        "http://[2002:a00:1::]/",
        "http://[::ffff:10.0.0.1]/",
        "http://[fe80::1]/",
        "http://224.0.0.1/",
    ] {
        assert_refused(checker.check(url, &["bot"]).await, url);
    }
    assert_eq!(
        sink_count.load(Ordering::SeqCst),
        0,
        "a refused destination reached the proxy"
    );

    let control = checker
        .check("http://127.0.0.3:9/x", &["bot"])
        .await
        .unwrap();
    assert!(control.allowed, "the sink answers 404");
    assert_eq!(
        sink_count.load(Ordering::SeqCst),
        1,
        "requests go through the proxy"
    );
}

#[tokio::test]
async fn an_operator_deny_list_beats_allowing_private_networks() {
    let server = origin(|| ok("user-agent: *\ndisallow: /\n")).await;
    let policy = DestinationPolicy::new(true, vec![], vec!["127.0.0.0/8".parse().unwrap()]);
    let checker = checker_with(policy, fetch_config(), CacheConfig::default(), None);
    assert_refused(checker.check(&server.url("/x"), &["bot"]).await, "denied");
    assert_eq!(server.hits(), 0);
}
