//! Cache pressure never costs politeness: with the cache churned by origins serving large
//! robots.txt files, a backoff is kept, concurrent cold checks share one fetch, a hot origin is
//! not flushed by origins named once, new sites are answered while crawled at a full cache, no
//! origin is fetched twice within the shortest lifetime, and evictions are counted exactly.
//!
//! Every origin is a name under `.test` that a resolver the test controls maps to one loopback
//! server, which answers per `Host` and counts the fetches of each.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use robotsd::cache::{CacheConfig, OriginCache};
use robotsd::checker::{CheckError, Checker, Reason};
use robotsd::destination::NameLookup;
use robotsd::fetch::Fetcher;
use tokio::net::TcpListener;

use crate::support::{fetch_config, loopback_allowed};

/// A robots.txt of about `kib` KiB, every line a rule.
fn large_robots(kib: usize) -> String {
    let mut body = String::from("user-agent: *\n");
    while body.len() < kib * 1024 {
        body.push_str(&format!("disallow: /section-{}/page\n", body.len()));
    }
    body
}

/// The loopback server behind every `.test` name, and its fetch count per host.
struct Sites {
    port: u16,
    fetches: Arc<Mutex<HashMap<String, usize>>>,
}

impl Sites {
    async fn start() -> Sites {
        let fetches: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let counted = Arc::clone(&fetches);
        let large = large_robots(100);
        let app = Router::new().route(
            "/robots.txt",
            axum::routing::get(move |headers: HeaderMap| {
                let counted = Arc::clone(&counted);
                let large = large.clone();
                async move {
                    let host = headers["host"].to_str().unwrap().to_string();
                    let name = host.split(':').next().unwrap().to_string();
                    *counted.lock().unwrap().entry(name.clone()).or_default() += 1;
                    if name.starts_with("cold") {
                        // Long enough for every concurrent check to arrive meanwhile.
                        tokio::time::sleep(Duration::from_millis(300)).await;
                    }
                    match name.as_str() {
                        "down.test" => (StatusCode::SERVICE_UNAVAILABLE, String::new()),
                        _ if name.starts_with("big") => (StatusCode::OK, large),
                        _ => (StatusCode::OK, "user-agent: *\ndisallow: /private\n".into()),
                    }
                }
            }),
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Sites { port, fetches }
    }

    fn url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port)
    }

    fn fetches(&self, host: &str) -> usize {
        self.fetches.lock().unwrap().get(host).copied().unwrap_or(0)
    }

    /// A checker whose cache holds `capacity` bytes, every name resolving to this server.
    fn checker(&self, capacity: u64) -> Checker {
        let lookup: NameLookup = Arc::new(|_host: String| {
            Box::pin(async { Ok(vec![SocketAddr::from(([127, 0, 0, 1], 0))]) })
        });
        let fetcher =
            Fetcher::with_name_lookup(fetch_config(), loopback_allowed(), lookup).expect("fetcher");
        let config = CacheConfig {
            capacity_bytes: capacity,
            ..CacheConfig::default()
        };
        Checker::new(OriginCache::new(config, fetcher))
    }

    /// Checks `count` origins named once each, serving about 100 KiB each.
    async fn churn(&self, checker: &Checker, from: usize, count: usize) {
        for n in from..from + count {
            let url = self.url(&format!("big{n}.test"), "/x");
            checker.check(&url, &["bot"]).await.expect("a verdict");
        }
    }
}

/// Room for a handful of the large files.
const SMALL_CACHE: u64 = 1024 * 1024;

#[tokio::test]
async fn a_backoff_survives_churn_and_its_retry_time_holds() {
    let sites = Sites::start().await;
    let checker = sites.checker(SMALL_CACHE);
    let down = sites.url("down.test", "/private");
    let answer = checker.check(&down, &["bot"]).await.unwrap();
    assert_eq!(answer.reason, Reason::UnreachableDisallowAll);

    sites.churn(&checker, 0, 40).await;
    // Evictions are counted by the cache's housekeeping, which a loaded machine may not have
    // run yet.
    checker.cache().usage().await;
    assert!(
        checker.cache().stats().evictions.load(Ordering::Relaxed) > 0,
        "no churn"
    );
    for _ in 0..5 {
        let answer = checker.check(&down, &["bot"]).await.unwrap();
        assert_eq!(answer.reason, Reason::UnreachableDisallowAll);
    }
    assert_eq!(
        sites.fetches("down.test"),
        1,
        "fetched before its retry time"
    );
}

