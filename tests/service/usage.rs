//! AI usage preferences through the service, as a crawler and a site owner see them: the real
//! binary, a loopback origin whose robots.txt has `Content-Usage` and `Content-Signal` lines,
//! and every answer that reports them (`docs/usage.md`).

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::*;

/// attach-05's example file with a content signal, vocab-08's `ai-use`, a label of an older
/// vocabulary (`train-genai`), and a line that does not parse.
const ROBOTS: &str = "User-agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n, ai-use=n, train-genai=n
Content-Usage: /ai-ok/ train-ai=y
Content-Signal: search=yes, ai-train=no

User-agent: ExampleBot
Allow: /
Content-Usage: train-ai=y, Search=n
";

fn encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

async fn get(url: &str) -> (u16, Value) {
    let response = reqwest::get(url).await.expect("answered");
    let status = response.status().as_u16();
    (status, json_of(response).await)
}

async fn check(robotsd: &Robotsd, site: &OriginServer, path: &str, ua: &str) -> Value {
    let url = encode(&site.url(path));
    let (status, answer) = get(&robotsd.url(&format!("/v1/check?url={url}&ua={ua}"))).await;
    assert_eq!(status, 200, "{answer}");
    answer
}

fn sha256_hex(body: &str) -> String {
    Sha256::digest(body.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test]
async fn a_check_reports_the_preferences_of_the_url_and_names_the_copy() {
    let site = origin(|| ok(ROBOTS)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], true).await;

    let answer = check(&robotsd, &site, "/test", "OtherBot").await;
    assert_eq!(answer["allowed"], true);
    assert_eq!(
        answer["usage"],
        json!({
            "content_usage": {
                "ai-use": {"value": "n", "line": 4},
                "train-ai": {"value": "n", "line": 4},
                "train-genai": {"value": "n", "line": 4},
            },
            "content_signal": {
                "ai-train": {"value": "n", "line": 6},
                "search": {"value": "y", "line": 6},
            },
        })
    );
    // The copy the answer came from, by the SHA-256 of the bytes served.
    assert_eq!(answer["robots"]["sha256"], sha256_hex(ROBOTS), "{answer}");

    // Table 1 of the draft: the longer path decides, and a disallowed URL has no preferences.
    let ok = check(&robotsd, &site, "/ai-ok/test", "OtherBot").await;
    assert_eq!(
        ok["usage"]["content_usage"],
        json!({"train-ai": {"value": "y", "line": 5}})
    );
    assert_eq!(ok["usage"]["content_signal"]["ai-train"]["value"], "n");
    let never = check(&robotsd, &site, "/never/test", "OtherBot").await;
    assert_eq!(never["allowed"], false);
    assert_eq!(never["usage"], Value::Null);
    // ExampleBot's group states nothing that parses.
    let example = check(&robotsd, &site, "/test", "ExampleBot").await;
    assert_eq!(example["usage"], Value::Null, "{example}");
    assert_eq!(site.hits(), 1);

    // A batch carries them item by item.
    let batch = json!({"ua": "OtherBot", "urls": [site.url("/ai-ok/x"), site.url("/never/x")]});
    let (status, answers) = post_value(&robotsd.url("/v1/check"), &batch).await;
    assert_eq!(status, 200, "{answers}");
    assert_eq!(
        answers["results"][0]["usage"]["content_usage"]["train-ai"]["value"],
        "y"
    );
    assert_eq!(answers["results"][1]["usage"], Value::Null);
    // A verdict-only answer carries no preferences, and is not counted as one that did.
    for view in [
        reqwest::get(robotsd.url(&format!(
            "/v1/check?view=verdict&ua=OtherBot&url={}",
            site.url("/test")
        )))
        .await
        .unwrap(),
        reqwest::Client::new()
            .post(robotsd.url("/v1/check?view=verdict"))
            .header("content-type", "application/json")
            .body(json!({"ua": "OtherBot", "urls": [site.url("/test")]}).to_string())
            .send()
            .await
            .unwrap(),
    ] {
        assert_eq!(view.status(), 200);
        assert!(!view.text().await.unwrap().contains("usage"));
    }

    // Counted by closed labels: the older vocabulary's label is `other`.
    let series = |source: &str, category: &str, value: &str| {
        format!(
            "robotsd_usage_preferences_total{{category=\"{category}\",source=\"{source}\",value=\"{value}\"}}"
        )
    };
    assert_eq!(
        robotsd
            .metric(&series("content-usage", "train-ai", "n"))
            .await,
        1.0
    );
    assert_eq!(
        robotsd
            .metric(&series("content-usage", "train-ai", "y"))
            .await,
        2.0
    );
    assert_eq!(
        robotsd.metric(&series("content-usage", "other", "n")).await,
        1.0
    );
    assert_eq!(
        robotsd
            .metric(&series("content-signal", "search", "y"))
            .await,
        3.0
    );
}

