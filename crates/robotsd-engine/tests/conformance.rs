//! Google's reference test suite, as data (`tests/data/conformance/`, vendored from
//! `../shared/conformance/`): all 195 cases must pass.
//!
//! Each case is a trial of its own, named for the case (`verdict::050_ID_LongestMatch`,
//! `other::parse_stats::016_ID_UTF8ByteOrderMarkIsSkipped`: file, kind, id, upstream gtest), so
//! the first failure does not hide the rest and `cargo test --test conformance -- <filter>`
//! reruns just the cases in question. The files are required: one more trial per file checks it
//! was read and holds the expected number of cases, so a missing or short file fails, never skips.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{Debug, Display};
use std::path::PathBuf;

use base64::Engine as _;
use libtest_mimic::{Arguments, Trial};
use robotsd_engine::tokenizer::{KeyKind, Line, for_each_line};
use robotsd_engine::{
    DiagnosticKind, RobotsTxt, escape_pattern, is_unsupported_key, is_valid_user_agent_to_obey,
    path_params_query,
};
use serde_json::Value;

const VERDICT_FILE: &str = "google-robotstxt-cases.json";
const VERDICT_CASES: usize = 145;
const OTHER_FILE: &str = "google-robotstxt-other-cases.json";
/// Per kind, so that a case that changed kind is noticed too; 50 in all.
const OTHER_CASES: [(&str, usize); 5] = [
    ("escape_pattern", 4),
    ("get_path_params_query", 19),
    ("is_valid_user_agent_to_obey", 11),
    ("parse_report", 4),
    ("parse_stats", 12),
];

/// What a failing check reports: what was compared, expected and actual.
type Outcome = Result<(), String>;

fn main() {
    let args = Arguments::from_args();
    let mut trials = verdict_trials();
    trials.extend(other_trials());
    libtest_mimic::run(&args, trials).exit();
}

fn verdict_trials() -> Vec<Trial> {
    let loaded = load(VERDICT_FILE).and_then(|v| into_cases(v, None));
    let mut trials = vec![count_trial("verdict", VERDICT_FILE, &loaded, |cases| {
        same("number of cases", cases.len(), VERDICT_CASES)
    })];
    for case in loaded.unwrap_or_default() {
        let name = format!("verdict::{}", case_slug(&case));
        trials.push(case_trial(name, case.clone(), check_verdict));
        let name = format!("verdict_with_license_lines::{}", case_slug(&case));
        trials.push(case_trial(name, case, check_verdict_with_license_lines));
    }
    trials
}

fn other_trials() -> Vec<Trial> {
    let loaded = load(OTHER_FILE).and_then(|v| into_cases(v, Some("cases")));
    let mut trials = vec![count_trial("other", OTHER_FILE, &loaded, |cases| {
        same(
            "number of cases",
            cases.len(),
            OTHER_CASES.iter().map(|k| k.1).sum::<usize>(),
        )?;
        let mut by_kind = BTreeMap::<&str, usize>::new();
        for case in cases {
            *by_kind
                .entry(case["kind"].as_str().unwrap_or("?"))
                .or_default() += 1;
        }
        let by_kind: Vec<_> = by_kind.into_iter().collect();
        same("cases per kind", by_kind, OTHER_CASES.to_vec())
    })];
    for case in loaded.unwrap_or_default() {
        let kind = sanitize(case["kind"].as_str().unwrap_or("no_kind"));
        let name = format!("other::{kind}::{}", case_slug(&case));
        trials.push(case_trial(name, case, check_other));
    }
    trials
}

/// The data directory: the vendored copies, or a shared directory when `ROBOTSD_SHARED_DIR`
/// names one.
fn data_dir() -> PathBuf {
    std::env::var_os("ROBOTSD_SHARED_DIR")
        // Empty means unset, as for every ROBOTSD_* variable.
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data"))
}

