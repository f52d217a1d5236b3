//! The question robotsd answers — may these agents fetch this URL? — from URL to verdict:
//! origin (SEMANTICS.md §2), cache and fetch (§3–§5), engine (§1). The HTTP API is a thin layer
//! over [`Checker::check`].

use std::time::{Instant, SystemTime};

use crate::cache::policy::{BackoffBasis, Rules};
use crate::cache::{Basis, Lookup, OriginCache, Snapshot};
use crate::destination::DestinationError;
use crate::fetch::NoRobotsReason;
use crate::origin::{Target, TargetError, parse_target};
use crate::user_agent::{UserAgentError, product_token};
use robotsd_engine::{Directive, RobotsTxt};

/// Why a check has no verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The URL is not one robotsd can answer for.
    #[error("invalid url: {0}")]
    Url(#[from] TargetError),
    /// A `ua` value has no product token.
    #[error("invalid user agent: {0}")]
    UserAgent(#[from] UserAgentError),
    /// No user agent was given.
    #[error("no user agent given")]
    NoUserAgent,
    /// robotsd will not contact the URL's origin (or a redirect's destination).
    #[error("destination not allowed: {0}")]
    Destination(String),
}

impl From<DestinationError> for CheckError {
    fn from(error: DestinationError) -> Self {
        CheckError::Destination(error.to_string())
    }
}

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

/// The rule that decided.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RuleInfo {
    /// `allow` or `disallow`.
    pub directive: Directive,
    /// The pattern as written.
    pub pattern: String,
    /// 1-based line number in robots.txt.
    pub line: u32,
}

/// The groups that applied.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GroupInfo {
    /// `user-agent` values as written.
    pub agents: Vec<String>,
    /// Their line numbers.
    pub lines: Vec<u32>,
    /// Whether these are the `*` groups.
    pub global: bool,
}

/// A `ua` value and the product token robotsd used for it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AgentToken {
    /// As given.
    pub input: String,
    /// As used.
    pub token: String,
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
    /// When its copy expires.
    pub expires_at: Option<SystemTime>,
    /// Decoded body bytes kept.
    pub bytes: Option<usize>,
    /// The URL it came from, after redirects.
    pub final_url: Option<String>,
    /// The current backoff, if the origin's robots.txt is unreachable.
    pub backoff: Option<BackoffState>,
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
    /// Why the last fetch failed.
    pub last_error: String,
}

/// A verdict with its explanation.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Answer {
    /// Whether fetching is allowed.
    pub allowed: bool,
    /// Why.
    pub reason: Reason,
    /// The URL as normalised for matching.
    pub url: String,
    /// The robots.txt that applies.
    pub robots_url: String,
    /// The agents asked about.
    pub agents: Vec<AgentToken>,
    /// The deciding rule.
    pub rule: Option<RuleInfo>,
    /// The groups that applied.
    pub group: Option<GroupInfo>,
    /// The applied groups' `crawl-delay`, in seconds (information only).
    pub crawl_delay: Option<f64>,
    /// Where the robots.txt came from.
    pub source: Source,
}

/// Checks URLs: origin → cache → engine. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Checker {
    cache: OriginCache,
}

impl Checker {
    /// A checker over `cache`.
    pub fn new(cache: OriginCache) -> Checker {
        Checker { cache }
    }

    /// The cache.
    pub fn cache(&self) -> &OriginCache {
        &self.cache
    }

    /// What the cache holds for `url`'s origin now, fetching it if nothing is known.
    pub async fn lookup(&self, url: &str) -> Result<(Target, Snapshot), CheckError> {
        let target = parse_target(url)?;
        let snapshot = self.lookup_target(&target).await?;
        Ok((target, snapshot))
    }

    /// The destination check, then the cache (which fetches when it holds nothing).
    async fn lookup_target(&self, target: &Target) -> Result<Snapshot, CheckError> {
        self.cache.fetcher().check_origin(&target.origin)?;
        Ok(self.cache.lookup(&target.origin).await)
    }

    /// May any of `user_agents` fetch `url`? Each `ua` may be a whole `User-Agent` header or a
    /// product token.
    pub async fn check<S: AsRef<str>>(
        &self,
        url: &str,
        user_agents: &[S],
    ) -> Result<Answer, CheckError> {
        let target = parse_target(url)?;
        // Agents are checked before anything is fetched: a bad `ua` costs the origin nothing.
        let agents = tokens(user_agents)?;
        let snapshot = self.lookup_target(&target).await?;
        answer(
            &target,
            agents,
            snapshot,
            (self.cache.now(), SystemTime::now()),
        )
    }
}

/// The product tokens of the `ua` values.
pub fn tokens<S: AsRef<str>>(user_agents: &[S]) -> Result<Vec<AgentToken>, CheckError> {
    if user_agents.is_empty() {
        return Err(CheckError::NoUserAgent);
    }
    user_agents
        .iter()
        .map(|ua| {
            let ua = ua.as_ref();
            Ok(AgentToken {
                input: ua.to_string(),
                token: product_token(ua)?.to_string(),
            })
        })
        .collect()
}

