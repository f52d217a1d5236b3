//! What a fetch observed and how it ended: the types the cache, the license cache and the
//! answers read, apart from the code that fetches.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use robotsd_engine::RobotsTxt;
use url::Url;

use crate::destination::DestinationError;

/// What one fetch observed, kept with the cached copy or the backoff for the answer.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchMeta {
    /// The final HTTP status, when a response was received.
    pub status: Option<u16>,
    /// Decoded body bytes kept.
    pub bytes: usize,
    /// The body was cut at the size limit.
    pub truncated: bool,
    /// The URL the answer came from, after redirects.
    pub final_url: Url,
    /// Redirects followed.
    pub redirects: u32,
    /// When the fetch started (wall clock, for display).
    pub fetched_at: SystemTime,
    /// How long it took.
    pub duration: Duration,
}

/// Why there is no robots.txt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRobotsReason {
    /// A 4xx status other than 429 (401 and 403 included).
    Status(u16),
    /// More redirects than allowed.
    RedirectLimit,
    /// A redirect back to a URL already visited.
    RedirectLoop,
    /// A redirect without a usable `Location`, or to a scheme other than http(s).
    BadRedirect,
}

/// Why a robots.txt is unreachable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnreachableReason {
    /// 429 or a 5xx status.
    Status(u16),
    /// The whole fetch took longer than its limit.
    Timeout,
    /// Name resolution, connection or TLS failed.
    Connect(String),
    /// The connection failed while the body was read (reset, broken chunking, bad encoding).
    Body(String),
    /// Anything else the HTTP client reported.
    Other(String),
}

impl std::fmt::Display for UnreachableReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnreachableReason::Status(code) => write!(f, "HTTP status {code}"),
            UnreachableReason::Timeout => f.write_str("timed out"),
            UnreachableReason::Connect(e) => write!(f, "could not connect: {e}"),
            UnreachableReason::Body(e) => write!(f, "failed while reading the body: {e}"),
            UnreachableReason::Other(e) => f.write_str(e),
        }
    }
}

/// The outcome of one fetch.
#[derive(Debug, Clone)]
pub enum FetchOutcome {
    /// 2xx: the body, parsed.
    Parsed {
        /// The parsed file.
        robots: Arc<RobotsTxt>,
        /// The body it was parsed from (at most the size limit), for the shared store.
        body: bytes::Bytes,
        /// `Cache-Control: max-age` (zero for `no-cache`/`no-store`).
        max_age: Option<Duration>,
        /// What was observed.
        meta: FetchMeta,
    },
    /// No robots.txt: everything is allowed.
    NoRobots {
        /// Why.
        reason: NoRobotsReason,
        /// `Cache-Control: max-age` of the final response, if any.
        max_age: Option<Duration>,
        /// What was observed.
        meta: FetchMeta,
    },
    /// Unreachable: the backoff rules apply.
    Unreachable {
        /// Why.
        reason: UnreachableReason,
        /// `Retry-After`, if sent.
        retry_after: Option<Duration>,
        /// What was observed.
        meta: FetchMeta,
    },
    /// A destination on the way was refused by the destination policy; nothing was sent there.
    Refused {
        /// Which destination and why.
        error: DestinationError,
        /// What was observed.
        meta: FetchMeta,
    },
}

/// The outcome of fetching a document other than a robots.txt ([`super::Fetcher::fetch_document`]):
/// the same cases as [`FetchOutcome`], with the body unparsed.
#[derive(Debug, Clone)]
pub enum DocumentOutcome {
    /// 2xx: the body, at most the size limit (`meta.truncated` says whether it was cut).
    Body {
        /// The decoded body.
        body: bytes::Bytes,
        /// `Cache-Control: max-age` (zero for `no-cache`/`no-store`).
        max_age: Option<Duration>,
        /// What was observed.
        meta: FetchMeta,
    },
    /// A 4xx other than 429, or a redirect that leads nowhere: the document is not there.
    Missing {
        /// Why.
        reason: NoRobotsReason,
        /// `Cache-Control: max-age` of the final response, if any.
        max_age: Option<Duration>,
        /// What was observed.
        meta: FetchMeta,
    },
    /// 429, 5xx or a network failure: the backoff rules apply.
    Unreachable {
        /// Why.
        reason: UnreachableReason,
        /// `Retry-After`, if sent.
        retry_after: Option<Duration>,
        /// What was observed.
        meta: FetchMeta,
    },
    /// A destination on the way was refused by the destination policy; nothing was sent there.
    Refused {
        /// Which destination and why.
        error: DestinationError,
        /// What was observed.
        meta: FetchMeta,
    },
}

/// The kind of a fetch's outcome: a closed set, for metrics and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FetchKind {
    /// [`FetchOutcome::Parsed`].
    Parsed,
    /// [`FetchOutcome::NoRobots`].
    NoRobots,
    /// [`FetchOutcome::Unreachable`].
    Unreachable,
    /// [`FetchOutcome::Refused`].
    Refused,
}

impl FetchKind {
    /// Every kind, in label order.
    pub const ALL: [FetchKind; 4] = [
        FetchKind::Parsed,
        FetchKind::NoRobots,
        FetchKind::Unreachable,
        FetchKind::Refused,
    ];

    /// The name used in metric labels and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            FetchKind::Parsed => "parsed",
            FetchKind::NoRobots => "no_robots",
            FetchKind::Unreachable => "unreachable",
            FetchKind::Refused => "refused",
        }
    }
}

impl FetchOutcome {
    /// Which kind of outcome this is.
    pub fn kind(&self) -> FetchKind {
        match self {
            FetchOutcome::Parsed { .. } => FetchKind::Parsed,
            FetchOutcome::NoRobots { .. } => FetchKind::NoRobots,
            FetchOutcome::Unreachable { .. } => FetchKind::Unreachable,
            FetchOutcome::Refused { .. } => FetchKind::Refused,
        }
    }

    /// What the fetch observed.
    pub fn meta(&self) -> &FetchMeta {
        match self {
            FetchOutcome::Parsed { meta, .. }
            | FetchOutcome::NoRobots { meta, .. }
            | FetchOutcome::Unreachable { meta, .. }
            | FetchOutcome::Refused { meta, .. } => meta,
        }
    }
}
