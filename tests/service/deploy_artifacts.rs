//! The deployment artefacts query only what robotsd exports: every metric name and label in the
//! Prometheus alert rules (`deploy/prometheus/alerts.yaml`), their unit tests
//! (`alerts.test.yaml`) and the Grafana dashboard (`deploy/grafana/robotsd-dashboard.json`) is
//! checked against the real exposition of [`Metrics`], so a renamed series or label fails here
//! instead of silently emptying a panel or disarming an alert.
//!
//! What is exported comes from the code, not from a list kept here: every family of
//! [`Metrics::family_names`] is rendered once with a series, and the exposition gives each sample
//! name (a histogram's `_bucket`, `_sum` and `_count` included, and only a histogram's) with its
//! label names. PromQL is not parsed in full: a small lexer finds selectors, label matchers,
//! `by`/`without`/`on`/`ignoring`/`group_*` lists, and the labels that legends and annotation
//! templates use. The YAML files are read as text (no YAML parser): every identifier in them
//! that starts with `robotsd_` or `process_`, comments included, must be exported, and `expr:` and
//! `series:` values are checked as PromQL.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use robotsd::cache::{CacheConfig, FleetConfig, OriginCache};
use robotsd::clock::{Clock, TokioClock};
use robotsd::destination::DestinationPolicy;
use robotsd::fetch::{FetchConfig, FetchKind, Fetcher};
use robotsd::metrics::Metrics;
use robotsd::store::{MemoryStore, Store, StoreSettings};
use serde_json::Value;

/// Labels Prometheus attaches to every series it scrapes.
const TARGET_LABELS: [&str; 2] = ["job", "instance"];

/// Series Prometheus itself makes for every target, which artefacts may also query.
const SYNTHETIC_SERIES: [&str; 1] = ["up"];

/// PromQL words that are neither functions nor metric names.
const KEYWORDS: [&str; 13] = [
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "and",
    "or",
    "unless",
    "bool",
    "offset",
    "inf",
    "nan",
];

/// Keywords followed by a parenthesised list of label names.
const LABEL_LIST_KEYWORDS: [&str; 6] = [
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
];

/// What robotsd exports, read from its own exposition.
struct Exported {
    /// Every family name, as listed by [`Metrics::family_names`].
    families: BTreeSet<String>,
    /// Every sample name that can appear in `/metrics`, with its label names.
    samples: BTreeMap<String, BTreeSet<String>>,
}

impl Exported {
    /// Renders every family with at least one series and reads names and labels back.
    async fn from_code() -> Exported {
        let metrics = Metrics::new();
        // Labelled families have no series until observed; one observation of each kind.
        metrics.observe_http("/v1/check", "GET", 200, Duration::from_millis(1));
        metrics.observe_check(
            true,
            robotsd::checker::Reason::MatchedRule,
            robotsd::cache::Lookup::Hit,
        );
        metrics.observe_fetch(FetchKind::Parsed, Duration::from_millis(1));
        let fetcher = Fetcher::new(FetchConfig::default(), DestinationPolicy::default())
            .expect("default fetcher");
        // With a store, so that the store's series are rendered too.
        let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
        let store = Store::new(
            Arc::new(MemoryStore::new(Arc::clone(&clock))),
            StoreSettings::default(),
            clock,
        );
        let cache = OriginCache::new(CacheConfig::default(), fetcher)
            .with_store(store, FleetConfig::default());
        let text = metrics.render(&cache).await;

        let families: BTreeSet<String> = metrics.family_names().iter().cloned().collect();
        let mut types = BTreeMap::new();
        let mut samples: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').expect("# TYPE name kind");
                types.insert(name.to_owned(), kind.to_owned());
                continue;
            }
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let (name, labels) = parse_sample(line);
            samples.entry(name).or_default().extend(labels);
        }
        for family in &families {
            assert!(
                types.contains_key(family),
                "family {family} was not rendered: give it a series in Exported::from_code so \
                 its labels are known"
            );
        }
        for sample in samples.keys() {
            let family = family_of(sample, &families)
                .unwrap_or_else(|| panic!("sample {sample} belongs to no listed family"));
            if sample != family {
                assert_eq!(
                    types[family], "histogram",
                    "{sample}: only histograms have suffixed samples"
                );
            }
        }
        Exported { families, samples }
    }

    /// The label names a selector of `name` may match on, or `None` if no such series exists.
    fn labels_of(&self, name: &str) -> Option<BTreeSet<String>> {
        let mut labels: BTreeSet<String> = if SYNTHETIC_SERIES.contains(&name) {
            BTreeSet::new()
        } else {
            self.samples.get(name)?.clone()
        };
        labels.extend(TARGET_LABELS.iter().map(|l| (*l).to_owned()));
        Some(labels)
    }
}

