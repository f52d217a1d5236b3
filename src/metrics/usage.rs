//! `robotsd_usage_preferences_total`: answers carrying an AI usage preference, by source,
//! category and value. Every label comes from a closed set: the two sources, each vocabulary's
//! labels plus [`super::OTHER_LABEL`] for labels outside it (which a file, not robotsd, chooses),
//! and `y`/`n`.

use prometheus::{IntCounter, IntCounterVec, Opts};
use robotsd_engine::{Preference, UsageSource};

use crate::checker::UsageItem;

pub(super) struct UsageMetrics {
    pub(super) family: IntCounterVec,
    /// Every series, created up front: by source, then category (the vocabulary's labels, then
    /// `other`), then value (`y`, `n`); [`UsageMetrics::index`] finds one without a lookup.
    series: Vec<IntCounter>,
}

impl UsageMetrics {
    pub(super) fn new() -> UsageMetrics {
        let family = IntCounterVec::new(
            Opts::new(
                "robotsd_usage_preferences_total",
                "Check answers carrying an AI usage preference, by source (content-usage, \
                 content-signal), category (a label of that vocabulary, or `other`) and value \
                 (y, n). Reported only: preferences never change a verdict.",
            ),
            &["source", "category", "value"],
        )
        .expect("valid metric");
        let mut series = Vec::new();
        for source in UsageSource::ALL {
            let categories = source.vocabulary().iter().copied();
            for category in categories.chain([super::OTHER_LABEL]) {
                for value in [Preference::Allowed, Preference::Disallowed] {
                    series.push(family.with_label_values(&[
                        source.as_str(),
                        category,
                        value.as_str(),
                    ]));
                }
            }
        }
        UsageMetrics { family, series }
    }

    /// The position of `item`'s series in [`UsageMetrics::series`].
    fn index(item: &UsageItem) -> usize {
        let before: usize = UsageSource::ALL
            .iter()
            .take_while(|s| **s != item.source)
            .map(|s| s.vocabulary().len() + 1)
            .sum();
        let labels = item.source.vocabulary();
        let category = match &item.category {
            // Answers borrow the vocabulary's own labels: found by address, no comparison.
            std::borrow::Cow::Borrowed(label) => labels
                .iter()
                .position(|known| std::ptr::eq(*known, *label))
                .or_else(|| labels.iter().position(|known| known == label)),
            std::borrow::Cow::Owned(label) => labels.iter().position(|known| known == label),
        }
        .unwrap_or(labels.len());
        let value = match item.preference {
            Preference::Allowed => 0,
            Preference::Disallowed => 1,
        };
        (before + category) * 2 + value
    }

    pub(super) fn observe(&self, items: &[UsageItem]) {
        for item in items {
            if let Some(counter) = self.series.get(UsageMetrics::index(item)) {
                counter.inc();
            }
        }
    }
}
