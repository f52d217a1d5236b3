//! The AI usage preferences that apply to a URL, read from a parsed file: its `Content-Usage`
//! and `Content-Signal` lines ([`crate::usage`] reads them and names their terms), compared for
//! the URL's path as rules are, and combined most restrictive first.

use std::borrow::Cow;

use crate::pattern;
use crate::percent::{PercentDecoding, Side, rfc_form, rfc_pattern};
use crate::robots_txt::RobotsTxt;
use crate::usage::{Preference, UsageLineData, UsageSource};

/// One `Content-Usage` or `Content-Signal` line of a group.
#[derive(Clone, Copy)]
pub struct UsageLine<'a> {
    robots: &'a RobotsTxt,
    data: &'a UsageLineData,
}

impl std::fmt::Debug for UsageLine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UsageLine")
            .field("source", &self.source())
            .field("line", &self.line())
            .field("path", &self.path())
            .field("statement", &self.statement())
            .finish()
    }
}

impl<'a> UsageLine<'a> {
    /// `Content-Usage` or `Content-Signal`.
    pub fn source(&self) -> UsageSource {
        self.data.source
    }

    /// The 1-based line number.
    pub fn line(&self) -> u32 {
        self.data.line
    }

    /// The path as written, or `None` when the line applies to the whole site.
    pub fn path(&self) -> Option<Cow<'a, str>> {
        let path = self.data.written_path(&self.robots.arena);
        (!path.is_empty()).then(|| String::from_utf8_lossy(path))
    }

    /// The statement of preference as written.
    pub fn statement(&self) -> Cow<'a, str> {
        String::from_utf8_lossy(self.data.statement(&self.robots.arena))
    }

    /// Whether the statement is an RFC 9651 Dictionary; when it is not, it states nothing.
    pub fn is_parsed(&self) -> bool {
        self.data.parsed
    }

    /// The explicit preferences it states, sorted by label (a repeated label once, with its
    /// last value), unknown labels included.
    pub fn preferences(&self) -> impl Iterator<Item = (&'a str, Preference)> + use<'a> {
        let (a, b) = self.data.prefs;
        let tables = self.robots.usage.as_deref();
        tables
            .map(|u| &u.prefs[a as usize..b as usize])
            .unwrap_or_default()
            .iter()
            .filter_map(move |p| Some((tables?.label(p), p.preference)))
    }
}

/// One category's preference for a URL, and the line that set it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct UsageEntry<'a> {
    /// Which convention stated it.
    pub source: UsageSource,
    /// The label as written (`train-ai`, `ai-input`, …).
    pub category: &'a str,
    /// The combined preference.
    pub preference: Preference,
    /// The line that set it: among the lines tied for the longest match, the first one stating
    /// the winning value.
    pub line: u32,
    /// The vocabulary's own `&'static` spelling of the label, when it is one (found at parse
    /// time, so that callers need not compare strings per answer).
    #[cfg_attr(feature = "serde", serde(skip))]
    known: Option<&'static str>,
}

impl UsageEntry<'_> {
    /// Whether the label is in its source's vocabulary ([`UsageSource::vocabulary`]).
    pub fn is_known(&self) -> bool {
        self.known.is_some()
    }

    /// The label as the vocabulary spells it, borrowed for as long as the program runs, when it
    /// is one of the vocabulary's.
    pub fn vocabulary_label(&self) -> Option<&'static str> {
        self.known
    }
}

/// The preferences that apply to one URL for the groups that applied: each category with an
/// explicit preference, sorted by source, then label.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Usage<'a> {
    /// The entries.
    pub entries: Vec<UsageEntry<'a>>,
}

