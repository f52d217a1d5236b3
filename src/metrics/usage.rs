//! `robotsd_usage_preferences_total`: answers carrying an AI usage preference, by source,
//! category and value. Every label comes from a closed set: the two sources, each vocabulary's
//! labels plus [`super::OTHER_LABEL`] for labels outside it (which a file, not robotsd, chooses),
//! and `y`/`n`.

use prometheus::{IntCounter, IntCounterVec, Opts};
use robotsd_engine::{Preference, UsageSource};

use crate::checker::UsageItem;

pub(super) struct UsageMetrics {
    pub(super) family: IntCounterVec,
    /// Series by (source, category index, value), every one created up front; the last category
    /// index of each source is `other`.
    series: Vec<(UsageSource, &'static str, Preference, IntCounter)>,
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
                    let counter =
                        family.with_label_values(&[source.as_str(), category, value.as_str()]);
                    series.push((source, category, value, counter));
                }
            }
        }
        UsageMetrics { family, series }
    }

    pub(super) fn observe(&self, items: &[UsageItem]) {
        for item in items {
            let category = if item.source.knows(&item.category) {
                item.category.as_str()
            } else {
                super::OTHER_LABEL
            };
            let found = self.series.iter().find(|(source, c, value, _)| {
                *source == item.source && *c == category && *value == item.preference
            });
            if let Some((.., counter)) = found {
                counter.inc();
            }
        }
    }
}
