//! Logging never blocks: with robotsd's stderr piped to a reader that never reads (a stuck
//! logging agent), requests and the probes keep being answered, and the lines that could not be
//! written are dropped and counted instead.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Kills the process when dropped, so a failing test leaves nothing running.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

#[tokio::test]
async fn a_stalled_log_reader_neither_stalls_requests_nor_probes() {
    let port = free_port();
    let _robotsd = Running(
        Command::new(env!("CARGO_BIN_EXE_robotsd"))
            .args([
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--log-level",
                "info",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            // Piped and never read: the pipe fills after a few hundred lines.
            .stderr(Stdio::piped())
            .spawn()
            .expect("robotsd starts"),
    );
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let livez = format!("http://127.0.0.1:{port}/livez");
    let mut up = false;
    for _ in 0..200 {
        if client.get(&livez).send().await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(up, "robotsd did not start");

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

    let metrics = client
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .send()
        .await
        .expect("metrics answered")
        .text()
        .await
        .unwrap();
    let dropped: f64 = metrics
        .lines()
        .find_map(|line| line.strip_prefix("robotsd_log_lines_dropped_total "))
        .expect("the dropped-lines counter")
        .trim()
        .parse()
        .unwrap();
    assert!(dropped > 0.0, "no line was dropped:\n{metrics}");
}
