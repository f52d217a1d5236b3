//! An RSL 1.0 license document, read from XML with `roxmltree` under fixed bounds.
//!
//! Only what an answer reports is kept: each `<content>` (its `url` pattern, `server`,
//! `encrypted`, `lastmod`) and each of its `<license>` elements (`<permits>`, `<prohibits>`,
//! `<payment>`). Everything else an RSL document may hold (`<legal>`, `<copyright>`, `<schema>`,
//! `<terms>`, other namespaces' elements) is skipped, so that a document written for a later
//! revision still reads.

use super::pattern::ContentPattern;
use super::prescan::{ScanLimits, prescan};
// The error and the namespace live in error.rs, below both this reader and the pre-scan
// (issue 42); re-exported so that `rsl::document::RslError` and `RSL_NAMESPACE` still name them.
pub use super::error::{RSL_NAMESPACE, RslError};
use crate::kept::{allocation, kept_text};

/// The bounds a document is read within: a document past any of them is invalid, and reading it
/// stops there (`docs/usage.md`, "RSL licenses", lists them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most XML nodes (elements, text, comments) in the whole document.
    pub max_nodes: u32,
    /// Deepest nesting of elements.
    pub max_depth: u32,
    /// Most `<content>` elements kept.
    pub max_contents: usize,
    /// Most `<license>` elements kept per `<content>`.
    pub max_licenses: usize,
    /// Most values of one `<permits>`/`<prohibits>` list.
    pub max_values: usize,
    /// Most bytes of one string a `<content>` keeps (its url, server, lastmod, a value, an
    /// amount…).
    pub max_string_bytes: usize,
    /// Most bytes of all the strings one `<content>` keeps ([`Content::text_bytes`]).
    pub max_content_text_bytes: usize,
    /// The attribute and namespace bounds checked before the parser runs.
    pub scan: ScanLimits,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_nodes: 20_000,
            max_depth: 16,
            max_contents: 1_000,
            max_licenses: 16,
            max_values: 256,
            // A URL pattern of 2,048 bytes is already longer than browsers and sitemaps accept
            // URLs (2,048 is the common bound, RFC 9309's robots.txt lines aside); the published
            // documents keep under 300 bytes per <content>. So each <content> an answer shows
            // is small, whatever the document.
            max_string_bytes: 2_048,
            max_content_text_bytes: 4_096,
            scan: ScanLimits::default(),
        }
    }
}

/// One `<permits>` or `<prohibits>` side of a license, by the `type` of its elements.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Scope {
    /// `type="usage"`: usage types (`ai-train`, `search`, …; see [`robotsd_engine::USAGE_VOCABULARY`]).
    pub usage: Vec<String>,
    /// `type="user"`: user types (`commercial`, `non-commercial`, …).
    pub user: Vec<String>,
    /// `type="geo"`: geographies (ISO 3166-1 alpha-2 codes).
    pub geo: Vec<String>,
}

impl Scope {
    /// Whether nothing is listed.
    pub fn is_empty(&self) -> bool {
        self.usage.is_empty() && self.user.is_empty() && self.geo.is_empty()
    }

    fn strings(&self) -> impl Iterator<Item = &str> {
        let (usage, user, geo) = (self.usage.iter(), self.user.iter(), self.geo.iter());
        usage.chain(user).chain(geo).map(String::as_str)
    }
}

impl Payment {
    fn strings(&self) -> impl Iterator<Item = &str> {
        let amounts = self
            .amounts
            .iter()
            .flat_map(|a| std::iter::once(a.value.as_str()).chain(a.currency.as_deref()));
        [&self.kind, &self.standard, &self.custom]
            .into_iter()
            .filter_map(Option::as_deref)
            .chain(amounts)
    }
}

