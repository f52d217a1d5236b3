//! Fetching one origin's robots.txt safely (SEMANTICS.md §3 and §6).
//!
//! One fetch is a GET with robotsd's own `User-Agent`, following redirects itself (at most
//! five hops, each destination checked again; a `Location` over [`MAX_LOCATION_BYTES`], or one
//! leading to a URL over [`crate::origin::MAX_URL_BYTES`], is not followed), reading at most 500 KiB of decoded body (gzip,
//! brotli and deflate are decoded as a stream, so decompression stops at the cut too), under a
//! connect and a total time limit. Its outcome is a [`FetchOutcome`]: parsed, no robots.txt,
//! unreachable, or refused. What to do with it over time is the cache policy's business
//! ([`crate::cache::policy`]).
//!
//! Destinations: names are resolved by [`PolicyResolver`], which fails a name if any of its
//! addresses is forbidden and hands back only vetted addresses, so the connection goes to a
//! checked address and DNS rebinding fails; IP literals never reach a resolver, so every hop's
//! host is checked here first. Environment proxies are ignored; with a configured proxy,
//! literals are still checked before anything is sent, and the proxy resolves names (so its own
//! egress rules govern them).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use url::Url;

use crate::clock::{Clock, TokioClock};
use crate::destination::{
    DestinationError, DestinationPolicy, NameLookup, PolicyResolver, find_destination_error,
};
use crate::origin::MAX_URL_BYTES;
use robotsd_engine::RobotsTxt;

pub mod challenge;
mod config;
mod outcome;

pub use config::{DEFAULT_USER_AGENT, FetchConfig, FetchConfigError};
pub use outcome::{
    DocumentOutcome, FetchKind, FetchMeta, FetchOutcome, Fetched, MAX_VALIDATOR_BYTES,
    NoRobotsReason, ParsedRobots, UnreachableReason, Validators,
};

/// A copy to revalidate: the URL it came from (after redirects) and its validators. They are
/// sent only to that URL, so that a robots.txt that now redirects elsewhere is fetched whole.
#[derive(Debug, Clone, Copy)]
pub struct Revalidate<'a> {
    /// The copy's final URL.
    pub url: &'a Url,
    /// Its validators.
    pub validators: &'a Validators,
}

/// The longest `Location` followed, in bytes. Real redirects are a few hundred bytes; the
/// URL a redirect leads to is kept with the copy or the backoff (the final URL, and often in
/// the error text), so a longer one is a redirect without a usable `Location`
/// ([`NoRobotsReason::BadRedirect`]), never a URL robotsd keeps.
pub const MAX_LOCATION_BYTES: usize = 4096;

/// The most bytes of response headers accepted over HTTP/2 (hyper's default, stated here so
/// it stays one). Over HTTP/1, hyper reads a response head of up to about 408 KiB, a bound
/// reqwest does not let robotsd lower; the head lives only as long as the fetch, and nothing
/// of it is kept past [`MAX_LOCATION_BYTES`].
const MAX_HTTP2_HEADER_BYTES: u32 = 16 * 1024;

/// Why a [`Fetcher`] could not be built.
#[derive(Debug, thiserror::Error)]
pub enum FetcherError {
    /// The HTTP client rejected the configuration (an unusable proxy URL, a bad user agent).
    #[error("cannot build the HTTP client: {0}")]
    Client(#[from] reqwest::Error),
}

/// Fetches robots.txt files. Cheap to clone; share one.
#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    config: Arc<FetchConfig>,
    policy: Arc<DestinationPolicy>,
    clock: Arc<dyn Clock>,
    /// With Web Bot Auth keys: every request robotsd sends is signed, so that a site knows the
    /// fleet by its first request (the robots.txt fetch), and told of each signature made.
    signing: Option<FetchSigning>,
}

