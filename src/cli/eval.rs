//! `robotsd eval`: the engine over files and JSON lines, for users and as the harness for
//! comparing robotsd with other parsers. The JSON shapes here are a stable, documented format
//! (README.md, "robotsd eval").

use std::io::{BufRead, Write};

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use robotsd_engine::{PercentDecoding, RobotsTxt, Verdict, path_params_query};

use crate::api::types::{GroupJson, RuleJson, UsageJson};

use super::EvalArgs;

/// Why `robotsd eval` stopped.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The robots.txt file could not be read.
    #[error("cannot read robots.txt file {path}: {source}")]
    ReadRobots {
        /// The file named on the command line.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// Reading standard input or writing standard output failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

/// One request line of `robotsd eval --jsonl`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EvalRequest {
    /// Echoed back on every answer to this request.
    #[serde(default)]
    pub id: serde_json::Value,
    /// The robots.txt body as text.
    pub robots_txt: Option<String>,
    /// The robots.txt body as base64, for exact bytes.
    pub robots_txt_b64: Option<String>,
    /// The product token(s): one, or a list for a crawler answering to several names. `ua`,
    /// as in the HTTP API, or `user_agent` / `user_agents` (this format's first names).
    #[serde(alias = "user_agent", alias = "user_agents")]
    pub ua: Option<Agents>,
    /// One URL.
    pub url: Option<String>,
    /// Several URLs, checked against one parse.
    pub urls: Option<Vec<String>>,
    /// `google` or `rfc9309`: how percent-encoded unreserved characters compare (default:
    /// `--percent-decoding`).
    pub percent_decoding: Option<String>,
}

/// One agent or several.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Agents {
    /// One product token.
    One(String),
    /// Several.
    Many(Vec<String>),
}

/// One answer line.
#[derive(Debug, Serialize)]
pub struct EvalResult {
    /// The request's `id` (absent in file mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<serde_json::Value>,
    /// The URL as given.
    pub url: String,
    /// Whether fetching is allowed.
    pub allowed: bool,
    /// `allow` or `disallow`, as the HTTP API says it.
    pub verdict: &'static str,
    /// `matched_rule` or `no_matching_rule`, as the HTTP API says it.
    pub reason: &'static str,
    /// The deciding rule, or null when no rule matched.
    pub rule: Option<RuleJson>,
    /// The groups that applied, or null when none did.
    pub group: Option<GroupJson>,
    /// The AI usage preferences for the URL, as the HTTP API gives them (`docs/usage.md`), or
    /// null when none applies.
    pub usage: Option<UsageJson>,
}

#[derive(Serialize)]
struct ErrorLine<'a> {
    id: &'a serde_json::Value,
    error: &'a str,
}

impl EvalResult {
    /// The answer for `url`, checked for `agents`.
    fn check<S: AsRef<str>>(
        id: Option<serde_json::Value>,
        robots: &RobotsTxt,
        agents: &[S],
        url: &str,
        decoding: PercentDecoding,
    ) -> EvalResult {
        let path = path_params_query(url);
        let verdict = robots.check_path_with(agents, &path, decoding);
        let (usage, cut) = crate::checker::usage::bounded(&verdict, &path, decoding);
        EvalResult {
            usage: UsageJson::of(&usage, cut, &[], 0),
            ..EvalResult::new(id, url, &verdict)
        }
    }

    fn new(id: Option<serde_json::Value>, url: &str, verdict: &Verdict<'_>) -> EvalResult {
        EvalResult {
            usage: None,
            id,
            url: url.to_string(),
            allowed: verdict.allowed,
            verdict: if verdict.allowed { "allow" } else { "disallow" },
            reason: if verdict.rule.is_some() {
                "matched_rule"
            } else {
                "no_matching_rule"
            },
            rule: verdict.rule.as_ref().map(RuleJson::of),
            group: verdict.groups.clone().map(GroupJson::of),
        }
    }
}