/// A license's `<payment>`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Payment {
    /// The `type` attribute as written; `None` when absent (the texts disagree on what that
    /// means, so it is not guessed).
    pub kind: Option<String>,
    /// `<amount>` values with their `currency`.
    pub amounts: Vec<Amount>,
    /// `<standard>`: where the standard license terms or rate card are.
    pub standard: Option<String>,
    /// `<custom>`: where to ask for custom terms.
    pub custom: Option<String>,
}

/// An `<amount>`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Amount {
    /// The number as written.
    pub value: String,
    /// The `currency` attribute (ISO 4217), if given.
    pub currency: Option<String>,
}

/// One `<license>`: terms on which the content may be used.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct LicenseTerms {
    /// What the license permits; a type not listed is not limited by it.
    pub permits: Scope,
    /// What the license prohibits.
    pub prohibits: Scope,
    /// The payment model, if one is stated (none means free).
    pub payment: Option<Payment>,
}

/// One `<content>`: a set of assets and the licenses they are offered under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Content {
    /// The `url` attribute as written.
    pub url: String,
    /// It compiled for matching.
    pub(crate) pattern: ContentPattern,
    /// `server`: an RSL license server that must issue a license before use, even a free one.
    pub server: Option<String>,
    /// `encrypted="true"`: the assets are encrypted, and the server holds the key.
    pub encrypted: bool,
    /// `lastmod`, as written.
    pub lastmod: Option<String>,
    /// The licenses offered, in document order.
    pub licenses: Vec<LicenseTerms>,
    /// The line of the `<content>` start tag.
    pub line: u32,
}

/// A parsed RSL document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RslDocument {
    /// The `<content>` elements, in document order.
    pub contents: Vec<Content>,
    /// Bytes of the document it was read from.
    pub bytes: usize,
}

impl Content {
    /// Every string this `<content>` keeps: url, server, lastmod, each license's values and
    /// its payment's type, amounts, currencies, standard and custom.
    fn strings(&self) -> impl Iterator<Item = &str> {
        let licenses = self.licenses.iter().flat_map(|l| {
            l.permits
                .strings()
                .chain(l.prohibits.strings())
                .chain(l.payment.iter().flat_map(Payment::strings))
        });
        std::iter::once(self.url.as_str())
            .chain(self.server.as_deref())
            .chain(self.lastmod.as_deref())
            .chain(licenses)
    }

    /// Bytes of the strings this `<content>` keeps (its url, server, lastmod, values, amounts…):
    /// what its part of an answer grows with. At most [`Limits::max_content_text_bytes`].
    pub fn text_bytes(&self) -> usize {
        self.strings().map(str::len).sum()
    }

    /// Refuses a `<content>` keeping a string, or strings in all, over the limits.
    fn check_text(&self, limits: &Limits) -> Result<(), RslError> {
        let mut total = 0;
        for string in self.strings() {
            if string.len() > limits.max_string_bytes {
                return Err(RslError::TooLarge(
                    "a <content> keeps a string (a url, a value, an amount…) longer than 2,048 bytes",
                ));
            }
            total += string.len();
            if total > limits.max_content_text_bytes {
                return Err(RslError::TooLarge(
                    "a <content> keeps more than 4 KiB of text (url, values, amounts…)",
                ));
            }
        }
        Ok(())
    }
}

