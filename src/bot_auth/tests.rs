//! The draft's test vectors (the key is RFC 9421's `test-key-ed25519`, Appendix B.1.4; Ed25519 is
//! deterministic, so a signature is reproduced byte for byte or not at all).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::keys::{KeySet, KeyStatus, thumbprint};
use super::message::{
    Component, Param, SignatureParams, sf_string, signature_base, signature_params,
};
use super::signer::{self, sign, sign_request};

const X: &str = "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs";
const D: &str = "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU";
const KID: &str = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";

fn vector_keys() -> KeySet {
    KeySet::from_json(&format!(
        r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","x":"{X}","d":"{D}","status":"active"}}]}}"#
    ))
    .expect("the vector's key")
}

fn plain(name: &'static str, value: &str) -> Component {
    Component {
        name,
        params: Vec::new(),
        value: value.to_owned(),
    }
}

#[test]
fn the_key_id_is_the_jwk_thumbprint() {
    let keys = vector_keys();
    assert_eq!(keys.active().kid(), KID);
    assert_eq!(keys.active().x(), X);
    // RFC 8037 Appendix A.3's own example.
    let x = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
        .unwrap();
    let public = ed25519_dalek::VerifyingKey::from_bytes(&x.try_into().unwrap()).unwrap();
    assert_eq!(
        thumbprint(&public),
        "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
    );
}

#[test]
fn the_drafts_request_vector_is_reproduced() {
    // The dictionary form of Signature-Agent: member `agent2`, covered with `;key="agent2"`.
    let keys = vector_keys();
    let components = [
        plain("@authority", "example.com"),
        Component {
            name: "signature-agent",
            params: vec![("key", Param::String("agent2".into()))],
            value: sf_string("https://signature-agent.test").unwrap(),
        },
    ];
    let params = SignatureParams {
        created: 1_735_689_600,
        keyid: KID.into(),
        alg: Some("ed25519"),
        expires: 4_889_289_600,
        nonce: Some(
            "n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA=="
                .into(),
        ),
        tag: "web-bot-auth",
    };
    let (input, signature) = sign(keys.active(), &components, &params).unwrap();
    assert_eq!(
        input,
        r#"("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth""#
    );
    assert_eq!(
        signature,
        "RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg=="
    );
    assert_eq!(
        signature_base(&components, &input).unwrap(),
        format!(
            "\"@authority\": example.com\n\"signature-agent\";key=\"agent2\": \"https://signature-agent.test\"\n\"@signature-params\": {input}"
        )
    );
}

