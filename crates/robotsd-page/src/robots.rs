//! The robots rules in force for a crawler: every rule that applied to it, from every header and
//! tag, combined as Google's page says. General and agent-specific rules add up ("the sum of the
//! negative rules"), and where two conflict the more restrictive applies (`nosnippet` over
//! `max-snippet:50`; the smaller of two limits; the earlier of two dates).

use crate::directives::{Directive, ImagePreview};

/// The rules in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RobotsRules {
    /// No `noindex` or `none`.
    pub index: bool,
    /// No `nofollow` or `none`.
    pub follow: bool,
    /// No `nosnippet`, nor `max-snippet:0`.
    pub snippet: bool,
    /// The longest snippet in characters; `None`: no limit stated (or only `-1`). `0` when
    /// there is no snippet.
    pub max_snippet: Option<u64>,
    /// The largest image preview; `None`: not stated (the search engine's default).
    pub max_image_preview: Option<ImagePreview>,
    /// The longest video preview in seconds (`0`: a static image at most, also with no
    /// snippet); `None`: no limit stated (or only `-1`).
    pub max_video_preview: Option<u64>,
    /// No `noimageindex`.
    pub image_index: bool,
    /// No `notranslate`.
    pub translate: bool,
    /// `indexifembedded` with `noindex` in force (it has no effect without).
    pub index_if_embedded: bool,
    /// The earliest `unavailable_after`, in seconds since the Unix epoch.
    pub unavailable_after: Option<i64>,
    /// The rules robotsd recognises without interpreting them, each once, in the order met.
    pub uninterpreted: Vec<&'static str>,
}

impl Default for RobotsRules {
    /// No rule: everything allowed, nothing limited.
    fn default() -> Self {
        RobotsRules {
            index: true,
            follow: true,
            snippet: true,
            max_snippet: None,
            max_image_preview: None,
            max_video_preview: None,
            image_index: true,
            translate: true,
            index_if_embedded: false,
            unavailable_after: None,
            uninterpreted: Vec::new(),
        }
    }
}

/// The smaller of a limit so far and a new one; `-1` states no limit and changes nothing.
fn tighter(current: Option<u64>, stated: i64) -> Option<u64> {
    match u64::try_from(stated) {
        Ok(limit) => Some(current.map_or(limit, |c| c.min(limit))),
        Err(_) => current,
    }
}

/// Combines every rule that applied to a crawler, in any order: the result does not depend on
/// it.
pub fn combine<'a>(rules: impl IntoIterator<Item = &'a Directive>) -> RobotsRules {
    let mut combined = Combined::default();
    for rule in rules {
        combined.add(rule);
    }
    combined.rules()
}

/// The rules combined so far, one at a time, so that a page of many rules is combined without
/// holding them.
#[derive(Debug, Clone, Default)]
pub struct Combined {
    out: RobotsRules,
    embedded: bool,
}

impl Combined {
    /// Adds one rule.
    pub fn add(&mut self, rule: &Directive) {
        let out = &mut self.out;
        match rule {
            Directive::All => {}
            Directive::NoIndex => out.index = false,
            Directive::NoFollow => out.follow = false,
            Directive::None => {
                out.index = false;
                out.follow = false;
            }
            Directive::NoSnippet => out.snippet = false,
            Directive::IndexIfEmbedded => self.embedded = true,
            Directive::MaxSnippet(n) => out.max_snippet = tighter(out.max_snippet, *n),
            Directive::MaxImagePreview(p) => {
                out.max_image_preview = Some(out.max_image_preview.map_or(*p, |c| c.min(*p)));
            }
            Directive::MaxVideoPreview(n) => {
                out.max_video_preview = tighter(out.max_video_preview, *n);
            }
            Directive::NoTranslate => out.translate = false,
            Directive::NoImageIndex => out.image_index = false,
            Directive::UnavailableAfter(at) => {
                out.unavailable_after = Some(out.unavailable_after.map_or(*at, |c| c.min(*at)));
            }
            Directive::Uninterpreted(name) => {
                if !out.uninterpreted.contains(name) {
                    out.uninterpreted.push(name);
                }
            }
        }
    }

