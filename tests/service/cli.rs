//! `robotsd eval` as a user runs it: the real binary, real files, real pipes.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

fn robotsd(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_robotsd"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("robotsd starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write stdin");
    child.wait_with_output().expect("robotsd finishes")
}

fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

#[test]
fn eval_file_prints_one_line_per_url() {
    let dir = std::env::temp_dir().join(format!("robotsd-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("robots.txt");
    std::fs::write(
        &file,
        "User-agent: *\nDisallow: /private\nAllow: /private/ok\n\nUser-agent: FooBot\nDisallow: /\n",
    )
    .unwrap();
    let out = robotsd(
        &[
            "eval",
            "--robots",
            file.to_str().unwrap(),
            "--ua",
            "Googlebot",
            "https://example.com/private/x",
            "/private/ok/1",
            "/public",
        ],
        "",
    );
    assert!(out.status.success(), "{out:?}");
    let lines = json_lines(&out);
    assert_eq!(
        lines[0],
        json!({"url": "https://example.com/private/x", "allowed": false,
               "verdict": "disallow", "reason": "matched_rule",
               "rule": {"directive": "disallow", "pattern": "/private", "line": 2},
               "group": {"agents": ["*"], "lines": [1], "global": true}, "usage": null})
    );
    assert_eq!(lines[1]["allowed"], true);
    assert_eq!(lines[1]["rule"]["line"], 3);
    assert_eq!(lines[2]["rule"], Value::Null);
    assert_eq!(lines[2]["reason"], "no_matching_rule");
    assert_eq!(lines.len(), 3);

    // `-` reads the robots.txt from standard input.
    let out = robotsd(
        &["eval", "--robots", "-", "--ua", "Googlebot", "/private/x"],
        "User-agent: *\nDisallow: /private\n",
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(json_lines(&out)[0]["verdict"], "disallow");

    let out = robotsd(
        &[
            "eval",
            "--robots",
            file.to_str().unwrap(),
            "--ua",
            "foobot",
            "/x",
        ],
        "",
    );
    let lines = json_lines(&out);
    assert_eq!(lines[0]["allowed"], false);
    assert_eq!(
        lines[0]["group"],
        json!({"agents": ["FooBot"], "lines": [5], "global": false})
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn eval_reports_usage_preferences_in_both_modes() {
    let robots = "User-agent: *\nContent-Usage: train-ai=n\nContent-Signal: /news/ ai-input=no\n";
    let out = robotsd(
        &["eval", "--robots", "-", "--ua", "bot", "/news/1", "/about"],
        robots,
    );
    assert!(out.status.success(), "{out:?}");
    let lines = json_lines(&out);
    assert_eq!(
        lines[0]["usage"],
        json!({"content_usage": {"train-ai": {"value": "n", "line": 2}},
               "content_signal": {"ai-input": {"value": "n", "line": 3}}})
    );
    assert_eq!(lines[1]["usage"]["content_signal"], Value::Null);
    let record = json!({"id": 7, "robots_txt": robots, "ua": "bot", "url": "/about"});
    let out = robotsd(&["eval", "--jsonl"], &format!("{record}\n"));
    let lines = json_lines(&out);
    assert_eq!(lines[0]["id"], 7);
    assert_eq!(lines[0]["usage"]["content_usage"]["train-ai"]["value"], "n");
}

#[test]
fn eval_jsonl_answers_in_order_and_survives_bad_lines() {
    let input = [
        r#"{"id": 1, "robots_txt": "user-agent: a\ndisallow: /x\n", "user_agents": ["b", "a"], "urls": ["/x", "/y"]}"#,
        r#"{"id": "bad", "robots_txt": 1, "user_agent": "a", "url": "/"}"#,
        "not json",
        r#"{"id": [3], "robots_txt_b64": "dXNlci1hZ2VudDogKgpkaXNhbGxvdzogLw==", "user_agent": "z", "url": "http://h/"}"#,
        r#"{"id": 4, "robots_txt": "", "user_agent": "z"}"#,
    ]
    .join("\n");
    let out = robotsd(&["eval", "--jsonl"], &input);
    assert!(out.status.success(), "{out:?}");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 6);
    assert_eq!(
        (&lines[0]["id"], &lines[0]["url"], &lines[0]["allowed"]),
        (&json!(1), &json!("/x"), &json!(false))
    );
    assert_eq!(
        (&lines[1]["url"], &lines[1]["allowed"]),
        (&json!("/y"), &json!(true))
    );
    assert_eq!(lines[2]["id"], "bad");
    assert!(
        lines[2]["error"]
            .as_str()
            .unwrap()
            .contains("invalid request")
    );
    assert_eq!(lines[3]["id"], Value::Null);
    assert!(lines[3]["error"].as_str().unwrap().contains("invalid JSON"));
    assert_eq!(lines[4]["id"], json!([3]));
    assert_eq!(
        lines[4]["rule"],
        json!({"directive": "disallow", "pattern": "/", "line": 2})
    );
    assert_eq!(lines[5]["id"], 4);
    assert!(lines[5]["error"].as_str().unwrap().contains("missing url"));
}

#[test]
fn eval_jsonl_speaks_the_apis_vocabulary_and_answers_every_record() {
    let input = [
        // `ua`, as in the HTTP API, a string or a list.
        r#"{"id": 1, "robots_txt": "user-agent: a\ndisallow: /x\n", "ua": "a", "url": "/x"}"#,
        r#"{"id": 2, "robots_txt": "user-agent: a\ndisallow: /x\n", "ua": ["b", "a"], "url": "/x"}"#,
        // No URLs: still a line, saying so.
        r#"{"id": 3, "robots_txt": "", "ua": "a", "urls": []}"#,
        r#"{"id": 4, "robots_txt": "", "ua": "a", "user_agent": "b", "url": "/"}"#,
    ]
    .join("\n");
    let out = robotsd(&["eval", "--jsonl"], &input);
    assert!(out.status.success(), "{out:?}");
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert_eq!(
        (&lines[0]["id"], &lines[0]["verdict"]),
        (&json!(1), &json!("disallow"))
    );
    assert_eq!(
        (&lines[1]["id"], &lines[1]["allowed"]),
        (&json!(2), &json!(false))
    );
    assert_eq!(lines[2]["id"], 3);
    assert!(
        lines[2]["error"]
            .as_str()
            .unwrap()
            .contains("nothing to check")
    );
    assert_eq!(lines[3]["id"], 4);
    assert!(
        lines[3]["error"]
            .as_str()
            .unwrap()
            .contains("duplicate field"),
        "{}",
        lines[3]
    );
}

#[test]
fn missing_file_and_bad_usage_exit_2_with_a_message() {
    let out = robotsd(
        &[
            "eval",
            "--robots",
            "/nonexistent/robots.txt",
            "--ua",
            "a",
            "/",
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read robots.txt file"));
    let out = robotsd(&["eval", "--ua", "a", "/"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--robots"));
    let out = robotsd(&["frobnicate"], "");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn eval_decodes_percent_escapes_when_asked() {
    let robots = "User-agent: *\nDisallow: /private\n";
    let file = std::env::temp_dir().join(format!("robotsd-cli-pct-{}.txt", std::process::id()));
    std::fs::write(&file, robots).unwrap();
    let path = file.to_str().unwrap();
    let allowed = |args: &[&str]| {
        let out = robotsd(args, "");
        assert!(out.status.success(), "{out:?}");
        json_lines(&out)[0]["allowed"].clone()
    };
    let base = ["eval", "--robots", path, "--ua", "bot"];
    assert_eq!(allowed(&[&base[..], &["/%70rivate"]].concat()), json!(true));
    assert_eq!(
        allowed(&[&base[..], &["--percent-decoding", "rfc9309", "/%70rivate"]].concat()),
        json!(false)
    );
    // JSON lines: a record's own field wins over the flag's default.
    let records = [
        json!({"id": 1, "robots_txt": robots, "ua": "bot", "url": "/%70rivate"}),
        json!({"id": 2, "robots_txt": robots, "ua": "bot", "url": "/%70rivate", "percent_decoding": "google"}),
        json!({"id": 3, "robots_txt": robots, "ua": "bot", "url": "/%70rivate", "percent_decoding": "both"}),
    ]
    .map(|r| r.to_string())
    .join("\n");
    let out = robotsd(
        &["eval", "--jsonl", "--percent-decoding", "rfc9309"],
        &records,
    );
    let lines = json_lines(&out);
    assert_eq!(lines[0]["allowed"], false, "{lines:?}");
    assert_eq!(lines[1]["allowed"], true, "{lines:?}");
    assert_eq!(lines[2]["id"], 3);
    assert!(
        lines[2]["error"].as_str().unwrap().contains("rfc9309"),
        "{lines:?}"
    );
    let _ = std::fs::remove_file(file);
}

/// Helm and Compose render an unset value as an empty string: every `ROBOTSD_*` variable set
/// to "" reads as unset, and robotsd starts with the defaults.
#[tokio::test]
async fn every_variable_set_to_an_empty_string_reads_as_unset() {
    let help = robotsd(&["serve", "--help"], "");
    let help = String::from_utf8_lossy(&help.stdout);
    let names: std::collections::BTreeSet<&str> = help
        .split("[env: ")
        .skip(1)
        .filter_map(|rest| rest.split('=').next())
        .collect();
    assert!(names.len() >= 50, "{names:?}");
    let port = crate::support::free_port();
    let admin = crate::support::free_port();
    let mut command = Command::new(env!("CARGO_BIN_EXE_robotsd"));
    for name in &names {
        command.env(name, "");
    }
    let mut child = command
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--admin-listen", &format!("127.0.0.1:{admin}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("robotsd starts");
    let client = reqwest::Client::new();
    let mut metrics = None;
    for _ in 0..200 {
        if let Ok(response) = client
            .get(format!("http://127.0.0.1:{admin}/metrics"))
            .send()
            .await
        {
            metrics = Some(response.text().await.expect("metrics"));
            break;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut stderr = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
            panic!("robotsd exited ({status}): {stderr}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    let metrics = metrics.expect("robotsd answered");
    // The defaults: a 256 MiB cache, and no shared store (ROBOTSD_REDIS_URL="" is none).
    assert!(
        metrics.contains("robotsd_cache_capacity_bytes 268435456"),
        "{metrics}"
    );
    assert!(
        !metrics.contains("robotsd_store_up"),
        "a store was configured"
    );
}
