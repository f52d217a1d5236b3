//! RFC 9309 percent-decoding through the service, as a crawler asks for it: the real binary, a
//! loopback origin, the `percent_decoding` parameter and the `--percent-decoding` default.

use serde_json::{Value, json};

use crate::support::*;

const ROBOTS: &str = "User-agent: *\nDisallow: /private\nAllow: /%70ublic\nDisallow: /p\n";

fn encode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

async fn get(url: &str) -> (u16, Value) {
    let response = reqwest::get(url).await.expect("answered");
    let status = response.status().as_u16();
    (status, json_of(response).await)
}

/// `GET /v1/check` for `path` on `site`, with extra query parameters.
async fn check(robotsd: &Robotsd, site: &OriginServer, path: &str, extra: &str) -> (u16, Value) {
    let url = encode(&site.url(path));
    get(&robotsd.url(&format!("/v1/check?url={url}&ua=SomeBot{extra}"))).await
}

#[tokio::test]
async fn a_request_chooses_rfc9309_and_google_stays_the_default() {
    let site = origin(|| ok(ROBOTS)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;

    // Google's way: `%70` is not `p`, so neither `/private` nor `/p` matches `/%70rivate/x`.
    let (status, google) = check(&robotsd, &site, "/%70rivate/x", "").await;
    assert_eq!(status, 200, "{google}");
    assert_eq!(google["allowed"], true, "{google}");
    assert_eq!(google["reason"], "no_matching_rule");
    let (_, explicit) = check(&robotsd, &site, "/%70rivate/x", "&percent_decoding=google").await;
    assert_eq!(explicit["allowed"], true);

    // RFC 9309: decoded on both sides, so `/private` decides and is reported as written.
    let (status, rfc) = check(&robotsd, &site, "/%70rivate/x", "&percent_decoding=rfc9309").await;
    assert_eq!(status, 200, "{rfc}");
    assert_eq!(rfc["allowed"], false, "{rfc}");
    assert_eq!(
        rfc["rule"],
        json!({"directive": "disallow", "pattern": "/private", "line": 2})
    );
    // The encoded `allow: /%70ublic` matches the plain URL, and outranks `disallow: /p`.
    let (_, public) = check(&robotsd, &site, "/public/x", "&percent_decoding=rfc9309").await;
    assert_eq!(public["allowed"], true, "{public}");
    assert_eq!(public["rule"]["pattern"], "/%70ublic");
    let (_, public) = check(&robotsd, &site, "/public/x", "").await;
    assert_eq!(public["allowed"], false, "{public}");
    assert_eq!(public["rule"]["pattern"], "/p");

    // The lean view takes it too.
    let (_, verdict) = check(
        &robotsd,
        &site,
        "/%70rivate/x",
        "&view=verdict&percent_decoding=rfc9309",
    )
    .await;
    assert_eq!(verdict, json!({"allowed": false, "reason": "matched_rule"}));

    // The batch takes it as a query parameter, for every item.
    let batch = json!({"ua": "SomeBot", "urls": [site.url("/%70rivate/x"), site.url("/public/x")]});
    let (status, answers) =
        post_value(&robotsd.url("/v1/check?percent_decoding=rfc9309"), &batch).await;
    assert_eq!(status, 200, "{answers}");
    assert_eq!(answers["results"][0]["allowed"], false);
    assert_eq!(answers["results"][1]["allowed"], true);
    let (_, answers) = post_value(&robotsd.url("/v1/check"), &batch).await;
    assert_eq!(answers["results"][0]["allowed"], true);
    assert_eq!(answers["results"][1]["allowed"], false);

    // One fetch served every mode: the mode is applied to the cached parse.
    assert_eq!(site.hits(), 1);
}

#[tokio::test]
async fn an_unknown_mode_or_a_repeated_one_is_refused_by_name() {
    let site = origin(|| ok(ROBOTS)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    for extra in [
        "&percent_decoding=rfc",
        "&percent_decoding=google&percent_decoding=rfc9309",
    ] {
        let (status, problem) = check(&robotsd, &site, "/x", extra).await;
        assert_eq!(status, 400, "{extra}: {problem}");
        assert_eq!(
            problem["type"], "urn:robotsd:problem:invalid-parameter",
            "{problem}"
        );
        assert_eq!(problem["parameter"], "percent_decoding");
    }
    let (_, problem) = check(&robotsd, &site, "/x", "&percent_decoding=RFC").await;
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("google, rfc9309"), "{problem}");
    // Nothing was fetched for a refused question.
    assert_eq!(site.hits(), 0);
}

#[tokio::test]
async fn evaluate_takes_it_in_the_body() {
    let robotsd = Robotsd::start(&[], false).await;
    let request = |mode: Value| {
        json!({"robots_txt": ROBOTS, "ua": "SomeBot", "urls": ["/%70rivate/x", "/public/x"],
               "percent_decoding": mode})
    };
    let evaluate = robotsd.url("/v1/evaluate");
    let (status, rfc) = post_value(&evaluate, &request(json!("rfc9309"))).await;
    assert_eq!(status, 200, "{rfc}");
    let allowed = |v: &Value| [0, 1].map(|i| v["results"][i]["allowed"].clone());
    assert_eq!(allowed(&rfc), [json!(false), json!(true)]);
    let (_, google) = post_value(&evaluate, &request(Value::Null)).await;
    assert_eq!(allowed(&google), [json!(true), json!(false)]);
    let (status, problem) = post_value(&evaluate, &request(json!("rfc3986"))).await;
    assert_eq!(status, 400, "{problem}");
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("rfc9309"), "{problem}");
}

#[tokio::test]
async fn the_server_default_is_a_setting_and_a_request_can_go_back_to_google() {
    let site = origin(|| ok(ROBOTS)).await;
    let robotsd = Robotsd::start(
        &["--allow-private-networks", "--percent-decoding", "rfc9309"],
        false,
    )
    .await;
    let (_, rfc) = check(&robotsd, &site, "/%70rivate/x", "").await;
    assert_eq!(rfc["allowed"], false, "{rfc}");
    let (_, google) = check(&robotsd, &site, "/%70rivate/x", "&percent_decoding=google").await;
    assert_eq!(google["allowed"], true, "{google}");
    let evaluate = json!({"robots_txt": ROBOTS, "ua": "SomeBot", "url": "/%70rivate/x"});
    let (_, answer) = post_value(&robotsd.url("/v1/evaluate"), &evaluate).await;
    assert_eq!(answer["results"][0]["allowed"], false, "{answer}");
}
