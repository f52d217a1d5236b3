//! Property tests of the robots engine (SEMANTICS.md §1) against deliberately naive models.
//!
//! - the wildcard matcher agrees with a plain recursive matcher ("Path matching");
//! - whole files agree with a naive group-and-precedence model: verdict and deciding line
//!   ("Groups", "User-agent matching", "Precedence");
//! - comments, blank lines, line endings, key case, accepted typos, missing colons and unknown
//!   lines never change a verdict, and line numbers follow the reference's counting ("Lines",
//!   "Keys");
//! - parsing and checking never panic on arbitrary or robots-like bytes, and what a check reports
//!   is consistent with itself;
//! - over-long lines are cut at 16,663 bytes ("Lines").
//!
//! The small alphabets contain no `%`, no byte ≥ 0x80 and no `index.htm`, so patterns are their own
//! normalised form and Google's `index.htm` extension never applies in the models.

use proptest::prelude::*;
use robotsd_engine::{Directive, RobotsTxt, Verdict, path_params_query, pattern};

// ---------------------------------------------------------------------------------------------
// The naive matcher

/// Whether `pattern` matches `path`, written as plainly as possible: a pattern matches a prefix of
/// the path, `*` matches any sequence, and `$` matches the end of the path only as the pattern's
/// last byte (anywhere else it is a literal `$`).
fn naive_matches(path: &[u8], pattern: &[u8]) -> bool {
    match pattern {
        [] => true,
        [b'$'] => path.is_empty(),
        [b'*', rest @ ..] => (0..=path.len()).any(|skip| naive_matches(&path[skip..], rest)),
        [literal, rest @ ..] => path.first() == Some(literal) && naive_matches(&path[1..], rest),
    }
}

#[test]
fn naive_matcher_sanity() {
    assert!(naive_matches(b"/fish.php", b"/*.php"));
    assert!(naive_matches(b"/a/b.php", b"/*.php$"));
    assert!(!naive_matches(b"/a/b.php?x", b"/*.php$"));
    assert!(naive_matches(b"/a$b", b"/a$b"));
    assert!(!naive_matches(b"/ab", b"/a$b"));
    assert!(naive_matches(b"/", b"/$"));
    assert!(!naive_matches(b"/a", b"/$"));
    assert!(!naive_matches(b"/", b"$"));
    assert!(naive_matches(b"/x$", b"/x$$"));
    assert!(!naive_matches(b"/x", b"/x$$"));
    assert!(naive_matches(b"/abab", b"/ab*ab$"));
    assert!(!naive_matches(b"/ab", b"/ab*ab$"));
}

/// Bytes for patterns and paths: few enough that matches are frequent.
const ALPHABET: &[u8] = b"/ab.?*$";

fn bytes_from(
    alphabet: &'static [u8],
    len: std::ops::Range<usize>,
) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(alphabet), len)
}

fn with_slash(rest: Vec<u8>) -> Vec<u8> {
    let mut v = vec![b'/'];
    v.extend(rest);
    v
}

/// A path as the engine sees it: starts with `/`; `*`, `$` and `?` in it are plain bytes.
fn path_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        bytes_from(ALPHABET, 0..14).prop_map(with_slash),
        bytes_from(b"/a*$", 0..10).prop_map(with_slash),
    ]
}

/// A pattern: mostly starting with `/` as real ones do, sometimes not (`*.php`, `a`, empty).
fn pattern_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => bytes_from(ALPHABET, 0..9).prop_map(with_slash),
        1 => bytes_from(ALPHABET, 0..10),
        1 => bytes_from(b"/a*$", 0..10),
    ]
}

fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

// ---------------------------------------------------------------------------------------------
// Files as data: groups of user-agent lines and rules, rendered plainly or in varied styles

/// A user-agent value in a generated file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agent {
    Star,
    Foo,
    Other,
}

