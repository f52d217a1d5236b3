//! Web Bot Auth through the real binary: `sign=GET` on a check answers the three headers for an
//! allowed URL and none for a disallowed one, and the signature verifies over the base a site
//! builds from the request it receives (written here from RFC 9421, not with robotsd's code).

use std::time::Duration;

use base64::Engine as _;
use serde_json::Value;

use crate::support::{Robotsd, json_of, ok, origin, post_value};

const ROBOTS: &str = "User-agent: *\nDisallow: /private\n";
/// RFC 9421's `test-key-ed25519` (Appendix B.1.4).
const X: &str = "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs";
const D: &str = "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU";
const KID: &str = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";
const AGENT: &str = "https://bot.example/";

fn key_file() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("robotsd-wba-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let file = dir.join("keys.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","x":"{X}","d":"{D}","status":"active"}}]}}"#
        ),
    )
    .expect("the key file");
    file
}

/// A robotsd that may fetch loopback origins, signing with [`key_file`] for [`AGENT`], with
/// `more` flags.
async fn signing_robotsd(more: &[&str]) -> Robotsd {
    let keys = key_file();
    let mut args = vec![
        "--allow-private-networks",
        "--wba-keys",
        keys.to_str().unwrap(),
        "--wba-agent",
        AGENT,
    ];
    args.extend_from_slice(more);
    Robotsd::start(&args, false).await
}

async fn check(robotsd: &Robotsd, query: &[(&str, &str)]) -> (u16, Value) {
    let url = url::Url::parse_with_params(&robotsd.url("/v1/check"), query).expect("a URL");
    let response = reqwest::get(url).await.expect("robotsd answers");
    (response.status().as_u16(), json_of(response).await)
}

/// Whether `sign`'s signature verifies over the base of `method` `url` with its agent.
fn verifies(sign: &Value, method: &str, url: &str) -> bool {
    let url = url::Url::parse(url).expect("a URL");
    let authority = match url.port() {
        Some(port) => format!("{}:{port}", url.host_str().unwrap()),
        None => url.host_str().unwrap().to_owned(),
    };
    let input = sign["headers"]["Signature-Input"].as_str().unwrap();
    let agent = sign["headers"]["Signature-Agent"].as_str().unwrap();
    let params = input.strip_prefix("sig1=").expect("label sig1");
    let agent_value = agent.strip_prefix("sig1=").expect("member sig1");
    let base = format!(
        "\"@method\": {method}\n\"@authority\": {authority}\n\"@path\": {}\n\"@query\": ?{}\n\"signature-agent\";key=\"sig1\": {agent_value}\n\"@signature-params\": {params}",
        url.path(),
        url.query().unwrap_or("")
    );
    let signature = sign["headers"]["Signature"].as_str().unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(
            signature
                .strip_prefix("sig1=:")
                .unwrap()
                .strip_suffix(':')
                .unwrap(),
        )
        .unwrap();
    let public = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(X)
        .unwrap();
    let public = ed25519_dalek::VerifyingKey::from_bytes(&public.try_into().unwrap()).unwrap();
    let signature = ed25519_dalek::Signature::from_slice(&bytes).unwrap();
    public.verify_strict(base.as_bytes(), &signature).is_ok()
}

