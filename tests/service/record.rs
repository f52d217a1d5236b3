//! The record that travels with the data (docs/page.md, "A record to keep with the page"),
//! through the real binary: whole from `POST /v1/page`, robots.txt's part from `GET /v1/check`.

use serde_json::{Value, json};
use sha2::Digest as _;

use crate::support::{OriginServer, Robotsd, json_of, ok, origin, post_value};

const ROBOTS: &str = "User-agent: *\nDisallow: /private\nContent-Usage: train-ai=y\n";

async fn setup() -> (OriginServer, Robotsd) {
    let site = origin(|| ok(ROBOTS)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    (site, robotsd)
}

async fn check(robotsd: &Robotsd, query: &[(&str, &str)]) -> (u16, Value) {
    let url = url::Url::parse_with_params(&robotsd.url("/v1/check"), query).expect("a URL");
    let response = reqwest::get(url).await.expect("robotsd answers");
    (response.status().as_u16(), json_of(response).await)
}

/// The SHA-256 of what the origin served, written independently of robotsd.
fn served_sha256() -> String {
    sha2::Sha256::digest(ROBOTS.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `at` is the time of the answer: RFC 3339 in UTC, to the second, within the test's run.
fn assert_at_now(at: &Value, before: std::time::SystemTime) {
    let at = at.as_str().expect("at is a string");
    let at = humantime::parse_rfc3339(at).unwrap_or_else(|e| panic!("{at}: {e}"));
    let slack = std::time::Duration::from_secs(1);
    assert!(
        at + slack >= before && at <= std::time::SystemTime::now(),
        "{at:?}"
    );
}

#[tokio::test]
async fn a_record_to_keep_beside_the_page_when_asked_for() {
    let (site, robotsd) = setup().await;
    let url = site.url("/a");
    // Not asked for: absent.
    let (_, answer) = post_value(&robotsd.url("/v1/page"), &json!({"url": url, "ua": "Bot"})).await;
    assert!(answer.get("record").is_none(), "{answer}");
    let (status, answer) = post_value(
        &robotsd.url("/v1/page"),
        &json!({"url": url, "ua": "Bot", "record": true,
            "headers": [["Content-Usage", "train-ai=n"], ["X-Robots-Tag", "noindex"]],
            "html": "<meta name=\"tdm-reservation\" content=\"1\">"}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let record = &answer["record"];
    assert_eq!(record["format"], "robotsd-record/1");
    assert_eq!(record["url"], url);
    assert_eq!(record["robotsd"], env!("CARGO_PKG_VERSION"));
    assert_eq!(record["vocabulary"], "draft-ietf-aipref-vocab-08");
    assert_eq!(record["at"], answer["robots"]["at"]);
    assert_eq!(
        record["robots_txt"],
        json!({"allowed": true, "sha256": served_sha256(), "rule": null,
            "usage": {"content_usage": {"train-ai": {"value": "y", "line": 3}},
                "content_signal": null}})
    );
    assert_eq!(record["robots_txt"]["usage"], answer["check"]["usage"]);
    assert_eq!(
        record["robots"],
        json!({"index": false, "follow": true, "snippet": true,
            "index_rule": {"rule": "noindex", "agent": null, "header": 1}})
    );
    let usage = &record["usage"];
    assert_eq!(usage["content_usage_header"], json!({"train-ai": "n"}));
    assert_eq!(usage["combined"], answer["usage"]["combined"]);
    assert_eq!(
        usage["combined"]["train-ai"],
        json!({"value": "n", "sources": ["robots_txt", "header"]})
    );
    assert_eq!(
        usage["tdm"],
        json!({"reservation": true, "source": "meta", "policy": null})
    );
    // A URL robots.txt disallows: the rule that did, and nothing read of the page.
    let (_, answer) = post_value(
        &robotsd.url("/v1/page"),
        &json!({"url": site.url("/private/x"), "ua": "Bot", "record": true}),
    )
    .await;
    let record = &answer["record"];
    assert_eq!(record["robots_txt"]["allowed"], false, "{answer}");
    assert_eq!(record["robots_txt"]["rule"]["line"], 2);
    assert_eq!(record["robots_txt"]["usage"], Value::Null);
    assert_eq!(record["robots"], Value::Null);
    assert_eq!(record["usage"], Value::Null);
}

#[tokio::test]
async fn a_check_gives_robots_txts_part_of_the_record_when_asked_for() {
    let (site, robotsd) = setup().await;
    let url = site.url("/a");
    let before = std::time::SystemTime::now();
    // Not asked for, or asked not to: absent, and the answer otherwise the same.
    let (status, plain) = check(&robotsd, &[("url", &url), ("ua", "Bot")]).await;
    assert_eq!(status, 200, "{plain}");
    assert!(plain.get("record").is_none(), "{plain}");
    let (_, declined) = check(
        &robotsd,
        &[("url", &url), ("ua", "Bot"), ("record", "false")],
    )
    .await;
    assert!(declined.get("record").is_none(), "{declined}");

    let (status, answer) = check(
        &robotsd,
        &[("url", &url), ("ua", "Bot"), ("record", "true")],
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let record = answer["record"].clone();
    let mut rest = answer.clone();
    rest.as_object_mut().unwrap().remove("record");
    let mut plain = plain;
    // The only difference besides the record: the second check was a cache hit.
    plain["robots"]["cache"] = rest["robots"]["cache"].clone();
    assert_eq!(rest, plain, "the record is added, nothing else changes");
    assert_eq!(record["format"], "robotsd-record/1");
    assert_eq!(record["url"], url);
    assert_eq!(record["robotsd"], env!("CARGO_PKG_VERSION"));
    assert_eq!(record["vocabulary"], "draft-ietf-aipref-vocab-08");
    assert_at_now(&record["at"], before);
    assert_eq!(
        record["robots_txt"],
        json!({"allowed": true, "sha256": served_sha256(), "rule": null,
            "usage": {"content_usage": {"train-ai": {"value": "y", "line": 3}},
                "content_signal": null}})
    );
    // The page is not read by a check.
    assert_eq!(record["robots"], Value::Null);
    assert_eq!(record["usage"], Value::Null);

    // Disallowed: the deciding rule, and no preferences implied.
    let private = site.url("/private/x");
    let (_, answer) = check(
        &robotsd,
        &[("url", &private), ("ua", "Bot"), ("record", "true")],
    )
    .await;
    assert_eq!(
        answer["record"]["robots_txt"],
        json!({"allowed": false, "sha256": served_sha256(),
            "rule": {"directive": "disallow", "pattern": "/private", "line": 2}, "usage": null})
    );

    // With the verdict only, the record too.
    let (status, answer) = check(
        &robotsd,
        &[
            ("url", &private),
            ("ua", "Bot"),
            ("view", "verdict"),
            ("record", "true"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["allowed"], false);
    assert_eq!(
        answer["record"]["robots_txt"]["rule"]["line"], 2,
        "{answer}"
    );
    let members: Vec<&String> = answer.as_object().unwrap().keys().collect();
    assert_eq!(members, ["allowed", "reason", "record"]);
}

#[tokio::test]
async fn a_records_parameter_is_true_or_false_and_given_once() {
    let (site, robotsd) = setup().await;
    let url = site.url("/a");
    for (record, expected) in [
        (&["yes"][..], "must be one of: true, false"),
        (&["true", "true"][..], "is given more than once"),
    ] {
        let mut query = vec![("url", url.as_str()), ("ua", "Bot")];
        query.extend(record.iter().map(|value| ("record", *value)));
        let (status, answer) = check(&robotsd, &query).await;
        assert_eq!(status, 400, "{answer}");
        assert!(
            answer["type"]
                .as_str()
                .unwrap_or_default()
                .ends_with("invalid-parameter"),
            "{answer}"
        );
        let detail = answer["detail"].as_str().unwrap_or_default();
        assert!(
            detail.contains("`record`") && detail.contains(expected),
            "{answer}"
        );
    }
}
