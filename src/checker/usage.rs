//! An answer's AI usage preferences (`docs/usage.md`), owned: the engine's entries borrow the
//! parsed file, and an answer outlives the cache lookup it came from.

use std::borrow::Cow;

use robotsd_engine::{PercentDecoding, Preference, UsageEntry, UsageSource, Verdict};

use crate::bounds;

/// One category's AI usage preference for the URL.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UsageItem {
    /// `content-usage` or `content-signal`.
    pub source: UsageSource,
    /// The label as written (`train-ai`, `ai-input`, …): borrowed from the vocabulary when it
    /// is one of its labels, so that the usual answer allocates no string for it.
    pub category: Cow<'static, str>,
    /// `y` or `n`.
    pub preference: Preference,
    /// The line that set it.
    pub line: u32,
}

impl From<UsageEntry<'_>> for UsageItem {
    fn from(e: UsageEntry<'_>) -> Self {
        UsageItem {
            source: e.source,
            category: match e.vocabulary_label() {
                Some(label) => Cow::Borrowed(label),
                None => Cow::Owned(e.category.to_owned()),
            },
            preference: e.preference,
            line: e.line,
        }
    }
}

/// How many categories each vocabulary stated for the URL, when an answer could not show them
/// all ([`bounds::MAX_USAGE_CATEGORIES`] each, labels of at most
/// [`bounds::MAX_USAGE_LABEL_BYTES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct UsageCut {
    /// `Content-Usage` categories.
    pub content_usage: usize,
    /// `Content-Signal` categories.
    pub content_signal: usize,
}

/// The verdict's usage preferences for `path`, as many as an answer shows, in the engine's order
/// (by source, then category); with the totals when some were left out.
pub fn bounded(
    verdict: &Verdict<'_>,
    path: &str,
    decoding: PercentDecoding,
) -> (Vec<UsageItem>, Option<UsageCut>) {
    let mut items = Vec::new();
    // [shown, total] per source, in the order of `UsageSource`.
    let mut counts = [[0usize; 2]; 2];
    verdict.for_each_usage(path, decoding, |entry| {
        let count = &mut counts[match entry.source {
            UsageSource::ContentUsage => 0,
            UsageSource::ContentSignal => 1,
        }];
        count[1] += 1;
        if count[0] < bounds::MAX_USAGE_CATEGORIES
            && entry.category.len() <= bounds::MAX_USAGE_LABEL_BYTES
        {
            count[0] += 1;
            items.push(UsageItem::from(entry));
        }
    });
    let cut = counts.iter().any(|[shown, total]| shown < total);
    let totals = cut.then_some(UsageCut {
        content_usage: counts[0][1],
        content_signal: counts[1][1],
    });
    (items, totals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vocabularys_labels_are_borrowed_and_others_owned() {
        let robots = robotsd_engine::RobotsTxt::parse(
            b"User-agent: *\nContent-Usage: train-ai=n, train-genai=y, ai-use=n\n",
        );
        let verdict = robots.check(&["bot"], "/");
        let items: Vec<UsageItem> = verdict
            .usage("/", robotsd_engine::PercentDecoding::Google)
            .entries
            .into_iter()
            .map(UsageItem::from)
            .collect();
        let borrowed: Vec<(&str, bool)> = items
            .iter()
            .map(|i| (&*i.category, matches!(i.category, Cow::Borrowed(_))))
            .collect();
        assert_eq!(
            borrowed,
            [("ai-use", true), ("train-ai", true), ("train-genai", false)]
        );
    }
}
