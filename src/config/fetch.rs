//! The settings of one robots.txt fetch: its user agent, time limits, size limit, redirects and
//! proxy, which become a [`FetchConfig`].
//!
//! What makes a fetch configuration usable is the fetcher's business, so the checks live in
//! [`FetchConfig::try_new`]; this module only hands the flags' values over and names the flag
//! behind a field the fetcher complains about. `--max-redirects 0` is allowed: a redirect is then
//! "no robots.txt".

use std::time::Duration;

use url::Url;

use super::{ConfigError, parse_duration, parse_size};
use crate::fetch::{DEFAULT_USER_AGENT, FetchConfig, FetchConfigError};

/// Where [`FetchConfig`] sits in [`super::Settings`], to name the flag of a field.
const SECTION: &str = "fetch";

/// The flags of fetching robots.txt.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Fetching robots.txt")]
pub struct FetchArgs {
    /// Where site owners reach whoever runs this robotsd (an https:// URL or mailto: address),
    /// sent in the fetch User-Agent: `robotsd/<version> (robots.txt fetcher; +<contact>)`.
    /// Without it (or --fetch-user-agent) robotsd warns at start: sites see only the project.
    #[arg(long, env = "ROBOTSD_OPERATOR_CONTACT", value_name = "URL")]
    pub operator_contact: Option<String>,

    /// The whole User-Agent header robotsd sends when fetching robots.txt (printable ASCII),
    /// instead of the one --operator-contact builds; it should say how to reach you.
    #[arg(long, env = "ROBOTSD_FETCH_USER_AGENT", value_name = "STRING")]
    pub fetch_user_agent: Option<String>,

    /// What a robots.txt answered by a bot challenge (a firewall asking for a browser) means:
    /// `status`, its HTTP status as Google reads it (a 403: no restriction; a 503: everything
    /// disallowed a while), or `unreachable`, everything disallowed and the origin backed off,
    /// whatever the status. Either way the answer says `robots.challenged`.
    #[arg(
        long,
        env = "ROBOTSD_CHALLENGE_AS",
        value_enum,
        default_value = "status"
    )]
    pub challenge_as: ChallengeAs,

    /// Time limit for establishing one connection when fetching robots.txt.
    #[arg(long, env = "ROBOTSD_CONNECT_TIMEOUT", default_value = "5s")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub connect_timeout: Duration,

    /// Time limit for a whole robots.txt fetch, redirects and body included; at least
    /// --connect-timeout.
    #[arg(long, env = "ROBOTSD_FETCH_TIMEOUT", default_value = "10s")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub fetch_timeout: Duration,

    /// Decoded bytes of a robots.txt kept and parsed (500 KiB = 512000 bytes); the rest is
    /// dropped, not an error.
    #[arg(long, env = "ROBOTSD_MAX_ROBOTS_BYTES", default_value = "500KiB")]
    #[arg(value_parser = parse_size, value_name = "BYTES")]
    pub max_robots_bytes: u64,

    /// Redirect hops followed when fetching robots.txt; one more is treated as "no robots.txt"
    /// (0 follows none).
    #[arg(long, env = "ROBOTSD_MAX_REDIRECTS", default_value = "5")]
    #[arg(value_name = "N")]
    pub max_redirects: u32,

    /// Outbound HTTP proxy (http:// or https:// URL) for every robots.txt fetch; unset by
    /// default. Proxy environment variables such as HTTPS_PROXY are never used.
    #[arg(long, env = "ROBOTSD_PROXY", hide_env_values = true)]
    #[arg(value_name = "URL")]
    pub proxy: Option<Url>,

    /// The nice value (0 to 19, Linux) of the threads that fetch, parse and keep robots.txt:
    /// above the API's, so that cached checks are answered first while new origins are
    /// fetched; 0 runs them at the API's priority.
    #[arg(long, env = "ROBOTSD_FETCH_NICE", default_value_t = crate::fetch_runtime::DEFAULT_NICE)]
    #[arg(value_parser = clap::value_parser!(u8).range(0..=19), value_name = "N")]
    pub fetch_nice: u8,
}

