//! What an answer says, and how an origin's cache state becomes one: [`interpret`] is the one
//! place where a [`Snapshot`] turns into a reason and a verdict (SEMANTICS.md §3 and §5), for
//! `/v1/check` and `/v1/robots` alike; [`Ruling::decide`] then applies it to agents and a path.

use std::sync::Arc;
use std::time::SystemTime;

use robotsd_engine::{PercentDecoding, RobotsTxt};

use super::shown::{AgentToken, GroupInfo, RuleInfo};
use super::usage::{UsageCut, UsageItem};
use crate::pacing::Pace;

use super::CheckError;
use crate::cache::policy::{BackoffBasis, Rules};
use crate::cache::{Basis, CopyMemo, Lookup, Snapshot};
use crate::fetch::{FetchMeta, NoRobotsReason};
use crate::origin::Origin;

/// Why the verdict is what it is: a closed set, documented in README.md.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A rule matched and decided.
    MatchedRule,
    /// robots.txt has no rule for this URL (or no group for the agent): allowed.
    NoMatchingRule,
    /// There is no robots.txt (4xx other than 429): allowed.
    NoRobotsTxt,
    /// Too many redirects, a loop or a broken redirect: treated as no robots.txt, allowed.
    RedirectLimit,
    /// robots.txt unreachable for less than 12 hours: everything disallowed.
    UnreachableDisallowAll,
    /// robots.txt unreachable for 12 hours to 30 days: the last good copy decided.
    LastGoodCopy,
    /// robots.txt unreachable for 12 hours to 30 days and never fetched: allowed.
    UnreachableNoCopy,
    /// robots.txt unreachable for 30 days or more: as if there were none, allowed.
    // serde's snake_case would spell it `unreachable30_days`, unlike README and the metrics.
    #[serde(rename = "unreachable_30_days")]
    Unreachable30Days,
}

impl Reason {
    /// Every reason, for documentation and metrics.
    pub const ALL: [Reason; 8] = [
        Reason::MatchedRule,
        Reason::NoMatchingRule,
        Reason::NoRobotsTxt,
        Reason::RedirectLimit,
        Reason::UnreachableDisallowAll,
        Reason::LastGoodCopy,
        Reason::UnreachableNoCopy,
        Reason::Unreachable30Days,
    ];

    /// The name used in answers and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::MatchedRule => "matched_rule",
            Reason::NoMatchingRule => "no_matching_rule",
            Reason::NoRobotsTxt => "no_robots_txt",
            Reason::RedirectLimit => "redirect_limit",
            Reason::UnreachableDisallowAll => "unreachable_disallow_all",
            Reason::LastGoodCopy => "last_good_copy",
            Reason::UnreachableNoCopy => "unreachable_no_copy",
            Reason::Unreachable30Days => "unreachable_30_days",
        }
    }
}

/// Where the answer's robots.txt came from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Source {
    /// How the cache was used.
    pub cache: Lookup,
    /// HTTP status of the fetch behind the answer, if a response was received.
    pub status: Option<u16>,
    /// When that fetch happened.
    pub fetched_at: Option<SystemTime>,
    /// The SHA-256 of the robots.txt copy behind the answer (its bytes as kept), when a file
    /// was fetched and parsed.
    pub sha256: Option<[u8; 32]>,
    /// When its copy expires.
    pub expires_at: Option<SystemTime>,
    /// Decoded body bytes kept.
    pub bytes: Option<usize>,
    /// The URL it came from, after redirects.
    pub final_url: Option<FinalUrl>,
    /// The current backoff, if the origin's robots.txt is unreachable. Boxed, as
    /// [`Paced::Slot`] is: most answers have none.
    pub backoff: Option<Box<BackoffState>>,
    /// What answers from the same copy derive once: the JSON of the members above from
    /// `status` to `final_url` (`fast::answer_json`); only outside a backoff, when those
    /// members are the copy's alone.
    #[serde(skip)]
    pub memo: Option<Arc<CopyMemo>>,
}