#[tokio::test]
async fn concurrent_cold_checks_share_one_fetch_while_the_cache_churns() {
    let sites = Sites::start().await;
    let checker = sites.checker(SMALL_CACHE);
    // Fill the cache first, so that every insertion from now on evicts.
    sites.churn(&checker, 0, 20).await;
    let churn = {
        let (checker, sites_port) = (checker.clone(), sites.port);
        tokio::spawn(async move {
            for n in 100..140 {
                let url = format!("http://big{n}.test:{sites_port}/x");
                checker.check(&url, &["bot"]).await.expect("a verdict");
            }
        })
    };
    let cold = sites.url("cold.test", "/private/x");
    let checks = (0..150).map(|_| {
        let (checker, cold) = (checker.clone(), cold.clone());
        tokio::spawn(async move { checker.check(&cold, &["bot"]).await })
    });
    for check in futures_util::future::join_all(checks).await {
        let answer = check.unwrap().expect("a verdict");
        assert!(!answer.allowed);
    }
    churn.await.unwrap();
    assert_eq!(sites.fetches("cold.test"), 1);
}

#[tokio::test]
async fn a_hot_origin_is_not_flushed_by_origins_named_once() {
    let sites = Sites::start().await;
    let checker = sites.checker(SMALL_CACHE);
    // A cache in use: full, every place in it already won by an origin. The claim is about
    // such a cache; while it fills for the first time, every copy has room.
    sites.churn(&checker, 1000, 20).await;
    checker.cache().usage().await;
    let hot = sites.url("hot.test", "/private/x");
    // Between two rounds on the hot origin, more new origins than the cache holds: by recency
    // alone, the hot origin would be the oldest entry every time. The small ones push it out of
    // the admission window, so that it must keep its place among the rest by its uses.
    for round in 0..20 {
        // A crawler at work on the hot site: a few pages each round.
        for page in 0..5 {
            let url = format!("{hot}/{page}");
            let answer = checker.check(&url, &["bot"]).await.expect("answered");
            assert!(!answer.allowed);
        }
        sites.churn(&checker, round * 12, 12).await;
        for n in round * 100..round * 100 + 100 {
            let url = sites.url(&format!("small{n}.test"), "/x");
            checker.check(&url, &["bot"]).await.expect("a verdict");
        }
        checker.cache().usage().await;
    }
    assert_eq!(
        sites.fetches("hot.test"),
        1,
        "the hot origin was fetched again"
    );
}

#[tokio::test]
async fn no_origin_is_fetched_twice_within_the_shortest_lifetime() {
    let sites = Sites::start().await;
    // Room for two large files: each new one evicts an older one.
    let checker = sites.checker(400 * 1024);
    sites.churn(&checker, 0, 10).await;
    // The cache's housekeeping done: the evictions have happened.
    let (entries, _) = checker.cache().usage().await;
    assert!(entries < 10, "nothing was evicted");
    // Every one of them again, at once: their copies are gone, but a minute has not passed.
    let mut refused = 0;
    for n in 0..10 {
        let url = sites.url(&format!("big{n}.test"), "/x");
        match checker.check(&url, &["bot"]).await {
            Ok(_) => {}
            Err(CheckError::CopyDropped { retry_after }) => {
                assert!(retry_after <= Duration::from_secs(60), "{retry_after:?}");
                refused += 1;
            }
            Err(other) => panic!("{other}"),
        }
        assert_eq!(sites.fetches(&format!("big{n}.test")), 1, "big{n}");
    }
    // Each refusal is counted, once (`robotsd_cache_full_total`).
    assert!(refused > 0, "no copy was dropped");
    assert_eq!(
        checker.cache().stats().refusals.load(Ordering::Relaxed),
        refused
    );
}

