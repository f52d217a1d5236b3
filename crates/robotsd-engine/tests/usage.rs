//! AI usage preferences (`docs/usage.md`): one named test per example of the texts implemented,
//! then the choices robotsd made where they are silent, then properties.
//!
//! - draft-ietf-aipref-attach-05 (19 August 2026), "Associating AI Usage Preferences with Content
//!   in HTTP": the `Content-Usage` rule of robots.txt;
//! - draft-ietf-aipref-vocab-08 (14 September 2026), "A Vocabulary For Expressing AI Usage
//!   Preferences": labels (`train-ai`, `ai-use`, `search`), the statement syntax, combining;
//! - Cloudflare's Content Signals Policy (contentsignals.org): `Content-Signal`.

use proptest::prelude::*;
use robotsd_engine::{
    DiagnosticKind, PercentDecoding, Preference, RobotsTxt, UsageSource, path_params_query,
};

use Preference::{Allowed as Y, Disallowed as N};
use UsageSource::{ContentSignal, ContentUsage};

/// `(source, category, preference, line)` for `agent` on `url`.
type Found = Vec<(UsageSource, String, Preference, u32)>;

fn usage_with(robots: &str, agent: &str, url: &str, decoding: PercentDecoding) -> Found {
    let parsed = RobotsTxt::parse(robots.as_bytes());
    let path = path_params_query(url);
    let verdict = parsed.check_path_with(&[agent], &path, decoding);
    verdict
        .usage(&path, decoding)
        .entries
        .into_iter()
        .map(|e| (e.source, e.category.to_owned(), e.preference, e.line))
        .collect()
}

fn usage(robots: &str, agent: &str, url: &str) -> Found {
    usage_with(robots, agent, url, PercentDecoding::Google)
}

fn pref(source: UsageSource, category: &str, preference: Preference, line: u32) -> Found {
    vec![(source, category.to_owned(), preference, line)]
}

fn diagnostics(robots: &str) -> Vec<(u32, DiagnosticKind, Option<String>)> {
    RobotsTxt::parse(robots.as_bytes())
        .diagnostics()
        .map(|d| (d.line, d.kind, d.key.map(|k| k.into_owned())))
        .filter(|(_, kind, _)| *kind != DiagnosticKind::UnsupportedKey)
        .collect()
}

// ---------------------------------------------------------------------------------------------
// draft-ietf-aipref-attach-05

/// §1.2: "a server might include the same directive in its robots.txt file".
#[test]
fn attach_1_2_file_wide_train_ai_n() {
    let robots = "User-Agent: *\nAllow: /\nContent-Usage: train-ai=n\n";
    assert_eq!(
        usage(robots, "AnyBot", "https://example.com/any/page"),
        pref(ContentUsage, "train-ai", N, 3)
    );
}

/// §3.4, Figure 2 and Table 1: the example file.
const ATTACH_EXAMPLE: &str = "User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y

User-Agent: ExampleBot
Allow: /
Content-Usage: train-ai=y
";

/// Table 1, row 1: `/test` may be crawled, with `train-ai=n`.
#[test]
fn attach_3_4_table_test_is_train_ai_n() {
    let verdict = RobotsTxt::parse(ATTACH_EXAMPLE.as_bytes());
    assert!(
        verdict
            .check(&["OtherBot"], "https://example.com/test")
            .allowed
    );
    assert_eq!(
        usage(ATTACH_EXAMPLE, "OtherBot", "https://example.com/test"),
        pref(ContentUsage, "train-ai", N, 4)
    );
}

/// Table 1, row 2: `/never/test` may not be crawled, and has no preference ("N/A").
#[test]
fn attach_3_4_table_never_test_is_not_crawled_and_has_none() {
    let parsed = RobotsTxt::parse(ATTACH_EXAMPLE.as_bytes());
    assert!(
        !parsed
            .check(&["OtherBot"], "https://example.com/never/test")
            .allowed
    );
    assert_eq!(
        usage(ATTACH_EXAMPLE, "OtherBot", "https://example.com/never/test"),
        vec![]
    );
}

