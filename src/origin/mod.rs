//! Which robots.txt applies to a URL, and what the engine matches (SEMANTICS.md §2 "Which
//! robots.txt"). [`parse_target`] parses a URL the way a crawler would put it on the wire (WHATWG
//! parsing via the `url` crate: scheme and host lower-cased, IDNs in punycode, IP literals in
//! canonical form, non-ASCII percent-encoded, dot segments resolved, default port dropped) and
//! splits it into the [`Origin`] — the cache key and the home of `/robots.txt` — and the
//! path+query the engine matches, with every `%xx` escape upper-cased so `%2f` and `%2F` are one
//! path.
//!
//! Deviations and decisions beyond §2: only `http` and `https` are accepted (the reference also
//! honours FTP); the WHATWG quirks for special schemes are kept as a browser would apply them
//! (`http:example.com/x` and `http:///example.com/x` both mean `http://example.com/x`); a trailing
//! dot in a host name is kept, so `example.com.` is its own origin (it is a different `Host`
//! header to the server); an empty query is kept (`/?` is not `/`, as `/$` must not match it);
//! and inputs over [`MAX_URL_BYTES`] are refused, before parsing and again after
//! percent-encoding.

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use url::{Host, ParseError, Position, Url};

mod canonical;

/// The longest URL accepted, in bytes, both as given and once normalised (percent-encoding can
/// triple non-ASCII input).
pub const MAX_URL_BYTES: usize = 8 * 1024;

/// Longest scheme echoed back in [`TargetError::UnsupportedScheme`]: the error goes into a
/// response, and a scheme can be as long as the URL.
const MAX_REPORTED_SCHEME_BYTES: usize = 64;

/// Why a URL cannot be checked. Every variant is a client error (HTTP 400).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The URL (as given, or once percent-encoded) is longer than the limit.
    #[error("URL is {len} bytes, longer than the limit of {max} bytes")]
    TooLong {
        /// Length that exceeded the limit, in bytes.
        len: usize,
        /// The limit, [`MAX_URL_BYTES`].
        max: usize,
    },
    /// No scheme: `/path`, `example.com/x`, `//example.com/x`, `localhost:8080/x`, or empty input.
    #[error("not an absolute URL: give scheme and host, e.g. https://example.com/path")]
    Relative,
    /// A scheme other than `http` or `https`, lower-cased (cut to 64 bytes).
    #[error("unsupported URL scheme `{0}`: only http and https URLs have a robots.txt")]
    UnsupportedScheme(String),
    /// An `http`/`https` URL without a host (`http://`).
    #[error("URL has no host")]
    NoHost,
    /// Port 0, which no server listens on and no connection can be made to.
    #[error("port 0 cannot be connected to")]
    PortZero,
    /// Anything else the WHATWG parser rejects (bad port, invalid host or IDN, ...); the `url`
    /// crate's message.
    #[error("malformed URL: {0}")]
    Malformed(String),
}

/// The two schemes robotsd fetches robots.txt for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// `http`, default port 80.
    Http,
    /// `https`, default port 443.
    Https,
}