/// The signer of robotsd's own requests, and who is told of each signature (the metric).
#[derive(Clone)]
struct FetchSigning {
    signing: Arc<crate::bot_auth::signing::Signing>,
    signed: Arc<dyn Fn(&str) + Send + Sync>,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Header values of a response that the outcome needs, read before the body is consumed.
struct Freshness {
    max_age: Option<Duration>,
    retry_after: Option<Duration>,
}

impl Fetcher {
    /// Builds a fetcher with its own HTTP client.
    pub fn new(config: FetchConfig, policy: DestinationPolicy) -> Result<Fetcher, FetcherError> {
        let resolver = PolicyResolver::new(policy.clone());
        Fetcher::with_resolver(config, policy, resolver)
    }

    /// Builds a fetcher that looks names up with `lookup` instead of the system resolver (still
    /// vetting every answer against `policy`).
    pub fn with_name_lookup(
        config: FetchConfig,
        policy: DestinationPolicy,
        lookup: NameLookup,
    ) -> Result<Fetcher, FetcherError> {
        let resolver = PolicyResolver::with_lookup(policy.clone(), lookup);
        Fetcher::with_resolver(config, policy, resolver)
    }

    fn with_resolver(
        config: FetchConfig,
        policy: DestinationPolicy,
        resolver: PolicyResolver,
    ) -> Result<Fetcher, FetcherError> {
        let resolver = Arc::new(resolver);
        let mut builder = reqwest::Client::builder()
            .user_agent(config.user_agent.clone())
            // robotsd follows redirects itself, to check every hop and count them.
            .redirect(reqwest::redirect::Policy::none())
            // One request per fetch: the backoff decides when the origin is asked again.
            .retry(reqwest::retry::never())
            .connect_timeout(config.connect_timeout)
            .timeout(config.total_timeout)
            // One fetch per origin a day: idle connections would only hold file descriptors and
            // buffers for origins that will not be asked again soon (100k of them, in a fleet).
            .pool_max_idle_per_host(0)
            .http2_max_header_list_size(MAX_HTTP2_HEADER_BYTES)
            .dns_resolver(resolver);
        builder = match &config.proxy {
            Some(proxy) => builder.proxy(reqwest::Proxy::all(proxy.as_str())?),
            None => builder.no_proxy(),
        };
        Ok(Fetcher {
            client: builder.build()?,
            config: Arc::new(config),
            policy: Arc::new(policy),
            clock: Arc::new(TokioClock::new()),
            signing: None,
        })
    }

    /// The same fetcher, signing every request it sends with `signing` (Web Bot Auth) and
    /// calling `signed` with the key id of each signature.
    pub fn with_signing(
        mut self,
        signing: Arc<crate::bot_auth::signing::Signing>,
        signed: Arc<dyn Fn(&str) + Send + Sync>,
    ) -> Fetcher {
        self.signing = Some(FetchSigning { signing, signed });
        self
    }

    /// The same fetcher, taking the time (`fetched_at`, `Retry-After` dates) from `clock`.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Fetcher {
        self.clock = clock;
        self
    }

    /// The destination policy every hop is checked against.
    pub fn destinations(&self) -> &Arc<DestinationPolicy> {
        &self.policy
    }

    /// The limits in force.
    pub fn config(&self) -> &FetchConfig {
        &self.config
    }

    /// Checks a URL's host against the destination policy, before anything is sent. Names are
    /// checked when they are resolved; through a proxy, the proxy resolves them, and its own
    /// egress rules govern where names lead (robotsd sends no DNS query of its own then).
    pub fn check_destination(&self, url: &Url) -> Result<(), DestinationError> {
        let Some(host) = url.host() else {
            return Err(DestinationError::NoAddresses {
                host: String::new(),
            });
        };
        self.policy.check_url_host(&host)
    }

    /// Fetches `robots_url`, following redirects; never fails, the outcome says what happened.
    /// With `revalidate`, the request to the copy's URL is conditional, and a 304 is
    /// [`Fetched::NotModified`].
    pub async fn fetch(
        &self,
        robots_url: &Url,
        revalidate: Option<Revalidate<'_>>,
    ) -> FetchOutcome {
        self.fetch_conditional(robots_url, revalidate)
            .await
            .map_body(|text| ParsedRobots {
                robots: Arc::new(parse_weighed(&text)),
                text,
            })
    }

