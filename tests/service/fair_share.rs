//! Callers take turns on the compute threads (`docs/behaviour.md`, "A fair share of the
//! compute"): the real binary; one caller, on its own loopback address, keeps two batches of
//! issue 58's heavy checks in flight, and another caller, on another address, checks a benign
//! site of 5,000 rules (a small job for the compute threads) and the heavy site itself (a large
//! one), timed as it sees them. Behind one FIFO queue, the benign check waited 10.8 s (issue 58).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::cpu_work::{client_from, keep_posting, late_segments};
use crate::support::*;

/// A site's file of 5,000 rules: a check of it is past the inline bound, so it is matched on
/// the compute threads, but it is a small job there.
fn benign_file() -> String {
    let mut robots = String::from("user-agent: *\n");
    for n in 0..5_000 {
        robots.push_str(&format!("disallow: /section-{n}/page\n"));
    }
    robots
}

/// How long a check of `url` takes to answer 200, and whether it was allowed.
async fn timed_check(client: &reqwest::Client, url: &str) -> (Duration, bool) {
    let started = Instant::now();
    let response = client.get(url).send().await.expect("answered");
    assert_eq!(response.status(), 200, "{url}");
    let answer = json_of(response).await;
    (
        started.elapsed(),
        answer["allowed"].as_bool().expect("allowed"),
    )
}

fn median_and_slowest(mut times: Vec<Duration>) -> (Duration, Duration) {
    times.sort();
    (times[times.len() / 2], *times.last().expect("timed"))
}

/// The heavy caller's batches in flight at once: 16 items of each wait for the compute, so that
/// a check queued behind them all would wait for 128 items (a quarter of a second or more here).
const BATCHES: usize = 8;

#[tokio::test]
async fn another_callers_checks_wait_for_at_most_an_item_while_one_caller_saturates_the_compute() {
    let (robots, path) = late_segments();
    let hostile = origin(move || ok(&robots)).await;
    let benign = {
        let robots = benign_file();
        origin(move || ok(&robots)).await
    };
    // One compute thread on two cores, as the issue measured: the batches' items in flight
    // keep every thread busy however many there are.
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    let (heavy, other) = (client_from([127, 0, 0, 2]), client_from([127, 0, 0, 3]));
    let heavy_check = |n: usize| {
        robotsd.url(&format!(
            "/v1/check?view=verdict&ua=a&url={}",
            hostile.url(&format!("{path}{n}"))
        ))
    };
    let benign_check = |n: usize| {
        robotsd.url(&format!(
            "/v1/check?ua=a&url={}",
            benign.url(&format!("/p{n}"))
        ))
    };
    // Both files are held before the heavy caller starts.
    timed_check(&other, &heavy_check(0)).await;
    timed_check(&other, &benign_check(0)).await;

    let urls: Vec<String> = (0..100)
        .map(|i| hostile.url(&format!("{path}{i}")))
        .collect();
    let batch = json!({"ua": "a", "urls": urls}).to_string();
    let until = Instant::now() + Duration::from_secs(6);
    let batches: Vec<_> = (0..BATCHES)
        .map(|_| {
            let url = robotsd.url("/v1/check?view=verdict");
            keep_posting(until, heavy.clone(), url, batch.clone())
        })
        .collect();
    // The batches' items fill the compute's queue before the other caller begins.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (mut small, mut large) = (Vec::new(), Vec::new());
    let mut n = 1;
    while !batches.iter().all(|b| b.is_finished()) {
        let (took, allowed) = timed_check(&other, &benign_check(n)).await;
        assert!(allowed);
        small.push(took);
        let (took, allowed) = timed_check(&other, &heavy_check(n)).await;
        assert!(allowed);
        large.push(took);
        n += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut sent = 0;
    for batch in batches {
        sent += batch.await.expect("batches");
    }
    assert!(sent >= BATCHES, "the heavy caller's batches did not run");
    let (small_median, small_slowest) = median_and_slowest(small);
    let (large_median, large_slowest) = median_and_slowest(large);
    eprintln!(
        "{sent} batches; {} checks each kind: small median {small_median:?}, slowest \
         {small_slowest:?}; large median {large_median:?}, slowest {large_slowest:?}",
        n - 1
    );
    // The target is 100 ms for the ordinary check. Behind one FIFO queue, both waited for every
    // item queued: 65 ms with two batches in flight, 250 ms or more with eight. The slowest get
    // a wide margin on a busy two-core machine.
    assert!(small_median < Duration::from_millis(50), "{small_median:?}");
    assert!(
        large_median < Duration::from_millis(100),
        "{large_median:?}"
    );
    assert!(small_slowest < Duration::from_secs(1), "{small_slowest:?}");
    assert!(large_slowest < Duration::from_secs(2), "{large_slowest:?}");
}