/// Evaluates a parsed robots.txt for the agents and path: the verdict with rule and groups.
pub fn evaluate(
    robots: &RobotsTxt,
    agents: &[AgentToken],
    path: &str,
) -> (bool, Option<RuleInfo>, Option<GroupInfo>, Option<f64>) {
    let tokens: Vec<&str> = agents.iter().map(|a| a.token.as_str()).collect();
    let verdict = robots.check_path(&tokens, path);
    let rule = verdict.rule.map(|r| RuleInfo {
        directive: r.directive(),
        pattern: r.pattern().into_owned(),
        line: r.line(),
    });
    let crawl_delay = verdict
        .groups
        .as_ref()
        .and_then(|g| g.crawl_delay())
        .map(|d| d.seconds);
    let group = verdict.groups.as_ref().map(|g| {
        let (agents, lines) = g.agents().map(|a| (a.value.into_owned(), a.line)).unzip();
        GroupInfo {
            agents,
            lines,
            global: g.is_global(),
        }
    });
    (verdict.allowed, rule, group, crawl_delay)
}

fn answer(
    target: &Target,
    agents: Vec<AgentToken>,
    snapshot: Snapshot,
    clock: (Instant, SystemTime),
) -> Result<Answer, CheckError> {
    let source = source(&snapshot, clock);
    let mut answer = Answer {
        allowed: true,
        reason: Reason::NoMatchingRule,
        url: target.url().to_owned(),
        robots_url: target.origin.robots_url_string(),
        agents,
        rule: None,
        group: None,
        crawl_delay: None,
        source,
    };
    let mut decide = |rules: &Rules, via_backoff: bool| -> Result<(), CheckError> {
        match rules {
            Rules::Parsed(robots) => {
                let (allowed, rule, group, crawl_delay) =
                    evaluate(robots, &answer.agents, target.path());
                answer.reason = match (via_backoff, &rule) {
                    (true, _) => Reason::LastGoodCopy,
                    (false, Some(_)) => Reason::MatchedRule,
                    (false, None) => Reason::NoMatchingRule,
                };
                (
                    answer.allowed,
                    answer.rule,
                    answer.group,
                    answer.crawl_delay,
                ) = (allowed, rule, group, crawl_delay);
            }
            Rules::NoRobots => {
                let redirect = snapshot
                    .copy
                    .as_ref()
                    .and_then(|c| c.no_robots)
                    .is_some_and(|r| !matches!(r, NoRobotsReason::Status(_)));
                answer.reason = match (via_backoff, redirect) {
                    (true, _) => Reason::LastGoodCopy,
                    (false, true) => Reason::RedirectLimit,
                    (false, false) => Reason::NoRobotsTxt,
                };
            }
            Rules::Refused(why) => return Err(CheckError::Destination(why.to_string())),
        }
        Ok(())
    };
    match &snapshot.basis {
        Basis::Copy(rules) => decide(rules, false)?,
        Basis::Backoff { basis, rules } => match (basis, rules) {
            (BackoffBasis::LastGoodCopy, Some(rules)) => decide(rules, true)?,
            (BackoffBasis::DisallowAll, _) => {
                answer.allowed = false;
                answer.reason = Reason::UnreachableDisallowAll;
            }
            (BackoffBasis::AllowAllAfter30Days, _) => answer.reason = Reason::Unreachable30Days,
            _ => answer.reason = Reason::UnreachableNoCopy,
        },
    }
    Ok(answer)
}

/// A monotonic instant as wall-clock time, relative to a (monotonic, wall) pair taken now.
fn wall(at: Instant, (now, wall_now): (Instant, SystemTime)) -> SystemTime {
    if at >= now {
        wall_now + (at - now)
    } else {
        wall_now - (now - at)
    }
}

/// Where a snapshot's robots.txt came from, with wall-clock times.
pub fn source(snapshot: &Snapshot, clock: (Instant, SystemTime)) -> Source {
    let copy = snapshot.copy.as_ref();
    let backoff = snapshot.backoff.as_ref();
    let meta = copy.map(|c| &c.meta).or(backoff.map(|b| &b.last));
    Source {
        cache: snapshot.lookup,
        status: meta.and_then(|m| m.status),
        fetched_at: meta.map(|m| m.fetched_at),
        expires_at: copy.map(|c| wall(c.expires_at, clock)),
        bytes: meta.map(|m| m.bytes),
        final_url: meta.map(|m| m.final_url.as_str().to_owned()),
        backoff: backoff.map(|b| BackoffState {
            since: wall(b.since, clock),
            failures: b.failures,
            next_retry: wall(b.next_retry, clock),
            last_error: b.reason.clone(),
        }),
    }
}