#[derive(Debug, Clone)]
struct RuleSpec {
    allow: bool,
    /// Small alphabet, possibly empty (an empty value decides nothing but still ends the
    /// group's user-agent lines).
    pattern: String,
}

/// One line of a generated file.
#[derive(Debug, Clone)]
enum Item {
    Agent(Agent),
    Rule(RuleSpec),
}

fn rule_strategy() -> impl Strategy<Value = RuleSpec> {
    let pattern = prop_oneof![
        6 => bytes_from(ALPHABET, 0..6).prop_map(with_slash),
        1 => bytes_from(ALPHABET, 0..5),
        1 => Just(Vec::new()),
    ];
    (any::<bool>(), pattern).prop_map(|(allow, pattern)| RuleSpec {
        allow,
        pattern: String::from_utf8(pattern).expect("ASCII"),
    })
}

fn agent_strategy() -> impl Strategy<Value = Agent> {
    prop_oneof![Just(Agent::Star), Just(Agent::Foo), Just(Agent::Other)]
}

/// A file: maybe some rules before any user-agent (ignored), then groups of 1–2 user-agent lines
/// and 1–6 rules each (so every group has a rule line and groups never run together).
fn file_strategy() -> impl Strategy<Value = Vec<Item>> {
    let group = (
        prop::collection::vec(agent_strategy(), 1..=2),
        prop::collection::vec(rule_strategy(), 1..=6),
    );
    (
        prop::collection::vec(rule_strategy(), 0..=1),
        prop::collection::vec(group, 1..=3),
    )
        .prop_map(|(orphans, groups)| {
            let mut items: Vec<Item> = orphans.into_iter().map(Item::Rule).collect();
            for (agents, rules) in groups {
                items.extend(agents.into_iter().map(Item::Agent));
                items.extend(rules.into_iter().map(Item::Rule));
            }
            items
        })
}

/// Who is asked, and which generated agents that names.
const ASKED: &[(&[&str], &[Agent])] = &[
    (&["FooBot"], &[Agent::Foo]),
    (&["foobot"], &[Agent::Foo]),
    (&["FOOBOT"], &[Agent::Foo]),
    (&["OtherBot"], &[Agent::Other]),
    (&["SomeBot"], &[]),
    (&["FooBot", "OtherBot"], &[Agent::Foo, Agent::Other]),
    (&["SomeBot", "FooBot"], &[Agent::Foo]),
];

fn asked_strategy() -> impl Strategy<Value = (&'static [&'static str], &'static [Agent])> {
    prop::sample::select(ASKED)
}

fn plain_agent(agent: Agent) -> &'static str {
    match agent {
        Agent::Star => "*",
        Agent::Foo => "FooBot",
        Agent::Other => "OtherBot",
    }
}

/// The plain rendering, one item per line (LF endings), and the line number of each item.
fn render_plain(items: &[Item]) -> (String, Vec<u32>) {
    let mut body = String::new();
    let mut lines = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item {
            Item::Agent(a) => body.push_str(&format!("user-agent: {}\n", plain_agent(*a))),
            Item::Rule(r) => {
                let key = if r.allow { "allow" } else { "disallow" };
                body.push_str(&format!("{key}: {}\n", r.pattern));
            }
        }
        lines.push(u32::try_from(i + 1).expect("few lines"));
    }
    (body, lines)
}

/// What the model expects of a check.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Expected {
    allowed: bool,
    /// The deciding rule: line, allow, normalised pattern.
    rule: Option<(u32, bool, String)>,
    /// `None` when no group applied, else whether the `*` groups applied.
    global: Option<bool>,
}