fn load(name: &str) -> Result<Value, String> {
    let path = data_dir().join("conformance").join(name);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("conformance data {} is required: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))
}

/// The list of cases, found at the top level or under `key`.
fn into_cases(mut data: Value, key: Option<&str>) -> Result<Vec<Value>, String> {
    if let Some(key) = key {
        data = data.get_mut(key).map_or(Value::Null, Value::take);
    }
    match data {
        Value::Array(cases) => Ok(cases),
        _ => Err(format!("no list of cases in the file (at {key:?})")),
    }
}

/// The file's own trial: a file that could not be read yields no case trials, so this one must
/// fail in their place; it also catches lost or duplicated cases.
fn count_trial(
    group: &str,
    file: &str,
    loaded: &Result<Vec<Value>, String>,
    check_counts: fn(&[Value]) -> Outcome,
) -> Trial {
    let loaded = loaded.as_ref().map_err(Clone::clone).map(|cases| {
        let slugs: Vec<_> = cases.iter().map(case_slug).collect();
        let distinct = slugs.iter().collect::<BTreeSet<_>>().len();
        (check_counts(cases), slugs.len() - distinct)
    });
    let file = file.to_string();
    Trial::test(format!("{group}::all_cases_present"), move || {
        let (counts, duplicates) = loaded?;
        counts.map_err(|e| format!("{file}: {e}"))?;
        same(
            format!("{file}: number of duplicate case names"),
            duplicates,
            0,
        )?;
        Ok(())
    })
}

/// `<id>_<upstream test>`: the id is zero-padded so that names sort in the files' order.
fn case_slug(case: &Value) -> String {
    let test = case["test"].as_str().unwrap_or("no_test");
    // Upstream names are `Fixture.Test`; the fixture is the same for all.
    let test = test.rsplit('.').next().unwrap_or(test);
    match case["id"].as_u64() {
        Some(id) => format!("{id:03}_{}", sanitize(test)),
        None => format!("no_id_{}", sanitize(test)),
    }
}

fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// A trial whose failure message starts with where the case comes from upstream.
fn case_trial(name: String, case: Value, check: fn(&Value) -> Outcome) -> Trial {
    Trial::test(name, move || {
        check(&case).map_err(|e| {
            let source = match &case["source"] {
                Value::Array(all) => all.iter().filter_map(Value::as_str).collect::<Vec<_>>(),
                one => one.as_str().into_iter().collect(),
            };
            let (id, test) = (&case["id"], case["test"].as_str().unwrap_or("?"));
            format!("case {id} ({test}, {}): {e}", source.join(", ")).into()
        })
    })
}

fn same<A: PartialEq<E> + Debug, E: Debug>(what: impl Display, actual: A, expected: E) -> Outcome {
    if actual == expected {
        return Ok(());
    }
    Err(format!(
        "{what} differs\n  expected: {expected:?}\n  actual:   {actual:?}"
    ))
}

/// Like [`same`], bytes shown as text.
fn same_bytes(what: impl Display, actual: &[u8], expected: &[u8]) -> Outcome {
    if actual == expected {
        return Ok(());
    }
    let (expected, actual) = (show(expected), show(actual));
    Err(format!(
        "{what} differs\n  expected: {expected}\n  actual:   {actual}"
    ))
}

fn show(bytes: &[u8]) -> String {
    const MAX: usize = 300;
    let text = bytes[..bytes.len().min(MAX)].escape_ascii().to_string();
    if bytes.len() > MAX {
        format!("\"{text}\"… ({} bytes)", bytes.len())
    } else {
        format!("\"{text}\"")
    }
}

fn field<'a, T>(case: &'a Value, name: &str, get: fn(&'a Value) -> Option<T>) -> Result<T, String> {
    get(&case[name]).ok_or_else(|| format!("data: field {name:?} missing or mistyped"))
}

fn b64(v: &Value) -> Result<Vec<u8>, String> {
    let text = v.as_str().ok_or("data: base64 value is not a string")?;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("data: invalid base64: {e}"))
}

/// The exact bytes of a body: `robots_txt_b64` when present, else `robots_txt`.
fn body(case: &Value) -> Result<Vec<u8>, String> {
    match case.get("robots_txt_b64") {
        Some(v) => b64(v),
        None => Ok(field(case, "robots_txt", Value::as_str)?
            .as_bytes()
            .to_vec()),
    }
}

/// A string field that may be given as `<name>_b64` when it is not UTF-8.
fn bytes_field(obj: &Value, name: &str) -> Result<Option<Vec<u8>>, String> {
    match obj.get(name) {
        Some(Value::String(s)) => Ok(Some(s.as_bytes().to_vec())),
        _ => obj.get(format!("{name}_b64")).map(b64).transpose(),
    }
}

fn check_verdict(case: &Value) -> Outcome {
    let body = body(case)?;
    let agent = field(case, "user_agent", Value::as_str)?;
    let url = field(case, "url", Value::as_str)?;
    let inputs = format!(
        "\n  agent {agent:?}, url {url:?}, robots.txt {}",
        show(&body)
    );
    verdict_agrees(case, &body, agent, url).map_err(|e| e + &inputs)
}