/// The URL an answer's robots.txt came from, after redirects: read from the record of the fetch,
/// which the copy and its answers share, rather than copied into each answer.
#[derive(Debug, Clone, PartialEq)]
pub struct FinalUrl(Arc<FetchMeta>);

impl FinalUrl {
    /// The URL of a fetch made without a record of the rest (a test's, or a store's).
    pub fn of(url: url::Url) -> FinalUrl {
        FinalUrl(Arc::new(FetchMeta {
            status: None,
            bytes: 0,
            truncated: false,
            final_url: url,
            redirects: 0,
            fetched_at: SystemTime::UNIX_EPOCH,
            duration: std::time::Duration::ZERO,
            address: None,
            validators: Default::default(),
            challenge: None,
        }))
    }

    /// The URL.
    pub fn as_str(&self) -> &str {
        self.0.final_url.as_str()
    }

    /// The same fetch, answered by `challenge` (a test's, or a store's).
    pub fn challenged(self, challenge: Option<crate::fetch::challenge::Challenge>) -> FinalUrl {
        let mut meta = (*self.0).clone();
        meta.challenge = challenge;
        FinalUrl(Arc::new(meta))
    }

    /// The bot challenge the fetch was answered with, if it was one.
    pub fn challenge(&self) -> Option<crate::fetch::challenge::Challenge> {
        self.0.challenge
    }
}

impl serde::Serialize for FinalUrl {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A run of failures, for the answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BackoffState {
    /// First failure of the run.
    pub since: SystemTime,
    /// Failures in a row.
    pub failures: u32,
    /// No request to the origin before this.
    pub next_retry: SystemTime,
    /// When the answer's basis ends if the failures go on; `None` once both windows passed.
    pub until: Option<SystemTime>,
    /// Why the last fetch failed.
    pub last_error: String,
}

/// A verdict with its explanation.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// Whether fetching is allowed.
    pub allowed: bool,
    /// Why.
    pub reason: Reason,
    /// The URL as normalised for matching.
    pub url: String,
    /// The origin whose `/robots.txt` applies; `None` for a bare path evaluated
    /// ([`super::Checker::evaluate`]), whose `robots_url` is empty.
    pub origin: Option<Origin>,
    /// The agents asked about.
    pub agents: Vec<AgentToken>,
    /// The deciding rule.
    pub rule: Option<RuleInfo>,
    /// The groups that applied.
    pub group: Option<GroupInfo>,
    /// The applied groups' `crawl-delay`, in seconds (information only).
    pub crawl_delay: Option<f64>,
    /// The line of that `crawl-delay`.
    pub crawl_delay_line: Option<u32>,
    /// The AI usage preferences for the URL, sorted by source then category; empty when none
    /// applies (never part of the verdict). At most [`bounds::MAX_USAGE_CATEGORIES`] per
    /// vocabulary.
    pub usage: Vec<UsageItem>,
    /// How many categories each vocabulary had, when `usage` could not show them all.
    pub usage_cut: Option<UsageCut>,
    /// Where the robots.txt came from; `None` for a robots.txt given with the request
    /// ([`super::Checker::evaluate`]), where nothing was fetched.
    pub source: Option<Source>,
    /// RSL license terms, one report per license URL the robots.txt names, with `--rsl` and
    /// only for a URL that may be fetched; empty otherwise (never part of the verdict).
    pub rsl: Vec<crate::rsl::RslReport>,
    /// How many distinct license URLs the robots.txt names, reported in `rsl` or not.
    pub rsl_total: usize,
    /// The fetch slot, when the check asked for one.
    pub pace: Paced,
}

impl Answer {
    /// The robots.txt that applies, `<origin>/robots.txt`; empty for a bare path evaluated.
    pub fn robots_url(&self) -> String {
        self.origin
            .as_ref()
            .map(Origin::robots_url_string)
            .unwrap_or_default()
    }
}

