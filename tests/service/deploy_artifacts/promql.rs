//! A PromQL lexer good enough to find names and labels, and the check of one expression against
//! what robotsd exports.

use std::collections::BTreeSet;

use super::Exported;

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

pub(super) fn is_ident_char(c: char) -> bool {
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
pub(super) fn check_promql(exported: &Exported, expr: &str, used_labels: &[String]) -> Vec<String> {
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