/// Table 1, row 3: `/ai-ok/test` has `train-ai=y` (the longer path wins).
#[test]
fn attach_3_4_table_ai_ok_test_is_train_ai_y() {
    assert_eq!(
        usage(ATTACH_EXAMPLE, "OtherBot", "https://example.com/ai-ok/test"),
        pref(ContentUsage, "train-ai", Y, 5)
    );
}

/// §3.4: "A crawler that identifies as ExampleBot uses the second group": everything, `y`.
#[test]
fn attach_3_4_example_bot_uses_its_own_group() {
    for path in ["/test", "/never/test", "/ai-ok/test"] {
        let url = format!("https://example.com{path}");
        assert_eq!(
            usage(ATTACH_EXAMPLE, "ExampleBot", &url),
            pref(ContentUsage, "train-ai", Y, 9),
            "{path}"
        );
    }
}

/// §3.1: identical paths with conflicting preferences combine as vocab §5.1 says, "the
/// opposite of allow/disallow precedence".
#[test]
fn attach_3_1_identical_paths_combine_to_the_most_restrictive() {
    let robots =
        "User-Agent: *\nContent-Usage: /a/ train-ai=y\nAllow: /a/\nContent-Usage: /a/ train-ai=n\n";
    assert_eq!(
        usage(robots, "bot", "https://example.com/a/x"),
        pref(ContentUsage, "train-ai", N, 4)
    );
    // And for allow/disallow the same tie goes to allow.
    let rules = "User-Agent: *\nDisallow: /a/\nAllow: /a/\n";
    assert!(
        RobotsTxt::parse(rules.as_bytes())
            .check(&["bot"], "https://example.com/a/x")
            .allowed
    );
}

/// §3.1: "Content-Usage rules can be interleaved with Allow and Disallow rules": they neither
/// start nor end a group.
#[test]
fn attach_3_1_interleaved_lines_stay_in_their_group() {
    let robots = "User-Agent: a\nContent-Usage: train-ai=n\nUser-Agent: b\nDisallow: /x\nContent-Usage: search=n\nAllow: /\n";
    let parsed = RobotsTxt::parse(robots.as_bytes());
    assert_eq!(parsed.groups().count(), 1);
    for agent in ["a", "b"] {
        assert_eq!(
            usage(robots, agent, "https://example.com/y"),
            vec![
                (ContentUsage, "search".to_owned(), N, 5),
                (ContentUsage, "train-ai".to_owned(), N, 2),
            ],
            "{agent}"
        );
        assert!(!parsed.check(&[agent], "https://example.com/x").allowed);
    }
}

/// §3.2: the path ends at the first SP or HTAB; a value not starting with `/` has no path.
#[test]
fn attach_3_2_path_and_statement_are_split_at_whitespace() {
    let robots = "User-Agent: *\nContent-Usage: /a\ttrain-ai=n\nContent-Usage:train-ai=y\n";
    let parsed = RobotsTxt::parse(robots.as_bytes());
    let group = parsed.groups().next().expect("a group");
    let lines: Vec<_> = group
        .usage_lines()
        .map(|l| (l.path().map(|p| p.into_owned()), l.statement().into_owned()))
        .collect();
    assert_eq!(
        lines,
        [
            (Some("/a".to_owned()), "train-ai=n".to_owned()),
            (None, "train-ai=y".to_owned())
        ]
    );
    assert_eq!(
        usage(robots, "bot", "https://example.com/a/b"),
        pref(ContentUsage, "train-ai", N, 2)
    );
    assert_eq!(
        usage(robots, "bot", "https://example.com/b"),
        pref(ContentUsage, "train-ai", Y, 3)
    );
}

