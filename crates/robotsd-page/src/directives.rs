//! Robots rules of a page (Google's "Robots meta tag, data-nosnippet, and X-Robots-Tag
//! specifications"; MDN's `X-Robots-Tag` page): the comma-separated rule lists of an
//! `X-Robots-Tag` field line or a robots `meta` tag's `content`, read one rule at a time.
//!
//! Names and values are case-insensitive. A header line may name agents before their rules
//! (`BadBot: noindex, nofollow, googlebot: nofollow`): a name followed by a colon that is not a
//! rule taking a value starts the rules of that agent, up to the next agent or the end of the
//! line; rules before any agent are for every crawler. `unavailable_after`'s date may hold
//! colons and, in RFC 822 and RFC 850 dates, a comma after the weekday: neither starts an agent
//! or a rule.

use crate::date;

/// The largest `max-image-preview` first: the more restrictive is the smaller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ImagePreview {
    /// `none`: no image preview.
    None,
    /// `standard`: a default image preview.
    Standard,
    /// `large`: up to the width of the viewport.
    Large,
}

impl ImagePreview {
    /// The setting as Google spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ImagePreview::None => "none",
            ImagePreview::Standard => "standard",
            ImagePreview::Large => "large",
        }
    }
}

/// One rule of a robots meta tag or `X-Robots-Tag` line, as Google's table defines it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Directive {
    /// `all`, and the positive defaults `index` and `follow`: no restriction, no effect.
    All,
    /// `noindex`.
    NoIndex,
    /// `nofollow`.
    NoFollow,
    /// `none`: `noindex, nofollow`.
    None,
    /// `nosnippet`.
    NoSnippet,
    /// `indexifembedded` (an effect only with `noindex`).
    IndexIfEmbedded,
    /// `max-snippet:N`: `0` is `nosnippet`, `-1` no limit.
    MaxSnippet(i64),
    /// `max-image-preview:none|standard|large`.
    MaxImagePreview(ImagePreview),
    /// `max-video-preview:N` seconds: `0` a static image at most, `-1` no limit.
    MaxVideoPreview(i64),
    /// `notranslate`.
    NoTranslate,
    /// `noimageindex`.
    NoImageIndex,
    /// `unavailable_after:DATE`, in seconds since the Unix epoch.
    UnavailableAfter(i64),
    /// A rule robotsd recognises but gives no meaning: Google's historical `noarchive`,
    /// `nocache`, `nositelinkssearchbox`, and the `noai` / `noimageai` seen in the wild (no
    /// standards body adopted them). Listed, never dropped; lower case.
    Uninterpreted(&'static str),
}

/// Rules robotsd lists without interpreting them.
const UNINTERPRETED: [&str; 5] = [
    "noarchive",
    "nocache",
    "nositelinkssearchbox",
    "noai",
    "noimageai",
];

/// The rules that take a value after a colon, whose name is therefore never an agent.
const VALUED: [&str; 4] = [
    "max-snippet",
    "max-image-preview",
    "max-video-preview",
    "unavailable_after",
];

/// Why a piece of a rule list was not taken as a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ignored {
    /// Not a rule Google's table names (nor one robotsd lists uninterpreted).
    Unknown,
    /// A rule whose value does not parse (`max-snippet:many`, a date robotsd cannot read):
    /// ignored, as Google ignores it.
    Unparseable,
}

/// One piece of a rule list: a rule (or why it is not one), the agent it was written for, and
/// the text it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece<'a> {
    /// The agent named before it on an `X-Robots-Tag` line, as written; `None`: every crawler.
    pub agent: Option<&'a str>,
    /// The rule, or why it was ignored.
    pub rule: Result<Directive, Ignored>,
    /// The rule as written, trimmed.
    pub text: &'a str,
}

/// Reads one `X-Robots-Tag` field line: its rules, each with the agent named before it.
pub fn header_line(value: &str) -> Vec<Piece<'_>> {
    read(value, true)
}

/// Reads a robots `meta` tag's `content`: a rule list without agent names (the tag's `name`
/// says whom it is for).
pub fn meta_content(content: &str) -> Vec<Piece<'_>> {
    read(content, false)
}

fn read(list: &str, agents: bool) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut agent = None;
    let mut rest = list;
    while !rest.is_empty() {
        let (item, after) = next_item(rest);
        rest = after;
        let mut text = item.trim_matches(is_space);
        if text.is_empty() {
            continue;
        }
        if agents
            && let Some((name, rules)) = text.split_once(':')
            && !is_valued(name.trim_matches(is_space))
            && is_agent_name(name.trim_matches(is_space))
        {
            agent = Some(name.trim_matches(is_space));
            text = rules.trim_matches(is_space);
            if text.is_empty() {
                continue;
            }
        }
        let (text, consumed) = with_date_tail(text, list, rest);
        rest = consumed;
        pieces.push(Piece {
            agent,
            rule: directive(text),
            text,
        });
    }
    pieces
}

