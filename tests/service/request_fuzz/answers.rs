//! What every answer is held to: a status the endpoint may answer, problem+json for every
//! error, and a size within a stated function of the request (`docs/behaviour.md`, "Bounded
//! answers"; `src/bounds.rs`), each check answer echoing at most 8 agents of 256 bytes.

use proptest::test_runner::TestCaseError;
use proptest::{prop_assert, prop_assert_eq};
use serde_json::Value;

use super::requests::{Case, Endpoint};

/// The longest URL a check answers (`--max-url-bytes`, 8,192); a longer one is a problem.
const MAX_URL: usize = 8_192;

/// One check answer: `bounds::MAX_CHECK_ANSWER_BYTES` (64 KiB), besides the agents echoed (8
/// values and 8 tokens of at most 256 bytes of JSON: 4.2 KiB with their quotes and commas) and
/// its URL, echoed as given (escaped for JSON: at most 6 bytes a byte) and normalised in `url`
/// and `robots_url` (percent-encoded: at most 3 bytes a byte each).
pub const MAX_CHECK_BYTES: usize = 64 * 1024 + 5 * 1024 + (6 + 3 + 3) * MAX_URL;

/// A verdict (`view=verdict`, or a batch's item past its bound): under 100 bytes, and its `pace`
/// member under 400 (`batch_answer::VERDICT_ROOM`, 512).
const MAX_VERDICT_BYTES: usize = 512;

/// A batch's answers before its items' problems (`bounds::MAX_BATCH_ANSWER_BYTES`).
const MAX_BATCH_BYTES: usize = 8 << 20;

/// A problem's fixed members (type, title, status) and the words of its detail.
const PROBLEM_BYTES: usize = 2 * 1024;

/// A problem quotes at most the input it is about, escaped for JSON twice over at worst (a
/// quoted `"` becomes `\\\"`; a control character, `\u{1}` in Rust's words, six bytes): six
/// bytes a byte of that input.
fn max_problem_bytes(quoted: usize) -> usize {
    PROBLEM_BYTES + 6 * quoted
}

/// An item's problem quotes at most its URL (longer than 8,192 bytes, it is refused by length
/// and not quoted) and a `ua` value (at most 1,024 bytes, or refused by length).
const MAX_ITEM_PROBLEM_BYTES: usize = PROBLEM_BYTES + 6 * (MAX_URL + 1_024);

/// A feedback report taken: its origin and its lane each hold the URL's host, plus the pacing
/// state's fixed members (under 1 KiB).
const MAX_REPORT_BYTES: usize = 1024 + 2 * MAX_URL;

/// `/v1/page`'s own parts beside its check answer: 64 rules of a 256-byte rule and a 256-byte
/// agent each (600 bytes with their members), a TDM policy URL of at most a header's 16 KiB
/// escaped, and 8 KiB for the categories (16 labels of 64 bytes), header positions and flags.
const MAX_PAGE_EXTRA_BYTES: usize = 64 * 600 + 6 * 16 * 1024 + 8 * 1024;

/// `/v1/evaluate`'s `parsed`: the file as JSON, at most 6 bytes a byte of the 512,000 robotsd
/// reads (`docs/behaviour.md`), and the fixed members of its 1,024 diagnostics at most.
fn max_parsed_bytes(file_bytes: usize) -> usize {
    6 * file_bytes.min(512_000) + 1_024 * 128 + 1024
}

/// The statuses `endpoint` may answer here: those its OpenAPI document lists, less 401 (no
/// tokens), 408 (whole bodies are sent at once), 503 (one request at a time, a handful of
/// origins), and 500 and 504, which would be a bug and a broken time bound.
pub fn allowed_statuses(endpoint: Endpoint) -> &'static [u16] {
    match endpoint {
        Endpoint::CheckGet => &[200, 400, 414, 422],
        Endpoint::Page => &[200, 400, 413, 414, 415, 422],
        Endpoint::CheckPost | Endpoint::Evaluate | Endpoint::Feedback => &[200, 400, 413, 414, 415],
    }
}

/// What an answer was made of, for the run's summary.
#[derive(Default)]
pub struct Seen {
    /// The problem types, of whole requests and of items.
    pub problems: Vec<String>,
    /// The largest problem of an item.
    pub item_problem_bytes: usize,
    /// `parsed`'s bytes a byte of its file (files of 1 KB or more).
    pub parsed_ratio: f64,
}

