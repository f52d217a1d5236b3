//! Every real robots.txt of the corpus (the subset vendored in `tests/data/corpus/`, 366 files as
//! fetched; `ROBOTSD_SHARED_DIR` points at the whole shared corpus of 3,748) parses without
//! panicking, and every answer is consistent with the file it came from
//! (SEMANTICS.md §1 "Path matching", "Precedence", "The answer"):
//!
//! - a deciding rule agrees with the verdict, lies within the file and matches the path;
//! - no rule of the applied groups would beat it (longest pattern, then `allow`, then earliest
//!   line), and with no deciding rule none of them matches;
//! - asking for several agents at once gives the best of the specific verdicts;
//! - a path spelled like a rule's own pattern is decided by a rule at least that long.
//!
//! The files are required: a missing directory, or files other than those its `INDEX.tsv` lists,
//! fails; it never skips.

use std::path::PathBuf;

use robotsd_engine::{
    Directive, RobotsTxt, Rule, Verdict, extract_user_agent, path_params_query, pattern,
};

/// URLs asked of every file, besides one built from the file's own first `disallow`.
const URLS: &[&str] = &[
    "/",
    "/index.html",
    "/search?q=x",
    "/wp-admin/",
    "https://www.example.com/wp-admin/admin-ajax.php?action=x#top",
];

/// Agents asked of every file: one no file names, Googlebot, and a crawler with two names.
const AGENTS: &[&[&str]] = &[
    &["SomeBot"],
    &["Googlebot"],
    &["googlebot-image", "googlebot"],
];

/// The data directory: the vendored copies, or a whole shared directory when
/// `ROBOTSD_SHARED_DIR` names one.
fn data_dir() -> PathBuf {
    std::env::var_os("ROBOTSD_SHARED_DIR")
        // Empty means unset, as for every ROBOTSD_* variable.
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data"))
}

/// The ids `INDEX.tsv` lists, sorted.
fn indexed_ids(corpus: &std::path::Path) -> Vec<String> {
    let index = corpus.join("INDEX.tsv");
    let text = std::fs::read_to_string(&index)
        .unwrap_or_else(|e| panic!("corpus index {} is required: {e}", index.display()));
    let mut ids: Vec<String> = text
        .lines()
        .skip(1)
        .filter_map(|line| line.split('\t').next())
        .map(str::to_owned)
        .collect();
    ids.sort();
    ids
}

/// The pattern a rule decided with: the `index.htm` directory form is `dir/$`.
fn effective_pattern(rule: &Rule<'_>) -> String {
    let p = rule.normalized_pattern();
    if rule.matched_as_directory() {
        let slash = p.rfind('/').expect("an index.htm rule has a slash");
        assert!(p[slash..].starts_with("/index.htm"), "{rule:?}");
        format!("{}$", &p[..=slash])
    } else {
        p.to_owned()
    }
}

/// Precedence key: longest pattern, then `allow`, then earliest line.
fn key(priority: usize, allow: bool, line: u32) -> (usize, bool, std::cmp::Reverse<u32>) {
    (priority, allow, std::cmp::Reverse(line))
}

fn rule_key(rule: &Rule<'_>) -> (usize, bool, std::cmp::Reverse<u32>) {
    key(
        effective_pattern(rule).len(),
        rule.directive() == Directive::Allow,
        rule.line(),
    )
}

/// The best key among the applied groups' rules for `path`, by brute force: every rule with a
/// non-empty pattern, plus the `index.htm` directory form of `allow` rules.
fn brute_force_best(v: &Verdict<'_>, path: &[u8]) -> Option<(usize, bool, std::cmp::Reverse<u32>)> {
    let groups = v.groups.as_ref()?;
    let mut best = None;
    for group in groups.groups() {
        for rule in group.rules() {
            let p = rule.normalized_pattern();
            if p.is_empty() {
                continue;
            }
            let allow = rule.directive() == Directive::Allow;
            let mut candidates = vec![p.to_owned()];
            if allow
                && let Some(slash) = p.rfind('/')
                && p[slash..].starts_with("/index.htm")
            {
                candidates.push(format!("{}$", &p[..=slash]));
            }
            for c in candidates {
                if pattern::matches(path, c.as_bytes()) {
                    let k = key(c.len(), allow, rule.line());
                    if best.is_none_or(|b| k > b) {
                        best = Some(k);
                    }
                }
            }
        }
    }
    best
}

/// Invariants of one verdict; returns a description of the first violation.
fn verdict_problem(
    robots: &RobotsTxt,
    agents: &[&str],
    path: &str,
    v: &Verdict<'_>,
) -> Option<String> {
    let lines = robots.stats().lines;
    let Some(rule) = &v.rule else {
        if !v.allowed {
            return Some("disallowed without a deciding rule".into());
        }
        if let Some(best) = brute_force_best(v, path.as_bytes()) {
            return Some(format!("no deciding rule, but {best:?} matches"));
        }
        return None;
    };
    if v.allowed != (rule.directive() == Directive::Allow) {
        return Some(format!("allowed={} but decided by {rule:?}", v.allowed));
    }
    if !(1..=lines).contains(&rule.line()) {
        return Some(format!("{rule:?} outside lines 1..={lines}"));
    }
    let effective = effective_pattern(rule);
    if effective.is_empty() || !pattern::matches(path.as_bytes(), effective.as_bytes()) {
        return Some(format!("{rule:?} (as {effective:?}) does not match"));
    }
    let Some(groups) = &v.groups else {
        return Some(format!("{rule:?} decided but no group applied"));
    };
    if !groups
        .groups()
        .any(|g| g.rules().any(|r| r.line() == rule.line()))
    {
        return Some(format!("{rule:?} is not in the applied groups"));
    }
    if groups.is_global() {
        if !groups.agents().any(|a| a.global) {
            return Some("global groups without a `*` line".into());
        }
    } else if !groups.agents().any(|a| {
        agents
            .iter()
            .any(|asked| extract_user_agent(&a.value).eq_ignore_ascii_case(asked))
    }) {
        return Some("specific groups that name none of the agents".into());
    }
    let best = brute_force_best(v, path.as_bytes());
    if best != Some(rule_key(rule)) {
        return Some(format!("decided by {rule:?}, brute force says {best:?}"));
    }
    None
}