/// The first comma-separated item of `rest`, and what follows its comma.
fn next_item(rest: &str) -> (&str, &str) {
    match rest.split_once(',') {
        Some((item, after)) => (item, after),
        None => (rest, ""),
    }
}

/// An `unavailable_after` whose value so far is only a weekday (`Wed` of `Wed, 03 Dec 2025
/// 13:09:53 GMT`, `Friday` of `Friday, 25-Jun-10 15:00:00 PST`) runs on past the comma: the
/// rule's text grows to the end of the next item, within `list`.
fn with_date_tail<'a>(text: &'a str, list: &'a str, rest: &'a str) -> (&'a str, &'a str) {
    let Some((name, value)) = text.split_once(':') else {
        return (text, rest);
    };
    if !name
        .trim_matches(is_space)
        .eq_ignore_ascii_case("unavailable_after")
        || !date::is_weekday(value.trim_matches(is_space))
        || rest.is_empty()
    {
        return (text, rest);
    }
    let (next, after) = next_item(rest);
    // `text` and `next` are slices of `list`: the rule is the span from one to the other.
    let start = text.as_ptr() as usize - list.as_ptr() as usize;
    let end = next.as_ptr() as usize - list.as_ptr() as usize + next.len();
    (list[start..end].trim_matches(is_space), after)
}

pub(crate) fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_valued(name: &str) -> bool {
    VALUED.iter().any(|v| v.eq_ignore_ascii_case(name))
}

/// A product token as crawlers name themselves (`googlebot`, `BadBot`, `googlebot-news`): no
/// space, no punctuation but `-`, `_` and `.`.
fn is_agent_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// One rule, case-insensitive.
pub fn directive(text: &str) -> Result<Directive, Ignored> {
    let (name, value) = match text.split_once(':') {
        Some((name, value)) => (
            name.trim_matches(is_space),
            Some(value.trim_matches(is_space)),
        ),
        None => (text, None),
    };
    let is = |n: &str| name.eq_ignore_ascii_case(n);
    let Some(value) = value else {
        return Ok(match () {
            _ if is("all") || is("index") || is("follow") => Directive::All,
            _ if is("noindex") => Directive::NoIndex,
            _ if is("nofollow") => Directive::NoFollow,
            _ if is("none") => Directive::None,
            _ if is("nosnippet") => Directive::NoSnippet,
            _ if is("indexifembedded") => Directive::IndexIfEmbedded,
            _ if is("notranslate") => Directive::NoTranslate,
            _ if is("noimageindex") => Directive::NoImageIndex,
            _ => match UNINTERPRETED.iter().find(|u| is(u)) {
                Some(rule) => Directive::Uninterpreted(rule),
                // A valued rule without its colon has no parseable value.
                None if is_valued(name) => return Err(Ignored::Unparseable),
                None => return Err(Ignored::Unknown),
            },
        });
    };
    if is("max-snippet") {
        limit(value).map(Directive::MaxSnippet)
    } else if is("max-video-preview") {
        limit(value).map(Directive::MaxVideoPreview)
    } else if is("max-image-preview") {
        [
            ImagePreview::None,
            ImagePreview::Standard,
            ImagePreview::Large,
        ]
        .into_iter()
        .find(|p| p.as_str().eq_ignore_ascii_case(value))
        .map(Directive::MaxImagePreview)
        .ok_or(Ignored::Unparseable)
    } else if is("unavailable_after") {
        date::parse(value)
            .map(Directive::UnavailableAfter)
            .ok_or(Ignored::Unparseable)
    } else {
        Err(Ignored::Unknown)
    }
}