/// §3.1: paths use the same matching as allow/disallow: `*` and `$`, bytes counted encoded.
#[test]
fn attach_3_1_paths_match_as_allow_and_disallow_do() {
    let robots =
        "User-Agent: *\nContent-Usage: /*.pdf$ train-ai=n\nContent-Usage: /documents/ train-ai=y\n";
    // The longer pattern wins, whether it has wildcards or not: 11 bytes against 7, then 7
    // against 6.
    assert_eq!(
        usage(robots, "bot", "https://example.com/documents/a.pdf"),
        pref(ContentUsage, "train-ai", Y, 3)
    );
    let short =
        "User-Agent: *\nContent-Usage: /*.pdf$ train-ai=n\nContent-Usage: /docs/ train-ai=y\n";
    assert_eq!(
        usage(short, "bot", "https://example.com/docs/a.pdf"),
        pref(ContentUsage, "train-ai", N, 2)
    );
    assert_eq!(
        usage(robots, "bot", "https://example.com/x/report.pdf"),
        pref(ContentUsage, "train-ai", N, 2)
    );
    assert_eq!(
        usage(robots, "bot", "https://example.com/x/report.pdf?x"),
        vec![]
    );
    // `/caf%C3%A9` and `/café` are the same path, as for allow/disallow.
    let encoded = "User-Agent: *\nContent-Usage: /café train-ai=n\n";
    assert_eq!(
        usage(encoded, "bot", "https://example.com/caf%C3%A9/x"),
        pref(ContentUsage, "train-ai", N, 2)
    );
}

/// §3.2: "a statement of preference is processed as a sequence of bytes": an uppercase label is
/// not a key, so the statement fails to parse and states nothing (vocab §6.5.1).
#[test]
fn attach_3_2_and_vocab_uppercase_labels_fail_the_whole_statement() {
    let robots = "User-Agent: *\nContent-Usage: Train-AI=n, search=n\n";
    assert_eq!(usage(robots, "bot", "https://example.com/"), vec![]);
    assert_eq!(
        diagnostics(robots),
        [(2, DiagnosticKind::PreferenceSyntax, None)]
    );
}

// ---------------------------------------------------------------------------------------------
// draft-ietf-aipref-vocab-08 (14 September 2026; docs/usage.md says from which text)

/// §6: "train-ai=y, search=n" allows training, disallows search, the rest unknown.
#[test]
fn vocab_6_train_ai_y_search_n() {
    let robots = "User-Agent: *\nContent-Usage: train-ai=y, search=n\n";
    assert_eq!(
        usage(robots, "bot", "https://example.com/"),
        vec![
            (ContentUsage, "search".to_owned(), N, 2),
            (ContentUsage, "train-ai".to_owned(), Y, 2)
        ]
    );
}

/// §6.5.1: "train-ai=y, train-ai, search=n, search=\"n\"" leaves every preference unknown (the
/// last value of each key is a Boolean and a String).
#[test]
fn vocab_6_5_1_duplicated_keys_take_their_last_value() {
    let robots = "User-Agent: *\nContent-Usage: train-ai=y, train-ai, search=n, search=\"n\"\n";
    assert_eq!(usage(robots, "bot", "https://example.com/"), vec![]);
    assert_eq!(
        diagnostics(robots),
        [
            (
                2,
                DiagnosticKind::InvalidPreferenceValue,
                Some("train-ai".to_owned())
            ),
            (
                2,
                DiagnosticKind::InvalidPreferenceValue,
                Some("search".to_owned())
            ),
        ]
    );
}

/// §6.5.2: "train-ai;allow=n, train-ai=y" allows training; parameters are ignored.
#[test]
fn vocab_6_5_2_parameters_are_ignored() {
    let robots = "User-Agent: *\nContent-Usage: train-ai;allow=n, train-ai=y\n";
    assert_eq!(
        usage(robots, "bot", "https://example.com/"),
        pref(ContentUsage, "train-ai", Y, 2)
    );
}

/// §6.5.2: "train-ai;has;parameters=\"?\";" carries parameters with an unknown preference. As
/// printed, the final `;` introduces no parameter, so RFC 9651 fails the whole statement: unknown
/// either way.
#[test]
fn vocab_6_5_2_parameters_on_an_unknown_preference() {
    let robots = "User-Agent: *\nContent-Usage: train-ai;has;parameters=\"?\";\n";
    assert_eq!(usage(robots, "bot", "https://example.com/"), vec![]);
    let without_final = "User-Agent: *\nContent-Usage: train-ai;has;parameters=\"?\"\n";
    assert_eq!(usage(without_final, "bot", "https://example.com/"), vec![]);
    assert_eq!(
        diagnostics(without_final),
        [(
            2,
            DiagnosticKind::InvalidPreferenceValue,
            Some("train-ai".to_owned())
        )]
    );
}

