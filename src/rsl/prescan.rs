//! A linear pass over a license document's bytes, before `roxmltree` reads it, that bounds what
//! the parser's cost grows with faster than the document's size.
//!
//! `roxmltree` 0.21 checks an element's attributes for duplicates against each other, and
//! resolves an element's namespaces by copying its parent's in-scope declarations one by one,
//! each checked against those copied so far: an element with `a` attributes costs `a²`, and
//! every element that declares a namespace costs the square of the declarations in scope. The
//! node and depth limits bound neither: a 128 KB document of 8,000 declarations on the root and
//! 40 children declaring one more each took 1.9 s to parse, 50,000 attributes on one element
//! 2.8 s, and a 451 KB one would take some 26 minutes. Counting them first costs one pass over
//! the bytes, and with the bounds below every accepted document parses in milliseconds.
//!
//! The pass reads just enough of XML's syntax to find start tags and their attributes: comments,
//! CDATA sections, processing instructions and declarations (`<!…>`, which the parser refuses
//! anyway: no DTD is read) are skipped, attribute values are skipped by their quotes (a `>` may
//! stand in one). What it cannot read is not well-formed XML, and is refused here, never passed
//! on uncounted.

use super::error::RslError;

/// The bounds the pass enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanLimits {
    /// Most attributes (namespace declarations included) on one element.
    pub max_attributes_per_element: usize,
    /// Most attributes in the whole document.
    pub max_attributes: usize,
    /// Most namespace declarations (`xmlns`, `xmlns:p`) in the whole document.
    pub max_namespaces: usize,
}

impl Default for ScanLimits {
    /// RSL 1.0 defines at most four attributes on an element (`<content>`: `url`, `server`,
    /// `encrypted`, `lastmod`), and the published documents declare one to three namespaces (RSL
    /// and an extension or two), on the root. 32 attributes per element and 64 declarations
    /// leave a wide margin for extensions and `xml:lang`, and keep the parser's square terms
    /// under a few thousand steps per element. 20,000 attributes in all, as many as the node
    /// limit allows nodes, is far above the few hundred a thousand-`<content>` document needs.
    fn default() -> Self {
        ScanLimits {
            max_attributes_per_element: 32,
            max_attributes: 20_000,
            max_namespaces: 64,
        }
    }
}

/// Checks `body` against `limits`: an error when a bound is passed or when the markup cannot be
/// read (it is not well-formed XML then, and the parser would refuse it too).
pub fn prescan(body: &[u8], limits: &ScanLimits) -> Result<(), RslError> {
    let mut at = 0;
    let mut attributes = 0;
    let mut namespaces = 0;
    while let Some(offset) = memchr(b'<', &body[at..]) {
        let start = at + offset;
        let rest = &body[start..];
        at = if rest.starts_with(b"<!--") {
            skip_past(body, start + 4, b"-->")?
        } else if rest.starts_with(b"<![CDATA[") {
            skip_past(body, start + 9, b"]]>")?
        } else if rest.starts_with(b"<?") {
            skip_past(body, start + 2, b"?>")?
        } else if rest.starts_with(b"<!") || rest.starts_with(b"</") {
            // A declaration (refused by the parser) or an end tag: no attributes to count.
            skip_past(body, start + 2, b">")?
        } else {
            let tag = start_tag(body, start + 1)?;
            // Declarations first: they are attributes too, and a bomb of them is named so.
            namespaces += tag.namespaces;
            if namespaces > limits.max_namespaces {
                return Err(RslError::TooLarge("too many namespace declarations"));
            }
            if tag.attributes > limits.max_attributes_per_element {
                return Err(RslError::TooLarge("too many attributes on one element"));
            }
            attributes += tag.attributes;
            if attributes > limits.max_attributes {
                return Err(RslError::TooLarge("too many attributes"));
            }
            tag.end
        };
    }
    Ok(())
}

/// What a start tag holds, and where it ends.
struct StartTag {
    attributes: usize,
    namespaces: usize,
    /// The offset just past its `>`.
    end: usize,
}