/// Answers one request: one result per URL, or a message saying what is wrong with it.
/// `default` decides how percent-encoded unreserved characters compare unless the request says.
pub fn evaluate_request(
    request: EvalRequest,
    default: PercentDecoding,
) -> Result<Vec<EvalResult>, String> {
    let decoding = match request.percent_decoding.as_deref() {
        None => default,
        Some(name) => name
            .parse()
            .map_err(|e| format!("percent_decoding {name:?}: {e}"))?,
    };
    let body = match (request.robots_txt, request.robots_txt_b64) {
        (Some(text), None) => text.into_bytes(),
        (None, Some(b64)) => base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .map_err(|e| format!("robots_txt_b64 is not valid base64: {e}"))?,
        (Some(_), Some(_)) => return Err("give robots_txt or robots_txt_b64, not both".into()),
        (None, None) => return Err("missing robots_txt (or robots_txt_b64)".into()),
    };
    let agents = match request.ua {
        Some(Agents::One(agent)) => vec![agent],
        Some(Agents::Many(agents)) if !agents.is_empty() => agents,
        Some(Agents::Many(_)) => return Err("ua is an empty list".into()),
        None => return Err("missing ua (or user_agent, user_agents)".into()),
    };
    let urls = match (request.url, request.urls) {
        (Some(url), None) => vec![url],
        (None, Some(urls)) if urls.is_empty() => {
            return Err("urls is an empty list: nothing to check".into());
        }
        (None, Some(urls)) => urls,
        (Some(_), Some(_)) => return Err("give url or urls, not both".into()),
        (None, None) => return Err("missing url (or urls)".into()),
    };
    let robots = RobotsTxt::parse(&body);
    Ok(urls
        .iter()
        .map(|url| EvalResult::check(Some(request.id.clone()), &robots, &agents, url, decoding))
        .collect())
}

pub(super) fn run_file(
    args: &EvalArgs,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), EvalError> {
    let path = args.robots.as_deref().unwrap_or(std::path::Path::new(""));
    let read_error = |source| EvalError::ReadRobots {
        path: path.display().to_string(),
        source,
    };
    // `-` is standard input, as for most tools that read a file.
    let body = if path == std::path::Path::new("-") {
        let mut body = Vec::new();
        input.read_to_end(&mut body).map_err(read_error)?;
        body
    } else {
        std::fs::read(path).map_err(read_error)?
    };
    let robots = RobotsTxt::parse(&body);
    let decoding = args.percent_decoding.into();
    for url in &args.urls {
        let result = EvalResult::check(None, &robots, &args.user_agents, url, decoding);
        serde_json::to_writer(&mut *out, &result).map_err(std::io::Error::from)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

pub(super) fn run_jsonl(
    args: &EvalArgs,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> Result<(), EvalError> {
    let default = args.percent_decoding.into();
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // Parse loosely first so that the id can be echoed even when the request is invalid.
        let value: serde_json::Value = match serde_json::from_slice(&line) {
            Ok(value) => value,
            Err(e) => {
                write_error(out, &serde_json::Value::Null, &format!("invalid JSON: {e}"))?;
                continue;
            }
        };
        let id = value.get("id").cloned().unwrap_or_default();
        let answer = serde_json::from_value::<EvalRequest>(value)
            .map_err(|e| format!("invalid request: {e}"))
            .and_then(|request| evaluate_request(request, default));
        match answer {
            Ok(results) => {
                for result in results {
                    serde_json::to_writer(&mut *out, &result).map_err(std::io::Error::from)?;
                    out.write_all(b"\n")?;
                }
            }
            Err(message) => write_error(out, &id, &message)?,
        }
        // Answer each request as it comes, so that a harness can drive robotsd line by line.
        out.flush()?;
    }
    Ok(())
}

fn write_error(out: &mut dyn Write, id: &serde_json::Value, error: &str) -> Result<(), EvalError> {
    serde_json::to_writer(&mut *out, &ErrorLine { id, error }).map_err(std::io::Error::from)?;
    out.write_all(b"\n")?;
    Ok(())
}