/// The naive model: rules belong to the user-agent lines above them (consecutive user-agent lines
/// form one group; a user-agent line after a rule starts a new one; rules before any user-agent are
/// ignored). If any user-agent line names an asked agent, the rules of those groups apply; else
/// those of the `*` groups; else nothing applies. Among applying rules with a non-empty pattern
/// that matches, the longest pattern wins, then `allow`, then the earliest line.
fn model(items: &[Item], lines: &[u32], asked: &[Agent], path: &[u8]) -> Expected {
    let named = items
        .iter()
        .any(|i| matches!(i, Item::Agent(a) if asked.contains(a)));
    let has_global = items.iter().any(|i| matches!(i, Item::Agent(Agent::Star)));
    let applies = |agents: &[Agent]| {
        if named {
            agents.iter().any(|a| asked.contains(a))
        } else {
            agents.contains(&Agent::Star)
        }
    };
    let mut group_agents: Vec<Agent> = Vec::new();
    let mut after_rule = false;
    let mut best: Option<(usize, bool, std::cmp::Reverse<u32>, &str)> = None;
    for (item, &line) in items.iter().zip(lines) {
        match item {
            Item::Agent(a) => {
                if after_rule {
                    group_agents.clear();
                    after_rule = false;
                }
                group_agents.push(*a);
            }
            Item::Rule(r) => {
                if group_agents.is_empty() {
                    continue;
                }
                after_rule = true;
                if !applies(&group_agents)
                    || r.pattern.is_empty()
                    || !naive_matches(path, r.pattern.as_bytes())
                {
                    continue;
                }
                let candidate = (
                    r.pattern.len(),
                    r.allow,
                    std::cmp::Reverse(line),
                    r.pattern.as_str(),
                );
                if best.is_none_or(|b| (candidate.0, candidate.1, candidate.2) > (b.0, b.1, b.2)) {
                    best = Some(candidate);
                }
            }
        }
    }
    Expected {
        allowed: best.is_none_or(|b| b.1),
        rule: best.map(|(_, allow, std::cmp::Reverse(line), p)| (line, allow, p.to_owned())),
        global: (named || has_global).then_some(!named),
    }
}

fn observed(v: &Verdict<'_>) -> Expected {
    Expected {
        allowed: v.allowed,
        rule: v.rule.map(|r| {
            (
                r.line(),
                r.directive() == Directive::Allow,
                r.normalized_pattern().to_owned(),
            )
        }),
        global: v.groups.as_ref().map(|g| g.is_global()),
    }
}

/// How one line of the varied rendering is written.
#[derive(Debug, Clone)]
struct LineStyle {
    /// Lines inserted before this one: blank, whitespace, comments, sitemaps, unknown keys;
    /// each with its own line ending.
    fillers: Vec<(&'static str, &'static str)>,
    indent: &'static str,
    /// Bit i upper-cases byte i (mod 32) of the key and of a user-agent value.
    case_mask: u32,
    /// Index into the key's accepted spellings.
    spelling: usize,
    /// Whether the key gets a suffix (`Disallowed:` counts as `disallow`).
    key_suffix: bool,
    /// Index into [`SEPARATORS`].
    separator: usize,
    /// Index into the user-agent value variants.
    agent_variant: usize,
    trailing: &'static str,
    ending: &'static str,
}

const ENDINGS: &[&str] = &["\n", "\r\n", "\r"];
const FILLERS: &[&str] = &[
    "",
    "   ",
    "\t",
    "#",
    "# comment",
    "  # user-agent: FooBot",
    "#disallow: /",
    "sitemap: http://example.com/sitemap.xml",
    "Sitemap:http://example.com/a*$",
    "crawl-delay: 5",
    "foo: bar",
    "noindex: /a",
    "request-rate: 1/5",
];
/// Between key and value. The last one (no colon) is valid only when the line is exactly two
/// whitespace-separated tokens.
const SEPARATORS: &[&str] = &[":", ": ", " : ", ":\t", "\t:  ", ":   ", " "];
const NO_COLON: usize = SEPARATORS.len() - 1;
const TRAILING: &[&str] = &["", " ", "\t", " # comment", "#c", "\t# x: y", "   #"];
const USER_AGENT_KEYS: &[&str] = &["user-agent", "useragent", "user agent"];
const DISALLOW_KEYS: &[&str] = &[
    "disallow",
    "dissallow",
    "dissalow",
    "disalow",
    "diasllow",
    "disallaw",
];