/// Asking for several agents at once gives the best of the specific verdicts, or the global one
/// when no group names any of them.
fn multi_agent_problem(robots: &RobotsTxt, agents: &[&str], url: &str) -> Option<String> {
    let multi = robots.check(agents, url);
    let singles: Vec<Verdict<'_>> = agents.iter().map(|a| robots.check(&[a], url)).collect();
    let specific: Vec<&Verdict<'_>> = singles
        .iter()
        .filter(|v| v.groups.as_ref().is_some_and(|g| !g.is_global()))
        .collect();
    let expected = if specific.is_empty() {
        let v = &singles[0];
        (v.allowed, v.rule.map(|r| r.line()))
    } else {
        let best = specific
            .iter()
            .filter_map(|v| v.rule)
            .max_by_key(|r| rule_key(r));
        (
            best.is_none_or(|r| r.directive() == Directive::Allow),
            best.map(|r| r.line()),
        )
    };
    let got = (multi.allowed, multi.rule.map(|r| r.line()));
    (got != expected).then(|| format!("multi-agent {got:?}, singles give {expected:?}"))
}

/// The first `disallow` with a non-empty pattern, the agent to ask so that its group applies, and
/// a path spelled like the pattern (`*` as nothing, a final `$` dropped), and the pattern's length
/// when the pattern must match that path.
fn own_disallow(robots: &RobotsTxt) -> Option<(String, String, Option<usize>)> {
    for group in robots.groups() {
        let Some(rule) = group
            .rules()
            .find(|r| r.directive() == Directive::Disallow && !r.normalized_pattern().is_empty())
        else {
            continue;
        };
        let p = rule.normalized_pattern();
        let literal = p.strip_suffix('$').unwrap_or(p).replace('*', "");
        let path = if literal.starts_with('/') {
            literal
        } else {
            format!("/{literal}")
        };
        let first = group.agents().next()?;
        let agent = if first.global {
            "SomeUnnamedCorpusBot".to_owned()
        } else {
            extract_user_agent(&first.value).to_owned()
        };
        // Only a pattern starting with `/` or `*` matches its own spelling with a leading `/`.
        let len = (p.starts_with('/') || p.starts_with('*')).then_some(p.len());
        return Some((agent, path, len));
    }
    None
}

#[test]
fn every_corpus_file_parses_and_answers_consistently() {
    let corpus = data_dir().join("corpus");
    let dir = corpus.join("robots");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {} is required: {e}", dir.display()))
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, indexed_ids(&corpus), "files in {}", dir.display());
    assert!(files.len() > 300, "a corpus of {} files", files.len());

    let started = std::time::Instant::now();
    let (mut bytes, mut heap, mut checks, mut decided, mut rules) = (0usize, 0usize, 0usize, 0, 0);
    let mut problems: Vec<String> = Vec::new();
    for file in &files {
        let body = std::fs::read(file).expect("readable corpus file");
        bytes += body.len();
        let robots = RobotsTxt::parse(&body);
        heap += robots.heap_size();
        rules += robots.groups().map(|g| g.rules().count()).sum::<usize>();
        let name = file.file_name().unwrap_or_default().to_string_lossy();

        let own = own_disallow(&robots);
        let mut urls: Vec<&str> = URLS.to_vec();
        if let Some((_, path, _)) = &own {
            urls.push(path);
        }
        for agents in AGENTS {
            for url in &urls {
                let v = robots.check(agents, url);
                checks += 1;
                decided += usize::from(v.rule.is_some());
                let path = path_params_query(url);
                if let Some(problem) = verdict_problem(&robots, agents, &path, &v) {
                    problems.push(format!("{name}: {agents:?} {url:?}: {problem}"));
                }
                if agents.len() > 1
                    && let Some(problem) = multi_agent_problem(&robots, agents, url)
                {
                    problems.push(format!("{name}: {agents:?} {url:?}: {problem}"));
                }
            }
        }
        if let Some((agent, path, len)) = &own
            && !agent.is_empty()
        {
            let v = robots.check_path(&[agent], path);
            checks += 1;
            if let Some(problem) = verdict_problem(&robots, &[agent], path, &v) {
                problems.push(format!("{name}: [{agent:?}] {path:?}: {problem}"));
            }
            // The rule matches its own spelling, so something at least as long decides.
            let priority = v.rule.map(|r| effective_pattern(&r).len());
            if let Some(len) = len
                && priority.is_none_or(|p| p < *len)
            {
                problems.push(format!(
                    "{name}: [{agent:?}] {path:?}: own disallow of length {len} not applied, \
                     got {:?}",
                    v.rule
                ));
            }
        }
    }
    eprintln!(
        "corpus: {} files, {bytes} bytes, {rules} rules, heap {heap} bytes ({:.2}× the bytes), \
         {checks} checks ({decided} decided by a rule) in {:.2?}",
        files.len(),
        heap as f64 / bytes.max(1) as f64,
        started.elapsed()
    );
    assert!(
        problems.is_empty(),
        "{} problems, first ones:\n{}",
        problems.len(),
        problems
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