/// The same case with RSL `License:` lines added, one before the first line (after a BOM) and
/// two after the last, with odd spacing: they are reported only, so the verdict is the same and
/// the deciding rule one line further down.
fn check_verdict_with_license_lines(case: &Value) -> Outcome {
    let original = body(case)?;
    let bom = if original.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let mut body = original[..bom].to_vec();
    body.extend_from_slice(b"License: https://rsl.example/one.xml\n");
    body.extend_from_slice(&original[bom..]);
    body.extend_from_slice(b"\n  LICENSE :https://rsl.example/two.xml # terms\nlicense: /three\n");
    let agent = field(case, "user_agent", Value::as_str)?;
    let url = field(case, "url", Value::as_str)?;
    let inputs = format!(
        "\n  agent {agent:?}, url {url:?}, robots.txt {}",
        show(&body)
    );
    let robots = RobotsTxt::parse(&body);
    let licenses: Vec<(String, u32)> = robots
        .licenses()
        .map(|l| (l.url.into_owned(), l.line))
        .collect();
    same("licenses", licenses.len(), 3).map_err(|e| e + &inputs)?;
    same(
        "first license",
        licenses[0].clone(),
        ("https://rsl.example/one.xml".into(), 1),
    )
    .map_err(|e| e + &inputs)?;
    verdict_agrees_shifted(case, &body, agent, url, 1).map_err(|e| e + &inputs)
}

fn verdict_agrees(case: &Value, body: &[u8], agent: &str, url: &str) -> Outcome {
    verdict_agrees_shifted(case, body, agent, url, 0)
}

/// [`verdict_agrees`] on a body whose lines moved `shift` lines down.
fn verdict_agrees_shifted(
    case: &Value,
    body: &[u8],
    agent: &str,
    url: &str,
    shift: u32,
) -> Outcome {
    let robots = RobotsTxt::parse(body);
    let verdict = robots.check(&[agent], url);
    same(
        "allowed",
        verdict.allowed,
        field(case, "allowed", Value::as_bool)?,
    )?;
    let oracle_line = match field(case, "oracle_matching_line", Value::as_u64)? as u32 {
        0 => 0,
        line => line + shift,
    };
    match verdict.rule {
        Some(rule) => same("deciding rule's line", rule.line(), oracle_line),
        None if oracle_line == 0 => Ok(()),
        None => {
            // The reference reports a matching empty `allow:`/`disallow:` although it decides
            // nothing (README, case 50); robotsd reports no rule there.
            let empty_rule_there = robots
                .groups()
                .flat_map(|g| g.rules().collect::<Vec<_>>())
                .any(|r| r.line() == oracle_line && r.normalized_pattern().is_empty());
            if empty_rule_there {
                return Ok(());
            }
            Err(format!(
                "deciding rule's line differs\n  expected: {oracle_line}\n  actual:   no rule \
                 (acceptable only where line {oracle_line} is an empty allow/disallow)"
            ))
        }
    }
}

fn check_other(case: &Value) -> Outcome {
    let kind = field(case, "kind", Value::as_str)?;
    match kind {
        "is_valid_user_agent_to_obey" => {
            let agent = field(case, "user_agent", Value::as_str)?;
            let want = field(case, "expected", Value::as_bool)?;
            same(
                format!("is_valid_user_agent_to_obey({agent:?})"),
                is_valid_user_agent_to_obey(agent),
                want,
            )
        }
        "get_path_params_query" => {
            let url = field(case, "url", Value::as_str)?;
            let want = field(case, "expected_path", Value::as_str)?;
            same(
                format!("path_params_query({url:?})"),
                path_params_query(url),
                want,
            )
        }
        "escape_pattern" => {
            let pattern = field(case, "pattern", Value::as_str)?;
            let want = field(case, "expected", Value::as_str)?;
            let got = escape_pattern(pattern.as_bytes());
            same_bytes(
                format!("escape_pattern({pattern:?})"),
                &got,
                want.as_bytes(),
            )
        }
        "parse_stats" | "parse_report" => {
            let body = body(case)?;
            same_events(&events(&body), &oracle_events(case)?)?;
            if kind == "parse_stats" {
                check_parse_stats(case, &body)
            } else {
                check_parse_report(case, &body)
            }
        }
        other => Err(format!("unknown kind {other}")),
    }
}

