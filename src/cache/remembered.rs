//! What the cache keeps of each fetch beside the policy's state ([`Remembered`]), how a
//! fetch's outcome becomes the policy's input, and what an origin's state is charged.

use std::sync::Arc;

use super::policy::{FetchResult, OriginState, Rules};
use super::{CopyMemo, KeptBody};
use crate::destination::DestinationError;
use crate::fetch::{FetchMeta, FetchOutcome, NoRobotsReason, ParsedRobots, UnreachableReason};
use crate::kept::{allocation, kept_text};

/// What the cache remembers of a fetch: the fetch layer's facts, plus the parts the policy
/// does not model.
#[derive(Debug, Clone)]
pub(crate) struct Remembered {
    pub(super) meta: Arc<FetchMeta>,
    pub(super) detail: Detail,
    /// What answers from this fetch's copy derive once (shared by the clones of a state).
    pub(super) memo: Arc<CopyMemo>,
}

/// The part of an outcome an answer needs besides its [`FetchMeta`].
#[derive(Debug, Clone)]
pub(super) enum Detail {
    /// A robots.txt was parsed; its body, kept.
    Parsed(KeptBody),
    /// Why there is no robots.txt.
    NoRobots(NoRobotsReason),
    /// Why the fetch failed, as shown in answers: at most
    /// [`crate::kept::MAX_KEPT_TEXT_BYTES`].
    Failed(String),
    /// Which destination was refused, and why.
    Refused(DestinationError),
}

/// The bytes an origin's state is charged in the cache: the copy's parse, and what each fetch
/// it keeps left (its kept body, final URL and reason), during a backoff the last good copy's
/// and the last failure's both.
pub(super) fn state_weight(state: &OriginState<Remembered>) -> usize {
    let rules = |rules: &Rules| match rules {
        // The file's heap, and the `Arc`'s allocation that holds it beside two counts.
        Rules::Parsed(robots) => {
            robots.heap_size()
                + allocation(
                    2 * std::mem::size_of::<usize>()
                        + std::mem::size_of::<robotsd_engine::RobotsTxt>(),
                )
        }
        Rules::NoRobots => 0,
    };
    state.heap_size(Remembered::heap_size, rules)
}

impl Remembered {
    /// The copy's facts after a 304 revalidated it: fetched again now, in the 304's time, with
    /// the 304's validators when it sent any (RFC 9111 §4.3.4), the rest as fetched whole.
    pub(super) fn renewed(&self, not_modified: FetchMeta) -> Remembered {
        let mut meta = (*self.meta).clone();
        meta.fetched_at = not_modified.fetched_at;
        meta.duration = not_modified.duration;
        if !not_modified.validators.is_empty() {
            meta.validators = not_modified.validators;
        }
        Remembered::new(meta, self.detail.clone())
    }

    /// What the cache remembers of a fetch with `meta` and `detail`, nothing derived yet.
    pub(super) fn new(meta: FetchMeta, detail: Detail) -> Remembered {
        Remembered {
            meta: Arc::new(meta),
            detail,
            memo: Arc::default(),
        }
    }

    /// Heap bytes held: the shared [`FetchMeta`] and its final URL (at most
    /// [`crate::origin::MAX_URL_BYTES`], as robotsd fetches no longer URL), and the detail's
    /// body or text (a reason at most [`crate::kept::MAX_KEPT_TEXT_BYTES`]).
    pub(super) fn heap_size(&self) -> usize {
        // An `Arc`'s allocation holds its two counts beside the value.
        let meta = allocation(std::mem::size_of::<FetchMeta>() + 2 * std::mem::size_of::<usize>())
            + allocation(self.meta.final_url.as_str().len())
            + self
                .meta
                .validators
                .etag
                .as_ref()
                .map_or(0, |v| allocation(v.len()))
            + self
                .meta
                .validators
                .last_modified
                .as_ref()
                .map_or(0, |v| allocation(v.len()));
        // The memo's bytes, at their bound, whether or not an answer has made them yet: only a
        // copy's (a failure's or a refusal's is never answered from).
        let kept = match self.detail {
            Detail::Parsed(_) | Detail::NoRobots(_) => allocation(CopyMemo::bound(
                self.meta.final_url.as_str().len(),
                self.meta.challenge,
            )),
            Detail::Failed(_) | Detail::Refused(_) => 0,
        };
        let memo =
            allocation(std::mem::size_of::<CopyMemo>() + 2 * std::mem::size_of::<usize>()) + kept;
        meta + memo
            + match &self.detail {
                Detail::Parsed(body) => body.heap_size(),
                Detail::NoRobots(_) => 0,
                Detail::Failed(reason) => crate::kept::string(reason),
                Detail::Refused(error) => error.heap_size(),
            }
    }
}

