//! The example tables of Google's robots.txt documentation (`../shared/spec/`), one named test per
//! row (or per example URL of a row).
//!
//! Sources: `004_3444e0c33b3a8703.txt` (English, the 2019 specification) and
//! `003_ae99db1fb1d5756d.txt` (Simplified Chinese, the current RFC 9309-era text, newest). Where
//! the two list different examples for a row, both are covered. Where a document has an obvious
//! typo, the test follows `SEMANTICS.md` §1 and the English original, and says so in a comment.
//!
//! Not covered here: the robots.txt location table (which origin a file covers) and the HTTP
//! status table are service concerns (SEMANTICS.md §2–§5).

use robotsd_engine::{Directive, RobotsTxt, Verdict};

/// Checks `path` (as found on `https://example.com`) for `agents`.
fn check_on_example_com<'a>(robots: &'a RobotsTxt, agents: &[&str], path: &str) -> Verdict<'a> {
    robots.check(agents, &format!("https://example.com{path}"))
}

/// The verdict was decided by the rule `directive: pattern` on `line`.
#[track_caller]
fn assert_decided_by(verdict: &Verdict<'_>, directive: Directive, pattern: &str, line: u32) {
    let rule = verdict.rule.as_ref().unwrap_or_else(|| {
        panic!("expected `{directive:?}: {pattern}` (line {line}) to decide, but no rule matched")
    });
    assert_eq!(
        (rule.directive(), rule.pattern().as_ref(), rule.line()),
        (directive, pattern, line),
        "deciding rule"
    );
    assert_eq!(
        verdict.allowed,
        directive == Directive::Allow,
        "verdict must follow the deciding rule"
    );
}

/// No rule matched, so the URL is allowed.
#[track_caller]
fn assert_no_rule_matched(verdict: &Verdict<'_>) {
    assert!(
        verdict.rule.is_none(),
        "expected no rule to match, but {:?} did",
        verdict.rule
    );
    assert!(verdict.allowed, "no matching rule means allowed");
}

/// The `user-agent` lines (value, line) of the groups that applied; `None` when no group applied.
fn applied_agent_lines(verdict: &Verdict<'_>) -> Option<Vec<(String, u32)>> {
    verdict
        .groups
        .as_ref()
        .map(|g| g.agents().map(|a| (a.value.into_owned(), a.line)).collect())
}

fn agent_lines(lines: &[(&str, u32)]) -> Option<Vec<(String, u32)>> {
    Some(lines.iter().map(|&(v, l)| (v.to_owned(), l)).collect())
}

// ---------------------------------------------------------------------------------------------
// 1. "Example path matches" (004 "URL matching based on path values"; 003 "基于路径值的网址匹配").
// ---------------------------------------------------------------------------------------------

/// `pattern` matches `path`: as the only rule (`disallow`, line 2 of a `*` group) it decides.
#[track_caller]
fn assert_pattern_matches(pattern: &str, path: &str) {
    let robots = RobotsTxt::parse(format!("user-agent: *\ndisallow: {pattern}\n").as_bytes());
    let verdict = check_on_example_com(&robots, &["anybot"], path);
    assert_decided_by(&verdict, Directive::Disallow, pattern, 2);
}

/// `pattern` does not match `path`: as the only rule it decides nothing.
#[track_caller]
fn assert_pattern_does_not_match(pattern: &str, path: &str) {
    let robots = RobotsTxt::parse(format!("user-agent: *\ndisallow: {pattern}\n").as_bytes());
    let verdict = check_on_example_com(&robots, &["anybot"], path);
    assert_no_rule_matched(&verdict);
}