/// `(category, preference, known)` of every entry for `bot` at the root of `robots`.
fn known(robots: &str) -> Vec<(String, Preference, bool)> {
    let parsed = RobotsTxt::parse(robots.as_bytes());
    let verdict = parsed.check(&["bot"], "https://example.com/");
    verdict
        .usage("/", PercentDecoding::Google)
        .entries
        .iter()
        .map(|e| (e.category.to_string(), e.preference, e.is_known()))
        .collect()
}

/// §6.4: unknown labels are ignored when applying preferences; robotsd reports them, flagged, so
/// that files written for earlier revisions (`train-genai`, `bots`) are still visible.
#[test]
fn vocab_6_4_unknown_labels_are_reported_and_flagged() {
    let robots = "User-Agent: *\nContent-Usage: train-genai=n, train-ai=y\n";
    let found = known(robots);
    assert_eq!(
        found,
        [
            ("train-ai".into(), Y, true),
            ("train-genai".into(), N, false)
        ]
    );
    assert_eq!(
        diagnostics(robots),
        [(
            2,
            DiagnosticKind::UnknownPreferenceLabel,
            Some("train-genai".to_owned())
        )]
    );
}

/// §4: three categories, `train-ai`, `ai-use` (new in -08: input to a generative model that the
/// user did not provide) and `search`, each known, none inheriting from another (§5).
#[test]
fn vocab_4_ai_use_is_a_category_of_its_own() {
    let robots = "User-Agent: *\nContent-Usage: ai-use=n, search=y\n";
    let found = known(robots);
    assert_eq!(
        found,
        [("ai-use".into(), N, true), ("search".into(), Y, true)]
    );
    assert_eq!(diagnostics(robots), []);
}

