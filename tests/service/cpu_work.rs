//! CPU work a request asks for runs off the async workers (`docs/behaviour.md`, "Where the work
//! runs, and when it stops"): the real binary, batches and evaluations of a robots.txt whose
//! every rule is a candidate for every path, and meanwhile `/livez` and a cached check of another
//! origin, timed as a caller sees them. On the async workers, two such requests stalled both for
//! 8 s on two cores (issue 40).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::*;

/// Distinct rules that all begin `/*` and none of which matches the paths below (`/*x<n>z`),
/// and one whose RFC 9309 form differs from its text (`/%41`), within the 500 KiB a fetch reads.
/// In the RFC 9309 mode, an evaluation of it parses it and builds the index of its RFC forms
/// (tens of milliseconds), and before that index each check tried every rule (30 to 40 ms):
/// the heaviest file known.
fn hostile_file() -> String {
    let mut robots = String::from("user-agent:*\ndisallow:/%41\n");
    for n in 0..25_000 {
        robots.push_str(&format!("disallow:/*x{n}z\n"));
    }
    robots
}

/// 100 paths of 400 to 640 bytes in which every rule's first bytes occur: `x1x2…x0`.
fn long_paths() -> Vec<String> {
    (0..100)
        .map(|i| format!("/{}", "x1x2x3x4x5x6x7x8x9x0".repeat(20 + i % 13)))
        .collect()
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client")
}

/// A client whose connections come from `address` (any of 127.0.0.0/8 is this machine's): a
/// caller of its own to robotsd.
pub(crate) fn client_from(address: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(std::net::IpAddr::from(address))
        .timeout(Duration::from_secs(120))
        .build()
        .expect("client")
}

/// How long `url` takes to answer 200.
async fn timed_get(client: &reqwest::Client, url: &str) -> Duration {
    let started = Instant::now();
    let response = client.get(url).send().await.expect("answered");
    assert_eq!(response.status(), 200, "{url}");
    response.bytes().await.expect("body");
    started.elapsed()
}

/// Keeps one heavy request after another in flight until `until`, each answered in full;
/// how many there were.
async fn keep_busy(until: Instant, send: impl Fn() -> reqwest::RequestBuilder) -> usize {
    let mut sent = 0;
    while Instant::now() < until {
        let response = send().send().await.expect("answered");
        let status = response.status().as_u16();
        let answer = json_of(response).await;
        assert_eq!(status, 200, "{answer}");
        let results = answer["results"].as_array().expect("results");
        assert_eq!(results.len(), 100);
        sent += 1;
    }
    sent
}

/// A task keeping one `POST` of `body` (JSON) to `url` after another in flight until `until`
/// ([`keep_busy`]).
pub(crate) fn keep_posting(
    until: Instant,
    client: reqwest::Client,
    url: String,
    body: String,
) -> tokio::task::JoinHandle<usize> {
    tokio::spawn(keep_busy(until, move || {
        client
            .post(&url)
            .header("content-type", "application/json")
            .body(body.clone())
    }))
}

