//! One fetched page read for one crawler: which robots rules of its headers and `meta` tags
//! apply to the crawler and what they add up to, what its `Content-Usage` header states, and
//! what its headers and tags say of TDMRep.
//!
//! A rule applies to the crawler when it is written for every crawler (an `X-Robots-Tag` line
//! or the part of it before any agent name; `<meta name="robots">`) or for one of the crawler's
//! product tokens (`X-Robots-Tag: googlebot: …`, `<meta name="googlebot">`), compared without
//! regard to case. Google reads only its own tokens; robotsd serves every crawler, so any
//! token the caller names is read.

use crate::content_usage::{self, HeaderUsage};
use crate::directives::{self, Directive, Ignored, Piece};
use crate::html::{self, MetaTag};
use crate::robots::{self, RobotsRules};
use crate::tdm::Layer;

/// Where a rule was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleSource {
    /// An `X-Robots-Tag` field line: its position among the response's headers, from 0.
    Header {
        /// The position.
        index: usize,
    },
    /// A `meta` tag.
    Meta {
        /// The line its tag ends on, from 1.
        line: u32,
    },
}

/// A rule of the page as the crawler reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRule {
    /// The rule, or why it is ignored.
    pub rule: Result<Directive, Ignored>,
    /// As written, trimmed.
    pub text: String,
    /// The agent it names (an `X-Robots-Tag` prefix, or the `meta` tag's name when it is not
    /// `robots`), as written; `None`: every crawler.
    pub agent: Option<String>,
    /// Where it is.
    pub source: RuleSource,
}

/// A response header as received: its name and value.
pub type Header<'a> = (&'a str, &'a str);

/// What one page says to one crawler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRead {
    /// The robots rules in force for the crawler.
    pub robots: RobotsRules,
    /// Every rule that applies to the crawler, in the order met (headers first, then the
    /// document), those ignored included.
    pub rules: Vec<PageRule>,
    /// The `Content-Usage` header's statement.
    pub content_usage: HeaderUsage,
    /// The positions of the `Content-Usage` field lines among the headers.
    pub content_usage_headers: Vec<usize>,
    /// The TDMRep values of the headers.
    pub tdm_header: Layer,
    /// The TDMRep values of the document's `meta` tags.
    pub tdm_meta: Layer,
    /// `meta` tags of interest past [`html::MAX_META_TAGS`], not read.
    pub meta_skipped: usize,
    /// `meta` tags whose `content` was longer than [`html::MAX_CONTENT_BYTES`] and was cut.
    pub meta_cut: usize,
}

/// Reads `headers` and the document `html` (already text: [`html::decode`]) for a crawler
/// whose product tokens are `agents`.
pub fn read(headers: &[Header<'_>], html: Option<&str>, agents: &[&str]) -> PageRead {
    let names_agent = |name: &str| agents.iter().any(|a| a.eq_ignore_ascii_case(name));
    let mut rules = Vec::new();
    let mut tdm_header = Layer::default();
    let mut content_usage_lines = Vec::new();
    let mut content_usage_headers = Vec::new();
    for (index, (name, value)) in headers.iter().enumerate() {
        let name = name.trim();
        if name.eq_ignore_ascii_case("x-robots-tag") {
            let applying = directives::header_line(value)
                .into_iter()
                .filter(|piece| piece.agent.is_none_or(names_agent));
            rules.extend(applying.map(|piece| page_rule(piece, RuleSource::Header { index })));
        } else if name.eq_ignore_ascii_case("content-usage") {
            content_usage_lines.push(*value);
            content_usage_headers.push(index);
        } else if name.eq_ignore_ascii_case("tdm-reservation") {
            tdm_header.reservations.push((*value).to_owned());
        } else if name.eq_ignore_ascii_case("tdm-policy") {
            tdm_header.policies.push((*value).to_owned());
        }
    }
    let mut tdm_meta = Layer::default();
    let (mut meta_skipped, mut meta_cut) = (0, 0);
    if let Some(html) = html {
        let scan = html::scan(html, |name| {
            matches!(name, "robots" | "tdm-reservation" | "tdm-policy") || names_agent(name)
        });
        meta_skipped = scan.skipped;
        for MetaTag {
            name,
            content,
            cut,
            line,
        } in scan.metas
        {
            meta_cut += usize::from(cut);
            match name.as_str() {
                "tdm-reservation" => tdm_meta.reservations.push(content),
                "tdm-policy" => tdm_meta.policies.push(content),
                _ => {
                    let agent = (name != "robots").then_some(name.as_str());
                    rules.extend(directives::meta_content(&content).into_iter().map(|piece| {
                        page_rule(Piece { agent, ..piece }, RuleSource::Meta { line })
                    }));
                }
            }
        }
    }
    let robots = robots::combine(rules.iter().filter_map(|r| r.rule.as_ref().ok()));
    PageRead {
        robots,
        rules,
        content_usage: content_usage::read(content_usage_lines),
        content_usage_headers,
        tdm_header,
        tdm_meta,
        meta_skipped,
        meta_cut,
    }
}

fn page_rule(piece: Piece<'_>, source: RuleSource) -> PageRule {
    PageRule {
        rule: piece.rule,
        text: piece.text.to_owned(),
        agent: piece.agent.map(str::to_owned),
        source,
    }
}

#[cfg(test)]
mod tests;
