//! The settings of Web Bot Auth (`docs/bot-auth.md`): the key file, the agent's URI and a
//! signature's lifetime, checked into [`BotAuthSettings`]: the key file read and its keys checked
//! at start, so that a replica with an unusable key never starts signing.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::{ConfigError, flag, parse_duration};
use crate::bot_auth::keys::KeySet;
use crate::bot_auth::signing::{DEFAULT_TTL, MAX_TTL, check_agent};

/// Web Bot Auth, checked: on when a key file is given.
#[derive(Debug, Clone)]
pub struct BotAuthSettings {
    /// The keys, as read at start.
    pub keys: Arc<KeySet>,
    /// The file they were read from, read again on SIGHUP.
    pub file: PathBuf,
    /// The agent's URI, sent as the `Signature-Agent` member.
    pub agent: String,
    /// How long a signature lasts.
    pub ttl: Duration,
    /// The fleet's RFC 9309 product token, with `--wba-product-token`: signatures only for
    /// checks made for it, and the Signature Agent Card that names it.
    pub product_token: Option<String>,
    /// The operator's contact (`--operator-contact`), which the card names.
    pub contact: Option<String>,
}

impl BotAuthSettings {
    /// The same settings, with the operator's `contact`.
    pub(super) fn with_contact(self, contact: Option<String>) -> BotAuthSettings {
        BotAuthSettings { contact, ..self }
    }
}

/// The flags of Web Bot Auth.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Web Bot Auth")]
pub struct BotAuthArgs {
    /// A JWK Set of Ed25519 keys (a mounted Secret), each with `"status": "active"` (exactly one:
    /// it signs) or `"published"` (in the key directory only): robotsd then signs the requests
    /// it allows when asked (`sign=GET`) and serves its key directory. Read again on SIGHUP.
    /// Unset: no signing.
    #[arg(long, env = "ROBOTSD_WBA_KEYS", value_name = "PATH")]
    pub wba_keys: Option<PathBuf>,

    /// The https URL of the fleet's key directory, sent as `Signature-Agent: sig1="<url>"`: a
    /// site fetches the keys there (https://<bot domain>/.well-known/http-message-signatures-
    /// directory, routed to robotsd, which serves it). Required with --wba-keys.
    #[arg(long, env = "ROBOTSD_WBA_AGENT", value_name = "URI")]
    pub wba_agent: Option<String>,

    /// How long a signature lasts after it is made (or after a pacing slot's start): at most 5m.
    #[arg(long, env = "ROBOTSD_WBA_TTL", default_value = "60s")]
    #[arg(value_parser = parse_duration, value_name = "DURATION")]
    pub wba_ttl: Duration,

    /// The fleet's robots.txt product token (RFC 9309: letters, `_` and `-`), e.g. ExampleBot:
    /// robotsd then signs only checks made for it (their `ua` names it) and serves the
    /// Signature Agent Card that names it, at /.well-known/signature-agent-card. Needs
    /// --wba-keys.
    #[arg(long, env = "ROBOTSD_WBA_PRODUCT_TOKEN", value_name = "TOKEN")]
    pub wba_product_token: Option<String>,
}

