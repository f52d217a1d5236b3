//! The question robotsd answers — may these agents fetch this URL? — from URL to verdict:
//! origin (SEMANTICS.md §2), destination policy (§6), cache and fetch (§3–§5), engine (§1).
//!
//! Every answer is built here: [`Checker::check`] for a live URL, [`Checker::robots`] for what
//! is held for an origin, [`Checker::evaluate`] for a robots.txt given with the request. The HTTP
//! API and the CLI are thin layers over them; [`answer`] holds the types and the one function
//! that interprets an origin's cache state.

pub mod answer;
pub mod shown;
pub mod usage;
pub mod work;

use std::borrow::Cow;
use std::sync::Arc;

use robotsd_engine::{PercentDecoding, RobotsTxt};

use crate::cache::{Found, KeptBody, OriginCache, Snapshot};
use crate::compute::{Caller, Compute, ComputeError, Stop};
use crate::destination::{DestinationError, DestinationPolicy};
use crate::origin::{Target, TargetError, parse_target, parse_target_text};
use crate::pace_policy::PaceConfig;
use crate::pacing::{PaceView, Pacer};
use crate::rsl::Licenses;
use crate::user_agent::{UserAgentError, product_token};
pub use answer::{
    Answer, BackoffState, Decided, FinalUrl, Interpretation, OriginStatus, Paced, Reason, Ruling,
    Source, interpret,
};
pub use shown::{AgentToken, GroupInfo, GroupShown, RuleInfo};
pub use usage::{UsageCut, UsageItem};
pub use work::{OverBudget, WorkMeter};

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
    Destination(#[from] DestinationError),
    /// A refresh asked for too soon after the origin's last fetch, or during its backoff.
    #[error(
        "the origin was fetched too recently, or is in backoff; it may be fetched again in {retry_after:?}"
    )]
    TooSoon {
        /// How long until it may be fetched again.
        retry_after: std::time::Duration,
    },
    /// The origin's copy was dropped for memory soon after its fetch, and it is not fetched
    /// again before the shortest lifetime has passed.
    #[error("the robots.txt copy was dropped for memory; it is fetched again in {retry_after:?}")]
    CopyDropped {
        /// How long until it may be fetched again.
        retry_after: std::time::Duration,
    },
    /// The request's work would pass its budget with this check (`--max-request-work`).
    #[error("{0}")]
    OverBudget(#[from] OverBudget),
    /// The match, sent to the compute threads, failed there.
    #[error("{0}")]
    Compute(#[from] ComputeError),
}

/// What robotsd holds for an origin: the answer of `/v1/robots`.
#[derive(Debug, Clone)]
pub struct OriginReport {
    /// The URL asked about, and its origin.
    pub target: Target,
    /// Parsed, no robots.txt, or unreachable.
    pub status: OriginStatus,
    /// Where the robots.txt came from.
    pub source: Source,
    /// The parsed file that decides checks now (the last good copy, in backoff), if any.
    pub robots: Option<Arc<RobotsTxt>>,
    /// The text it was parsed from, kept deflated.
    pub body: Option<KeptBody>,
    /// The origin's pacing state, when any is kept.
    pub pace: Option<PaceView>,
}

/// What robotsd holds for `target`'s origin, from a snapshot.
fn report(target: Target, snapshot: &Snapshot) -> Result<OriginReport, CheckError> {
    let interpretation = interpret(snapshot)?;
    let robots = match interpretation.ruling {
        Ruling::Rules { robots, .. } => Some(Arc::clone(robots)),
        _ => None,
    };
    Ok(OriginReport {
        status: interpretation.status,
        source: answer::source(snapshot),
        body: robots
            .as_ref()
            .and(snapshot.copy.as_ref())
            .and_then(|c| c.body.clone()),
        robots,
        target,
        pace: None,
    })
}

/// The answer for `target` and `agents` under `ruling`, from what `snapshot` holds.
fn answer_from(
    snapshot: &Snapshot,
    ruling: Ruling<'_>,
    target: Target,
    agents: Vec<AgentToken>,
    decoding: PercentDecoding,
) -> Answer {
    let decided = ruling.decide(&agents, target.path(), decoding);
    let source = answer::source(snapshot);
    let (origin, url) = target.into_parts();
    Answer {
        allowed: decided.allowed,
        reason: decided.reason,
        origin: Some(origin),
        url,
        agents,
        rule: decided.rule,
        group: decided.group,
        crawl_delay: decided.crawl_delay,
        crawl_delay_line: decided.crawl_delay_line,
        usage: decided.usage,
        usage_cut: decided.usage_cut,
        source: Some(source),
        rsl: Vec::new(),
        rsl_total: 0,
        pace: Paced::NotAsked,
    }
}

/// The rest of a check that waits on something (a fetch slot, a license document, a hand-off
/// to the compute threads), boxed: the check's own future is moved about and stays small.
type Completing<'a> =
    std::pin::Pin<Box<dyn Future<Output = Result<Box<Answer>, CheckError>> + Send + 'a>>;

/// A check's match: made already, or to be made off the async workers.
enum Matched {
    /// The answer, matched where it was asked.
    Now(Answer),
    /// What to match on the compute threads, and whose turn it takes.
    Off(OffMatch),
}

/// A match for the compute threads: the snapshot, target, agents and decoding to match, its
/// work ([`work::placement`]) and its caller.
struct OffMatch {
    snapshot: Snapshot,
    target: Target,
    agents: Vec<AgentToken>,
    decoding: PercentDecoding,
    work: u64,
    caller: Caller,
}

/// Where a check's match runs.
enum Sized<'a> {
    /// Where it is asked, under this ruling: a moment's work.
    Now(Ruling<'a>),
    /// On the compute threads: this much work ([`work::placement`]).
    Off(u64),
}

/// Sizes a check of `agents` agents of `target` under what `snapshot` holds, and charges it to
/// `meter`, if any. The budget counts rules ([`work::cost`]); where the match runs counts the
/// path too ([`work::placement`]), since a rule's match reads the path (issue 58).
fn sized<'a>(
    compute: &Compute,
    snapshot: &'a Snapshot,
    target: &Target,
    agents: usize,
    decoding: PercentDecoding,
    meter: Option<&WorkMeter>,
) -> Result<Sized<'a>, CheckError> {
    let ruling = interpret(snapshot)?.ruling;
    let rules = rules_of(ruling);
    if let Some(meter) = meter {
        meter.charge(work::cost(1, agents, rules))?;
    }
    let placement = work::placement(agents, rules, target.path().len(), decoding);
    Ok(if compute.inline(placement) {
        Sized::Now(ruling)
    } else {
        Sized::Off(placement)
    })
}