impl Scheme {
    /// The scheme as it appears in a URL: `http` or `https`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    /// The port used when a URL gives none: 80 or 443.
    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }

    /// The scheme for a lower-case scheme string, `None` for anything but `http`/`https`.
    fn from_lowercase(scheme: &str) -> Option<Self> {
        match scheme {
            "http" => Some(Scheme::Http),
            "https" => Some(Scheme::Https),
            _ => None,
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Scheme, host and port: one robots.txt, one cache entry.
///
/// Equality, hashing and [`Borrow<str>`] all go through [`Origin::key`], which
/// determines the parts, so a cache keyed by `Origin` can be probed with a `&str`. Cloning is a
/// reference-count increment.
#[derive(Debug, Clone)]
pub struct Origin(Arc<OriginInner>);

#[derive(Debug)]
struct OriginInner {
    scheme: Scheme,
    host: Host<String>,
    port: Option<u16>,
    /// `scheme://host[:port]`, the key and the `Display` form.
    key: Box<str>,
    /// Built on first use: most checks are cache hits that never need it.
    robots_url: std::sync::OnceLock<Url>,
}

impl Origin {
    /// The origin of an already parsed URL (e.g. a redirect target). Userinfo, path, query and
    /// fragment are ignored.
    pub fn from_url(url: &Url) -> Result<Self, TargetError> {
        let scheme = Scheme::from_lowercase(url.scheme())
            .ok_or_else(|| TargetError::UnsupportedScheme(reported_scheme(url.scheme())))?;
        let host = url.host().ok_or(TargetError::NoHost)?.to_owned();
        // `url` already drops a default port, so this is `None` exactly when the port is the
        // scheme's default.
        let port = url.port();
        if port == Some(0) {
            return Err(TargetError::PortZero);
        }
        // `host_str` is the serialised host: lower-case punycode, IPv6 in brackets.
        let host_str = url.host_str().ok_or(TargetError::NoHost)?;
        let key = match port {
            Some(port) => format!("{scheme}://{host_str}:{port}"),
            None => format!("{scheme}://{host_str}"),
        };
        Ok(Origin(Arc::new(OriginInner {
            scheme,
            host,
            port,
            key: key.into_boxed_str(),
            robots_url: std::sync::OnceLock::new(),
        })))
    }

    /// The scheme.
    pub fn scheme(&self) -> Scheme {
        self.0.scheme
    }

    /// The host as parsed: a lower-case punycode domain or an IP address, for the SSRF check.
    pub fn host(&self) -> &Host<String> {
        &self.0.host
    }

    /// The host as serialised in the key: `example.com`, `127.0.0.1`, `[::1]`.
    pub fn host_str(&self) -> &str {
        // The key is `scheme://host[:port]`; the host runs from after `://` to the port colon,
        // and a bracketed IPv6 host contains colons only inside its brackets.
        let rest = &self.0.key[self.0.scheme.as_str().len() + 3..];
        match self.0.port {
            Some(_) => rest
                .bytes()
                .rposition(|b| b == b':')
                .map_or(rest, |colon| &rest[..colon]),
            None => rest,
        }
    }

    /// The explicit port; `None` when it is the scheme's default (80 for http, 443 for https).
    pub fn port(&self) -> Option<u16> {
        self.0.port
    }

    /// The port to connect to: the explicit one or the scheme's default.
    pub fn port_or_default(&self) -> u16 {
        self.0.port.unwrap_or_else(|| self.0.scheme.default_port())
    }

    /// Heap bytes this origin holds once its robots.txt URL is built (every fetched origin's
    /// is): the shared part, its key, a domain's name and the URL's serialisation. Clones share
    /// them.
    pub fn heap_size(&self) -> usize {
        use crate::kept::allocation;
        let host = match &self.0.host {
            Host::Domain(name) => allocation(name.capacity()),
            Host::Ipv4(_) | Host::Ipv6(_) => 0,
        };
        allocation(2 * std::mem::size_of::<usize>() + std::mem::size_of::<OriginInner>())
            + allocation(self.0.key.len())
            + host
            + allocation(self.0.key.len() + "/robots.txt".len())
    }

    /// The serialised origin, `https://example.com` or `http://[::1]:8080`: the cache key.
    pub fn key(&self) -> &str {
        &self.0.key
    }

    /// `<origin>/robots.txt`, the file that applies to every URL of this origin.
    pub fn robots_url(&self) -> Url {
        self.0
            .robots_url
            .get_or_init(|| {
                // The key is a serialised scheme and host (and port) that the URL parser produced,
                // so this parse cannot fail; the fallback only keeps the signature total.
                Url::parse(&self.robots_url_string()).unwrap_or_else(|_| {
                    Url::parse("http://invalid./robots.txt").expect("literal URL")
                })
            })
            .clone()
    }

    /// The robots.txt URL as text, without building a [`Url`].
    pub fn robots_url_string(&self) -> String {
        let mut url = String::with_capacity(self.0.key.len() + "/robots.txt".len());
        url.push_str(&self.0.key);
        url.push_str("/robots.txt");
        url
    }
}

impl PartialEq for Origin {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.key() == other.key()
    }
}

impl Eq for Origin {}

impl Hash for Origin {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Must hash exactly as `str` does, for the `Borrow<str>` lookups.
        self.key().hash(state);
    }
}