#[tokio::test]
async fn an_allowed_url_is_signed_and_a_disallowed_one_is_not() {
    let site = origin(|| ok(ROBOTS)).await;
    let robotsd = signing_robotsd(&[]).await;
    let url = site.url("/shop/item?id=7&ref=a%2Fb");
    let (status, answer) = check(
        &robotsd,
        &[("url", &url), ("ua", "SomeBot"), ("sign", "GET")],
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["allowed"], true);
    let sign = &answer["sign"];
    assert_eq!(sign["method"], "GET");
    assert_eq!(sign["url"], url);
    assert_eq!(sign["keyid"], KID);
    assert_eq!(
        sign["headers"]["Signature-Agent"],
        format!("sig1=\"{AGENT}\"")
    );
    let input = sign["headers"]["Signature-Input"].as_str().unwrap();
    assert!(
        input.contains("tag=\"web-bot-auth\"") && input.contains(&format!("keyid=\"{KID}\"")),
        "{input}"
    );
    // A minute, by default, from now.
    let created = humantime::parse_rfc3339(sign["created"].as_str().unwrap()).unwrap();
    let expires = humantime::parse_rfc3339(sign["expires"].as_str().unwrap()).unwrap();
    assert_eq!(expires.duration_since(created).unwrap().as_secs(), 60);
    assert!(verifies(sign, "GET", &url));
    // The same headers on another request fail: another path, query or method.
    assert!(!verifies(
        sign,
        "GET",
        &site.url("/shop/item?id=8&ref=a%2Fb")
    ));
    assert!(!verifies(
        sign,
        "GET",
        &site.url("/shop/other?id=7&ref=a%2Fb")
    ));
    assert!(!verifies(sign, "HEAD", &url));
    // Disallowed: the verdict, and no signature.
    let (status, answer) = check(
        &robotsd,
        &[
            ("url", &site.url("/private/x")),
            ("ua", "SomeBot"),
            ("sign", "GET"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["allowed"], false);
    assert!(answer.get("sign").is_none(), "{answer}");
    // A fragment is never sent, so it is not in the URL signed.
    let (_, answer) = check(
        &robotsd,
        &[
            ("url", &format!("{url}#top")),
            ("ua", "SomeBot"),
            ("sign", "GET"),
        ],
    )
    .await;
    assert_eq!(answer["sign"]["url"], url, "{answer}");
    assert!(verifies(&answer["sign"], "GET", &url));
    // Not asked: none; the verdict alone still carries it when asked.
    let (_, answer) = check(&robotsd, &[("url", &url), ("ua", "SomeBot")]).await;
    assert!(answer.get("sign").is_none(), "{answer}");
    let (_, answer) = check(
        &robotsd,
        &[
            ("url", &url),
            ("ua", "SomeBot"),
            ("sign", "HEAD"),
            ("view", "verdict"),
        ],
    )
    .await;
    assert!(verifies(&answer["sign"], "HEAD", &url), "{answer}");
    // Another method is refused as a parameter.
    let (status, answer) = check(
        &robotsd,
        &[("url", &url), ("ua", "SomeBot"), ("sign", "POST")],
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["parameter"], "sign");
    // Three signatures made (GET, with a fragment, HEAD), counted by key; none for the rest.
    let series = format!("robotsd_wba_signatures_total{{kid=\"{KID}\",of=\"request\"}}");
    assert_eq!(robotsd.metric(&series).await, 3.0);
}

#[tokio::test]
async fn a_batch_signs_each_allowed_item() {
    let site = origin(|| ok("User-agent: *\nDisallow: /private\nCrawl-delay: 30\n")).await;
    let robotsd = signing_robotsd(&[]).await;
    let (first, second) = (site.url("/a?x=1"), site.url("/b"));
    let request = serde_json::json!({
        "ua": "SomeBot",
        "urls": [first, site.url("/private/c"), "not a url", second],
    });
    // Paced, then as verdicts without pacing: the origin's next slots would be a minute away,
    // past what robotsd reserves, and a deferred slot is not signed.
    for (view, query) in [("full", "pace=true"), ("verdict", "view=verdict")] {
        let endpoint = robotsd.url(&format!("/v1/check?sign=GET&{query}"));
        let (status, answer) = post_value(&endpoint, &request).await;
        assert_eq!(status, 200, "{answer}");
        let results = answer["results"].as_array().expect("results");
        // Allowed: signed for exactly its URL, lasting a minute from its slot (the origin's
        // slots are a Crawl-delay, 30 s, apart: a signature lasting from when it was made
        // would be 30 s off for one of them).
        for (item, url) in [(&results[0], &first), (&results[3], &second)] {
            assert_eq!(item["sign"]["url"], *url, "{item}");
            assert!(verifies(&item["sign"], "GET", url), "{item}");
        }
        let time = |value: &Value| humantime::parse_rfc3339(value.as_str().unwrap()).unwrap();
        for item in [&results[0], &results[3]] {
            if view == "full" {
                // From the slot, or from when it was signed if the slot had begun: within
                // seconds, on a busy machine too.
                let (from_slot, expires) = (
                    time(&item["pace"]["not_before"]) + Duration::from_secs(60),
                    time(&item["sign"]["expires"]),
                );
                let off = from_slot
                    .duration_since(expires)
                    .or_else(|_| expires.duration_since(from_slot));
                assert!(off.is_ok_and(|d| d < Duration::from_secs(5)), "{item}");
            }
        }
        // Disallowed, and a problem: no signature.
        assert_eq!(results[1]["allowed"], false, "{answer}");
        assert!(results[1].get("sign").is_none(), "{answer}");
        assert!(results[2].get("error").is_some(), "{answer}");
        assert!(results[2].get("sign").is_none(), "{answer}");
    }
    // Without keys, the batch is refused before anything is fetched.
    let plain = Robotsd::start(&["--allow-private-networks"], false).await;
    let (status, answer) = post_value(&plain.url("/v1/check?sign=GET"), &request).await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["type"], "urn:robotsd:problem:signing-off");
    assert_eq!(site.hits(), 1, "one fetch, by the robotsd with keys");
}

#[tokio::test]
async fn a_redirects_next_hop_is_checked_and_signed() {
    let site = origin(|| ok(ROBOTS)).await;
    let tokens = tokens_file();
    let robotsd = signing_robotsd(&["--api-token-file", tokens.to_str().unwrap()]).await;
    let sign = |body: Value| {
        let endpoint = robotsd.url("/v1/sign");
        async move {
            let response = reqwest::Client::new()
                .post(endpoint)
                .bearer_auth("t0ken-for-signing")
                .header("content-type", "application/json")
                .body(body.to_string())
                .send()
                .await
                .expect("robotsd answers");
            (response.status().as_u16(), json_of(response).await)
        }
    };
    let next = site.url("/moved/here?id=7");
    let (status, answer) = sign(serde_json::json!({"url": next, "ua": "SomeBot"})).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["allowed"], true, "{answer}");
    assert_eq!(answer["sign"]["url"], next);
    assert!(verifies(&answer["sign"], "GET", &next), "{answer}");
    let (_, answer) =
        sign(serde_json::json!({"url": next, "ua": ["SomeBot"], "method": "HEAD"})).await;
    assert!(verifies(&answer["sign"], "HEAD", &next), "{answer}");
    // Disallowed: the verdict, no signature.
    let (status, answer) =
        sign(serde_json::json!({"url": site.url("/private/x"), "ua": "SomeBot"})).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["allowed"], false);
    assert!(answer.get("sign").is_none(), "{answer}");
    // Another method, or a body that is not a request to sign.
    for body in [
        serde_json::json!({"url": next, "ua": "SomeBot", "method": "POST"}),
        serde_json::json!({"url": next}),
        serde_json::json!({"url": next, "ua": "SomeBot", "headers": {}}),
    ] {
        let (status, answer) = sign(body).await;
        assert_eq!(status, 400, "{answer}");
        assert_eq!(
            answer["type"], "urn:robotsd:problem:invalid-body",
            "{answer}"
        );
    }
    // Only a caller with a token may have requests signed.
    let response = reqwest::Client::new()
        .post(robotsd.url("/v1/sign"))
        .header("content-type", "application/json")
        .body(serde_json::json!({"url": next, "ua": "SomeBot"}).to_string())
        .send()
        .await
        .expect("robotsd answers");
    assert_eq!(response.status(), 401);
    // Without keys: refused before anything is fetched.
    let plain = Robotsd::start(&["--allow-private-networks"], false).await;
    let (status, answer) = post_value(
        &plain.url("/v1/sign"),
        &serde_json::json!({"url": next, "ua": "SomeBot"}),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["type"], "urn:robotsd:problem:signing-off");
    assert_eq!(site.hits(), 1, "one fetch, by the robotsd with keys");
}

