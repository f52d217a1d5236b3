//! License documents in a fleet: replicas that are `robotsd` processes of their own, on a real
//! `redis-server`, fetch a document once; with Redis down, each fetches it by itself.

use std::time::Duration;

use super::*;

#[tokio::test]
async fn three_replicas_with_redis_fetch_a_license_document_once() {
    let redis = crate::redis_server::RedisServer::start().await;
    let url = redis.url();
    let site = licensed_site(xml(SECTIONS)).await;
    // Slow enough that the replicas' first checks overlap.
    *site.delay.lock().unwrap() = Duration::from_millis(300);
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(
            Robotsd::start(
                &["--allow-private-networks", "--rsl", "--redis-url", &url],
                false,
            )
            .await,
        );
    }
    let checks = (0..30).map(|i| check(&replicas[i % 3], site.url(&format!("/articles/{i}"))));
    let checks: Vec<_> = checks.collect();
    let mut caches = Vec::new();
    for answer in futures_util::future::join_all(checks).await {
        let report = &answer["usage"]["rsl"][0];
        assert_eq!(report["state"], "covered", "{answer}");
        assert_eq!(report["contents"][0]["url"], "/articles/*");
        caches.push(report["source"]["cache"].as_str().unwrap().to_owned());
    }
    assert_eq!(site.hits("/license.xml"), 1, "{caches:?}");
    assert_eq!(site.hits("/robots.txt"), 1);
    // Two replicas took the document from Redis, without fetching it.
    assert!(caches.iter().any(|c| c == "shared"), "{caches:?}");

    // A replica started later reads it from Redis too.
    let late = Robotsd::start(
        &["--allow-private-networks", "--rsl", "--redis-url", &url],
        false,
    )
    .await;
    let answer = check(&late, &site.url("/premium/x")).await;
    let report = &answer["usage"]["rsl"][0];
    assert_eq!(
        report["contents"][0]["server"],
        "https://license.example.com/api"
    );
    assert_eq!(report["source"]["cache"], "shared", "{answer}");
    assert_eq!(site.hits("/license.xml"), 1);
}

#[tokio::test]
async fn with_redis_down_a_replica_fetches_the_license_itself() {
    let site = licensed_site(xml(NO_TRAINING)).await;
    let dead = format!("redis://127.0.0.1:{}", free_port());
    let robotsd = Robotsd::start(
        &[
            "--allow-private-networks",
            "--rsl",
            "--redis-url",
            &dead,
            "--store-timeout",
            "200ms",
        ],
        false,
    )
    .await;
    let started = std::time::Instant::now();
    let answer = check(&robotsd, site.url("/page")).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(answer["usage"]["rsl"][0]["state"], "covered", "{answer}");
    let again = check(&robotsd, site.url("/other")).await;
    assert_eq!(
        again["usage"]["rsl"][0]["source"]["cache"], "hit",
        "{again}"
    );
    assert_eq!(site.hits("/license.xml"), 1);
}