/// A check's fetch slot (docs/politeness.md).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Paced {
    /// The check did not ask for one: the answer says nothing of pacing.
    #[default]
    NotAsked,
    /// It asked, but the URL may not be fetched: nothing was reserved.
    Disallowed,
    /// A slot, or when to ask again. Boxed: most answers have none, and an answer is moved
    /// from layer to layer on its way out.
    Slot(Box<Pace>),
}

/// What robotsd holds for an origin, in the terms of `/v1/robots`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginStatus {
    /// A robots.txt was fetched and parsed.
    Parsed,
    /// There is no robots.txt.
    NoRobotsTxt,
    /// The robots.txt is unreachable (the backoff applies).
    Unreachable,
}

impl OriginStatus {
    /// The name used in answers.
    pub fn as_str(self) -> &'static str {
        match self {
            OriginStatus::Parsed => "parsed",
            OriginStatus::NoRobotsTxt => "no_robots_txt",
            OriginStatus::Unreachable => "unreachable",
        }
    }
}

/// What an origin's state means for any check of it, before the agents and path are known.
#[derive(Debug, Clone, Copy)]
pub enum Ruling<'a> {
    /// A parsed robots.txt decides; `last_good_copy` when it is the copy a backoff falls back to.
    Rules {
        /// The file.
        robots: &'a Arc<RobotsTxt>,
        /// It is the last good copy of an unreachable robots.txt.
        last_good_copy: bool,
    },
    /// Everything is allowed, for this reason.
    AllowAll(Reason),
    /// Everything is disallowed, for this reason.
    DisallowAll(Reason),
}

/// What a snapshot means: the origin's status and the ruling for checks.
#[derive(Debug, Clone, Copy)]
pub struct Interpretation<'a> {
    /// For `/v1/robots`.
    pub status: OriginStatus,
    /// For checks.
    pub ruling: Ruling<'a>,
}

/// Interprets an origin's cache state (SEMANTICS.md §3 outcomes, §5 backoff table). A refused
/// destination is an error, not a verdict.
pub fn interpret(snapshot: &Snapshot) -> Result<Interpretation<'_>, CheckError> {
    // "No robots.txt" because of redirects is told apart from a 4xx status.
    let no_robots_reason = || {
        let redirect = snapshot
            .copy
            .as_ref()
            .and_then(|c| c.no_robots)
            .is_some_and(|r| !matches!(r, NoRobotsReason::Status(_)));
        if redirect {
            Reason::RedirectLimit
        } else {
            Reason::NoRobotsTxt
        }
    };
    let unreachable = |ruling| Interpretation {
        status: OriginStatus::Unreachable,
        ruling,
    };
    Ok(match &snapshot.basis {
        Basis::Refused(error) => return Err(CheckError::Destination(error.clone())),
        Basis::Dropped { retry_after } => {
            return Err(CheckError::CopyDropped {
                retry_after: *retry_after,
            });
        }
        Basis::Copy(Rules::Parsed(robots)) => Interpretation {
            status: OriginStatus::Parsed,
            ruling: Ruling::Rules {
                robots,
                last_good_copy: false,
            },
        },
        Basis::Copy(Rules::NoRobots) => Interpretation {
            status: OriginStatus::NoRobotsTxt,
            ruling: Ruling::AllowAll(no_robots_reason()),
        },
        Basis::Backoff { basis, rules } => unreachable(match (basis, rules) {
            (BackoffBasis::LastGoodCopy, Some(Rules::Parsed(robots))) => Ruling::Rules {
                robots,
                last_good_copy: true,
            },
            (BackoffBasis::LastGoodCopy, Some(Rules::NoRobots)) => {
                Ruling::AllowAll(Reason::LastGoodCopy)
            }
            (BackoffBasis::DisallowAll, _) => Ruling::DisallowAll(Reason::UnreachableDisallowAll),
            (BackoffBasis::AllowAllAfter30Days, _) => Ruling::AllowAll(Reason::Unreachable30Days),
            _ => Ruling::AllowAll(Reason::UnreachableNoCopy),
        }),
    })
}

