//! An answer's AI usage preferences (`docs/usage.md`), owned: the engine's entries borrow the
//! parsed file, and an answer outlives the cache lookup it came from.
//!
//! Kept inline up to [`INLINE`] items, since a file states a few preferences at most and every
//! answer on a file with them carries them: a heap allocation cost more than the rest of the
//! feature (BENCHMARKS.md, "AI usage preferences").

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

impl Default for UsageItem {
    /// A placeholder for the unused inline slots.
    fn default() -> Self {
        UsageItem {
            source: UsageSource::ContentUsage,
            category: Cow::Borrowed(""),
            preference: Preference::Allowed,
            line: 0,
        }
    }
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

/// Items kept without a heap allocation.
pub const INLINE: usize = 4;

/// An answer's usage items, in order; a slice to read.
#[derive(Debug, Clone, Default)]
pub struct UsageItems {
    inline: [UsageItem; INLINE],
    len: usize,
    /// All items, once there are more than [`INLINE`].
    spilled: Vec<UsageItem>,
}

impl UsageItems {
    /// Appends `item`.
    pub fn push(&mut self, item: UsageItem) {
        if !self.spilled.is_empty() {
            self.spilled.push(item);
        } else if self.len < INLINE {
            self.inline[self.len] = item;
            self.len += 1;
        } else {
            self.spilled.reserve(INLINE + 1);
            self.spilled
                .extend(self.inline.iter_mut().map(std::mem::take));
            self.spilled.push(item);
            self.len = 0;
        }
    }
}

impl std::ops::Deref for UsageItems {
    type Target = [UsageItem];

    fn deref(&self) -> &[UsageItem] {
        if self.spilled.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.spilled
        }
    }
}

impl PartialEq for UsageItems {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for UsageItems {}

impl serde::Serialize for UsageItems {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl FromIterator<UsageItem> for UsageItems {
    fn from_iter<I: IntoIterator<Item = UsageItem>>(items: I) -> Self {
        let mut all = UsageItems::default();
        for item in items {
            all.push(item);
        }
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(line: u32) -> UsageItem {
        UsageItem {
            line,
            ..UsageItem::default()
        }
    }

    #[test]
    fn keeps_every_item_in_order_inline_then_on_the_heap() {
        for count in 0..=3 * INLINE as u32 {
            let items: UsageItems = (1..=count).map(item).collect();
            let lines: Vec<u32> = items.iter().map(|i| i.line).collect();
            assert_eq!(lines, (1..=count).collect::<Vec<_>>());
            assert_eq!(
                items.spilled.is_empty(),
                count as usize <= INLINE,
                "{count}"
            );
        }
    }

    #[test]
    fn compares_and_serialises_as_its_items() {
        let a: UsageItems = (1..=6).map(item).collect();
        let b: UsageItems = (1..=6).map(item).collect();
        let c: UsageItems = (1..=2).map(item).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(
            serde_json::to_value(&c).expect("JSON"),
            serde_json::to_value(&*c).expect("JSON")
        );
    }
}