#[tokio::test]
async fn with_a_product_token_the_card_names_it_and_only_its_checks_are_signed() {
    let site = origin(|| ok(ROBOTS)).await;
    let keys = key_file();
    let agent = "https://bot.example/.well-known/http-message-signatures-directory";
    let robotsd = Robotsd::start(
        &[
            "--allow-private-networks",
            "--wba-keys",
            keys.to_str().unwrap(),
            "--wba-agent",
            agent,
            "--wba-product-token",
            "ExampleBot",
            "--operator-contact",
            "mailto:crawl-ops@bot.example",
        ],
        false,
    )
    .await;
    let response = reqwest::Client::new()
        .get(robotsd.url("/.well-known/signature-agent-card"))
        .header("host", "bot.example")
        .send()
        .await
        .expect("robotsd answers");
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    let card = json_of(response).await;
    assert_eq!(
        card["client_id"],
        "https://bot.example/.well-known/signature-agent-card"
    );
    assert_eq!(card["jwks_uri"], agent);
    assert_eq!(card["contacts"][0], "mailto:crawl-ops@bot.example");
    assert_eq!(card["web_bot_auth"]["rfc9309-product-token"], "ExampleBot");
    assert_eq!(card["web_bot_auth"]["rfc9309-compliance"], true);
    // A check made for the token is signed, in any form its ua takes.
    let url = site.url("/a");
    for ua in [
        "ExampleBot",
        "Mozilla/5.0 (compatible; ExampleBot/2.1; +https://bot.example/)",
    ] {
        let (status, answer) = check(&robotsd, &[("url", &url), ("ua", ua), ("sign", "GET")]).await;
        assert_eq!(status, 200, "{answer}");
        assert!(verifies(&answer["sign"], "GET", &url), "{answer}");
    }
    // One made for another agent is refused, on a check, a batch and POST /v1/sign alike,
    // before anything is fetched for it.
    let other = origin(|| ok(ROBOTS)).await;
    let (status, answer) = check(
        &robotsd,
        &[
            ("url", &other.url("/a")),
            ("ua", "OtherBot"),
            ("sign", "GET"),
        ],
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["type"], "urn:robotsd:problem:sign-other-agent");
    let (status, answer) = post_value(
        &robotsd.url("/v1/check?sign=GET"),
        &serde_json::json!({"checks": [
            {"url": other.url("/a"), "ua": "ExampleBot"},
            {"url": other.url("/b"), "ua": "OtherBot"},
        ]}),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["type"], "urn:robotsd:problem:sign-other-agent");
    let (status, answer) = post_value(
        &robotsd.url("/v1/sign"),
        &serde_json::json!({"url": other.url("/a"), "ua": "OtherBot"}),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["type"], "urn:robotsd:problem:sign-other-agent");
    assert_eq!(other.hits(), 0);
    // Unsigned, any agent is checked as ever.
    let (status, _) = check(&robotsd, &[("url", &other.url("/a")), ("ua", "OtherBot")]).await;
    assert_eq!(status, 200);
    // Without a product token there is no card.
    let plain = Robotsd::start(
        &["--wba-keys", keys.to_str().unwrap(), "--wba-agent", agent],
        false,
    )
    .await;
    let response = reqwest::get(plain.url("/.well-known/signature-agent-card"))
        .await
        .expect("robotsd answers");
    assert_eq!(response.status(), 404);
}

