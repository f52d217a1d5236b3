//! The signer the service holds: the key set (read again on SIGHUP), the agent's URI, the
//! signature lifetime and the clock. Each signature's `created` is the clock's now and its nonce
//! fresh; `expires` is the lifetime later, or the lifetime after a pacing slot's `not_before`
//! when the request may be sent only then.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rand::Rng as _;

use super::BotAuthError;
use super::directory::{self, DirectoryHeaders};
use super::keys::KeySet;
use super::signer::{NONCE_BYTES, SignedRequest, sign_request};
use crate::clock::{Clock, Timestamp};

/// A signature's lifetime unless set: the draft asks for a short one.
pub const DEFAULT_TTL: Duration = Duration::from_secs(60);
/// The longest lifetime allowed: a signature is not a credential to keep.
pub const MAX_TTL: Duration = Duration::from_secs(300);
/// How long the directory's signatures last: it is cached (an hour, `Cache-Control`) and must
/// verify for as long as a copy is served.
pub const DIRECTORY_TTL: Duration = Duration::from_secs(24 * 3600);
/// How long one signed directory answer is served again: a flood of requests for it costs a
/// signature a minute, not one each.
pub const DIRECTORY_REUSE: Duration = Duration::from_secs(60);

/// The methods a signature is made for: those a crawler fetches with.
pub const METHODS: [&str; 2] = ["GET", "HEAD"];

/// What a reload of the key file changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reloaded {
    /// The active key's id before.
    pub was: String,
    /// The active key's id now.
    pub now: String,
    /// Keys in the set now.
    pub keys: usize,
}

/// The service's signer.
#[derive(Debug)]
pub struct Signing {
    keys: RwLock<Arc<KeySet>>,
    file: Option<PathBuf>,
    agent: String,
    ttl: Duration,
    clock: Arc<dyn Clock>,
    /// The fleet's product token, and the operator's contact, for the card.
    product_token: Option<String>,
    contact: Option<String>,
    /// The last directory answer signed: when, with which key set, and what.
    directory: Mutex<Option<SignedDirectory>>,
}

/// A directory answer, kept for [`DIRECTORY_REUSE`].
#[derive(Debug, Clone)]
struct SignedDirectory {
    at: Timestamp,
    keys: Arc<KeySet>,
    body: String,
    headers: DirectoryHeaders,
}

/// `agent` if it can be the `Signature-Agent` member: an `https` URI with a host and no
/// credentials or fragment, written as a Structured Field string can carry it.
pub fn check_agent(agent: &str) -> Result<String, BotAuthError> {
    let refuse = |why: &str| BotAuthError::BadAgent(format!("{agent:?}: {why}"));
    let url = url::Url::parse(agent).map_err(|e| refuse(&e.to_string()))?;
    if url.scheme() != "https" || url.host_str().is_none() {
        return Err(refuse("not an https URI with a host"));
    }
    if !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
        return Err(refuse("credentials or a fragment"));
    }
    // The URI as given, once it is known to be printable ASCII (a Structured Field string).
    super::message::sf_string(agent).map_err(|_| refuse("not printable ASCII"))?;
    Ok(agent.to_owned())
}

impl Signing {
    /// A signer of `keys` (read from `file`, if any, which a reload reads again) for `agent`,
    /// each signature lasting `ttl`.
    pub fn new(
        keys: Arc<KeySet>,
        file: Option<PathBuf>,
        agent: &str,
        ttl: Duration,
        clock: Arc<dyn Clock>,
    ) -> Result<Signing, BotAuthError> {
        if ttl < Duration::from_secs(1) || ttl > MAX_TTL {
            return Err(BotAuthError::BadTtl(ttl));
        }
        Ok(Signing {
            keys: RwLock::new(keys),
            file,
            agent: check_agent(agent)?,
            ttl,
            clock,
            product_token: None,
            contact: None,
            directory: Mutex::new(None),
        })
    }

    /// The same signer, signing only checks made for `product_token` (when given) and serving
    /// the card that names it, with `contact`.
    pub fn with_card(mut self, product_token: Option<String>, contact: Option<String>) -> Signing {
        self.product_token = product_token;
        self.contact = contact;
        self
    }

