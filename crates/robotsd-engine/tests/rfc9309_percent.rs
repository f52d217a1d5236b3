//! The opt-in RFC 9309 percent-decoding mode (`docs/engine.md`), on cases of its own: RFC 9309
//! §2.2.2's table, the escapes it must leave alone, precedence after decoding, and properties
//! tying it to the Google mode. The Google mode is the conformance suite's (`conformance.rs`).

use proptest::prelude::*;
use robotsd_engine::{Directive, PercentDecoding, RobotsTxt};

const RFC: PercentDecoding = PercentDecoding::Rfc9309;
const GOOGLE: PercentDecoding = PercentDecoding::Google;

fn allowed(robots: &str, url: &str, mode: PercentDecoding) -> bool {
    RobotsTxt::parse(robots.as_bytes())
        .check_with(&["bot"], url, mode)
        .allowed
}

/// The deciding rule's (directive, pattern as written, line) in `mode`.
fn decided_by(robots: &str, url: &str, mode: PercentDecoding) -> Option<(Directive, String, u32)> {
    let parsed = RobotsTxt::parse(robots.as_bytes());
    let verdict = parsed.check_with(&["bot"], url, mode);
    verdict
        .rule
        .map(|r| (r.directive(), r.pattern().into_owned(), r.line()))
}

#[test]
fn the_issue_case_a_percent_encoded_p_is_a_p() {
    let robots = "user-agent: *\ndisallow: /private\n";
    assert!(allowed(robots, "https://a.test/%70rivate/x", GOOGLE));
    assert!(!allowed(robots, "https://a.test/%70rivate/x", RFC));
    assert!(!allowed(robots, "https://a.test/private/x", RFC));
}

/// Whether a file with the one rule `disallow: {pattern}` disallows `path` in the RFC mode.
fn rfc_disallows(pattern: &str, path: &str) -> bool {
    let robots = format!("user-agent: *\ndisallow: {pattern}\n");
    !allowed(&robots, &format!("https://www.example.com{path}"), RFC)
}

// RFC 9309 §2.2.2, table 3: each path, written either way, matches the rule written either way.

#[test]
fn table_3_row_1_a_plain_query_matches_itself() {
    assert!(rfc_disallows("/foo/bar?baz=quz", "/foo/bar?baz=quz"));
    assert!(!rfc_disallows("/foo/bar?baz=quz", "/foo/bar?baz=other"));
}

#[test]
fn table_3_row_2_a_raw_query_rule_matches_the_encoded_url() {
    assert!(rfc_disallows(
        "/foo/bar?baz=https://foo.bar",
        "/foo/bar?baz=https%3A%2F%2Ffoo.bar"
    ));
    assert!(rfc_disallows(
        "/foo/bar?baz=https://foo.bar",
        "/foo/bar?baz=https%3a%2f%2ffoo.bar"
    ));
}

#[test]
fn table_3_row_2_an_encoded_query_rule_matches_the_raw_url() {
    assert!(rfc_disallows(
        "/foo/bar?baz=https%3A%2F%2Ffoo.bar",
        "/foo/bar?baz=https://foo.bar"
    ));
}

#[test]
fn table_3_row_2_each_form_matches_itself() {
    for form in [
        "/foo/bar?baz=https://foo.bar",
        "/foo/bar?baz=https%3A%2F%2Ffoo.bar",
    ] {
        assert!(rfc_disallows(form, form), "{form}");
    }
    // Only the query's delimiters are data: the path's `/` is not its `%2F`.
    assert!(!rfc_disallows("/foo/bar", "/foo%2Fbar"));
}

#[test]
fn table_3_row_3_a_utf8_rule_matches_the_encoded_url() {
    assert!(rfc_disallows("/foo/bar/ツ", "/foo/bar/%E3%83%84"));
    assert!(rfc_disallows("/foo/bar/ツ", "/foo/bar/%e3%83%84"));
}

#[test]
fn table_3_row_3_an_encoded_rule_matches_the_utf8_url() {
    assert!(rfc_disallows("/foo/bar/%E3%83%84", "/foo/bar/ツ"));
}