#[tokio::test]
async fn probes_and_cached_checks_stay_quick_while_requests_match_a_hostile_file() {
    let robots = hostile_file();
    assert!(robots.len() < 500 * 1024);
    let hostile = {
        let robots = robots.clone();
        origin(move || ok(&robots)).await
    };
    let other = origin(|| ok("User-agent: *\nDisallow: /private\n")).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    let client = client();
    // Both files are held before the heavy requests start.
    for site in [&hostile, &other] {
        timed_get(
            &client,
            &robotsd.url(&format!("/v1/check?ua=a&url={}", site.url("/x"))),
        )
        .await;
    }
    let paths = long_paths();
    let urls: Vec<String> = paths.iter().map(|p| hostile.url(p)).collect();
    let batch = json!({"ua": "a", "urls": urls}).to_string();
    let evaluate = json!({
        "robots_txt": robots, "ua": "a", "urls": paths, "percent_decoding": "rfc9309",
    })
    .to_string();
    // Two callers keep heavy requests in flight for 4 s: a batch of the held file and an
    // evaluation of the same file given in the body, both in the RFC 9309 mode.
    let until = Instant::now() + Duration::from_secs(4);
    let post = |path: &str, body: &String| {
        keep_posting(until, client.clone(), robotsd.url(path), body.clone())
    };
    let batches = post("/v1/check?view=verdict&percent_decoding=rfc9309", &batch);
    let evaluations = post("/v1/evaluate", &evaluate);

    let livez = robotsd.url("/livez");
    let cached = robotsd.url(&format!("/v1/check?ua=a&url={}", other.url("/y")));
    let mut probes = Vec::new();
    while !(batches.is_finished() && evaluations.is_finished()) {
        probes.push(timed_get(&client, &livez).await);
        probes.push(timed_get(&client, &cached).await);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let batches = batches.await.expect("batches");
    let evaluations = evaluations.await.expect("evaluations");
    assert!(batches >= 1 && evaluations >= 1);
    probes.sort();
    let median = probes[probes.len() / 2];
    let slowest = *probes.last().unwrap();
    eprintln!(
        "{batches} batches, {evaluations} evaluations; {} probes, median {median:?}, slowest \
         {slowest:?}",
        probes.len()
    );
    // The target is 50 ms; the slowest probe gets a wide margin on a busy two-core machine (on
    // the async workers, they waited seconds).
    assert!(median < Duration::from_millis(50), "median {median:?}");
    assert!(slowest < Duration::from_millis(500), "slowest {slowest:?}");
}

/// Where a check's match runs follows from its size: within the inline bound, where it is asked;
/// past it, on the compute threads, with the same answer; and a check that must answer at once
/// (a batch's items past its deadline) is not answered when its match would need them.
#[tokio::test]
async fn matches_past_the_inline_bound_go_to_the_compute_threads() {
    use robotsd::compute::Compute;
    let site = origin(|| ok("User-agent: *\nDisallow: /private\n")).await;
    let url = site.url("/private/x");
    // A check of one agent under a file of one rule is one unit of work.
    let here = checker().with_compute(Compute::new(1, 1));
    let away = checker().with_compute(Compute::new(1, 0));
    for checker in [&here, &away] {
        let answer = checker.check(&url, &["a"]).await.expect("answered");
        assert!(!answer.allowed);
        assert_eq!(answer.rule.expect("rule").line(), 2);
    }
    let options = here.default_options();
    let held = here.check_held(&url, &["a"], options, None).await.unwrap();
    assert!(held.is_some_and(|answer| !answer.allowed));
    let held = away.check_held(&url, &["a"], options, None).await.unwrap();
    assert!(
        held.is_none(),
        "a match for the compute threads is not answered at once"
    );
}

/// Issue 58's file: 4,090 `allow:/*S*z`, each `S` a distinct piece of one string of digits, and
/// 8 KiB URLs that hold 7 KB of filler, their only `z`, then the digits. Under the inline bound
/// by its rules alone, each check cost 50 ms on an async worker, and two callers' batches held
/// `/livez` for seconds.
pub(crate) fn late_segments() -> (String, String) {
    let mut state = 58u32;
    let digits: String = (0..1_000)
        .map(|_| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            char::from(b'0' + ((state >> 16) % 10) as u8)
        })
        .collect();
    let mut robots = String::from("user-agent: *\n");
    let mut seen = std::collections::HashSet::new();
    let mut n = 0usize;
    while seen.len() < 4_090 {
        let len = 2 + n % 9;
        let at = (n * 7_919) % (digits.len() - len);
        n += 1;
        if seen.insert(&digits[at..at + len]) {
            robots.push_str(&format!("allow:/*{}*z\n", &digits[at..at + len]));
        }
    }
    (robots, format!("/{}z{digits}", "x".repeat(7_000)))
}

#[tokio::test]
async fn probes_and_cached_checks_stay_quick_while_batches_send_long_urls() {
    let (robots, path) = late_segments();
    let hostile = origin(move || ok(&robots)).await;
    let other = origin(|| ok("User-agent: *\nDisallow: /private\n")).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    let client = client();
    for site in [&hostile, &other] {
        timed_get(
            &client,
            &robotsd.url(&format!("/v1/check?ua=a&url={}", site.url("/x"))),
        )
        .await;
    }
    let urls: Vec<String> = (0..100)
        .map(|i| hostile.url(&format!("{path}{i}")))
        .collect();
    assert!(urls.iter().all(|u| u.len() <= 8_192));
    let batch = json!({"ua": "a", "urls": urls}).to_string();
    // Four callers, each from an address of its own and keeping such batches in flight for 4 s,
    // two in each decoding mode.
    let until = Instant::now() + Duration::from_secs(4);
    let callers: Vec<_> = ["google", "rfc9309", "google", "rfc9309"]
        .into_iter()
        .zip(2..)
        .map(|(decoding, host)| {
            let url = robotsd.url(&format!(
                "/v1/check?view=verdict&percent_decoding={decoding}"
            ));
            keep_posting(until, client_from([127, 0, 0, host]), url, batch.clone())
        })
        .collect();
    let livez = robotsd.url("/livez");
    let cached = robotsd.url(&format!("/v1/check?ua=a&url={}", other.url("/y")));
    let mut probes = Vec::new();
    while !callers.iter().all(|c| c.is_finished()) {
        probes.push(timed_get(&client, &livez).await);
        probes.push(timed_get(&client, &cached).await);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for caller in callers {
        assert!(caller.await.expect("caller") >= 1);
    }
    probes.sort();
    let median = probes[probes.len() / 2];
    let slowest = *probes.last().unwrap();
    eprintln!(
        "{} probes, median {median:?}, slowest {slowest:?}",
        probes.len()
    );
    assert!(median < Duration::from_millis(50), "median {median:?}");
    assert!(slowest < Duration::from_millis(500), "slowest {slowest:?}");
}
