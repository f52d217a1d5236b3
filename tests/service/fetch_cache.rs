//! Fetching and caching robots.txt against real HTTP origins on 127.0.0.1 (SEMANTICS.md §3–§5).

use std::sync::Arc;
use std::time::Duration;

use robotsd::cache::{CacheConfig, Lookup, OriginCache};
use robotsd::checker::{Checker, Reason};
use robotsd::destination::NameLookup;
use robotsd::fetch::{FetchConfig, Fetcher};
use tokio::io::AsyncWriteExt;

use crate::support::*;

const RULES: &str = "user-agent: *\ndisallow: /private\n";

#[tokio::test]
async fn status_200_rules_apply() {
    let origin = origin(|| ok(RULES)).await;
    let checker = checker();
    let answer = checker
        .check(&origin.url("/private/x"), &["Googlebot"])
        .await
        .unwrap();
    assert!(!answer.allowed);
    assert_eq!(answer.reason, Reason::MatchedRule);
    assert_eq!(answer.rule.as_ref().map(|r| r.line()), Some(2));
    assert_eq!(source(&answer).status, Some(200));
    assert_eq!(source(&answer).cache, Lookup::Miss);
    let again = checker
        .check(&origin.url("/public"), &["Googlebot"])
        .await
        .unwrap();
    assert!(again.allowed);
    assert_eq!(source(&again).cache, Lookup::Hit);
    assert_eq!(origin.hits(), 1);
}

#[tokio::test]
async fn redirect_to_another_host_applies_its_rules_to_the_original_origin() {
    let target = origin_on("127.0.0.2", || ok(RULES)).await;
    let location = target.url("/robots.txt");
    let first = origin(move || redirect(location.clone())).await;
    let answer = checker()
        .check(&first.url("/private/x"), &["bot"])
        .await
        .unwrap();
    assert!(!answer.allowed);
    assert_eq!(answer.robots_url(), first.url("/robots.txt"));
    assert_eq!(
        source(&answer).final_url.as_ref().map(|url| url.as_str()),
        Some(target.url("/robots.txt").as_str())
    );
    assert_eq!((first.hits(), target.hits()), (1, 1));
}

/// An origin that redirects `/robots.txt` → `/r1` → … → `/r{hops}` → 200.
async fn redirect_chain(hops: usize) -> OriginServer {
    let server = origin(|| status(500)).await;
    let base = server.base();
    let counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    server.set_reply(move || {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if n < hops {
            redirect(format!("{base}/r{}", n + 1))
        } else {
            ok(RULES)
        }
    });
    server
}

#[tokio::test]
async fn five_redirects_are_followed() {
    let server = redirect_chain(5).await;
    let answer = checker()
        .check(&server.url("/private"), &["bot"])
        .await
        .unwrap();
    assert!(!answer.allowed);
    assert_eq!(answer.reason, Reason::MatchedRule);
    assert_eq!(server.hits(), 6);
}

#[tokio::test]
async fn six_redirects_are_no_robots_txt() {
    let server = redirect_chain(6).await;
    let answer = checker()
        .check(&server.url("/private"), &["bot"])
        .await
        .unwrap();
    assert!(answer.allowed);
    assert_eq!(answer.reason, Reason::RedirectLimit);
    assert_eq!(server.hits(), 6, "the sixth redirect is not followed");
}

#[tokio::test]
async fn a_redirect_loop_is_no_robots_txt() {
    let server = origin(|| status(500)).await;
    let a = server.url("/a");
    let b = server.url("/b");
    let flip = Arc::new(std::sync::atomic::AtomicBool::new(false));
    server.set_reply(move || {
        let to_b = !flip.fetch_xor(true, std::sync::atomic::Ordering::SeqCst);
        redirect(if to_b { b.clone() } else { a.clone() })
    });
    let answer = checker()
        .check(&server.url("/private"), &["bot"])
        .await
        .unwrap();
    assert!(answer.allowed);
    assert_eq!(answer.reason, Reason::RedirectLimit);
    assert!(server.hits() <= 3);
}