/// The family a sample name belongs to: itself, or a histogram's with a suffix removed.
fn family_of<'a>(sample: &'a str, families: &BTreeSet<String>) -> Option<&'a str> {
    if families.contains(sample) {
        return Some(sample);
    }
    ["_bucket", "_sum", "_count"]
        .iter()
        .filter_map(|suffix| sample.strip_suffix(suffix))
        .find(|base| families.contains(*base))
}

/// `name{a="x",b="y"} 1` → (`name`, [`a`, `b`]); label values may hold escaped quotes.
fn parse_sample(line: &str) -> (String, Vec<String>) {
    let name_end = line
        .find(['{', ' '])
        .unwrap_or_else(|| panic!("sample line: {line}"));
    let name = line[..name_end].to_owned();
    let mut labels = Vec::new();
    if line[name_end..].starts_with('{') {
        let mut rest = &line[name_end + 1..];
        while !rest.starts_with('}') {
            let eq = rest.find('=').unwrap_or_else(|| panic!("label in: {line}"));
            labels.push(rest[..eq].trim_start_matches(',').to_owned());
            let value = &rest[eq + 1..];
            assert!(value.starts_with('"'), "quoted value in: {line}");
            let mut end = 1;
            let bytes = value.as_bytes();
            while bytes[end] != b'"' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            rest = value[end + 1..].trim_start_matches(',');
        }
    }
    (name, labels)
}

// ---------------------------------------------------------------------------------------------
// A PromQL lexer good enough to find names and labels.

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// A string literal (label value, regex): its content is never a name.
    Str,
    Number,
    /// A Grafana variable: `$job`, `${datasource}`, `$__rate_interval`.
    Var,
    /// `=`, `!=`, `=~`, `!~`, `==`, `>=`, `<=`.
    Op(String),
    Punct(char),
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

fn lex(expr: &str) -> Vec<Tok> {
    let chars: Vec<char> = expr.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '"' || c == '\'' || c == '`' {
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += if chars[i] == '\\' && c != '`' { 2 } else { 1 };
            }
            i += 1;
            toks.push(Tok::Str);
        } else if c == '$' {
            i += 1;
            if chars.get(i) == Some(&'{') {
                while i < chars.len() && chars[i] != '}' {
                    i += 1;
                }
                i += 1;
            } else {
                while i < chars.len() && is_ident_char(chars[i]) {
                    i += 1;
                }
            }
            toks.push(Tok::Var);
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            // Numbers and durations: `0.99`, `5m`, `1e3`, `1h30m`.
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
            toks.push(Tok::Number);
        } else if is_ident_start(c) {
            let start = i;
            while i < chars.len() && is_ident_char(chars[i]) {
                i += 1;
            }
            toks.push(Tok::Ident(chars[start..i].iter().collect()));
        } else if "=!<>".contains(c) {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let op = match two.as_str() {
                "=~" | "!~" | "!=" | "==" | ">=" | "<=" => two,
                _ => c.to_string(),
            };
            i += op.chars().count();
            toks.push(Tok::Op(op));
        } else {
            toks.push(Tok::Punct(c));
            i += 1;
        }
    }
    toks
}

/// What one PromQL expression refers to.
#[derive(Debug, Default)]
struct Refs {
    /// Metric names selected, with the label names each selector matches on.
    selectors: Vec<(String, Vec<String>)>,
    /// Label names of `by`, `without`, `on`, `ignoring` and `group_*` lists.
    grouping: Vec<String>,
    /// Whether there is a `by` list (the result then has only its labels, for legends).
    has_by: bool,
}

