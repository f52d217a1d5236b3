//! The AI usage labels robotsd knows, as one table for every convention that names them: the
//! IETF aipref vocabulary (`Content-Usage`), Cloudflare's Content Signals (`Content-Signal`) and
//! RSL 1.0's usage types (`<permits type="usage">` in a license document). The conventions share
//! some labels and differ on others (aipref's `train-ai` is the others' `ai-train`); keeping
//! them in one place shows which is which, and each convention's list is read from here.

use std::sync::LazyLock;

/// The revision of aipref's vocabulary robotsd implements, as answers and docs name it: its
/// labels are the table's `content_usage` ones, so the next revision is a change here and there.
pub const AIPREF_VOCABULARY: &str = "draft-ietf-aipref-vocab-08";

/// A label and the conventions whose vocabulary holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageLabel {
    /// The label, case-sensitive.
    pub label: &'static str,
    /// In aipref's vocabulary ([`AIPREF_VOCABULARY`] §6.1), for `Content-Usage`.
    pub content_usage: bool,
    /// In the Content Signals Policy, for `Content-Signal`.
    pub content_signal: bool,
    /// An RSL 1.0 usage type (§3.4.1.1).
    pub rsl: bool,
    /// What it covers, in a few words.
    pub meaning: &'static str,
}

const fn label(
    label: &'static str,
    [content_usage, content_signal, rsl]: [bool; 3],
    meaning: &'static str,
) -> UsageLabel {
    UsageLabel {
        label,
        content_usage,
        content_signal,
        rsl,
        meaning,
    }
}

/// The table. Order matters only for display and metrics series: each convention's labels
/// keep the order they have here.
pub const USAGE_VOCABULARY: [UsageLabel; 8] = [
    label(
        "train-ai",
        [true, false, false],
        "training generative AI models (aipref vocab-08 §4.1)",
    ),
    label(
        "ai-use",
        [true, false, false],
        "input to a generative AI model, not provided by the user (aipref vocab-08 §4.2)",
    ),
    label(
        "search",
        [true, true, true],
        "selecting assets and linking users to them, excerpts only to judge relevance, no \
         summaries; in aipref it overrides the other categories (vocab-08 §4.3)",
    ),
    label(
        "ai-input",
        [false, true, true],
        "input to AI models at answer time: RAG, grounding, generated answers",
    ),
    label(
        "ai-train",
        [false, true, true],
        "training or fine-tuning AI models",
    ),
    label(
        "ai-index",
        [false, false, true],
        "inclusion in an AI system's index or retrieval store",
    ),
    label(
        "ai-all",
        [false, false, true],
        "every use by AI systems, including uses not yet named",
    ),
    label("all", [false, false, true], "every automated use"),
];

fn labels(of: fn(&UsageLabel) -> bool) -> Vec<&'static str> {
    USAGE_VOCABULARY
        .iter()
        .filter(|l| of(l))
        .map(|l| l.label)
        .collect()
}

pub(crate) static CONTENT_USAGE: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| labels(|l| l.content_usage));
pub(crate) static CONTENT_SIGNAL: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| labels(|l| l.content_signal));
static RSL: LazyLock<Vec<&'static str>> = LazyLock::new(|| labels(|l| l.rsl));

/// RSL 1.0's usage types (`all`, `ai-all`, `ai-train`, `ai-input`, `ai-index`, `search`), in
/// table order.
pub fn rsl_usage_types() -> &'static [&'static str] {
    &RSL
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UsageSource;

    #[test]
    fn each_convention_reads_its_list_from_the_table() {
        assert_eq!(
            UsageSource::ContentUsage.vocabulary(),
            ["train-ai", "ai-use", "search"]
        );
        assert_eq!(
            UsageSource::ContentSignal.vocabulary(),
            ["search", "ai-input", "ai-train"]
        );
        assert_eq!(
            rsl_usage_types(),
            [
                "search", "ai-input", "ai-train", "ai-index", "ai-all", "all"
            ]
        );
    }

    #[test]
    fn labels_are_unique() {
        let mut seen: Vec<&str> = USAGE_VOCABULARY.iter().map(|l| l.label).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), USAGE_VOCABULARY.len());
    }
}