#[test]
fn table_3_row_4_an_encoded_utf8_rule_matches_itself_in_either_case() {
    for rule in ["/foo/bar/%E3%83%84", "/foo/bar/%e3%83%84"] {
        assert!(rfc_disallows(rule, "/foo/bar/%E3%83%84"), "{rule}");
        assert!(rfc_disallows(rule, "/foo/bar/%e3%83%84"), "{rule}");
    }
}

#[test]
fn table_3_row_5_an_encoded_unreserved_rule_matches_the_decoded_url() {
    assert!(rfc_disallows("/foo/bar/%62%61%7A", "/foo/bar/baz"));
    assert!(rfc_disallows("/foo/bar/%62%61%7A", "/foo/bar/%62az"));
    assert!(rfc_disallows("/foo/bar/%62%61%7A", "/foo/bar/%62%61%7a"));
}

#[test]
fn table_3_row_5_a_decoded_rule_matches_the_encoded_url() {
    assert!(rfc_disallows("/foo/bar/baz", "/foo/bar/%62%61%7A"));
}

#[test]
fn table_3_google_mode_keeps_the_reference_s_answers() {
    let robots = "user-agent: *\ndisallow: /foo/bar/%62%61%7A\n";
    assert!(allowed(robots, "https://a.test/foo/bar/baz", GOOGLE));
    // Google matches the escapes as text.
    assert!(!allowed(robots, "https://a.test/foo/bar/%62%61%7A", GOOGLE));
    let robots = "user-agent: *\ndisallow: /foo/bar?baz=https://foo.bar\n";
    assert!(allowed(
        robots,
        "https://a.test/foo/bar?baz=https%3A%2F%2Ffoo.bar",
        GOOGLE
    ));
}

// RFC 9309 §2.2.3, table 4: the special characters.

#[test]
fn table_4_row_1_a_comment_ends_the_line_or_is_the_line() {
    let robots =
        "user-agent: *\ndisallow: /\nallow: / # comment in line\n# comment on its own line\n";
    assert!(allowed(robots, "https://a.test/any/path", RFC));
    assert_eq!(
        decided_by(robots, "https://a.test/any/path", RFC),
        Some((Directive::Allow, "/".into(), 3))
    );
}

#[test]
fn table_4_row_2_a_dollar_ends_the_pattern() {
    let robots = "user-agent: *\ndisallow: /\nallow: /this/path/exactly$\n";
    assert!(allowed(robots, "https://a.test/this/path/exactly", RFC));
    assert!(!allowed(
        robots,
        "https://a.test/this/path/exactly/more",
        RFC
    ));
    assert!(!allowed(robots, "https://a.test/this/path/exactly?q", RFC));
}

#[test]
fn table_4_row_3_a_star_is_any_characters() {
    let robots = "user-agent: *\ndisallow: /\nallow: /this/*/exactly\n";
    assert!(allowed(robots, "https://a.test/this/a/exactly", RFC));
    assert!(allowed(robots, "https://a.test/this/a/b/exactly", RFC));
    assert!(allowed(robots, "https://a.test/this//exactly", RFC));
    assert!(!allowed(robots, "https://a.test/this/exactly", RFC));
}

// RFC 9309 §2.2.3, table 5: a rule names a special character of the URL percent-encoded.

#[test]
fn table_5_row_1_an_encoded_star_matches_the_url_s_star() {
    assert!(rfc_disallows(
        "/path/file-with-a-%2A.html",
        "/path/file-with-a-*.html"
    ));
    assert!(rfc_disallows(
        "/path/file-with-a-%2A.html",
        "/path/file-with-a-%2A.html"
    ));
    assert!(rfc_disallows(
        "/path/file-with-a-%2a.html",
        "/path/file-with-a-*.html"
    ));
}

#[test]
fn table_5_row_1_an_encoded_star_is_no_wildcard() {
    assert!(!rfc_disallows(
        "/path/file-with-a-%2A.html",
        "/path/file-with-a-x.html"
    ));
    // Unencoded, it is one.
    assert!(rfc_disallows(
        "/path/file-with-a-*.html",
        "/path/file-with-a-x.html"
    ));
    assert!(rfc_disallows(
        "/path/file-with-a-*.html",
        "/path/file-with-a-*.html"
    ));
}

