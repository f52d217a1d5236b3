//! Answers bounded whatever the file holds (`docs/behaviour.md`, "Bounded answers"), tried as a
//! hostile site would: the real binary, a loopback origin serving the files, and the answers'
//! sizes and the process's resident memory measured where a caller and an operator see them.

use serde_json::{Value, json};

use crate::support::*;

/// A robots.txt of 36,000 `user-agent: a` lines in one group and one rule: 504,000 bytes, within
/// the 500 KiB robotsd keeps.
fn many_agents() -> String {
    let mut robots = "user-agent: a\n".repeat(36_000);
    robots.push_str("disallow: /private\n");
    robots
}

/// A robots.txt made to make every part of a check answer as large as it can: agent values and
/// a matching pattern at the line limit, full of characters JSON escapes, and usage lines with
/// long and many labels.
fn worst_case() -> String {
    let long = "\u{1}".repeat(16_000);
    let mut robots = String::new();
    for _ in 0..20 {
        robots.push_str(&format!("user-agent: a{long}\n"));
    }
    robots.push_str(&format!("allow: /{}\n", "*".repeat(16_000)));
    let labels: Vec<String> = (0..200).map(|i| format!("k{i:0>60}=n")).collect();
    for chunk in labels.chunks(50) {
        robots.push_str(&format!("content-usage: {}\n", chunk.join(", ")));
    }
    let long_label = format!("{}=yes", "x".repeat(1_000));
    robots.push_str(&format!("content-signal: search=yes, {long_label}\n"));
    robots
}

async fn get(robotsd: &Robotsd, url: &str) -> (usize, Value) {
    let encoded: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
    let response = reqwest::get(robotsd.url(&format!("/v1/check?url={encoded}&ua=a")))
        .await
        .expect("answered");
    assert_eq!(response.status(), 200);
    let body = response.bytes().await.expect("body");
    (body.len(), serde_json::from_slice(&body).expect("JSON"))
}

async fn post(url: &str, request: &Value) -> (usize, Value) {
    let (status, body) = post_bytes(url, request).await;
    assert_eq!(status, 200);
    (body.len(), serde_json::from_slice(&body).expect("JSON"))
}

