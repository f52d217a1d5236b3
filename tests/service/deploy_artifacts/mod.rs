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

mod promql;
mod text;

use promql::{check_promql, is_ident_char};
use text::{alert_rules, template_labels, yaml_values};

/// Labels Prometheus attaches to every series it scrapes (`namespace` from Kubernetes service
/// discovery and the prometheus-operator, which the alert rules group by).
const TARGET_LABELS: [&str; 3] = ["job", "instance", "namespace"];

/// Series Prometheus itself makes for every target, which artefacts may also query.
const SYNTHETIC_SERIES: [&str; 1] = ["up"];

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
        metrics.observe_signature(
            "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U",
            robotsd::metrics::SignatureOf::Request,
        );
        metrics.observe_challenge("cloudflare");
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