#[tokio::test]
async fn status_404_401_403_mean_no_robots_txt() {
    for code in [404, 401, 403] {
        let server = origin(move || status(code)).await;
        let answer = checker()
            .check(&server.url("/private"), &["bot"])
            .await
            .unwrap();
        assert!(answer.allowed, "{code}");
        assert_eq!(answer.reason, Reason::NoRobotsTxt, "{code}");
        assert_eq!(source(&answer).status, Some(code));
        assert!(source(&answer).backoff.is_none());
    }
}

#[tokio::test]
async fn status_429_500_503_disallow_and_back_off() {
    for code in [429, 500, 503] {
        let server = origin(move || status(code)).await;
        let answer = checker()
            .check(&server.url("/anything"), &["bot"])
            .await
            .unwrap();
        assert!(!answer.allowed, "{code}");
        assert_eq!(answer.reason, Reason::UnreachableDisallowAll, "{code}");
        let backoff = source(&answer).backoff.clone().expect("in backoff");
        assert_eq!(backoff.failures, 1);
        assert!(backoff.next_retry > backoff.since);
        // Everything stays disallowed until the disallow window (12 h by default) has passed.
        assert_eq!(
            backoff.until,
            Some(backoff.since + std::time::Duration::from_secs(12 * 3600))
        );
        assert!(backoff.last_error.contains(&code.to_string()));
    }
}

#[tokio::test]
async fn connection_refused_is_unreachable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let answer = checker()
        .check(&format!("http://{addr}/x"), &["bot"])
        .await
        .unwrap();
    assert!(!answer.allowed);
    assert_eq!(answer.reason, Reason::UnreachableDisallowAll);
    assert!(
        source(&answer)
            .backoff
            .clone()
            .unwrap()
            .last_error
            .contains("connect")
    );
}

#[tokio::test]
async fn reset_mid_body_is_unreachable() {
    let (addr, _) = raw_server(|mut stream| async move {
        read_head(&mut stream).await;
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\nuser-agent: *\ndisallow:")
            .await;
        // Closing with data still owed breaks the body.
        drop(stream);
    })
    .await;
    let answer = checker()
        .check(&format!("http://{addr}/x"), &["bot"])
        .await
        .unwrap();
    assert_eq!(answer.reason, Reason::UnreachableDisallowAll);
    assert!(!answer.allowed);
}

#[tokio::test]
async fn a_body_slower_than_the_time_limit_is_unreachable() {
    let (addr, _) = raw_server(|mut stream| async move {
        read_head(&mut stream).await;
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nuser-agent: *\n")
            .await;
        tokio::time::sleep(Duration::from_secs(10)).await;
    })
    .await;
    let started = std::time::Instant::now();
    let answer = checker()
        .check(&format!("http://{addr}/x"), &["bot"])
        .await
        .unwrap();
    assert_eq!(answer.reason, Reason::UnreachableDisallowAll);
    assert!(
        source(&answer)
            .backoff
            .clone()
            .unwrap()
            .last_error
            .contains("timed out")
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "bounded by the 2 s fetch limit"
    );
}

#[tokio::test]
async fn rules_after_the_first_500_kib_are_not_applied() {
    let mut body = String::from("user-agent: *\ndisallow: /early\n");
    while body.len() < 512_000 + 10 {
        body.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    body.push_str("disallow: /late\n");
    while body.len() < 1024 * 1024 {
        body.push_str("# more padding more padding more padding more padding more padding\n");
    }
    let server = origin(move || ok(&body)).await;
    let checker = checker();
    let late = checker.check(&server.url("/late"), &["bot"]).await.unwrap();
    assert!(
        late.allowed,
        "the Disallow after byte 512,000 is not applied"
    );
    assert_eq!(source(&late).bytes, Some(512_000));
    assert!(
        !checker
            .check(&server.url("/early"), &["bot"])
            .await
            .unwrap()
            .allowed
    );
}

fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse::<usize>().ok())
        .unwrap_or(0)
        * 4096
}

