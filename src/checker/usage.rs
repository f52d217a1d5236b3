//! An answer's AI usage preferences (`docs/usage.md`), owned: the engine's entries borrow the
//! parsed file, and an answer outlives the cache lookup it came from.

use std::borrow::Cow;

use robotsd_engine::{Preference, UsageEntry, UsageSource};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vocabularys_labels_are_borrowed_and_others_owned() {
        let robots = robotsd_engine::RobotsTxt::parse(
            b"User-agent: *\nContent-Usage: train-ai=n, ai-use=y\n",
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
        assert_eq!(borrowed, [("ai-use", false), ("train-ai", true)]);
    }
}
