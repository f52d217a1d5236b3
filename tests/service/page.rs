//! `POST /v1/page` through the real binary (docs/page.md): a loopback origin serves robots.txt,
//! and the worker hands over what it fetched, as crawlers will.

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{OriginServer, Robotsd, ok, origin, post_value};

const ROBOTS: &str = "User-agent: *\nDisallow: /private\nContent-Usage: train-ai=y\n";

async fn setup() -> (OriginServer, Robotsd) {
    let site = origin(|| ok(ROBOTS)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    (site, robotsd)
}

async fn page(robotsd: &Robotsd, request: Value) -> (u16, Value) {
    post_value(&robotsd.url("/v1/page"), &request).await
}

#[tokio::test]
async fn a_pages_headers_and_tags_for_the_crawler_beside_robots_txt() {
    let (site, robotsd) = setup().await;
    let html = "<!DOCTYPE html>\n<html><head>\n<meta name=\"robots\" content=\"max-snippet:50\">\n\
        <!-- <meta name=\"robots\" content=\"noindex\"> -->\n\
        <meta name=\"tdm-reservation\" content=\"1\">\n</head>\n<body>\n\
        <meta name=\"BadBot\" content=\"noimageindex, noai\">\n</body></html>";
    let (status, answer) = page(
        &robotsd,
        json!({
            "url": site.url("/articles/1"),
            "ua": "Mozilla/5.0 (compatible; BadBot/2.1)",
            "headers": [
                ["Content-Type", "text/html; charset=utf-8"],
                ["X-Robots-Tag", "BadBot: nofollow, googlebot: noindex"],
                ["X-Robots-Tag", "unavailable_after: Thu, 03 Dec 2099 13:09:53 GMT"],
                ["Content-Usage", "train-ai=n"],
                ["tdm-policy", "https://provider.com/policies/policy.json"],
            ],
            "html": html,
        }),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["allowed"], true);
    assert_eq!(answer["check"]["rule"], Value::Null, "{answer}");
    let robots = &answer["robots"];
    assert_eq!(
        robots["index"], true,
        "googlebot's noindex is not BadBot's: {robots}"
    );
    assert_eq!(robots["follow"], false, "{robots}");
    assert_eq!(robots["max_snippet"], 50, "{robots}");
    assert_eq!(robots["image_index"], false, "{robots}");
    assert_eq!(
        robots["unavailable_after"], "2099-12-03T13:09:53Z",
        "{robots}"
    );
    assert_eq!(robots["uninterpreted"], json!(["noai"]), "{robots}");
    assert_eq!(
        robots["rules"],
        json!([
            {"rule": "nofollow", "agent": "BadBot", "header": 1},
            {"rule": "unavailable_after: Thu, 03 Dec 2099 13:09:53 GMT", "agent": null, "header": 2},
            {"rule": "max-snippet:50", "agent": null, "line": 3},
            {"rule": "noimageindex", "agent": "badbot", "line": 8},
            {"rule": "noai", "agent": "badbot", "line": 8},
        ]),
        "{robots}"
    );
    let usage = &answer["usage"];
    assert_eq!(
        usage["robots_txt"]["content_usage"]["train-ai"]["value"], "y",
        "{usage}"
    );
    assert_eq!(
        usage["content_usage_header"],
        json!({"state": "stated", "categories": {"train-ai": "n"}, "headers": [3]})
    );
    assert_eq!(
        usage["combined"]["train-ai"],
        json!({"value": "n", "sources": ["robots_txt", "header"]})
    );
    assert_eq!(
        usage["combined"]["search"],
        json!({"value": null, "sources": []})
    );
    // vocab-08's third category, and the revision named.
    assert_eq!(
        usage["combined"]["ai-use"],
        json!({"value": null, "sources": []})
    );
    assert_eq!(usage["vocabulary"], "draft-ietf-aipref-vocab-08");
    assert_eq!(
        usage["tdm"],
        json!({"reservation": true, "source": "meta",
            "policy": "https://provider.com/policies/policy.json", "policy_source": "header",
            "invalid": []})
    );
}

#[tokio::test]
async fn a_page_robots_txt_disallows_is_not_read() {
    let (site, robotsd) = setup().await;
    let (status, answer) = page(
        &robotsd,
        json!({"url": site.url("/private/x"), "ua": "Bot",
            "headers": [["X-Robots-Tag", "noindex"]]}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["allowed"], false);
    assert_eq!(answer["check"]["rule"]["pattern"], "/private");
    assert_eq!(answer["robots"], Value::Null);
    assert_eq!(answer["usage"], Value::Null);
}

#[tokio::test]
async fn a_document_in_its_own_charset() {
    let (site, robotsd) = setup().await;
    // windows-1252 bytes: é is 0xE9, not UTF-8.
    let bytes =
        b"<meta charset=\"windows-1252\"><meta name=robots content=\"noindex\"><p>caf\xe9</p>";
    let (status, answer) = page(
        &robotsd,
        json!({"url": site.url("/a"), "ua": "Bot", "headers": [],
            "html_base64": base64::engine::general_purpose::STANDARD.encode(bytes)}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["encoding"], "windows-1252");
    assert_eq!(answer["robots"]["index"], false, "{answer}");
}

#[tokio::test]
async fn bad_pages_get_a_clear_problem() {
    let (site, robotsd) = setup().await;
    let url = site.url("/a");
    let many: Vec<Value> = (0..300).map(|i| json!([format!("x-{i}"), "v"])).collect();
    for (request, status, kind) in [
        (
            json!({"url": url, "headers": []}),
            400,
            "missing-user-agent",
        ),
        (json!({"ua": "Bot"}), 400, "missing-url"),
        (
            json!({"url": url, "ua": "Bot", "extra": 1}),
            400,
            "invalid-body",
        ),
        (
            json!({"url": url, "ua": "Bot", "headers": many}),
            400,
            "invalid-page",
        ),
        (
            json!({"url": url, "ua": "Bot", "headers": [["bad name", "v"]]}),
            400,
            "invalid-page",
        ),
        (
            json!({"url": url, "ua": "Bot", "headers": [["a", "b", "c"]]}),
            400,
            "invalid-body",
        ),
        (
            json!({"url": url, "ua": "Bot", "html": "<p>", "html_base64": "PHA+"}),
            400,
            "invalid-page",
        ),
        (
            json!({"url": url, "ua": "Bot", "html_base64": "not base64!"}),
            400,
            "invalid-page",
        ),
        (
            json!({"url": "/relative", "ua": "Bot"}),
            400,
            "relative-url",
        ),
    ] {
        let (got, answer) = page(&robotsd, request.clone()).await;
        assert_eq!(got, status, "{answer}");
        assert_eq!(
            answer["type"],
            format!("urn:robotsd:problem:{kind}"),
            "{answer}"
        );
    }
    // A 40 MB document is refused from its head, before robotsd reads any of it (a client
    // still sending it would see its connection closed: the head is sent alone here).
    let mut stream = tokio::net::TcpStream::connect(robotsd.url("").trim_start_matches("http://"))
        .await
        .unwrap();
    let head = "POST /v1/page HTTP/1.1\r\nhost: robotsd\r\ncontent-type: application/json\r\n\
        content-length: 41943040\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        stream.read_to_end(&mut answer),
    )
    .await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer.contains("urn:robotsd:problem:body-too-large"),
        "{answer}"
    );
    assert!(answer.contains("4194304 bytes"), "{answer}");
    // Still answering.
    let (status, _) = page(&robotsd, json!({"url": url, "ua": "Bot"})).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_document_past_the_read_bound_is_read_in_part_and_says_so() {
    let (site, robotsd) = setup().await;
    // 3 MiB of HTML, within the 4 MiB body: a tag at its start counts, one past 2 MiB does not.
    let html = format!(
        "<meta name=robots content=nofollow>{}<meta name=robots content=noindex>",
        "<p>filler</p>".repeat(3 * 1024 * 1024 / 13)
    );
    let (status, answer) = page(
        &robotsd,
        json!({"url": site.url("/a"), "ua": "Bot", "html": html}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["document_cut"], true);
    assert_eq!(answer["robots"]["follow"], false);
    assert_eq!(answer["robots"]["index"], true);
}

#[tokio::test]
async fn every_tag_counts_whole_and_only_the_listing_is_bounded() {
    let (site, robotsd) = setup().await;
    // Issue 41: 301 robots tags, the last of them a noindex, the first with 5.5 KiB of content
    // ending in a nofollow. Read within 256 tags and 4 KiB of content, the page answered
    // `index: true, follow: true`, permissions it did not give.
    let html = format!(
        "<meta name=robots content='{}, nofollow'>{}<meta name=robots content=noindex>",
        "noarchive, ".repeat(500),
        "<meta name=robots content=all>".repeat(299)
    );
    let (status, answer) = page(
        &robotsd,
        json!({"url": site.url("/a"), "ua": "Bot", "html": html}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["robots"]["index"], false, "{answer}");
    assert_eq!(answer["robots"]["follow"], false);
    assert_eq!(
        answer["robots"]["index_rule"],
        json!({"rule": "noindex", "agent": null, "line": 1})
    );
    for gone in ["meta_tags_not_read", "meta_contents_cut", "document_cut"] {
        assert!(answer.get(gone).is_none(), "{answer}");
    }
    // The rules listed are bounded, and their count given.
    let rules = answer["robots"]["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 64);
    assert_eq!(
        answer["robots"]["rules_total"],
        500 + 1 + 299 + 1,
        "{answer}"
    );
}

#[tokio::test]
async fn a_past_unavailable_after_is_not_to_be_indexed_and_says_which_rule_and_when() {
    let (site, robotsd) = setup().await;
    let (status, answer) = page(
        &robotsd,
        json!({"url": site.url("/a"), "ua": "Bot",
            "headers": [["X-Robots-Tag", "unavailable_after: 2020-09-21"],
                ["X-Robots-Tag", "unavailable_after: 2999-01-01, noindex nofollow"]],
            "html": "<template><meta name=robots content=nosnippet></template>"}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let robots = &answer["robots"];
    assert_eq!(robots["index"], false, "{answer}");
    assert_eq!(
        robots["index_rule"],
        json!({"rule": "unavailable_after: 2020-09-21", "agent": null, "header": 0})
    );
    assert_eq!(robots["unavailable_after"], "2020-09-21T00:00:00Z");
    let at = robots["at"].as_str().expect("the time read at");
    assert!(
        at.starts_with("20") && at.ends_with('Z') && at > "2026",
        "{at}"
    );
    // Two rules without a comma: one unknown rule, as Google reads it, that says so.
    assert_eq!(
        robots["rules"][2],
        json!({"rule": "noindex nofollow", "agent": null, "header": 1, "ignored": "unknown",
            "looks_like": ["noindex", "nofollow"]})
    );
    assert_eq!(robots["follow"], true);
    // A template's content is inert: its nosnippet is not the page's.
    assert_eq!(robots["snippet"], true);
    assert_eq!(robots["rules"].as_array().unwrap().len(), 3);
}

/// Google's `nosnippet` is "a text snippet or video preview": the answer limits both, as it does
/// for `max-snippet:0`, which Google calls its equivalent (issue 60).
#[tokio::test]
async fn nosnippet_limits_the_video_preview_too() {
    let (site, robotsd) = setup().await;
    for html in [
        "<meta name=\"robots\" content=\"nosnippet\">",
        "<meta name=\"robots\" content=\"max-snippet:0, max-video-preview:30\">",
    ] {
        let (status, answer) = page(
            &robotsd,
            json!({"url": site.url("/a"), "ua": "Bot", "html": html}),
        )
        .await;
        assert_eq!(status, 200, "{answer}");
        let robots = &answer["robots"];
        assert_eq!(robots["snippet"], false, "{html}: {answer}");
        assert_eq!(robots["max_snippet"], 0, "{html}: {answer}");
        assert_eq!(robots["max_video_preview"], 0, "{html}: {answer}");
        assert_eq!(robots["max_image_preview"], json!(null), "{html}: {answer}");
    }
}

/// A loopback site answering `/robots.txt` and `/.well-known/tdmrep.json` (when it has one),
/// counting the requests for each path.
struct TdmSite {
    addr: std::net::SocketAddr,
    hits: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>>,
}

impl TdmSite {
    async fn start(tdmrep: Option<&'static str>) -> TdmSite {
        use axum::http::{StatusCode, Uri};
        use axum::response::IntoResponse;
        let hits: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>> =
            Default::default();
        let counted = std::sync::Arc::clone(&hits);
        let app = axum::Router::new().fallback(move |uri: Uri| {
            let counted = std::sync::Arc::clone(&counted);
            async move {
                let path = uri.path().to_string();
                *counted.lock().unwrap().entry(path.clone()).or_default() += 1;
                match (path.as_str(), tdmrep) {
                    ("/robots.txt", _) => ROBOTS.into_response(),
                    ("/.well-known/tdmrep.json", Some(file)) => {
                        ([("content-type", "application/json")], file).into_response()
                    }
                    _ => StatusCode::NOT_FOUND.into_response(),
                }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        TdmSite { addr, hits }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

const TDMREP: &str = r#"[
  {"location": "/directory-a/", "tdm-reservation": 1},
  {"location": "/directory-b/html/", "tdm-reservation": 1,
   "tdm-policy": "https://provider.com/policies/policy.json"},
  {"location": "/directory-b/images/*.jpg", "tdm-reservation": 0}
]"#;

const WELL_KNOWN: &str = "/.well-known/tdmrep.json";

#[tokio::test]
async fn with_tdmrep_the_origins_file_is_the_first_layer_fetched_once() {
    let site = TdmSite::start(Some(TDMREP)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks", "--tdmrep"], false).await;
    let tdm = |answer: &Value| answer["usage"]["tdm"].clone();

    // The file's second rule covers the page: reserved, with its policy.
    let (status, answer) = page(
        &robotsd,
        json!({"url": site.url("/directory-b/html/page.html"), "ua": "Bot"}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        tdm(&answer),
        json!({"reservation": true, "source": "well_known",
            "policy": "https://provider.com/policies/policy.json", "policy_source": "well_known",
            "invalid": [],
            "well_known": {"url": site.url(WELL_KNOWN), "state": "rule", "rule": 1}})
    );
    // The page's header supersedes the file's reservation; the file's policy is not in force
    // beside a `0`.
    let (_, answer) = page(
        &robotsd,
        json!({"url": site.url("/directory-b/html/other.html"), "ua": "Bot",
            "headers": [["tdm-reservation", "0"]]}),
    )
    .await;
    assert_eq!(tdm(&answer)["reservation"], false, "{answer}");
    assert_eq!(tdm(&answer)["source"], "header");
    assert_eq!(tdm(&answer)["policy"], Value::Null);
    // Issue 41: an invalid value in a later layer sets nothing, and never erases the file's
    // reservation (it answered `null` before: a permission the publisher did not give).
    let (_, answer) = page(
        &robotsd,
        json!({"url": site.url("/directory-b/html/other.html"), "ua": "Bot",
            "headers": [["tdm-reservation", "yes"]],
            "html": "<meta name=\"tdm-reservation\" content=\"true\">"}),
    )
    .await;
    assert_eq!(tdm(&answer)["reservation"], true, "{answer}");
    assert_eq!(tdm(&answer)["source"], "well_known");
    assert_eq!(tdm(&answer)["invalid"], json!(["header", "meta"]));
    // A URL no rule covers: unset.
    let (_, answer) = page(
        &robotsd,
        json!({"url": site.url("/elsewhere"), "ua": "Bot"}),
    )
    .await;
    assert_eq!(tdm(&answer)["reservation"], Value::Null, "{answer}");
    assert_eq!(tdm(&answer)["well_known"]["state"], "no_rule");
    // One fetch of the file for the three pages.
    assert_eq!(site.hits(WELL_KNOWN), 1);
    assert_eq!(
        robotsd
            .metric(r#"robotsd_tdmrep_fetches_total{outcome="document"}"#)
            .await,
        1.0
    );
    assert_eq!(robotsd.metric("robotsd_tdmrep_files").await, 1.0);
    // A page robots.txt disallows is not read: its origin's file is not asked for it.
    let (_, answer) = page(
        &robotsd,
        json!({"url": site.url("/private/x"), "ua": "Bot"}),
    )
    .await;
    assert_eq!(answer["usage"], Value::Null);
}

#[tokio::test]
async fn an_origin_without_a_file_and_robotsd_without_tdmrep() {
    let site = TdmSite::start(None).await;
    let robotsd = Robotsd::start(&["--allow-private-networks", "--tdmrep"], false).await;
    let (_, answer) = page(&robotsd, json!({"url": site.url("/a"), "ua": "Bot"})).await;
    let well_known = &answer["usage"]["tdm"]["well_known"];
    assert_eq!(well_known["state"], "missing", "{answer}");
    assert_eq!(well_known["reason"], "HTTP status 404");

    // Off by default: nothing is fetched, and the answer has no `well_known`.
    let site = TdmSite::start(Some(TDMREP)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    let (_, answer) = page(
        &robotsd,
        json!({"url": site.url("/directory-a/x"), "ua": "Bot"}),
    )
    .await;
    assert_eq!(
        answer["usage"]["tdm"]["reservation"],
        Value::Null,
        "{answer}"
    );
    assert!(
        answer["usage"]["tdm"].get("well_known").is_none(),
        "{answer}"
    );
    assert_eq!(site.hits(WELL_KNOWN), 0);
}

#[tokio::test]
async fn a_fleet_fetches_an_origins_file_once() {
    let redis = crate::redis_server::RedisServer::start().await;
    let site = TdmSite::start(Some(TDMREP)).await;
    let mut replicas = Vec::new();
    for _ in 0..2 {
        replicas.push(
            Robotsd::start(
                &[
                    "--allow-private-networks",
                    "--tdmrep",
                    "--redis-url",
                    &redis.url(),
                ],
                false,
            )
            .await,
        );
    }
    for replica in &replicas {
        let (status, answer) = page(
            replica,
            json!({"url": site.url("/directory-a/report.pdf"), "ua": "Bot"}),
        )
        .await;
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["usage"]["tdm"]["reservation"], true, "{answer}");
    }
    // The second replica took the first one's copy from Redis.
    assert_eq!(site.hits(WELL_KNOWN), 1);
    assert_eq!(site.hits("/robots.txt"), 1);
}

#[tokio::test]
async fn robots_tag_counts_beside_x_robots_tag() {
    let (site, robotsd) = setup().await;
    let (status, answer) = page(
        &robotsd,
        json!({"url": site.url("/a"), "ua": "ExampleBot/2.0",
            "headers": [["Robots-Tag", "*;nosnippet, ExampleBot;noindex, OtherBot;nofollow"],
                ["X-Robots-Tag", "max-snippet:20"]]}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let robots = &answer["robots"];
    assert_eq!(robots["index"], false, "{answer}");
    assert_eq!(robots["follow"], true);
    assert_eq!(robots["snippet"], false);
    assert_eq!(
        robots["rules"],
        json!([
            {"rule": "nosnippet", "agent": null, "header": 0},
            {"rule": "noindex", "agent": "ExampleBot", "header": 0},
            {"rule": "max-snippet:20", "agent": null, "header": 1},
        ])
    );
    assert_eq!(
        robots["index_rule"],
        json!({"rule": "noindex", "agent": "ExampleBot", "header": 0})
    );
}