/// A verdict with its explanation, before the answer's other fields are added.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    /// Whether fetching is allowed.
    pub allowed: bool,
    /// Why.
    pub reason: Reason,
    /// The deciding rule.
    pub rule: Option<RuleInfo>,
    /// The groups that applied.
    pub group: Option<GroupInfo>,
    /// The applied groups' `crawl-delay`, in seconds.
    pub crawl_delay: Option<f64>,
    /// Its line.
    pub crawl_delay_line: Option<u32>,
    /// The AI usage preferences for the URL.
    pub usage: Vec<UsageItem>,
    /// How many categories there were, when `usage` could not show them all.
    pub usage_cut: Option<UsageCut>,
}

impl Ruling<'_> {
    /// The verdict for `agents` and the URL's matchable `path`, percent-decoded as `decoding` says.
    pub fn decide(self, agents: &[AgentToken], path: &str, decoding: PercentDecoding) -> Decided {
        let flat = |allowed, reason| Decided {
            allowed,
            reason,
            rule: None,
            group: None,
            crawl_delay: None,
            crawl_delay_line: None,
            usage: Vec::new(),
            usage_cut: None,
        };
        match self {
            Ruling::Rules {
                robots,
                last_good_copy,
            } => {
                let mut decided = evaluate(robots, agents, path, decoding);
                if last_good_copy {
                    decided.reason = Reason::LastGoodCopy;
                }
                decided
            }
            Ruling::AllowAll(reason) => flat(true, reason),
            Ruling::DisallowAll(reason) => flat(false, reason),
        }
    }
}

/// Evaluates a parsed robots.txt for the agents and path: the verdict with rule and groups, and
/// `matched_rule` or `no_matching_rule`.
pub fn evaluate(
    robots: &Arc<RobotsTxt>,
    agents: &[AgentToken],
    path: &str,
    decoding: PercentDecoding,
) -> Decided {
    let verdict = robots.check_shared(agents, path, decoding);
    let crawl_delay = verdict.groups.as_ref().and_then(|g| g.get().crawl_delay());
    let (usage, usage_cut) = super::usage::bounded(&verdict.view(), path, decoding);
    let rule = verdict.rule.map(RuleInfo);
    let group = verdict.groups.map(GroupInfo);
    Decided {
        allowed: verdict.allowed,
        usage,
        usage_cut,
        reason: if rule.is_some() {
            Reason::MatchedRule
        } else {
            Reason::NoMatchingRule
        },
        rule,
        group,
        crawl_delay: crawl_delay.map(|d| d.seconds),
        crawl_delay_line: crawl_delay.map(|d| d.line),
    }
}