impl Borrow<str> for Origin {
    fn borrow(&self) -> &str {
        self.key()
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl Origin {
    /// An origin from parts the caller has already checked to be exactly what
    /// [`Origin::from_url`] would build (the URL fast path).
    pub(crate) fn from_canonical_parts(
        scheme: Scheme,
        host: Host<String>,
        port: Option<u16>,
        key: &str,
    ) -> Origin {
        Origin(Arc::new(OriginInner {
            scheme,
            host,
            port,
            key: key.into(),
            robots_url: std::sync::OnceLock::new(),
        }))
    }
}

/// A URL to check: whose robots.txt applies, and what the engine matches.
///
/// Two targets are equal when their normalised URLs are, which determine their origins.
#[derive(Debug, Clone)]
pub struct Target {
    /// The origin whose `/robots.txt` applies, or what builds it.
    origin: LazyOrigin,
    url: String,
    /// Where the path starts in `url`: without a fragment, path and query run to its end.
    path_start: usize,
}

/// A target's origin: built by the parser, or built from the fast path's parts when first
/// asked for. A cached check never asks: the cache finds the origin's entry by its key, a slice
/// of the URL, and the entry's own origin answers (two allocations saved a check, three with a
/// host name).
#[derive(Debug, Clone)]
enum LazyOrigin {
    Built(Origin),
    Parts(canonical::CanonicalParts, std::sync::OnceLock<Origin>),
}

impl PartialEq for Target {
    fn eq(&self, other: &Self) -> bool {
        self.url == other.url
    }
}

impl Eq for Target {}

impl Target {
    /// A target from a URL already in the form [`parse_target`] gives, whose path starts at
    /// `path_start` (the URL fast path), its origin built from `parts` when asked for.
    pub(crate) fn from_canonical(
        parts: canonical::CanonicalParts,
        url: String,
        path_start: usize,
    ) -> Target {
        Target {
            origin: LazyOrigin::Parts(parts, std::sync::OnceLock::new()),
            url,
            path_start,
        }
    }

    /// The origin whose `/robots.txt` applies.
    pub fn origin(&self) -> &Origin {
        match &self.origin {
            LazyOrigin::Built(origin) => origin,
            LazyOrigin::Parts(parts, built) => {
                built.get_or_init(|| parts.origin(&self.url[..self.path_start]))
            }
        }
    }

    /// The origin's key (`scheme://host[:port]`, [`Origin::key`]), without building the origin.
    pub fn origin_key(&self) -> &str {
        match &self.origin {
            LazyOrigin::Built(origin) => origin.key(),
            LazyOrigin::Parts(..) => &self.url[..self.path_start],
        }
    }

    /// Takes `origin`, one with this target's key found elsewhere (the cache's entry), as its
    /// origin if none was built yet.
    pub fn know_origin(&mut self, origin: Origin) {
        if let LazyOrigin::Parts(_, built) = &self.origin
            && origin.key() == self.origin_key()
        {
            let _ = built.set(origin);
        }
    }

    /// The normalised URL, without userinfo and fragment, `%xx` escapes upper-cased (a WHATWG
    /// serialisation, so `Url::parse` gives it back unchanged).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The normalised URL, taken out.
    pub fn into_url(self) -> String {
        self.url
    }

    /// The origin and the normalised URL, taken out.
    pub fn into_parts(self) -> (Origin, String) {
        let origin = match self.origin {
            LazyOrigin::Built(origin) => origin,
            LazyOrigin::Parts(parts, built) => built
                .into_inner()
                .unwrap_or_else(|| parts.origin(&self.url[..self.path_start])),
        };
        (origin, self.url)
    }

    /// Path and query as the engine matches them (`/a%2Fb?q=1`; `/` for a bare origin): the
    /// WHATWG serialisation from the path to the end of the query, `%xx` escapes upper-cased.
    pub fn path(&self) -> &str {
        &self.url[self.path_start..]
    }
}

/// Parses a URL to check (SEMANTICS.md §2). See [`TargetError`] for what is refused.
pub fn parse_target(input: &str) -> Result<Target, TargetError> {
    parse_target_text(Cow::Borrowed(input))
}

/// [`parse_target`] of text the target may keep when it is already in the form it gives: a URL
/// decoded from a query is an owned copy, which a check need not copy again.
pub fn parse_target_text(input: Cow<'_, str>) -> Result<Target, TargetError> {
    check_len(input.len())?;
    canonical::parse_canonical_text(input).or_else(|input| parse_with_parser(&input))
}

/// [`parse_target`] through the WHATWG parser alone: what the fast path is held to.
pub(crate) fn parse_with_parser(input: &str) -> Result<Target, TargetError> {
    let mut url = Url::parse(input).map_err(|err| classify_parse_error(input, err))?;
    if Scheme::from_lowercase(url.scheme()).is_none() && looks_like_missing_scheme(&url) {
        return Err(TargetError::Relative);
    }
    let origin = Origin::from_url(&url)?;
    // Each setter re-serialises the URL, so only what is present is removed. These only fail
    // for URLs without a host, which `from_url` has ruled out.
    if (!url.username().is_empty() || url.password().is_some())
        && (url.set_username("").is_err() || url.set_password(None).is_err())
    {
        return Err(TargetError::NoHost);
    }
    if url.fragment().is_some() {
        url.set_fragment(None);
    }
    // The parser keeps the case of existing escapes; upper-case them so the engine sees one
    // spelling. Re-setting is safe: the serialised path and query are already encoded, and
    // changing hex case cannot create new dot segments (`%2e` is matched case-insensitively and
    // was resolved on the first parse).
    if let Some(path) = upper_case_escapes(url.path()) {
        url.set_path(&path);
    }
    if let Some(query) = url.query().and_then(upper_case_escapes) {
        url.set_query(Some(&query));
    }
    check_len(url.as_str().len())?;
    Ok(Target {
        origin: LazyOrigin::Built(origin),
        path_start: url[..Position::BeforePath].len(),
        url: url.into(),
    })
}

fn check_len(len: usize) -> Result<(), TargetError> {
    if len > MAX_URL_BYTES {
        return Err(TargetError::TooLong {
            len,
            max: MAX_URL_BYTES,
        });
    }
    Ok(())
}

fn reported_scheme(scheme: &str) -> String {
    // Schemes are ASCII, so any byte index is a character boundary.
    let scheme = &scheme[..scheme.len().min(MAX_REPORTED_SCHEME_BYTES)];
    scheme.to_ascii_lowercase()
}

/// A parse error mapped to the most helpful variant. A parse can fail before the scheme is
/// looked at (`ftp://` has an empty host), so the scheme is checked first: the real problem with
/// `ftp://` is that it is FTP.
fn classify_parse_error(input: &str, err: ParseError) -> TargetError {
    if err == ParseError::RelativeUrlWithoutBase {
        return TargetError::Relative;
    }
    if let Some(scheme) = leading_scheme(input)
        && Scheme::from_lowercase(&scheme.to_ascii_lowercase()).is_none()
    {
        return TargetError::UnsupportedScheme(reported_scheme(scheme));
    }
    if err == ParseError::EmptyHost {
        return TargetError::NoHost;
    }
    TargetError::Malformed(err.to_string())
}

/// The scheme of `input` by the WHATWG grammar (ASCII letter, then letters, digits, `+-.`, then
/// `:`), after the leading C0 controls and spaces the parser also skips.
fn leading_scheme(input: &str) -> Option<&str> {
    let input = input.trim_start_matches(|c: char| c <= ' ');
    let end = input.find(':')?;
    let scheme = &input[..end];
    let mut bytes = scheme.bytes();
    let first_ok = bytes.next().is_some_and(|b| b.is_ascii_alphabetic());
    let rest_ok = bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    (first_ok && rest_ok).then_some(scheme)
}

/// Whether a non-http URL is really a host with the scheme left out: `example.com:80/x` and
/// `localhost:8080` parse as the schemes `example.com` and `localhost`. Saying "relative" there
/// points at the actual mistake; both answers are a 400 anyway.
fn looks_like_missing_scheme(url: &Url) -> bool {
    if !url.cannot_be_a_base() {
        // `scheme://...`: the scheme was written on purpose.
        return false;
    }
    if url.scheme().contains('.') {
        return true;
    }
    let path = url.path();
    let digits = path.bytes().take_while(u8::is_ascii_digit).count();
    (1..=5).contains(&digits) && matches!(path.as_bytes().get(digits), None | Some(b'/'))
}

/// `s` with the hex digits of every `%xx` escape upper-cased; a `%` not followed by two hex
/// digits is left alone, as the parser leaves it.
/// `s` with the hex digits of every `%xx` escape upper-cased, or `None` when that changes
/// nothing (the usual case, which then costs no copy and no re-serialisation of the URL).
fn upper_case_escapes(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while i + 2 < bytes.len() {
        if bytes[i] == b'%' && bytes[i + 1].is_ascii_hexdigit() && bytes[i + 2].is_ascii_hexdigit()
        {
            if bytes[i + 1].is_ascii_lowercase() || bytes[i + 2].is_ascii_lowercase() {
                let out = out.get_or_insert_with(|| bytes.to_vec());
                out[i + 1].make_ascii_uppercase();
                out[i + 2].make_ascii_uppercase();
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    // Only ASCII letters changed case, so the bytes are still UTF-8.
    out.and_then(|out| String::from_utf8(out).ok())
}

#[cfg(test)]
mod tests;