impl FetchArgs {
    /// Whether the fetch identity says who runs robotsd (a contact, or a User-Agent of one's
    /// own), rather than only the project's.
    pub(super) fn identifies_operator(&self) -> bool {
        self.operator_contact.is_some() || self.fetch_user_agent.is_some()
    }

    /// The checked [`FetchConfig`].
    pub(super) fn fetch_config(&self) -> Result<FetchConfig, ConfigError> {
        let max_body_bytes =
            ConfigError::to_usize(SECTION, "max_body_bytes", self.max_robots_bytes)?;
        let user_agent = match (&self.fetch_user_agent, &self.operator_contact) {
            (Some(user_agent), _) => user_agent.clone(),
            (None, Some(contact)) => {
                if contact.is_empty() || contact.contains(char::is_whitespace) {
                    return Err(ConfigError::Contact);
                }
                format!(
                    "robotsd/{} (robots.txt fetcher; +{contact})",
                    env!("CARGO_PKG_VERSION")
                )
            }
            (None, None) => DEFAULT_USER_AGENT.to_string(),
        };
        Ok(FetchConfig::try_new(
            user_agent,
            self.connect_timeout,
            self.fetch_timeout,
            max_body_bytes,
            self.max_redirects,
            self.proxy.clone(),
        )?
        .with_challenge_unreachable(self.challenge_as == ChallengeAs::Unreachable))
    }
}

impl From<FetchConfigError> for ConfigError {
    fn from(error: FetchConfigError) -> Self {
        match error {
            FetchConfigError::UserAgent => ConfigError::UserAgent,
            FetchConfigError::Zero { field } => ConfigError::zero(SECTION, field),
            FetchConfigError::ConnectAboveTotal { connect, total } => ConfigError::exceeds(
                SECTION,
                ("connect_timeout", connect),
                ("total_timeout", total),
            ),
            FetchConfigError::Proxy { url, detail } => ConfigError::Proxy { url, detail },
        }
    }
}

/// What a bot challenge answering a robots.txt fetch means (`--challenge-as`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ChallengeAs {
    /// Its HTTP status, as Google reads it.
    Status,
    /// The origin unreachable: everything disallowed, and backed off.
    Unreachable,
}

#[cfg(test)]
mod tests {
    use super::super::tests::{error_of, settings};
    use super::*;

    #[test]
    fn the_fetch_identity_names_the_operator() {
        let s = settings(&[]).unwrap();
        assert_eq!(s.fetch.user_agent, DEFAULT_USER_AGENT);
        assert!(!s.operator_identified);
        let s = settings(&["--operator-contact", "mailto:crawl-ops@example.com"]).unwrap();
        assert_eq!(
            s.fetch.user_agent,
            format!(
                "robotsd/{} (robots.txt fetcher; +mailto:crawl-ops@example.com)",
                env!("CARGO_PKG_VERSION")
            )
        );
        assert!(s.operator_identified);
        let own = "ExampleCrawler-robots/1.0 (+https://crawler.example/about)";
        let s = settings(&["--fetch-user-agent", own, "--operator-contact", "x"]).unwrap();
        assert_eq!(s.fetch.user_agent, own);
        assert_eq!(
            error_of(&["--operator-contact", "crawl ops"]).to_string(),
            "--operator-contact must be a URL or mailto: address without spaces"
        );
    }

    #[test]
    fn proxy_must_be_http() {
        for good in ["http://proxy:3128", "https://proxy.example/"] {
            settings(&["--proxy", good]).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        let err = error_of(&["--proxy", "socks5://user:secret@proxy:1080"]);
        assert!(matches!(err, ConfigError::Proxy { .. }));
        let message = err.to_string();
        assert!(message.starts_with("--proxy "), "{message}");
        assert!(message.contains("socks5"), "{message}");
        assert!(!message.contains("secret"), "{message}");
        assert!(matches!(
            error_of(&["--proxy", "file:///tmp/x"]),
            ConfigError::Proxy { .. }
        ));
    }

    #[test]
    fn user_agent_must_be_a_header_value() {
        for bad in ["", "   ", "bot\nInjected: yes", "bötchen"] {
            let err = error_of(&["--fetch-user-agent", bad]);
            assert!(matches!(err, ConfigError::UserAgent), "{bad:?}: {err:?}");
        }
    }
}