impl RslDocument {
    /// Reads `body` within `limits`. `truncated` says the fetch cut the body at its size limit:
    /// a cut document is never read, since its last `<content>` elements are missing.
    pub fn parse(body: &[u8], truncated: bool, limits: &Limits) -> Result<RslDocument, RslError> {
        if truncated {
            return Err(RslError::Truncated(body.len()));
        }
        let text =
            std::str::from_utf8(body).map_err(|e| RslError::Xml(kept_text(e.to_string())))?;
        // Before the parser: its cost grows with the square of attributes per element and of
        // namespace declarations in scope (`prescan`).
        prescan(body, &limits.scan)?;
        let options = roxmltree::ParsingOptions {
            // No DTD, so no entity is ever defined or expanded (billion laughs, external
            // entities): such a document is refused.
            allow_dtd: false,
            nodes_limit: limits.max_nodes,
            ..roxmltree::ParsingOptions::default()
        };
        let doc = roxmltree::Document::parse_with_options(text, options).map_err(|e| match e {
            roxmltree::Error::NodesLimitReached => RslError::TooLarge("too many XML nodes"),
            other => RslError::Xml(kept_text(other.to_string())),
        })?;
        check_depth(&doc, limits.max_depth)?;
        let root = doc.root_element();
        if !is_rsl(root, "rsl") {
            let ns = root.tag_name().namespace().unwrap_or("no namespace");
            // The names are the document's: a site can make them as long as the body.
            return Err(RslError::NotRsl(kept_text(format!(
                "<{}> in {ns}",
                root.tag_name().name()
            ))));
        }
        let mut contents = Vec::new();
        for node in root.children().filter(|n| is_rsl(*n, "content")) {
            if contents.len() == limits.max_contents {
                return Err(RslError::TooLarge("too many <content> elements"));
            }
            contents.push(content(&doc, node, limits)?);
        }
        if contents.is_empty() {
            return Err(RslError::NoContent);
        }
        contents.shrink_to_fit();
        Ok(RslDocument {
            contents,
            bytes: body.len(),
        })
    }

    /// Bytes of memory this document holds, for the cache's weigher: every allocation at what
    /// a general-purpose allocator charges for it (8-byte header, 16-byte rounding), so that many small strings
    /// are not undercounted (BENCHMARKS.md compares this with a heap profiler's figure).
    pub fn heap_size(&self) -> usize {
        let string = |s: &String| allocation(s.capacity());
        let option = |s: &Option<String>| s.as_ref().map_or(0, string);
        let list = |v: &Vec<String>| {
            allocation(v.capacity() * std::mem::size_of::<String>())
                + v.iter().map(string).sum::<usize>()
        };
        let scope = |s: &Scope| list(&s.usage) + list(&s.user) + list(&s.geo);
        let payment = |p: &Payment| {
            option(&p.kind)
                + option(&p.standard)
                + option(&p.custom)
                + allocation(p.amounts.capacity() * std::mem::size_of::<Amount>())
                + p.amounts
                    .iter()
                    .map(|a| string(&a.value) + option(&a.currency))
                    .sum::<usize>()
        };
        let license = |l: &LicenseTerms| {
            scope(&l.permits) + scope(&l.prohibits) + l.payment.as_ref().map_or(0, payment)
        };
        let content = |c: &Content| {
            string(&c.url)
                + c.pattern.heap_size()
                + option(&c.server)
                + option(&c.lastmod)
                + allocation(c.licenses.capacity() * std::mem::size_of::<LicenseTerms>())
                + c.licenses.iter().map(license).sum::<usize>()
        };
        allocation(self.contents.capacity() * std::mem::size_of::<Content>())
            + self.contents.iter().map(content).sum::<usize>()
            + std::mem::size_of::<RslDocument>()
    }
}

/// Whether `node` is the RSL element `name`.
fn is_rsl(node: roxmltree::Node<'_, '_>, name: &str) -> bool {
    node.is_element()
        && node.tag_name().name() == name
        && node.tag_name().namespace() == Some(RSL_NAMESPACE)
}

/// Refuses documents nested deeper than `max`: nothing robotsd reads is deeper than four levels,
/// and a bound keeps every later walk cheap.
fn check_depth(doc: &roxmltree::Document<'_>, max: u32) -> Result<(), RslError> {
    // Descendants come in document order, so a node's parent has its depth already. Node ids
    // index the document's node list, which `nodes_limit` bounds.
    let mut depths = vec![0u32; doc.descendants().count() + 1];
    for node in doc.descendants().filter(|n| n.is_element()) {
        let parent = node.parent().map_or(0, |p| depths[p.id().get_usize()]);
        let depth = parent + 1;
        if depth > max {
            return Err(RslError::TooLarge("elements nested too deeply"));
        }
        depths[node.id().get_usize()] = depth;
    }
    Ok(())
}

