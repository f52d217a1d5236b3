//! What the tester page needs from the service, through the real binary: the page and its
//! assets under a strict policy, `--no-ui`, the fetched text from `/v1/robots`, and the parsed
//! file and the 500 KiB cut from `/v1/evaluate`. The page itself is tested in a real browser
//! (`tests/browser/tester.py`, run by `.ci/browser-checks.sh`).

use serde_json::json;

use crate::support::*;

const ROBOTS: &str = "# a comment robotsd does not parse\nUser-agent: *\nDisallow: /private\n";

#[tokio::test]
async fn the_page_and_its_assets_are_served_under_a_strict_policy() {
    let robotsd = Robotsd::start(&[], false).await;
    for (path, kind) in [
        ("/", "text/html"),
        ("/ui/app.js", "text/javascript"),
        ("/ui/app.css", "text/css"),
        ("/ui/page.js", "text/javascript"),
    ] {
        let response = reqwest::get(robotsd.url(path)).await.expect("answered");
        assert_eq!(response.status(), 200, "{path}");
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default()
        };
        assert!(header("content-type").starts_with(kind), "{path}");
        assert_eq!(
            header("content-security-policy"),
            robotsd::ui::CONTENT_SECURITY_POLICY,
            "{path}"
        );
        assert_eq!(header("x-content-type-options"), "nosniff");
    }
    // The page is counted under its own routes, not as unknown paths.
    let metric = r#"robotsd_http_requests_total{method="GET",route="/",status="200"}"#;
    assert_eq!(robotsd.metric(metric).await, 1.0);
}

#[tokio::test]
async fn no_ui_leaves_only_the_api_and_the_docs() {
    let robotsd = Robotsd::start(&["--no-ui"], false).await;
    let response = reqwest::get(robotsd.url("/")).await.expect("answered");
    assert_eq!(response.status(), 404);
    assert_eq!(
        json_of(response).await["type"],
        "urn:robotsd:problem:not-found"
    );
    let response = reqwest::get(robotsd.url("/ui/app.js"))
        .await
        .expect("answered");
    assert_eq!(response.status(), 404);
    let docs = reqwest::get(robotsd.url("/docs/")).await.expect("answered");
    assert_eq!(docs.status(), 200);
}

#[tokio::test]
async fn robots_gives_the_fetched_text_when_asked() {
    let site = origin(|| ok(ROBOTS)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    let url = url::form_urlencoded::byte_serialize(site.url("/").as_bytes()).collect::<String>();
    let plain = json_of(
        reqwest::get(robotsd.url(&format!("/v1/robots?url={url}")))
            .await
            .expect("answered"),
    )
    .await;
    assert!(plain.get("robots_txt").is_none(), "{plain}");
    let with_text = json_of(
        reqwest::get(robotsd.url(&format!("/v1/robots?url={url}&include=robots_txt")))
            .await
            .expect("answered"),
    )
    .await;
    // The exact text, comment included, from the cache: no second fetch.
    assert_eq!(with_text["robots_txt"], ROBOTS, "{with_text}");
    assert_eq!(with_text["robots"]["cache"], "hit");
    assert_eq!(site.hits(), 1);
    let response = reqwest::get(robotsd.url(&format!("/v1/robots?url={url}&include=body")))
        .await
        .expect("answered");
    assert_eq!(response.status(), 400);
    assert_eq!(json_of(response).await["parameter"], "include");

    // No robots.txt: nothing to show.
    let missing = origin(|| status(404)).await;
    let url = url::form_urlencoded::byte_serialize(missing.url("/").as_bytes()).collect::<String>();
    let none = json_of(
        reqwest::get(robotsd.url(&format!("/v1/robots?url={url}&include=robots_txt")))
            .await
            .expect("answered"),
    )
    .await;
    assert_eq!(none["state"], "no_robots_txt");
    assert!(none.get("robots_txt").is_none(), "{none}");
}

#[tokio::test]
async fn evaluate_gives_the_parsed_file_and_cuts_where_a_fetch_cuts() {
    let robotsd = Robotsd::start(&[], false).await;
    let evaluate = robotsd.url("/v1/evaluate");
    let (status, answer) = post_value(
        &evaluate,
        &json!({"robots_txt": "User-agent: *\nDisalow: /x\nNoindex: /y\n", "ua": "bot",
                "url": "/x", "include": "parsed"}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["results"][0]["allowed"], false);
    let kinds: Vec<&str> = answer["parsed"]["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["accepted_typo", "unsupported_key"]);
    assert!(answer.get("cut_at_bytes").is_none(), "{answer}");

    // A rule past 512,000 bytes is ignored, as it would be in a fetched file, and the cut is said.
    let long = format!(
        "User-agent: *\n{}Disallow: /late\n",
        "# padding line of a long file\n".repeat(20_000)
    );
    let (status, answer) = post_value(
        &evaluate,
        &json!({"robots_txt": long, "ua": "bot", "url": "/late"}),
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["results"][0]["allowed"], true, "{answer}");
    assert_eq!(answer["cut_at_bytes"], 512_000);
    assert!(answer.get("parsed").is_none());
}