fn refs(expr: &str) -> Refs {
    let toks = lex(expr);
    let mut out = Refs::default();
    let mut i = 0;
    while i < toks.len() {
        match &toks[i] {
            Tok::Ident(word) if LABEL_LIST_KEYWORDS.contains(&word.as_str()) => {
                out.has_by |= word == "by";
                i += 1;
                if toks.get(i) == Some(&Tok::Punct('(')) {
                    i += 1;
                    while i < toks.len() && toks[i] != Tok::Punct(')') {
                        if let Tok::Ident(label) = &toks[i] {
                            out.grouping.push(label.clone());
                        }
                        i += 1;
                    }
                }
                i += 1;
            }
            Tok::Ident(word) if KEYWORDS.contains(&word.to_ascii_lowercase().as_str()) => i += 1,
            // A function call, or an aggregation with its grouping first: `sum by (job) (…)`.
            Tok::Ident(_)
                if matches!(toks.get(i + 1), Some(Tok::Punct('(')))
                    || matches!(toks.get(i + 1), Some(Tok::Ident(w)) if w == "by" || w == "without") =>
            {
                i += 1
            }
            Tok::Ident(name) => {
                i += 1;
                let mut labels = Vec::new();
                if toks.get(i) == Some(&Tok::Punct('{')) {
                    i = matchers(&toks, i + 1, &mut labels);
                }
                out.selectors.push((name.clone(), labels));
            }
            // A selector without a name: `{__name__="x"}`; not used by the artefacts.
            Tok::Punct('{') => {
                let mut labels = Vec::new();
                i = matchers(&toks, i + 1, &mut labels);
                out.selectors.push((String::new(), labels));
            }
            Tok::Punct('[') => {
                // A range or subquery: `[5m]`, `[$__rate_interval]`, `[1h:5m]`.
                while i < toks.len() && toks[i] != Tok::Punct(']') {
                    i += 1;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Reads `label op "value", …}` from `i`, pushing label names; returns the index after `}`.
fn matchers(toks: &[Tok], mut i: usize, labels: &mut Vec<String>) -> usize {
    while i < toks.len() && toks[i] != Tok::Punct('}') {
        if let (Tok::Ident(label), Some(Tok::Op(_))) = (&toks[i], toks.get(i + 1)) {
            labels.push(label.clone());
        }
        i += 1;
    }
    i + 1
}

/// Checks one PromQL expression; `used_labels` are label names the caller will read from its
/// result (legend `{{label}}`, annotation `$labels.label`). Returns one line per problem.
fn check_promql(exported: &Exported, expr: &str, used_labels: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    let refs = refs(expr);
    if refs.selectors.is_empty() {
        problems.push(format!("selects no series: {expr}"));
    }
    let mut available = BTreeSet::new();
    for (name, labels) in &refs.selectors {
        let Some(known) = exported.labels_of(name) else {
            problems.push(format!(
                "`{name}` is not a series robotsd exports, in: {expr}"
            ));
            continue;
        };
        for label in labels {
            if !known.contains(label) {
                problems.push(format!("`{name}` has no label `{label}`, in: {expr}"));
            }
        }
        available.extend(known);
    }
    for label in &refs.grouping {
        if !available.contains(label) {
            problems.push(format!(
                "grouping label `{label}` is on none of the series selected, in: {expr}"
            ));
        }
    }
    let result_labels: BTreeSet<String> = if refs.has_by {
        refs.grouping.iter().cloned().collect()
    } else {
        available
    };
    for label in used_labels {
        if !result_labels.contains(label) {
            problems.push(format!(
                "label `{label}` is used but not in the result of: {expr}"
            ));
        }
    }
    problems
}

/// Every identifier in `text` that starts with `robotsd_` or `process_` must be an exported
/// family or sample name. Returns one line per problem.
fn check_names_in_text(exported: &Exported, file: &str, text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let mut previous = ' ';
    let mut start = None;
    for (i, c) in text.char_indices().chain([(text.len(), ' ')]) {
        match (start, is_ident_char(c)) {
            (None, true) if !is_ident_char(previous) => start = Some(i),
            (Some(s), false) => {
                let word = &text[s..i];
                let ours = word.starts_with("robotsd_") || word.starts_with("process_");
                if ours && !exported.families.contains(word) && !exported.samples.contains_key(word)
                {
                    let line = text[..s].matches('\n').count() + 1;
                    problems.push(format!(
                        "{file}:{line}: `{word}` is not a metric robotsd exports"
                    ));
                }
                start = None;
            }
            _ => {}
        }
        previous = c;
    }
    problems
}

/// Label names a Grafana legend (`{{route}} {{status}}`) or Prometheus template
/// (`{{ $labels.instance }}`) reads.
fn template_labels(text: &str, prefix: &str) -> Vec<String> {
    let mut labels = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open..].find("}}") else {
            break;
        };
        let inner = rest[open + 2..open + close].trim();
        if let Some(label) = inner.strip_prefix(prefix)
            && !label.is_empty()
            && label.chars().all(is_ident_char)
        {
            labels.push(label.to_owned());
        }
        rest = &rest[open + close + 2..];
    }
    labels
}

// ---------------------------------------------------------------------------------------------
// Reading the YAML files as text.

/// The value of every `key:` in a YAML text, as (1-based line, value): a plain or quoted scalar
/// on the key's line, or a block scalar (`|`, `>-`, …) on the lines indented below it.
fn yaml_values(text: &str, key: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let pattern = format!("{key}:");
    for (n, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start().trim_start_matches("- ");
        let Some(value) = trimmed.strip_prefix(&pattern) else {
            continue;
        };
        // The key's column: in `- series: >-` that is after the dash, where `values:` below
        // it starts.
        let indent = line.len() - trimmed.len();
        let value = value.trim();
        if value.starts_with('|') || value.starts_with('>') {
            let block: Vec<&str> = lines[n + 1..]
                .iter()
                .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > indent)
                .map(|l| l.trim())
                .collect();
            out.push((n + 1, block.join("\n").trim().to_owned()));
        } else if let Some(quoted) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
            out.push((n + 1, quoted.replace("''", "'")));
        } else if let Some(quoted) = value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            out.push((n + 1, quoted.replace("\\\"", "\"")));
        } else {
            out.push((n + 1, value.to_owned()));
        }
    }
    out
}