/// An origin that records each request's target and headers, answering `robots` for every path.
async fn recording_origin(
    robots: &'static str,
) -> (
    String,
    std::sync::Arc<std::sync::Mutex<Vec<(String, reqwest::header::HeaderMap)>>>,
) {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = std::sync::Arc::clone(&seen);
    let app = axum::Router::new().fallback(
        move |uri: axum::http::Uri, headers: axum::http::HeaderMap| {
            let kept = std::sync::Arc::clone(&kept);
            async move {
                let mut copy = reqwest::header::HeaderMap::new();
                for (name, value) in &headers {
                    copy.insert(
                        reqwest::header::HeaderName::from_bytes(name.as_str().as_bytes()).unwrap(),
                        reqwest::header::HeaderValue::from_bytes(value.as_bytes()).unwrap(),
                    );
                }
                kept.lock().unwrap().push((uri.to_string(), copy));
                robots
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.ok() });
    (base, seen)
}

#[tokio::test]
async fn robotsds_own_fetches_are_signed() {
    let (base, seen) = recording_origin(ROBOTS).await;
    let robotsd = signing_robotsd(&[]).await;
    let (status, answer) = check(
        &robotsd,
        &[("url", &format!("{base}/a")), ("ua", "SomeBot")],
    )
    .await;
    assert_eq!(status, 200, "{answer}");
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 1, "one fetch: {requests:?}");
    let (target, headers) = &requests[0];
    assert_eq!(target, "/robots.txt");
    let header = |name: &str| headers[name].to_str().unwrap().to_owned();
    let sign = serde_json::json!({"headers": {
        "Signature-Agent": header("signature-agent"),
        "Signature-Input": header("signature-input"),
        "Signature": header("signature"),
    }});
    let robots_url = format!("{base}/robots.txt");
    assert!(verifies(&sign, "GET", &robots_url), "{headers:?}");
    assert!(!verifies(&sign, "GET", &format!("{base}/robots.txt?x")));
    let series = format!("robotsd_wba_signatures_total{{kid=\"{KID}\",of=\"fetch\"}}");
    assert_eq!(robotsd.metric(&series).await, 1.0);
    // Without keys, nothing is signed.
    let (base, seen) = recording_origin(ROBOTS).await;
    let plain = Robotsd::start(&["--allow-private-networks"], false).await;
    check(&plain, &[("url", &format!("{base}/a")), ("ua", "SomeBot")]).await;
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].1.get("signature").is_none(), "{requests:?}");
}

