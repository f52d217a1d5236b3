//! Logging never blocks: with robotsd's stderr piped to a reader that never reads (a stuck
//! logging agent), requests and the probes keep being answered, and the lines that could not be
//! written are dropped and counted instead. The access log has what went wrong by default, and
//! every request when asked.

use std::io::{BufRead as _, BufReader};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::support::{Robotsd, eventually, ok, origin};

#[tokio::test]
async fn a_stalled_log_reader_neither_stalls_requests_nor_probes() {
    // stderr piped and never read: the pipe fills after a few hundred lines.
    let robotsd = Robotsd::start_with(&["--access-log", "all"], false, Stdio::piped()).await;
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

/// The JSON log lines robotsd writes to `stderr`, collected as they come.
pub(crate) fn collect_lines(stderr: std::process::ChildStderr) -> Arc<Mutex<Vec<Value>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&lines);
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let parsed = serde_json::from_str(&line).expect("a JSON log line");
            sink.lock().unwrap().push(parsed);
        }
    });
    lines
}

#[tokio::test]
async fn the_access_log_has_server_errors_by_default_and_every_request_on_demand() {
    let slow = origin(|| ok("User-agent: *\nAllow: /\n")).await;
    slow.set_delay(Duration::from_secs(3));
    for access in [None, Some("all")] {
        let mut args = vec![
            "--log-format=json",
            "--allow-private-networks",
            "--request-timeout=1s",
        ];
        args.extend(
            access
                .map(|which| ["--access-log", which])
                .into_iter()
                .flatten(),
        );
        let mut robotsd = Robotsd::start_with(&args, false, Stdio::piped()).await;
        let lines = collect_lines(robotsd.take_stderr().unwrap());
        let livez = reqwest::get(robotsd.url("/livez")).await.unwrap();
        assert_eq!(livez.status(), 200);
        let check = robotsd.url(&format!("/v1/check?ua=a&url={}", slow.url("/x")));
        assert_eq!(reqwest::get(check).await.unwrap().status(), 504);

        let access_lines = || -> Vec<Value> {
            let lines = lines.lock().unwrap();
            let access = lines.iter().filter(|l| l["target"] == "robotsd::access");
            access.map(|l| l["fields"].clone()).collect()
        };
        assert!(
            eventually(|| access_lines().iter().any(|f| f["status"] == 504)).await,
            "{access:?}: no line for the 504"
        );
        let logged = access_lines();
        let timeout = logged.iter().find(|f| f["status"] == 504).unwrap();
        assert_eq!(timeout["route"], "/v1/check");
        // Whole microseconds: a plain integer, no float noise.
        let micros = timeout["latency_us"].as_u64().expect("an integer");
        assert!((1_000_000..3_000_000).contains(&micros), "{timeout}");
        let livez_logged = logged.iter().any(|f| f["route"] == "/livez");
        assert_eq!(livez_logged, access.is_some(), "{access:?}: {logged:?}");
        assert!(
            !format!("{logged:?}").contains("127.0.0.1"),
            "a URL in the access log: {logged:?}"
        );
    }
}

