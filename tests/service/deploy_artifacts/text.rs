//! Reading the deployment files as text, with no YAML parser: the values of a key, the rules of
//! an alert file, and the labels a template reads.

use super::promql::is_ident_char;

/// Label names a Grafana legend (`{{route}} {{status}}`) or Prometheus template
/// (`{{ $labels.instance }}`) reads.
pub(super) fn template_labels(text: &str, prefix: &str) -> Vec<String> {
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

/// The value of every `key:` in a YAML text, as (1-based line, value): a plain or quoted scalar
/// on the key's line, or a block scalar (`|`, `>-`, …) on the lines indented below it.
pub(super) fn yaml_values(text: &str, key: &str) -> Vec<(usize, String)> {
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
pub(super) fn alert_rules(text: &str) -> Vec<(String, String)> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