pub(super) fn fetch_result(outcome: FetchOutcome) -> FetchResult<Remembered> {
    let remember = Remembered::new;
    match outcome {
        FetchOutcome::Body {
            body: ParsedRobots { robots, text },
            max_age,
            meta,
        } => FetchResult::Success {
            rules: Rules::Parsed(robots),
            max_age,
            meta: remember(meta, Detail::Parsed(KeptBody::keep(&text))),
        },
        FetchOutcome::Missing {
            reason,
            max_age,
            meta,
        } => FetchResult::Success {
            rules: Rules::NoRobots,
            max_age,
            meta: remember(meta, Detail::NoRobots(reason)),
        },
        FetchOutcome::Refused { error, meta } => FetchResult::Refused {
            meta: remember(meta, Detail::Refused(error)),
        },
        // Taken in by the caller, which has the copy it renews; without one it is no answer.
        FetchOutcome::NotModified { meta, .. } => FetchResult::Unreachable {
            retry_after: None,
            short: false,
            meta: remember(
                meta,
                Detail::Failed("HTTP status 304 without a copy".into()),
            ),
        },
        FetchOutcome::Unreachable {
            reason,
            retry_after,
            meta,
        } => FetchResult::Unreachable {
            retry_after,
            short: matches!(reason, UnreachableReason::Status(429 | 503)),
            // Its text can hold a URL the site chose (reqwest names the URL it failed on).
            meta: remember(meta, Detail::Failed(kept_text(reason.to_string()))),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::policy::PolicyConfig;
    use super::*;
    use crate::kept::MAX_KEPT_TEXT_BYTES;

    fn failed(final_url: &str, error: String) -> FetchResult<Remembered> {
        fetch_result(FetchOutcome::Unreachable {
            reason: UnreachableReason::Other(error),
            retry_after: None,
            meta: FetchMeta {
                status: None,
                bytes: 0,
                truncated: false,
                final_url: url::Url::parse(final_url).unwrap(),
                redirects: 1,
                fetched_at: std::time::SystemTime::UNIX_EPOCH,
                duration: Duration::ZERO,
                address: None,
                validators: Default::default(),
                challenge: None,
            },
        })
    }

    #[test]
    fn a_backoff_is_charged_its_final_url_and_its_cut_error_text() {
        let policy = PolicyConfig::default();
        let now = crate::clock::Timestamp::from_unix_millis(1_795_000_000_000);
        let weight = |final_url: &str, error: String| {
            let mut state = OriginState::default();
            state.apply(failed(final_url, error), now, 0.5, &policy);
            state_weight(&state)
        };
        let short = weight("https://example.com/robots.txt", "reset".into());
        let url = format!("https://example.com/{}", "a".repeat(4_000));
        // reqwest's error text names the URL: kept cut, and charged as kept.
        let long = weight(&url, format!("error sending request for url ({url})"));
        // Grown by the long strings' allocations, less the short ones' (under 100 bytes).
        let grown = long - short;
        assert!(
            grown >= 4_000 + MAX_KEPT_TEXT_BYTES - 100,
            "{short} → {long}"
        );
        assert!(
            grown <= 4_000 + MAX_KEPT_TEXT_BYTES + 64,
            "{short} → {long}"
        );
    }
}
