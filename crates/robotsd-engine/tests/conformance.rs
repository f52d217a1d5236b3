//! Google's reference test suite, as data (`../shared/conformance/`): all 195 cases must pass.
//! The files are required: a missing file fails the test, it never skips.

use std::path::PathBuf;

use base64::Engine as _;
use robotsd_engine::tokenizer::{KeyKind, Line, for_each_line};
use robotsd_engine::{
    DiagnosticKind, RobotsTxt, escape_pattern, is_unsupported_key, is_valid_user_agent_to_obey,
    path_params_query,
};
use serde_json::Value;

fn shared_dir() -> PathBuf {
    std::env::var_os("ROBOTSD_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

fn load(name: &str) -> Value {
    let path = shared_dir().join("conformance").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("conformance data {} is required: {e}", path.display()));
    serde_json::from_str(&text).expect("conformance data is JSON")
}

fn b64(v: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(v.as_str().expect("base64 string"))
        .expect("valid base64")
}

/// The exact bytes of a body: `robots_txt_b64` when present, else `robots_txt`.
fn body(case: &Value) -> Vec<u8> {
    match case.get("robots_txt_b64") {
        Some(v) => b64(v),
        None => case["robots_txt"]
            .as_str()
            .expect("robots_txt")
            .as_bytes()
            .to_vec(),
    }
}

/// A string field that may be given as `<name>_b64` when it is not UTF-8.
fn bytes_field(obj: &Value, name: &str) -> Option<Vec<u8>> {
    match obj.get(name) {
        Some(Value::String(s)) => Some(s.as_bytes().to_vec()),
        _ => obj.get(format!("{name}_b64")).map(b64),
    }
}

#[test]
fn verdict_cases() {
    let cases = load("google-robotstxt-cases.json");
    let cases = cases.as_array().expect("a list of cases");
    assert_eq!(cases.len(), 145);
    for case in cases {
        let id = &case["id"];
        let robots = RobotsTxt::parse(&body(case));
        let agent = case["user_agent"].as_str().expect("user_agent");
        let url = case["url"].as_str().expect("url");
        let verdict = robots.check(&[agent], url);
        let expected = case["allowed"].as_bool().expect("allowed");
        assert_eq!(verdict.allowed, expected, "case {id}: {case}");
        let oracle_line = case["oracle_matching_line"].as_u64().expect("line") as u32;
        match verdict.rule {
            Some(rule) => assert_eq!(rule.line(), oracle_line, "case {id}: deciding line"),
            None if oracle_line == 0 => {}
            None => {
                // The reference reports a matching empty `allow:`/`disallow:` although it decides
                // nothing (README, case 50); robotsd reports no rule there.
                let empty_rule_there = robots
                    .groups()
                    .flat_map(|g| g.rules().collect::<Vec<_>>())
                    .any(|r| r.line() == oracle_line && r.normalized_pattern().is_empty());
                assert!(
                    empty_rule_there,
                    "case {id}: expected rule on line {oracle_line}"
                );
            }
        }
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

fn oracle_events(case: &Value) -> Vec<Event> {
    case["oracle_events"]
        .as_array()
        .expect("oracle_events")
        .iter()
        .map(|e| {
            let kind = e["type"].as_str().expect("type").to_string();
            let line = e["line"].as_u64().expect("line") as u32;
            if kind == "metadata" {
                let mut meta = e.clone();
                let obj = meta.as_object_mut().expect("object");
                obj.remove("type");
                obj.remove("line");
                (kind, line, None, None, Some(meta))
            } else {
                let value = bytes_field(e, "value");
                let key = if kind == "unknown" {
                    bytes_field(e, "key")
                } else {
                    None
                };
                (kind, line, value, key, None)
            }
        })
        .collect()
}

fn check_parse_stats(id: &Value, case: &Value, body: &[u8]) {
    let lines = lines_of(body);
    let robots = RobotsTxt::parse(body);
    let stats = robots.stats();
    let directive_lines: Vec<_> = lines.iter().filter(|l| l.directive.is_some()).collect();
    let valid = directive_lines
        .iter()
        .filter(|l| l.directive.is_some_and(|d| d.kind != KeyKind::Unknown))
        .count() as u64;
    let unknown = directive_lines.len() as u64 - valid;
    for (getter, want) in case["expected"].as_object().expect("expected") {
        match getter.as_str() {
            "valid_directives" => {
                assert_eq!(valid, want.as_u64().unwrap(), "case {id}: {getter}");
                assert_eq!(u64::from(stats.valid_directives), valid, "case {id}: stats");
            }
            "unknown_directives" => {
                assert_eq!(unknown, want.as_u64().unwrap(), "case {id}: {getter}");
                assert_eq!(
                    u64::from(stats.unknown_directives),
                    unknown,
                    "case {id}: stats"
                );
            }
            "last_line_seen" => {
                let last = directive_lines.last().map_or(0, |l| l.number);
                assert_eq!(
                    u64::from(last),
                    want.as_u64().unwrap(),
                    "case {id}: {getter}"
                );
            }
            "sitemap" => {
                let all: String = robots.sitemaps().map(|s| s.url.into_owned()).collect();
                assert_eq!(all, want.as_str().unwrap(), "case {id}: {getter}");
            }
            other => panic!("case {id}: unknown getter {other}"),
        }
    }
}

fn check_parse_report(id: &Value, case: &Value, body: &[u8]) {
    let lines = lines_of(body);
    let robots = RobotsTxt::parse(body);
    let stats = robots.stats();
    let expected = &case["expected"];
    assert_eq!(
        u64::from(stats.valid_directives),
        expected["valid_directives"].as_u64().unwrap(),
        "case {id}: valid_directives"
    );
    let last = u64::from(lines.last().map_or(0, |l| l.number));
    assert_eq!(
        last,
        expected["last_line_seen"].as_u64().unwrap(),
        "case {id}: last line"
    );
    assert_eq!(u64::from(stats.lines), last, "case {id}: stats.lines");
    if expected.get("parse_results_size_equals_last_line_seen") == Some(&Value::Bool(true)) {
        assert_eq!(lines.len() as u64, last, "case {id}: one result per line");
    }
    let diagnostics: Vec<_> = robots.diagnostics().collect();
    let has = |line: u32, kind: DiagnosticKind| {
        diagnostics.iter().any(|d| d.line == line && d.kind == kind)
    };
    for want in case["expected_lines"].as_array().expect("expected_lines") {
        let n = want["line_num"].as_u64().unwrap() as u32;
        let line = lines.iter().find(|l| l.number == n).expect("line exists");
        assert_eq!(
            tag_name(line),
            want["tag_name"].as_str().unwrap(),
            "case {id} line {n}"
        );
        let m = line.metadata;
        assert_eq!(
            m.is_acceptable_typo,
            want["is_typo"].as_bool().unwrap(),
            "case {id} line {n}"
        );
        let wm = &want["metadata"];
        let flag = |name: &str| wm[name].as_bool().unwrap_or(false);
        assert_eq!(m.is_empty, flag("is_empty"), "case {id} line {n}");
        assert_eq!(m.has_comment, flag("has_comment"), "case {id} line {n}");
        assert_eq!(m.is_comment, flag("is_comment"), "case {id} line {n}");
        assert_eq!(m.has_directive, flag("has_directive"), "case {id} line {n}");
        assert_eq!(
            m.is_line_too_long,
            flag("is_line_too_long"),
            "case {id} line {n}"
        );
        assert_eq!(
            m.is_missing_colon_separator,
            flag("is_missing_colon_separator"),
            "case {id} line {n}"
        );
        // The same facts reach the parsed file's diagnostics.
        assert_eq!(
            has(n, DiagnosticKind::AcceptedTypo),
            m.is_acceptable_typo,
            "case {id} line {n}"
        );
        assert_eq!(
            has(n, DiagnosticKind::MissingColon),
            m.is_missing_colon_separator
        );
        assert_eq!(
            has(n, DiagnosticKind::LineTooLong),
            m.is_line_too_long,
            "case {id} line {n}"
        );
        let tag = tag_name(line);
        assert_eq!(
            has(n, DiagnosticKind::UnsupportedKey),
            tag == "Unused",
            "case {id} line {n}"
        );
        assert_eq!(
            has(n, DiagnosticKind::UnknownKey),
            tag == "Unknown" && m.has_directive,
            "case {id} line {n}"
        );
        assert_eq!(
            has(n, DiagnosticKind::NotADirective),
            !m.has_directive && !m.is_empty && !m.is_comment,
            "case {id} line {n}"
        );
    }
}

#[test]
fn other_cases() {
    let data = load("google-robotstxt-other-cases.json");
    let cases = data["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 50);
    let mut by_kind = std::collections::BTreeMap::<String, usize>::new();
    for case in cases {
        let id = &case["id"];
        let kind = case["kind"].as_str().expect("kind");
        *by_kind.entry(kind.to_string()).or_default() += 1;
        match kind {
            "is_valid_user_agent_to_obey" => {
                let agent = case["user_agent"].as_str().unwrap();
                let want = case["expected"].as_bool().unwrap();
                assert_eq!(
                    is_valid_user_agent_to_obey(agent),
                    want,
                    "case {id}: {agent:?}"
                );
            }
            "get_path_params_query" => {
                let url = case["url"].as_str().unwrap();
                assert_eq!(
                    path_params_query(url),
                    case["expected_path"].as_str().unwrap(),
                    "case {id}"
                );
            }
            "escape_pattern" => {
                let pattern = case["pattern"].as_str().unwrap();
                let want = case["expected"].as_str().unwrap();
                assert_eq!(
                    &*escape_pattern(pattern.as_bytes()),
                    want.as_bytes(),
                    "case {id}"
                );
            }
            "parse_stats" | "parse_report" => {
                let body = body(case);
                assert_eq!(
                    events(&body),
                    oracle_events(case),
                    "case {id}: callback stream"
                );
                if kind == "parse_stats" {
                    check_parse_stats(id, case, &body);
                } else {
                    check_parse_report(id, case, &body);
                }
            }
            other => panic!("case {id}: unknown kind {other}"),
        }
    }
    let expected_kinds = [
        ("escape_pattern", 4),
        ("get_path_params_query", 19),
        ("is_valid_user_agent_to_obey", 11),
        ("parse_report", 4),
        ("parse_stats", 12),
    ];
    let got: Vec<_> = by_kind.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(got, expected_kinds);
}