/// A `max-snippet` or `max-video-preview` number: `-1` (no limit) or a count; anything else is
/// not parseable.
fn limit(value: &str) -> Result<i64, Ignored> {
    match value.parse::<i64>() {
        Ok(n) if n >= -1 => Ok(n),
        _ => Err(Ignored::Unparseable),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(pieces: &[Piece<'_>]) -> Vec<(Option<String>, Result<Directive, Ignored>)> {
        pieces
            .iter()
            .map(|p| (p.agent.map(str::to_owned), p.rule.clone()))
            .collect()
    }

    #[test]
    fn a_comma_list_of_rules_for_every_crawler() {
        assert_eq!(
            rules(&header_line("noindex, nofollow")),
            [
                (None, Ok(Directive::NoIndex)),
                (None, Ok(Directive::NoFollow))
            ]
        );
        assert_eq!(
            rules(&meta_content("max-snippet:20, max-image-preview:large")),
            [
                (None, Ok(Directive::MaxSnippet(20))),
                (None, Ok(Directive::MaxImagePreview(ImagePreview::Large)))
            ]
        );
    }

    #[test]
    fn names_and_values_are_case_insensitive() {
        assert_eq!(
            rules(&header_line("NoIndex, MAX-IMAGE-PREVIEW: Standard")),
            [
                (None, Ok(Directive::NoIndex)),
                (None, Ok(Directive::MaxImagePreview(ImagePreview::Standard)))
            ]
        );
    }

    #[test]
    fn several_agents_on_one_line_each_take_the_rules_behind_them() {
        // MDN's example.
        assert_eq!(
            rules(&header_line(
                "BadBot: noindex, nofollow, googlebot: nofollow"
            )),
            [
                (Some("BadBot".into()), Ok(Directive::NoIndex)),
                (Some("BadBot".into()), Ok(Directive::NoFollow)),
                (Some("googlebot".into()), Ok(Directive::NoFollow)),
            ]
        );
        // MDN's syntax: rules before an agent are for every crawler.
        assert_eq!(
            rules(&header_line("noimageindex, otherbot: noindex")),
            [
                (None, Ok(Directive::NoImageIndex)),
                (Some("otherbot".into()), Ok(Directive::NoIndex)),
            ]
        );
    }

    #[test]
    fn the_colons_and_comma_of_a_date_start_no_agent_and_no_rule() {
        // Google's header example (RFC 822 without a weekday).
        let pieces = header_line("unavailable_after: 25 Jun 2010 15:00:00 PST");
        assert_eq!(pieces.len(), 1);
        assert_eq!(pieces[0].agent, None);
        assert_eq!(
            pieces[0].rule,
            Ok(Directive::UnavailableAfter(1_277_506_800))
        );
        // MDN's (IMF-fixdate, with a weekday and its comma), then another rule.
        let pieces = header_line("unavailable_after: Wed, 03 Dec 2025 13:09:53 GMT, noindex");
        assert_eq!(
            rules(&pieces),
            [
                (None, Ok(Directive::UnavailableAfter(1_764_767_393))),
                (None, Ok(Directive::NoIndex))
            ]
        );
        assert_eq!(
            pieces[0].text,
            "unavailable_after: Wed, 03 Dec 2025 13:09:53 GMT"
        );
        // RFC 850, for an agent.
        assert_eq!(
            rules(&header_line(
                "googlebot: unavailable_after: Friday, 25-Jun-10 15:00:00 PST"
            )),
            [(
                Some("googlebot".into()),
                Ok(Directive::UnavailableAfter(1_277_506_800))
            )]
        );
    }

    #[test]
    fn numbers_and_settings_out_of_the_table_are_ignored_as_unparseable() {
        for text in [
            "max-snippet:many",
            "max-snippet:-2",
            "max-snippet",
            "max-video-preview:",
            "max-image-preview:huge",
            "unavailable_after: soon",
        ] {
            assert_eq!(directive(text), Err(Ignored::Unparseable), "{text}");
        }
        assert_eq!(directive("max-snippet: -1"), Ok(Directive::MaxSnippet(-1)));
        assert_eq!(
            directive("max-video-preview:0"),
            Ok(Directive::MaxVideoPreview(0))
        );
    }

    #[test]
    fn unknown_rules_are_ignored_and_known_uninterpreted_ones_listed() {
        assert_eq!(directive("noodp"), Err(Ignored::Unknown));
        assert_eq!(directive("index"), Ok(Directive::All));
        for rule in UNINTERPRETED {
            assert_eq!(
                directive(&rule.to_ascii_uppercase()),
                Ok(Directive::Uninterpreted(rule))
            );
        }
    }

    #[test]
    fn meta_content_names_no_agents() {
        assert_eq!(
            rules(&meta_content("googlebot: noindex")),
            [(None, Err(Ignored::Unknown))]
        );
    }

    #[test]
    fn empty_items_and_spaces_are_skipped() {
        assert_eq!(
            rules(&header_line(" , noindex ,, ")),
            [(None, Ok(Directive::NoIndex))]
        );
        assert_eq!(rules(&header_line("googlebot:")), []);
    }
}
