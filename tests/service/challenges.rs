//! A robots.txt answered by a bot challenge (issue 59, item 9): the status is read as Google
//! reads it (a 403: no restriction; a 503: everything disallowed while it lasts), and the answer
//! says it was a challenge (`robots.challenged`), as do a metric and a log line. A plain error
//! page is not a challenge.

use crate::support::{Robotsd, json_of, origin};

async fn check(robotsd: &Robotsd, url: &str) -> serde_json::Value {
    let url =
        url::Url::parse_with_params(&robotsd.url("/v1/check"), [("url", url), ("ua", "SomeBot")])
            .expect("a URL");
    json_of(reqwest::get(url).await.expect("robotsd answers")).await
}

#[tokio::test]
async fn a_challenge_is_read_as_its_status_and_said() {
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    // Cloudflare's managed challenge: a 403 with its documented header.
    let cloudflare = origin(|| {
        (
            403,
            vec![
                ("cf-mitigated", "challenge".to_owned()),
                ("content-type", "text/html".to_owned()),
            ],
            b"<html>Just a moment...</html>".to_vec(),
        )
    })
    .await;
    let answer = check(&robotsd, &cloudflare.url("/page")).await;
    assert_eq!(answer["allowed"], true, "{answer}");
    assert_eq!(answer["robots"]["status"], 403, "{answer}");
    assert_eq!(
        answer["robots"]["challenged"]["vendor"], "cloudflare",
        "{answer}"
    );
    assert_eq!(
        answer["robots"]["challenged"]["marker"],
        "cf-mitigated: challenge"
    );
    // A challenge page in a 503's HTML: disallowed while the origin backs off, and said.
    let page = origin(|| {
        (
            503,
            vec![("content-type", "text/html; charset=utf-8".to_owned())],
            br#"<html><script src="/cdn-cgi/challenge-platform/h/b/orchestrate/jsch/v1"></script></html>"#
                .to_vec(),
        )
    })
    .await;
    let answer = check(&robotsd, &page.url("/page")).await;
    assert_eq!(answer["allowed"], false, "{answer}");
    assert_eq!(
        answer["robots"]["challenged"]["marker"], "/cdn-cgi/challenge-platform/",
        "{answer}"
    );
    // A server's own 403 page is no challenge: no member at all.
    let plain = origin(|| {
        (
            403,
            vec![("content-type", "text/html".to_owned())],
            b"<html><h1>403 Forbidden</h1></html>".to_vec(),
        )
    })
    .await;
    let answer = check(&robotsd, &plain.url("/page")).await;
    assert_eq!(answer["allowed"], true, "{answer}");
    assert!(answer["robots"].get("challenged").is_none(), "{answer}");
    assert_eq!(
        robotsd
            .metric("robotsd_robots_challenges_total{vendor=\"cloudflare\"}")
            .await,
        2.0
    );
}

#[tokio::test]
async fn a_fleet_that_would_rather_wait_reads_a_challenge_as_unreachable() {
    let robotsd = Robotsd::start(
        &["--allow-private-networks", "--challenge-as", "unreachable"],
        false,
    )
    .await;
    let cloudflare = origin(|| {
        (
            403,
            vec![("cf-mitigated", "challenge".to_owned())],
            Vec::new(),
        )
    })
    .await;
    let answer = check(&robotsd, &cloudflare.url("/page")).await;
    assert_eq!(answer["allowed"], false, "{answer}");
    assert_eq!(
        answer["robots"]["challenged"]["vendor"], "cloudflare",
        "{answer}"
    );
    let last_error = answer["robots"]["backoff"]["last_error"]
        .as_str()
        .unwrap_or("");
    assert!(last_error.contains("bot challenge"), "{answer}");
    // A plain 403 is still no restriction.
    let plain = origin(|| (403, Vec::new(), Vec::new())).await;
    let answer = check(&robotsd, &plain.url("/page")).await;
    assert_eq!(answer["allowed"], true, "{answer}");
}