#[test]
fn a_request_is_signed_for_its_method_authority_path_and_query() {
    let keys = vector_keys();
    let url = url::Url::parse("https://Example.COM:443/a%20b/c?x=1&y").unwrap();
    let nonce = [7u8; signer::NONCE_BYTES];
    let signed = sign_request(
        keys.active(),
        "https://bot.example/",
        "GET",
        &url,
        1_800_000_000,
        1_800_000_060,
        &nonce,
    )
    .unwrap();
    assert_eq!(signed.signature_agent, r#"sig1="https://bot.example/""#);
    let nonce_b64 = STANDARD.encode(nonce);
    assert_eq!(
        signed.signature_input,
        format!(
            r#"sig1=("@method" "@authority" "@path" "@query" "signature-agent";key="sig1");created=1800000000;keyid="{KID}";alg="ed25519";expires=1800000060;nonce="{nonce_b64}";tag="web-bot-auth""#
        )
    );
    // The signature verifies over the base a site builds from the request it receives.
    let base = format!(
        "\"@method\": GET\n\"@authority\": example.com\n\"@path\": /a%20b/c\n\"@query\": ?x=1&y\n\"signature-agent\";key=\"sig1\": \"https://bot.example/\"\n\"@signature-params\": {}",
        &signed.signature_input["sig1=".len()..]
    );
    let bytes = STANDARD
        .decode(
            signed
                .signature
                .trim_start_matches("sig1=:")
                .trim_end_matches(':'),
        )
        .unwrap();
    let signature = ed25519_dalek::Signature::from_slice(&bytes).unwrap();
    let public = ed25519_dalek::VerifyingKey::from_bytes(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(X)
            .unwrap()
            .try_into()
            .unwrap(),
    )
    .unwrap();
    public.verify_strict(base.as_bytes(), &signature).unwrap();
    // Another path, another port, no query: another base, so this signature fails there.
    for other in [
        "https://example.com/a%20b/d?x=1&y",
        "https://example.com:8443/a%20b/c?x=1&y",
        "https://example.com/a%20b/c",
    ] {
        let url = url::Url::parse(other).unwrap();
        let components = signer::request_components("GET", &url, "https://bot.example/").unwrap();
        let params = signature_params(
            &components,
            &SignatureParams {
                created: 1_800_000_000,
                keyid: KID.into(),
                alg: Some("ed25519"),
                expires: 1_800_000_060,
                nonce: Some(nonce_b64.clone()),
                tag: "web-bot-auth",
            },
        )
        .unwrap();
        let base = signature_base(&components, &params).unwrap();
        assert!(
            public.verify_strict(base.as_bytes(), &signature).is_err(),
            "{other}"
        );
    }
    // An empty query is `?`.
    let bare = url::Url::parse("http://127.0.0.1:8080").unwrap();
    let components = signer::request_components("GET", &bare, "https://bot.example/").unwrap();
    assert_eq!(components[1].value, "127.0.0.1:8080");
    assert_eq!(components[2].value, "/");
    assert_eq!(components[3].value, "?");
}

#[test]
fn key_files_are_checked_and_never_echoed() {
    let one = |status: &str, d: bool| {
        let d = if d {
            format!(r#","d":"{D}""#)
        } else {
            String::new()
        };
        format!(r#"{{"kty":"OKP","crv":"Ed25519","x":"{X}"{d},"status":"{status}"}}"#)
    };
    // No active key, or two; an active key without its private half.
    for bad in [
        format!(r#"{{"keys":[{}]}}"#, one("published", false)),
        format!(
            r#"{{"keys":[{},{}]}}"#,
            one("active", true),
            one("active", true)
        ),
        format!(r#"{{"keys":[{}]}}"#, one("active", false)),
        r#"{"keys":[{"kty":"RSA","crv":"Ed25519","x":"","status":"active"}]}"#.to_owned(),
        format!(
            r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","x":"{X}","d":"{X}","status":"active"}}]}}"#
        ),
        r#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA","status":"active"}]}"#.to_owned(),
        format!(
            r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","x":"{X}","d":"{D}","status":"sometimes"}}]}}"#
        ),
    ] {
        let error = KeySet::from_json(&bad).unwrap_err().to_string();
        assert!(!error.contains(D), "{error}");
    }
    // The active key alone.
    let set = KeySet::from_json(&format!(r#"{{"keys":[{}]}}"#, one("active", true))).unwrap();
    assert_eq!(set.keys().len(), 1);
    assert_eq!(set.active().status(), KeyStatus::Active);
    assert!(!format!("{set:?}").contains(D));
}

#[test]
fn the_drafts_directory_response_is_reproduced() {
    let keys = vector_keys();
    let body = super::directory::body(&keys);
    assert_eq!(
        body,
        r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}"#
    );
    let headers = super::directory::sign_directory(
        &keys,
        &body,
        "Signature-Agent.test",
        1_735_689_600,
        4_889_289_600,
    )
    .unwrap();
    assert_eq!(
        headers.content_digest,
        "sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:"
    );
    assert_eq!(
        headers.signature_input,
        r#"binding0=("@authority";req "content-digest");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;tag="http-message-signatures-directory""#
    );
    assert_eq!(
        headers.signature,
        "binding0=:yiHq0TXrbpzbmlttAQMpYoAufitFJUWuNsakB7QQMoN0EHbo5o51bZRVR8az/ptTWCwllix9clrKXfGKwdPzBg==:"
    );
}

#[test]
fn a_published_key_is_listed_and_signs_the_directory_but_no_request() {
    // A second key, published ahead of a rotation, with its private half.
    let next = ed25519_dalek::SigningKey::from_bytes(&[42u8; 32]);
    let url_safe = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let file = format!(
        r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","x":"{X}","d":"{D}","status":"active"}},{{"kty":"OKP","crv":"Ed25519","x":"{}","d":"{}","status":"published"}},{{"kty":"OKP","crv":"Ed25519","x":"{}","status":"published"}}]}}"#,
        url_safe.encode(next.verifying_key().as_bytes()),
        url_safe.encode(next.to_bytes()),
        url_safe.encode(
            ed25519_dalek::SigningKey::from_bytes(&[43u8; 32])
                .verifying_key()
                .as_bytes()
        ),
    );
    let keys = KeySet::from_json(&file).unwrap();
    let body = super::directory::body(&keys);
    assert_eq!(body.matches("\"kid\"").count(), 3);
    let headers = super::directory::sign_directory(&keys, &body, "bot.example", 1, 2).unwrap();
    // The two keys robotsd holds sign; the third is only listed.
    assert!(
        headers.signature.starts_with("binding0=:") && headers.signature.contains(", binding1=:")
    );
    assert!(!headers.signature.contains("binding2"));
    let url = url::Url::parse("https://example.com/").unwrap();
    let published = &keys.keys()[1];
    assert!(
        sign_request(
            published,
            "https://bot.example/",
            "GET",
            &url,
            1,
            2,
            &[0; 64]
        )
        .is_err()
    );
    assert_eq!(keys.active().kid(), KID);
}

/// A clock the test sets.
#[derive(Debug)]
struct SetClock(std::sync::Mutex<crate::clock::Timestamp>);

impl crate::clock::Clock for SetClock {
    fn now(&self) -> crate::clock::Timestamp {
        *self.0.lock().unwrap()
    }
}

fn at(secs: u64) -> crate::clock::Timestamp {
    crate::clock::Timestamp::from_unix_millis(secs * 1000)
}

#[test]
fn the_signer_signs_now_for_its_lifetime_or_from_a_later_slot() {
    use super::signing::Signing;
    use std::time::Duration;
    let clock = std::sync::Arc::new(SetClock(std::sync::Mutex::new(at(1_800_000_000))));
    let signing = Signing::new(
        std::sync::Arc::new(vector_keys()),
        None,
        "https://bot.example/",
        Duration::from_secs(60),
        clock.clone(),
    )
    .unwrap();
    let url = url::Url::parse("https://example.com/page").unwrap();
    let first = signing.sign("GET", &url, None).unwrap();
    assert_eq!(
        (first.created, first.expires),
        (1_800_000_000, 1_800_000_060)
    );
    // A slot 30 s ahead: made now, good until a minute after the slot.
    let paced = signing.sign("GET", &url, Some(at(1_800_000_030))).unwrap();
    assert_eq!(
        (paced.created, paced.expires),
        (1_800_000_000, 1_800_000_090)
    );
    // A slot already past does not shorten it.
    let late = signing.sign("HEAD", &url, Some(at(1_799_999_000))).unwrap();
    assert_eq!(late.expires, 1_800_000_060);
    // A fresh nonce each time.
    let nonce = |s: &super::signer::SignedRequest| {
        s.signature_input.split("nonce=").nth(1).unwrap().to_owned()
    };
    assert_ne!(nonce(&first), nonce(&paced));
    assert!(signing.sign("POST", &url, None).is_err());
    *clock.0.lock().unwrap() = at(1_800_000_100);
    assert_eq!(
        signing.sign("GET", &url, None).unwrap().created,
        1_800_000_100
    );
    let (body, headers, fresh) = signing.directory().unwrap();
    assert!(fresh);
    assert!(body.contains(KID));
    assert!(headers.signature_input.contains("expires=1800086500"));
    // Served again for a minute, then signed anew.
    *clock.0.lock().unwrap() = at(1_800_000_159);
    let (_, again, fresh) = signing.directory().unwrap();
    assert!(!fresh);
    assert_eq!(again, headers);
    *clock.0.lock().unwrap() = at(1_800_000_160);
    let (_, later, fresh) = signing.directory().unwrap();
    assert!(fresh);
    assert!(later.signature_input.contains("created=1800000160"));
}

#[test]
fn the_agent_and_lifetime_are_checked() {
    use super::signing::{Signing, check_agent};
    use std::time::Duration;
    for bad in [
        "http://bot.example/",
        "https://",
        "bot.example",
        "https://user:pw@bot.example/",
        "https://bot.example/#x",
        "https://bot.example/é",
    ] {
        assert!(check_agent(bad).is_err(), "{bad}");
    }
    assert_eq!(
        check_agent("https://bot.example/agent").unwrap(),
        "https://bot.example/agent"
    );
    let clock = std::sync::Arc::new(SetClock(std::sync::Mutex::new(at(1))));
    for ttl in [0, 301] {
        let made = Signing::new(
            std::sync::Arc::new(vector_keys()),
            None,
            "https://bot.example/",
            Duration::from_secs(ttl),
            clock.clone(),
        );
        assert!(made.is_err(), "{ttl}");
    }
}

#[test]
fn a_reload_rotates_the_active_key_and_a_bad_file_keeps_the_old_one() {
    use super::signing::Signing;
    use std::time::Duration;
    let dir = std::env::temp_dir().join(format!("robotsd-wba-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("keys.json");
    let url_safe = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let next = ed25519_dalek::SigningKey::from_bytes(&[42u8; 32]);
    let next_x = url_safe.encode(next.verifying_key().as_bytes());
    let next_d = url_safe.encode(next.to_bytes());
    let write = |active_first: bool| {
        let (a, b) = if active_first {
            ("active", "published")
        } else {
            ("published", "active")
        };
        std::fs::write(
            &file,
            format!(
                r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","x":"{X}","d":"{D}","status":"{a}"}},{{"kty":"OKP","crv":"Ed25519","x":"{next_x}","d":"{next_d}","status":"{b}"}}]}}"#
            ),
        )
        .unwrap();
    };
    write(true);
    let clock = std::sync::Arc::new(SetClock(std::sync::Mutex::new(at(1_800_000_000))));
    let keys = std::sync::Arc::new(KeySet::load(&file).unwrap());
    let signing = Signing::new(
        keys,
        Some(file.clone()),
        "https://bot.example/",
        Duration::from_secs(60),
        clock,
    )
    .unwrap();
    assert_eq!(signing.active_kid(), KID);
    write(false);
    let reloaded = signing.reload().unwrap();
    assert_eq!(reloaded.was, KID);
    assert_eq!(reloaded.now, thumbprint(&next.verifying_key()));
    assert_eq!(reloaded.keys, 2);
    let url = url::Url::parse("https://example.com/").unwrap();
    assert!(
        signing
            .sign("GET", &url, None)
            .unwrap()
            .signature_input
            .contains(&reloaded.now)
    );
    // A file that cannot be used: the keys in force stay.
    std::fs::write(&file, "{").unwrap();
    assert!(signing.reload().is_err());
    assert_eq!(signing.active_kid(), reloaded.now);
    let _ = std::fs::remove_dir_all(&dir);
}