    /// Fetches any document (an RSL license, [`crate::rsl`]) the way a robots.txt is fetched:
    /// every hop checked against the destination policy, the same time and size limits, and the
    /// same classification of statuses. The body is left to the caller to parse.
    pub async fn fetch_document(&self, url: &Url) -> DocumentOutcome {
        self.fetch_conditional(url, None).await
    }

    async fn fetch_conditional(
        &self,
        url: &Url,
        revalidate: Option<Revalidate<'_>>,
    ) -> DocumentOutcome {
        let started = tokio::time::Instant::now();
        let mut meta = FetchMeta {
            status: None,
            bytes: 0,
            truncated: false,
            final_url: url.clone(),
            redirects: 0,
            fetched_at: self.clock.now().to_system(),
            duration: Duration::ZERO,
            address: None,
            validators: Validators::default(),
            challenge: None,
        };
        let outcome = match tokio::time::timeout(
            self.config.total_timeout,
            self.follow(url, revalidate, &mut meta),
        )
        .await
        {
            Ok(outcome) => outcome,
            Err(_) => Err(Unreachable(UnreachableReason::Timeout, None)),
        };
        meta.duration = started.elapsed();
        match outcome {
            Ok(Done::Body(body, max_age)) => DocumentOutcome::Body {
                body,
                max_age,
                meta,
            },
            Ok(Done::NoRobots(reason, max_age)) => DocumentOutcome::Missing {
                reason,
                max_age,
                meta,
            },
            Err(Unreachable(reason, retry_after)) => DocumentOutcome::Unreachable {
                reason,
                retry_after,
                meta,
            },
            Ok(Done::Refused(error)) => DocumentOutcome::Refused { error, meta },
            Ok(Done::NotModified(max_age)) => DocumentOutcome::NotModified { max_age, meta },
        }
    }

