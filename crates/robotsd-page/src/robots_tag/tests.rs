//! draft-illyes-repext-03 §3.1.1's example and the field's edges.

use super::*;

fn rules(value: &str) -> Vec<(Option<String>, String)> {
    field_line(value)
        .rules
        .into_iter()
        .map(|r| (r.agent, r.text))
        .collect()
}

fn rule(agent: Option<&str>, text: &str) -> (Option<String>, String) {
    (agent.map(str::to_owned), text.to_owned())
}

#[test]
fn the_drafts_example() {
    // "Robots-Tag: *;nosnippet, ExampleBot;noindex": ExampleBot gets noindex and nosnippet.
    assert_eq!(
        rules("*;nosnippet, ExampleBot;noindex"),
        [rule(None, "nosnippet"), rule(Some("ExampleBot"), "noindex")]
    );
}

#[test]
fn parameters_with_values_are_rules_with_values() {
    assert_eq!(
        rules(r#"*;max-snippet=50;unavailable_after="2026-12-01";noindex=?0"#),
        [
            rule(None, "max-snippet:50"),
            rule(None, "unavailable_after:2026-12-01")
        ]
    );
    // A member without parameters states nothing.
    assert!(rules("ExampleBot").is_empty());
    assert_eq!(field_line("  "), TagLine::default());
}

#[test]
fn rules_are_case_insensitive_though_keys_are_lower_case() {
    // RFC 9651 keys are lower case; §3.1.3 says the rules are case-insensitive.
    assert_eq!(
        rules("ExampleBot;NoIndex;NOSNIPPET"),
        [
            rule(Some("examplebot"), "noindex"),
            rule(Some("examplebot"), "nosnippet")
        ]
    );
}

#[test]
fn a_member_that_does_not_parse_drops_no_other_members_rules() {
    // A broken member before a `*;noindex` must not lose it: every rule restricts.
    let line = field_line(r#"Bad Bot;nofollow, *;noindex, other;nosnippet"#);
    assert_eq!(
        line.rules,
        [
            TagRule {
                agent: None,
                text: "noindex".into()
            },
            TagRule {
                agent: Some("other".into()),
                text: "nosnippet".into()
            },
        ]
    );
    assert_eq!(line.unparseable.as_deref(), Some("bad bot;nofollow"));
    // A String where a product token goes is no member either; a comma in a String is not
    // a member's end.
    let line = field_line(r#"*;unavailable_after="a, b";noindex, "quoted";noindex, *;nofollow"#);
    assert_eq!(line.rules.len(), 3);
    assert_eq!(line.rules[0].text, "unavailable_after:a, b");
    assert_eq!(line.rules[2].text, "nofollow");
    assert_eq!(line.unparseable.as_deref(), Some(r#""quoted";noindex"#));
    // An Inner List names no product token.
    let line = field_line("(a b);noindex");
    assert!(line.rules.is_empty());
    assert!(line.unparseable.is_some());
}
