//! What a fetch observed and how it ended: the types the cache, the license cache and the
//! answers read, apart from the code that fetches.

use std::net::IpAddr;
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
    /// The IP address the origin's own server answered from (the first request's, before any
    /// redirect), for lanes by address (`--pace-key address`); `None` when no response came,
    /// or through a proxy, where the connection is to the proxy and the proxy resolves the name.
    pub address: Option<IpAddr>,
    /// The response's validators, to revalidate the copy with when it expires.
    pub validators: Validators,
    /// The final response was a bot challenge (a firewall asking for a browser), not the site
    /// saying anything of robots.txt: [`super::challenge`].
    pub challenge: Option<super::challenge::Challenge>,
}

/// The longest validator kept, in bytes: real `ETag`s are tens of bytes and an HTTP date 29; a
/// longer one is not kept, and that copy is fetched whole when it expires.
pub const MAX_VALIDATOR_BYTES: usize = 256;

/// A response's validators (RFC 9110 §8.8): sent back as `If-None-Match` and
/// `If-Modified-Since` when the copy expires, so that a robots.txt that has not changed comes
/// back as a `304 Not Modified` without its body (RFC 9111 §4.3.1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// `ETag`, as sent (a weak one included: a conditional GET compares weakly).
    pub etag: Option<Box<str>>,
    /// `Last-Modified`, as sent.
    pub last_modified: Option<Box<str>>,
}

impl Validators {
    /// The validators of `etag` and `last_modified` header values, each kept when it is
    /// visible ASCII of at most [`MAX_VALIDATOR_BYTES`].
    pub fn of(etag: Option<&[u8]>, last_modified: Option<&[u8]>) -> Validators {
        let keep = |value: Option<&[u8]>| {
            value
                .filter(|v| !v.is_empty() && v.len() <= MAX_VALIDATOR_BYTES)
                .filter(|v| v.iter().all(|b| (0x20..0x7f).contains(b)))
                .and_then(|v| std::str::from_utf8(v).ok())
                .map(Box::from)
        };
        Validators {
            etag: keep(etag),
            last_modified: keep(last_modified),
        }
    }

    /// Whether there is anything to revalidate with.
    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }

    /// Heap bytes held.
    pub fn heap_size(&self) -> usize {
        self.etag.as_ref().map_or(0, |v| v.len())
            + self.last_modified.as_ref().map_or(0, |v| v.len())
    }
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
    /// A bot challenge answered instead of the site, with `--challenge-as unreachable`: the
    /// vendor's.
    Challenge(&'static str),
}

impl std::fmt::Display for UnreachableReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UnreachableReason::Status(code) => write!(f, "HTTP status {code}"),
            UnreachableReason::Timeout => f.write_str("timed out"),
            UnreachableReason::Connect(e) => write!(f, "could not connect: {e}"),
            UnreachableReason::Body(e) => write!(f, "failed while reading the body: {e}"),
            UnreachableReason::Other(e) => f.write_str(e),
            UnreachableReason::Challenge(vendor) => {
                write!(f, "answered by a bot challenge ({vendor}), not the site")
            }
        }
    }
}

/// How one fetch of a document ended, with the body as `B`: the bytes for a document robotsd
/// parses elsewhere ([`DocumentOutcome`]), or the parsed robots.txt ([`FetchOutcome`]). Every
/// document robotsd fetches shares these four cases and their classification of statuses.
#[derive(Debug, Clone)]
pub enum Fetched<B> {
    /// 2xx: the body, at most the size limit (`meta.truncated` says whether it was cut).
    Body {
        /// The body.
        body: B,
        /// `Cache-Control: max-age` (zero for `no-cache`/`no-store`).
        max_age: Option<Duration>,
        /// What was observed.
        meta: FetchMeta,
    },
    /// A 4xx other than 429, or a redirect that leads nowhere: the document is not there (for a
    /// robots.txt: everything is allowed).
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
    /// 304 to a revalidation: the copy revalidated with is current, and lives on.
    NotModified {
        /// `Cache-Control: max-age` of the 304 (zero for `no-cache`/`no-store`).
        max_age: Option<Duration>,
        /// What was observed (its validators, when the 304 sent new ones).
        meta: FetchMeta,
    },
}

/// A fetched robots.txt: the parsed file and the text it was parsed from.
#[derive(Debug, Clone)]
pub struct ParsedRobots {
    /// The parsed file.
    pub robots: Arc<RobotsTxt>,
    /// The body it was parsed from (at most the size limit), for the shared store.
    pub text: bytes::Bytes,
}

/// The outcome of fetching a robots.txt ([`super::Fetcher::fetch`]).
pub type FetchOutcome = Fetched<ParsedRobots>;

/// The outcome of fetching a document other than a robots.txt
/// ([`super::Fetcher::fetch_document`]), its body left unparsed.
pub type DocumentOutcome = Fetched<bytes::Bytes>;

/// The kind of a fetch's outcome: a closed set, for metrics and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FetchKind {
    /// [`Fetched::Body`] of a robots.txt: parsed.
    Parsed,
    /// [`Fetched::Missing`]: no robots.txt.
    NoRobots,
    /// [`Fetched::Unreachable`].
    Unreachable,
    /// [`Fetched::Refused`].
    Refused,
    /// [`Fetched::NotModified`]: revalidated, no body sent.
    NotModified,
}

impl FetchKind {
    /// Every kind, in label order.
    pub const ALL: [FetchKind; 5] = [
        FetchKind::Parsed,
        FetchKind::NoRobots,
        FetchKind::Unreachable,
        FetchKind::Refused,
        FetchKind::NotModified,
    ];

    /// The name used in metric labels and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            FetchKind::Parsed => "parsed",
            FetchKind::NoRobots => "no_robots",
            FetchKind::Unreachable => "unreachable",
            FetchKind::Refused => "refused",
            FetchKind::NotModified => "not_modified",
        }
    }
}

impl<B> Fetched<B> {
    /// Which kind of outcome this is.
    pub fn kind(&self) -> FetchKind {
        match self {
            Fetched::Body { .. } => FetchKind::Parsed,
            Fetched::Missing { .. } => FetchKind::NoRobots,
            Fetched::Unreachable { .. } => FetchKind::Unreachable,
            Fetched::Refused { .. } => FetchKind::Refused,
            Fetched::NotModified { .. } => FetchKind::NotModified,
        }
    }

    /// What the fetch observed.
    pub fn meta(&self) -> &FetchMeta {
        match self {
            Fetched::Body { meta, .. }
            | Fetched::Missing { meta, .. }
            | Fetched::Unreachable { meta, .. }
            | Fetched::Refused { meta, .. }
            | Fetched::NotModified { meta, .. } => meta,
        }
    }

    /// The same outcome with the body turned into something else (the other cases unchanged).
    pub fn map_body<C>(self, f: impl FnOnce(B) -> C) -> Fetched<C> {
        match self {
            Fetched::Body {
                body,
                max_age,
                meta,
            } => Fetched::Body {
                body: f(body),
                max_age,
                meta,
            },
            Fetched::Missing {
                reason,
                max_age,
                meta,
            } => Fetched::Missing {
                reason,
                max_age,
                meta,
            },
            Fetched::Unreachable {
                reason,
                retry_after,
                meta,
            } => Fetched::Unreachable {
                reason,
                retry_after,
                meta,
            },
            Fetched::Refused { error, meta } => Fetched::Refused { error, meta },
            Fetched::NotModified { max_age, meta } => Fetched::NotModified { max_age, meta },
        }
    }
}
