//! The limits of one fetch and their validation: the settings a [`super::Fetcher`] is built
//! from, refused with a [`FetchConfigError`] when they cannot work.

use std::time::Duration;

use url::Url;

/// robotsd's `User-Agent` when fetching robots.txt.
pub const DEFAULT_USER_AGENT: &str = concat!(
    "robotsd/",
    env!("CARGO_PKG_VERSION"),
    " (robots.txt fetcher; +https://github.com/robotsd/robotsd)"
);

/// The limits of one fetch (SEMANTICS.md §3); each is a setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchConfig {
    /// Sent as `User-Agent`.
    pub user_agent: String,
    /// Limit for establishing one connection (5 s).
    pub connect_timeout: Duration,
    /// Limit for the whole fetch, redirects and body included (10 s).
    pub total_timeout: Duration,
    /// Decoded body bytes kept; the rest is dropped, not an error (500 KiB).
    pub max_body_bytes: usize,
    /// Redirects followed (5); one more is treated as "no robots.txt".
    pub max_redirects: u32,
    /// An outbound HTTP proxy for every fetch; environment proxies are never used.
    pub proxy: Option<Url>,
    /// A bot challenge is the origin unreachable (disallow all, and back off), whatever its
    /// status: `--challenge-as unreachable`. Off by default: its status is read as Google
    /// reads it.
    pub challenge_unreachable: bool,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            user_agent: DEFAULT_USER_AGENT.to_string(),
            connect_timeout: Duration::from_secs(5),
            total_timeout: Duration::from_secs(10),
            max_body_bytes: 512_000,
            max_redirects: 5,
            proxy: None,
            challenge_unreachable: false,
        }
    }
}

/// A [`FetchConfig`] that cannot work; each variant names the fields at fault by their names in
/// [`FetchConfig`], so that a caller can say where they came from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchConfigError {
    /// The user agent could not be sent as a header value.
    #[error("user_agent must be non-empty printable ASCII")]
    UserAgent,
    /// A time limit or size that must be above zero is zero.
    #[error("{field} must be above zero")]
    Zero {
        /// The field.
        field: &'static str,
    },
    /// A connection alone would be allowed longer than the whole fetch.
    #[error("connect_timeout ({connect:?}) must not exceed total_timeout ({total:?})")]
    ConnectAboveTotal {
        /// The connect time limit.
        connect: Duration,
        /// The time limit of the whole fetch.
        total: Duration,
    },
    /// The proxy is not an `http` or `https` URL with a host.
    #[error("proxy {url}: {detail}")]
    Proxy {
        /// The URL without its credentials.
        url: String,
        /// What is wrong with it.
        detail: String,
    },
}

impl FetchConfig {
    /// Builds the limits of a fetch from their values, given in the order of the fields, if they
    /// can work: a sendable user agent, nonzero limits, a connect time limit within the total,
    /// and an `http` or `https` proxy.
    pub fn try_new(
        user_agent: String,
        connect_timeout: Duration,
        total_timeout: Duration,
        max_body_bytes: usize,
        max_redirects: u32,
        proxy: Option<Url>,
    ) -> Result<FetchConfig, FetchConfigError> {
        // Tab is the one control character a header value may hold.
        let printable = |b: u8| b == b'\t' || (b' '..=b'~').contains(&b);
        if user_agent.trim().is_empty() || !user_agent.bytes().all(printable) {
            return Err(FetchConfigError::UserAgent);
        }
        for (field, zero) in [
            ("connect_timeout", connect_timeout.is_zero()),
            ("total_timeout", total_timeout.is_zero()),
        ] {
            if zero {
                return Err(FetchConfigError::Zero { field });
            }
        }
        if connect_timeout > total_timeout {
            return Err(FetchConfigError::ConnectAboveTotal {
                connect: connect_timeout,
                total: total_timeout,
            });
        }
        if max_body_bytes == 0 {
            return Err(FetchConfigError::Zero {
                field: "max_body_bytes",
            });
        }
        if let Some(proxy) = &proxy {
            check_proxy(proxy)?;
        }
        Ok(FetchConfig {
            user_agent,
            connect_timeout,
            total_timeout,
            max_body_bytes,
            max_redirects,
            proxy,
            challenge_unreachable: false,
        })
    }

    /// The same limits, a bot challenge making the origin unreachable when `unreachable`.
    pub fn with_challenge_unreachable(mut self, unreachable: bool) -> FetchConfig {
        self.challenge_unreachable = unreachable;
        self
    }
}

/// Whether every fetch can go through `proxy`: an `http` or `https` URL with a host.
fn check_proxy(proxy: &Url) -> Result<(), FetchConfigError> {
    let invalid = |detail| {
        let mut url = proxy.clone();
        // Credentials must not end up in an error message or a log line.
        let _ = url.set_username("");
        let _ = url.set_password(None);
        Err(FetchConfigError::Proxy {
            url: url.to_string(),
            detail,
        })
    };
    if !matches!(proxy.scheme(), "http" | "https") {
        return invalid(format!(
            "scheme {:?} is not supported; use http or https",
            proxy.scheme()
        ));
    }
    if proxy.host_str().is_none_or(str::is_empty) {
        return invalid("has no host".to_string());
    }
    Ok(())
}