#[tokio::test]
async fn a_file_without_preferences_answers_null() {
    let body = "User-agent: *\nDisallow: /private\n";
    let site = origin(move || ok(body)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    let answer = check(&robotsd, &site, "/public", "SomeBot").await;
    assert_eq!(answer["usage"], Value::Null);
    assert_eq!(answer["robots"]["sha256"], sha256_hex(body));
    // No file, no copy to name.
    let none = origin(|| status(404)).await;
    let answer = check(&robotsd, &none, "/x", "SomeBot").await;
    assert_eq!(answer["reason"], "no_robots_txt");
    assert_eq!(answer["robots"]["sha256"], Value::Null);
    assert!(answer["robots"]["fetched_at"].is_string());
}

#[tokio::test]
async fn the_robots_view_lists_every_preference_line_with_its_findings() {
    let site = origin(|| ok(ROBOTS)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    let url = encode(&site.url("/"));
    let (status, report) = get(&robotsd.url(&format!("/v1/robots?url={url}"))).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["robots"]["sha256"], sha256_hex(ROBOTS));
    let groups = &report["parsed"]["groups"];
    assert_eq!(
        groups[0]["usage"],
        json!([
            {"source": "content-usage", "line": 4, "path": null,
             "statement": "train-ai=n, ai-use=n, train-genai=n",
             "preferences": {"ai-use": "n", "train-ai": "n", "train-genai": "n"}},
            {"source": "content-usage", "line": 5, "path": "/ai-ok/", "statement": "train-ai=y",
             "preferences": {"train-ai": "y"}},
            {"source": "content-signal", "line": 6, "path": null, "statement": "search=yes, ai-train=no",
             "preferences": {"ai-train": "n", "search": "y"}},
        ])
    );
    assert_eq!(
        groups[1]["usage"],
        json!([{"source": "content-usage", "line": 10, "path": null,
                "statement": "train-ai=y, Search=n", "preferences": {}}])
    );
    let diagnostics: Vec<(u64, &str, Option<&str>)> = report["parsed"]["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            (
                d["line"].as_u64().unwrap(),
                d["kind"].as_str().unwrap(),
                d["key"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        diagnostics,
        [
            (4, "reported_only", Some("Content-Usage")),
            (4, "unknown_preference_label", Some("train-genai")),
            (5, "reported_only", Some("Content-Usage")),
            (6, "reported_only", Some("Content-Signal")),
            (10, "reported_only", Some("Content-Usage")),
            (10, "preference_syntax", None),
        ]
    );
}

#[tokio::test]
async fn the_tester_endpoint_reports_them_for_an_edited_file() {
    let robotsd = Robotsd::start(&[], false).await;
    let request = json!({
        "robots_txt": "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /blog/ train-ai=y\n",
        "ua": "SomeBot",
        "urls": ["https://example.com/blog/1", "https://example.com/shop"],
    });
    let (status, answer) = post_value(&robotsd.url("/v1/evaluate"), &request).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["results"][0]["usage"],
        json!({"content_usage": {"train-ai": {"value": "y", "line": 3}}, "content_signal": null})
    );
    assert_eq!(
        answer["results"][1]["usage"]["content_usage"]["train-ai"]["line"],
        2
    );
    // Nothing was fetched: no copy to name.
    assert_eq!(answer["results"][0]["robots"], Value::Null);
}

/// draft-kelley-aipref-training-preference-signal-00 keys ordinary groups on per-purpose policy
/// tokens. robotsd does not turn them into `usage` (they are groups, not preference lines): a
/// crawler asks for the token as an agent, and `group.global` says whether the file has a group
/// for it at all (`docs/usage.md`).
#[tokio::test]
async fn a_per_purpose_policy_token_is_asked_as_an_agent() {
    let robotsd = Robotsd::start(&[], false).await;
    let evaluate = |robots_txt: &'static str, url: &'static str| {
        let request = json!({"robots_txt": robots_txt, "ua": "__usage_ai-training", "url": url});
        let endpoint = robotsd.url("/v1/evaluate");
        async move {
            let (status, answer) = post_value(&endpoint, &request).await;
            assert_eq!(status, 200, "{answer}");
            answer["results"][0].clone()
        }
    };
    let with_group =
        "User-agent: *\nAllow: /\n\nUser-agent: __usage_ai-training\nDisallow: /members/\n";
    let members = evaluate(with_group, "/members/post").await;
    assert_eq!(members["allowed"], false, "{members}");
    assert_eq!(members["agent"]["tokens"], json!(["__usage_ai-training"]));
    assert_eq!(members["group"]["global"], false);
    assert_eq!(members["usage"], Value::Null);
    let public = evaluate(with_group, "/public").await;
    assert_eq!(
        (public["allowed"].clone(), public["group"]["global"].clone()),
        (json!(true), json!(false))
    );
    // No group for the token: the `*` group answers, and `global` says so.
    let without = evaluate("User-agent: *\nDisallow: /members/\n", "/members/post").await;
    assert_eq!(without["group"]["global"], true, "{without}");
}
