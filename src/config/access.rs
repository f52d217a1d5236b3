//! Who may use the API: the bearer tokens of `--api-token-file`, read and checked at start-up
//! into [`ApiTokens`] (none: the API is open, as it is by default).

use std::path::PathBuf;

use super::{ConfigError, flag};
use crate::auth::ApiTokens;

/// The flags of API access.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "API access")]
pub struct AccessArgs {
    /// A file of bearer tokens, one per line (blank lines and # comments skipped; each at least
    /// 16 visible ASCII characters): every API request must then carry `Authorization: Bearer
    /// <token>`, else 401. Probes, metrics and the API reference stay open. Unset: no
    /// authentication.
    #[arg(long, env = "ROBOTSD_API_TOKEN_FILE", value_name = "PATH")]
    pub api_token_file: Option<PathBuf>,

    /// Do not serve the robots.txt tester page at `/` (the API and `/docs` stay). The variable
    /// takes true/false (also yes/no, on/off, 1/0).
    #[arg(long, env = "ROBOTSD_NO_UI")]
    #[arg(value_parser = clap::builder::BoolishValueParser::new())]
    pub no_ui: bool,
}

impl AccessArgs {
    /// The tokens, if a file is given and usable.
    pub(super) fn api_tokens(&self) -> Result<Option<ApiTokens>, ConfigError> {
        let Some(path) = &self.api_token_file else {
            return Ok(None);
        };
        let refuse = |detail: String| ConfigError::TokenFile {
            flag: flag("", "api_tokens"),
            detail: format!("{}: {detail}", path.display()),
        };
        ApiTokens::read(path)
            .map(Some)
            .map_err(|e| refuse(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{error_of, settings};

    #[test]
    fn a_token_file_is_read_at_start_and_a_bad_one_stops_it() {
        assert!(settings(&[]).unwrap().api_tokens.is_none());
        let dir = std::env::temp_dir().join(format!("robotsd-tokens-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good");
        std::fs::write(&good, "token-for-crawler-a-0123456789\n").unwrap();
        let tokens = settings(&["--api-token-file", good.to_str().unwrap()])
            .unwrap()
            .api_tokens
            .expect("tokens");
        assert!(tokens.admits(Some(b"Bearer token-for-crawler-a-0123456789")));
        let bad = dir.join("bad");
        std::fs::write(&bad, "short\n").unwrap();
        let message = error_of(&["--api-token-file", bad.to_str().unwrap()]).to_string();
        assert!(message.starts_with("--api-token-file "), "{message}");
        assert!(message.contains("line 1"), "{message}");
        let missing = error_of(&["--api-token-file", "/nonexistent/robotsd-tokens"]).to_string();
        assert!(missing.contains("/nonexistent/robotsd-tokens"), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
