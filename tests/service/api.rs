//! The HTTP service as its callers use it: a real server on 127.0.0.1:0, a real HTTP client,
//! real local origins.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use robotsd::config::Settings;
use robotsd::destination::DestinationPolicy;
use serde_json::{Value, json};

use crate::support::*;

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
async fn post_check_answers_in_order_with_errors_in_their_slots() {
    let origin = origin(|| ok(RULES)).await;
    let service = start(settings()).await;
    let batch = json!({"checks": [
        {"url": origin.url("/private/1"), "ua": "a"},
        {"url": "not a url", "ua": "a"},
        {"url": origin.url("/public"), "ua": ["Googlebot", "b"]},
    ]});
    let (status, _, body) = post_json(&service.url("/v1/check"), &batch.to_string()).await;
    assert_eq!(status, 200);
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["allowed"], false);
    assert_eq!(
        results[1]["error"]["type"],
        "urn:robotsd:problem:relative-url"
    );
    assert_eq!(results[2]["allowed"], true);
    let simple = json!({"ua": "a", "urls": [origin.url("/private"), origin.url("/ok")]});
    let (_, _, body) = post_json(&service.url("/v1/check"), &simple.to_string()).await;
    let verdicts: Vec<_> = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["verdict"].clone())
        .collect();
    assert_eq!(verdicts, [json!("disallow"), json!("allow")]);
    assert_eq!(origin.hits(), 1);
}