    /// What the rules added add up to.
    pub fn rules(&self) -> RobotsRules {
        let mut out = self.out.clone();
        // `max-snippet:0` is `nosnippet`, and no snippet is a limit of 0. Google's `nosnippet`
        // is "a text snippet or video preview": no video preview either, a static image at most
        // (`max-video-preview:0`).
        if out.max_snippet == Some(0) {
            out.snippet = false;
        }
        if !out.snippet {
            out.max_snippet = Some(0);
            out.max_video_preview = Some(0);
        }
        out.index_if_embedded = self.embedded && !out.index;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directives::{directive, meta_content};

    fn rules(list: &str) -> RobotsRules {
        let pieces = meta_content(list);
        let directives: Vec<Directive> = pieces.into_iter().filter_map(|p| p.rule.ok()).collect();
        combine(&directives)
    }

    #[test]
    fn nothing_stated_restricts_nothing() {
        assert_eq!(rules(""), RobotsRules::default());
        assert_eq!(rules("all, index, follow"), RobotsRules::default());
    }

    #[test]
    fn none_is_noindex_and_nofollow() {
        let none = rules("none");
        assert!(!none.index && !none.follow);
        assert_eq!(none, rules("noindex, nofollow"));
    }

    #[test]
    fn the_more_restrictive_rule_applies() {
        // Google: "if a page has both max-snippet:50 and nosnippet rules, the nosnippet rule
        // will apply".
        let both = rules("max-snippet:50, nosnippet");
        assert!(!both.snippet);
        assert_eq!(both.max_snippet, Some(0));
        assert_eq!(
            rules("max-snippet:50, max-snippet:20").max_snippet,
            Some(20)
        );
        assert_eq!(
            rules("max-snippet:-1, max-snippet:20").max_snippet,
            Some(20)
        );
        assert_eq!(
            rules("max-image-preview:large, max-image-preview:standard").max_image_preview,
            Some(ImagePreview::Standard)
        );
        assert_eq!(
            rules("max-video-preview:-1, max-video-preview:0").max_video_preview,
            Some(0)
        );
        assert_eq!(
            rules("unavailable_after: 2030-01-01, unavailable_after: 2020-09-21").unavailable_after,
            Some(1_600_646_400)
        );
        // `all` never lifts a restriction.
        assert!(!rules("noindex, all").index);
    }

    #[test]
    fn max_snippet_zero_is_nosnippet_and_minus_one_is_no_limit() {
        assert_eq!(rules("max-snippet:0"), rules("nosnippet"));
        let open = rules("max-snippet:-1");
        assert!(open.snippet);
        assert_eq!(open.max_snippet, None);
        assert_eq!(rules("max-snippet:20").max_snippet, Some(20));
    }

    /// Google's "Robots meta tag, data-nosnippet, and X-Robots-Tag specifications", its table of
    /// rules read one rule at a time: each row is what the page says the rule alone means, as
    /// the fields it changes from no rule at all.
    #[test]
    fn googles_rules_one_by_one() {
        let none = RobotsRules::default();
        let no_snippet = RobotsRules {
            snippet: false,
            max_snippet: Some(0),
            max_video_preview: Some(0),
            ..none.clone()
        };
        let rows: Vec<(&str, RobotsRules)> = vec![
            // "There are no restrictions for indexing or serving. This rule is the default
            // value and has no effect if explicitly listed."
            ("all", none.clone()),
            // "Do not show this page, media, or resource in search results."
            (
                "noindex",
                RobotsRules {
                    index: false,
                    ..none.clone()
                },
            ),
            // "Do not follow the links on this page."
            (
                "nofollow",
                RobotsRules {
                    follow: false,
                    ..none.clone()
                },
            ),
            // "Equivalent to noindex, nofollow."
            (
                "none",
                RobotsRules {
                    index: false,
                    follow: false,
                    ..none.clone()
                },
            ),
            // "Do not show a text snippet or video preview in the search results for this page.
            // A static image thumbnail (if available) may still be visible."
            ("nosnippet", no_snippet.clone()),
            // "Google is allowed to index the content of a page if it's embedded in another page
            // through iframes ... despite a noindex rule. indexifembedded only has an effect if
            // it's accompanied by noindex."
            ("indexifembedded", none.clone()),
            (
                "noindex, indexifembedded",
                RobotsRules {
                    index: false,
                    index_if_embedded: true,
                    ..none.clone()
                },
            ),
            // "Use a maximum of [number] characters as a textual snippet"; "0: No snippet is to
            // be shown. Equivalent to nosnippet."; "-1: Google will choose the snippet length".
            (
                "max-snippet:50",
                RobotsRules {
                    max_snippet: Some(50),
                    ..none.clone()
                },
            ),
            ("max-snippet:0", no_snippet.clone()),
            ("max-snippet:-1", none.clone()),
            // "If the specified [number] is not a valid number, the rule will be ignored."
            ("max-snippet:many", none.clone()),
            // "Set the maximum size of an image preview": none, standard, large.
            (
                "max-image-preview:none",
                RobotsRules {
                    max_image_preview: Some(ImagePreview::None),
                    ..none.clone()
                },
            ),
            (
                "max-image-preview:standard",
                RobotsRules {
                    max_image_preview: Some(ImagePreview::Standard),
                    ..none.clone()
                },
            ),
            (
                "max-image-preview:large",
                RobotsRules {
                    max_image_preview: Some(ImagePreview::Large),
                    ..none.clone()
                },
            ),
            // "Use a maximum of [number] seconds as a video snippet"; "0: At most, a static image
            // may be used"; "-1: There is no limit."
            (
                "max-video-preview:15",
                RobotsRules {
                    max_video_preview: Some(15),
                    ..none.clone()
                },
            ),
            (
                "max-video-preview:0",
                RobotsRules {
                    max_video_preview: Some(0),
                    ..none.clone()
                },
            ),
            ("max-video-preview:-1", none.clone()),
            ("max-video-preview:long", none.clone()),
            // "Don't offer translation of this page in search results."
            (
                "notranslate",
                RobotsRules {
                    translate: false,
                    ..none.clone()
                },
            ),
            // "Do not index images on this page."
            (
                "noimageindex",
                RobotsRules {
                    image_index: false,
                    ..none.clone()
                },
            ),
            // "Do not show this page in search results after the specified date/time. The
            // date/time must be specified in a widely adopted format including, but not limited
            // to RFC 822, RFC 850, and ISO 8601. The rule is ignored if no valid date/time is
            // specified."
            (
                "unavailable_after: 2020-09-21",
                RobotsRules {
                    unavailable_after: Some(1_600_646_400),
                    ..none.clone()
                },
            ),
            (
                "unavailable_after: Mon, 21 Sep 2020 00:00:00 GMT",
                RobotsRules {
                    unavailable_after: Some(1_600_646_400),
                    ..none.clone()
                },
            ),
            (
                "unavailable_after: Monday, 21-Sep-20 00:00:00 GMT",
                RobotsRules {
                    unavailable_after: Some(1_600_646_400),
                    ..none.clone()
                },
            ),
            ("unavailable_after: someday", none.clone()),
            // "Other rules aren't used by Google Search and are ignored": noarchive, nocache,
            // nositelinkssearchbox; robotsd lists them.
            (
                "noarchive",
                RobotsRules {
                    uninterpreted: vec!["noarchive"],
                    ..none.clone()
                },
            ),
            (
                "nocache",
                RobotsRules {
                    uninterpreted: vec!["nocache"],
                    ..none.clone()
                },
            ),
            (
                "nositelinkssearchbox",
                RobotsRules {
                    uninterpreted: vec!["nositelinkssearchbox"],
                    ..none.clone()
                },
            ),
            // "Both the name and the content attributes are case-insensitive."
            ("NoSnippet", no_snippet.clone()),
            (
                "MAX-VIDEO-PREVIEW:15",
                RobotsRules {
                    max_video_preview: Some(15),
                    ..none.clone()
                },
            ),
            // "If there's a conflict ... the more restrictive rule will apply": nosnippet over
            // max-snippet:50, and over a video preview's limit too.
            ("max-snippet:50, nosnippet", no_snippet.clone()),
            ("nosnippet, max-video-preview:15", no_snippet.clone()),
            ("max-snippet:0, max-video-preview:-1", no_snippet),
        ];
        for (list, want) in rows {
            assert_eq!(rules(list), want, "{list}");
        }
    }

    #[test]
    fn indexifembedded_only_with_noindex() {
        assert!(!rules("indexifembedded").index_if_embedded);
        assert!(rules("noindex, indexifembedded").index_if_embedded);
    }

    #[test]
    fn uninterpreted_rules_are_listed_once() {
        assert_eq!(
            rules("noai, noarchive, NOAI, noimageai").uninterpreted,
            ["noai", "noarchive", "noimageai"]
        );
    }

    #[test]
    fn the_order_of_rules_does_not_matter() {
        let all: Vec<Directive> = [
            "noindex",
            "max-snippet:20",
            "max-snippet:5",
            "max-image-preview:standard",
            "max-video-preview:10",
            "unavailable_after: 2020-09-21",
            "indexifembedded",
            "noimageindex",
        ]
        .iter()
        .map(|t| directive(t).unwrap())
        .collect();
        let forward = combine(&all);
        let backward = combine(all.iter().rev());
        assert_eq!(forward, backward);
    }
}
