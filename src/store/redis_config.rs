//! What a Redis store is set up with (one server, a cluster or the master Sentinel names, its
//! password, TLS and time limits) and why setting one up failed. Both the store
//! (`redis_store.rs`) and the Sentinel follower (`sentinel.rs`) read them, so they are in a
//! file below both rather than in either (issue 42).

use std::time::Duration;

/// Which Redis robotsd shares through.
#[derive(Clone, PartialEq, Eq)]
pub enum RedisTarget {
    /// One server (or a managed endpoint that fails over behind one address): a `redis://` or
    /// `rediss://` (TLS) URL, with user and password if any.
    Server(String),
    /// A Redis Cluster, by the URL of one of its nodes (the others are discovered).
    Cluster(String),
    /// The master that Redis Sentinel names, followed through failovers.
    Sentinel(SentinelConfig),
}

impl std::fmt::Display for RedisTarget {
    /// What the log says of it: never a credential.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RedisTarget::Server(url) => write!(f, "{}", redact(url)),
            RedisTarget::Cluster(url) => write!(f, "cluster {}", redact(url)),
            RedisTarget::Sentinel(sentinel) => write!(f, "{sentinel}"),
        }
    }
}

impl std::fmt::Debug for RedisTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A URL's credentials never reach a log line: shown as the log shows it.
        write!(f, "{self}")
    }
}

/// Where and how to reach Redis.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisConfig {
    /// The server, cluster or Sentinel-named master.
    pub target: RedisTarget,
    /// The password of the server, the cluster's nodes or the master (read from
    /// `--redis-password-file`); overrides a URL's.
    pub password: Option<String>,
    /// Time limit for establishing a connection.
    pub connect_timeout: Duration,
    /// Time limit for one reply.
    pub response_timeout: Duration,
    /// Certificates for TLS (a `rediss://` URL, or Sentinel with TLS) beyond the system's trust
    /// store; `None` trusts the system's roots and sends no client certificate.
    pub tls: Option<RedisTls>,
}

/// The certificates of a TLS connection to Redis, each in PEM, as read from their files.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisTls {
    /// The CA certificates that sign the server's certificate, in place of the system's roots
    /// (a platform's own CA): for Redis only, never for robots.txt fetches.
    pub ca: Option<Vec<u8>>,
    /// A client certificate (chain) and its private key, for a server that requires them
    /// (`tls-auth-clients yes`).
    pub client: Option<(Vec<u8>, Vec<u8>)>,
}

impl std::fmt::Debug for RedisTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A private key never reaches a log line; whether each part is set is what helps.
        f.debug_struct("RedisTls")
            .field("ca", &self.ca.is_some())
            .field("client", &self.client.is_some())
            .finish()
    }
}

impl RedisTls {
    pub(super) fn certificates(&self) -> redis::TlsCertificates {
        redis::TlsCertificates {
            client_tls: self
                .client
                .as_ref()
                .map(|(cert, key)| redis::ClientTlsConfig {
                    client_cert: cert.clone(),
                    client_key: key.clone(),
                }),
            root_cert: self.ca.clone(),
        }
    }
}

impl std::fmt::Debug for RedisConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Credentials never reach a log line, this one included.
        f.debug_struct("RedisConfig")
            .field("target", &self.target.to_string())
            .field("tls", &self.tls)
            .finish_non_exhaustive()
    }
}

/// `url` without its userinfo.
pub fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
            format!("{scheme}://{rest}")
        }
        None => "<invalid>".into(),
    }
}

/// Why a [`super::RedisStore`] could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum RedisStoreError {
    /// The URL is not a Redis URL.
    #[error("--redis-url {url}: {detail}")]
    Url {
        /// The URL without credentials.
        url: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The TLS certificates cannot be used (not PEM, a key that does not parse), or were
    /// given for a URL that is not `rediss://`.
    #[error("--redis-ca-file, --redis-client-cert, --redis-client-key: {0}")]
    Tls(String),
    /// The sentinels' addresses or master name cannot be used.
    #[error("--redis-sentinel: {0}")]
    Sentinel(String),
}

/// Where the sentinels are and which master to ask them for.
#[derive(Clone, PartialEq, Eq)]
pub struct SentinelConfig {
    /// The sentinels, host and port each; any one that answers is enough.
    pub sentinels: Vec<(String, u16)>,
    /// The name the sentinels monitor the master under (`sentinel monitor <name> …`).
    pub master: String,
    /// The sentinels' own password (`requirepass` in sentinel.conf), if they need one; the
    /// master's is the store's.
    pub password: Option<String>,
    /// TLS to the sentinels and to the master they name.
    pub tls: bool,
}

impl std::fmt::Debug for SentinelConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentinelConfig")
            .field("sentinels", &self.sentinels)
            .field("master", &self.master)
            .field("password", &self.password.is_some())
            .field("tls", &self.tls)
            .finish()
    }
}

impl std::fmt::Display for SentinelConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "master {:?} through sentinels ", self.master)?;
        for (i, (host, port)) in self.sentinels.iter().enumerate() {
            let comma = if i == 0 { "" } else { "," };
            match host.contains(':') {
                true => write!(f, "{comma}[{host}]:{port}")?,
                false => write!(f, "{comma}{host}:{port}")?,
            }
        }
        Ok(())
    }
}