    /// The fleet's product token, if set.
    pub fn product_token(&self) -> Option<&str> {
        self.product_token.as_deref()
    }

    /// Whether a check of `agents` may be signed: any, unless a product token is set; then
    /// only one made for it.
    pub fn signs_for<S: AsRef<str>>(&self, agents: &[S]) -> bool {
        self.product_token
            .as_deref()
            .is_none_or(|token| super::card::names_token(agents, token))
    }

    /// The Signature Agent Card for a request to `authority`, when a product token is set.
    pub fn card(&self, authority: &str) -> Option<String> {
        let token = self.product_token.as_deref()?;
        Some(super::card::card(
            authority,
            token,
            &self.agent,
            self.contact.as_deref(),
        ))
    }

    fn keys(&self) -> Arc<KeySet> {
        // A panic while swapping an Arc leaves the old set whole.
        Arc::clone(&self.keys.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// The agent's URI.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// The signature lifetime.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The active key's id.
    pub fn active_kid(&self) -> String {
        self.keys().active().kid().to_owned()
    }

    /// The headers for `method` of `url`, made now; good for the lifetime from now, or from
    /// `not_before` when that is later (a pacing slot: the request waits until then).
    pub fn sign(
        &self,
        method: &str,
        url: &url::Url,
        not_before: Option<Timestamp>,
    ) -> Result<SignedRequest, BotAuthError> {
        if !METHODS.contains(&method) {
            return Err(BotAuthError::NotSignable(format!("a {method} request")));
        }
        let now = self.clock.now();
        let from = not_before.map_or(now, |at| at.max(now));
        let mut nonce = [0u8; NONCE_BYTES];
        rand::rng().fill(&mut nonce[..]);
        let keys = self.keys();
        sign_request(
            keys.active(),
            &self.agent,
            method,
            url,
            now.since_epoch().as_secs(),
            (from + self.ttl).since_epoch().as_secs(),
            &nonce,
        )
    }

    /// The authority of the agent's URL (`host[:port]`, lower-cased): the one host the
    /// directory is served for, as sites fetch it there.
    pub fn agent_authority(&self) -> String {
        let url = url::Url::parse(&self.agent).expect("checked when made");
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host,
        }
    }

    /// The directory's body and headers, signed for the agent's authority: signed now, or
    /// within the last [`DIRECTORY_REUSE`] with the keys in force; and whether they were signed
    /// now (the signatures made are counted).
    pub fn directory(&self) -> Result<(String, DirectoryHeaders, bool), BotAuthError> {
        let keys = self.keys();
        let now = self.clock.now();
        let mut kept = self.directory.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(made) = kept.as_ref()
            && Arc::ptr_eq(&made.keys, &keys)
            && now < made.at + DIRECTORY_REUSE
            && made.at <= now
        {
            return Ok((made.body.clone(), made.headers.clone(), false));
        }
        let body = directory::body(&keys);
        let headers = directory::sign_directory(
            &keys,
            &body,
            &self.agent_authority(),
            now.since_epoch().as_secs(),
            (now + DIRECTORY_TTL).since_epoch().as_secs(),
        )?;
        *kept = Some(SignedDirectory {
            at: now,
            keys,
            body: body.clone(),
            headers: headers.clone(),
        });
        Ok((body, headers, true))
    }

    /// Reads the key file again; a file that cannot be used leaves the keys in force as they
    /// were.
    pub fn reload(&self) -> Result<Reloaded, BotAuthError> {
        let Some(file) = &self.file else {
            return Err(BotAuthError::KeyFile(
                "(none)".into(),
                "no file to read again".into(),
            ));
        };
        let fresh = Arc::new(KeySet::load(file)?);
        let mut keys = self.keys.write().unwrap_or_else(|p| p.into_inner());
        let was = keys.active().kid().to_owned();
        let reloaded = Reloaded {
            was,
            now: fresh.active().kid().to_owned(),
            keys: fresh.keys().len(),
        };
        *keys = fresh;
        Ok(reloaded)
    }
}
