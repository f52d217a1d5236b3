//! Fleet-wide politeness (docs/politeness.md) as a fleet sees it: three `robotsd` processes
//! sharing one real `redis-server`, workers that reserve slots through them and fetch from a
//! loopback site, and the site's own log of when each request arrived.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::Router;
use axum::http::{StatusCode, Uri};
use axum::response::IntoResponse;
use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::redis_server::{RedisCluster, RedisServer};
use crate::support::{Robotsd, json_of, post_value};

mod alone;
mod known_deferrals;
mod lanes_and_reports;
mod slowing;
mod timetable;

/// A loopback site that logs when each page request arrived; `/robots.txt` is `robots`, and the
/// pages under `/limited/` answer 429 with `Retry-After: 3` the first time.
pub(crate) struct Site {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<(SystemTime, String, u16)>>>,
}

impl Site {
    pub(crate) async fn start(robots: &'static str) -> Site {
        let log: Arc<Mutex<Vec<(SystemTime, String, u16)>>> = Arc::default();
        let served = Arc::clone(&log);
        let app = Router::new().fallback(move |uri: Uri| {
            let served = Arc::clone(&served);
            async move {
                let path = uri.path().to_string();
                if path == "/robots.txt" {
                    return robots.into_response();
                }
                let mut log = served.lock().unwrap();
                let limited =
                    path.starts_with("/limited/") && !log.iter().any(|(_, p, _)| p == &path);
                let status = if limited { 429 } else { 200 };
                log.push((SystemTime::now(), path, status));
                if limited {
                    (
                        StatusCode::TOO_MANY_REQUESTS,
                        [("retry-after", "3")],
                        "slow down",
                    )
                        .into_response()
                } else {
                    "a page".into_response()
                }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Site { addr, log }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The arrival times of the page requests, in order.
    pub(crate) fn arrivals(&self) -> Vec<SystemTime> {
        let mut times: Vec<SystemTime> = self.log.lock().unwrap().iter().map(|e| e.0).collect();
        times.sort();
        times
    }
}

async fn replicas(redis: &RedisServer, extra: &[&str]) -> Vec<Robotsd> {
    replicas_of(&redis.url(), extra).await
}

async fn replicas_of(url: &str, extra: &[&str]) -> Vec<Robotsd> {
    let mut args = vec!["--allow-private-networks", "--redis-url", url];
    args.extend_from_slice(extra);
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(Robotsd::start(&args, false).await);
    }
    replicas
}

/// Reserves a slot for `url` through `replica`: its `pace` member.
async fn reserve(client: &reqwest::Client, replica: &Robotsd, url: &str) -> Value {
    let check = url::Url::parse_with_params(
        &replica.url("/v1/check"),
        [("url", url), ("ua", "FleetBot"), ("pace", "true")],
    )
    .unwrap();
    let response = client.get(check).send().await.expect("robotsd answered");
    assert_eq!(response.status(), 200);
    let pace = json_of(response).await["pace"].clone();
    // A deferred answer never reads as "fetch".
    let next = if pace["outcome"] == "reserved" {
        "fetch"
    } else {
        "ask_again"
    };
    assert_eq!(pace["next"], next, "{pace}");
    pace
}

pub(crate) fn millis_since_epoch(rfc3339: &Value) -> u128 {
    let at = humantime::parse_rfc3339(rfc3339.as_str().expect("a timestamp")).expect("RFC 3339");
    at.duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

/// What a worker does: reserve a slot, wait for it, fetch; report what the site answered.
pub(crate) async fn fetch_paced(client: &reqwest::Client, replica: &Robotsd, url: &str) -> Value {
    loop {
        let pace = reserve(client, replica, url).await;
        tokio::time::sleep(Duration::from_millis(pace["wait_ms"].as_u64().unwrap())).await;
        if pace["outcome"] == "deferred" {
            continue;
        }
        let page = client.get(url).send().await.expect("the site answered");
        if page.status() == 429 {
            let retry_after = page.headers()["retry-after"].to_str().unwrap().to_string();
            let (status, answer) = post_value(
                &replica.url("/v1/feedback"),
                &json!({"reports": [{"url": url, "status": 429, "retry_after": retry_after}]}),
            )
            .await;
            assert_eq!(status, 200, "{answer}");
        }
        return pace;
    }
}

#[tokio::test]
async fn three_replicas_never_hand_out_two_slots_closer_than_the_crawl_delay() {
    let redis = RedisServer::start().await;
    three_replicas_keep_the_interval(&replicas(&redis, &STORE_TIME).await).await;
}

#[tokio::test]
async fn on_a_redis_cluster_three_replicas_never_hand_out_two_slots_closer_than_the_crawl_delay() {
    let cluster = RedisCluster::start().await;
    let mut extra = vec!["--redis-cluster"];
    extra.extend_from_slice(&STORE_TIME);
    three_replicas_keep_the_interval(&replicas_of(&cluster.url(), &extra).await).await;
}

/// 300 reservations at once, through three replicas, on a busy two-core machine: a store call
/// may wait past the default time limit (250 ms), and a slot would then be decided alone.
const STORE_TIME: [&str; 2] = ["--store-timeout", "2s"];

async fn three_replicas_keep_the_interval(replicas: &[Robotsd]) {
    let site = Site::start("User-agent: *\nCrawl-delay: 0.2\n").await;
    let client = reqwest::Client::new();
    let url = site.url("/page");
    // Warm: robots.txt fetched, connections made.
    for replica in replicas {
        reserve(&client, replica, &site.url("/warm")).await;
    }
    let asks = replicas.iter().flat_map(|replica| {
        let client = &client;
        let url = &url;
        (0..100).map(move |_| reserve(client, replica, url))
    });
    let paces = join_all(asks).await;
    let mut slots: Vec<u128> = paces
        .iter()
        .filter(|pace| pace["outcome"] == "reserved")
        .inspect(|pace| {
            assert_eq!(pace["scope"], "fleet", "{pace}");
            assert_eq!(pace["interval_source"], "crawl_delay", "{pace}");
            assert_eq!(pace["crawl_delay_line"], 2, "{pace}");
        })
        .map(|pace| millis_since_epoch(&pace["not_before"]))
        .collect();
    // 300 slots 0.25 s apart (the crawl-delay and the 50 ms guard band) span 75 s: those past
    // --max-pace-wait (60 s) are deferred.
    assert!(slots.len() >= 230, "{} reserved", slots.len());
    slots.sort();
    let closest = slots.windows(2).map(|w| w[1] - w[0]).min().unwrap();
    assert!(closest >= 250, "two slots {closest} ms apart");
    let deferred = paces.iter().filter(|p| p["outcome"] == "deferred").count();
    assert_eq!(slots.len() + deferred, 300);
}

#[tokio::test]
async fn a_429_with_retry_after_reported_through_one_replica_holds_back_every_replica() {
    let redis = RedisServer::start().await;
    let site = Site::start("User-agent: *\nCrawl-delay: 0.1\n").await;
    let replicas = replicas(&redis, &[]).await;
    let client = reqwest::Client::new();
    // One worker gets a 429 with Retry-After: 3 and reports it.
    fetch_paced(&client, &replicas[0], &site.url("/limited/a")).await;
    let limited_at = site.arrivals()[0];
    // Three workers on three replicas go on crawling.
    let workers = replicas.iter().enumerate().map(|(w, replica)| {
        let client = &client;
        let site = &site;
        async move {
            let mut paces = Vec::new();
            for page in 0..4 {
                let url = site.url(&format!("/w{w}/{page}"));
                paces.push(fetch_paced(client, replica, &url).await);
            }
            paces
        }
    });
    let paces: Vec<Value> = join_all(workers).await.into_iter().flatten().collect();
    // At the site: nothing within Retry-After of the 429.
    let arrivals = site.arrivals();
    assert_eq!(arrivals.len(), 13);
    let first_after = arrivals[1].duration_since(limited_at).unwrap();
    assert!(
        first_after >= Duration::from_secs(3),
        "a page was fetched {first_after:?} after the 429"
    );
    // And slowed down since: the interval doubled after the pushback, for every replica.
    let mut slots = Vec::new();
    for pace in &paces {
        assert_eq!(pace["scope"], "fleet", "{pace}");
        assert_eq!(pace["interval_source"], "pushback", "{pace}");
        assert!(pace["slowdown"].as_f64().unwrap() > 1.9, "{pace}");
        slots.push(millis_since_epoch(&pace["not_before"]));
    }
    slots.sort();
    assert!(slots.windows(2).all(|w| w[1] - w[0] >= 190), "{slots:?}");
    // The state shows in /v1/robots on another replica.
    let robots = json_of(
        client
            .get(
                url::Url::parse_with_params(
                    &replicas[2].url("/v1/robots"),
                    [("url", site.url("/"))],
                )
                .unwrap(),
            )
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(
        robots["pace"]["slowdown"].as_f64().unwrap() > 1.0,
        "{robots}"
    );
    assert_eq!(robots["pace"]["scope"], "fleet");
}

#[tokio::test]
async fn with_redis_killed_replicas_pace_locally_and_fleet_wide_again_when_it_returns() {
    let mut redis = RedisServer::start().await;
    let site = Site::start("User-agent: *\nCrawl-delay: 0.2\n").await;
    let replicas = replicas(&redis, &["--store-timeout", "100ms"]).await;
    let client = reqwest::Client::new();
    let url = site.url("/page");
    for replica in &replicas {
        assert_eq!(reserve(&client, replica, &url).await["scope"], "fleet");
    }

    redis.kill();
    // Every reservation is answered, at once once the breaker is open, each replica pacing alone.
    for replica in &replicas {
        let mut last = None;
        for _ in 0..5 {
            let started = tokio::time::Instant::now();
            let pace = reserve(&client, replica, &url).await;
            assert!(started.elapsed() < Duration::from_secs(1));
            assert_eq!(pace["outcome"], "reserved");
            assert_eq!(pace["scope"], "local", "{pace}");
            let at = millis_since_epoch(&pace["not_before"]);
            if let Some(last) = last {
                assert!(at >= last + 200, "local slots {} ms apart", at - last);
            }
            last = Some(at);
        }
        assert_eq!(
            replica.metric("robotsd_store_up{backend=\"redis\"}").await,
            0.0
        );
        assert!(
            replica
                .metric("robotsd_pace_reservations_total{outcome=\"reserved\",scope=\"local\"}")
                .await
                >= 5.0
        );
    }

    redis.restart().await;
    // Within the breaker's cooldown (5 s) and a probe, every replica is back on the fleet's state.
    for replica in &replicas {
        let mut back = false;
        for _ in 0..40 {
            if reserve(&client, replica, &url).await["scope"] == "fleet" {
                back = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        assert!(back, "a replica never paced with the fleet again");
    }
    let asks = replicas
        .iter()
        .flat_map(|replica| (0..10).map(|_| reserve(&client, replica, &url)));
    let mut slots: Vec<u128> = join_all(asks)
        .await
        .iter()
        .inspect(|pace| assert_eq!(pace["scope"], "fleet"))
        .map(|pace| millis_since_epoch(&pace["not_before"]))
        .collect();
    slots.sort();
    assert!(slots.windows(2).all(|w| w[1] - w[0] >= 200), "{slots:?}");
}

/// The Redis script and the pure policy are two writings of one state machine: the same
/// operations, at the times Redis ran them, give the same slots and states to the millisecond.
#[tokio::test]
async fn the_redis_script_agrees_with_the_policy() {
    use robotsd::pace_policy::{PaceState, Signal, SlotRequest};
    use robotsd::store::{RedisConfig, RedisStore, RedisTarget, SharedStore};

    let redis = RedisServer::start().await;
    let store = RedisStore::new(RedisConfig {
        target: RedisTarget::Server(redis.url()),
        password: None,
        connect_timeout: Duration::from_secs(2),
        response_timeout: Duration::from_secs(2),
        tls: None,
    })
    .unwrap();
    let keep = Duration::from_secs(600);
    let mut model = PaceState::default();
    // A fixed sequence from a small linear congruential generator: reproducible, and varied
    // enough to cross every branch (deferrals, caps, blocks, decays, successes).
    let mut seed: u64 = 0x5eed;
    let mut next = |bound: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % bound
    };
    let (mut deferred, mut pushbacks) = (0, 0);
    for step in 0..400 {
        match next(12) {
            10 | 11 => {
                // Reservations that arrive together: shared calls, each a run of one request.
                let request = SlotRequest {
                    interval_ms: [0, 7, 100, 1000][next(4) as usize],
                    max_interval_ms: [50, 60_000][next(2) as usize],
                    max_wait_ms: [0, 500, 5000][next(3) as usize],
                    guard_ms: [0, 50][next(2) as usize],
                };
                let together = 1 + next(30) as usize;
                let grants = futures_util::future::join_all(
                    (0..together).map(|_| store.reserve("http://agree.test", request, keep, None)),
                )
                .await;
                let mut grants: Vec<_> = grants.into_iter().map(Result::unwrap).collect();
                grants.sort_by_key(|grant| (grant.now, !grant.reserved, grant.at));
                // Calls in the order Redis ran them (by its now; calls in one millisecond are
                // one run), each as its reservations one by one.
                for call in grants.chunk_by(|a, b| a.now == b.now) {
                    let mut expected: Vec<_> = (0..call.len())
                        .map(|_| model.reserve(call[0].now, request))
                        .collect();
                    for grant in &mut expected {
                        grant.last_slot = model.last_slot;
                    }
                    expected.sort_by_key(|grant| (grant.now, !grant.reserved, grant.at));
                    assert_eq!(call, expected, "step {step}: {together} of {request:?}");
                    deferred += call.iter().filter(|grant| !grant.reserved).count();
                }
            }
            0..=6 => {
                let request = SlotRequest {
                    interval_ms: [0, 7, 100, 1000, 2500][next(5) as usize],
                    max_interval_ms: [50, 3000, 60_000][next(3) as usize],
                    max_wait_ms: [1, 500, 5000, 60_000][next(4) as usize],
                    guard_ms: [0, 50][next(2) as usize],
                };
                let grant = store
                    .reserve("http://agree.test", request, keep, None)
                    .await
                    .unwrap();
                let expected = model.reserve(grant.now, request);
                assert_eq!(grant, expected, "step {step}: {request:?}");
                deferred += usize::from(!grant.reserved);
            }
            7 => {
                let reading = store
                    .signal(
                        "http://agree.test",
                        "http://agree.test",
                        Signal::Success,
                        keep,
                    )
                    .await
                    .unwrap();
                // Nothing is kept before the first slot: a report changes nothing then.
                let Some(reading) = reading else {
                    assert_eq!(model, PaceState::default(), "step {step}");
                    continue;
                };
                model.signal(reading.now, Signal::Success);
                assert_eq!(reading.state, model, "step {step}: success");
            }
            _ => {
                let signal = Signal::Pushback {
                    retry_after_ms: [None, Some(0), Some(40), Some(700)][next(4) as usize],
                };
                let reading = store
                    .signal("http://agree.test", "http://agree.test", signal, keep)
                    .await
                    .unwrap();
                let Some(reading) = reading else {
                    assert_eq!(model, PaceState::default(), "step {step}");
                    continue;
                };
                model.signal(reading.now, signal);
                assert_eq!(reading.state, model, "step {step}: {signal:?}");
                pushbacks += 1;
            }
        }
        if next(20) == 0 {
            tokio::time::sleep(Duration::from_millis(next(300))).await;
        }
    }
    let read = store.pace("http://agree.test").await.unwrap().unwrap();
    assert_eq!(read.state, model);
    assert!(deferred > 10 && pushbacks > 10, "{deferred} {pushbacks}");
    assert_eq!(store.pace("http://other.test").await.unwrap(), None);
}

/// Reservations of one lane that arrive together share script calls on Redis, and keep the
/// spacing that one call at a time gives: every slot granted once, each an interval and a guard
/// band after the one before, on Redis's clock.
#[tokio::test]
async fn reservations_that_arrive_together_share_calls_and_keep_their_spacing() {
    use robotsd::pace_policy::SlotRequest;
    use robotsd::store::{RedisConfig, RedisStore, RedisTarget, SharedStore};

    let redis = RedisServer::start().await;
    let store = RedisStore::new(RedisConfig {
        target: RedisTarget::Server(redis.url()),
        password: None,
        connect_timeout: Duration::from_secs(2),
        response_timeout: Duration::from_secs(5),
        tls: None,
    })
    .unwrap();
    let request = SlotRequest {
        interval_ms: 50,
        max_interval_ms: 60_000,
        max_wait_ms: 3_600_000,
        guard_ms: 10,
    };
    let keep = Duration::from_secs(600);
    let before = redis.script_calls().await;
    let grants = futures_util::future::join_all(
        (0..300).map(|_| store.reserve("http://together.test", request, keep, None)),
    )
    .await;
    let calls = redis.script_calls().await - before;
    let mut slots: Vec<u64> = grants
        .into_iter()
        .map(|grant| {
            let grant = grant.unwrap();
            assert!(grant.reserved, "{grant:?}");
            grant.at
        })
        .collect();
    slots.sort_unstable();
    for pair in slots.windows(2) {
        assert_eq!(pair[1] - pair[0], 60, "{slots:?}");
    }
    // 300 reservations in a few calls: 64 at most a call, and those that came while one was out
    // wait for the next (a loaded machine may split them into more).
    assert!(
        (5..=100).contains(&calls),
        "{calls} script calls for 300 reservations"
    );
    let state = store.pace("http://together.test").await.unwrap().unwrap();
    assert_eq!(state.state.last_slot, *slots.last().unwrap());
}

/// One robotsd without Redis: the API of pacing as a single crawler or a person with curl sees
/// it.
#[tokio::test]
async fn pace_is_asked_for_answered_and_reported_through_the_api() {
    let site = Site::start("User-agent: *\nDisallow: /private\nCrawl-delay: 0.25\n").await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    let client = reqwest::Client::new();
    let get = |params: Vec<(&str, String)>| {
        let url = url::Url::parse_with_params(&robotsd.url("/v1/check"), params).unwrap();
        let client = client.clone();
        async move {
            let response = client.get(url).send().await.unwrap();
            (response.status().as_u16(), json_of(response).await)
        }
    };
    let page = site.url("/page");
    // Not asked: no pace member at all.
    let (status, answer) = get(vec![("url", page.clone()), ("ua", "bot".into())]).await;
    assert_eq!(status, 200);
    assert!(answer.get("pace").is_none(), "{answer}");
    // Asked: a local slot, from the group's crawl-delay line.
    let ask = |url: &str, extra: Vec<(&'static str, &'static str)>| {
        let mut params = vec![
            ("url", url.to_string()),
            ("ua", "bot".into()),
            ("pace", "true".into()),
        ];
        params.extend(extra.into_iter().map(|(k, v)| (k, v.to_string())));
        get(params)
    };
    let (_, first) = ask(&page, vec![]).await;
    let pace = &first["pace"];
    assert_eq!(pace["outcome"], "reserved", "{first}");
    assert_eq!(pace["scope"], "local");
    assert_eq!(pace["interval_source"], "crawl_delay");
    assert_eq!(pace["crawl_delay_line"], 3);
    assert_eq!(pace["interval_ms"], 250);
    let (_, second) = ask(&page, vec![("view", "verdict")]).await;
    assert_eq!(second["allowed"], true);
    let gap = millis_since_epoch(&second["pace"]["not_before"])
        - millis_since_epoch(&first["pace"]["not_before"]);
    assert!(gap >= 250, "{gap}");
    // A disallowed URL reserves nothing.
    let (_, private) = ask(&site.url("/private/x"), vec![]).await;
    assert_eq!(private["allowed"], false);
    assert!(
        private["pace"].is_null() && private.get("pace").is_some(),
        "{private}"
    );
    // A bad value is a problem naming the parameter.
    let (status, problem) = get(vec![
        ("url", page.clone()),
        ("ua", "bot".into()),
        ("pace", "yes".into()),
    ])
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        problem["type"], "urn:robotsd:problem:invalid-parameter",
        "{problem}"
    );

    // A batch of one origin: staggered slots, in the answers' order of reservation.
    let (status, batch) = post_value(
        &robotsd.url("/v1/check?pace=true"),
        &json!({"ua": "bot", "urls": [site.url("/a"), site.url("/b"), site.url("/private/c"), site.url("/d")]}),
    )
    .await;
    assert_eq!(status, 200);
    let results = batch["results"].as_array().unwrap();
    assert!(results[2]["pace"].is_null());
    let mut slots: Vec<u128> = [0, 1, 3]
        .iter()
        .map(|&i| millis_since_epoch(&results[i]["pace"]["not_before"]))
        .collect();
    slots.sort();
    assert!(slots.windows(2).all(|w| w[1] - w[0] >= 250), "{slots:?}");

    // Feedback: a 503 with Retry-After holds the origin back; a bad report gets a problem in its
    // slot, and the others are taken.
    let (status, taken) = post_value(
        &robotsd.url("/v1/feedback"),
        &json!({"reports": [
            {"url": site.url("/a"), "status": 503, "retry_after": "120"},
            {"url": site.url("/b")},
            {"url": "ftp://example.com/", "status": 200},
            {"url": site.url("/c"), "status": 200, "timeout": true},
        ]}),
    )
    .await;
    assert_eq!(status, 200, "{taken}");
    let results = taken["results"].as_array().unwrap();
    assert_eq!(results[0]["origin"], site.url(""));
    assert_eq!(results[0]["pace"]["slowdown"], 2.0);
    assert!(results[0]["pace"]["retry_after_until"].is_string());
    assert_eq!(
        results[1]["error"]["type"],
        "urn:robotsd:problem:invalid-report"
    );
    assert_eq!(
        results[2]["error"]["type"],
        "urn:robotsd:problem:unsupported-scheme"
    );
    assert_eq!(
        results[3]["error"]["type"],
        "urn:robotsd:problem:invalid-report"
    );
    let (_, held) = ask(&page, vec![]).await;
    assert_eq!(held["pace"]["outcome"], "deferred", "{held}");
    assert_eq!(held["pace"]["interval_source"], "pushback");
    assert!(held["pace"]["wait_ms"].as_u64().unwrap() > 50_000, "{held}");
    assert!(
        robotsd
            .metric("robotsd_pace_reports_total{signal=\"retry_after\"}")
            .await
            >= 1.0
    );
    assert!(robotsd.metric("robotsd_pace_origins_slowed").await >= 1.0);
    assert!(
        robotsd
            .metric("robotsd_pace_reservations_total{outcome=\"deferred\",scope=\"local\"}")
            .await
            >= 1.0
    );
}

#[tokio::test]
async fn reports_need_the_api_token_when_tokens_are_configured() {
    let dir = std::env::temp_dir().join(format!("robotsd-pace-tokens-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, "fleet-reporter-s3cret-token\n").unwrap();
    let robotsd = Robotsd::start(&["--api-token-file", tokens.to_str().unwrap()], false).await;
    let body = json!({"reports": [{"url": "https://example.com/", "status": 429}]});
    let client = reqwest::Client::new();
    let refused = client
        .post(robotsd.url("/v1/feedback"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    let taken = client
        .post(robotsd.url("/v1/feedback"))
        .header("content-type", "application/json")
        .bearer_auth("fleet-reporter-s3cret-token")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(taken.status(), 200);
    std::fs::remove_dir_all(&dir).unwrap();
}