/// `answer` (`bytes` long, of this status) within its bounds for `case`.
pub fn check(
    case: &Case,
    status: u16,
    answer: &Value,
    bytes: usize,
    seen: &mut Seen,
) -> Result<(), TestCaseError> {
    if status >= 400 {
        check_problem(answer, status, seen)?;
        let max = max_problem_bytes(case.body.len() + case.query.len());
        prop_assert!(bytes <= max, "a problem of {bytes} bytes, past {max}");
        return Ok(());
    }
    let request: Option<Value> = serde_json::from_slice(&case.body).ok();
    match case.endpoint {
        Endpoint::CheckGet => {
            check_item(answer, seen)?;
            prop_assert!(bytes <= MAX_CHECK_BYTES, "{bytes} bytes");
        }
        Endpoint::Page => {
            check_full(&answer["check"])?;
            let max = MAX_CHECK_BYTES + MAX_PAGE_EXTRA_BYTES;
            prop_assert!(bytes <= max, "a page answer of {bytes} bytes, past {max}");
        }
        Endpoint::CheckPost | Endpoint::Evaluate => {
            let results = answer["results"].as_array();
            prop_assert!(results.is_some(), "no results: {answer}");
            let results = results.unwrap();
            if let Some(asked) = request.as_ref().and_then(|r| items_asked(case.endpoint, r)) {
                prop_assert_eq!(results.len(), asked, "answers for the items asked");
            }
            let mut problems = 0;
            for item in results {
                problems += check_item(item, seen)?;
            }
            let parsed = match answer.get("parsed") {
                Some(parsed) => {
                    let parsed_bytes = parsed.to_string().len();
                    let file = request.as_ref().and_then(file_bytes).unwrap_or(512_000);
                    let max = max_parsed_bytes(file);
                    prop_assert!(
                        parsed_bytes <= max,
                        "`parsed` of {parsed_bytes} bytes for a file of {file}, past {max}"
                    );
                    if file >= 1024 {
                        seen.parsed_ratio = parsed_bytes as f64 / file.min(512_000) as f64;
                    }
                    parsed_bytes
                }
                None => 0,
            };
            // The batch's own bound, its items' problems and `parsed` apart (each bounded).
            let rest = bytes - problems - parsed;
            prop_assert!(
                rest <= MAX_BATCH_BYTES + 1024,
                "a batch of {bytes} bytes: {rest} besides its problems and parsed file"
            );
        }
        Endpoint::Feedback => {
            let results = answer["results"].as_array();
            prop_assert!(results.is_some(), "no results: {answer}");
            let results = results.unwrap();
            if let Some(asked) = request.as_ref().and_then(|r| items_asked(case.endpoint, r)) {
                prop_assert_eq!(results.len(), asked, "answers for the reports given");
            }
            for item in results {
                if item.get("error").is_some() {
                    check_item(item, seen)?;
                } else {
                    let bytes = item.to_string().len();
                    prop_assert!(bytes <= MAX_REPORT_BYTES, "a report of {bytes} bytes");
                }
            }
        }
    }
    Ok(())
}

/// A problem details object (RFC 9457) of this status.
fn check_problem(problem: &Value, status: u16, seen: &mut Seen) -> Result<(), TestCaseError> {
    let kind = problem["type"].as_str().unwrap_or_default();
    prop_assert!(kind.starts_with("urn:robotsd:problem:"), "{problem}");
    prop_assert!(problem["title"].is_string(), "{problem}");
    prop_assert!(problem["detail"].is_string(), "{problem}");
    prop_assert_eq!(
        problem["status"].as_u64(),
        Some(u64::from(status)),
        "{}",
        problem
    );
    seen.problems
        .push(kind.trim_start_matches("urn:robotsd:problem:").to_owned());
    Ok(())
}

/// One item of a check: a problem, a full answer or a verdict. The bytes of its problem, if it
/// is one.
fn check_item(item: &Value, seen: &mut Seen) -> Result<usize, TestCaseError> {
    let bytes = item.to_string().len();
    if let Some(problem) = item.get("error") {
        let status = problem["status"].as_u64().unwrap_or_default() as u16;
        prop_assert!((400..500).contains(&status), "{problem}");
        check_problem(problem, status, seen)?;
        prop_assert!(
            bytes <= MAX_ITEM_PROBLEM_BYTES,
            "an item's problem of {bytes} bytes"
        );
        seen.item_problem_bytes = seen.item_problem_bytes.max(bytes);
        Ok(bytes)
    } else if item.get("url").is_some() {
        check_full(item)?;
        Ok(0)
    } else {
        prop_assert!(item["allowed"].is_boolean(), "{item}");
        prop_assert!(bytes <= MAX_VERDICT_BYTES, "a verdict of {bytes} bytes");
        Ok(0)
    }
}

/// A full check answer: within [`MAX_CHECK_BYTES`], its agents echoed within their bounds.
fn check_full(answer: &Value) -> Result<(), TestCaseError> {
    let bytes = answer.to_string().len();
    prop_assert!(bytes <= MAX_CHECK_BYTES, "a check answer of {bytes} bytes");
    prop_assert!(answer["allowed"].is_boolean(), "{answer}");
    let agent = &answer["agent"];
    for list in ["input", "tokens"] {
        let values = agent[list].as_array();
        prop_assert!(values.is_some(), "no agent.{list}: {agent}");
        let values = values.unwrap();
        prop_assert!(
            values.len() <= 8,
            "{} agents echoed in {list}",
            values.len()
        );
        for value in values {
            let json = value.to_string().len() - 2;
            prop_assert!(json <= 256, "an echoed agent of {json} bytes");
        }
    }
    Ok(())
}

/// How many items a request that parses asks about.
fn items_asked(endpoint: Endpoint, request: &Value) -> Option<usize> {
    let list = |name: &str| request.get(name).and_then(Value::as_array).map(Vec::len);
    match endpoint {
        Endpoint::CheckPost => list("urls").or_else(|| list("checks")),
        Endpoint::Evaluate => list("urls").or(request.get("url").map(|_| 1)),
        Endpoint::Feedback => list("reports"),
        Endpoint::CheckGet | Endpoint::Page => None,
    }
}

/// The bytes of the robots.txt an evaluation request gives.
fn file_bytes(request: &Value) -> Option<usize> {
    use base64::Engine as _;
    if let Some(text) = request.get("robots_txt").and_then(Value::as_str) {
        return Some(text.len());
    }
    let b64 = request.get("robots_txt_b64").and_then(Value::as_str)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .ok()?;
    Some(bytes.len())
}