#[tokio::test]
async fn a_group_of_36000_agents_answers_16_and_counts_the_rest() {
    let robots = many_agents();
    let site = origin(move || ok(&robots)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    let (bytes, answer) = get(&robotsd, &site.url("/private/x")).await;
    assert!(bytes <= 64 * 1024, "{bytes} bytes");
    assert_eq!(answer["allowed"], false, "{answer}");
    let group = &answer["group"];
    assert_eq!(group["agents"].as_array().unwrap().len(), 16, "{group}");
    assert_eq!(group["lines"].as_array().unwrap().len(), 16, "{group}");
    assert_eq!(group["lines"][15], 16);
    assert_eq!(group["agents_total"], 36_000);
    assert_eq!(group["truncated"], true);

    // A batch of 200 of them, and its resident memory.
    let before = resident_bytes(robotsd.pid());
    let urls: Vec<String> = (0..200).map(|i| site.url(&format!("/p/{i}"))).collect();
    let (bytes, batch) = post(&robotsd.url("/v1/check"), &json!({"ua": "a", "urls": urls})).await;
    let grown = resident_bytes(robotsd.pid()).saturating_sub(before);
    assert!(bytes <= 200 * 2 * 1024, "{bytes} bytes");
    assert_eq!(batch["results"].as_array().unwrap().len(), 200);
    assert_eq!(batch["results"][199]["group"]["agents_total"], 36_000);
    assert!(batch.get("truncated").is_none(), "not cut: {bytes} bytes");
    assert!(grown <= 100 << 20, "resident memory grew by {grown} bytes");
    assert_eq!(site.hits(), 1);
}

#[tokio::test]
async fn every_part_of_a_check_answer_is_cut_to_its_bound_and_says_so() {
    let robots = worst_case();
    assert!(robots.len() <= 512_000, "{}", robots.len());
    let site = origin(move || ok(&robots)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    let (bytes, answer) = get(&robotsd, &site.url("/page")).await;
    assert!(bytes <= 64 * 1024, "{bytes} bytes");
    assert_eq!(answer["allowed"], true, "{answer}");

    let rule = &answer["rule"];
    assert_eq!(rule["pattern"].as_str().unwrap().len(), 2_048, "{rule}");
    assert_eq!(rule["truncated"], true);

    let group = &answer["group"];
    let agents = group["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 16);
    for agent in agents {
        // Each cut at 256 bytes of JSON: "a" and 42 control characters of 6 bytes each.
        assert_eq!(agent.as_str().unwrap().len(), 1 + 42, "{agent}");
    }
    assert_eq!(group["agents_total"], 20);
    assert_eq!(group["truncated"], true);

    let usage = &answer["usage"];
    assert_eq!(usage["content_usage"].as_object().unwrap().len(), 16);
    assert_eq!(usage["content_usage_total"], 200);
    // The 1,000-byte label is left out and counted; `search` is shown.
    assert_eq!(usage["content_signal"]["search"]["value"], "y", "{usage}");
    assert_eq!(usage["content_signal"].as_object().unwrap().len(), 1);
    assert_eq!(usage["content_signal_total"], 2);
    assert_eq!(usage["truncated"], true);

    // A batch of 1,000 checks of this file stays within the batch's bound, in full answers.
    let before = resident_bytes(robotsd.pid());
    let urls: Vec<String> = (0..1_000).map(|i| site.url(&format!("/p/{i}"))).collect();
    let (bytes, batch) = post(&robotsd.url("/v1/check"), &json!({"ua": "a", "urls": urls})).await;
    let grown = resident_bytes(robotsd.pid()).saturating_sub(before);
    assert!(bytes <= 8 << 20, "{bytes} bytes");
    let results = batch["results"].as_array().unwrap();
    assert_eq!(results.len(), 1_000);
    assert!(results.iter().all(|r| r["allowed"] == true));
    assert!(grown <= 64 << 20, "resident memory grew by {grown} bytes");
}

#[tokio::test]
async fn evaluate_answers_within_the_same_bounds() {
    let robotsd = Robotsd::start(&[], false).await;
    let urls: Vec<String> = (0..1_000)
        .map(|i| format!("https://example.com/private/{i}"))
        .collect();
    let (bytes, answer) = post(
        &robotsd.url("/v1/evaluate"),
        &json!({"robots_txt": many_agents(), "ua": "a", "urls": urls}),
    )
    .await;
    // 36,000 agents listed in each of 1,000 answers would be 350 MB.
    assert!(bytes <= 2 << 20, "{bytes} bytes");
    let results = answer["results"].as_array().unwrap();
    assert_eq!(results.len(), 1_000);
    assert_eq!(results[999]["allowed"], false);
    assert_eq!(results[999]["group"]["agents_total"], 36_000);
}

#[tokio::test]
async fn a_batch_past_its_bound_answers_verdicts_and_says_so() {
    // Each answer carries a rule pattern of 2 KiB and 16 agents of 256 bytes: over 6 KiB, so
    // 1,000 of them pass the 8 MiB bound.
    let long = "\u{1}".repeat(16_000);
    let mut robots = String::new();
    for _ in 0..16 {
        robots.push_str(&format!("user-agent: a{long}\n"));
    }
    robots.push_str(&format!("allow: /{}\n", "*".repeat(16_000)));
    robots.push_str(&format!("allow: /{}\n", "x".repeat(16_000)));
    let site = origin(move || ok(&robots)).await;
    // The URLs alone are 4 MB.
    let robotsd = Robotsd::start(
        &["--allow-private-networks", "--max-body-bytes", "8MiB"],
        false,
    )
    .await;
    let urls: Vec<String> = (0..1_000)
        .map(|i| site.url(&format!("/{}{i}", "x".repeat(4_000))))
        .collect();
    let (bytes, batch) = post(&robotsd.url("/v1/check"), &json!({"ua": "a", "urls": urls})).await;
    assert!(bytes <= 8 << 20, "{bytes} bytes");
    assert_eq!(batch["truncated"], true);
    let results = batch["results"].as_array().unwrap();
    assert_eq!(results.len(), 1_000);
    let full = results
        .iter()
        .take_while(|r| r.get("rule").is_some())
        .count();
    assert!(full > 100, "{full} full answers");
    // From the first verdict on, every answer is a verdict, and every verdict is right.
    for r in &results[full..] {
        assert_eq!(r.as_object().unwrap().len(), 2, "{r}");
        assert_eq!(r["allowed"], true);
        assert_eq!(r["reason"], "matched_rule");
    }
}