#[test]
fn table_5_row_2_an_encoded_dollar_matches_the_url_s_dollar() {
    assert!(rfc_disallows("/path/foo-%24", "/path/foo-$"));
    assert!(rfc_disallows("/path/foo-%24", "/path/foo-%24"));
    assert!(rfc_disallows("/path/foo-%24", "/path/foo-$/more"));
}

#[test]
fn table_5_row_2_an_encoded_dollar_is_no_anchor() {
    assert!(!rfc_disallows("/path/foo-%24", "/path/foo-"));
    // Unencoded and last, it is one: `/path/foo-` exactly.
    assert!(rfc_disallows("/path/foo-$", "/path/foo-"));
    assert!(!rfc_disallows("/path/foo-$", "/path/foo-$"));
}

#[test]
fn a_character_encoded_only_to_compare_it_counts_as_written_for_precedence() {
    // `/$*` is 3 octets as written, `/*/*` 4: the longer wins in both modes, although the first
    // compares as `/%24*` (found by the property below).
    let robots = "user-agent: *\ndisallow: /$*\ndisallow: /*/*\n";
    for mode in [GOOGLE, RFC] {
        assert_eq!(
            decided_by(robots, "https://a.test/$/", mode),
            Some((Directive::Disallow, "/*/*".into(), 3)),
            "{mode:?}"
        );
    }
    // The same in a query: `?u=a/b` is 6 octets, `?u=a` 4.
    let robots = "user-agent: *\nallow: /x?u=a/b\ndisallow: /x?u=a\n";
    let (directive, _, _) = decided_by(robots, "https://a.test/x?u=a%2Fb", RFC).expect("a rule");
    assert_eq!(directive, Directive::Allow);
}

#[test]
fn a_dollar_before_the_end_of_a_pattern_is_a_character() {
    // As in Google's reference: only a final `$` anchors.
    assert!(rfc_disallows("/a$b", "/a$b"));
    assert!(rfc_disallows("/a$b", "/a%24b"));
    assert!(!rfc_disallows("/a$b", "/a"));
}

#[test]
fn reserved_characters_stay_encoded() {
    // `%2F` is not a path separator.
    let robots = "user-agent: *\ndisallow: /a%2Fb\n";
    assert!(allowed(robots, "https://a.test/a/b", RFC));
    assert!(!allowed(robots, "https://a.test/a%2fb", RFC));
    let robots = "user-agent: *\ndisallow: /a/b\n";
    assert!(allowed(robots, "https://a.test/a%2Fb", RFC));
    // `%3F` is not the start of a query, `%26` not a separator.
    let robots = "user-agent: *\ndisallow: /x?y\n";
    assert!(allowed(robots, "https://a.test/x%3Fy", RFC));
}

#[test]
fn an_encoded_star_or_dollar_is_a_character_not_a_wildcard_or_anchor() {
    let robots = "user-agent: *\ndisallow: /a%2Ab\n";
    assert!(allowed(robots, "https://a.test/aXYZb", RFC));
    assert!(!allowed(robots, "https://a.test/a%2Ab", RFC));
    let robots = "user-agent: *\ndisallow: /a%24\n";
    assert!(!allowed(robots, "https://a.test/a%24/more", RFC));
    assert!(allowed(robots, "https://a.test/a", RFC));
}

#[test]
fn an_encoded_percent_is_not_decoded_twice() {
    let robots = "user-agent: *\ndisallow: /A\n";
    assert!(allowed(robots, "https://a.test/%2541", RFC));
    assert!(!allowed(robots, "https://a.test/%41", RFC));
}

#[test]
fn wildcards_and_anchors_work_on_decoded_paths() {
    let robots = "user-agent: *\ndisallow: /*.pdf$\n";
    assert!(!allowed(robots, "https://a.test/docs/x%2Epdf", RFC));
    assert!(allowed(robots, "https://a.test/docs/x%2Epdf", GOOGLE));
    let robots = "user-agent: *\ndisallow: /*%2E%70df$\n";
    assert!(!allowed(robots, "https://a.test/docs/x.pdf", RFC));
    assert!(allowed(robots, "https://a.test/docs/x.pdfx", RFC));
}

