//! Sites cannot make a cache entry hold more than it is charged (issue 28 §3): a redirect to a
//! very long `Location` is a failed redirect with a short reason, and nothing of the URL it names
//! is kept. Before, the URL was kept as the final URL and again in the error text, uncharged:
//! 100 origins in a 1 MiB robots.txt cache made robotsd's resident memory grow from 24 to 146 MB,
//! 400 license URLs in a 1 MiB license cache from 24 to 268 MB.
//!
//! The real binary, with loopback sites of its own (one port each, so each is an origin), and
//! its resident memory read from `/proc`.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Response, Uri};
use serde_json::Value;

use crate::support::*;

/// The `Location` the sites send: ten times the longest robotsd follows, well within what
/// hyper reads of a response head (about 408 KiB).
const LONG: usize = 300_000;

/// The bound held: growth within four times the cache's capacity (it is charged with every
/// entry, so its own memory is at most the capacity and what its allocations cost beyond the
/// charge), plus room for the runtime's own growth under load (buffers, allocator caches).
const CAPACITY: u64 = 1024 * 1024;
const ALLOWANCE: u64 = 40 * 1024 * 1024;

/// `count` sites on loopback ports of their own: each answers `/robots.txt` with
/// `robots(base)` when that is some body, and every other path (and `/robots.txt` without one)
/// with a redirect to `/` followed by [`LONG`] bytes.
async fn sites(
    count: usize,
    robots: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
) -> Vec<String> {
    let robots = Arc::new(robots);
    let mut bases = Vec::new();
    for _ in 0..count {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (robots, own) = (Arc::clone(&robots), base.clone());
        let app = Router::new().fallback(move |uri: Uri| {
            let body = if uri.path() == "/robots.txt" {
                robots(&own)
            } else {
                None
            };
            async move {
                let response = match body {
                    Some(body) => Response::builder().status(200).body(Body::from(body)),
                    None => Response::builder()
                        .status(301)
                        .header("location", format!("/{}", "a".repeat(LONG)))
                        .body(Body::empty()),
                };
                response.unwrap()
            }
        });
        tokio::spawn(async move { axum::serve(listener, app).await.ok() });
        bases.push(base);
    }
    bases
}

/// The answer to a check of `url`, which must be a 200.
async fn check(robotsd: &Robotsd, url: &str) -> Value {
    let encoded: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
    let response = reqwest::get(robotsd.url(&format!("/v1/check?url={encoded}&ua=ExampleBot")))
        .await
        .expect("answered");
    assert_eq!(response.status(), 200, "{url}");
    json_of(response).await
}

/// A started robotsd with `args`, and its resident memory once a first check has set up what
/// every check uses (connections, the runtime's buffers, the caches' maps).
async fn warmed_up(args: &[&str]) -> (Robotsd, u64) {
    let robotsd = Robotsd::start(args, false).await;
    let warm = sites(1, |_| Some("User-agent: *\nDisallow: /private/\n".into())).await;
    check(&robotsd, &format!("{}/x", warm[0])).await;
    let before = resident_bytes(robotsd.pid());
    (robotsd, before)
}

/// Asserts that the resident memory of `robotsd` grew by at most the bound since `before`.
fn assert_within_bound(robotsd: &Robotsd, before: u64, what: &str) {
    let grown = resident_bytes(robotsd.pid()).saturating_sub(before);
    eprintln!("{what}: resident memory grew by {grown} bytes from {before}");
    assert!(
        grown <= 4 * CAPACITY + ALLOWANCE,
        "{what}: resident memory grew by {grown} bytes, over 4 × {CAPACITY} + {ALLOWANCE}"
    );
}

/// What an answer says of a string a site could have made long: its length, and its start.
fn short(value: &Value) -> (usize, String) {
    let text = value.as_str().unwrap_or_default();
    (text.len(), text.chars().take(80).collect())
}

#[tokio::test]
async fn robots_txt_redirects_to_long_locations_keep_nothing_long() {
    let (robotsd, before) =
        warmed_up(&["--allow-private-networks", "--cache-capacity", "1MiB"]).await;
    let bases = sites(100, |_| None).await;
    let mut answers = Vec::new();
    for base in &bases {
        let answer = check(&robotsd, &format!("{base}/page")).await;
        answers.push((
            answer["allowed"].clone(),
            answer["reason"].clone(),
            short(&answer["robots"]["final_url"]),
        ));
    }
    assert_within_bound(&robotsd, before, "robots.txt cache");
    // A redirect without a usable Location: no robots.txt, everything allowed, and the answer
    // names the robots.txt URL asked for, not where the redirect led.
    for (base, (allowed, reason, final_url)) in bases.iter().zip(answers) {
        assert_eq!(allowed, true, "{base}");
        assert_eq!(reason, "redirect_limit", "{base}");
        let robots_url = format!("{base}/robots.txt");
        assert_eq!(final_url, (robots_url.len(), robots_url));
    }
}

#[tokio::test]
async fn license_redirects_to_long_locations_fail_with_a_short_reason_and_keep_nothing_long() {
    let (robotsd, before) = warmed_up(&[
        "--allow-private-networks",
        "--rsl",
        "--rsl-capacity",
        "1MiB",
    ])
    .await;
    // Four license documents a site: 400 license URLs, each redirecting to a long Location.
    let bases = sites(100, |base| {
        let lines: String = (0..4)
            .map(|n| format!("License: {base}/license{n}.xml\n"))
            .collect();
        Some(format!("User-agent: *\nAllow: /\n{lines}"))
    })
    .await;
    let mut reports = Vec::new();
    for base in &bases {
        let answer = check(&robotsd, &format!("{base}/page")).await;
        let rsl = answer["usage"]["rsl"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(rsl.len(), 4, "{base}");
        for report in rsl {
            reports.push((
                report["license_url"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                report["state"].clone(),
                short(&report["reason"]),
                short(&report["source"]["final_url"]),
            ));
        }
    }
    assert_within_bound(&robotsd, before, "license cache");
    for (license_url, state, reason, final_url) in reports {
        assert_eq!(state, "fetch_failed", "{license_url}");
        let expected = "a redirect to nowhere usable";
        assert_eq!(
            reason,
            (expected.len(), expected.to_owned()),
            "{license_url}"
        );
        assert_eq!(final_url, (license_url.len(), license_url.clone()));
    }
}

#[tokio::test]
async fn a_location_of_4096_bytes_is_followed_and_one_byte_more_is_not() {
    let target = origin(|| ok("User-agent: *\nDisallow: /private/\n")).await;
    for (extra, followed) in [(0, true), (1, false)] {
        // An absolute Location of exactly MAX_LOCATION_BYTES (+ `extra`), to the target.
        let prefix = target.url("/robots.txt?");
        let location = format!("{prefix}{}", "q".repeat(4096 + extra - prefix.len()));
        assert_eq!(location.len(), robotsd::fetch::MAX_LOCATION_BYTES + extra);
        let hops = origin(move || redirect(location.clone())).await;
        let answer = checker()
            .check(&hops.url("/private/x"), &["bot"])
            .await
            .unwrap();
        let final_url = source(&answer)
            .final_url
            .as_ref()
            .map(|url| url.as_str().to_owned())
            .unwrap_or_default();
        if followed {
            assert!(!answer.allowed, "{answer:?}");
            assert_eq!(final_url.len(), 4096);
        } else {
            assert!(answer.allowed);
            assert_eq!(answer.reason, robotsd::checker::Reason::RedirectLimit);
            assert_eq!(final_url, hops.url("/robots.txt"));
        }
    }
}