/// §5.1: with several statements, a category is disallowed if any disallows it, else allowed if
/// any allows it.
#[test]
fn vocab_5_1_the_most_restrictive_preference_applies() {
    let robots = "User-Agent: *\nContent-Usage: train-ai=y, search=y\nContent-Usage: train-ai=n\nContent-Usage: search=y\n";
    assert_eq!(
        usage(robots, "bot", "https://example.com/"),
        vec![
            (ContentUsage, "search".to_owned(), Y, 2),
            (ContentUsage, "train-ai".to_owned(), N, 3)
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Content-Signal (Cloudflare's Content Signals Policy)

/// The policy's robots.txt line: `search=yes, ai-train=no`, with `ai-input` left unknown.
#[test]
fn content_signals_search_yes_ai_train_no() {
    let robots = "User-Agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n";
    assert_eq!(
        usage(robots, "bot", "https://example.com/page"),
        vec![
            (ContentSignal, "ai-train".to_owned(), N, 2),
            (ContentSignal, "search".to_owned(), Y, 2),
        ]
    );
}

/// contentsignals.org's example file: the policy's comment block, then the signals in the `*`
/// group. All three signals stated; (a) `yes` grants, (b) `no` restricts.
#[test]
fn content_signals_policy_example_file() {
    let robots = "# As a condition of accessing this website, you agree to abide by
# the following content signals:
# (a) If a content-signal = yes, you may collect content for the
# corresponding use.
# (b) If a content-signal = no, you may not collect content for
# the corresponding use.
# (c) If the website operator does not include a content signal
# for a corresponding use, the website operator neither grants nor
# restricts permission via content signal with respect to the
# corresponding use.
User-Agent: *
Content-Signal: ai-train=no, search=yes, ai-input=yes
Allow: /
";
    assert_eq!(
        usage(robots, "AnyBot", "https://example.com/article"),
        vec![
            (ContentSignal, "ai-input".to_owned(), Y, 12),
            (ContentSignal, "ai-train".to_owned(), N, 12),
            (ContentSignal, "search".to_owned(), Y, 12),
        ]
    );
    assert_eq!(diagnostics(robots), []);
}

/// (c): a signal the file does not include is neither granted nor restricted: absent.
#[test]
fn content_signals_policy_c_an_absent_signal_is_unknown() {
    let robots = "User-Agent: *\nContent-Signal: search=yes\n";
    let found = usage(robots, "bot", "https://example.com/");
    assert_eq!(found, pref(ContentSignal, "search", Y, 2));
    assert!(
        !found
            .iter()
            .any(|(_, c, _, _)| c == "ai-train" || c == "ai-input")
    );
}

/// Cloudflare's managed robots.txt since 2026: no spaces, and a `use` key that is not a yes/no
/// signal. It is accepted without a finding, and not reported as a preference.
#[test]
fn cloudflare_managed_file_with_a_use_key() {
    let robots = "User-agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\nAllow: /\n";
    assert_eq!(
        usage(robots, "bot", "https://example.com/"),
        vec![
            (ContentSignal, "ai-train".to_owned(), N, 2),
            (ContentSignal, "search".to_owned(), Y, 2),
        ]
    );
    assert_eq!(diagnostics(robots), []);
    // Any other value of `use` is flagged like any value that is not a signal.
    let odd = "User-agent: *\nContent-Signal: use=maybe\n";
    assert_eq!(
        diagnostics(odd),
        [(
            2,
            DiagnosticKind::InvalidPreferenceValue,
            Some("use".to_owned())
        )]
    );
}

/// The two vocabularies are reported apart, never merged: both have a `search`.
#[test]
fn content_signal_and_content_usage_are_kept_apart() {
    let robots = "User-Agent: *\nContent-Signal: search=yes\nContent-Usage: search=n\n";
    assert_eq!(
        usage(robots, "bot", "https://example.com/"),
        vec![
            (ContentUsage, "search".to_owned(), N, 3),
            (ContentSignal, "search".to_owned(), Y, 2),
        ]
    );
}

/// Each vocabulary has its own values: `y`/`n` is not a content signal, `yes`/`no` is not a
/// Content-Usage preference.
#[test]
fn each_vocabulary_keeps_its_own_values() {
    let robots = "User-Agent: *\nContent-Signal: search=y\nContent-Usage: train-ai=no\n";
    assert_eq!(usage(robots, "bot", "https://example.com/"), vec![]);
    assert_eq!(
        diagnostics(robots),
        [
            (
                2,
                DiagnosticKind::InvalidPreferenceValue,
                Some("search".to_owned())
            ),
            (
                3,
                DiagnosticKind::InvalidPreferenceValue,
                Some("train-ai".to_owned())
            ),
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Group scoping: the preferences of the groups that decided the verdict, and only those.

/// A preference in the `*` group does not reach an agent with a group of its own.
#[test]
fn a_named_group_does_not_inherit_the_global_groups_preferences() {
    let robots = "User-agent: *\nContent-Usage: train-ai=n\nDisallow: /private\n\nUser-agent: NamedBot\nAllow: /\n";
    assert_eq!(usage(robots, "NamedBot", "https://example.com/x"), vec![]);
    assert_eq!(
        usage(robots, "OtherBot", "https://example.com/x"),
        pref(ContentUsage, "train-ai", N, 2)
    );
}

/// A preference line is not a rule for grouping (Google's reference ignores it, and verdicts
/// must stay Google's): `user-agent` lines separated only by preference lines form one group,
/// whose preferences they share. attach-05's grammar would end the group there, and the second
/// agent's verdict could then differ from Google's (`docs/usage.md`).
#[test]
fn agents_separated_only_by_preference_lines_share_one_group() {
    let robots = "User-agent: *\nContent-Usage: train-ai=n\n\nUser-agent: NamedBot\nDisallow: /x\n";
    let parsed = RobotsTxt::parse(robots.as_bytes());
    assert_eq!(parsed.groups().count(), 1);
    assert!(!parsed.check(&["OtherBot"], "https://example.com/x").allowed);
    assert_eq!(
        usage(robots, "NamedBot", "https://example.com/y"),
        pref(ContentUsage, "train-ai", N, 2)
    );
}

/// A named agent's own preference applies to it, not to others.
#[test]
fn a_named_groups_preference_is_its_own() {
    let robots =
        "User-agent: NamedBot\nContent-Usage: train-ai=y\nAllow: /\n\nUser-agent: *\nDisallow:\n";
    assert_eq!(
        usage(robots, "namedbot", "https://example.com/x"),
        pref(ContentUsage, "train-ai", Y, 2)
    );
    assert_eq!(usage(robots, "OtherBot", "https://example.com/x"), vec![]);
}

/// Groups naming the same agent are merged for preferences as for rules.
#[test]
fn groups_naming_one_agent_merge_their_preferences() {
    let robots = "User-agent: a\nContent-Usage: train-ai=y\n\nUser-agent: b\nDisallow: /b\n\nUser-agent: a\nContent-Usage: train-ai=n, search=y\n";
    assert_eq!(
        usage(robots, "a", "https://example.com/x"),
        vec![
            (ContentUsage, "search".to_owned(), Y, 8),
            (ContentUsage, "train-ai".to_owned(), N, 8),
        ]
    );
}

/// A path-scoped line beats a file-wide one where it matches, and only there; a file-wide line
/// counts as `/`, so a `/` line ties with it.
#[test]
fn path_scoped_lines_beat_file_wide_ones_where_they_match() {
    let robots = "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /blog/ train-ai=y\nContent-Usage: / train-ai=y\n";
    assert_eq!(
        usage(robots, "bot", "https://example.com/blog/post"),
        pref(ContentUsage, "train-ai", Y, 3)
    );
    assert_eq!(
        usage(robots, "bot", "https://example.com/shop"),
        pref(ContentUsage, "train-ai", N, 2)
    );
}

/// The line that wins replaces the whole statement of the shorter ones: a category it does not
/// mention is unknown there, as the draft's "same path prefix matching rules" imply.
#[test]
fn the_longest_match_decides_every_category() {
    let robots =
        "User-agent: *\nContent-Usage: train-ai=n, search=y\nContent-Usage: /news/ search=n\n";
    assert_eq!(
        usage(robots, "bot", "https://example.com/news/1"),
        pref(ContentUsage, "search", N, 3)
    );
}

/// Several lines for one category at the same length: `n` wins, from its first line.
#[test]
fn several_lines_for_one_category_combine() {
    let robots = "User-agent: *\nContent-Usage: /a train-ai=y\nContent-Usage: /a train-ai=n\nContent-Usage: /a train-ai=n\nContent-Usage: /a train-ai=y\n";
    assert_eq!(
        usage(robots, "bot", "https://example.com/a"),
        pref(ContentUsage, "train-ai", N, 3)
    );
    let all_y = "User-agent: *\nContent-Usage: /a train-ai=y\nContent-Usage: /b train-ai=n\nContent-Usage: /a train-ai=y\n";
    assert_eq!(
        usage(all_y, "bot", "https://example.com/a"),
        pref(ContentUsage, "train-ai", Y, 2)
    );
}

/// A statement that fails to parse still takes part as the longest match, stating nothing.
#[test]
fn an_unparsable_longer_line_leaves_its_paths_unknown() {
    let robots = "User-agent: *\nContent-Usage: train-ai=n\nContent-Usage: /x/ train-ai=N\n";
    assert_eq!(usage(robots, "bot", "https://example.com/x/1"), vec![]);
    assert_eq!(
        usage(robots, "bot", "https://example.com/y"),
        pref(ContentUsage, "train-ai", N, 2)
    );
}

/// Before any group, a preference line belongs to no one.
#[test]
fn a_line_before_any_group_is_ignored() {
    let robots = "Content-Usage: train-ai=n\nUser-agent: *\nAllow: /\n";
    assert_eq!(usage(robots, "bot", "https://example.com/"), vec![]);
    assert_eq!(
        diagnostics(robots),
        [(1, DiagnosticKind::RuleOutsideGroup, None)]
    );
}

/// In the RFC 9309 mode, paths are compared decoded, as the verdict's are.
#[test]
fn the_rfc_mode_decodes_preference_paths_too() {
    let robots = "User-agent: *\nContent-Usage: /%70ress/ train-ai=y\n";
    assert_eq!(usage(robots, "bot", "https://example.com/press/1"), vec![]);
    assert_eq!(
        usage_with(
            robots,
            "bot",
            "https://example.com/press/1",
            PercentDecoding::Rfc9309
        ),
        pref(ContentUsage, "train-ai", Y, 2)
    );
}

/// No group for the agent and no `*` group: no preferences.
#[test]
fn no_group_no_preferences() {
    let robots = "User-agent: a\nContent-Usage: train-ai=n\n";
    assert_eq!(usage(robots, "b", "https://example.com/"), vec![]);
}

// ---------------------------------------------------------------------------------------------
// Properties

/// A small robots.txt line: rules, agents and blank lines over a tiny alphabet.
fn rule_line() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "/[ab/*$]{0,4}".prop_map(|p| format!("Disallow: {p}")),
        3 => "/[ab/*$]{0,4}".prop_map(|p| format!("Allow: {p}")),
        1 => "(a|b|\\*)".prop_map(|a| format!("User-agent: {a}")),
        1 => Just(String::new()),
    ]
}

/// A preference line of either kind, path-scoped or not, well-formed or not.
fn usage_line() -> impl Strategy<Value = String> {
    let statement = prop_oneof![
        Just("train-ai=n".to_owned()),
        Just("train-ai=y, search=n".to_owned()),
        Just("Train-AI=n".to_owned()),
        Just("search=yes, ai-train=no".to_owned()),
        Just("".to_owned()),
        "[a-z=, ]{0,8}",
    ];
    (
        prop_oneof![
            Just("Content-Usage"),
            Just("Content-Signal"),
            Just("content-usage")
        ],
        proptest::option::of("/[ab/*$]{0,4}"),
        statement,
    )
        .prop_map(|(key, path, statement)| match path {
            Some(path) => format!("{key}: {path} {statement}"),
            None => format!("{key}: {statement}"),
        })
}

proptest! {
    /// Adding preference lines anywhere never changes a verdict or the line that decided it
    /// (line numbers compared in the file without them).
    #[test]
    fn preference_lines_never_change_a_verdict(
        lines in proptest::collection::vec(rule_line(), 1..10),
        inserts in proptest::collection::vec((any::<prop::sample::Index>(), usage_line()), 0..5),
        agent in "(a|b|c)",
        path in "/[ab/$]{0,5}",
    ) {
        let plain = lines.join("\n");
        // Insert, remembering where each original line went.
        let mut with: Vec<(Option<usize>, String)> =
            lines.iter().cloned().enumerate().map(|(i, l)| (Some(i + 1), l)).collect();
        for (at, line) in inserts {
            let at = at.index(with.len() + 1);
            with.insert(at, (None, line));
        }
        let original_line = |n: u32| with[n as usize - 1].0.map(|l| l as u32);
        let text = with.iter().map(|(_, l)| l.as_str()).collect::<Vec<_>>().join("\n");
        let url = format!("https://example.com{path}");
        let a = RobotsTxt::parse(plain.as_bytes());
        let b = RobotsTxt::parse(text.as_bytes());
        let (va, vb) = (a.check(&[&agent], &url), b.check(&[&agent], &url));
        prop_assert_eq!(va.allowed, vb.allowed);
        prop_assert_eq!(va.rule.map(|r| r.line()), vb.rule.and_then(|r| original_line(r.line())));
        prop_assert_eq!(a.groups().count(), b.groups().count());
        // And removing them again: the same file parses to the same rules.
        prop_assert!(!a.has_usage_lines());
    }

    /// What is reported is consistent: every entry's line is a preference line of a group that
    /// applied, stating that value for that category, and nothing is reported for a URL that
    /// may not be fetched.
    #[test]
    fn reported_preferences_come_from_applied_lines(
        lines in proptest::collection::vec(prop_oneof![rule_line(), usage_line()], 1..12),
        agent in "(a|b|c)",
        path in "/[ab/$]{0,5}",
    ) {
        let text = format!("User-agent: *\n{}", lines.join("\n"));
        let robots = RobotsTxt::parse(text.as_bytes());
        let url = format!("https://example.com{path}");
        let path = path_params_query(&url);
        let verdict = robots.check_path(&[&agent], &path);
        let usage = verdict.usage(&path, PercentDecoding::Google);
        if !verdict.allowed {
            prop_assert!(usage.is_empty());
        }
        let applied: Vec<_> = verdict.groups.iter().flat_map(|g| g.groups()).flat_map(|g| g.usage_lines()).collect();
        for entry in &usage.entries {
            let line = applied.iter().find(|l| l.line() == entry.line);
            prop_assert!(line.is_some(), "line {} is not an applied preference line", entry.line);
            let line = line.unwrap();
            prop_assert_eq!(line.source(), entry.source);
            prop_assert!(line.preferences().any(|(c, p)| c == entry.category && p == entry.preference));
        }
    }
}
