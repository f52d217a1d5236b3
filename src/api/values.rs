//! The JSON of robots.txt's rules and preferences as every answer shows them (the deciding rule,
//! the AI usage preferences): below the check's answer, the parsed file's view and the record,
//! which all show them.

use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use crate::checker::shown::pattern_shown;
use crate::checker::{RuleInfo, UsageCut, UsageItem};
use robotsd_engine as robots;

use super::rsl::RslJson;

/// `allow` or `disallow`, for a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Directive {
    /// An `allow:` line.
    Allow,
    /// A `disallow:` line.
    Disallow,
}

impl From<robots::Directive> for Directive {
    fn from(d: robots::Directive) -> Self {
        match d {
            robots::Directive::Allow => Directive::Allow,
            robots::Directive::Disallow => Directive::Disallow,
        }
    }
}

/// The rule that decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"directive": "disallow", "pattern": "/private", "line": 2}))]
pub struct RuleJson {
    /// `allow` or `disallow`.
    pub directive: Directive,
    /// The pattern as written in robots.txt.
    pub pattern: String,
    /// Its 1-based line number.
    pub line: u32,
    /// `true` when `pattern` was cut to the answer's bound (2,048 bytes of JSON); absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

impl RuleJson {
    /// A rule as an answer shows it.
    pub fn of(rule: &robotsd_engine::Rule<'_>) -> RuleJson {
        let (pattern, truncated) = pattern_shown(rule);
        RuleJson {
            directive: rule.directive().into(),
            pattern: pattern.into_owned(),
            line: rule.line(),
            truncated: truncated.then_some(true),
        }
    }
}

impl From<RuleInfo> for RuleJson {
    fn from(r: RuleInfo) -> Self {
        RuleJson::of(&r.0.get())
    }
}

/// `y` (the use is allowed) or `n` (it is not), in both vocabularies (`Content-Signal`'s `yes`
/// and `no` are given as `y` and `n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum PreferenceValue {
    /// Allowed.
    #[serde(rename = "y")]
    Y,
    /// Not allowed.
    #[serde(rename = "n")]
    N,
}

impl From<robots::Preference> for PreferenceValue {
    fn from(p: robots::Preference) -> Self {
        match p {
            robots::Preference::Allowed => PreferenceValue::Y,
            robots::Preference::Disallowed => PreferenceValue::N,
        }
    }
}

/// One category's preference, and the line of robots.txt that set it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"value": "n", "line": 4}))]
pub struct PreferenceJson {
    /// `y` or `n`.
    pub value: PreferenceValue,
    /// The line that set it.
    pub line: u32,
}

/// The AI usage preferences that apply to the URL for the agent (`docs/usage.md`): reported,
/// never part of the verdict. Each vocabulary apart, by category label as written; a category
/// without an explicit preference is absent (unknown).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[schema(example = json!({"content_usage": {"train-ai": {"value": "n", "line": 4}}, "content_signal": {"ai-train": {"value": "n", "line": 5}, "search": {"value": "y", "line": 5}}}))]
pub struct UsageJson {
    /// `Content-Usage` (IETF aipref: draft-ietf-aipref-attach-05, vocabulary
    /// draft-ietf-aipref-vocab-08: `train-ai`, `ai-use`, `search`; other labels as written), or
    /// null when no such line applies.
    pub content_usage: Option<BTreeMap<String, PreferenceJson>>,
    /// `Content-Signal` (Cloudflare's Content Signals Policy: `search`, `ai-input`,
    /// `ai-train`), or null when no such line applies.
    pub content_signal: Option<BTreeMap<String, PreferenceJson>>,
    /// RSL 1.0 license terms, one per license URL the robots.txt names (`License:`), in file
    /// order. Present only when robotsd runs with `--rsl` and the robots.txt names a license.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rsl: Option<Vec<RslJson>>,
    /// How many distinct license URLs the robots.txt names (among its first 1,000 `License:`
    /// lines), when `rsl` reports fewer (it reports the first 4); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rsl_total: Option<usize>,
    /// How many `Content-Usage` categories apply, when `content_usage` shows fewer (it shows
    /// at most 16, with labels of at most 64 bytes); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_usage_total: Option<usize>,
    /// How many `Content-Signal` categories apply, when `content_signal` shows fewer; absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_signal_total: Option<usize>,
    /// `true` when a list here was cut to the answer's bounds; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

impl UsageJson {
    /// The JSON of an answer's usage items and license reports; `None` when there are none.
    pub fn of(
        items: &[UsageItem],
        cut: Option<UsageCut>,
        rsl: &[crate::rsl::RslReport],
        rsl_total: usize,
    ) -> Option<UsageJson> {
        // Preferences all cut (labels over their bound) still show, as their totals.
        if items.is_empty() && rsl.is_empty() && cut.is_none() {
            return None;
        }
        let rsl_total = (rsl_total > rsl.len()).then_some(rsl_total);
        let shown = |source| items.iter().filter(|i| i.source == source).count();
        let total = |shown: usize, total: usize| (total > shown).then_some(total);
        let mut usage = UsageJson {
            content_usage: None,
            content_signal: None,
            rsl: (!rsl.is_empty()).then(|| rsl.iter().map(RslJson::from).collect()),
            rsl_total,
            content_usage_total: cut
                .and_then(|c| total(shown(robots::UsageSource::ContentUsage), c.content_usage)),
            content_signal_total: cut
                .and_then(|c| total(shown(robots::UsageSource::ContentSignal), c.content_signal)),
            truncated: (cut.is_some() || rsl_total.is_some()).then_some(true),
        };
        for item in items {
            let map = match item.source {
                robots::UsageSource::ContentUsage => &mut usage.content_usage,
                robots::UsageSource::ContentSignal => &mut usage.content_signal,
            };
            map.get_or_insert_with(BTreeMap::new).insert(
                item.category.to_string(),
                PreferenceJson {
                    value: item.preference.into(),
                    line: item.line,
                },
            );
        }
        Some(usage)
    }
}