/// The rules a check under `ruling` may match: none when no file decides.
fn rules_of(ruling: Ruling<'_>) -> usize {
    match ruling {
        Ruling::Rules { robots, .. } => robots.indexed_rules(),
        Ruling::AllowAll(_) | Ruling::DisallowAll(_) => 0,
    }
}

/// The parsed robots.txt a snapshot answers from, when it names license documents.
fn names_licenses(snapshot: &Snapshot) -> Option<Arc<RobotsTxt>> {
    match interpret(snapshot).ok()?.ruling {
        Ruling::Rules { robots, .. } if robots.licenses().next().is_some() => {
            Some(Arc::clone(robots))
        }
        _ => None,
    }
}

/// Checks URLs: origin → destination policy → cache → engine. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Checker {
    cache: OriginCache,
    /// The same policy the fetcher checks every hop against: checked here first, so that a
    /// refused origin costs no cache entry.
    destinations: Arc<DestinationPolicy>,
    /// How checks that do not say compare percent-encoded unreserved characters.
    percent_decoding: PercentDecoding,
    /// Hands out fetch slots to checks that ask for one.
    pacer: Pacer,
    /// RSL license terms, with `--rsl`.
    licenses: Option<Licenses>,
    /// Where matches too large for an async worker run.
    compute: Compute,
}