/// One module per row (the path pattern), with one test per listed matching path
/// (`<row>::matches::<path>`) and per listed non-matching path (`<row>::does_not_match::<path>`).
macro_rules! path_examples {
    ($(
        $(#[$row_meta:meta])*
        $row:ident: $pattern:literal {
            matches: [$($(#[$m_meta:meta])* $m:ident: $m_path:literal),* $(,)?],
            does_not_match: [$($(#[$n_meta:meta])* $n:ident: $n_path:literal),* $(,)?] $(,)?
        }
    )*) => {$(
        $(#[$row_meta])*
        mod $row {
            #[allow(unused_imports)]
            use super::*;

            mod matches {
                #[allow(unused_imports)]
                use super::*;
                $(
                    $(#[$m_meta])*
                    #[test]
                    fn $m() {
                        assert_pattern_matches($pattern, $m_path);
                    }
                )*
            }

            mod does_not_match {
                #[allow(unused_imports)]
                use super::*;
                $(
                    $(#[$n_meta])*
                    #[test]
                    fn $n() {
                        assert_pattern_does_not_match($pattern, $n_path);
                    }
                )*
            }
        }
    )*};
}

mod path_matching {
    use super::*;

    path_examples! {
        /// `/`: "Matches the root and any lower level URL." The row lists no example URLs; these
        /// are the root and a lower-level URL from the other rows.
        slash: "/" {
            matches: [
                root: "/",
                fish_slash_salmon_html: "/fish/salmon.html",
                query_id_fish: "/?id=fish",
            ],
            does_not_match: [],
        }

        /// `/*`: "Equivalent to `/`. The trailing wildcard is ignored." No example URLs listed.
        slash_star: "/*" {
            matches: [
                root: "/",
                fish_slash_salmon_html: "/fish/salmon.html",
                query_id_fish: "/?id=fish",
            ],
            does_not_match: [],
        }

        /// `/$` (003 only): "Matches only the root. Any lower level URL is allowed to be
        /// crawled." No example URLs listed; the lower-level ones are from the other rows.
        slash_dollar: "/$" {
            matches: [
                root: "/",
            ],
            does_not_match: [
                fish: "/fish",
                fish_slash_salmon_html: "/fish/salmon.html",
                page_htm: "/page.htm",
            ],
        }

        /// `/fish`: "Matches any path that starts with `/fish`. Note that the matching is
        /// case-sensitive."
        fish: "/fish" {
            matches: [
                fish: "/fish",
                fish_dot_html: "/fish.html",
                fish_slash_salmon_html: "/fish/salmon.html",
                fishheads: "/fishheads",
                fishheads_slash_yummy_html: "/fishheads/yummy.html",
                fish_dot_php_query_id_anything: "/fish.php?id=anything",
            ],
            does_not_match: [
                capital_fish_dot_asp: "/Fish.asp",
                catfish: "/catfish",
                query_id_fish: "/?id=fish",
                // 003 only.
                desert_slash_fish: "/desert/fish",
            ],
        }

        /// `/fish*`: "Equivalent to `/fish`. The trailing wildcard is ignored." (003 repeats its
        /// list of non-matches twice; it is covered once.)
        fish_star: "/fish*" {
            matches: [
                fish: "/fish",
                fish_dot_html: "/fish.html",
                fish_slash_salmon_html: "/fish/salmon.html",
                fishheads: "/fishheads",
                fishheads_slash_yummy_html: "/fishheads/yummy.html",
                fish_dot_php_query_id_anything: "/fish.php?id=anything",
            ],
            does_not_match: [
                capital_fish_dot_asp: "/Fish.asp",
                catfish: "/catfish",
                query_id_fish: "/?id=fish",
                // 003 only.
                desert_slash_fish: "/desert/fish",
            ],
        }

        /// `/fish/`: "The trailing slash means this matches anything in this folder."
        fish_slash: "/fish/" {
            matches: [
                // Typo in 003: it lists `/fish` as a match (and again as a non-match). The
                // English 004 lists `/fish/`, which is what a prefix match gives; `/fish` is
                // covered under `does_not_match`.
                fish_slash: "/fish/",
                fish_slash_query_id_anything: "/fish/?id=anything",
                // 004.
                fish_slash_salmon_htm: "/fish/salmon.htm",
                // 003.
                fish_slash_salmon_html: "/fish/salmon.html",
            ],
            does_not_match: [
                fish: "/fish",
                fish_dot_html: "/fish.html",
                // 003 only.
                animals_slash_fish_slash: "/animals/fish/",
                capital_fish_slash_capital_salmon_dot_asp: "/Fish/Salmon.asp",
            ],
        }

        /// `/*.php`: "Matches any path that contains `.php`."
        star_dot_php: "/*.php" {
            matches: [
                // 003 only.
                index_php: "/index.php",
                filename_php: "/filename.php",
                folder_slash_filename_php: "/folder/filename.php",
                folder_slash_filename_php_query_parameters: "/folder/filename.php?parameters",
                folder_slash_any_php_file_html: "/folder/any.php.file.html",
                // As in 004. 003 writes `//filename.php/`, apparently a typo for this; it is
                // covered as written below (it matches too).
                filename_php_slash: "/filename.php/",
                double_slash_filename_php_slash: "//filename.php/",
            ],
            does_not_match: [
                // "`/` (even if it maps to /index.php)".
                root_even_if_it_maps_to_index_php: "/",
                windows_dot_capital_php: "/windows.PHP",
            ],
        }

        /// `/*.php$`: "Matches any path that ends with `.php`."
        star_dot_php_dollar: "/*.php$" {
            matches: [
                filename_php: "/filename.php",
                folder_slash_filename_php: "/folder/filename.php",
            ],
            does_not_match: [
                filename_php_query_parameters: "/filename.php?parameters",
                filename_php_slash: "/filename.php/",
                filename_php5: "/filename.php5",
                windows_dot_capital_php: "/windows.PHP",
            ],
        }

        /// `/fish*.php`: "Matches any path that contains `/fish` and `.php`, in that order."
        fish_star_dot_php: "/fish*.php" {
            matches: [
                fish_dot_php: "/fish.php",
                fishheads_slash_catfish_php_query_parameters: "/fishheads/catfish.php?parameters",
            ],
            does_not_match: [
                capital_fish_dot_capital_php: "/Fish.PHP",
            ],
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 2. "Order of precedence for rules" (004 "Sample situations"; 003 "规则的优先顺序").
// ---------------------------------------------------------------------------------------------

/// Under `user-agent: *` (line 1), the two `rules` (lines 2 and 3) decide `url` through
/// `expected` — in the order the document gives them and reversed (rule order is irrelevant).
#[track_caller]
fn assert_precedence(url: &str, rules: [&str; 2], expected: (Directive, &str)) {
    let (directive, pattern) = expected;
    let written = match directive {
        Directive::Allow => format!("allow: {pattern}"),
        Directive::Disallow => format!("disallow: {pattern}"),
    };
    let position = rules
        .iter()
        .position(|r| *r == written)
        .expect("the expected rule is one of the two");
    for (order, reversed) in [("as written", false), ("reversed", true)] {
        let (first, second) = if reversed {
            (rules[1], rules[0])
        } else {
            (rules[0], rules[1])
        };
        let robots = RobotsTxt::parse(format!("user-agent: *\n{first}\n{second}\n").as_bytes());
        let verdict = robots.check(&["anybot"], url);
        let line = if (position == 1) == reversed { 2 } else { 3 };
        let rule = verdict
            .rule
            .as_ref()
            .unwrap_or_else(|| panic!("{order}: no rule matched {url}"));
        assert_eq!(
            (rule.directive(), rule.pattern().as_ref(), rule.line()),
            (directive, pattern, line),
            "{order}: deciding rule for {url}"
        );
        assert_eq!(
            verdict.allowed,
            directive == Directive::Allow,
            "{order}: verdict for {url}"
        );
    }
}

mod precedence {
    use super::*;

    /// "Applicable rule: `allow: /p`, because it's more specific."
    ///
    /// Typo in 003: the URL is given as `http://www.example.com/`, which `allow: /p` does not
    /// match (`disallow: /` would decide). 004 gives `http://example.com/page`, used here.
    #[test]
    fn page_allow_p_beats_disallow_root() {
        assert_precedence(
            "http://example.com/page",
            ["allow: /p", "disallow: /"],
            (Directive::Allow, "/p"),
        );
    }

    /// "Applicable rule: `allow: /folder`, because in case of conflicting rules, Google uses the
    /// least restrictive rule."
    #[test]
    fn folder_page_equal_allow_and_disallow_folder_allow_wins() {
        assert_precedence(
            "https://example.com/folder/page",
            ["allow: /folder", "disallow: /folder"],
            (Directive::Allow, "/folder"),
        );
    }

    /// "Applicable rule: `disallow: /*.htm`, because it's longer and it matches more characters
    /// in the URL, so it's more specific." (003.) The 2019 English text (004) says "Verdict:
    /// undefined"; SEMANTICS.md §1 (the reference) counts `*` in the length: 6 bytes beat 5.
    #[test]
    fn page_htm_disallow_star_htm_beats_allow_page() {
        assert_precedence(
            "https://example.com/page.htm",
            ["allow: /page", "disallow: /*.htm"],
            (Directive::Disallow, "/*.htm"),
        );
    }

    /// 003 only: "Applicable rule: `allow: /page`, because in case of conflicting rules, Google
    /// uses the least restrictive rule." (`/page` and `/*.ph` are both 5 bytes long.)
    #[test]
    fn page_php5_equal_length_allow_page_beats_disallow_star_ph() {
        assert_precedence(
            "https://example.com/page.php5",
            ["allow: /page", "disallow: /*.ph"],
            (Directive::Allow, "/page"),
        );
    }

    /// "Applicable rule: `allow: /$`, because it's more specific."
    #[test]
    fn root_allow_slash_dollar_beats_disallow_root() {
        assert_precedence(
            "https://example.com/",
            ["allow: /$", "disallow: /"],
            (Directive::Allow, "/$"),
        );
    }

    /// Typo in 003: it names `allow: /p` (not one of the row's rules) as the applicable rule,
    /// and its URL has a trailing tab. Its own reason ("the allow rule only applies to the root
    /// URL") and 004 ("Verdict: disallow") mean `disallow: /` decides.
    #[test]
    fn page_htm_disallow_root_because_allow_slash_dollar_is_root_only() {
        assert_precedence(
            "https://example.com/page.htm",
            ["allow: /$", "disallow: /"],
            (Directive::Disallow, "/"),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 3. "Order of precedence for user agents", example 1 (004 "Group followed per crawler"; 003
//    "user-agent 字段的匹配情况").
// ---------------------------------------------------------------------------------------------

/// The document's file, with each `(group n)` placeholder replaced by a distinguishing rule
/// `disallow: /group-n` (group n starts on line 3n-2, its rule is on line 3n-1).
const GROUP_SELECTION: &str = "\
user-agent: googlebot-news
disallow: /group-1

user-agent: *
disallow: /group-2

user-agent: googlebot
disallow: /group-3
";

/// A crawler answering to `agents` follows group `expected` (1, 2 or 3) and only that group.
#[track_caller]
fn assert_follows_group(agents: &[&str], expected: u32) {
    let robots = RobotsTxt::parse(GROUP_SELECTION.as_bytes());
    let group_agents = ["googlebot-news", "*", "googlebot"];
    for n in 1..=3 {
        let path = format!("/group-{n}");
        let verdict = check_on_example_com(&robots, agents, &path);
        if n == expected {
            assert_decided_by(&verdict, Directive::Disallow, &path, 3 * n - 1);
        } else {
            assert_no_rule_matched(&verdict);
        }
        let groups = verdict.groups.as_ref().expect("a group applies");
        assert_eq!(groups.is_global(), expected == 2, "is the * group");
        assert_eq!(
            applied_agent_lines(&verdict),
            agent_lines(&[(group_agents[expected as usize - 1], 3 * expected - 2)]),
            "applied group"
        );
    }
}

mod group_selection {
    use super::*;

    /// Googlebot News: "googlebot-news follows group 1, because group 1 is the most specific
    /// group."
    #[test]
    fn googlebot_news_follows_group_1() {
        assert_follows_group(&["googlebot-news"], 1);
    }

    /// Googlebot (web): "googlebot follows group 3."
    #[test]
    fn googlebot_web_follows_group_3() {
        assert_follows_group(&["googlebot"], 3);
    }

    /// 003 only. Googlebot Storebot: "Storebot-Google follows group 2, because there is no
    /// specific Storebot-Google group."
    #[test]
    fn storebot_google_follows_group_2() {
        assert_follows_group(&["Storebot-Google"], 2);
    }

    /// 004 only (the 2019 text). Googlebot Images: "The group followed is group 3. There is no
    /// specific `googlebot-images` group, so the more generic group is followed." The engine
    /// never reduces an agent (SEMANTICS.md §1): this is a crawler that answers to both
    /// `googlebot-image` and `googlebot`, asked about as such.
    #[test]
    fn googlebot_images_answering_to_googlebot_follows_group_3() {
        assert_follows_group(&["googlebot-image", "googlebot"], 3);
    }

    /// Not a row: what the row above relies on. Asked as `googlebot-image` alone, the engine
    /// does not fall back to `googlebot` (agents are matched exactly), so `*` applies.
    #[test]
    fn googlebot_image_alone_is_not_reduced_to_googlebot() {
        assert_follows_group(&["googlebot-image"], 2);
    }

    /// Googlebot News (when crawling images): "When crawling images, googlebot-news follows
    /// group 1. googlebot-news doesn't crawl the images for Google Images, so it only follows
    /// group 1." The crawler identifies as `googlebot-news`.
    #[test]
    fn googlebot_news_crawling_images_follows_group_1() {
        assert_follows_group(&["googlebot-news"], 1);
    }

    /// The same row, with the crawler also answering to `googlebot-image`: there is no
    /// `googlebot-image` group, so still group 1 only (neither `*` nor `googlebot` joins in).
    #[test]
    fn googlebot_news_crawling_images_also_answering_to_googlebot_image_follows_group_1() {
        assert_follows_group(&["googlebot-image", "googlebot-news"], 1);
    }

    /// Otherbot (web): "Other Google crawlers follow group 2."
    #[test]
    fn otherbot_web_follows_group_2() {
        assert_follows_group(&["otherbot"], 2);
    }

    /// Otherbot (news): "Other Google crawlers that crawl news content but don't identify as
    /// googlebot-news follow group 2. Even if there is an entry for a related crawler, it is
    /// only valid if it is specifically matching."
    #[test]
    fn otherbot_news_follows_group_2() {
        assert_follows_group(&["otherbot-news"], 2);
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Group merging: 004 example 2; 003 "规则分组".
// ---------------------------------------------------------------------------------------------

const MERGING: &str = "\
user-agent: googlebot-news
disallow: /fish

user-agent: *
disallow: /carrots

user-agent: googlebot-news
disallow: /shrimp
";

/// How the document says crawlers see `MERGING`.
const MERGED: &str = "\
user-agent: googlebot-news
disallow: /fish
disallow: /shrimp

user-agent: *
disallow: /carrots
";

mod group_merging {
    use super::*;

    #[test]
    fn googlebot_news_disallowed_fish_from_first_group() {
        let robots = RobotsTxt::parse(MERGING.as_bytes());
        let verdict = check_on_example_com(&robots, &["googlebot-news"], "/fish");
        assert_decided_by(&verdict, Directive::Disallow, "/fish", 2);
    }

    #[test]
    fn googlebot_news_disallowed_shrimp_from_second_group() {
        let robots = RobotsTxt::parse(MERGING.as_bytes());
        let verdict = check_on_example_com(&robots, &["googlebot-news"], "/shrimp");
        assert_decided_by(&verdict, Directive::Disallow, "/shrimp", 8);
    }

    /// "Groups specific to a user agent and global (`*`) groups are not merged." (003.)
    #[test]
    fn googlebot_news_allowed_carrots_because_star_is_not_merged() {
        let robots = RobotsTxt::parse(MERGING.as_bytes());
        let verdict = check_on_example_com(&robots, &["googlebot-news"], "/carrots");
        assert_no_rule_matched(&verdict);
    }

    #[test]
    fn googlebot_news_applied_group_is_both_googlebot_news_groups() {
        let robots = RobotsTxt::parse(MERGING.as_bytes());
        let verdict = check_on_example_com(&robots, &["googlebot-news"], "/fish");
        let groups = verdict.groups.as_ref().expect("a group applies");
        assert!(!groups.is_global());
        assert_eq!(groups.groups().count(), 2);
        assert_eq!(
            applied_agent_lines(&verdict),
            agent_lines(&[("googlebot-news", 1), ("googlebot-news", 7)])
        );
    }

    #[test]
    fn other_agent_disallowed_carrots_by_star_group() {
        let robots = RobotsTxt::parse(MERGING.as_bytes());
        let verdict = check_on_example_com(&robots, &["otherbot"], "/carrots");
        assert_decided_by(&verdict, Directive::Disallow, "/carrots", 5);
        let groups = verdict.groups.as_ref().expect("a group applies");
        assert!(groups.is_global());
        assert_eq!(applied_agent_lines(&verdict), agent_lines(&[("*", 4)]));
    }

    #[test]
    fn other_agent_allowed_fish_and_shrimp() {
        let robots = RobotsTxt::parse(MERGING.as_bytes());
        for path in ["/fish", "/shrimp"] {
            let verdict = check_on_example_com(&robots, &["otherbot"], path);
            assert_no_rule_matched(&verdict);
        }
    }

    /// The document's merged form gives the same verdicts as the original file.
    #[test]
    fn same_verdicts_as_the_merged_form() {
        let original = RobotsTxt::parse(MERGING.as_bytes());
        let merged = RobotsTxt::parse(MERGED.as_bytes());
        for agent in ["googlebot-news", "otherbot"] {
            for path in ["/", "/fish", "/shrimp", "/carrots", "/fishheads", "/kale"] {
                let a = check_on_example_com(&original, &[agent], path);
                let b = check_on_example_com(&merged, &[agent], path);
                assert_eq!(a.allowed, b.allowed, "{agent} {path}");
                assert_eq!(
                    a.rule.map(|r| (r.directive(), r.pattern().into_owned())),
                    b.rule.map(|r| (r.directive(), r.pattern().into_owned())),
                    "{agent} {path}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Lines other than allow, disallow and user-agent do not end a group (003 "规则分组").
// ---------------------------------------------------------------------------------------------

const SITEMAP_IN_GROUP: &str = "\
user-agent: a
sitemap: https://example.com/sitemap.xml

user-agent: b
disallow: /
";

/// How the document says crawlers see `SITEMAP_IN_GROUP`.
const SITEMAP_IN_GROUP_AS_SEEN: &str = "\
user-agent: a
user-agent: b
disallow: /
";

mod sitemap_does_not_end_a_group {
    use super::*;

    #[test]
    fn a_is_disallowed_by_bs_rule() {
        let robots = RobotsTxt::parse(SITEMAP_IN_GROUP.as_bytes());
        let verdict = check_on_example_com(&robots, &["a"], "/page");
        assert_decided_by(&verdict, Directive::Disallow, "/", 5);
        assert_eq!(
            applied_agent_lines(&verdict),
            agent_lines(&[("a", 1), ("b", 4)])
        );
    }

    #[test]
    fn b_is_disallowed() {
        let robots = RobotsTxt::parse(SITEMAP_IN_GROUP.as_bytes());
        let verdict = check_on_example_com(&robots, &["b"], "/page");
        assert_decided_by(&verdict, Directive::Disallow, "/", 5);
        assert_eq!(
            applied_agent_lines(&verdict),
            agent_lines(&[("a", 1), ("b", 4)])
        );
    }

    #[test]
    fn a_and_b_are_one_group() {
        let robots = RobotsTxt::parse(SITEMAP_IN_GROUP.as_bytes());
        let groups: Vec<_> = robots.groups().collect();
        assert_eq!(groups.len(), 1, "{groups:?}");
        assert_eq!(
            groups[0]
                .agents()
                .map(|a| (a.value.into_owned(), a.line))
                .collect::<Vec<_>>(),
            vec![("a".to_owned(), 1), ("b".to_owned(), 4)]
        );
    }

    /// The sitemap line is still a sitemap of the file, outside any group.
    #[test]
    fn sitemap_is_still_reported() {
        let robots = RobotsTxt::parse(SITEMAP_IN_GROUP.as_bytes());
        let sitemaps: Vec<_> = robots
            .sitemaps()
            .map(|s| (s.url.into_owned(), s.line))
            .collect();
        assert_eq!(
            sitemaps,
            vec![("https://example.com/sitemap.xml".to_owned(), 2)]
        );
    }

    #[test]
    fn same_verdicts_as_the_form_without_sitemap() {
        let original = RobotsTxt::parse(SITEMAP_IN_GROUP.as_bytes());
        let seen = RobotsTxt::parse(SITEMAP_IN_GROUP_AS_SEEN.as_bytes());
        for agent in ["a", "b", "c"] {
            for path in ["/", "/page"] {
                let a = check_on_example_com(&original, &[agent], path);
                let b = check_on_example_com(&seen, &[agent], path);
                assert_eq!(a.allowed, b.allowed, "{agent} {path}");
                assert_eq!(a.allowed, agent == "c", "{agent} {path}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 6. "Grouping of lines and rules" (004; 003 "行和规则分组"): groups a, b, e+f and the empty h.
// ---------------------------------------------------------------------------------------------

const GROUPING: &str = "\
user-agent: a
disallow: /c

user-agent: b
disallow: /d

user-agent: e
user-agent: f
disallow: /g

user-agent: h
";

mod grouping {
    use super::*;

    /// "There are four distinct groups specified."
    #[test]
    fn four_distinct_groups() {
        let robots = RobotsTxt::parse(GROUPING.as_bytes());
        let groups: Vec<(Vec<(String, u32)>, usize)> = robots
            .groups()
            .map(|g| {
                (
                    g.agents().map(|a| (a.value.into_owned(), a.line)).collect(),
                    g.rules().count(),
                )
            })
            .collect();
        let expected: Vec<(Vec<(String, u32)>, usize)> = vec![
            (agent_lines(&[("a", 1)]).unwrap(), 1),
            (agent_lines(&[("b", 4)]).unwrap(), 1),
            (agent_lines(&[("e", 7), ("f", 8)]).unwrap(), 1),
            (agent_lines(&[("h", 11)]).unwrap(), 0),
        ];
        assert_eq!(groups, expected);
    }

    #[test]
    fn a_disallowed_c_only() {
        let robots = RobotsTxt::parse(GROUPING.as_bytes());
        let verdict = check_on_example_com(&robots, &["a"], "/c");
        assert_decided_by(&verdict, Directive::Disallow, "/c", 2);
        for path in ["/d", "/g"] {
            assert_no_rule_matched(&check_on_example_com(&robots, &["a"], path));
        }
    }

    #[test]
    fn b_disallowed_d_only() {
        let robots = RobotsTxt::parse(GROUPING.as_bytes());
        let verdict = check_on_example_com(&robots, &["b"], "/d");
        assert_decided_by(&verdict, Directive::Disallow, "/d", 5);
        for path in ["/c", "/g"] {
            assert_no_rule_matched(&check_on_example_com(&robots, &["b"], path));
        }
    }

    #[test]
    fn e_disallowed_g_by_the_e_f_group() {
        let robots = RobotsTxt::parse(GROUPING.as_bytes());
        let verdict = check_on_example_com(&robots, &["e"], "/g");
        assert_decided_by(&verdict, Directive::Disallow, "/g", 9);
        assert_eq!(
            applied_agent_lines(&verdict),
            agent_lines(&[("e", 7), ("f", 8)])
        );
        for path in ["/c", "/d"] {
            assert_no_rule_matched(&check_on_example_com(&robots, &["e"], path));
        }
    }

    #[test]
    fn f_disallowed_g_by_the_e_f_group() {
        let robots = RobotsTxt::parse(GROUPING.as_bytes());
        let verdict = check_on_example_com(&robots, &["f"], "/g");
        assert_decided_by(&verdict, Directive::Disallow, "/g", 9);
        assert_eq!(
            applied_agent_lines(&verdict),
            agent_lines(&[("e", 7), ("f", 8)])
        );
        for path in ["/c", "/d"] {
            assert_no_rule_matched(&check_on_example_com(&robots, &["f"], path));
        }
    }

    /// "The last group may have no rules, which means it implicitly allows everything." (004.)
    #[test]
    fn h_empty_group_allows_everything() {
        let robots = RobotsTxt::parse(GROUPING.as_bytes());
        for path in ["/", "/c", "/d", "/g"] {
            let verdict = check_on_example_com(&robots, &["h"], path);
            assert_no_rule_matched(&verdict);
            let groups = verdict.groups.as_ref().expect("h's group applies");
            assert!(!groups.is_global());
            assert_eq!(applied_agent_lines(&verdict), agent_lines(&[("h", 11)]));
        }
    }

    /// Not in the document's file: with a `*` group that disallows everything added in front,
    /// the empty `h` group still applies to `h` (and allows everything) while `*` applies to
    /// others. (Added in front: appended after `user-agent: h`, the `*` line would join h's
    /// group.)
    #[test]
    fn h_empty_group_is_chosen_over_star() {
        let body = format!("user-agent: *\ndisallow: /\n\n{GROUPING}");
        let robots = RobotsTxt::parse(body.as_bytes());
        for path in ["/", "/c", "/d", "/g"] {
            let verdict = check_on_example_com(&robots, &["h"], path);
            assert_no_rule_matched(&verdict);
            assert_eq!(applied_agent_lines(&verdict), agent_lines(&[("h", 14)]));
            let other = check_on_example_com(&robots, &["otherbot"], path);
            assert_decided_by(&other, Directive::Disallow, "/", 2);
        }
    }

    /// No group names the agent and there is no `*` group: everything is allowed.
    #[test]
    fn unnamed_agent_has_no_group_and_is_allowed() {
        let robots = RobotsTxt::parse(GROUPING.as_bytes());
        for path in ["/", "/c", "/d", "/g"] {
            let verdict = check_on_example_com(&robots, &["otherbot"], path);
            assert_no_rule_matched(&verdict);
            assert!(verdict.groups.is_none());
        }
    }
}