#[test]
fn precedence_counts_octets_after_decoding() {
    // Written, the allow is longer (10 bytes against 8); decoded, both are 8 and `allow` wins
    // the tie — in either order in the file.
    for robots in [
        "user-agent: *\nallow: /%70rivate\ndisallow: /private\n",
        "user-agent: *\ndisallow: /private\nallow: /%70rivate\n",
    ] {
        let (directive, _, _) = decided_by(robots, "https://a.test/private", RFC).expect("a rule");
        assert_eq!(directive, Directive::Allow, "{robots}");
    }
    // Decoded, the disallow is the longer match and wins.
    let robots = "user-agent: *\nallow: /%70ri\ndisallow: /priv\n";
    assert_eq!(
        decided_by(robots, "https://a.test/private", RFC),
        Some((Directive::Disallow, "/priv".into(), 3))
    );
    // In Google's mode the escaped allow does not match `/private` at all.
    assert_eq!(
        decided_by(robots, "https://a.test/private", GOOGLE),
        Some((Directive::Disallow, "/priv".into(), 3))
    );
}

#[test]
fn the_deciding_rule_is_reported_as_written() {
    let robots = "user-agent: *\ndisallow: /%70rivate\n";
    assert_eq!(
        decided_by(robots, "https://a.test/private/x", RFC),
        Some((Directive::Disallow, "/%70rivate".into(), 2))
    );
}

#[test]
fn index_htm_extension_applies_to_the_decoded_pattern() {
    let robots = "user-agent: *\ndisallow: /d/\nallow: /d/%69ndex.html\n";
    let parsed = RobotsTxt::parse(robots.as_bytes());
    let verdict = parsed.check_with(&["bot"], "https://a.test/d/", RFC);
    assert!(verdict.allowed);
    assert!(verdict.rule.expect("the allow").matched_as_directory());
    assert!(
        !parsed
            .check_with(&["bot"], "https://a.test/d/", GOOGLE)
            .allowed
    );
}

#[test]
fn named_groups_and_several_agents_are_chosen_as_in_googles_mode() {
    let robots = "user-agent: a\ndisallow: /%61\n\nuser-agent: b\nallow: /a/%62\n\nuser-agent: *\ndisallow: /\n";
    let parsed = RobotsTxt::parse(robots.as_bytes());
    assert!(!parsed.check_with(&["a"], "https://a.test/a/x", RFC).allowed);
    assert!(
        parsed
            .check_with(&["a", "b"], "https://a.test/a/b", RFC)
            .allowed
    );
    assert!(!parsed.check_with(&["c"], "https://a.test/a/b", RFC).allowed);
}

#[test]
fn empty_rules_still_decide_nothing() {
    let robots = "user-agent: *\ndisallow:\nallow: /%41\n";
    assert!(allowed(robots, "https://a.test/x", RFC));
    assert_eq!(decided_by(robots, "https://a.test/x", RFC), None);
}

/// A path or pattern of unreserved characters, `/`, `*`, `$` and escapes.
fn path_text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            4 => "[a-c~._/-]",
            1 => Just("*".to_string()),
            1 => "%[0-9a-fA-F]{2}",
        ],
        0..8,
    )
    .prop_map(|parts| format!("/{}", parts.concat()))
}