    async fn follow(
        &self,
        start: &Url,
        revalidate: Option<Revalidate<'_>>,
        meta: &mut FetchMeta,
    ) -> Result<Done, Unreachable> {
        let mut url = start.clone();
        let mut visited = vec![start.clone()];
        loop {
            meta.final_url = url.clone();
            if let Err(error) = self.check_destination(&url) {
                return Ok(Done::Refused(error));
            }
            let mut request = self.client.get(url.clone());
            let conditional = revalidate.filter(|r| *r.url == url && !r.validators.is_empty());
            if let Some(Revalidate { validators, .. }) = conditional {
                if let Some(etag) = &validators.etag {
                    request = request.header(reqwest::header::IF_NONE_MATCH, &**etag);
                }
                if let Some(date) = &validators.last_modified {
                    request = request.header(reqwest::header::IF_MODIFIED_SINCE, &**date);
                }
            }
            if let Some(FetchSigning { signing, signed }) = &self.signing {
                // Each hop its own signature: one covers one authority, path and query.
                match signing.sign("GET", &url, None) {
                    Ok(signature) => {
                        signed(&signature.keyid);
                        request = request
                            .header("signature-agent", signature.signature_agent)
                            .header("signature-input", signature.signature_input)
                            .header("signature", signature.signature);
                    }
                    // Unsigned is still a polite request: the site sees the User-Agent.
                    Err(error) => tracing::warn!(%error, url = %url, "a fetch went unsigned"),
                }
            }
            let response = match request.send().await {
                Ok(response) => response,
                Err(error) => return classify_send_error(&error).map(Done::Refused),
            };
            let status = response.status();
            meta.status = Some(status.as_u16());
            if meta.redirects == 0 && self.config.proxy.is_none() {
                // An IPv4 peer can show as `::ffff:a.b.c.d` on a dual-stack socket: one server,
                // one lane.
                meta.address = response.remote_addr().map(|peer| peer.ip().to_canonical());
            }
            let freshness = freshness(response.headers(), self.clock.now().to_system());
            let headers = response.headers();
            meta.validators = Validators::of(
                headers.get(reqwest::header::ETAG).map(|v| v.as_bytes()),
                headers
                    .get(reqwest::header::LAST_MODIFIED)
                    .map(|v| v.as_bytes()),
            );
            // Only an answer to a conditional request: an unasked-for 304 is a redirect
            // without a `Location`, as before.
            if status == reqwest::StatusCode::NOT_MODIFIED && conditional.is_some() {
                return Ok(Done::NotModified(freshness.max_age));
            }
            if status.is_redirection() {
                let next = response
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .filter(|l| l.len() <= MAX_LOCATION_BYTES)
                    .and_then(|l| l.to_str().ok())
                    .and_then(|l| url.join(l).ok())
                    .filter(|next| matches!(next.scheme(), "http" | "https"))
                    // Resolving and percent-encoding can lengthen it (non-ASCII triples).
                    .filter(|next| next.as_str().len() <= MAX_URL_BYTES);
                let Some(next) = next else {
                    return Ok(Done::NoRobots(
                        NoRobotsReason::BadRedirect,
                        freshness.max_age,
                    ));
                };
                if visited.contains(&next) {
                    return Ok(Done::NoRobots(
                        NoRobotsReason::RedirectLoop,
                        freshness.max_age,
                    ));
                }
                if meta.redirects >= self.config.max_redirects {
                    return Ok(Done::NoRobots(
                        NoRobotsReason::RedirectLimit,
                        freshness.max_age,
                    ));
                }
                meta.redirects += 1;
                visited.push(next.clone());
                url = next;
                continue;
            }
            let code = status.as_u16();
            if status.is_client_error() || status.is_server_error() {
                // The status is read as ever (Google's rule); the outcome says it was a
                // challenge. The body is not needed past the sniff.
                let headers = response.headers().clone();
                meta.challenge = sniff_challenge(code, &headers, response).await;
                log_challenge(meta, &url);
                if let Some(found) = meta.challenge.filter(|_| self.config.challenge_unreachable) {
                    return Err(Unreachable(
                        UnreachableReason::Challenge(found.vendor),
                        freshness.retry_after,
                    ));
                }
                if code == 429 || status.is_server_error() {
                    return Err(Unreachable(
                        UnreachableReason::Status(code),
                        freshness.retry_after,
                    ));
                }
                return Ok(Done::NoRobots(
                    NoRobotsReason::Status(code),
                    freshness.max_age,
                ));
            }
            // AWS WAF's challenge comes as a 202, whose body is read as a file, as any 2xx is.
            meta.challenge = challenge::challenge(code, response.headers(), b"");
            log_challenge(meta, &url);
            if let Some(found) = meta.challenge.filter(|_| self.config.challenge_unreachable) {
                return Err(Unreachable(
                    UnreachableReason::Challenge(found.vendor),
                    freshness.retry_after,
                ));
            }
            if !status.is_success() {
                // 1xx cannot be final here; anything else unexpected is treated like a server
                // that is not answering properly.
                return Err(Unreachable(
                    UnreachableReason::Status(code),
                    freshness.retry_after,
                ));
            }
            let body = self.read_body(response, meta).await?;
            return Ok(Done::Body(body.into(), freshness.max_age));
        }
    }

    async fn read_body(
        &self,
        mut response: reqwest::Response,
        meta: &mut FetchMeta,
    ) -> Result<Vec<u8>, Unreachable> {
        let limit = self.config.max_body_bytes;
        let mut body = Vec::with_capacity(limit.min(64 * 1024));
        loop {
            let chunk = response
                .chunk()
                .await
                .map_err(|e| Unreachable(UnreachableReason::Body(error_chain(&e)), None))?;
            let Some(chunk) = chunk else { break };
            let room = limit - body.len();
            if chunk.len() >= room {
                body.extend_from_slice(&chunk[..room]);
                // Exactly at the limit, only more data makes it a cut; one more chunk is bounded.
                meta.truncated = chunk.len() > room
                    || matches!(response.chunk().await, Ok(Some(c)) if !c.is_empty());
                // Dropping the response stops reading, and so decompressing, the body.
                break;
            }
            body.extend_from_slice(&chunk);
        }
        meta.bytes = body.len();
        Ok(body)
    }
}