fn line_of(doc: &roxmltree::Document<'_>, node: roxmltree::Node<'_, '_>) -> u32 {
    doc.text_pos_at(node.range().start).row
}

fn content(
    doc: &roxmltree::Document<'_>,
    node: roxmltree::Node<'_, '_>,
    limits: &Limits,
) -> Result<Content, RslError> {
    let line = line_of(doc, node);
    let url = node
        .attribute("url")
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .ok_or(RslError::ContentWithoutUrl(line))?;
    let mut licenses = Vec::new();
    for license in node.children().filter(|n| is_rsl(*n, "license")) {
        if licenses.len() == limits.max_licenses {
            return Err(RslError::TooLarge(
                "too many <license> elements in a <content>",
            ));
        }
        licenses.push(terms(license, limits)?);
    }
    licenses.shrink_to_fit();
    let content = Content {
        url: url.to_owned(),
        pattern: ContentPattern::new(url),
        server: attribute(node, "server"),
        // RSL 1.0: the lower-case boolean `true`; anything else leaves the default, false.
        encrypted: node.attribute("encrypted").map(str::trim) == Some("true"),
        lastmod: attribute(node, "lastmod"),
        licenses,
        line,
    };
    content.check_text(limits)?;
    Ok(content)
}

fn attribute(node: roxmltree::Node<'_, '_>, name: &str) -> Option<String> {
    node.attribute(name)
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
}

fn text(node: roxmltree::Node<'_, '_>) -> Option<String> {
    let text: String = node
        .children()
        .filter(|n| n.is_text())
        .filter_map(|n| n.text())
        .collect();
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

fn terms(license: roxmltree::Node<'_, '_>, limits: &Limits) -> Result<LicenseTerms, RslError> {
    let mut terms = LicenseTerms::default();
    for child in license.children().filter(|n| n.is_element()) {
        let side = if is_rsl(child, "permits") {
            &mut terms.permits
        } else if is_rsl(child, "prohibits") {
            &mut terms.prohibits
        } else {
            if is_rsl(child, "payment") && terms.payment.is_none() {
                terms.payment = Some(payment(child));
            }
            continue;
        };
        // RSL 1.0 requires `type`; one left out is read as `usage`, the type every published
        // example lists first, rather than dropping the publisher's terms.
        let list = match child.attribute("type").map(str::trim).unwrap_or("usage") {
            "usage" => &mut side.usage,
            "user" => &mut side.user,
            "geo" => &mut side.geo,
            _ => continue,
        };
        for value in text(child)
            .iter()
            .flat_map(|t| t.split([',', ' ', '\t', '\n', '\r']))
            .filter(|v| !v.is_empty())
        {
            if list.len() == limits.max_values {
                return Err(RslError::TooLarge(
                    "too many values in a <permits> or <prohibits>",
                ));
            }
            if !list.iter().any(|v| v == value) {
                list.push(value.to_owned());
            }
        }
    }
    // Held for a day: no spare capacity.
    for side in [&mut terms.permits, &mut terms.prohibits] {
        for list in [&mut side.usage, &mut side.user, &mut side.geo] {
            list.shrink_to_fit();
        }
    }
    Ok(terms)
}

fn payment(node: roxmltree::Node<'_, '_>) -> Payment {
    let child_text = |name| node.children().find(|n| is_rsl(*n, name)).and_then(text);
    Payment {
        kind: attribute(node, "type"),
        amounts: node
            .children()
            .filter(|n| is_rsl(*n, "amount"))
            .filter_map(|n| {
                Some(Amount {
                    value: text(n)?,
                    currency: attribute(n, "currency"),
                })
            })
            .take(16)
            .collect(),
        standard: child_text("standard"),
        custom: child_text("custom"),
    }
}

#[cfg(test)]
mod tests;