#[tokio::test]
async fn a_gzip_bomb_stops_at_the_cut_with_memory_bounded() {
    use flate2::{Compression, write::GzEncoder};
    use std::io::Write;
    // 100 MiB of one rule repeated, compressed to under 1 MB (about 460 KB at level 2 of
    // flate2's zlib-rs backend: its level 1 keeps to short static codes, and leaves 1 MB).
    let mut encoder = GzEncoder::new(Vec::new(), Compression::new(2));
    let line =
        b"disallow: /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n";
    encoder.write_all(b"user-agent: *\n").unwrap();
    for _ in 0..(100 * 1024 * 1024 / line.len()) {
        encoder.write_all(line).unwrap();
    }
    let gz = encoder.finish().unwrap();
    assert!(gz.len() < 1_000_000);
    let server = origin(move || {
        (
            200,
            vec![("content-encoding", "gzip".to_string())],
            gz.clone(),
        )
    })
    .await;
    let before = resident_bytes();
    let path = format!("/{}", "a".repeat(100));
    let answer = checker().check(&server.url(&path), &["bot"]).await.unwrap();
    let grown = resident_bytes().saturating_sub(before);
    assert!(!answer.allowed);
    assert_eq!(source(&answer).bytes, Some(512_000));
    assert!(
        grown < 64 * 1024 * 1024,
        "resident memory grew by {grown} bytes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_checks_for_a_cold_origin_send_one_request() {
    let server = origin(|| ok(RULES)).await;
    // A slow origin, so that the checks arrive while its robots.txt is being fetched.
    server.set_delay(Duration::from_millis(300));
    let checker = checker();
    let url = server.url("/private/x");
    let tasks: Vec<_> = (0..1000)
        .map(|_| {
            let (checker, url) = (checker.clone(), url.clone());
            tokio::spawn(async move { checker.check(&url, &["bot"]).await.unwrap() })
        })
        .collect();
    let mut coalesced = 0;
    for task in tasks {
        let answer = task.await.unwrap();
        assert!(!answer.allowed);
        coalesced += usize::from(source(&answer).cache == Lookup::Coalesced);
    }
    assert_eq!(server.hits(), 1);
    assert!(coalesced > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_that_gives_up_does_not_cut_its_fetch_short() {
    let server = origin(|| ok(RULES)).await;
    server.set_delay(Duration::from_millis(300));
    // The default fetch limit, not the tests' 2 s: on a loaded CI machine this test once saw a
    // second request, most likely the retry after a fetch that ran into the 2 s limit.
    let checker = checker_with(
        loopback_allowed(),
        FetchConfig::default(),
        CacheConfig::default(),
        None,
    );
    let url = server.url("/private/x");
    // Like a request past its time limit, or a client that went away: the check is dropped
    // while its fetch is still waiting for the origin.
    for _ in 0..3 {
        let gave_up =
            tokio::time::timeout(Duration::from_millis(50), checker.check(&url, &["bot"])).await;
        assert!(gave_up.is_err());
    }
    // The fetch went on without them: one request, and its result serves the next checks.
    assert!(eventually(|| server.hits() == 1).await);
    assert!(
        eventually(|| {
            futures_util::FutureExt::now_or_never(checker.check(&url, &["bot"]))
                .and_then(Result::ok)
                .is_some_and(|a| source(&a).cache == Lookup::Hit)
        })
        .await,
        "the fetch finishes and its result is kept"
    );
    let answer = checker.check(&url, &["bot"]).await.unwrap();
    assert!(!answer.allowed);
    assert_eq!(source(&answer).cache, Lookup::Hit);
    assert_eq!(server.hits(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_backoff_a_thousand_checks_send_nothing_before_the_retry_time() {
    let server = origin(|| status(503)).await;
    let checker = checker();
    let url = server.url("/x");
    assert!(!checker.check(&url, &["bot"]).await.unwrap().allowed);
    assert_eq!(server.hits(), 1);
    let tasks: Vec<_> = (0..1000)
        .map(|_| {
            let (checker, url) = (checker.clone(), url.clone());
            tokio::spawn(async move { checker.check(&url, &["bot"]).await.unwrap() })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap().reason, Reason::UnreachableDisallowAll);
    }
    // Real time on purpose: a grace period for a background request that must not come.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn max_age_120_is_not_refetched_before_expiry_and_is_after() {
    let clock = ManualClock::new();
    let server = origin(|| {
        (
            200,
            vec![("cache-control", "max-age=120".into())],
            RULES.into(),
        )
    })
    .await;
    let checker = checker_on(Arc::clone(&clock));
    let url = server.url("/private");
    checker.check(&url, &["bot"]).await.unwrap();
    clock.advance(Duration::from_secs(119));
    let fresh = checker.check(&url, &["bot"]).await.unwrap();
    assert_eq!(source(&fresh).cache, Lookup::Hit);
    assert_eq!(server.hits(), 1);
    clock.advance(Duration::from_secs(2));
    // Stale-while-revalidate: answered at once from the expired copy, one refresh sent.
    let stale = checker.check(&url, &["bot"]).await.unwrap();
    assert_eq!(source(&stale).cache, Lookup::Stale);
    assert!(!stale.allowed);
    for _ in 0..50 {
        checker.check(&url, &["bot"]).await.unwrap();
    }
    assert!(eventually(|| server.hits() == 2).await);
    // Real time on purpose: a grace period for a second refresh that must not come.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(server.hits(), 2, "one refresh, however many stale answers");
    let refreshed = checker.check(&url, &["bot"]).await.unwrap();
    assert_eq!(source(&refreshed).cache, Lookup::Hit);
}

#[tokio::test]
async fn backoff_over_time_last_good_copy_then_allow_all_then_recovery() {
    const HOUR: Duration = Duration::from_secs(3600);
    let clock = ManualClock::new();
    let server = origin(|| ok(RULES)).await;
    let checker = checker_on(Arc::clone(&clock));
    let url = server.url("/private");
    assert_eq!(
        checker.check(&url, &["bot"]).await.unwrap().reason,
        Reason::MatchedRule
    );
    // The origin counts a fetch when it arrives; the cache takes its outcome in a moment later.
    let failures_taken_in = |failures: u32| {
        let (checker, url) = (&checker, &url);
        eventually(move || {
            futures_util::FutureExt::now_or_never(checker.check(url, &["bot"]))
                .and_then(Result::ok)
                .is_some_and(|a| source(&a).backoff.as_ref().map(|b| b.failures) == Some(failures))
        })
    };

    // The copy expires (24 h) and the site starts failing.
    server.set_reply(|| status(500));
    clock.advance(25 * HOUR);
    checker.check(&url, &["bot"]).await.unwrap();
    assert!(eventually(|| server.hits() == 2).await);
    assert!(failures_taken_in(1).await);
    let first_12h = checker
        .check(&server.url("/public"), &["bot"])
        .await
        .unwrap();
    assert_eq!(first_12h.reason, Reason::UnreachableDisallowAll);
    assert!(!first_12h.allowed);

    // 13 hours on: the last good copy decides (and the retry that is due fails again).
    clock.advance(13 * HOUR);
    let copy = checker.check(&url, &["bot"]).await.unwrap();
    assert_eq!(copy.reason, Reason::LastGoodCopy);
    assert!(!copy.allowed);
    assert!(
        checker
            .check(&server.url("/public"), &["bot"])
            .await
            .unwrap()
            .allowed
    );
    assert!(eventually(|| server.hits() == 3).await);
    assert!(failures_taken_in(2).await);

    // 31 days on: as if there were no robots.txt.
    clock.advance(31 * 24 * HOUR);
    let late = checker.check(&url, &["bot"]).await.unwrap();
    assert_eq!(late.reason, Reason::Unreachable30Days);
    assert!(late.allowed);
    assert!(eventually(|| server.hits() == 4).await);
    assert!(failures_taken_in(3).await);

    // The site recovers: the next due retry ends the backoff.
    server.set_reply(|| ok(RULES));
    clock.advance(2 * HOUR);
    checker.check(&url, &["bot"]).await.unwrap();
    assert!(eventually(|| server.hits() == 5).await);
    assert!(
        eventually(|| {
            futures_util::FutureExt::now_or_never(checker.check(&url, &["bot"]))
                .and_then(Result::ok)
                .is_some_and(|a| a.reason == Reason::MatchedRule)
        })
        .await
    );
}

#[tokio::test]
async fn many_origins_into_a_small_cache_respect_its_capacity() {
    let mut servers = Vec::new();
    for i in 1..=40 {
        servers.push(origin_on(&format!("127.0.1.{i}"), || ok(RULES)).await);
    }
    let capacity = 16 * 1024;
    let checker = checker_with(
        loopback_allowed(),
        fetch_config(),
        robotsd::cache::CacheConfig {
            capacity_bytes: capacity,
            ..Default::default()
        },
        None,
    );
    for server in &servers {
        checker
            .check(&server.url("/private"), &["bot"])
            .await
            .unwrap();
    }
    let (_, bytes) = checker.cache().usage().await;
    assert!(bytes <= capacity, "{bytes} > {capacity}");
    assert!(
        checker
            .cache()
            .stats()
            .evictions
            .load(std::sync::atomic::Ordering::Relaxed)
            > 0
    );
}

#[tokio::test]
async fn a_whole_user_agent_header_is_reduced_to_its_product_token() {
    let server =
        origin(|| ok("user-agent: googlebot\ndisallow: /g\n\nuser-agent: *\ndisallow: /\n")).await;
    let checker = checker();
    let ua = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    let answer = checker.check(&server.url("/page"), &[ua]).await.unwrap();
    assert!(answer.allowed);
    assert_eq!(answer.agents[0].token(), "Googlebot");
    assert_eq!(answer.agents[0].input(), ua);
    let group = answer.group.unwrap();
    assert!(!group.get().is_global());
    let agents: Vec<_> = group.get().agents().map(|a| a.value.into_owned()).collect();
    assert_eq!(agents, ["googlebot"]);
    assert!(
        !checker
            .check(&server.url("/g"), &[ua])
            .await
            .unwrap()
            .allowed
    );
}

#[tokio::test]
async fn the_url_is_normalised_before_matching() {
    let server = origin(|| ok("user-agent: *\ndisallow: /a%2Fb\ndisallow: /caf%C3%A9\n")).await;
    let checker = checker();
    for path in ["/a%2fb", "/a%2Fb", "/café", "/caf%c3%a9"] {
        let answer = checker.check(&server.url(path), &["bot"]).await.unwrap();
        assert!(!answer.allowed, "{path}");
    }
    assert_eq!(server.hits(), 1);
}

#[tokio::test]
async fn bad_input_is_a_typed_error_not_a_verdict() {
    use robotsd::checker::CheckError;
    let checker = checker();
    assert!(matches!(
        checker.check("ftp://example.com/x", &["bot"]).await,
        Err(CheckError::Url(_))
    ));
    assert!(matches!(
        checker.check("/relative", &["bot"]).await,
        Err(CheckError::Url(_))
    ));
    assert!(matches!(
        checker.check("http://127.0.0.1:9/", &["1234"]).await,
        Err(CheckError::UserAgent(_))
    ));
    assert!(matches!(
        checker.check("http://127.0.0.1:9/", &[""]).await,
        Err(CheckError::UserAgent(_))
    ));
    let none: [&str; 0] = [];
    assert!(matches!(
        checker.check("http://127.0.0.1:9/", &none).await,
        Err(CheckError::NoUserAgent)
    ));
}

#[tokio::test]
async fn an_unresolvable_name_is_unreachable_not_refused() {
    // A resolver the test controls: the name does not resolve, and nothing leaves the machine.
    let lookup: NameLookup = Arc::new(|host: String| {
        Box::pin(async move {
            Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{host}: no such host"),
            ))
        })
    });
    let fetcher = Fetcher::with_name_lookup(fetch_config(), loopback_allowed(), lookup).unwrap();
    let checker = Checker::new(OriginCache::new(CacheConfig::default(), fetcher));
    let answer = checker
        .check("https://unresolvable.test/private", &["bot"])
        .await
        .expect("a verdict, not a refusal");
    assert_eq!(answer.reason, Reason::UnreachableDisallowAll);
    assert!(!answer.allowed);
    let backoff = source(&answer).backoff.clone().expect("in backoff");
    assert!(
        backoff.last_error.contains("could not resolve"),
        "{backoff:?}"
    );
}