/// The text of each rule of an alert rules file, split at `- alert:`, with its name.
fn alert_rules(text: &str) -> Vec<(String, String)> {
    let mut rules: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(name) = line.trim_start().strip_prefix("- alert:") {
            rules.push((name.trim().to_owned(), String::new()));
        }
        if let Some((_, body)) = rules.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    rules
}

fn deploy_file(relative: &str) -> (String, String) {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "deploy", relative]
        .iter()
        .collect();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    (format!("deploy/{relative}"), text)
}

fn assert_no_problems(problems: &[String]) {
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// The artefacts.

#[tokio::test]
async fn alert_rules_use_exported_series_and_labels() {
    let exported = Exported::from_code().await;
    let (file, text) = deploy_file("prometheus/alerts.yaml");
    let mut problems = check_names_in_text(&exported, &file, &text);
    let rules = alert_rules(&text);
    assert!(rules.len() >= 5, "{file}: {} alert rules", rules.len());
    for (name, body) in &rules {
        let exprs = yaml_values(body, "expr");
        assert_eq!(exprs.len(), 1, "{file}: {name} needs exactly one expr");
        let used = template_labels(body, "$labels.");
        for problem in check_promql(&exported, &exprs[0].1, &used) {
            problems.push(format!("{file}: {name}: {problem}"));
        }
        for required in ["for:", "severity:", "summary:", "description:", "runbook:"] {
            if !body.contains(required) {
                problems.push(format!("{file}: {name} has no `{required}`"));
            }
        }
    }
    assert_no_problems(&problems);
}

#[tokio::test]
async fn alert_unit_tests_cover_every_alert_with_exported_series() {
    let exported = Exported::from_code().await;
    let (rules_file, rules_text) = deploy_file("prometheus/alerts.yaml");
    let (file, text) = deploy_file("prometheus/alerts.test.yaml");
    let mut problems = check_names_in_text(&exported, &file, &text);
    for (line, series) in yaml_values(&text, "series") {
        for problem in check_promql(&exported, &series, &[]) {
            problems.push(format!("{file}:{line}: {problem}"));
        }
    }
    let tested: BTreeSet<String> = yaml_values(&text, "alertname")
        .into_iter()
        .map(|(_, name)| name)
        .collect();
    let defined: BTreeSet<String> = alert_rules(&rules_text)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    for name in defined.difference(&tested) {
        problems.push(format!("{rules_file}: {name} has no unit test in {file}"));
    }
    // promtool passes a test that expects no alert from a misspelt alert name.
    for name in tested.difference(&defined) {
        problems.push(format!(
            "{file}: tests {name}, which {rules_file} does not define"
        ));
    }
    assert_no_problems(&problems);
}

/// Every panel of the dashboard, rows' nested panels included.
fn panels(dashboard: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    let mut stack: Vec<&Value> = dashboard["panels"]
        .as_array()
        .expect("dashboard has panels")
        .iter()
        .collect();
    while let Some(panel) = stack.pop() {
        if let Some(nested) = panel["panels"].as_array() {
            stack.extend(nested);
        }
        out.push(panel);
    }
    out
}

#[tokio::test]
async fn dashboard_queries_exported_series_and_labels() {
    let exported = Exported::from_code().await;
    let (file, text) = deploy_file("grafana/robotsd-dashboard.json");
    let dashboard: Value = serde_json::from_str(&text).expect("dashboard is JSON");
    let mut problems = check_names_in_text(&exported, &file, &text);

    let panels = panels(&dashboard);
    let mut ids = BTreeSet::new();
    let mut queries = 0;
    for panel in &panels {
        let title = panel["title"].as_str().unwrap_or_default();
        if !ids.insert(panel["id"].as_u64().expect("panel id")) {
            problems.push(format!("{file}: panel `{title}`: duplicate id"));
        }
        if panel["type"] == "row" {
            continue;
        }
        let targets = panel["targets"].as_array().map_or(&[][..], Vec::as_slice);
        if targets.is_empty() {
            problems.push(format!("{file}: panel `{title}` has no targets"));
        }
        for target in targets {
            let expr = target["expr"].as_str().unwrap_or_default();
            if expr.trim().is_empty() {
                problems.push(format!("{file}: panel `{title}` has a target without expr"));
                continue;
            }
            if target["datasource"]["uid"] != "${datasource}" {
                problems.push(format!(
                    "{file}: panel `{title}`: target datasource is not ${{datasource}}"
                ));
            }
            queries += 1;
            let legend = target["legendFormat"].as_str().unwrap_or_default();
            let used = template_labels(legend, "");
            for problem in check_promql(&exported, expr, &used) {
                problems.push(format!("{file}: panel `{title}`: {problem}"));
            }
        }
    }
    assert!(queries >= 20, "{file}: only {queries} queries");

    let variables = dashboard["templating"]["list"]
        .as_array()
        .expect("templating variables");
    assert!(
        variables.iter().any(|v| v["type"] == "datasource"
            && v["name"] == "datasource"
            && v["query"] == "prometheus"),
        "{file}: needs a `datasource` variable of type datasource over Prometheus"
    );
    for variable in variables.iter().filter(|v| v["type"] == "query") {
        // Grafana runs `query` and shows `definition`: both are checked.
        for field in ["query", "definition"] {
            let query = variable[field].as_str().expect("query variable text");
            // Grafana's `label_values(selector, label)`.
            let inner = query
                .strip_prefix("label_values(")
                .and_then(|q| q.strip_suffix(')'))
                .unwrap_or_else(|| panic!("{file}: unexpected variable query {query}"));
            let (selector, label) = inner
                .rsplit_once(',')
                .expect("label_values(selector, label)");
            for problem in check_promql(&exported, selector, &[label.trim().to_owned()]) {
                problems.push(format!(
                    "{file}: variable `{}`: {problem}",
                    variable["name"]
                ));
            }
        }
    }
    assert!(
        dashboard["schemaVersion"].as_u64().is_some(),
        "{file}: schemaVersion"
    );
    assert_no_problems(&problems);
}

// ---------------------------------------------------------------------------------------------
// The checker itself: it must be able to fail.

#[tokio::test]
async fn checker_rejects_what_robotsd_does_not_export() {
    let exported = Exported::from_code().await;
    let bad = [
        // A misspelt name (robotsd_http_requests_total).
        (
            "sum(rate(robotsd_http_request_total[5m]))",
            vec![],
            "not a series",
        ),
        // A histogram suffix on a counter, and on a gauge.
        (
            "rate(robotsd_checks_total_bucket[5m])",
            vec![],
            "not a series",
        ),
        ("robotsd_cache_entries_count", vec![], "not a series"),
        // A histogram's family name is not itself a series.
        (
            "rate(robotsd_robots_fetch_duration_seconds[5m])",
            vec![],
            "not a series",
        ),
        // A label of another metric.
        (
            r#"robotsd_checks_total{result="hit"}"#,
            vec![],
            "has no label `result`",
        ),
        // `le` only on buckets.
        (
            r#"robotsd_http_request_duration_seconds_count{le="1"}"#,
            vec![],
            "has no label `le`",
        ),
        // A misspelt grouping label.
        (
            "sum by (rout) (rate(robotsd_http_requests_total[5m]))",
            vec![],
            "grouping label `rout`",
        ),
        // A legend reading a label the aggregation dropped.
        (
            "sum by (route) (rate(robotsd_http_requests_total[5m]))",
            vec!["status".to_owned()],
            "label `status` is used",
        ),
        // No series at all.
        ("vector(1)", vec![], "selects no series"),
    ];
    for (expr, used, expected) in bad {
        let problems = check_promql(&exported, expr, &used);
        assert!(
            problems.iter().any(|p| p.contains(expected)),
            "{expr}: expected a problem containing {expected:?}, got {problems:?}"
        );
    }

    let good = [
        r#"sum by (job) (rate(robotsd_http_requests_total{route=~"/v1/.+", status=~"5.."}[5m]))"#,
        "histogram_quantile(0.99, sum by (le) (rate(robotsd_robots_fetch_duration_seconds_bucket[$__rate_interval])))",
        r#"up{job="robotsd"} == 0"#,
        "robotsd_origins_in_backoff > 20 and robotsd_origins_in_backoff / robotsd_cache_entries > 0.25",
        r#"count by (version) (robotsd_build_info{job=~"$job", instance=~"$instance"})"#,
        "rate(process_cpu_seconds_total[5m])",
    ];
    for expr in good {
        assert_no_problems(&check_promql(&exported, expr, &[]));
    }

    let text = "# robotsd_cache_entries is fine, robotsd_cache_entry is not\nRobotsdDown \
                robotsd-dashboard process_resident_memory_bytes process_rss_bytes";
    let problems = check_names_in_text(&exported, "example", text);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems[0].contains("`robotsd_cache_entry`"),
        "{problems:?}"
    );
    assert!(problems[0].starts_with("example:1:"), "{problems:?}");
    assert!(problems[1].contains("`process_rss_bytes`"), "{problems:?}");
    assert!(problems[1].starts_with("example:2:"), "{problems:?}");
}

