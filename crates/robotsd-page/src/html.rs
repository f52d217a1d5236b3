//! The `meta` tags of an HTML document, as a browser's tokenizer sees them: Servo's
//! implementation of the WHATWG tokenizer (html5ever), told when an element's content is raw
//! text as the tree builder would tell it, so that a tag written inside a comment, a
//! `<script>`, a `<style>`, a `<textarea>`, a `<noscript>` or an attribute value is text, not a
//! tag. A `meta` tag counts wherever else it stands (Google reads robots `meta` tags in
//! `<body>` too) but inside a `<template>`, whose content the tree builder keeps inert, apart from
//! the document. The scan is one pass, linear in the document, keeping only the tags asked for,
//! every one of them whole: what the page says is bounded by the document read, and a rule past
//! some count or length of its own would be a rule lost (issue 41).
//!
//! `<noscript>` is read as a browser with scripting enabled reads it (raw text), as Google's
//! renderer does: a `meta` inside it is not a tag of the page.
//!
//! [`decode`] turns the bytes of a document into text by its charset, as a browser would
//! decide it: a byte order mark, then the `Content-Type` header's `charset`, then a `meta`
//! charset in the first 1,024 bytes, then UTF-8 if the bytes are UTF-8, else windows-1252.

use std::cell::{Cell, RefCell};

use encoding_rs::Encoding;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

/// One `meta` tag with a `name` the scan asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaTag {
    /// Its `name`, trimmed and in lower case (names are case-insensitive).
    pub name: String,
    /// Its `content`, whole.
    pub content: String,
    /// The line the tag ends on, from 1.
    pub line: u32,
}

/// What a scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// The tags asked for, in document order.
    pub metas: Vec<MetaTag>,
    /// The first charset a `meta` tag declares (`<meta charset>`, or an `http-equiv`
    /// `Content-Type` with a `charset`), as written.
    pub charset: Option<String>,
}

struct Sink<F> {
    wanted: F,
    scan: RefCell<Scan>,
    /// `<template>` elements open around the tokenizer's place.
    templates: Cell<usize>,
}

fn attribute<'t>(tag: &'t Tag, name: &str) -> Option<&'t StrTendril> {
    tag.attrs
        .iter()
        .find(|a| a.name.ns.is_empty() && &*a.name.local == name)
        .map(|a| &a.value)
}

/// A `Content-Type` value's `charset` parameter.
pub fn charset_parameter(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(['"', '\'']))
    })
}

impl<F: Fn(&str) -> bool> Sink<F> {
    fn meta(&self, tag: &Tag, line: u64) {
        let mut scan = self.scan.borrow_mut();
        if scan.charset.is_none() {
            scan.charset = attribute(tag, "charset")
                .map(|c| c.trim().to_owned())
                .or_else(|| {
                    let equiv = attribute(tag, "http-equiv")?;
                    if !equiv.trim().eq_ignore_ascii_case("content-type") {
                        return None;
                    }
                    charset_parameter(attribute(tag, "content")?).map(str::to_owned)
                });
        }
        let Some(name) = attribute(tag, "name") else {
            return;
        };
        let name = name.trim().to_ascii_lowercase();
        if !(self.wanted)(&name) {
            return;
        }
        scan.metas.push(MetaTag {
            name,
            content: attribute(tag, "content").map_or("", |c| &**c).to_owned(),
            line: u32::try_from(line).unwrap_or(u32::MAX),
        });
    }
}

impl<F: Fn(&str) -> bool> TokenSink for Sink<F> {
    type Handle = ();

    fn process_token(&self, token: Token, line_number: u64) -> TokenSinkResult<()> {
        let Token::TagToken(tag) = token else {
            return TokenSinkResult::Continue;
        };
        if tag.kind != TagKind::StartTag {
            if &*tag.name == "template" {
                self.templates.set(self.templates.get().saturating_sub(1));
            }
            return TokenSinkResult::Continue;
        }
        // What the tree builder would switch the tokenizer to, for elements in HTML content.
        match &*tag.name {
            "meta" => {
                if self.templates.get() == 0 {
                    self.meta(&tag, line_number);
                }
                TokenSinkResult::Continue
            }
            "template" => {
                self.templates.set(self.templates.get() + 1);
                TokenSinkResult::Continue
            }
            "script" => TokenSinkResult::RawData(RawKind::ScriptData),
            "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => {
                TokenSinkResult::RawData(RawKind::Rawtext)
            }
            "title" | "textarea" => TokenSinkResult::RawData(RawKind::Rcdata),
            "plaintext" => TokenSinkResult::Plaintext,
            _ => TokenSinkResult::Continue,
        }
    }
}

/// The `meta` tags of `html` whose lower-case `name` `wanted` accepts.
pub fn scan(html: &str, wanted: impl Fn(&str) -> bool) -> Scan {
    let tokenizer = Tokenizer::new(
        Sink {
            wanted,
            scan: RefCell::default(),
            templates: Cell::new(0),
        },
        TokenizerOpts::default(),
    );
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    // The sink never asks the tokenizer to stop for a script, so one feed reads it all.
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    tokenizer.sink.scan.take()
}

/// How many bytes the `meta` charset prescan looks at (WHATWG: 1,024).
const PRESCAN_BYTES: usize = 1024;

/// `bytes` as text in the document's encoding, and the encoding's name.
pub fn decode<'a>(
    bytes: &'a [u8],
    content_type: Option<&str>,
) -> (std::borrow::Cow<'a, str>, &'static str) {
    let declared = || {
        content_type
            .and_then(charset_parameter)
            .and_then(|label| Encoding::for_label(label.as_bytes()))
    };
    let prescanned = || {
        let head = &bytes[..bytes.len().min(PRESCAN_BYTES)];
        // Every byte is a character in windows-1252, and ASCII stays ASCII: enough to find
        // the declaration in any ASCII-compatible encoding.
        let (head, _, _) = encoding_rs::WINDOWS_1252.decode(head);
        let label = scan(&head, |_| false).charset?;
        let encoding = Encoding::for_label(label.as_bytes())?;
        // WHATWG: a document that declares UTF-16 in ASCII bytes is not UTF-16.
        Some(
            if encoding == encoding_rs::UTF_16BE || encoding == encoding_rs::UTF_16LE {
                encoding_rs::UTF_8
            } else {
                encoding
            },
        )
    };
    let encoding = Encoding::for_bom(bytes)
        .map(|(encoding, _)| encoding)
        .or_else(declared)
        .or_else(prescanned)
        .unwrap_or(if std::str::from_utf8(bytes).is_ok() {
            encoding_rs::UTF_8
        } else {
            encoding_rs::WINDOWS_1252
        });
    let (text, used, _) = encoding.decode(bytes);
    (text, used.name())
}

#[cfg(test)]
mod tests;
