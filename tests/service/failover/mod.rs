//! A fleet of robotsd processes through a failover of the Redis it shares (docs/fleet.md,
//! "Failover"), as a user sees it: every answer during the failover, the store up again on
//! every replica without traffic, and what was replicated before it still shared after it.
//! The store behind is a Redis Cluster with a replica per master ([`cluster`]) or a master and
//! replica that Sentinel watches ([`sentinel`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::task::JoinHandle;

use crate::support::{Robotsd, json_of, within};

mod cluster;
mod sentinel;

/// `GET /v1/check` of `url` for FleetBot through `robotsd`: status and body.
async fn check(robotsd: &Robotsd, url: &str) -> (u16, Value) {
    check_at(&reqwest::Client::new(), &robotsd.url(""), url, false).await
}

/// `GET /v1/check` of `url` for FleetBot at the robotsd whose base URL is `base`, with a slot
/// reserved if `pace`: status and body.
async fn check_at(client: &reqwest::Client, base: &str, url: &str, pace: bool) -> (u16, Value) {
    let check = url::Url::parse_with_params(
        &format!("{base}/v1/check"),
        [
            ("url", url),
            ("ua", "FleetBot"),
            ("pace", &pace.to_string()),
        ],
    )
    .unwrap();
    let response = client
        .get(check)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .expect("robotsd answered");
    let status = response.status().as_u16();
    (status, json_of(response).await)
}

/// Checks that go on through every replica until stopped: of an allowed and a disallowed URL
/// (answered from each replica's cache), and of the allowed one with `pace=true` (a slot
/// reserved in the store at each check, so that every replica meets the failover).
struct Load {
    stop: Arc<AtomicBool>,
    task: JoinHandle<Vec<(u16, bool, Value)>>,
}

impl Load {
    fn start(replicas: &[&Robotsd], allowed: String, disallowed: String) -> Load {
        let urls = replicas.iter().map(|r| r.url("")).collect::<Vec<_>>();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            let client = reqwest::Client::new();
            let mut answers = Vec::new();
            while !stopped.load(Ordering::Relaxed) {
                for base in &urls {
                    let checks = [(&allowed, true, false), (&disallowed, false, false)];
                    for (url, allowed, pace) in checks.into_iter().chain([(&allowed, true, true)]) {
                        let (status, body) = check_at(&client, base, url, pace).await;
                        answers.push((status, body["allowed"] == allowed, body));
                    }
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            answers
        });
        Load { stop, task }
    }

    /// Stops the checks and asserts that every one was a 200 with the right verdict.
    async fn every_answer_right(self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        let answers = self.task.await.unwrap();
        for (status, right, body) in &answers {
            assert!(*status == 200 && *right, "{status} {body}");
        }
        answers.len()
    }
}

/// The store calls of `robotsd` that failed, timed out or were not sent (breaker open).
async fn store_failures(robotsd: &Robotsd) -> f64 {
    robotsd
        .metrics()
        .await
        .lines()
        .filter(|line| line.starts_with("robotsd_store_operations_total{"))
        .filter(|line| !line.contains("outcome=\"ok\""))
        .filter_map(|line| line.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// How long after the call each replica's `robotsd_store_up` was 1, polled without traffic;
/// fails if one is not within `limit`.
async fn store_up_on_every_replica(replicas: &[&Robotsd], limit: Duration) -> Vec<Duration> {
    let mut times = Vec::new();
    let started = tokio::time::Instant::now();
    for robotsd in replicas {
        let up = within(limit.saturating_sub(started.elapsed()), || async {
            robotsd.metric("robotsd_store_up{backend=\"redis\"}").await == 1.0
        })
        .await;
        assert!(
            up.is_some(),
            "a replica's store was not up within {limit:?}"
        );
        times.push(started.elapsed());
    }
    times
}
