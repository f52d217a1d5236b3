//! RSL 1.0 license terms through the service, as an AI crawler that honours RSL sees them: the
//! real binary with `--rsl`, a loopback site whose robots.txt names license documents, and the
//! terms (or the typed state) each check reports in `usage.rsl` (`docs/usage.md`).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Response, StatusCode, Uri};
use serde_json::{Value, json};

use crate::support::*;

mod bounds;
mod documents;
mod fleet;

/// A loopback site answering each path with its own reply, counting requests per path.
struct Site {
    addr: SocketAddr,
    replies: Arc<Mutex<HashMap<String, Reply>>>,
    hits: Arc<Mutex<HashMap<String, usize>>>,
    delay: Arc<Mutex<Duration>>,
}

impl Site {
    async fn start(ip: &str) -> Site {
        let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let replies: Arc<Mutex<HashMap<String, Reply>>> = Arc::default();
        let hits: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let delay = Arc::new(Mutex::new(Duration::ZERO));
        let (r, h, d) = (replies.clone(), hits.clone(), delay.clone());
        let app = Router::new().fallback(move |uri: Uri| {
            let (r, h, d) = (r.clone(), h.clone(), d.clone());
            async move {
                let path = uri.path().to_owned();
                *h.lock().unwrap().entry(path.clone()).or_default() += 1;
                if path != "/robots.txt" {
                    let wait = *d.lock().unwrap();
                    tokio::time::sleep(wait).await;
                }
                let (code, headers, body) =
                    r.lock().unwrap().get(&path).cloned().unwrap_or(status(404));
                let mut response = Response::builder().status(StatusCode::from_u16(code).unwrap());
                for (name, value) in headers {
                    response = response.header(name, value);
                }
                response.body(Body::from(body)).unwrap()
            }
        });
        tokio::spawn(async move {
            axum::serve(listener, app).await.ok();
        });
        Site {
            addr,
            replies,
            hits,
            delay,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn serve(&self, path: &str, reply: Reply) {
        self.replies.lock().unwrap().insert(path.to_owned(), reply);
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

fn xml(body: &str) -> Reply {
    (
        200,
        vec![("content-type", "application/rsl+xml".to_owned())],
        body.as_bytes().to_vec(),
    )
}

/// The spec's simplest case: everything on the site, AI training prohibited.
const NO_TRAINING: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/">
    <license>
      <permits type="usage">search</permits>
      <prohibits type="usage">ai-train</prohibits>
    </license>
  </content>
</rsl>
"#;

/// Overlapping `<content>` patterns, a paid license and one behind a license server.
const SECTIONS: &str = r#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/*">
    <license>
      <prohibits type="usage">all</prohibits>
    </license>
  </content>
  <content url="/articles/*">
    <license>
      <permits type="usage">ai-input,search</permits>
      <permits type="user">non-commercial</permits>
      <permits type="geo">US CA</permits>
      <payment type="crawl">
        <amount currency="USD">0.015</amount>
        <standard>https://example.com/rates</standard>
      </payment>
    </license>
  </content>
  <content url="/*/a.pdf">
    <license>
      <prohibits type="usage">ai-train</prohibits>
    </license>
  </content>
  <content url="/media/*">
    <license>
      <permits type="usage">search</permits>
      <payment type="attribution"/>
    </license>
  </content>
  <content url="/premium/*" server="https://license.example.com/api" encrypted="true">
    <license>
      <permits type="usage">ai-all</permits>
      <payment type="subscription">
        <custom>https://example.com/contact</custom>
      </payment>
    </license>
  </content>
</rsl>
"#;

fn encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

async fn check(robotsd: &Robotsd, url: impl AsRef<str>) -> Value {
    let url = url.as_ref();
    let response =
        reqwest::get(robotsd.url(&format!("/v1/check?url={}&ua=ExampleBot", encode(url))))
            .await
            .expect("answered");
    assert_eq!(response.status(), 200);
    json_of(response).await
}

async fn rsl_robotsd() -> Robotsd {
    Robotsd::start(
        &[
            "--allow-private-networks",
            "--rsl",
            "--fetch-timeout",
            "2s",
            "--connect-timeout",
            "1s",
        ],
        false,
    )
    .await
}

/// A site whose robots.txt names `/license.xml` on line 3.
async fn licensed_site(license: Reply) -> Site {
    let site = Site::start("127.0.0.1").await;
    site.serve(
        "/robots.txt",
        ok(&format!(
            "User-agent: *\nDisallow: /private/\nLicense: {}\n",
            site.url("/license.xml")
        )),
    );
    site.serve("/license.xml", license);
    site
}

#[tokio::test]
async fn a_check_reports_the_terms_that_cover_the_url_with_their_source() {
    let site = licensed_site(xml(NO_TRAINING)).await;
    let robotsd = rsl_robotsd().await;

    let answer = check(&robotsd, &site.url("/news/today")).await;
    assert_eq!(answer["allowed"], true);
    let rsl = &answer["usage"]["rsl"];
    assert_eq!(rsl.as_array().map(Vec::len), Some(1), "{answer}");
    let report = &rsl[0];
    assert_eq!(report["license_url"], site.url("/license.xml"));
    assert_eq!(report["line"], 3);
    assert_eq!(report["state"], "covered");
    assert_eq!(report["reason"], Value::Null);
    assert_eq!(
        report["contents"][0],
        json!({
            "url": "/", "line": 3, "server": null, "encrypted": false, "lastmod": null,
            "licenses": [{
                "permits": {"usage": ["search"], "user": [], "geo": []},
                "prohibits": {"usage": ["ai-train"], "user": [], "geo": []},
                "payment": null,
            }],
        })
    );
    let source = &report["source"];
    assert_eq!(source["status"], 200);
    assert_eq!(source["cache"], "miss");
    assert_eq!(source["bytes"], NO_TRAINING.len());
    assert_eq!(source["final_url"], site.url("/license.xml"));

    // Fetched once: the next checks, of any URL of the site, are answered from the cache.
    let again = check(&robotsd, &site.url("/other")).await;
    assert_eq!(again["usage"]["rsl"][0]["state"], "covered");
    assert_eq!(again["usage"]["rsl"][0]["source"]["cache"], "hit");
    assert_eq!(site.hits("/license.xml"), 1);

    // A disallowed URL has no terms, as it has no preferences: nothing may be done with it.
    let private = check(&robotsd, &site.url("/private/x")).await;
    assert_eq!(private["allowed"], false);
    assert_eq!(private["usage"], Value::Null);

    // The metrics count the reports by state, the fetches by outcome, and what is held.
    let covered = "robotsd_rsl_reports_total{state=\"covered\"}";
    assert_eq!(robotsd.metric(covered).await, 2.0);
    let fetched = "robotsd_rsl_fetches_total{outcome=\"document\"}";
    assert_eq!(robotsd.metric(fetched).await, 1.0);
    assert_eq!(robotsd.metric("robotsd_rsl_documents").await, 1.0);
    assert!(robotsd.metric("robotsd_rsl_weight_bytes").await > 500.0);
}

#[tokio::test]
async fn overlapping_content_patterns_the_longest_match_decides() {
    let site = licensed_site(xml(SECTIONS)).await;
    let robotsd = rsl_robotsd().await;

    let article = check(&robotsd, &site.url("/articles/2026/rsl")).await;
    let report = &article["usage"]["rsl"][0];
    assert_eq!(report["state"], "covered", "{article}");
    assert_eq!(report["contents"][0]["url"], "/articles/*");
    assert_eq!(
        report["contents"][0]["licenses"][0],
        json!({
            "permits": {"usage": ["ai-input", "search"], "user": ["non-commercial"], "geo": ["US", "CA"]},
            "prohibits": {"usage": [], "user": [], "geo": []},
            "payment": {"type": "crawl", "amounts": [{"value": "0.015", "currency": "USD"}],
                "standard": "https://example.com/rates", "custom": null},
        })
    );

    let premium = check(&robotsd, &site.url("/premium/report.pdf")).await;
    let content = &premium["usage"]["rsl"][0]["contents"][0];
    assert_eq!(content["url"], "/premium/*");
    assert_eq!(content["server"], "https://license.example.com/api");
    assert_eq!(content["encrypted"], true);
    assert_eq!(content["licenses"][0]["payment"]["type"], "subscription");

    // Two patterns of the same length tie: both are reported, whatever their order.
    let both = check(&robotsd, &site.url("/media/a.pdf")).await;
    let urls: Vec<&str> = both["usage"]["rsl"][0]["contents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["url"].as_str().unwrap())
        .collect();
    assert_eq!(urls, ["/*/a.pdf", "/media/*"], "{both}");

    let home = check(&robotsd, &site.url("/")).await;
    let content = &home["usage"]["rsl"][0]["contents"][0];
    assert_eq!(content["url"], "/*");
    assert_eq!(content["licenses"][0]["prohibits"]["usage"], json!(["all"]));
    assert_eq!(site.hits("/license.xml"), 1);
}

#[tokio::test]
async fn a_url_no_content_covers_is_not_covered() {
    let doc = r#"<rsl xmlns="https://rslstandard.org/rsl">
      <content url="/articles/*"><license><permits>search</permits></license></content>
    </rsl>"#;
    let site = licensed_site(xml(doc)).await;
    let robotsd = rsl_robotsd().await;
    let answer = check(&robotsd, &site.url("/about")).await;
    let report = &answer["usage"]["rsl"][0];
    assert_eq!(report["state"], "not_covered", "{answer}");
    assert_eq!(report["contents"], json!([]));
    assert_eq!(report["source"]["status"], 200);
    // The `type` attribute defaults to usage.
    let covered = check(&robotsd, &site.url("/articles/x")).await;
    assert_eq!(
        covered["usage"]["rsl"][0]["contents"][0]["licenses"][0]["permits"]["usage"],
        json!(["search"])
    );
}

#[tokio::test]
async fn a_slow_license_fails_at_the_fetch_time_limit_and_backs_off() {
    let site = licensed_site(xml(NO_TRAINING)).await;
    *site.delay.lock().unwrap() = Duration::from_secs(10);
    let robotsd = rsl_robotsd().await;
    let started = std::time::Instant::now();
    let answer = check(&robotsd, &site.url("/page")).await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(6), "waited {took:?}");
    let report = &answer["usage"]["rsl"][0];
    assert_eq!(report["state"], "fetch_failed", "{answer}");
    assert!(
        report["reason"].as_str().unwrap().contains("timed out"),
        "{answer}"
    );
    assert_eq!(report["source"]["backoff"]["failures"], 1, "{answer}");
    // In backoff: the next check is answered at once, without asking the site again.
    let again = check(&robotsd, &site.url("/page")).await;
    assert_eq!(again["usage"]["rsl"][0]["state"], "fetch_failed");
    assert_eq!(site.hits("/license.xml"), 1);
}

#[tokio::test]
async fn a_license_on_a_private_address_is_refused_unless_allowed() {
    let (canary_addr, canary_count) = canary("127.0.0.1").await.unwrap();
    let site = Site::start("127.0.0.2").await;
    site.serve(
        "/robots.txt",
        ok(&format!(
            "User-agent: *\nAllow: /\nLicense: http://{canary_addr}/license.xml\n"
        )),
    );
    let robotsd = Robotsd::start(&["--rsl", "--allow-cidr", "127.0.0.2/32"], false).await;
    let answer = check(&robotsd, &site.url("/page")).await;
    assert_eq!(answer["allowed"], true);
    let report = &answer["usage"]["rsl"][0];
    assert_eq!(report["state"], "refused", "{answer}");
    assert!(
        report["reason"].as_str().unwrap().contains("127.0.0.1"),
        "{answer}"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        canary_count.load(Ordering::SeqCst),
        0,
        "the canary was reached"
    );
}

#[tokio::test]
async fn without_the_flag_no_license_is_fetched_and_answers_are_unchanged() {
    let site = licensed_site(xml(NO_TRAINING)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    let answer = check(&robotsd, &site.url("/page")).await;
    assert_eq!(answer["allowed"], true);
    assert_eq!(answer["usage"], Value::Null, "{answer}");
    // /v1/robots still lists the License: line, at no fetch cost.
    let robots = json_of(
        reqwest::get(robotsd.url(&format!("/v1/robots?url={}", encode(&site.url("/")))))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        robots["parsed"]["licenses"],
        json!([{"url": site.url("/license.xml"), "line": 3}]),
        "{robots}"
    );
    assert_eq!(site.hits("/license.xml"), 0);
}

#[tokio::test]
async fn several_license_lines_are_reported_in_order_and_bounded() {
    let site = Site::start("127.0.0.1").await;
    let mut robots = String::from("User-agent: *\nAllow: /\n");
    robots.push_str("License: /relative.xml\n");
    for i in 0..6 {
        robots.push_str(&format!(
            "License:   {}  \n",
            site.url(&format!("/l{i}.xml"))
        ));
        site.serve(&format!("/l{i}.xml"), xml(NO_TRAINING));
    }
    robots.push_str(&format!("License: {}\n", site.url("/l0.xml")));
    site.serve("/robots.txt", ok(&robots));
    let robotsd = rsl_robotsd().await;
    let answer = check(&robotsd, &site.url("/page")).await;
    let reports = answer["usage"]["rsl"].as_array().expect("reports").clone();
    let states: Vec<(&str, u64)> = reports
        .iter()
        .map(|r| (r["state"].as_str().unwrap(), r["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        states,
        [
            ("not_fetched", 3),
            ("covered", 4),
            ("covered", 5),
            ("covered", 6),
        ],
        "{answer}"
    );
    // The others are counted: the relative URL and /l0.xml to /l5.xml, once each.
    assert_eq!(answer["usage"]["rsl_total"], 7, "{answer}");
    assert_eq!(answer["usage"]["truncated"], true, "{answer}");
    assert_eq!(
        site.hits("/l3.xml") + site.hits("/l4.xml") + site.hits("/l5.xml"),
        0
    );
    assert_eq!(site.hits("/l0.xml"), 1);
}

#[tokio::test]
async fn a_file_of_many_license_lines_gets_a_bounded_answer() {
    let site = Site::start("127.0.0.1").await;
    let mut robots = String::from("User-agent: *\nAllow: /\n");
    for i in 0..5_000 {
        robots.push_str(&format!(
            "License: {}\n",
            site.url(&format!("/l{}.xml", i % 40))
        ));
    }
    site.serve("/robots.txt", ok(&robots));
    let robotsd = rsl_robotsd().await;
    let answer = check(&robotsd, site.url("/page")).await;
    let reports = answer["usage"]["rsl"].as_array().expect("reports");
    assert_eq!(reports.len(), 4, "{answer}");
    let fetched = reports
        .iter()
        .filter(|r| r["state"] != "not_fetched")
        .count();
    assert_eq!(fetched, 4);
    assert_eq!(reports[3]["line"], 6);
    assert_eq!(answer["usage"]["rsl_total"], 40, "{answer}");
    let fetches: usize = (0..40).map(|i| site.hits(&format!("/l{i}.xml"))).sum();
    assert_eq!(fetches, 4);
}

#[tokio::test]
async fn an_expired_license_is_answered_while_one_refresh_runs() {
    let mut reply = xml(NO_TRAINING);
    reply.1.push(("cache-control", "max-age=1".to_owned()));
    let site = licensed_site(reply).await;
    let robotsd = Robotsd::start(
        &["--allow-private-networks", "--rsl", "--min-lifetime", "1s"],
        false,
    )
    .await;
    let first = check(&robotsd, site.url("/a")).await;
    assert_eq!(first["usage"]["rsl"][0]["source"]["cache"], "miss");
    // The refreshed copy lives an hour, so that the check after the refresh finds it fresh
    // however slowly a busy machine gets there (a second-long copy could expire first).
    let mut lasting = xml(NO_TRAINING);
    lasting.1.push(("cache-control", "max-age=3600".to_owned()));
    site.serve("/license.xml", lasting);
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    // Expired: answered from the copy at once, and one refresh goes out in the background.
    let stale =
        futures_util::future::join_all((0..10).map(|_| check(&robotsd, site.url("/b")))).await;
    assert!(
        stale
            .iter()
            .all(|a| a["usage"]["rsl"][0]["state"] == "covered")
    );
    assert_eq!(
        stale[0]["usage"]["rsl"][0]["source"]["cache"], "stale",
        "{}",
        stale[0]
    );
    assert!(eventually(|| site.hits("/license.xml") == 2).await);
    // The refreshed copy lands in the cache a moment after the site answered (the response is
    // read and parsed first, on the parser's thread): until then checks are still `stale`, and
    // fetch nothing more.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let fresh = loop {
        let fresh = check(&robotsd, site.url("/c")).await;
        let cache = fresh["usage"]["rsl"][0]["source"]["cache"].clone();
        if cache == "hit" || std::time::Instant::now() > deadline {
            break fresh;
        }
        assert_eq!(cache, "stale", "{fresh}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        fresh["usage"]["rsl"][0]["source"]["cache"], "hit",
        "{fresh}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(site.hits("/license.xml"), 2);
}

#[tokio::test]
async fn a_verdict_only_answer_does_not_wait_for_licenses() {
    let site = licensed_site(xml(NO_TRAINING)).await;
    *site.delay.lock().unwrap() = Duration::from_secs(10);
    let robotsd = rsl_robotsd().await;
    let started = std::time::Instant::now();
    let url = encode(&site.url("/page"));
    let response = reqwest::get(robotsd.url(&format!("/v1/check?url={url}&ua=Bot&view=verdict")))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let answer = json_of(response).await;
    assert_eq!(answer["allowed"], true, "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(site.hits("/license.xml"), 0);
}
