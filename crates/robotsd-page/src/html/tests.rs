//! The scan against Google's and TDMRep's examples, and against the places a tag is only text.

use super::*;

fn robots_and_tdm(name: &str) -> bool {
    matches!(
        name,
        "robots" | "googlebot" | "googlebot-news" | "tdm-reservation" | "tdm-policy"
    )
}

fn found(html: &str) -> Vec<(String, String, u32)> {
    scan(html, robots_and_tdm)
        .metas
        .into_iter()
        .map(|m| (m.name, m.content, m.line))
        .collect()
}

fn tag(name: &str, content: &str, line: u32) -> (String, String, u32) {
    (name.into(), content.into(), line)
}

#[test]
fn googles_first_example() {
    let html = "<!DOCTYPE html>\n<html><head>\n  <meta name=\"robots\" content=\"noindex\">\n  (…)\n</head>\n<body>(…)</body>\n</html>\n";
    assert_eq!(found(html), [tag("robots", "noindex", 3)]);
}

#[test]
fn tags_for_two_crawlers_and_names_in_any_case() {
    let html = "<meta name=\"googlebot\" content=\"notranslate\">\n<META NAME=\"GoogleBot-News\" CONTENT=\"nosnippet\">";
    assert_eq!(
        found(html),
        [
            tag("googlebot", "notranslate", 1),
            tag("googlebot-news", "nosnippet", 2)
        ]
    );
}

#[test]
fn the_tdmrep_reports_html_example() {
    let html = r#"<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="tdm-reservation" content="1">
    <meta name="tdm-policy" content="https://provider.com/policies/policy.json">
    <title>Document title</title>
  </head>
  <body>
    ...
    <!-- body content -->
    ...
  </body>
</html>"#;
    let scan = scan(html, robots_and_tdm);
    assert_eq!(scan.charset.as_deref(), Some("utf-8"));
    assert_eq!(
        found(html),
        [
            tag("tdm-reservation", "1", 5),
            tag("tdm-policy", "https://provider.com/policies/policy.json", 6)
        ]
    );
}

#[test]
fn a_tag_in_the_body_counts() {
    assert_eq!(
        found("<html><body><p>text</p><meta name=robots content=nofollow></body>"),
        [tag("robots", "nofollow", 1)]
    );
}

#[test]
fn a_tag_inside_a_comment_a_script_a_style_or_an_attribute_is_text() {
    for html in [
        "<!-- <meta name=\"robots\" content=\"noindex\"> -->",
        "<script>document.write('<meta name=\"robots\" content=\"noindex\">')</script>",
        "<script type=module>if (a<b) { x = '<meta name=robots content=noindex>' }</script>",
        "<style>/* <meta name=robots content=noindex> */</style>",
        "<textarea><meta name=robots content=noindex></textarea>",
        "<title><meta name=robots content=noindex></title>",
        "<noscript><meta name=robots content=noindex></noscript>",
        "<div title='<meta name=robots content=noindex>'></div>",
        "<xmp><meta name=robots content=noindex></xmp>",
        "<plaintext><meta name=robots content=noindex>",
    ] {
        assert_eq!(found(html), [], "{html}");
    }
    // After the raw text ends, tags are tags again.
    assert_eq!(
        found("<script>var s = '</scr' + 'ipt>';</script>\n<meta name=robots content=noindex>"),
        [tag("robots", "noindex", 2)]
    );
}

#[test]
fn names_are_trimmed_and_other_names_are_not_kept() {
    assert_eq!(
        found(
            "<meta name=' Robots ' content='noindex'><meta name=description content='x'><meta content=noindex>"
        ),
        [tag("robots", "noindex", 1)]
    );
}

#[test]
fn every_tag_is_kept_whole() {
    // Issue 41: a `noindex` past the first 4 KiB of a `content`, or in a tag past the 256th,
    // was lost, and the page answered `index: true`.
    let long = format!("{}, noindex", "max-snippet:1, ".repeat(400));
    let scan = scan(
        &format!("<meta name=robots content='{long}'>"),
        robots_and_tdm,
    );
    assert_eq!(scan.metas[0].content, long);
    let many =
        "<meta name=robots content=nofollow>".repeat(300) + "<meta name=robots content=noindex>";
    let scan = super::scan(&many, robots_and_tdm);
    assert_eq!(scan.metas.len(), 301);
    assert_eq!(scan.metas[300].content, "noindex");
}

#[test]
fn a_templates_content_is_not_the_documents() {
    // The tree builder keeps a template's content in a fragment of its own, inert.
    assert_eq!(
        found(
            "<template><meta name=robots content=noindex><template><meta name=robots content=none></template></template>\n<meta name=robots content=nofollow>"
        ),
        [tag("robots", "nofollow", 2)]
    );
    // A stray end tag closes nothing.
    assert_eq!(
        found("</template><meta name=robots content=noindex>"),
        [tag("robots", "noindex", 1)]
    );
    // What is raw text inside a template is still text, not a template's end.
    assert_eq!(
        found(
            "<template><script></template></script></template><meta name=robots content=noindex>"
        ),
        [tag("robots", "noindex", 1)]
    );
}

#[test]
fn broken_markup_never_panics() {
    for html in [
        "<meta",
        "<meta name=robots content='noindex",
        "<<<>>><meta/name=robots/content=noindex/>",
        "<!--",
        "<script>",
        "\u{0}<meta name=robots content=none>",
    ] {
        let _ = found(html);
    }
    assert_eq!(
        found("<meta/name=robots content=none>"),
        [tag("robots", "none", 1)]
    );
}

#[test]
fn a_document_is_decoded_by_its_charset() {
    // Latin-1 bytes, declared in the header.
    let bytes = b"<meta name=robots content=\"noindex\"><p>caf\xe9</p>";
    let (text, encoding) = decode(bytes, Some("text/html; charset=ISO-8859-1"));
    assert_eq!(encoding, "windows-1252");
    assert!(text.contains("café"));
    // Declared in a meta tag.
    let (text, encoding) = decode(
        b"<meta charset=\"shift_jis\"><p>\x82\xa0</p>",
        Some("text/html"),
    );
    assert_eq!(encoding, "Shift_JIS");
    assert!(text.contains('あ'));
    // http-equiv.
    let (_, encoding) = decode(
        b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=koi8-r\">",
        None,
    );
    assert_eq!(encoding, "KOI8-R");
    // A UTF-16 byte order mark wins over everything.
    let utf16: Vec<u8> = "\u{feff}<meta name=robots content=noindex>"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    let (text, encoding) = decode(&utf16, Some("text/html; charset=utf-8"));
    assert_eq!(encoding, "UTF-16LE");
    assert_eq!(found(&text), [tag("robots", "noindex", 1)]);
    // Undeclared: UTF-8 when it is, else windows-1252.
    assert_eq!(decode("é".as_bytes(), None).1, "UTF-8");
    assert_eq!(decode(b"\xe9", None).1, "windows-1252");
}