/// How a check is answered besides its URL and agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckOptions {
    /// How percent-encoded unreserved characters compare.
    pub decoding: PercentDecoding,
    /// Whether to reserve a fetch slot for an allowed URL (docs/politeness.md).
    pub pace: bool,
    /// Whether to report RSL license terms (with `--rsl`): not for an answer that shows only
    /// the verdict (`view=verdict`), which would otherwise wait for license fetches it never
    /// shows.
    pub licenses: bool,
    /// Whose turn on the compute threads a match sent there takes.
    pub caller: Caller,
}

/// Bytes of pacing state a checker made by [`Checker::new`] holds at most.
pub const DEFAULT_PACE_CAPACITY: u64 = 32 * 1024 * 1024;

impl Checker {
    /// A checker over `cache`, refusing the destinations its fetcher refuses, matching as
    /// Google's reference does.
    pub fn new(cache: OriginCache) -> Checker {
        let destinations = Arc::clone(cache.fetcher().destinations());
        let pacer = Pacer::new(
            PaceConfig::default(),
            DEFAULT_PACE_CAPACITY,
            Arc::clone(cache.clock()),
        );
        Checker {
            cache,
            destinations,
            percent_decoding: PercentDecoding::Google,
            pacer,
            licenses: None,
            compute: Compute::default(),
        }
    }

    /// This checker reporting the RSL license terms of allowed URLs from `licenses` (`--rsl`).
    pub fn with_licenses(mut self, licenses: Licenses) -> Checker {
        self.licenses = Some(licenses);
        self
    }

    /// The license terms, with `--rsl`.
    pub fn licenses(&self) -> Option<&Licenses> {
        self.licenses.as_ref()
    }

    /// The license reports for an allowed answer, when `--rsl` is on and the robots.txt names
    /// licenses; `held_only` fetches nothing.
    async fn attach_licenses(
        &self,
        answer: &mut Answer,
        licensed: Option<(Arc<RobotsTxt>, Target)>,
        held_only: bool,
    ) {
        if let (Some(licenses), Some((robots, target)), true) =
            (&self.licenses, licensed, answer.allowed)
        {
            let reports = licenses.reports(&robots, &target, held_only).await;
            answer.rsl = reports.reports;
            answer.rsl_total = reports.total;
        }
    }

    /// The robots.txt and target to report license terms from, when `--rsl` is on.
    fn licensed(&self, snapshot: &Snapshot, target: &Target) -> Option<(Arc<RobotsTxt>, Target)> {
        self.licenses.as_ref()?;
        names_licenses(snapshot).map(|robots| (robots, target.clone()))
    }

    /// This checker with `pacer` handing out fetch slots.
    pub fn with_pacer(mut self, pacer: Pacer) -> Checker {
        self.pacer = pacer;
        self
    }

    /// This checker matching on `compute`'s threads what is more than a moment's work.
    pub fn with_compute(mut self, compute: Compute) -> Checker {
        self.compute = compute;
        self
    }

    /// The compute threads.
    pub fn compute(&self) -> &Compute {
        &self.compute
    }

    /// The pacer.
    pub fn pacer(&self) -> &Pacer {
        &self.pacer
    }

    /// The options of a check that asks for nothing beyond the server's defaults.
    pub fn default_options(&self) -> CheckOptions {
        CheckOptions {
            decoding: self.percent_decoding,
            pace: false,
            licenses: true,
            caller: Caller::Unknown,
        }
    }

    /// Reserves a fetch slot in `lane` for `answer` if the URL may be fetched.
    async fn pace(&self, answer: &mut Answer, lane: String) {
        answer.pace = if answer.allowed {
            let crawl_delay = answer.crawl_delay.zip(answer.crawl_delay_line);
            Paced::Slot(Box::new(self.pacer.reserve(lane, crawl_delay).await))
        } else {
            Paced::Disallowed
        };
    }