/// A check's access-log line says where its answer came from, whether the edge answered it
/// (`GET`) or the router did (`HEAD`, whose answer is the `GET`'s head without its body).
#[tokio::test]
async fn a_check_s_log_line_says_where_its_answer_came_from() {
    let site = origin(|| ok("User-agent: *\nDisallow: /private\n")).await;
    let mut robotsd = Robotsd::start_with(
        &[
            "--log-format=json",
            "--allow-private-networks",
            "--access-log",
            "all",
        ],
        false,
        Stdio::piped(),
    )
    .await;
    let lines = collect_lines(robotsd.take_stderr().unwrap());
    let check = robotsd.url(&format!("/v1/check?ua=a&url={}", site.url("/private/x")));
    let client = reqwest::Client::new();
    let mut lengths = Vec::new();
    for _ in 0..2 {
        let response = client.get(&check).send().await.unwrap();
        assert_eq!(response.status(), 200);
        let body = response.bytes().await.unwrap();
        assert!(body.starts_with(b"{\"allowed\":false"), "{body:?}");
        lengths.push(body.len());
    }
    let head = client.head(&check).send().await.unwrap();
    assert_eq!(head.status(), 200);
    assert_eq!(head.headers()["content-type"], "application/json");
    assert_eq!(
        head.headers()["content-length"].to_str().unwrap(),
        lengths[1].to_string()
    );
    assert!(head.headers().contains_key("x-request-id"));
    assert!(head.bytes().await.unwrap().is_empty());
    assert_eq!(site.hits(), 1);

    let checks = || -> Vec<(String, String)> {
        let lines = lines.lock().unwrap();
        let access = lines.iter().filter(|l| l["target"] == "robotsd::access");
        access
            .filter(|l| l["fields"]["route"] == "/v1/check")
            .map(|l| {
                let field = |name: &str| l["fields"][name].as_str().unwrap_or("?").to_string();
                (field("method"), field("cache"))
            })
            .collect()
    };
    assert!(eventually(|| checks().len() == 3).await, "{:?}", checks());
    let expected = [("GET", "miss"), ("GET", "hit"), ("HEAD", "hit")];
    assert_eq!(
        checks(),
        expected.map(|(method, cache)| (method.to_string(), cache.to_string()))
    );
}

#[tokio::test]
async fn fetch_failures_and_the_end_of_a_backoff_are_logged_with_the_origin() {
    let site = origin(|| crate::support::status(503)).await;
    let mut robotsd = Robotsd::start_with(
        &[
            "--log-format=json",
            "--allow-private-networks",
            "--retry-min=1s",
            "--retry-max=1s",
        ],
        true,
        Stdio::piped(),
    )
    .await;
    let lines = collect_lines(robotsd.take_stderr().unwrap());
    let check = robotsd.url(&format!("/v1/check?ua=a&url={}", site.url("/x")));
    assert_eq!(reqwest::get(&check).await.unwrap().status(), 200);
    let warnings = || -> Vec<Value> {
        let lines = lines.lock().unwrap();
        let warn = lines
            .iter()
            .filter(|l| l["level"] == "WARN" && l["target"] == "robotsd::cache::fetch_log");
        warn.map(|l| l["fields"].clone()).collect()
    };
    assert!(eventually(|| !warnings().is_empty()).await, "no warning");
    let failed = &warnings()[0];
    assert_eq!(failed["origin"], site.base(), "{failed}");
    assert_eq!(failed["failures"], 1, "{failed}");
    assert!(
        failed["reason"].as_str().unwrap().contains("503"),
        "{failed}"
    );
    assert_eq!(failed["retry_in"], "1s", "{failed}");

    // The site recovers; the retry (in the background of a check) ends the backoff.
    site.set_reply(|| ok("User-agent: *\nAllow: /\n"));
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(reqwest::get(&check).await.unwrap().status(), 200);
    let over = |w: &Value| {
        w["message"]
            .as_str()
            .is_some_and(|m| m.contains("backoff is over"))
    };
    assert!(
        eventually(|| warnings().iter().any(over)).await,
        "{:?}",
        warnings()
    );

    // Plain values, no Rust debug formatting.
    let lines = lines.lock().unwrap();
    let serving = lines
        .iter()
        .find(|l| l["fields"]["message"] == "robotsd serving")
        .expect("the start line");
    let admin = format!("127.0.0.1:{}", robotsd.admin_port.unwrap());
    assert_eq!(serving["fields"]["admin"], admin.as_str(), "{serving}");
}

