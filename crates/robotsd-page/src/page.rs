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
use crate::directives::{self, Directive, Ignored, Piece, is_space};
use crate::html::{self, MetaTag};
use crate::robots::{Combined, RobotsRules};
use crate::robots_tag;
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
    /// Its words, when it is unknown as a whole but each word separated by spaces is a rule:
    /// `noindex nofollow` looks like two rules, and Google reads it as one it does not know.
    pub looks_like: Option<Vec<String>>,
}

/// A response header as received: its name and value.
pub type Header<'a> = (&'a str, &'a str);

/// The most rules a [`PageRead`] lists. Every rule counts in [`PageRead::robots`] whatever
/// their number; only the listing is bounded.
pub const MAX_LISTED_RULES: usize = 64;

/// What one page says to one crawler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRead {
    /// The robots rules in force for the crawler, at the time it was read at.
    pub robots: RobotsRules,
    /// The rule that made `robots.index` false: the first `noindex` or `none` met, else the
    /// earliest `unavailable_after` not later than the time read at.
    pub index_rule: Option<PageRule>,
    /// The first [`MAX_LISTED_RULES`] rules that apply to the crawler, in the order met
    /// (headers first, then the document), those ignored included.
    pub rules: Vec<PageRule>,
    /// How many rules apply to the crawler.
    pub rules_total: usize,
    /// The `Content-Usage` header's statement.
    pub content_usage: HeaderUsage,
    /// The positions of the `Content-Usage` field lines among the headers.
    pub content_usage_headers: Vec<usize>,
    /// The TDMRep values of the headers.
    pub tdm_header: Layer,
    /// The TDMRep values of the document's `meta` tags.
    pub tdm_meta: Layer,
}

/// The robots rules of a page as they are met: every one combined, the first few listed.
#[derive(Default)]
struct Rules {
    combined: Combined,
    listed: Vec<PageRule>,
    total: usize,
    noindex: Option<PageRule>,
    unavailable_after: Option<(i64, PageRule)>,
}

impl Rules {
    fn add(&mut self, piece: Piece<'_>, source: RuleSource) {
        self.total += 1;
        if let Ok(rule) = &piece.rule {
            self.combined.add(rule);
            match rule {
                Directive::NoIndex | Directive::None if self.noindex.is_none() => {
                    self.noindex = Some(page_rule(&piece, &source));
                }
                Directive::UnavailableAfter(at)
                    if self.unavailable_after.as_ref().is_none_or(|(e, _)| at < e) =>
                {
                    self.unavailable_after = Some((*at, page_rule(&piece, &source)));
                }
                _ => {}
            }
        }
        if self.listed.len() < MAX_LISTED_RULES {
            self.listed.push(page_rule(&piece, &source));
        }
    }
}

/// Reads `headers` and the document `html` (already text: [`html::decode`]) for a crawler
/// whose product tokens are `agents`, at `now` (seconds since the Unix epoch): a page whose
/// `unavailable_after` is past is not to be indexed.
pub fn read(headers: &[Header<'_>], html: Option<&str>, agents: &[&str], now: i64) -> PageRead {
    let names_agent = |name: &str| agents.iter().any(|a| a.eq_ignore_ascii_case(name));
    let mut rules = Rules::default();
    let mut tdm_header = Layer::default();
    let mut content_usage_lines = Vec::new();
    let mut content_usage_headers = Vec::new();
    for (index, (name, value)) in headers.iter().enumerate() {
        let name = name.trim();
        if name.eq_ignore_ascii_case("x-robots-tag") {
            for piece in directives::header_line(value) {
                if piece.agent.is_none_or(names_agent) {
                    rules.add(piece, RuleSource::Header { index });
                }
            }
        } else if name.eq_ignore_ascii_case("robots-tag") {
            let line = robots_tag::field_line(value);
            for rule in line
                .rules
                .iter()
                .filter(|r| r.agent.as_deref().is_none_or(names_agent))
            {
                let piece = Piece {
                    agent: rule.agent.as_deref(),
                    rule: directives::directive(&rule.text),
                    text: &rule.text,
                };
                rules.add(piece, RuleSource::Header { index });
            }
            if let Some(text) = &line.unparseable {
                let piece = Piece {
                    agent: None,
                    rule: Err(Ignored::Unparseable),
                    text,
                };
                rules.add(piece, RuleSource::Header { index });
            }
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
    if let Some(html) = html {
        let scan = html::scan(html, |name| {
            matches!(name, "robots" | "tdm-reservation" | "tdm-policy") || names_agent(name)
        });
        for MetaTag {
            name,
            content,
            line,
        } in scan.metas
        {
            match name.as_str() {
                "tdm-reservation" => tdm_meta.reservations.push(content),
                "tdm-policy" => tdm_meta.policies.push(content),
                _ => {
                    let agent = (name != "robots").then_some(name.as_str());
                    for piece in directives::meta_content(&content) {
                        rules.add(Piece { agent, ..piece }, RuleSource::Meta { line });
                    }
                }
            }
        }
    }
    let mut robots = rules.combined.rules();
    let expired = rules.unavailable_after.filter(|(at, _)| *at <= now);
    if expired.is_some() {
        robots.index = false;
    }
    PageRead {
        robots,
        index_rule: rules.noindex.or(expired.map(|(_, rule)| rule)),
        rules: rules.listed,
        rules_total: rules.total,
        content_usage: content_usage::read(content_usage_lines),
        content_usage_headers,
        tdm_header,
        tdm_meta,
    }
}

fn page_rule(piece: &Piece<'_>, source: &RuleSource) -> PageRule {
    let looks_like = (piece.rule == Err(Ignored::Unknown) && piece.text.contains(is_space))
        .then(|| piece.text.split(is_space).filter(|w| !w.is_empty()))
        .filter(|words| words.clone().all(|w| directives::directive(w).is_ok()))
        .map(|words| words.map(str::to_owned).collect());
    PageRule {
        rule: piece.rule.clone(),
        text: piece.text.to_owned(),
        agent: piece.agent.map(str::to_owned),
        source: source.clone(),
        looks_like,
    }
}

#[cfg(test)]
mod tests;
