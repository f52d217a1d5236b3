//! The document reader's unit tests: lists, namespaces, errors, bounds and weight.

use super::*;

fn parse(xml: &str) -> Result<RslDocument, RslError> {
    RslDocument::parse(xml.as_bytes(), false, &Limits::default())
}

#[test]
fn lists_split_on_spaces_and_on_the_drafts_commas_once_each() {
    let doc = parse(
        r#"<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license>
             <permits type="usage">ai-input  search,ai-index search</permits>
             <prohibits>ai-train</prohibits>
             <permits type="other">x</permits>
           </license></content></rsl>"#,
    )
    .unwrap();
    let terms = &doc.contents[0].licenses[0];
    assert_eq!(terms.permits.usage, ["ai-input", "search", "ai-index"]);
    assert_eq!(terms.prohibits.usage, ["ai-train"]);
    assert!(terms.permits.user.is_empty() && terms.payment.is_none());
}

#[test]
fn a_payment_without_type_is_not_guessed_and_other_namespaces_are_skipped() {
    let doc = parse(
        r#"<rsl xmlns="https://rslstandard.org/rsl" xmlns:x="urn:x">
             <x:content url="/ignored"/>
             <content url="/a" encrypted="TRUE"><license><payment><amount>5</amount></payment>
             <x:payment type="free"/></license></content></rsl>"#,
    )
    .unwrap();
    assert_eq!(doc.contents.len(), 1);
    let content = &doc.contents[0];
    assert!(!content.encrypted, "only the lower-case true is true");
    let payment = content.licenses[0].payment.as_ref().unwrap();
    assert_eq!(payment.kind, None);
    assert_eq!(payment.amounts[0].value, "5");
    assert_eq!(payment.amounts[0].currency, None);
}

#[test]
fn a_prefixed_rsl_namespace_reads_the_same() {
    let doc = parse(
        r#"<r:rsl xmlns:r="https://rslstandard.org/rsl"><r:content url="/x" server="https://s.example/">
           <r:license><r:permits>search</r:permits></r:license></r:content></r:rsl>"#,
    )
    .unwrap();
    assert_eq!(
        doc.contents[0].server.as_deref(),
        Some("https://s.example/")
    );
    assert_eq!(doc.contents[0].licenses[0].permits.usage, ["search"]);
}

#[test]
fn broken_documents_say_why() {
    let cases = [
        ("<rsl", "not well-formed"),
        (
            r#"<rsl xmlns="https://rslstandard.org/rsl"><content/></rsl>"#,
            "no url",
        ),
        (
            r#"<rsl xmlns="https://rslstandard.org/rsl"/>"#,
            "no <content>",
        ),
        (r#"<feed xmlns="https://rslstandard.org/rsl"/>"#, "<feed>"),
    ];
    for (xml, why) in cases {
        let error = parse(xml).unwrap_err().to_string();
        assert!(error.contains(why), "{xml}: {error}");
    }
    let cut = RslDocument::parse(b"<rsl", true, &Limits::default()).unwrap_err();
    assert_eq!(cut, RslError::Truncated(4));
}

#[test]
fn a_content_keeps_at_most_4_kib_of_text_and_2_kib_per_string() {
    let doc = |url: &str, values: &str| {
        parse(&format!(
            r#"<rsl xmlns="https://rslstandard.org/rsl"><content url="{url}" lastmod="2026">
               <license><permits>{values}</permits><payment type="crawl">
               <amount currency="USD">1</amount></payment></license></content></rsl>"#
        ))
    };
    let small = doc("/a", "search ai-input").unwrap();
    // "/a" "2026" "search" "ai-input" "crawl" "1" "USD"
    assert_eq!(small.contents[0].text_bytes(), 2 + 4 + 6 + 8 + 5 + 1 + 3);

    let long_url = format!("/{}", "a".repeat(2_048));
    let error = doc(&long_url, "search").unwrap_err().to_string();
    assert!(error.contains("longer than 2,048 bytes"), "{error}");
    assert!(doc(&long_url[..2_048], "search").is_ok());

    // 250 values (within the 256 of a list) of 10 bytes each.
    let many = (0..250).map(|i| format!("v{i:09} ")).collect::<String>();
    let error = doc(&format!("/{}", "a".repeat(2_000)), &many)
        .unwrap_err()
        .to_string();
    assert!(error.contains("4 KiB"), "{error}");
}

#[test]
fn the_prescan_runs_before_the_parser() {
    let declarations: String = (0..100).map(|i| format!(r#" xmlns:p{i}="u""#)).collect();
    let bomb = format!(
        r#"<rsl xmlns="https://rslstandard.org/rsl"{declarations}><content url="/"/></rsl>"#
    );
    let error = parse(&bomb).unwrap_err().to_string();
    assert!(error.contains("namespace declarations"), "{error}");
}

#[test]
fn weight_grows_with_what_is_held() {
    let one = parse(
        r#"<rsl xmlns="https://rslstandard.org/rsl"><content url="/a"><license/></content></rsl>"#,
    )
    .unwrap();
    let many = parse(&format!(
        r#"<rsl xmlns="https://rslstandard.org/rsl">{}</rsl>"#,
        r#"<content url="/a"><license><permits>search ai-input</permits></license></content>"#
            .repeat(100)
    ))
    .unwrap();
    assert!(
        many.heap_size() > 50 * one.heap_size(),
        "{} {}",
        many.heap_size(),
        one.heap_size()
    );
}