fn style_strategy() -> impl Strategy<Value = LineStyle> {
    let filler = (prop::sample::select(FILLERS), prop::sample::select(ENDINGS));
    let fillers = prop_oneof![
        3 => Just(Vec::new()),
        1 => prop::collection::vec(filler, 1..=3),
    ];
    (
        fillers,
        prop::sample::select(&["", " ", "\t", "  \t"][..]),
        prop_oneof![Just(0u32), Just(u32::MAX), any::<u32>()],
        0..8usize,
        prop::bool::weighted(0.15),
        0..SEPARATORS.len(),
        0..5usize,
        prop::sample::select(TRAILING),
        prop::sample::select(ENDINGS),
    )
        .prop_map(
            |(
                fillers,
                indent,
                case_mask,
                spelling,
                key_suffix,
                separator,
                agent_variant,
                trailing,
                ending,
            )| LineStyle {
                fillers,
                indent,
                case_mask,
                spelling,
                key_suffix,
                separator,
                agent_variant,
                trailing,
                ending,
            },
        )
}

fn apply_case(text: &str, mask: u32) -> String {
    text.chars()
        .enumerate()
        .map(|(i, c)| {
            if mask & (1 << (i % 32)) != 0 {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect()
}

fn styled_agent(agent: Agent, style: &LineStyle) -> String {
    let value = match agent {
        Agent::Star => return "*".to_owned(),
        Agent::Foo => [
            "FooBot",
            "foobot",
            "FooBot/2.1",
            "fooBot(compatible)",
            "FooBot;",
        ],
        Agent::Other => [
            "OtherBot",
            "otherbot",
            "OtherBot/3",
            "otherBot(x)",
            "OtherBot.",
        ],
    }[style.agent_variant % 5];
    // The product token is the leading `[A-Za-z_-]` run, compared case-insensitively.
    apply_case(value, style.case_mask.rotate_left(7))
}

/// The varied rendering and the line number of each item, counted as the reference does: a line
/// ends at LF, CR or CRLF (a CR followed by LF is one ending).
fn render_styled(
    items: &[Item],
    styles: &[LineStyle],
    bom: bool,
    final_ending: bool,
) -> (Vec<u8>, Vec<u32>) {
    let mut body: Vec<u8> = Vec::new();
    if bom {
        body.extend_from_slice("\u{FEFF}".as_bytes());
    }
    let mut starts = Vec::new();
    for (n, (item, style)) in items.iter().zip(styles).enumerate() {
        for (filler, ending) in &style.fillers {
            body.extend_from_slice(filler.as_bytes());
            body.extend_from_slice(ending.as_bytes());
        }
        starts.push(body.len());
        let (keys, value) = match item {
            Item::Agent(a) => (USER_AGENT_KEYS, styled_agent(*a, style)),
            Item::Rule(r) if r.allow => (&["allow"][..], r.pattern.clone()),
            Item::Rule(r) => (DISALLOW_KEYS, r.pattern.clone()),
        };
        let mut key = keys[style.spelling % keys.len()].to_owned();
        if style.key_suffix {
            key.push_str("ed");
        }
        let key = apply_case(&key, style.case_mask);
        let no_colon_ok = !value.is_empty() && !key.contains(' ');
        let separator = if style.separator == NO_COLON && !no_colon_ok {
            ": "
        } else {
            SEPARATORS[style.separator]
        };
        body.extend_from_slice(style.indent.as_bytes());
        body.extend_from_slice(key.as_bytes());
        body.extend_from_slice(separator.as_bytes());
        body.extend_from_slice(value.as_bytes());
        body.extend_from_slice(style.trailing.as_bytes());
        if final_ending || n + 1 < items.len() {
            body.extend_from_slice(style.ending.as_bytes());
        }
    }
    let lines = starts.iter().map(|&s| line_number_at(&body, s)).collect();
    (body, lines)
}

/// The 1-based number of the line starting at `offset`.
fn line_number_at(body: &[u8], offset: usize) -> u32 {
    let before = &body[..offset];
    let endings = before
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b == b'\n' || (b == b'\r' && before.get(i + 1) != Some(&b'\n')))
        .count();
    u32::try_from(endings + 1).expect("small file")
}

// ---------------------------------------------------------------------------------------------
// Arbitrary and robots-like bytes

/// Pieces that robots.txt parsing cares about, glued at random.
fn robots_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        20 => prop::sample::select(
            &[
                "user-agent",
                "User-Agent:",
                "useragent ",
                "user agent:",
                "allow",
                "Allow:",
                "disallow",
                "DISALLOW:",
                "dissallow:",
                "Disallowed:",
                "sitemap:",
                "site-map: ",
                "crawl-delay:",
                "crawl-delay: 1.5",
                "noindex:",
                ":",
                " ",
                "\t",
                "*",
                "* ",
                "$",
                "%",
                "%2f",
                "%C3%a9",
                "%%",
                "é",
                "\u{FEFF}",
                "\u{0}",
                "\r",
                "\n",
                "\r\n",
                "#",
                "/",
                "/*",
                "*$",
                "/index.html",
                "/d/index.htm$",
                "index.htm",
                "?",
                ";",
                "a",
                "b",
                "Googlebot",
                "googlebot-image",
                "FooBot/1.0",
                "http://example.com/sitemap.xml",
            ][..]
        )
        .prop_map(|s| s.as_bytes().to_vec()),
        4 => any::<u8>().prop_map(|b| vec![b]),
        4 => prop::collection::vec(any::<u8>(), 0..8),
        // A long run, to reach the line-length limit and long wildcard patterns now and then.
        1 => (prop::sample::select(&["a", "*a", "*", "%e9", "é"][..]), 0..3000usize)
            .prop_map(|(s, n)| s.repeat(n).into_bytes()),
    ];
    prop::collection::vec(piece, 0..120).prop_map(|pieces| pieces.concat())
}