/// Reads the start tag whose name begins at `at`.
fn start_tag(body: &[u8], mut at: usize) -> Result<StartTag, RslError> {
    let malformed = |at: usize| RslError::Xml(format!("a start tag cannot be read at byte {at}"));
    let name_end = |from: usize| {
        body[from..]
            .iter()
            .position(|&b| b.is_ascii_whitespace() || matches!(b, b'>' | b'/' | b'='))
            .map_or(body.len(), |n| from + n)
    };
    at = name_end(at);
    let mut tag = StartTag {
        attributes: 0,
        namespaces: 0,
        end: 0,
    };
    loop {
        at = skip_whitespace(body, at);
        match body.get(at) {
            Some(b'>') => break,
            Some(b'/') if body.get(at + 1) == Some(&b'>') => {
                at += 1;
                break;
            }
            Some(b'/' | b'=') | None => return Err(malformed(at)),
            Some(_) => {}
        }
        let name = &body[at..name_end(at)];
        at = skip_whitespace(body, at + name.len());
        if body.get(at) != Some(&b'=') {
            return Err(malformed(at));
        }
        at = skip_whitespace(body, at + 1);
        let quote = match body.get(at) {
            Some(&q @ (b'"' | b'\'')) => q,
            _ => return Err(malformed(at)),
        };
        at = match memchr(quote, &body[at + 1..]) {
            Some(n) => at + 1 + n + 1,
            None => return Err(malformed(at)),
        };
        tag.attributes += 1;
        if name == b"xmlns" || name.starts_with(b"xmlns:") {
            tag.namespaces += 1;
        }
    }
    tag.end = at + 1;
    Ok(tag)
}

fn skip_whitespace(body: &[u8], at: usize) -> usize {
    body.get(at..)
        .and_then(|rest| rest.iter().position(|b| !b.is_ascii_whitespace()))
        .map_or(body.len(), |n| at + n)
}

/// The offset just past the first `end` at or after `from`.
fn skip_past(body: &[u8], from: usize, end: &[u8]) -> Result<usize, RslError> {
    body.get(from..)
        .and_then(|rest| rest.windows(end.len()).position(|w| w == end))
        .map(|n| from + n + end.len())
        .ok_or_else(|| RslError::Xml(format!("markup at byte {from} is never closed")))
}

fn memchr(needle: u8, haystack: &[u8]) -> Option<usize> {
    haystack.iter().position(|&b| b == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(xml: &str) -> Result<(), RslError> {
        prescan(xml.as_bytes(), &ScanLimits::default())
    }

    #[test]
    fn real_documents_pass() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment with <tags a="1" b="2"> inside -->
<rsl xmlns="https://rslstandard.org/rsl" xmlns:x='urn:x'>
  <content url="/a>b" server="https://s.example/" encrypted="true" lastmod="2026-01-01">
    <license><permits type="usage">search</permits><![CDATA[<x a="1">]]></license>
    <x:thing x:a = "1" />
  </content>
</rsl>"#;
        assert_eq!(scan(xml), Ok(()));
    }

    #[test]
    fn a_namespace_bomb_is_refused() {
        let declarations: String = (0..65).map(|i| format!(r#" xmlns:p{i}="u""#)).collect();
        let bomb = format!("<rsl{declarations}/>");
        assert_eq!(
            scan(&bomb),
            Err(RslError::TooLarge("too many namespace declarations"))
        );
        // Spread over many elements, they count the same.
        let spread: String = (0..65).map(|i| format!(r#"<c xmlns:p{i}="u"/>"#)).collect();
        assert_eq!(
            scan(&format!("<rsl>{spread}</rsl>")),
            Err(RslError::TooLarge("too many namespace declarations"))
        );
        let ok: String = (0..64).map(|i| format!(r#"<c xmlns:p{i}="u"/>"#)).collect();
        assert_eq!(scan(&format!("<rsl>{ok}</rsl>")), Ok(()));
    }

    #[test]
    fn attributes_are_bounded_per_element_and_in_all() {
        let attributes = |n: usize| -> String { (0..n).map(|i| format!(" a{i}='v'")).collect() };
        assert_eq!(scan(&format!("<c{}/>", attributes(32))), Ok(()));
        assert_eq!(
            scan(&format!("<c{}/>", attributes(33))),
            Err(RslError::TooLarge("too many attributes on one element"))
        );
        let many = format!("<r>{}</r>", format!("<c{}/>", attributes(20)).repeat(1_001));
        assert_eq!(scan(&many), Err(RslError::TooLarge("too many attributes")));
    }

    #[test]
    fn what_it_cannot_read_is_refused_not_skipped() {
        for xml in [
            "<rsl a=1>",
            "<rsl a>",
            r#"<rsl a="1"#,
            "<rsl",
            "<!-- never closed",
            "<rsl a='1'/ >",
        ] {
            assert!(
                matches!(scan(xml), Err(RslError::Xml(_))),
                "{xml}: {:?}",
                scan(xml)
            );
        }
    }

    #[test]
    fn markup_in_comments_cdata_and_values_is_not_counted() {
        let hidden: String = (0..100).map(|i| format!(r#" xmlns:p{i}="u""#)).collect();
        let xml = format!(
            r#"<r><!--<c{hidden}/>--><![CDATA[<c{hidden}/>]]><?pi <c{hidden}/> ?><c v='<c{}/>'/></r>"#,
            hidden.replace('"', "")
        );
        assert_eq!(scan(&xml), Ok(()));
    }
}