#[test]
fn yaml_values_read_plain_quoted_and_block_scalars() {
    let text = concat!(
        "rules:\n",
        "  - alert: A\n",
        "    expr: up == 0\n",
        "  - alert: B\n",
        "    expr: |\n",
        "      sum(\n",
        "        x)\n",
        "    for: 5m\n",
        "  - series: 'a{b=\"c\"}'\n",
        "    expr: >-\n",
        "      y\n",
        "\n",
        "      z\n",
        "  - series: >-\n",
        "      d{e=\"f\",\n",
        "      g=\"h\"}\n",
        "    values: '1x5'\n",
    );
    assert_eq!(
        yaml_values(text, "expr"),
        [
            (3, "up == 0".to_owned()),
            (5, "sum(\nx)".to_owned()),
            (10, "y\n\nz".to_owned())
        ]
    );
    assert_eq!(
        yaml_values(text, "series"),
        [
            (9, r#"a{b="c"}"#.to_owned()),
            (14, "d{e=\"f\",\ng=\"h\"}".to_owned())
        ]
    );
    let rules = alert_rules(text);
    assert_eq!(rules.len(), 2);
    assert_eq!(rules[0].0, "A");
    assert!(rules[1].1.contains("for: 5m"));
}

#[test]
fn template_labels_are_found() {
    assert_eq!(
        template_labels("{{route}} {{ status }} p99", ""),
        ["route", "status"]
    );
    assert_eq!(
        template_labels(
            "{{ $labels.instance }} has {{ $value | humanize }}",
            "$labels."
        ),
        ["instance"]
    );
}
