//! The two conventions of usage lines and their values: the types below both the parse, which
//! recognises a line's key ([`UsageSource::of_key`]) and reads its statement, and the answers.

use super::vocabulary;

/// Which convention a preference line follows. The two vocabularies are never merged: both name
/// a `search` category, with different definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum UsageSource {
    /// `Content-Usage:` (IETF aipref: draft-ietf-aipref-attach-05, values `y`/`n`).
    ContentUsage,
    /// `Content-Signal:` (Cloudflare's Content Signals Policy, values `yes`/`no`).
    ContentSignal,
}

impl UsageSource {
    /// Both, in the order answers list them.
    pub const ALL: [UsageSource; 2] = [UsageSource::ContentUsage, UsageSource::ContentSignal];

    /// The key as the specifications spell it (`content-usage`, `content-signal`).
    pub fn as_str(self) -> &'static str {
        match self {
            UsageSource::ContentUsage => "content-usage",
            UsageSource::ContentSignal => "content-signal",
        }
    }

    /// The line's key, compared ignoring case as every robots.txt key is.
    pub(crate) fn of_key(key: &[u8]) -> Option<UsageSource> {
        UsageSource::ALL
            .into_iter()
            .find(|s| s.as_str().as_bytes().eq_ignore_ascii_case(key))
    }

    /// The categories of this source's vocabulary, as its labels (case-sensitive).
    ///
    /// `Content-Usage`: draft-ietf-aipref-vocab-08 §6.1 (`train-ai`, `ai-use`, `search`). Labels
    /// of other revisions (`train-genai`, `bots`, …) are reported as written, as unknown labels.
    /// `Content-Signal`: the Content Signals Policy.
    /// Both are read from the one table of labels, [`vocabulary::USAGE_VOCABULARY`].
    pub fn vocabulary(self) -> &'static [&'static str] {
        match self {
            UsageSource::ContentUsage => &vocabulary::CONTENT_USAGE,
            UsageSource::ContentSignal => &vocabulary::CONTENT_SIGNAL,
        }
    }

    /// Whether `label` is in this source's vocabulary.
    pub fn knows(self, label: &str) -> bool {
        self.vocabulary().contains(&label)
    }

    /// Whether a label whose value is not a preference is nevertheless well-formed in this
    /// source: `Content-Signal`'s `use` (`immediate`, `reference` or `full`: how AI systems may
    /// consume the content, in Cloudflare's managed robots.txt since 2026), which robotsd keeps
    /// in the statement but does not model as a preference.
    pub(crate) fn takes_non_preference(self, label: &str, token: Option<&[u8]>) -> bool {
        self == UsageSource::ContentSignal
            && label == "use"
            && matches!(token, Some(b"immediate" | b"reference" | b"full"))
    }

    /// The preference a token states, in this source's spelling.
    pub(crate) fn preference(self, token: &[u8]) -> Option<Preference> {
        match (self, token) {
            (UsageSource::ContentUsage, b"y") | (UsageSource::ContentSignal, b"yes") => {
                Some(Preference::Allowed)
            }
            (UsageSource::ContentUsage, b"n") | (UsageSource::ContentSignal, b"no") => {
                Some(Preference::Disallowed)
            }
            _ => None,
        }
    }
}

/// An explicit preference for a category of use. A category without one is "unknown", and is
/// simply absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum Preference {
    /// `y` (`yes` in `Content-Signal`).
    #[cfg_attr(feature = "serde", serde(rename = "y"))]
    Allowed,
    /// `n` (`no` in `Content-Signal`).
    #[cfg_attr(feature = "serde", serde(rename = "n"))]
    Disallowed,
}

impl Preference {
    /// `y` or `n`, the vocabulary's spelling, for both sources.
    pub fn as_str(self) -> &'static str {
        match self {
            Preference::Allowed => "y",
            Preference::Disallowed => "n",
        }
    }
}