fn agent_string() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        prop::sample::select(&["*", "Googlebot", "googlebot-image", "FooBot", "a", ""][..])
            .prop_map(str::to_owned),
        "[A-Za-z_*/ -]{0,12}",
    ]
}

fn url_string() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "(https?://|//)?[a-z.:]{0,12}(/[a-z%*$?;#=/. é]{0,24})?",
        "/[ab*$%/.?]{0,20}",
    ]
}

/// Checks the invariants every verdict must satisfy, whatever the file.
fn assert_consistent(robots: &RobotsTxt, v: &Verdict<'_>, path: &str) {
    let lines = robots.stats().lines;
    match &v.rule {
        None => assert!(v.allowed, "no deciding rule, yet disallowed"),
        Some(rule) => {
            assert_eq!(v.allowed, rule.directive() == Directive::Allow, "{rule:?}");
            assert!(
                (1..=lines).contains(&rule.line()),
                "{rule:?}, {lines} lines"
            );
            let p = rule.normalized_pattern();
            assert!(!p.is_empty(), "an empty value decided: {rule:?}");
            if rule.matched_as_directory() {
                assert_eq!(rule.directive(), Directive::Allow);
                let slash = p.rfind('/').expect("index.htm rule has a slash");
                assert!(p[slash..].starts_with("/index.htm"), "{rule:?}");
                let directory = format!("{}$", &p[..=slash]);
                assert!(
                    pattern::matches(path.as_bytes(), directory.as_bytes()),
                    "{rule:?} as directory {directory:?} vs {path:?}"
                );
            } else {
                assert!(
                    pattern::matches(path.as_bytes(), p.as_bytes()),
                    "{rule:?} does not match {path:?}"
                );
            }
            assert!(v.groups.is_some(), "a rule decided but no group applied");
        }
    }
}