impl BotAuthArgs {
    /// The checked [`BotAuthSettings`], if signing is on.
    pub(super) fn bot_auth_settings(&self) -> Result<Option<BotAuthSettings>, ConfigError> {
        let refuse = |field: &str, detail: String| ConfigError::BotAuth {
            flag: flag("bot_auth", field),
            detail,
        };
        if self.wba_ttl.is_zero() || self.wba_ttl > MAX_TTL {
            return Err(refuse(
                "ttl",
                format!("{:?} is outside 1s to {}s", self.wba_ttl, MAX_TTL.as_secs()),
            ));
        }
        if let Some(token) = &self.wba_product_token
            && !is_product_token(token)
        {
            return Err(refuse(
                "product_token",
                format!("{token:?} is not a product token: 1 to 64 letters, `_` or `-`"),
            ));
        }
        let (file, agent) = match (&self.wba_keys, &self.wba_agent) {
            (None, None) if self.wba_product_token.is_some() => {
                return Err(refuse("product_token", "is set without --wba-keys".into()));
            }
            (None, None) => return Ok(None),
            (None, Some(_)) => {
                return Err(refuse("agent", "is set without --wba-keys".into()));
            }
            (Some(_), None) => {
                return Err(refuse(
                    "keys",
                    "needs --wba-agent, the agent's https URI".into(),
                ));
            }
            (Some(file), Some(agent)) => (file, agent),
        };
        let agent = check_agent(agent).map_err(|e| refuse("agent", e.to_string()))?;
        let keys = KeySet::load(file).map_err(|e| refuse("keys", e.to_string()))?;
        Ok(Some(BotAuthSettings {
            keys: Arc::new(keys),
            file: file.clone(),
            agent,
            ttl: self.wba_ttl,
            product_token: self.wba_product_token.clone(),
            contact: None,
        }))
    }
}

/// RFC 9309's product token: `[a-zA-Z_-]+`, within what a card and a log line show whole.
fn is_product_token(token: &str) -> bool {
    (1..=64).contains(&token.len())
        && token
            .bytes()
            .all(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'-')
}

/// The default lifetime, as the flag's default says it.
const _: () = assert!(DEFAULT_TTL.as_secs() == 60);

#[cfg(test)]
mod tests {
    use super::super::tests::{error_of, settings};

    #[test]
    fn off_by_default_and_on_with_a_key_file_and_an_agent() {
        assert!(settings(&[]).unwrap().bot_auth.is_none());
        let dir = std::env::temp_dir().join(format!("robotsd-wba-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("keys.json");
        std::fs::write(
            &file,
            r#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU","status":"active"}]}"#,
        )
        .unwrap();
        let path = file.to_str().unwrap();
        let on = settings(&["--wba-keys", path, "--wba-agent", "https://bot.example/"])
            .unwrap()
            .bot_auth
            .unwrap();
        assert_eq!(on.agent, "https://bot.example/");
        assert_eq!(on.ttl, std::time::Duration::from_secs(60));
        assert_eq!(on.product_token, None);
        let named = settings(&[
            "--wba-keys",
            path,
            "--wba-agent",
            "https://bot.example/",
            "--wba-product-token",
            "Example_Bot-News",
        ])
        .unwrap()
        .bot_auth
        .unwrap();
        assert_eq!(named.product_token.as_deref(), Some("Example_Bot-News"));
        assert_eq!(
            on.keys.active().kid(),
            "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"
        );
        for (args, flag) in [
            (vec!["--wba-keys", path], "--wba-keys"),
            (vec!["--wba-agent", "https://bot.example/"], "--wba-agent"),
            (
                vec!["--wba-keys", path, "--wba-agent", "http://bot.example/"],
                "--wba-agent",
            ),
            (
                vec![
                    "--wba-keys",
                    path,
                    "--wba-agent",
                    "https://bot.example/",
                    "--wba-ttl",
                    "6m",
                ],
                "--wba-ttl",
            ),
            (
                vec!["--wba-product-token", "ExampleBot"],
                "--wba-product-token",
            ),
            (
                vec![
                    "--wba-keys",
                    path,
                    "--wba-agent",
                    "https://bot.example/",
                    "--wba-product-token",
                    "ExampleBot/1.0",
                ],
                "--wba-product-token",
            ),
            (
                vec![
                    "--wba-keys",
                    "/nonexistent/keys.json",
                    "--wba-agent",
                    "https://bot.example/",
                ],
                "--wba-keys",
            ),
        ] {
            let error = error_of(&args).to_string();
            assert!(error.contains(flag), "{args:?}: {error}");
            assert!(
                !error.contains("n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW"),
                "{error}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