/// SIGHUP reads `--api-token-file` again: rotated tokens take effect without a restart, a file
/// that cannot be used keeps the tokens in force, and each reload says so in the log.
#[tokio::test]
async fn sighup_reloads_the_token_file_and_never_ends_the_process() {
    let path = std::env::temp_dir().join(format!("robotsd-hup-tokens-{}", std::process::id()));
    std::fs::write(&path, "first-token-0123456789\n").unwrap();
    let mut robotsd = Robotsd::start_with(
        &[
            "--log-format=json",
            "--api-token-file",
            path.to_str().unwrap(),
        ],
        false,
        Stdio::piped(),
    )
    .await;
    let lines = collect_lines(robotsd.take_stderr().unwrap());
    let evaluate = robotsd.url("/v1/evaluate");
    let status_with = |token: &'static str| {
        let evaluate = evaluate.clone();
        async move {
            reqwest::Client::new()
                .post(evaluate)
                .bearer_auth(token)
                .header("content-type", "application/json")
                .body(r#"{"robots_txt": "", "ua": "a", "url": "/"}"#)
                .send()
                .await
                .expect("robotsd answered")
                .status()
                .as_u16()
        }
    };
    let hangup = |pid: u32| {
        let status = std::process::Command::new("kill")
            .args(["-HUP", &pid.to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    };
    let reloads = || -> Vec<Value> {
        let lines = lines.lock().unwrap();
        let said = lines.iter().filter(|l| {
            l["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("SIGHUP"))
        });
        said.cloned().collect()
    };
    assert_eq!(status_with("first-token-0123456789").await, 200);

    std::fs::write(&path, "second-token-0123456789\n").unwrap();
    hangup(robotsd.pid());
    assert!(eventually(|| reloads().len() == 1).await, "no log line");
    assert_eq!(reloads()[0]["level"], "INFO", "{:?}", reloads());
    assert_eq!(reloads()[0]["fields"]["tokens"], 1, "{:?}", reloads());
    assert_eq!(status_with("second-token-0123456789").await, 200);
    assert_eq!(status_with("first-token-0123456789").await, 401);

    // A bad rotation locks nobody out: the tokens in force stay, and the log says why.
    std::fs::write(&path, "short\n").unwrap();
    hangup(robotsd.pid());
    assert!(eventually(|| reloads().len() == 2).await, "no log line");
    assert_eq!(reloads()[1]["level"], "ERROR", "{:?}", reloads());
    assert_eq!(status_with("second-token-0123456789").await, 200);
    assert!(robotsd.exited().is_none(), "SIGHUP ended the process");
    std::fs::remove_file(&path).unwrap();
}

/// Every response carries a request id, the caller's own (`X-Request-Id`, or a `traceparent`'s
/// trace id) or a new one, and the request's access-log line shows it.
#[tokio::test]
async fn every_answer_has_a_request_id_that_its_log_line_shows() {
    let mut robotsd = Robotsd::start_with(
        &["--log-format=json", "--access-log", "all"],
        false,
        Stdio::piped(),
    )
    .await;
    let lines = collect_lines(robotsd.take_stderr().unwrap());
    let client = reqwest::Client::new();
    let id_of = |response: &reqwest::Response| {
        response.headers()["x-request-id"]
            .to_str()
            .unwrap()
            .to_string()
    };
    let given = client
        .get(robotsd.url("/v1/check?url=not-a-url&ua=a"))
        .header("x-request-id", "crawl-42/page-7")
        .send()
        .await
        .unwrap();
    assert_eq!(given.status(), 400);
    assert_eq!(id_of(&given), "crawl-42/page-7");
    let traced = client
        .get(robotsd.url("/livez"))
        .header(
            "traceparent",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(id_of(&traced), "4bf92f3577b34da6a3ce929d0e0e4736");
    let (first, second) = (
        client.get(robotsd.url("/livez")).send().await.unwrap(),
        client.get(robotsd.url("/livez")).send().await.unwrap(),
    );
    let made = [id_of(&first), id_of(&second)];
    assert_ne!(made[0], made[1]);
    assert_eq!(made[0].len(), 32, "{made:?}");

    let logged = || -> Vec<String> {
        let lines = lines.lock().unwrap();
        let access = lines.iter().filter(|l| l["target"] == "robotsd::access");
        access
            .filter_map(|l| l["fields"]["request_id"].as_str().map(String::from))
            .collect()
    };
    // After the start-up's own readiness probe.
    let ours = || {
        logged()
            .into_iter()
            .skip_while(|id| id != "crawl-42/page-7")
            .collect::<Vec<_>>()
    };
    assert!(eventually(|| ours().len() == 4).await, "{:?}", logged());
    assert_eq!(
        ours(),
        [
            "crawl-42/page-7",
            "4bf92f3577b34da6a3ce929d0e0e4736",
            &made[0],
            &made[1]
        ]
    );
}
