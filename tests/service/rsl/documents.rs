//! License documents as RSL's own pages publish them, and hostile or broken ones: each answer
//! carries the right terms or a typed state, never an error.

use serde_json::json;

use super::*;

#[tokio::test]
async fn hostile_and_broken_documents_give_a_typed_state_never_an_error() {
    let deep = format!(
        r#"<rsl xmlns="https://rslstandard.org/rsl">{}<content url="/"/>{}</rsl>"#,
        "<x>".repeat(5_000),
        "</x>".repeat(5_000)
    );
    let bomb = r#"<?xml version="1.0"?>
<!DOCTYPE rsl [
  <!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
  <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
  <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
  <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
]>
<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license><permits>&d;</permits></license></content></rsl>"#;
    let external = r#"<?xml version="1.0"?>
<!DOCTYPE rsl [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license><permits>&x;</permits></license></content></rsl>"#;
    let huge = format!(
        r#"<rsl xmlns="https://rslstandard.org/rsl">{}</rsl>"#,
        r#"<content url="/x"><license><permits>search</permits></license></content>"#
            .repeat(10_000)
    );
    let many = format!(
        r#"<rsl xmlns="https://rslstandard.org/rsl"><content url="/">{}</content></rsl>"#,
        "<p/>".repeat(30_000)
    );
    let cases: Vec<(&str, Reply, &str, &str)> = vec![
        ("deep", xml(&deep), "invalid", "nested too deeply"),
        ("entity bomb", xml(bomb), "invalid", "DTD"),
        ("external entity", xml(external), "invalid", "DTD"),
        ("huge", xml(&huge), "invalid", "size limit"),
        (
            "too many nodes",
            xml(&many),
            "invalid",
            "too many XML nodes",
        ),
        (
            "wrong namespace",
            xml(r#"<rsl xmlns="https://example.com/not-rsl"><content url="/"/></rsl>"#),
            "invalid",
            "namespace",
        ),
        (
            "no namespace",
            xml(r#"<rsl><content url="/"/></rsl>"#),
            "invalid",
            "namespace",
        ),
        (
            "not XML",
            ok("User-agent: *\nDisallow:\n"),
            "invalid",
            "XML",
        ),
        (
            "no content",
            xml(r#"<rsl xmlns="https://rslstandard.org/rsl"></rsl>"#),
            "invalid",
            "no <content>",
        ),
        ("404", status(404), "fetch_failed", "404"),
        ("500", status(500), "fetch_failed", "500"),
    ];
    let robotsd = rsl_robotsd().await;
    for (name, reply, state, reason) in cases {
        let site = licensed_site(reply).await;
        let answer = check(&robotsd, &site.url("/page")).await;
        assert_eq!(answer["allowed"], true, "{name}: {answer}");
        let report = &answer["usage"]["rsl"][0];
        assert_eq!(report["state"], state, "{name}: {answer}");
        let why = report["reason"].as_str().unwrap_or_default();
        assert!(why.contains(reason), "{name}: {why:?}");
        assert_eq!(report["contents"], json!([]), "{name}");
    }
}

/// Documents as RSL's own pages publish them: the site-wide "prohibit all AI use" example, the
/// RSL Collective's template (a license server, and `royalty`, a payment type of the drafts
/// reported as written), the Schema.org guide's (a full URL on another site), the AI
/// Preferences guide's subscription, a document with another namespace's elements inside, and
/// the getting-started template as the page prints it, with typographic quotes, which is not XML.
#[tokio::test]
async fn the_spec_and_guide_examples_read_as_published() {
    let all_ai = r#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/">
    <license>
      <prohibits type="usage">ai-all</prohibits>
    </license>
  </content>
</rsl>"#;
    let collective = r#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/" server="https://rslcollective.org/api">
    <license>
      <permits type="usage">train-ai</permits>
      <payment type="royalty">
          <standard>https://rslcollective.org/license</standard>
      </payment>
    </license>
  </content>
</rsl>"#;
    let schema_org = r#"<rsl xmlns="https://rslstandard.org/rsl">
 <content url="https://gutenberg.org/2701/pg2701-h.zip">
   <schema>https://gutenberg.org/ebooks/2701</schema>
   <license>
     <payment type="free"/>
   </license>
 </content>
</rsl>"#;
    let subscription = r#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/">
    <license>
      <permits type="usage">train-ai</permits>
      <payment type="subscription">
        <custom>https://your-website.com/contact-form.html</custom>
      </payment>
    </license>
  </content>
</rsl>"#;
    let extended = r#"<rsl xmlns="https://rslstandard.org/rsl" xmlns:openrsl="https://openrsl.org/ns/extensions">
  <content url="/" server="https://olp.example.com">
    <license>
      <permits type="usage">ai-index</permits>
      <prohibits type="usage">ai-train</prohibits>
      <payment type="crawl"><amount currency="USD">0.001</amount>
        <openrsl:binding scheme="pds" ref="offer-abc-123"/></payment>
    </license>
  </content>
  <content url="/research/" server="https://olp.example.com">
    <license>
      <permits type="usage">ai-train</permits>
      <payment type="training"><amount currency="USD">10.00</amount>
        <openrsl:binding scheme="pds" ref="offer-xyz-789"/></payment>
    </license>
  </content>
</rsl>"#;
    let typographic = "<rsl xmlns=\"https://rslstandard.org/rsl\">\n<content url=\u{201d}/\u{201d}>\n<license>\n<prohibits type=\"usage\">train-ai</prohibits>\n</license>\n</content>\n</rsl>";
    let robotsd = rsl_robotsd().await;

    let answer = |doc: &'static str, path: &'static str| {
        let robotsd = &robotsd;
        async move {
            let site = licensed_site(xml(doc)).await;
            check(robotsd, site.url(path)).await["usage"]["rsl"][0].clone()
        }
    };
    let report = answer(all_ai, "/any").await;
    assert_eq!(
        report["contents"][0]["licenses"][0]["prohibits"]["usage"],
        json!(["ai-all"])
    );

    let report = answer(collective, "/post").await;
    let content = &report["contents"][0];
    assert_eq!(
        content["server"], "https://rslcollective.org/api",
        "{report}"
    );
    assert_eq!(
        content["licenses"][0]["permits"]["usage"],
        json!(["train-ai"])
    );
    assert_eq!(
        content["licenses"][0]["payment"],
        json!({"type": "royalty", "amounts": [], "standard": "https://rslcollective.org/license", "custom": null})
    );

    let report = answer(schema_org, "/2701/pg2701-h.zip").await;
    assert_eq!(
        report["state"], "not_covered",
        "another site's asset: {report}"
    );

    let report = answer(subscription, "/").await;
    let payment = &report["contents"][0]["licenses"][0]["payment"];
    assert_eq!(payment["type"], "subscription");
    assert_eq!(
        payment["custom"],
        "https://your-website.com/contact-form.html"
    );

    let report = answer(extended, "/research/paper").await;
    let content = &report["contents"][0];
    assert_eq!(content["url"], "/research/", "{report}");
    assert_eq!(
        content["licenses"][0]["payment"]["amounts"],
        json!([{"value": "10.00", "currency": "USD"}])
    );

    let report = answer(typographic, "/").await;
    assert_eq!(report["state"], "invalid", "{report}");
    assert!(
        report["reason"].as_str().unwrap().contains("XML"),
        "{report}"
    );
}
