//! Revalidating an expired robots.txt (issue 41; RFC 9111 §4.3, draft-illyes-webbotauth-cbcp
//! §2.4), measured at the origin: what each request carried and what it was answered.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Response, StatusCode};
use robotsd::cache::Lookup;
use tokio::net::TcpListener;

use crate::redis_server::RedisServer;
use crate::support::*;

/// One request as the origin saw it: its conditional headers, and the status it was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    if_none_match: Option<String>,
    if_modified_since: Option<String>,
    status: u16,
}

/// The file the origin serves now: its body, its validators and its lifetime.
#[derive(Clone)]
struct File {
    body: &'static str,
    etag: &'static str,
    last_modified: &'static str,
    cache_control: &'static str,
}

/// An origin that answers a conditional GET as an HTTP cache would: 304 without a body when
/// `If-None-Match` names its current `ETag`, else the file with its validators.
struct Origin {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    file: Arc<Mutex<File>>,
}

impl Origin {
    async fn start(file: File) -> Origin {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let file = Arc::new(Mutex::new(file));
        let (s, f) = (Arc::clone(&seen), Arc::clone(&file));
        let app = Router::new().fallback(move |headers: HeaderMap| {
            let (s, f) = (Arc::clone(&s), Arc::clone(&f));
            async move {
                let header = |name| {
                    headers
                        .get(name)
                        .map(|v: &axum::http::HeaderValue| v.to_str().unwrap().to_owned())
                };
                let file = f.lock().unwrap().clone();
                let if_none_match = header("if-none-match");
                let current = if_none_match.as_deref() == Some(file.etag);
                let status = if current { 304 } else { 200 };
                s.lock().unwrap().push(Seen {
                    if_none_match,
                    if_modified_since: header("if-modified-since"),
                    status,
                });
                let response = Response::builder()
                    .status(StatusCode::from_u16(status).unwrap())
                    .header("etag", file.etag)
                    .header("last-modified", file.last_modified)
                    .header("cache-control", file.cache_control);
                response
                    .body(Body::from(if current { "" } else { file.body }))
                    .unwrap()
            }
        });
        tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        Origin { url, seen, file }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

const V1: File = File {
    body: "User-agent: *\nDisallow: /private\n",
    etag: "\"v1\"",
    last_modified: "Wed, 25 Nov 2026 10:00:00 GMT",
    cache_control: "max-age=120",
};

const V2: File = File {
    body: "User-agent: *\nDisallow: /\n",
    etag: "\"v2\"",
    last_modified: "Fri, 27 Nov 2026 10:00:00 GMT",
    cache_control: "max-age=120",
};

#[tokio::test]
async fn an_expired_copy_is_revalidated_and_a_304_renews_it_without_a_body() {
    let clock = ManualClock::new();
    let origin = Origin::start(V1).await;
    let checker = checker_on(Arc::clone(&clock));
    let url = format!("{}/private/a", origin.url);
    let first = checker.check(&url, &["bot"]).await.unwrap();
    assert!(!first.allowed);
    let sha256 = source(&first).sha256;
    // The first fetch is unconditional: nothing to revalidate with.
    assert_eq!(
        origin.seen(),
        [Seen {
            if_none_match: None,
            if_modified_since: None,
            status: 200
        }]
    );

    // Expired: answered from the copy while it is revalidated with its validators.
    clock.advance(Duration::from_secs(121));
    let stale = checker.check(&url, &["bot"]).await.unwrap();
    assert_eq!(source(&stale).cache, Lookup::Stale);
    assert!(eventually(|| origin.seen().len() == 2).await);
    assert_eq!(
        origin.seen()[1],
        Seen {
            if_none_match: Some("\"v1\"".into()),
            if_modified_since: Some(V1.last_modified.into()),
            status: 304
        }
    );
    // The 304 renewed the copy: the same file, fresh for the 304's max-age from now.
    let renewed = eventually_async(|| async {
        let answer = checker.check(&url, &["bot"]).await.unwrap();
        source(&answer).cache == Lookup::Hit
    })
    .await;
    assert!(renewed, "the renewed copy answers as fresh");
    let answer = checker.check(&url, &["bot"]).await.unwrap();
    assert!(!answer.allowed);
    assert_eq!(source(&answer).sha256, sha256);
    assert_eq!(source(&answer).status, Some(200));
    clock.advance(Duration::from_secs(119));
    let still = checker.check(&url, &["bot"]).await.unwrap();
    assert_eq!(source(&still).cache, Lookup::Hit);
    assert_eq!(
        origin.seen().len(),
        2,
        "nothing sent before the renewed expiry"
    );

    // The file changes: the next revalidation gets it whole, and its rules apply.
    *origin.file.lock().unwrap() = V2;
    clock.advance(Duration::from_secs(2));
    checker.check(&url, &["bot"]).await.unwrap();
    assert!(eventually(|| origin.seen().len() == 3).await);
    assert_eq!(
        origin.seen()[2],
        Seen {
            if_none_match: Some("\"v1\"".into()),
            if_modified_since: Some(V1.last_modified.into()),
            status: 200
        }
    );
    let changed = eventually_async(|| async {
        let answer = checker
            .check(&format!("{}/a", origin.url), &["bot"])
            .await
            .unwrap();
        !answer.allowed
    })
    .await;
    assert!(changed, "the new file's rules apply");
    // And its own validators are the ones sent next.
    clock.advance(Duration::from_secs(121));
    checker.check(&url, &["bot"]).await.unwrap();
    assert!(eventually(|| origin.seen().len() == 4).await);
    assert_eq!(origin.seen()[3].if_none_match.as_deref(), Some("\"v2\""));
    assert_eq!(origin.seen()[3].status, 304);
}

/// Checks `url` for `bot` through `replica`'s API.
async fn check(replica: &Robotsd, url: &str) -> serde_json::Value {
    let request = reqwest::Client::new().get(
        url::Url::parse_with_params(&replica.url("/v1/check"), [("url", url), ("ua", "bot")])
            .unwrap(),
    );
    json_of(request.send().await.expect("robotsd answered")).await
}

#[tokio::test]
async fn a_replica_revalidates_with_the_validators_another_replica_stored() {
    // Two robotsd processes sharing a real redis-server: the validators travel in the record.
    let redis = RedisServer::start().await;
    let redis_url = redis.url();
    let args = [
        "--allow-private-networks",
        "--redis-url",
        redis_url.as_str(),
        "--min-lifetime",
        "1s",
    ];
    let (a, b) = (
        Robotsd::start(&args, false).await,
        Robotsd::start(&args, false).await,
    );
    let origin = Origin::start(File {
        cache_control: "max-age=1",
        ..V1
    })
    .await;
    let url = format!("{}/private/a", origin.url);
    assert_eq!(check(&a, &url).await["robots"]["cache"], "miss");
    // From now on the same file lives a minute: a 304 renews it for that long.
    *origin.file.lock().unwrap() = V1;
    // Past the first copy's second (a sleep, so at least that long, however slow the machine).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    // B has never fetched: it takes A's record from Redis, expired, and revalidates it with
    // the validators A stored.
    let answer = check(&b, &url).await;
    assert_eq!(answer["allowed"], false, "{answer}");
    assert!(
        eventually(|| origin.seen().len() == 2).await,
        "{:?} {answer}",
        origin.seen()
    );
    assert_eq!(
        origin.seen()[1],
        Seen {
            if_none_match: Some("\"v1\"".into()),
            if_modified_since: Some(V1.last_modified.into()),
            status: 304
        }
    );
    // The renewed record serves A too, without another request.
    let renewed =
        eventually_async(|| async { check(&a, &url).await["robots"]["cache"] != "stale" }).await;
    assert!(renewed);
    let answer = check(&a, &url).await;
    assert_eq!(answer["allowed"], false, "{answer}");
    assert_eq!(origin.seen().len(), 2, "{:?}", origin.seen());
}