/// Where a snapshot's robots.txt came from.
pub fn source(snapshot: &Snapshot) -> Source {
    let copy = snapshot.copy.as_ref();
    let backoff = snapshot.backoff.as_ref();
    let meta = copy.map(|c| &c.meta).or(backoff.map(|b| &b.last));
    Source {
        cache: snapshot.lookup,
        status: meta.and_then(|m| m.status),
        fetched_at: meta.map(|m| m.fetched_at),
        sha256: copy.and_then(|c| c.body.as_ref()).map(|b| b.sha256()),
        expires_at: copy.map(|c| c.expires_at.to_system()),
        bytes: meta.map(|m| m.bytes),
        final_url: meta.map(|m| FinalUrl(Arc::clone(m))),
        memo: copy
            .filter(|_| backoff.is_none())
            .map(|c| Arc::clone(&c.memo)),
        backoff: backoff.map(|b| {
            Box::new(BackoffState {
                since: b.since.to_system(),
                failures: b.failures,
                next_retry: b.next_retry.to_system(),
                until: b.until.map(|t| t.to_system()),
                last_error: b.reason.clone(),
            })
        }),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::clock::Timestamp;

    use super::*;
    use crate::cache::CopyInfo;
    use crate::fetch::FetchMeta;

    fn snapshot(basis: Basis, no_robots: Option<NoRobotsReason>) -> Snapshot {
        let meta = FetchMeta {
            status: Some(200),
            bytes: 0,
            truncated: false,
            final_url: "https://example.com/robots.txt".parse().expect("url"),
            redirects: 0,
            fetched_at: SystemTime::UNIX_EPOCH,
            duration: Duration::ZERO,
            address: None,
            validators: Default::default(),
            challenge: None,
        };
        let now = Timestamp::from_unix(Duration::from_secs(1_795_000_000));
        Snapshot {
            lookup: Lookup::Hit,
            basis,
            copy: Some(CopyInfo {
                fetched_at: now,
                expires_at: now,
                no_robots,
                meta: Arc::new(meta),
                body: None,
                memo: Arc::default(),
            }),
            backoff: None,
        }
    }

    fn parsed() -> Rules {
        Rules::Parsed(Arc::new(RobotsTxt::parse(b"user-agent: *\ndisallow: /x\n")))
    }

    fn backoff(basis: BackoffBasis, rules: Option<Rules>) -> Basis {
        Basis::Backoff { basis, rules }
    }

    /// (status, allowed, reason) for a check of `/x`.
    fn outcome(snapshot: &Snapshot) -> (OriginStatus, bool, Reason) {
        let agents = [AgentToken::new("bot").expect("a token")];
        let interpretation = interpret(snapshot).expect("a verdict");
        let decided = interpretation
            .ruling
            .decide(&agents, "/x", PercentDecoding::Google);
        (interpretation.status, decided.allowed, decided.reason)
    }

    #[test]
    fn every_state_has_its_reason() {
        use OriginStatus::*;
        let cases = [
            (
                Basis::Copy(parsed()),
                None,
                (Parsed, false, Reason::MatchedRule),
            ),
            (
                Basis::Copy(Rules::NoRobots),
                Some(NoRobotsReason::Status(404)),
                (NoRobotsTxt, true, Reason::NoRobotsTxt),
            ),
            (
                Basis::Copy(Rules::NoRobots),
                Some(NoRobotsReason::RedirectLimit),
                (NoRobotsTxt, true, Reason::RedirectLimit),
            ),
            (
                backoff(BackoffBasis::DisallowAll, None),
                None,
                (Unreachable, false, Reason::UnreachableDisallowAll),
            ),
            (
                backoff(BackoffBasis::LastGoodCopy, Some(parsed())),
                None,
                (Unreachable, false, Reason::LastGoodCopy),
            ),
            (
                backoff(BackoffBasis::LastGoodCopy, Some(Rules::NoRobots)),
                None,
                (Unreachable, true, Reason::LastGoodCopy),
            ),
            (
                backoff(BackoffBasis::AllowAllNoCopy, None),
                None,
                (Unreachable, true, Reason::UnreachableNoCopy),
            ),
            (
                backoff(BackoffBasis::AllowAllAfter30Days, Some(parsed())),
                None,
                (Unreachable, true, Reason::Unreachable30Days),
            ),
        ];
        for (basis, no_robots, expected) in cases {
            let snapshot = snapshot(basis, no_robots);
            assert_eq!(outcome(&snapshot), expected, "{:?}", snapshot.basis);
        }
    }

    #[test]
    fn a_refusal_is_an_error_not_a_verdict() {
        let error = crate::destination::DestinationError::NoAddresses {
            host: "example.com".into(),
        };
        let snapshot = snapshot(Basis::Refused(error.clone()), None);
        assert_eq!(
            interpret(&snapshot).err(),
            Some(CheckError::Destination(error))
        );
    }
}