fn tag_name(line: &Line<'_>) -> &'static str {
    match line.directive.map(|d| (d.kind, d.key)) {
        Some((KeyKind::UserAgent, _)) => "UserAgent",
        Some((KeyKind::Allow, _)) => "Allow",
        Some((KeyKind::Disallow, _)) => "Disallow",
        Some((KeyKind::Sitemap, _)) => "Sitemap",
        Some((KeyKind::Unknown, key)) if is_unsupported_key(key) => "Unused",
        _ => "Unknown",
    }
}

fn lines_of(body: &[u8]) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    for_each_line(body, |l| lines.push(l));
    lines
}

/// One parse callback: type, line, value, key (unknown keys only), metadata (metadata only).
type Event = (String, u32, Option<Vec<u8>>, Option<Vec<u8>>, Option<Value>);

/// The reference's callback stream for a body, rebuilt from the tokenizer, in the oracle's
/// JSON shape (values as bytes, rule and unknown values normalised as the reference emits them).
fn events(body: &[u8]) -> Vec<Event> {
    let mut out = Vec::new();
    for line in lines_of(body) {
        if let Some(d) = line.directive {
            let (kind, escaped) = match d.kind {
                KeyKind::UserAgent => ("user-agent", false),
                KeyKind::Allow => ("allow", true),
                KeyKind::Disallow => ("disallow", true),
                KeyKind::Sitemap => ("sitemap", false),
                KeyKind::Unknown => ("unknown", true),
            };
            let value = if escaped {
                escape_pattern(d.value).into_owned()
            } else {
                d.value.to_vec()
            };
            let key = (d.kind == KeyKind::Unknown).then(|| d.key.to_vec());
            out.push((kind.to_string(), line.number, Some(value), key, None));
        }
        let m = line.metadata;
        let meta = serde_json::json!({
            "is_empty": m.is_empty, "has_comment": m.has_comment, "is_comment": m.is_comment,
            "has_directive": m.has_directive, "is_acceptable_typo": m.is_acceptable_typo,
            "is_line_too_long": m.is_line_too_long,
            "is_missing_colon_separator": m.is_missing_colon_separator,
        });
        out.push(("metadata".to_string(), line.number, None, None, Some(meta)));
    }
    out
}

fn oracle_events(case: &Value) -> Result<Vec<Event>, String> {
    let mut out = Vec::new();
    for e in field(case, "oracle_events", Value::as_array)? {
        let kind = field(e, "type", Value::as_str)?.to_string();
        let line = field(e, "line", Value::as_u64)? as u32;
        out.push(if kind == "metadata" {
            let mut meta = e.clone();
            let obj = meta.as_object_mut().ok_or("data: event is not an object")?;
            obj.remove("type");
            obj.remove("line");
            (kind, line, None, None, Some(meta))
        } else {
            let value = bytes_field(e, "value")?;
            let key = if kind == "unknown" {
                bytes_field(e, "key")?
            } else {
                None
            };
            (kind, line, value, key, None)
        });
    }
    Ok(out)
}

/// Equality of the whole stream, reported at its first difference: the full streams of a long
/// body would bury it.
fn same_events(actual: &[Event], expected: &[Event]) -> Outcome {
    if actual == expected {
        return Ok(());
    }
    let at = actual
        .iter()
        .zip(expected)
        .position(|(a, e)| a != e)
        .unwrap_or(actual.len().min(expected.len()));
    let show_event = |events: &[Event]| match events.get(at) {
        None => "(end of stream)".to_string(),
        Some((kind, line, value, key, meta)) => {
            let mut text = format!("{kind} line {line}");
            if let Some(key) = key {
                text += &format!(" key {}", show(key));
            }
            if let Some(value) = value {
                text += &format!(" value {}", show(value));
            }
            if let Some(meta) = meta {
                text += &format!(" {meta}");
            }
            text
        }
    };
    Err(format!(
        "callback stream differs at event {at} ({} expected, {} produced)\n  expected: {}\n  \
         actual:   {}",
        expected.len(),
        actual.len(),
        show_event(expected),
        show_event(actual),
    ))
}