    /// This checker with `decoding` as the default of checks that do not say
    /// (`--percent-decoding`).
    pub fn with_percent_decoding(mut self, decoding: PercentDecoding) -> Checker {
        self.percent_decoding = decoding;
        self
    }

    /// The default of checks that do not say how to compare percent-encoded characters.
    pub fn percent_decoding(&self) -> PercentDecoding {
        self.percent_decoding
    }

    /// The cache.
    pub fn cache(&self) -> &OriginCache {
        &self.cache
    }

    /// The destination check, then the cache (which fetches when it holds nothing).
    async fn lookup(&self, target: &Target) -> Result<Snapshot, CheckError> {
        self.destinations.check_origin(target.origin())?;
        Ok(self.cache.lookup(target.origin()).await)
    }

    /// May any of `user_agents` fetch `url`? Each `ua` may be a whole `User-Agent` header or a
    /// product token.
    pub async fn check<S: AsRef<str>>(
        &self,
        url: &str,
        user_agents: &[S],
    ) -> Result<Answer, CheckError> {
        self.check_with(url, user_agents, self.default_options())
            .await
    }

    /// [`Checker::check`] as `options` say: how percent-encoded unreserved characters compare,
    /// and whether to reserve a fetch slot.
    pub async fn check_with<S: AsRef<str>>(
        &self,
        url: &str,
        user_agents: &[S],
        options: CheckOptions,
    ) -> Result<Answer, CheckError> {
        let answer = self
            .check_metered(Cow::Borrowed(url), user_agents, options, None)
            .await?;
        Ok(*answer)
    }