fn log_challenge(meta: &FetchMeta, url: &Url) {
    if let Some(found) = meta.challenge {
        tracing::info!(
            url = %url,
            status = meta.status.unwrap_or(0),
            vendor = found.vendor,
            marker = found.marker,
            "a bot challenge answered the request, not the site"
        );
    }
}

/// The challenge `response` is, if any: by its headers, else by the first
/// [`challenge::SNIFF_BYTES`] of an HTML body (read within the fetch's time limit; a body that
/// fails to arrive is no evidence).
async fn sniff_challenge(
    status: u16,
    headers: &reqwest::header::HeaderMap,
    mut response: reqwest::Response,
) -> Option<challenge::Challenge> {
    if let Some(found) = challenge::challenge(status, headers, b"") {
        return Some(found);
    }
    let mut body = Vec::new();
    while body.len() < challenge::SNIFF_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = challenge::SNIFF_BYTES - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    challenge::challenge(status, headers, &body)
}

enum Done {
    Body(bytes::Bytes, Option<Duration>),
    NoRobots(NoRobotsReason, Option<Duration>),
    Refused(DestinationError),
    NotModified(Option<Duration>),
}

struct Unreachable(UnreachableReason, Option<Duration>);

fn classify_send_error(error: &reqwest::Error) -> Result<DestinationError, Unreachable> {
    match find_destination_error(error) {
        // A name that does not resolve is a server error, like a refused connection (§3).
        Some(failed) if failed.is_resolution_failure() => {
            return Err(Unreachable(
                UnreachableReason::Connect(failed.to_string()),
                None,
            ));
        }
        Some(denied) => return Ok(denied.clone()),
        None => {}
    }
    let reason = if error.is_timeout() {
        UnreachableReason::Timeout
    } else if error.is_connect() {
        UnreachableReason::Connect(error_chain(error))
    } else if error.is_body() || error.is_decode() {
        UnreachableReason::Body(error_chain(error))
    } else {
        UnreachableReason::Other(error_chain(error))
    };
    Err(Unreachable(reason, None))
}

/// An error and its causes on one line, for logs and answers.
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

fn freshness(headers: &reqwest::header::HeaderMap, now: SystemTime) -> Freshness {
    Freshness {
        max_age: headers
            .get_all(reqwest::header::CACHE_CONTROL)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(cache_control_max_age),
        retry_after: headers
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| retry_after(v, now)),
    }
}

/// The lifetime a `Cache-Control` value asks of a shared cache: `s-maxage` before `max-age`,
/// zero for `no-cache` and `no-store` (the policy turns zero into its minimum).
pub fn cache_control_max_age(value: &str) -> Option<Duration> {
    let mut max_age = None;
    let mut shared = None;
    for directive in value.split(',') {
        let (name, arg) = match directive.split_once('=') {
            Some((name, arg)) => (name.trim(), Some(arg.trim().trim_matches('"'))),
            None => (directive.trim(), None),
        };
        let seconds = || {
            arg.and_then(|a| a.parse::<u64>().ok())
                .map(Duration::from_secs)
        };
        if name.eq_ignore_ascii_case("no-store") || name.eq_ignore_ascii_case("no-cache") {
            return Some(Duration::ZERO);
        } else if name.eq_ignore_ascii_case("s-maxage") {
            shared = shared.or_else(seconds);
        } else if name.eq_ignore_ascii_case("max-age") {
            max_age = max_age.or_else(seconds);
        }
    }
    shared.or(max_age)
}

/// A `Retry-After` value (delay-seconds or an HTTP date) as a delay from `now`.
pub fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// `body` parsed for the cache, its weight worked out with it: the engine counts a sieve's charge
/// on the first `heap_size` (issue 58), and the cache weighs a copy under its slot's lock, where
/// a hostile file's count (tens of milliseconds) would hold every check of the origin. Here it
/// runs with the parse, where the fetch runs.
pub(crate) fn parse_weighed(body: &[u8]) -> RobotsTxt {
    let robots = RobotsTxt::parse(body);
    robots.heap_size();
    robots
}

#[cfg(test)]
mod tests;