fn tokens_file() -> std::path::PathBuf {
    let file = key_file().with_file_name("tokens");
    std::fs::write(&file, "t0ken-for-signing\n").expect("the token file");
    file
}

#[tokio::test]
async fn a_robotsd_without_keys_says_it_signs_nothing() {
    let site = origin(|| ok(ROBOTS)).await;
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    let (status, answer) = check(
        &robotsd,
        &[("url", &site.url("/a")), ("ua", "SomeBot"), ("sign", "GET")],
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["type"], "urn:robotsd:problem:signing-off");
    // Nothing was fetched for it.
    assert_eq!(site.hits(), 0);
}

#[tokio::test]
async fn the_key_directory_is_served_signed_for_the_host_asked() {
    // Eight keys published beside the active one: a body over the 1 KiB from which robotsd
    // compresses answers.
    let published: Vec<String> = (1..=8u8)
        .map(|i| {
            let public = ed25519_dalek::SigningKey::from_bytes(&[i; 32]).verifying_key();
            let x = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(public.as_bytes());
            format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{x}","status":"published"}}"#)
        })
        .collect();
    let keys = key_file().with_file_name("directory-keys.json");
    std::fs::write(
        &keys,
        format!(
            r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","x":"{X}","d":"{D}","status":"active"}},{}]}}"#,
            published.join(",")
        ),
    )
    .expect("the key file");
    let keys = keys.to_str().unwrap();
    let robotsd = Robotsd::start(&["--wba-keys", keys, "--wba-agent", AGENT], false).await;
    // No decoding by the client: what is checked is the bytes as sent.
    let client = reqwest::Client::builder()
        .no_gzip()
        .build()
        .expect("a client");
    // Asked as a site would, under the fleet's name, with gzip accepted: the body comes as
    // written, or its digest would not hold.
    let response = client
        .get(robotsd.url("/.well-known/http-message-signatures-directory"))
        .header("host", "Bot.Example")
        .header("accept-encoding", "gzip")
        .send()
        .await
        .expect("robotsd answers");
    assert_eq!(response.status(), 200);
    let header = |name: &str| {
        response.headers()[name]
            .to_str()
            .expect("a header")
            .to_owned()
    };
    assert_eq!(
        header("content-type"),
        "application/http-message-signatures-directory+json"
    );
    assert_eq!(header("cache-control"), "public, max-age=3600");
    assert!(response.headers().get("content-encoding").is_none());
    let (digest, input, signature) = (
        header("content-digest"),
        header("signature-input"),
        header("signature"),
    );
    let body = response.text().await.expect("a body");
    let jwks: Value = serde_json::from_str(&body).expect("JSON");
    assert!(body.len() > 1024, "{body}");
    assert_eq!(jwks["keys"].as_array().map(Vec::len), Some(9), "{body}");
    assert_eq!(jwks["keys"][0]["kid"], KID, "{body}");
    assert_eq!(jwks["keys"][0]["x"], X, "{body}");
    assert!(!body.contains(D), "no private key: {body}");
    use sha2::Digest as _;
    let expected = format!(
        "sha-256=:{}:",
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(body.as_bytes()))
    );
    assert_eq!(digest, expected);
    // One signature: only the active key's private half is held.
    let params = input.strip_prefix("binding0=").expect("one binding");
    assert!(!params.contains("binding1"), "{params}");
    assert!(
        params.starts_with("(\"@authority\";req \"content-digest\");created="),
        "{params}"
    );
    assert!(params.contains(&format!("keyid=\"{KID}\"")), "{params}");
    assert!(
        params.ends_with("tag=\"http-message-signatures-directory\""),
        "{params}"
    );
    let base = |authority: &str| {
        format!(
            "\"@authority\";req: {authority}\n\"content-digest\": {digest}\n\"@signature-params\": {params}"
        )
    };
    let signature = base64::engine::general_purpose::STANDARD
        .decode(
            signature
                .strip_prefix("binding0=:")
                .and_then(|s| s.strip_suffix(':'))
                .expect("binding0"),
        )
        .unwrap();
    let signature = ed25519_dalek::Signature::from_slice(&signature).unwrap();
    let public = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(X)
        .unwrap();
    let public = ed25519_dalek::VerifyingKey::from_bytes(&public.try_into().unwrap()).unwrap();
    assert!(
        public
            .verify_strict(base("bot.example").as_bytes(), &signature)
            .is_ok()
    );
    // Served again under another host, the copy does not verify.
    assert!(
        public
            .verify_strict(base("evil.example").as_bytes(), &signature)
            .is_err()
    );
    let series = format!("robotsd_wba_signatures_total{{kid=\"{KID}\",of=\"directory\"}}");
    assert_eq!(robotsd.metric(&series).await, 1.0);
    // Under another host: refused, not signed for it.
    let response = client
        .get(robotsd.url("/.well-known/http-message-signatures-directory"))
        .header("host", "evil.example")
        .send()
        .await
        .expect("robotsd answers");
    assert_eq!(response.status(), 421);
    assert_eq!(
        json_of(response).await["type"],
        "urn:robotsd:problem:misdirected"
    );
    // A robotsd without keys has no directory.
    let plain = Robotsd::start(&[], false).await;
    let response = reqwest::get(plain.url("/.well-known/http-message-signatures-directory"))
        .await
        .expect("robotsd answers");
    assert_eq!(response.status(), 404);
}