#[tokio::test]
async fn states_kept_apart_from_the_copies_are_charged_without_them() {
    let sites = Sites::start().await;
    // Room for two large files: each new one evicts an older one, fetched under a minute ago,
    // whose state is kept apart (it still restrains fetching) while its copy is dropped.
    let checker = sites.checker(400 * 1024);
    sites.churn(&checker, 0, 10).await;
    let (weighed, weight) = checker.cache().usage().await;
    let (resting, resting_bytes) = checker.cache().resting();
    assert_eq!(
        weighed + resting,
        10,
        "{weighed} weighed, {resting} resting"
    );
    assert!(resting >= 7, "{resting} resting");
    // Each is charged its slot and state, as a backoff's entry is: a kilobyte or two, not the
    // copy it was weighed with before (a large file's, over a hundred).
    let each = resting_bytes / resting;
    assert!((700..4_096).contains(&each), "{each} bytes a resting state");
    assert!(
        weight / weighed > 50 * each,
        "{weight} bytes for {weighed} copies"
    );
}

#[tokio::test]
async fn evictions_are_counted_exactly() {
    let sites = Sites::start().await;
    let checker = sites.checker(SMALL_CACHE);
    sites.churn(&checker, 0, 60).await;
    let (entries, bytes) = checker.cache().usage().await;
    let evictions = checker.cache().stats().evictions.load(Ordering::Relaxed);
    assert!(bytes <= SMALL_CACHE, "{bytes}");
    assert!(evictions > 0);
    assert_eq!(
        evictions + entries,
        60,
        "{evictions} evictions, {entries} left"
    );
}

#[tokio::test]
async fn the_check_that_fetched_answers_even_if_the_full_cache_drops_its_copy_at_once() {
    let sites = Sites::start().await;
    let checker = sites.checker(SMALL_CACHE);
    sites.churn(&checker, 0, 20).await;
    // Full of origins asked once, the cache admits a new one only in place of one asked less:
    // many of these are dropped as soon as they are inserted. Each check that fetched still
    // answers from the file it fetched, rather than refuse with cache-full.
    let checks = (20..80).map(|n| {
        let (checker, url) = (&checker, sites.url(&format!("big{n}.test"), "/x"));
        async move { (n, checker.check(&url, &["bot"]).await) }
    });
    for (n, result) in futures_util::future::join_all(checks).await {
        if let Err(error) = result {
            panic!("big{n}.test: {error}");
        }
        assert_eq!(sites.fetches(&format!("big{n}.test")), 1, "big{n}");
    }
}

#[tokio::test]
async fn new_sites_at_a_full_cache_are_answered_while_they_are_crawled() {
    let sites = Sites::start().await;
    let checker = sites.checker(SMALL_CACHE);
    // A crawler at work on ten sites at a time, each new to robotsd: the first page of each
    // site fetches its robots.txt, its next page is asked about once ten other sites have
    // started, with the cache's housekeeping done in between, as time passing would do. The
    // cache holds some 1,500 of these files, so for most of the run every new one must take
    // the place of older ones, which were each asked about twice.
    let at_once: usize = 10;
    let mut cache_full = 0;
    for n in 0..3000 + at_once {
        if n < 3000 {
            let first = sites.url(&format!("site{n}.test"), "/private/a");
            assert!(!checker.check(&first, &["bot"]).await.unwrap().allowed);
        }
        checker.cache().usage().await;
        if let Some(earlier) = n.checked_sub(at_once) {
            let next = sites.url(&format!("site{earlier}.test"), "/private/b");
            match checker.check(&next, &["bot"]).await {
                Ok(answer) => assert!(!answer.allowed),
                Err(CheckError::CopyDropped { .. }) => cache_full += 1,
                Err(other) => panic!("{other}"),
            }
        }
    }
    let (entries, _) = checker.cache().usage().await;
    assert!(entries < 3000, "the cache was never full");
    assert_eq!(cache_full, 0, "sites answered cache-full while crawled");
    for n in [0, 1500, 2999] {
        assert_eq!(sites.fetches(&format!("site{n}.test")), 1);
    }
}