/// Walks everything a parsed file exposes.
fn walk(robots: &RobotsTxt) {
    let stats = robots.stats();
    let _ = robots.heap_size();
    for d in robots.diagnostics() {
        assert!((1..=stats.lines).contains(&d.line), "{d:?}");
    }
    for s in robots.sitemaps() {
        assert!((1..=stats.lines).contains(&s.line));
    }
    for g in robots.groups() {
        let _ = g.is_global();
        let _ = g.crawl_delay();
        for a in g.agents() {
            assert!((1..=stats.lines).contains(&a.line));
        }
        for r in g.rules() {
            assert!((1..=stats.lines).contains(&r.line()));
            let _ = r.pattern();
            let p = r.normalized_pattern().as_bytes();
            assert!(p.is_ascii(), "{r:?}");
            // `%xx` escapes are upper-cased.
            for w in p.windows(3) {
                if w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit() {
                    assert!(
                        !w[1].is_ascii_lowercase() && !w[2].is_ascii_lowercase(),
                        "{r:?}"
                    );
                }
            }
        }
    }
}

fn check_everything(robots: &RobotsTxt, agents: &[String], url: &str) {
    walk(robots);
    let v = robots.check(agents, url);
    let path = path_params_query(url);
    assert_consistent(robots, &v, &path);
    let by_path = robots.check_path(agents, &path);
    assert_eq!(v.allowed, by_path.allowed);
    assert_eq!(v.rule.map(|r| r.line()), by_path.rule.map(|r| r.line()));
    if let Some(groups) = &v.groups {
        let _ = groups.crawl_delay();
        for a in groups.agents() {
            let _ = (a.value, a.line, a.global);
        }
    }
    let _ = format!("{v:?}");
    // A raw string as a path, whatever it holds.
    let raw = robots.check_path(agents, url);
    assert_consistent(robots, &raw, url);
}