impl Usage<'_> {
    /// No category has an explicit preference.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl RobotsTxt {
    /// Whether any group has a `Content-Usage` or `Content-Signal` line. When none has (nearly
    /// every file), asking for preferences costs nothing.
    pub fn has_usage_lines(&self) -> bool {
        self.usage.is_some()
    }

    /// The usage lines of group `group`, in file order.
    pub(crate) fn group_usage_lines(&self, group: u32) -> impl Iterator<Item = UsageLine<'_>> {
        let lines = self
            .usage
            .as_deref()
            .map_or(&[][..], |u| u.group_lines(group));
        lines
            .iter()
            .map(move |data| UsageLine { robots: self, data })
    }

    /// Calls `each` with the preferences for `path` (as [`RobotsTxt::check_path`] takes it)
    /// from the lines of `groups`, compared as `decoding` says: by source, then label.
    ///
    /// Allocation-free when, per source, one line has the longest match (nearly always): its
    /// preferences are stored sorted, so they are handed out as they are. Only lines tied for
    /// the longest match are collected and combined.
    pub(crate) fn usage_for_groups<'a>(
        &'a self,
        groups: &[u32],
        path: &[u8],
        decoding: PercentDecoding,
        each: &mut impl FnMut(UsageEntry<'a>),
    ) {
        let Some(tables) = self.usage.as_deref() else {
            return;
        };
        let path = match decoding {
            PercentDecoding::Google => Cow::Borrowed(path),
            PercentDecoding::Rfc9309 => rfc_form(path, Side::Url),
        };
        let entries = |data: &'a UsageLineData, source| {
            tables.prefs[data.prefs.0 as usize..data.prefs.1 as usize]
                .iter()
                .map(move |pref| UsageEntry {
                    source,
                    category: tables.label(pref),
                    preference: pref.preference,
                    line: data.line,
                    known: pref.known.map(|i| source.vocabulary()[usize::from(i)]),
                })
        };
        for source in UsageSource::ALL {
            let matching = || {
                groups
                    .iter()
                    .flat_map(|&group| tables.group_lines(group))
                    .filter(move |data| data.source == source)
                    .filter_map(|data| Some((data, self.usage_match(data, &path, decoding)?)))
            };
            // The longest match, how many lines share it, and the first of them.
            let mut longest = 0;
            let mut tied = 0;
            let mut first = None;
            for (data, length) in matching() {
                if length > longest {
                    (longest, tied, first) = (length, 0, Some(data));
                }
                tied += usize::from(length == longest);
            }
            match (tied, first) {
                (1, Some(data)) => entries(data, source).for_each(&mut *each),
                (2.., _) => {
                    let mut combined: Vec<UsageEntry<'a>> = matching()
                        .filter(|(_, length)| *length == longest)
                        .flat_map(|(data, _)| entries(data, source))
                        .collect();
                    most_restrictive_first(&mut combined);
                    combined.into_iter().for_each(&mut *each);
                }
                _ => {}
            }
        }
    }

    /// The length the line's path matches `path` with, if it does; a line without a path
    /// matches everything as `/` does.
    fn usage_match(
        &self,
        data: &UsageLineData,
        path: &[u8],
        decoding: PercentDecoding,
    ) -> Option<usize> {
        let pattern = data.pattern(&self.arena);
        if pattern.is_empty() {
            return Some(1);
        }
        let (pattern, len) = match decoding {
            PercentDecoding::Google => (Cow::Borrowed(pattern), pattern.len()),
            PercentDecoding::Rfc9309 => rfc_pattern(pattern),
        };
        pattern::matches(path, &pattern).then_some(len)
    }
}

/// Combines the entries of one source's lines tied for the longest match (vocab
/// §5.1): `n` if any line says `n`, else `y`; each with the first line stating the winning
/// value; sorted by label. Sorting rather than looking labels up keeps a hostile line of
/// thousands of labels O(n log n).
fn most_restrictive_first(entries: &mut Vec<UsageEntry<'_>>) {
    entries.sort_unstable_by(|a, b| {
        a.category
            .cmp(b.category)
            .then(b.preference.cmp(&a.preference))
            .then(a.line.cmp(&b.line))
    });
    let mut kept = 0;
    for i in 0..entries.len() {
        if kept == 0 || entries[kept - 1].category != entries[i].category {
            entries.swap(kept, i);
            kept += 1;
        }
    }
    entries.truncate(kept);
}