    /// [`Checker::check_with`], its work charged to `meter`, if any, before it matches: refused
    /// with [`CheckError::OverBudget`] past the request's budget. The answer comes boxed: the
    /// API moves it through a few layers of futures, each of which copied its 344 bytes.
    pub async fn check_metered<S: AsRef<str>>(
        &self,
        url: Cow<'_, str>,
        user_agents: &[S],
        options: CheckOptions,
        meter: Option<&WorkMeter>,
    ) -> Result<Box<Answer>, CheckError> {
        let mut target = parse_target_text(url)?;
        // Agents are checked before anything is fetched: a bad `ua` costs the origin nothing.
        let agents = tokens(user_agents)?;
        // An origin the cache has an entry for is found by its key, a slice of the URL, and
        // the entry's origin is the target's: a cached check builds none.
        let found = match self.cache.known(target.origin_key()) {
            Some(known) => {
                self.destinations.check_origin(known.origin())?;
                target.know_origin(known.origin().clone());
                self.cache.find_known(known)
            }
            None => {
                self.destinations.check_origin(target.origin())?;
                self.cache.find_unknown(target.origin())
            }
        };
        // Only boxed futures are awaited here, and the snapshot and the answer are out of scope
        // by the second await: a cached check's future stays small, since it is moved around.
        let completing: Completing<'_> = {
            let snapshot = match found {
                Found::Now(snapshot) => snapshot,
                Found::Later(wait) => wait.await,
            };
            let lane = options
                .pace
                .then(|| self.pacer.lane(target.origin(), snapshot.address()));
            let licensed = options
                .licenses
                .then(|| self.licensed(&snapshot, &target))
                .flatten();
            let sized = sized(
                &self.compute,
                &snapshot,
                &target,
                agents.len(),
                options.decoding,
                meter,
            )?;
            match sized {
                Sized::Now(ruling) => {
                    let answer = answer_from(&snapshot, ruling, target, agents, options.decoding);
                    match (licensed, lane) {
                        (None, None) => return Ok(Box::new(answer)),
                        // `pace=true` alone, the usual paced check: the answer is boxed once
                        // and only the reservation waited on, not the whole completion, whose
                        // future holds the answer and the license step besides.
                        (None, Some(lane)) => {
                            let paced: Completing<'_> =
                                Box::pin(self.paced(Box::new(answer), lane));
                            paced
                        }
                        (licensed, lane) => {
                            Box::pin(self.finish(Matched::Now(answer), licensed, lane))
                        }
                    }
                }
                Sized::Off(work) => {
                    let off = OffMatch {
                        snapshot,
                        target,
                        agents,
                        decoding: options.decoding,
                        work,
                        caller: options.caller,
                    };
                    Box::pin(self.finish(Matched::Off(off), licensed, lane))
                }
            }
        };
        completing.await
    }

    /// `answer` with its fetch slot reserved in `lane`. Boxed by the caller, so that the
    /// future holds a pointer rather than the answer, and the answer is not copied into it.
    async fn paced(
        &self,
        mut answer: Box<Answer>,
        lane: String,
    ) -> Result<Box<Answer>, CheckError> {
        self.pace(&mut answer, lane).await;
        Ok(answer)
    }

    /// A check's answer, matched on the compute threads if it was not yet, with its license
    /// reports and fetch slot when asked for.
    async fn finish(
        &self,
        matched: Matched,
        licensed: Option<(Arc<RobotsTxt>, Target)>,
        lane: Option<String>,
    ) -> Result<Box<Answer>, CheckError> {
        let answer = match matched {
            Matched::Now(answer) => answer,
            // Boxed: a check that asks for a slot or licenses, and matched where it was asked,
            // moves this future about, and should not carry the hand-off's state in it.
            Matched::Off(off) => {
                let (work, caller) = (off.work, off.caller);
                Box::pin(
                    self.compute
                        .offload(work, caller, Stop::at(None), move |_| {
                            let OffMatch {
                                snapshot,
                                target,
                                agents,
                                decoding,
                                ..
                            } = off;
                            let ruling = interpret(&snapshot)?.ruling;
                            Ok::<_, CheckError>(answer_from(
                                &snapshot, ruling, target, agents, decoding,
                            ))
                        }),
                )
                .await??
            }
        };
        Ok(Box::new(self.complete(answer, licensed, lane, false).await))
    }

    /// An answer with its license reports and its fetch slot, when `licensed` and `lane` ask for
    /// them (`held_only`: fetch no license document).
    async fn complete(
        &self,
        mut answer: Answer,
        licensed: Option<(Arc<RobotsTxt>, Target)>,
        lane: Option<String>,
        held_only: bool,
    ) -> Answer {
        self.attach_licenses(&mut answer, licensed, held_only).await;
        if let Some(lane) = lane {
            self.pace(&mut answer, lane).await;
        }
        answer
    }

    /// [`Checker::check_with`] if it can be answered at once: `Ok(None)` when the origin's
    /// robots.txt is not held, or matching it is work for the compute threads.
    pub async fn check_held<S: AsRef<str>>(
        &self,
        url: &str,
        user_agents: &[S],
        options: CheckOptions,
        meter: Option<&WorkMeter>,
    ) -> Result<Option<Answer>, CheckError> {
        let target = parse_target(url)?;
        let agents = tokens(user_agents)?;
        self.destinations.check_origin(target.origin())?;
        let Some(snapshot) = self.cache.peek(target.origin()).await else {
            return Ok(None);
        };
        let lane = options
            .pace
            .then(|| self.pacer.lane(target.origin(), snapshot.address()));
        let licensed = options
            .licenses
            .then(|| self.licensed(&snapshot, &target))
            .flatten();
        // Only what is answered at once: a match for the compute threads is not.
        let sized = sized(
            &self.compute,
            &snapshot,
            &target,
            agents.len(),
            options.decoding,
            meter,
        )?;
        let Sized::Now(ruling) = sized else {
            return Ok(None);
        };
        let answer = answer_from(&snapshot, ruling, target, agents, options.decoding);
        if licensed.is_none() && lane.is_none() {
            return Ok(Some(answer));
        }
        Ok(Some(
            Box::pin(self.complete(answer, licensed, lane, true)).await,
        ))
    }

    /// The rules a check of `url` would match now, when robotsd holds its origin's robots.txt
    /// (none when no file decides); `None` when it holds nothing for it, or `url` is no URL.
    /// Fetches nothing: a request's work is estimated with it before anything is done.
    pub async fn held_rules(&self, url: &str) -> Option<usize> {
        let target = parse_target(url).ok()?;
        let snapshot = self.cache.peek(target.origin()).await?;
        let ruling = interpret(&snapshot).ok()?.ruling;
        Some(rules_of(ruling))
    }

    /// What robotsd holds for `url`'s origin now, fetching it if nothing is known.
    pub async fn robots(&self, url: &str) -> Result<OriginReport, CheckError> {
        let target = parse_target(url)?;
        let snapshot = self.lookup(&target).await?;
        let lane = self.pacer.lane(target.origin(), snapshot.address());
        let pace = self.pacer.view(&lane).await;
        let mut report = report(target, &snapshot)?;
        report.pace = pace;
        Ok(report)
    }

    /// [`Checker::robots`] after fetching the origin's robots.txt now (see
    /// [`OriginCache::refresh`] for when it is not).
    pub async fn refresh(&self, url: &str) -> Result<OriginReport, CheckError> {
        let target = parse_target(url)?;
        self.destinations.check_origin(target.origin())?;
        let snapshot = self
            .cache
            .refresh(target.origin())
            .await
            .map_err(|retry_after| CheckError::TooSoon { retry_after })?;
        let lane = self.pacer.lane(target.origin(), snapshot.address());
        let pace = self.pacer.view(&lane).await;
        let mut report = report(target, &snapshot)?;
        report.pace = pace;
        Ok(report)
    }

    /// Checks `url` against a robots.txt given with the request, fetching nothing. A tester is
    /// often given a bare path (`/private/x`): it is evaluated as a path of some origin, shown as
    /// given, with no `robots_url`.
    pub fn evaluate(
        robots: &Arc<RobotsTxt>,
        agents: &[AgentToken],
        url: &str,
        decoding: PercentDecoding,
    ) -> Result<Answer, CheckError> {
        let (shown, target, origin) = if url.starts_with('/') && !url.starts_with("//") {
            let target = parse_target(&format!("http://robotsd.invalid{url}"))?;
            (url.to_string(), target, None)
        } else {
            let target = parse_target(url)?;
            let origin = target.origin().clone();
            (target.url().to_owned(), target, Some(origin))
        };
        let decided = answer::evaluate(robots, agents, target.path(), decoding);
        Ok(Answer {
            allowed: decided.allowed,
            reason: decided.reason,
            url: shown,
            origin,
            agents: agents.to_vec(),
            rule: decided.rule,
            group: decided.group,
            crawl_delay: decided.crawl_delay,
            crawl_delay_line: decided.crawl_delay_line,
            usage: decided.usage,
            usage_cut: decided.usage_cut,
            source: None,
            rsl: Vec::new(),
            rsl_total: 0,
            pace: Paced::NotAsked,
        })
    }
}

/// The product tokens of the `ua` values.
pub fn tokens<S: AsRef<str>>(user_agents: &[S]) -> Result<Vec<AgentToken>, CheckError> {
    // Loops rather than a fallible collect over a flat map: a check runs this for every `ua`.
    let mut agents = Vec::with_capacity(user_agents.len());
    for ua in user_agents {
        for part in crate::user_agent::agents_in(ua.as_ref()) {
            agents.push(AgentToken::new(part)?);
        }
    }
    if agents.is_empty() {
        // None given, or only empty parts of a list (`,`).
        return match user_agents.first() {
            Some(ua) => Err(product_token(ua.as_ref())
                .err()
                .map_or(CheckError::NoUserAgent, CheckError::from)),
            None => Err(CheckError::NoUserAgent),
        };
    }
    Ok(agents)
}