/// `path` with some unreserved characters percent-encoded (chosen by `mask`), hex in either case.
///
/// The hex digits of an escape already there are left alone: encoding the `a` of `%ad` gives
/// `%%61d`, which is not the same path (nor a valid one), so it says nothing about decoding.
fn encode_some(path: &str, mask: u64) -> String {
    let mut out = String::new();
    let mut escape_digits = 0u8;
    for (i, c) in path.chars().enumerate() {
        let in_escape = escape_digits > 0;
        escape_digits = if c == '%' {
            2
        } else {
            escape_digits.saturating_sub(1)
        };
        let unreserved = c.is_ascii_alphanumeric() || "-._~".contains(c);
        if unreserved && !in_escape && mask >> (i % 64) & 1 == 1 {
            if i % 2 == 0 {
                out.push_str(&format!("%{:02X}", c as u32));
            } else {
                out.push_str(&format!("%{:02x}", c as u32));
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn file(rules: &[(bool, String)]) -> String {
    let mut robots = String::from("user-agent: *\n");
    for (allow, pattern) in rules {
        robots.push_str(if *allow { "allow: " } else { "disallow: " });
        robots.push_str(pattern);
        robots.push('\n');
    }
    robots
}

proptest! {
    /// Encoding unreserved characters of the URL never changes an RFC-mode answer.
    #[test]
    fn rfc_answers_do_not_depend_on_how_the_url_is_encoded(
        rules in proptest::collection::vec((any::<bool>(), path_text()), 1..5),
        path in path_text(),
        mask in any::<u64>(),
    ) {
        let robots = RobotsTxt::parse(file(&rules).as_bytes());
        let plain = robots.check_with(&["bot"], &format!("https://a.test{path}"), RFC);
        let encoded = robots.check_with(&["bot"], &format!("https://a.test{}", encode_some(&path, mask)), RFC);
        prop_assert_eq!(plain.allowed, encoded.allowed);
        prop_assert_eq!(plain.rule.map(|r| r.line()), encoded.rule.map(|r| r.line()));
    }

    /// Nor does encoding unreserved characters of the rules.
    #[test]
    fn rfc_answers_do_not_depend_on_how_the_rules_are_encoded(
        rules in proptest::collection::vec((any::<bool>(), path_text()), 1..5),
        path in path_text(),
        mask in any::<u64>(),
    ) {
        let encoded_rules: Vec<(bool, String)> =
            rules.iter().map(|(a, p)| (*a, encode_some(p, mask))).collect();
        let url = format!("https://a.test{path}");
        let plain = RobotsTxt::parse(file(&rules).as_bytes());
        let encoded = RobotsTxt::parse(file(&encoded_rules).as_bytes());
        let (plain, encoded) = (plain.check_with(&["bot"], &url, RFC), encoded.check_with(&["bot"], &url, RFC));
        prop_assert_eq!(plain.allowed, encoded.allowed);
        prop_assert_eq!(plain.rule.map(|r| r.line()), encoded.rule.map(|r| r.line()));
    }

    /// Where nothing is percent-encoded, the two modes give the same answer.
    #[test]
    fn without_escapes_the_modes_agree(
        rules in proptest::collection::vec((any::<bool>(), "/[a-c/*.$]{0,6}"), 1..6),
        path in "/[a-c/.$]{0,8}",
    ) {
        let robots = RobotsTxt::parse(file(&rules).as_bytes());
        let url = format!("https://a.test{path}");
        let (google, rfc) = (robots.check_with(&["bot"], &url, GOOGLE), robots.check_with(&["bot"], &url, RFC));
        prop_assert_eq!(google.allowed, rfc.allowed);
        prop_assert_eq!(google.rule.map(|r| (r.line(), r.matched_as_directory())), rfc.rule.map(|r| (r.line(), r.matched_as_directory())));
    }

    /// The linear scan (a file with an encoded unreserved character somewhere) and the index
    /// (the same file without it) agree on every other rule.
    #[test]
    fn the_scan_agrees_with_the_index(
        rules in proptest::collection::vec((any::<bool>(), "/[a-c/*.$]{0,6}(index.html)?"), 1..6),
        path in "/[a-c/.$]{0,8}",
    ) {
        let url = format!("https://a.test{path}");
        let indexed = RobotsTxt::parse(file(&rules).as_bytes());
        // A group of its own that holds an escape switches the whole file to the scan.
        let scanned_text = format!("{}\nuser-agent: other\ndisallow: /%41\n", file(&rules));
        let scanned = RobotsTxt::parse(scanned_text.as_bytes());
        let (a, b) = (indexed.check_with(&["bot"], &url, RFC), scanned.check_with(&["bot"], &url, RFC));
        prop_assert_eq!(a.allowed, b.allowed);
        prop_assert_eq!(a.rule.map(|r| (r.line(), r.matched_as_directory())), b.rule.map(|r| (r.line(), r.matched_as_directory())));
    }
}