// ---------------------------------------------------------------------------------------------
// The properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// SEMANTICS.md §1 "Path matching": the engine's linear matcher accepts exactly what the
    /// naive one accepts.
    #[test]
    fn matcher_agrees_with_naive_matcher(path in path_strategy(), pat in pattern_strategy()) {
        prop_assert_eq!(
            pattern::matches(&path, &pat),
            naive_matches(&path, &pat),
            "path {:?} pattern {:?}", show(&path), show(&pat)
        );
    }

    /// Same, with a pattern built from the path itself (so it often matches) and then mutated.
    #[test]
    fn matcher_agrees_on_patterns_cut_from_the_path(
        path in path_strategy(),
        cuts in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(&b"*$ab"[..])), 0..4),
        anchor in any::<bool>(),
    ) {
        let mut pat = path.clone();
        for (at, byte) in cuts {
            let i = at.index(pat.len() + 1);
            if byte == b'*' || byte == b'$' {
                pat.insert(i, byte);
            } else if i < pat.len() {
                pat[i] = byte;
            }
        }
        if anchor {
            pat.push(b'$');
        }
        prop_assert_eq!(
            pattern::matches(&path, &pat),
            naive_matches(&path, &pat),
            "path {:?} pattern {:?}", show(&path), show(&pat)
        );
    }

    /// SEMANTICS.md §1 "Groups", "User-agent matching", "Precedence": the verdict, the deciding
    /// rule (line, directive, pattern) and the applied groups are those of the naive model.
    #[test]
    fn verdict_agrees_with_naive_model(
        items in file_strategy(),
        (asked, targets) in asked_strategy(),
        paths in prop::collection::vec(path_strategy(), 1..8),
    ) {
        let (body, lines) = render_plain(&items);
        let robots = RobotsTxt::parse(body.as_bytes());
        for path in &paths {
            let path_str = std::str::from_utf8(path).expect("ASCII");
            let expected = model(&items, &lines, targets, path);
            let got = observed(&robots.check_path(asked, path_str));
            prop_assert_eq!(&got, &expected, "robots.txt:\n{}\nagents {:?} path {:?}", body, asked, path_str);
        }
    }

    /// SEMANTICS.md §1 "Lines", "Keys": comments, blank and unknown lines, sitemaps, indentation,
    /// LF/CRLF/CR endings, a BOM, key case, accepted typos, key suffixes and a missing colon change
    /// no verdict. Line numbers follow the reference's counting.
    #[test]
    fn formatting_never_changes_a_verdict(
        (items, styles) in file_strategy().prop_flat_map(|items| {
            let n = items.len();
            (Just(items), prop::collection::vec(style_strategy(), n))
        }),
        bom in prop::bool::weighted(0.2),
        final_ending in any::<bool>(),
        (asked, targets) in asked_strategy(),
        paths in prop::collection::vec(path_strategy(), 1..8),
    ) {
        let (plain, _) = render_plain(&items);
        let (styled, lines) = render_styled(&items, &styles, bom, final_ending);
        let plain_robots = RobotsTxt::parse(plain.as_bytes());
        let styled_robots = RobotsTxt::parse(&styled);
        for path in &paths {
            let path_str = std::str::from_utf8(path).expect("ASCII");
            let plain_v = plain_robots.check_path(asked, path_str);
            let styled_v = styled_robots.check_path(asked, path_str);
            prop_assert_eq!(
                plain_v.allowed, styled_v.allowed,
                "plain:\n{}\nstyled:\n{:?}\nagents {:?} path {:?}", plain, show(&styled), asked, path_str
            );
            let expected = model(&items, &lines, targets, path);
            prop_assert_eq!(
                &observed(&styled_v), &expected,
                "styled:\n{:?}\nagents {:?} path {:?}", show(&styled), asked, path_str
            );
        }
    }

    /// Parsing never panics on arbitrary bytes, and checking the result never panics either.
    #[test]
    fn arbitrary_bytes_never_panic(
        body in prop::collection::vec(any::<u8>(), 0..4096),
        agents in prop::collection::vec(agent_string(), 0..3),
        url in url_string(),
    ) {
        let robots = RobotsTxt::parse(&body);
        check_everything(&robots, &agents, &url);
    }

    /// Same, with bytes biased toward robots.txt text: keys, colons, wildcards, escapes, non-ASCII,
    /// NUL, BOMs, line endings and long runs.
    #[test]
    fn robots_like_bytes_never_panic(
        body in robots_like_bytes(),
        agents in prop::collection::vec(agent_string(), 0..3),
        urls in prop::collection::vec(url_string(), 1..4),
    ) {
        let robots = RobotsTxt::parse(&body);
        for url in &urls {
            check_everything(&robots, &agents, url);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// SEMANTICS.md §1 "Lines": a line keeps at most 16,663 bytes; the rest is dropped and the line
    /// is still parsed.
    #[test]
    fn long_lines_are_cut(n in prop_oneof![16_640..16_670usize, 0..40_000usize], crlf in any::<bool>()) {
        let key = "disallow: ";
        let mut body = format!("user-agent: *\n{key}/{}", "a".repeat(n));
        body.push_str(if crlf { "\r\n" } else { "\n" });
        body.push_str("allow: /b\n");
        let robots = RobotsTxt::parse(body.as_bytes());
        let path = format!("/{}", "a".repeat(n + 3));
        let v = robots.check_path(&["FooBot"], &path);
        let rule = v.rule.expect("the long rule matches");
        prop_assert_eq!(rule.line(), 2);
        prop_assert_eq!(rule.normalized_pattern().len(), (n + 1).min(16_663 - key.len()));
        prop_assert!(!v.allowed);
        // The next line is intact.
        let b = robots.check_path(&["FooBot"], "/b");
        prop_assert_eq!(b.rule.map(|r| r.line()), Some(3));
        prop_assert!(b.allowed);
    }
}