#[tokio::test]
async fn get_robots_shows_what_robotsd_holds() {
    let origin = origin(|| ok(&format!("{RULES}Sitemap: /s.xml\nunicorns: yes\n"))).await;
    let service = start(settings()).await;
    let (status, _, body) =
        get_json(&service.url(&format!("/v1/robots?url={}", encode(&origin.url("/"))))).await;
    assert_eq!(status, 200);
    assert_eq!(body["state"], "parsed");
    assert_eq!(body["origin"], origin.base());
    let groups = body["parsed"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!(
        groups[0]["rules"][0],
        json!({"directive": "disallow", "pattern": "/private", "line": 2})
    );
    assert_eq!(groups[0]["crawl_delay"], 2.0);
    assert_eq!(body["parsed"]["sitemaps"][0]["url"], "/s.xml");
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
async fn probes_answer_and_metrics_move() {
    let origin = origin(|| ok(RULES)).await;
    let service = start(settings()).await;
    for path in ["/livez", "/healthz", "/readyz"] {
        assert_eq!(
            client()
                .get(service.url(path))
                .send()
                .await
                .unwrap()
                .status(),
            200,
            "{path}"
        );
    }
    let metrics = || async {
        client()
            .get(service.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let before = metrics().await;
    for name in [
        "robotsd_build_info",
        "robotsd_cache_entries",
        "robotsd_cache_weight_bytes",
        "robotsd_cache_evictions_total",
        "robotsd_origins_in_backoff",
        "robotsd_robots_fetches_in_flight",
        "process_resident_memory_bytes",
    ] {
        assert!(before.contains(name), "{name} missing");
    }
    get_json(&service.url(&format!(
        "/v1/check?url={}&ua=a",
        encode(&origin.url("/private/secret"))
    )))
    .await;
    let after = metrics().await;
    assert!(
        after.contains(r#"robotsd_checks_total{reason="matched_rule",verdict="disallow"} 1"#),
        "{after}"
    );
    assert!(after.contains(r#"robotsd_cache_lookups_total{result="miss"} 1"#));
    assert!(
        after.contains(
            r#"robotsd_http_requests_total{method="GET",route="/v1/check",status="200"} 1"#
        )
    );
    assert!(
        after.contains("robotsd_robots_fetch_duration_seconds_count 1"),
        "{after}"
    );
    assert!(after.contains(r#"robotsd_robots_fetches_total{outcome="parsed"} 1"#));
    assert!(after.contains("robotsd_cache_entries 1"));
    assert!(
        !after.contains("secret") && !after.contains("127.0.0.1"),
        "no URL in labels"
    );
}

#[tokio::test]
async fn docs_and_openapi_are_served() {
    let service = start(settings()).await;
    let (status, _, body) = get_json(&service.url("/openapi.json")).await;
    assert_eq!(status, 200);
    assert!(body["openapi"].as_str().unwrap().starts_with("3.1"));
    assert!(body["paths"]["/v1/check"]["get"].is_object());
    let page = client().get(service.url("/docs/")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(
        page.text()
            .await
            .unwrap()
            .to_lowercase()
            .contains("swagger")
    );
    // An unknown asset under the reference is a problem like any unknown path.
    let (status, content_type, body) = get_json(&service.url("/docs/nope.js")).await;
    assert_eq!(status, 404);
    assert_eq!(content_type, "application/problem+json");
    assert_eq!(body["type"], "urn:robotsd:problem:not-found");
    assert_eq!(body["detail"], "no such resource: /docs/nope.js");
}

#[tokio::test]
async fn shutdown_drains_a_request_in_flight() {
    let slow = origin(|| ok(RULES)).await;
    slow.set_delay(Duration::from_millis(700));
    let mut service = start(settings()).await;
    let url = service.url(&format!(
        "/v1/check?url={}&ua=a",
        encode(&slow.url("/private"))
    ));
    let in_flight = tokio::spawn(async move { client().get(url).send().await.unwrap() });
    // In flight: its robots.txt fetch has reached the slow origin.
    assert!(eventually(|| slow.hits() == 1).await);
    service.stop.take().unwrap().send(()).unwrap();
    assert!(
        eventually(|| !service.ready.load(Ordering::SeqCst)).await && !in_flight.is_finished(),
        "readiness turns off first, while the request is still in flight"
    );
    let response = in_flight.await.unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["allowed"], false);
    tokio::time::timeout(Duration::from_secs(5), service.done)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        client()
            .get(format!("{}/livez", service.base))
            .send()
            .await
            .is_err(),
        "no new connections"
    );
}

#[test]
fn committed_openapi_matches_the_code() {
    let generated = robotsd::api::openapi().to_pretty_json().unwrap() + "\n";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi/openapi.json");
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "openapi/openapi.json is out of date: run `UPDATE_OPENAPI=1 cargo test --test service api::committed_openapi` and review the diff"
    );
}

#[tokio::test]
async fn a_declared_oversized_body_is_refused_at_once_without_100_continue() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let service = start(settings()).await;
    let address = service.url("").trim_start_matches("http://").to_string();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    // Ten megabytes announced, none sent: the answer must not wait for them.
    stream
        .write_all(
            b"POST /v1/check HTTP/1.1\r\nHost: robotsd\r\ncontent-type: application/json\r\n\
              content-length: 10000000\r\nexpect: 100-continue\r\n\r\n",
        )
        .await
        .unwrap();
    let mut head = vec![0u8; 4096];
    let read = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut head))
        .await
        .expect("answered before any body byte was sent")
        .unwrap();
    let head = String::from_utf8_lossy(&head[..read]).to_string();
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
    assert!(!head.contains("100 Continue"), "{head}");
    assert!(head.contains("application/problem+json"), "{head}");
}

#[tokio::test]
async fn a_batch_answers_by_its_deadline_and_keeps_its_good_answers() {
    let mut settings = settings();
    settings.limits.request_timeout = Duration::from_secs(2);
    settings.limits.batch_concurrency = 4;
    // Origins slower than the batch: their fetches outlive it.
    settings.fetch.total_timeout = Duration::from_secs(10);
    let service = start(settings).await;
    let healthy = origin(|| ok(RULES)).await;
    let held = origin(|| ok(RULES)).await;
    let mut hanging = Vec::new();
    for _ in 0..12 {
        let (addr, _) = raw_server(|stream| async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            drop(stream);
        })
        .await;
        hanging.push(format!("http://{addr}/private/x"));
    }
    // One origin robotsd already holds.
    let (status, _, _) =
        get_json(&service.url(&format!("/v1/check?url={}&ua=a", encode(&held.url("/x"))))).await;
    assert_eq!(status, 200);

    let mut checks: Vec<Value> = hanging
        .iter()
        .map(|url| json!({"url": url, "ua": "a"}))
        .collect();
    checks.push(json!({"url": healthy.url("/private/x"), "ua": "a"}));
    checks.push(json!({"url": held.url("/private/x"), "ua": "a"}));
    checks.push(json!({"url": held.url("/ok")}));
    let started = std::time::Instant::now();
    let (status, _, body) = post_json(
        &service.url("/v1/check"),
        &json!({ "checks": checks }).to_string(),
    )
    .await;
    let took = started.elapsed();
    assert_eq!(status, 200, "{body}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 15);
    // The first four hanging origins were being fetched at the deadline; the rest were not
    // reached, nor was the healthy one behind them.
    for (i, result) in results[..13].iter().enumerate() {
        assert_eq!(
            result["error"]["type"], "urn:robotsd:problem:batch-deadline",
            "item {i}: {result}"
        );
        let detail = result["error"]["detail"].as_str().unwrap();
        assert_eq!(
            detail.contains("the fetch goes on"),
            i < 4,
            "item {i}: {detail}"
        );
    }
    // What robotsd holds is answered after the deadline too.
    assert_eq!(results[13]["allowed"], false, "{}", results[13]);
    // An item without `ua` fails alone.
    assert_eq!(
        results[14]["error"]["type"], "urn:robotsd:problem:missing-user-agent",
        "{}",
        results[14]
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
async fn a_malformed_batch_is_explained_in_the_callers_terms() {
    let service = start(settings()).await;
    for (body, says) in [
        (r#"{"ua": "a", "url": "https://a.example/"}"#, "not `url`"),
        (
            r#"[{"url": "https://a.example/", "ua": "a"}]"#,
            "a JSON array",
        ),
        (r#"{"urls": ["https://a.example/"]}"#, "missing field `ua`"),
    ] {
        let (status, _, problem) = post_json(&service.url("/v1/check"), body).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(problem["type"], "urn:robotsd:problem:invalid-body");
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.contains(says) && !detail.contains("untagged"),
            "{body}: {detail}"
        );
    }
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
async fn the_admin_listener_answers_503_while_the_api_drains() {
    let slow = origin(|| ok(RULES)).await;
    slow.set_delay(Duration::from_millis(1500));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let admin = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let readyz = format!("http://{}/readyz", admin.local_addr().unwrap());
    let state = robotsd::server::state(&settings()).unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let done = tokio::spawn(robotsd::server::run(
        state,
        listener,
        Some(admin),
        async move {
            let _ = stopped.await;
        },
    ));
    let url = format!("{base}/v1/check?url={}&ua=a", encode(&slow.url("/private")));
    let in_flight = tokio::spawn(async move { client().get(url).send().await.unwrap() });
    assert!(
        eventually(|| slow.hits() == 1).await,
        "the request is in flight"
    );
    assert_eq!(client().get(&readyz).send().await.unwrap().status(), 200);
    stop.send(()).unwrap();
    // Draining: the API request is still in flight, and the probe says so.
    let mut draining = false;
    for _ in 0..50 {
        let response = client()
            .get(&readyz)
            .send()
            .await
            .expect("the admin listener is open");
        if response.status() == 503 {
            draining = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        draining && !in_flight.is_finished(),
        "no 503 from /readyz during the drain"
    );
    assert_eq!(in_flight.await.unwrap().status(), 200);
    done.await.unwrap().unwrap();
}

#[tokio::test]
async fn with_a_token_file_the_api_needs_a_bearer_token_and_the_probes_do_not() {
    let mut settings = settings();
    settings.api_tokens = Some(
        robotsd::auth::ApiTokens::parse(
            "token-of-crawler-a-0123456789\ntoken-of-crawler-b-9876543210\n",
        )
        .unwrap(),
    );
    let service = start(settings).await;
    let site = origin(|| ok(RULES)).await;
    let check = service.url(&format!(
        "/v1/check?url={}&ua=a",
        encode(&site.url("/private"))
    ));
    for authorization in [
        None,
        Some("Bearer wrong-token-0123456789"),
        Some("Basic dXNlcjpwYXNz"),
    ] {
        let mut request = client().get(&check);
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 401, "{authorization:?}");
        assert_eq!(
            response.headers()["www-authenticate"],
            "Bearer realm=\"robotsd\""
        );
        let (_, content_type, problem) = parts(response).await;
        assert_eq!(content_type, "application/problem+json");
        assert_eq!(problem["type"], "urn:robotsd:problem:unauthorized");
    }
    // A refused request fetched nothing.
    assert_eq!(site.hits(), 0);
    let batch = client()
        .post(service.url("/v1/check"))
        .header("content-type", "application/json")
        .body(r#"{"ua": "a", "urls": []}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(batch.status(), 401);
    for token in [
        "token-of-crawler-a-0123456789",
        "token-of-crawler-b-9876543210",
    ] {
        let response = client()
            .get(&check)
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{token}");
    }
    for open in ["/livez", "/readyz", "/metrics", "/openapi.json"] {
        let response = client().get(service.url(open)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{open}");
    }
}

#[tokio::test]
async fn batches_travel_compressed_both_ways() {
    use std::io::{Read as _, Write as _};
    let service = start(settings()).await;
    let site = origin(|| ok(RULES)).await;
    let urls: Vec<String> = (0..50)
        .map(|i| site.url(&format!("/private/{i}")))
        .collect();
    let body = json!({"ua": "a", "urls": urls}).to_string();
    let mut gzipped = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzipped.write_all(body.as_bytes()).unwrap();
    let gzipped = gzipped.finish().unwrap();
    // reqwest's gzip feature would decode the answer silently: a client without it sees bytes.
    let raw = reqwest::Client::builder()
        .no_proxy()
        .no_gzip()
        .no_brotli()
        .no_deflate()
        .build()
        .unwrap();
    let response = raw
        .post(service.url("/v1/check"))
        .header("content-type", "application/json")
        .header("content-encoding", "gzip")
        .header("accept-encoding", "gzip")
        .body(gzipped)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-encoding"], "gzip");
    let compressed = response.bytes().await.unwrap();
    let mut answer = String::new();
    flate2::read::GzDecoder::new(&compressed[..])
        .read_to_string(&mut answer)
        .unwrap();
    assert!(
        compressed.len() * 4 < answer.len(),
        "{} → {}",
        answer.len(),
        compressed.len()
    );
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["results"].as_array().unwrap().len(), 50);
    assert_eq!(answer["results"][49]["allowed"], false);

    // A single check's answer is small: it is sent as it is.
    let single = raw
        .get(service.url(&format!("/v1/check?url={}&ua=a", encode(&urls[0]))))
        .header("accept-encoding", "gzip, br, zstd")
        .send()
        .await
        .unwrap();
    assert!(single.headers().get("content-encoding").is_none());

    let unknown = raw
        .post(service.url("/v1/check"))
        .header("content-type", "application/json")
        .header("content-encoding", "compress")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 415);
    let (_, content_type, problem) = parts(unknown).await;
    assert_eq!(content_type, "application/problem+json");
    assert_eq!(
        problem["type"],
        "urn:robotsd:problem:unsupported-content-encoding"
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

#[tokio::test]
async fn the_verdict_view_answers_only_allowed_and_reason() {
    let service = start(settings()).await;
    let site = origin(|| ok(RULES)).await;
    let url = encode(&site.url("/private/x"));
    let (status, _, body) =
        get_json(&service.url(&format!("/v1/check?url={url}&ua=a&view=verdict"))).await;
    assert_eq!(status, 200);
    assert_eq!(body, json!({"allowed": false, "reason": "matched_rule"}));
    let batch = json!({"ua": "a", "urls": [site.url("/private/x"), site.url("/ok"), "ftp://x/"]});
    let (status, _, body) =
        post_json(&service.url("/v1/check?view=verdict"), &batch.to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(
        body["results"][0],
        json!({"allowed": false, "reason": "matched_rule"})
    );
    assert_eq!(
        body["results"][1],
        json!({"allowed": true, "reason": "no_matching_rule"})
    );
    assert_eq!(
        body["results"][2]["error"]["type"],
        "urn:robotsd:problem:unsupported-scheme"
    );
    let (status, _, problem) =
        get_json(&service.url(&format!("/v1/check?url={url}&ua=a&view=short"))).await;
    assert_eq!(status, 400);
    assert_eq!(problem["parameter"], "view");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("full, verdict"),
        "{problem}"
    );
}

#[tokio::test]
async fn an_operator_refresh_fetches_now_but_never_twice_within_the_shortest_lifetime() {
    let clock = ManualClock::new();
    let site = origin(|| ok("User-agent: *\nDisallow: /old\n")).await;
    let robots = |service: &Service| {
        service.url(&format!(
            "/v1/robots/refresh?url={}",
            encode(&site.url("/"))
        ))
    };
    // Without tokens the API is open to anyone: no refresh.
    let open = start(settings()).await;
    let response = client().post(robots(&open)).send().await.unwrap();
    assert_eq!(response.status(), 403);
    assert_eq!(site.hits(), 0);

    let mut settings = settings();
    settings.api_tokens =
        Some(robotsd::auth::ApiTokens::parse("operator-token-0123456789\n").unwrap());
    let state = robotsd::server::state_with_clock(&settings, clock.clone()).unwrap();
    let service = start_with_state(state).await;
    let refresh = || {
        client()
            .post(robots(&service))
            .bearer_auth("operator-token-0123456789")
            .send()
    };
    let first = refresh().await.unwrap();
    assert_eq!(first.status(), 200);
    assert_eq!(site.hits(), 1);
    // The site fixes its file; robotsd has it for 24 h, and an immediate refresh is refused.
    site.set_reply(|| ok("User-agent: *\nDisallow: /new\n"));
    let too_soon = refresh().await.unwrap();
    assert_eq!(too_soon.status(), 429);
    assert!(
        too_soon.headers()["retry-after"]
            .to_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            <= 60
    );
    assert_eq!(site.hits(), 1);
    clock.advance(Duration::from_secs(61));
    let (status, _, body) = parts(refresh().await.unwrap()).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["parsed"]["groups"][0]["rules"][0]["pattern"], "/new");
    assert_eq!(site.hits(), 2);
    let metrics = client()
        .get(service.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("robotsd_robots_refreshes_total{result=\"refreshed\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains("robotsd_robots_refreshes_total{result=\"refused\"} 1"),
        "{metrics}"
    );
}
