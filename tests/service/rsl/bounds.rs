//! What a site can make robotsd spend on its license documents: documents built to make the XML
//! parser's work grow faster than their size, a document heavier than its share of
//! `--rsl-capacity`, and `License:` URLs longer than any URL. Each costs a bounded time, once,
//! and never delays the answers for other sites or the probes.

use std::time::Instant;

use serde_json::json;

use super::*;

/// A namespace bomb: `declarations` on the root, and `children` elements declaring one more
/// each. roxmltree copies the declarations in scope for each such child, checking each against
/// those copied so far, so its cost grows with children × declarations² (12,000 × 60, some
/// 200 KB, took seconds to parse before the pre-scan; 8,000 × 40 took 1.9 s).
fn namespace_bomb(declarations: usize, children: usize) -> String {
    let mut xml = String::from(r#"<rsl xmlns="https://rslstandard.org/rsl""#);
    for i in 0..declarations {
        xml.push_str(&format!(r#" xmlns:p{i}="u""#));
    }
    xml.push('>');
    for i in 0..children {
        xml.push_str(&format!(r#"<content url="/" xmlns:q{i}="u"/>"#));
    }
    xml.push_str("</rsl>");
    xml
}

/// One element with `n` attributes (roxmltree checks each against the ones before it).
fn attribute_bomb(n: usize) -> String {
    let mut xml = String::from(r#"<rsl xmlns="https://rslstandard.org/rsl"><content url="/""#);
    for i in 0..n {
        xml.push_str(&format!(" a{i:x}=''"));
    }
    xml.push_str("/></rsl>");
    xml
}

async fn bounded_robotsd(extra: &[&str]) -> Robotsd {
    let mut args = vec![
        "--allow-private-networks",
        "--rsl",
        "--max-robots-bytes",
        "1MiB",
    ];
    args.extend_from_slice(extra);
    Robotsd::start(&args, false).await
}

#[tokio::test]
async fn a_namespace_bomb_and_an_attribute_bomb_are_invalid_at_once() {
    let robotsd = bounded_robotsd(&[]).await;
    let cases = [
        (
            namespace_bomb(12_000, 60),
            "too many namespace declarations",
        ),
        (attribute_bomb(50_000), "too many attributes on one element"),
    ];
    for (document, reason) in cases {
        let site = licensed_site(xml(&document)).await;
        let started = Instant::now();
        let answer = check(&robotsd, site.url("/page")).await;
        let took = started.elapsed();
        let report = &answer["usage"]["rsl"][0];
        assert_eq!(report["state"], "invalid", "{answer}");
        let why = report["reason"].as_str().unwrap_or_default();
        assert!(why.contains(reason), "{why}");
        // Seconds of parsing before the pre-scan; a wide margin for a busy machine.
        assert!(took < Duration::from_secs(3), "{reason}: took {took:?}");
        assert_eq!(site.hits("/license.xml"), 1);
    }
}

#[tokio::test]
async fn namespace_bombs_never_delay_the_probes_or_other_sites() {
    let robotsd = bounded_robotsd(&[]).await;
    let quiet = origin(|| ok("User-agent: *\nDisallow: /private/\n")).await;
    let cached = robotsd.url(&format!(
        "/v1/check?url={}&ua=ExampleBot",
        encode(&quiet.url("/page"))
    ));
    let livez = robotsd.admin_url("/livez");
    let client = reqwest::Client::new();
    assert_eq!(client.get(&cached).send().await.unwrap().status(), 200);

    // As many bombs at once as the runtime has workers (two at least), so that parsing them on
    // the workers, as before, leaves none to answer.
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    let mut sites = Vec::new();
    for _ in 0..workers {
        sites.push(licensed_site(xml(&namespace_bomb(12_000, 60))).await);
    }
    let done = std::sync::atomic::AtomicBool::new(false);
    let bombs = async {
        let checks = sites.iter().map(|s| check(&robotsd, s.url("/x")));
        let answers = futures_util::future::join_all(checks).await;
        done.store(true, Ordering::SeqCst);
        answers
    };
    // Until the bombs are answered, and 20 rounds at least.
    let probes = async {
        let (mut worst, mut rounds, started) = (Duration::ZERO, 0, Instant::now());
        while (!done.load(Ordering::SeqCst) || rounds < 20)
            && started.elapsed() < Duration::from_secs(120)
        {
            for url in [&livez, &cached] {
                let sent = Instant::now();
                let status = client.get(url).send().await.expect("answered").status();
                assert_eq!(status, 200, "{url}");
                worst = worst.max(sent.elapsed());
            }
            rounds += 1;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        worst
    };
    let (answers, worst) = tokio::join!(bombs, probes);
    for answer in &answers {
        assert_eq!(answer["usage"]["rsl"][0]["state"], "invalid", "{answer}");
    }
    // Before, the probes waited for the parses, seconds each; 0.5 s is a wide margin.
    assert!(
        worst < Duration::from_millis(500),
        "a probe or a cached check took {worst:?}"
    );
    assert_eq!(
        quiet.hits(),
        1,
        "the other site's check was answered from the cache"
    );
}

#[tokio::test]
async fn sigterm_is_honoured_while_bombs_are_checked() {
    let mut robotsd = bounded_robotsd(&["--shutdown-grace", "1s"]).await;
    let site = licensed_site(xml(&namespace_bomb(12_000, 60))).await;
    let other = licensed_site(xml(&namespace_bomb(12_000, 60))).await;
    let checks = [site.url("/x"), other.url("/x")].map(|url| {
        let check = robotsd.url(&format!("/v1/check?url={}&ua=ExampleBot", encode(&url)));
        tokio::spawn(async move { reqwest::get(check).await })
    });
    // Once both licenses are asked for, and their parses would have begun.
    assert!(eventually(|| site.hits("/license.xml") + other.hits("/license.xml") == 2).await);
    let sent = Instant::now();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &robotsd.pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());
    let mut exited = None;
    while exited.is_none() && sent.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(50)).await;
        exited = robotsd.exited();
    }
    let took = sent.elapsed();
    assert!(exited.is_some_and(|s| s.success()), "{exited:?}");
    // The grace (1 s) and a wide margin; before, the parses held the process for seconds.
    assert!(took < Duration::from_secs(4), "exited after {took:?}");
    for check in checks {
        let _ = check.await;
    }
}

#[tokio::test]
async fn a_document_heavier_than_its_share_is_fetched_once() {
    // 16 KiB of capacity: a document may take 2 KiB of it; this one holds tens of KB parsed,
    // more than the whole capacity (before, it was dropped at once and fetched on every check).
    let robotsd = bounded_robotsd(&["--rsl-capacity", "16KiB"]).await;
    let contents: String = (0..200)
        .map(|i| {
            format!(
                r#"<content url="/s{i}/"><license><permits>search</permits></license></content>"#
            )
        })
        .collect();
    let site = licensed_site(xml(&format!(
        r#"<rsl xmlns="https://rslstandard.org/rsl">{contents}</rsl>"#
    )))
    .await;
    for i in 0..5 {
        let answer = check(&robotsd, site.url(&format!("/s{i}/page"))).await;
        let report = &answer["usage"]["rsl"][0];
        assert_eq!(report["state"], "invalid", "{answer}");
        let why = report["reason"].as_str().unwrap_or_default();
        assert!(why.contains("--rsl-capacity"), "{why}");
        assert!(why.contains("2048 bytes"), "{why}");
    }
    assert_eq!(site.hits("/license.xml"), 1);
    // Held as an entry without a document, charged as one.
    assert!(robotsd.metric("robotsd_rsl_weight_bytes").await < 2_048.0);
}

#[tokio::test]
async fn a_license_url_longer_than_2048_bytes_is_not_fetched() {
    let site = Site::start("127.0.0.1").await;
    let long = site.url(&format!("/{}", "a".repeat(3_000)));
    // Longer than the engine's line limit: the engine cuts it, and a cut URL is another URL.
    let cut = site.url(&format!("/{}", "b".repeat(20_000)));
    let fits = site.url(&format!("/{}", "c".repeat(2_000)));
    assert!(fits.len() <= 2_048);
    site.serve(
        "/robots.txt",
        ok(&format!(
            "User-agent: *
Allow: /
License: {long}
License: {cut}
License: {fits}
"
        )),
    );
    site.serve(&fits[site.url("").len()..], xml(NO_TRAINING));
    let robotsd = rsl_robotsd().await;
    let answer = check(&robotsd, site.url("/page")).await;
    let reports = answer["usage"]["rsl"].as_array().expect("reports");
    let states: Vec<(&str, &str)> = reports
        .iter()
        .map(|r| {
            (
                r["state"].as_str().unwrap(),
                r["reason"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    let too_long = "the License URL is longer than 2,048 bytes";
    assert_eq!(
        states,
        [
            ("not_fetched", too_long),
            ("not_fetched", too_long),
            ("covered", "")
        ],
        "{answer}"
    );
    let fetched: usize = site.hits.lock().unwrap().values().sum();
    assert_eq!(fetched, 2, "robots.txt and the license that fits only");
}

#[tokio::test]
async fn license_lines_are_reported_not_unsupported() {
    let site = licensed_site(xml(NO_TRAINING)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    let robots = json_of(
        reqwest::get(robotsd.url(&format!("/v1/robots?url={}", encode(&site.url("/")))))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(
        robots["parsed"]["diagnostics"],
        json!([{"line": 3, "kind": "reported_only", "key": "License"}]),
        "{robots}"
    );
}
