//! Logging never blocks: with robotsd's stderr piped to a reader that never reads (a stuck
//! logging agent), requests and the probes keep being answered, and the lines that could not be
//! written are dropped and counted instead.

use std::process::Stdio;
use std::time::Duration;

use crate::support::Robotsd;

#[tokio::test]
async fn a_stalled_log_reader_neither_stalls_requests_nor_probes() {
    // stderr piped and never read: the pipe fills after a few hundred lines.
    let robotsd = Robotsd::start_with(&["--log-level", "info"], false, Stdio::piped()).await;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let livez = robotsd.url("/livez");

    // Every request writes a log line: far more than the pipe and the writer's queue hold.
    let tasks = (0..16).map(|_| {
        let (client, livez) = (client.clone(), livez.clone());
        tokio::spawn(async move {
            for _ in 0..800 {
                let response = client.get(&livez).send().await.expect("answered");
                assert_eq!(response.status(), 200);
            }
        })
    });
    for task in tasks.collect::<Vec<_>>() {
        task.await.expect("every request answered");
    }

    let dropped = robotsd.metric("robotsd_log_lines_dropped_total").await;
    assert!(dropped > 0.0, "no line was dropped");
}
