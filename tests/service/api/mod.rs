//! The HTTP service as its callers use it: a real server on 127.0.0.1:0, a real HTTP client,
//! real local origins.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use robotsd::config::Settings;
use robotsd::destination::DestinationPolicy;
use serde_json::{Value, json};

use crate::support::*;

mod batch;
mod operations;

struct Service {
    base: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: tokio::task::JoinHandle<Result<(), robotsd::server::ServeError>>,
    ready: Arc<AtomicBool>,
}

impl Service {
    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

fn settings() -> Settings {
    let defaults = Settings::default();
    Settings {
        destinations: DestinationPolicy::new(true, vec![], vec![]),
        fetch: robotsd::fetch::FetchConfig {
            total_timeout: Duration::from_secs(2),
            ..defaults.fetch.clone()
        },
        ..defaults
    }
}

async fn start(settings: Settings) -> Service {
    start_with_state(robotsd::server::state(&settings).unwrap()).await
}

async fn start_with_state(state: robotsd::api::AppState) -> Service {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let ready = Arc::clone(&state.ready);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let done = tokio::spawn(robotsd::server::run(state, listener, None, async move {
        let _ = rx.await;
    }));
    Service {
        base,
        stop: Some(tx),
        done,
        ready,
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// Status, content type and JSON body (null when the body is not JSON).
async fn parts(response: reqwest::Response) -> (u16, String, Value) {
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let body = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap_or(Value::Null);
    (status, content_type, body)
}

async fn get_json(url: &str) -> (u16, String, Value) {
    parts(client().get(url).send().await.unwrap()).await
}

async fn post_json(url: &str, body: &str) -> (u16, String, Value) {
    let request = client()
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    parts(request.send().await.unwrap()).await
}

const RULES: &str =
    "User-agent: *\nDisallow: /private\nCrawl-delay: 2\n\nUser-agent: Googlebot\nAllow: /\n";

fn encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

#[tokio::test]
async fn get_check_answers_with_rule_group_and_source() {
    let origin = origin(|| ok(RULES)).await;
    let service = start(settings()).await;
    let url = service.url(&format!(
        "/v1/check?url={}&ua=SomeBot",
        encode(&origin.url("/private/x"))
    ));
    let (status, _, body) = get_json(&url).await;
    assert_eq!(status, 200);
    assert_eq!(body["allowed"], false);
    assert_eq!(body["verdict"], "disallow");
    assert_eq!(body["reason"], "matched_rule");
    assert_eq!(
        body["rule"],
        json!({"directive": "disallow", "pattern": "/private", "line": 2})
    );
    assert_eq!(
        body["group"],
        json!({"agents": ["*"], "lines": [1], "global": true})
    );
    assert_eq!(body["crawl_delay"], 2.0);
    assert_eq!(body["robots_url"], origin.url("/robots.txt"));
    assert_eq!(body["robots"]["status"], 200);
    assert_eq!(body["robots"]["cache"], "miss");

    // A whole User-Agent header and a repeated ua.
    let ua = encode("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)");
    let url = service.url(&format!(
        "/v1/check?url={}&ua={ua}&ua=Other",
        encode(&origin.url("/private/x"))
    ));
    let (_, _, body) = get_json(&url).await;
    assert_eq!(body["allowed"], true);
    assert_eq!(body["agent"]["tokens"], json!(["Googlebot", "Other"]));
    assert_eq!(body["robots"]["cache"], "hit");
    assert_eq!(origin.hits(), 1);
}

#[tokio::test]
async fn each_error_class_is_problem_json_with_its_type() {
    let slow = origin(|| ok(RULES)).await;
    slow.set_delay(Duration::from_secs(3));
    let mut limited = settings();
    limited.limits.max_batch = 2;
    limited.limits.max_body_bytes = 1024;
    limited.limits.request_timeout = Duration::from_secs(1);
    limited.fetch.total_timeout = Duration::from_secs(5);
    let service = start(limited).await;
    let check = |query: String| service.url(&format!("/v1/check?{query}"));
    let long = format!("http://example.com/{}", "a".repeat(9000));
    let cases: Vec<(String, u16, &str)> = vec![
        (check("ua=a".into()), 400, "missing-url"),
        (check("url=http%3A%2F%2F&ua=a".into()), 400, "invalid-url"),
        (check("url=%2Fpath&ua=a".into()), 400, "relative-url"),
        (
            check("url=ftp%3A%2F%2Fexample.com%2F&ua=a".into()),
            400,
            "unsupported-scheme",
        ),
        (
            check(format!("url={}&ua=a", encode(&long))),
            400,
            "url-too-long",
        ),
        (
            check("url=http%3A%2F%2Fexample.com%2F".into()),
            400,
            "missing-user-agent",
        ),
        (
            check("url=http%3A%2F%2Fexample.com%2F&ua=1234".into()),
            400,
            "invalid-user-agent",
        ),
        (
            check("url=http%3A%2F%2Fexample.com%2F&ua=Bot%0D%0AX-Injected%3A%201".into()),
            400,
            "invalid-user-agent",
        ),
        (
            check("url=http%3A%2F%2Fexample.com%3A0%2F&ua=a".into()),
            400,
            "invalid-url",
        ),
        (
            check(format!("url={}&ua=a", encode(&slow.url("/x")))),
            504,
            "timeout",
        ),
        (service.url("/nope"), 404, "not-found"),
    ];
    for (url, want_status, want_type) in cases {
        let (status, content_type, body) = get_json(&url).await;
        assert_eq!(status, want_status, "{url}");
        assert_eq!(content_type, "application/problem+json", "{url}");
        assert_eq!(
            body["type"],
            format!("urn:robotsd:problem:{want_type}"),
            "{url}"
        );
        assert_eq!(body["status"], want_status);
        assert!(body["title"].is_string() && body["detail"].is_string());
    }
    let batch = json!({"ua": "a", "urls": ["http://a.test/", "http://b.test/", "http://c.test/"]});
    let (status, _, body) = post_json(&service.url("/v1/check"), &batch.to_string()).await;
    assert_eq!(
        (status, body["type"].as_str()),
        (413, Some("urn:robotsd:problem:batch-too-large"))
    );
    let big = json!({"ua": "a", "urls": ["x".repeat(2000)]});
    let (status, _, body) = post_json(&service.url("/v1/check"), &big.to_string()).await;
    assert_eq!(
        (status, body["type"].as_str()),
        (413, Some("urn:robotsd:problem:body-too-large"))
    );
    let (status, _, body) = post_json(&service.url("/v1/check"), "{not json").await;
    assert_eq!(
        (status, body["type"].as_str()),
        (400, Some("urn:robotsd:problem:invalid-body"))
    );
    // A body not declared as JSON is refused before it is read, whatever it holds.
    for (path, content_type) in [
        ("/v1/check", Some("text/plain")),
        ("/v1/check", None),
        ("/v1/evaluate", Some("application/x-www-form-urlencoded")),
    ] {
        let mut request = client().post(service.url(path)).body(batch.to_string());
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        let (status, media_type, body) = parts(request.send().await.unwrap()).await;
        assert_eq!(media_type, "application/problem+json");
        assert_eq!(
            (status, body["type"].as_str()),
            (415, Some("urn:robotsd:problem:unsupported-media-type")),
            "{path} {content_type:?}"
        );
    }
    let declared = client()
        .post(service.url("/v1/check"))
        .header("content-type", "application/json; charset=utf-8")
        .body(json!({"ua": "a", "urls": []}).to_string());
    assert_eq!(parts(declared.send().await.unwrap()).await.0, 200);
    let response = client().put(service.url("/v1/check")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 405);
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["type"], "urn:robotsd:problem:method-not-allowed");
}

#[tokio::test]
async fn a_refused_destination_is_422() {
    let service = start(Settings {
        destinations: DestinationPolicy::default(),
        ..settings()
    })
    .await;
    let url = service.url("/v1/check?url=http%3A%2F%2F127.0.0.1%3A9%2F&ua=a");
    let (status, content_type, body) = get_json(&url).await;
    assert_eq!(
        (status, content_type.as_str()),
        (422, "application/problem+json")
    );
    assert_eq!(body["type"], "urn:robotsd:problem:destination-not-allowed");
    // The caller learns what the operator would have to allow.
    let detail = body["detail"].as_str().expect("a detail");
    assert!(
        detail.contains("loopback") && detail.contains("--allow-private-networks"),
        "{detail}"
    );
    assert!(detail.contains("--allow-cidr"), "{detail}");
    // Cloud metadata is never opened by --allow-private-networks: only --allow-cidr is named.
    let url = service.url("/v1/check?url=http%3A%2F%2F169.254.169.254%2F&ua=a");
    let (status, _, body) = get_json(&url).await;
    assert_eq!(status, 422);
    let detail = body["detail"].as_str().expect("a detail");
    assert!(
        detail.contains("--allow-cidr") && !detail.contains("--allow-private-networks"),
        "{detail}"
    );
}

#[tokio::test]
async fn load_beyond_the_concurrency_limit_is_shed_with_retry_after() {
    let slow = origin(|| ok(RULES)).await;
    slow.set_delay(Duration::from_millis(800));
    let mut limited = settings();
    limited.limits.concurrency_limit = 1;
    let service = start(limited).await;
    let first_url = service.url(&format!("/v1/check?url={}&ua=a", encode(&slow.url("/x"))));
    let first = tokio::spawn(async move { client().get(first_url).send().await.unwrap().status() });
    // Once its robots.txt fetch reaches the slow origin, the first check holds the only slot.
    assert!(eventually(|| slow.hits() == 1).await);
    let response = client()
        .get(service.url(&format!("/v1/check?url={}&ua=a", encode(&slow.url("/y")))))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 503);
    assert_eq!(response.headers()["retry-after"], "1");
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["type"], "urn:robotsd:problem:overloaded");
    assert_eq!(first.await.unwrap().as_u16(), 200);
    // Probes are not shed.
    assert_eq!(
        client()
            .get(service.url("/livez"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
}

#[tokio::test]
async fn get_robots_shows_what_robotsd_holds() {
    let origin = origin(|| {
        ok(&format!(
            "License: https://rsl.example/l.xml\n{RULES}Sitemap: /s.xml\nunicorns: yes\n"
        ))
    })
    .await;
    let service = start(settings()).await;
    let (status, _, body) =
        get_json(&service.url(&format!("/v1/robots?url={}", encode(&origin.url("/"))))).await;
    assert_eq!(status, 200);
    assert_eq!(body["state"], "parsed");
    assert_eq!(body["origin"], origin.base());
    let groups = body["parsed"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    // A License: line (RSL) is reported with its line, and moves no rule but by its line.
    assert_eq!(
        groups[0]["rules"][0],
        json!({"directive": "disallow", "pattern": "/private", "line": 3})
    );
    assert_eq!(groups[0]["crawl_delay"], 2.0);
    assert_eq!(body["parsed"]["sitemaps"][0]["url"], "/s.xml");
    assert_eq!(
        body["parsed"]["licenses"],
        json!([{"url": "https://rsl.example/l.xml", "line": 1}])
    );
    let kinds: Vec<_> = body["parsed"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].clone())
        .collect();
    assert!(kinds.contains(&json!("unknown_key")));
    assert_eq!(body["robots"]["status"], 200);
}

#[tokio::test]
async fn post_evaluate_fetches_nothing() {
    let service = start(settings()).await;
    let request = json!({"robots_txt": "User-agent: *\nDisallow: /x\n", "ua": "a", "urls": ["/x", "https://example.com/y", "ftp://nope/"]});
    let (status, _, body) = post_json(&service.url("/v1/evaluate"), &request.to_string()).await;
    assert_eq!(status, 200);
    let results = body["results"].as_array().unwrap();
    assert_eq!(results[0]["allowed"], false);
    assert_eq!(results[0]["rule"]["line"], 2);
    assert_eq!(results[0]["robots"], Value::Null);
    assert_eq!(results[1]["allowed"], true);
    assert_eq!(results[1]["robots_url"], "https://example.com/robots.txt");
    assert_eq!(
        results[2]["error"]["type"],
        "urn:robotsd:problem:unsupported-scheme"
    );
}

#[tokio::test]
async fn unknown_and_repeated_parameters_are_refused_by_name() {
    let service = start(settings()).await;
    let site = origin(|| ok(RULES)).await;
    let url = encode(&site.url("/private/x"));
    for (query, name, repeated) in [
        (
            format!("/v1/check?url={url}&ua=a&refresh=true"),
            "refresh",
            false,
        ),
        (format!("/v1/check?url={url}&url={url}&ua=a"), "url", true),
        // An unencoded URL with a query: its second parameter lands outside it.
        (
            format!("/v1/check?ua=a&url={}?a=1&b=2", site.url("/private/x")),
            "b",
            false,
        ),
        (format!("/v1/robots?url={url}&ua=a"), "ua", false),
    ] {
        let (status, content_type, body) = get_json(&service.url(&query)).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(content_type, "application/problem+json");
        assert_eq!(
            body["type"], "urn:robotsd:problem:invalid-parameter",
            "{query}"
        );
        assert_eq!(body["parameter"], name, "{query}");
        let detail = body["detail"].as_str().unwrap();
        assert_eq!(detail.contains("more than once"), repeated, "{detail}");
    }
    assert_eq!(site.hits(), 0, "a refused request fetched");
}

#[tokio::test]
async fn a_comma_separated_ua_names_several_agents() {
    let service = start(settings()).await;
    let site = origin(|| ok("User-agent: SomeBot\nDisallow: /private\n")).await;
    let url = encode(&site.url("/private/x"));
    let (status, _, body) =
        get_json(&service.url(&format!("/v1/check?url={url}&ua=Googlebot,SomeBot"))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["agent"]["tokens"], json!(["Googlebot", "SomeBot"]));
    assert_eq!(body["allowed"], false, "SomeBot's group applies: {body}");
    // A whole User-Agent header with a comma stays one agent.
    let header = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)";
    let (status, _, body) =
        get_json(&service.url(&format!("/v1/check?url={url}&ua={}", encode(header)))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["agent"]["tokens"], json!(["Mozilla"]));
}

#[tokio::test]
async fn a_crawl_delay_is_reported_not_called_unsupported() {
    let service = start(settings()).await;
    let site = origin(|| ok("User-agent: *\nCrawl-delay: 5\nNoindex: /x\n")).await;
    let url = encode(&site.url("/"));
    let (status, _, body) = get_json(&service.url(&format!("/v1/robots?url={url}"))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["parsed"]["groups"][0]["crawl_delay"], 5.0);
    assert_eq!(
        body["parsed"]["diagnostics"],
        json!([
            {"line": 2, "kind": "reported_only", "key": "Crawl-delay"},
            {"line": 3, "kind": "unsupported_key", "key": "Noindex"},
        ])
    );
}

#[tokio::test]
async fn evaluate_takes_the_clis_names_and_exact_bytes() {
    let service = start(settings()).await;
    // "\u{feff}User-agent: *\nDisallow: /x\n" with its BOM, as base64.
    let body = json!({
        "robots_txt_b64": "77u/VXNlci1hZ2VudDogKgpEaXNhbGxvdzogL3gK",
        "user_agents": ["SomeBot"],
        "urls": ["/x", "/y"],
    });
    let (status, _, answer) = post_json(&service.url("/v1/evaluate"), &body.to_string()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["results"][0]["allowed"], false);
    assert_eq!(answer["results"][1]["allowed"], true);
    let both = json!({"robots_txt": "", "robots_txt_b64": "", "ua": "a", "url": "/"});
    let (status, _, problem) = post_json(&service.url("/v1/evaluate"), &both.to_string()).await;
    assert_eq!(status, 400);
    assert!(
        problem["detail"].as_str().unwrap().contains("not both"),
        "{problem}"
    );
}
