//! What operators rely on: probes and metrics, the API reference, shutdown and the drain,
//! bearer tokens, and the operator refresh.

use super::*;

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
        "openapi/openapi.json is out of date: run `UPDATE_OPENAPI=1 cargo test --test service committed_openapi` and review the diff"
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