fn check_parse_stats(case: &Value, body: &[u8]) -> Outcome {
    let lines = lines_of(body);
    let robots = RobotsTxt::parse(body);
    let stats = robots.stats();
    let directive_lines: Vec<_> = lines.iter().filter(|l| l.directive.is_some()).collect();
    let valid = directive_lines
        .iter()
        .filter(|l| l.directive.is_some_and(|d| d.kind != KeyKind::Unknown))
        .count() as u64;
    let unknown = directive_lines.len() as u64 - valid;
    for (getter, want) in field(case, "expected", Value::as_object)? {
        let want_u64 = || {
            want.as_u64()
                .ok_or(format!("data: {getter} is not a number"))
        };
        match getter.as_str() {
            "valid_directives" => {
                same(getter, valid, want_u64()?)?;
                same(
                    "stats.valid_directives",
                    u64::from(stats.valid_directives),
                    valid,
                )?;
            }
            "unknown_directives" => {
                same(getter, unknown, want_u64()?)?;
                same(
                    "stats.unknown_directives",
                    u64::from(stats.unknown_directives),
                    unknown,
                )?;
            }
            "last_line_seen" => {
                let last = directive_lines.last().map_or(0, |l| l.number);
                same(getter, u64::from(last), want_u64()?)?;
            }
            "sitemap" => {
                let all: String = robots.sitemaps().map(|s| s.url.into_owned()).collect();
                same(
                    "sitemaps, concatenated",
                    all,
                    want.as_str().unwrap_or("(not a string)"),
                )?;
            }
            other => return Err(format!("unknown getter {other}")),
        }
    }
    Ok(())
}

fn check_parse_report(case: &Value, body: &[u8]) -> Outcome {
    let lines = lines_of(body);
    let robots = RobotsTxt::parse(body);
    let stats = robots.stats();
    let expected = field(case, "expected", Value::as_object)?;
    let want_u64 = |name: &str| {
        expected[name]
            .as_u64()
            .ok_or(format!("data: expected.{name} is not a number"))
    };
    same(
        "stats.valid_directives",
        u64::from(stats.valid_directives),
        want_u64("valid_directives")?,
    )?;
    let last = u64::from(lines.last().map_or(0, |l| l.number));
    same("last line seen", last, want_u64("last_line_seen")?)?;
    same("stats.lines", u64::from(stats.lines), last)?;
    if expected.get("parse_results_size_equals_last_line_seen") == Some(&Value::Bool(true)) {
        same(
            "number of lines (one result per line)",
            lines.len() as u64,
            last,
        )?;
    }
    let diagnostics: Vec<_> = robots.diagnostics().collect();
    let has = |line: u32, kind: DiagnosticKind| {
        diagnostics.iter().any(|d| d.line == line && d.kind == kind)
    };
    for want in field(case, "expected_lines", Value::as_array)? {
        let n = field(want, "line_num", Value::as_u64)? as u32;
        let line = lines
            .iter()
            .find(|l| l.number == n)
            .ok_or(format!("line {n}: not produced by the tokenizer"))?;
        let tag = tag_name(line);
        same(
            format!("line {n}: tag"),
            tag,
            field(want, "tag_name", Value::as_str)?,
        )?;
        let m = line.metadata;
        let typo = field(want, "is_typo", Value::as_bool)?;
        same(
            format!("line {n}: is_acceptable_typo"),
            m.is_acceptable_typo,
            typo,
        )?;
        let wm = &want["metadata"];
        let flags = [
            ("is_empty", m.is_empty),
            ("has_comment", m.has_comment),
            ("is_comment", m.is_comment),
            ("has_directive", m.has_directive),
            ("is_line_too_long", m.is_line_too_long),
            ("is_missing_colon_separator", m.is_missing_colon_separator),
        ];
        for (name, actual) in flags {
            let expected = wm[name].as_bool().unwrap_or(false);
            same(format!("line {n}: metadata.{name}"), actual, expected)?;
        }
        // The same facts reach the parsed file's diagnostics.
        let diagnosed = [
            (DiagnosticKind::AcceptedTypo, m.is_acceptable_typo),
            (DiagnosticKind::MissingColon, m.is_missing_colon_separator),
            (DiagnosticKind::LineTooLong, m.is_line_too_long),
            (DiagnosticKind::UnsupportedKey, tag == "Unused"),
            (
                DiagnosticKind::UnknownKey,
                tag == "Unknown" && m.has_directive,
            ),
            (
                DiagnosticKind::NotADirective,
                !m.has_directive && !m.is_empty && !m.is_comment,
            ),
        ];
        for (kind, expected) in diagnosed {
            same(
                format!("line {n}: diagnostic {kind:?} present"),
                has(n, kind),
                expected,
            )?;
        }
    }
    Ok(())
}
