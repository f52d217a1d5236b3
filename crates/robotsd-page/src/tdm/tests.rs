//! TDMRep's own examples, and the layers' precedence.

use super::*;

fn layer(reservations: &[&str], policies: &[&str]) -> Layer {
    Layer {
        reservations: reservations.iter().map(|v| v.to_string()).collect(),
        policies: policies.iter().map(|v| v.to_string()).collect(),
    }
}

const POLICY: &str = "https://provider.com/policies/policy.json";

#[test]
fn values_other_than_one_and_zero_are_protocol_errors() {
    assert_eq!(reservation("1"), Some(true));
    assert_eq!(reservation(" 0 "), Some(false));
    for value in ["", "true", "yes", "01", "1.0", "2", "-1"] {
        assert_eq!(reservation(value), None, "{value}");
    }
}

#[test]
fn the_reports_header_examples() {
    // "TDM rights are reserved on these files with no way to acquire a TDM License."
    let mut tdm = Tdm::default();
    tdm.layer(TdmSource::Header, &layer(&["1"], &[]));
    assert_eq!(tdm.reservation, Some(true));
    assert_eq!(tdm.policy_in_force(), None);
    // "A TDM License may be acquired."
    let mut tdm = Tdm::default();
    tdm.layer(TdmSource::Header, &layer(&["1"], &[POLICY]));
    assert_eq!(tdm.reservation, Some(true));
    assert_eq!(tdm.policy_in_force(), Some(POLICY));
}

#[test]
fn the_reports_html_example() {
    let mut tdm = Tdm::default();
    tdm.layer(TdmSource::Meta, &layer(&["1"], &[POLICY]));
    assert_eq!(
        tdm,
        Tdm {
            reservation: Some(true),
            reservation_source: Some(TdmSource::Meta),
            policy: Some(POLICY.into()),
            policy_source: Some(TdmSource::Meta),
            invalid: Vec::new(),
        }
    );
}

#[test]
fn later_layers_supersede_what_they_set_and_absence_resets_nothing() {
    let mut tdm = Tdm::default();
    tdm.layer(TdmSource::WellKnown, &layer(&["1"], &[POLICY]));
    // The header sets only the reservation: the file's policy stays.
    tdm.layer(TdmSource::Header, &layer(&["1"], &[]));
    assert_eq!(tdm.reservation_source, Some(TdmSource::Header));
    assert_eq!(tdm.policy_source, Some(TdmSource::WellKnown));
    assert_eq!(tdm.policy_in_force(), Some(POLICY));
    // The HTML lifts the reservation: the policy is no longer processed.
    tdm.layer(TdmSource::Meta, &layer(&["0"], &[]));
    assert_eq!(tdm.reservation, Some(false));
    assert_eq!(tdm.reservation_source, Some(TdmSource::Meta));
    assert_eq!(tdm.policy_in_force(), None);
    // An absent layer changes nothing.
    let before = tdm.clone();
    tdm.layer(TdmSource::Meta, &Layer::default());
    assert_eq!(tdm, before);
}

#[test]
fn an_invalid_value_sets_nothing_and_never_erases_a_reservation() {
    // Issue 41: a header's `1` and a `meta` tag's `yes` answered `null`, a permission the
    // publisher did not give.
    let mut tdm = Tdm::default();
    tdm.layer(TdmSource::WellKnown, &layer(&["1"], &[]));
    tdm.layer(TdmSource::Header, &layer(&["yes"], &[]));
    tdm.layer(TdmSource::Meta, &layer(&["true", "1 0"], &[]));
    assert_eq!(tdm.reservation, Some(true));
    assert_eq!(tdm.reservation_source, Some(TdmSource::WellKnown));
    assert_eq!(tdm.invalid, [TdmSource::Header, TdmSource::Meta]);
    // Alone, an invalid value leaves the reservation unset, and says where it was.
    let mut alone = Tdm::default();
    alone.layer(TdmSource::Meta, &layer(&["yes"], &[]));
    assert_eq!(alone.reservation, None);
    assert_eq!(alone.invalid, [TdmSource::Meta]);
    // Beside a valid value in the same layer, the valid one counts.
    let mut beside = Tdm::default();
    beside.layer(TdmSource::Header, &layer(&["0"], &[]));
    beside.layer(TdmSource::Meta, &layer(&["yes", "1"], &[]));
    assert_eq!(beside.reservation, Some(true));
}

#[test]
fn one_layer_giving_one_and_zero_reserves_and_a_repeated_value_is_that_value() {
    let mut tdm = Tdm::default();
    tdm.layer(TdmSource::Header, &layer(&["0", "0"], &[]));
    assert_eq!(tdm.reservation, Some(false));
    tdm.layer(TdmSource::Meta, &layer(&["0", "1"], &[]));
    assert_eq!(tdm.reservation, Some(true));
    assert_eq!(tdm.reservation_source, Some(TdmSource::Meta));
    assert!(tdm.invalid.is_empty());
}

#[test]
fn the_reports_first_file_example_reserves_everything() {
    let file = TdmFile::parse(
        br#"[
  {
  "location": "/",
  "tdm-reservation": 1
  }
]"#,
    )
    .unwrap();
    let rule = file.rule_for("https://provider.com/any/page.html").unwrap();
    assert_eq!(rule.reservation, Some(true));
    assert_eq!(rule.policy, None);
}

#[test]
fn the_reports_second_file_example() {
    let file = TdmFile::parse(
        br#"[
  {
  "location": "/directory-a/",
  "tdm-reservation": 1
  },
  {
  "location": "/directory-b/html/",
  "tdm-reservation": 1,
  "tdm-policy":"https://provider.com/policies/policy.json"
  },
  {
  "location": "/directory-b/images/*.jpg",
  "tdm-reservation": 0
  }
]"#,
    )
    .unwrap();
    let at = |path: &str| {
        file.rule_for(&format!("https://provider.com{path}"))
            .map(|r| (r.index, r.reservation, r.policy.clone()))
    };
    assert_eq!(at("/directory-a/report.pdf"), Some((0, Some(true), None)));
    assert_eq!(
        at("/directory-b/html/index.html"),
        Some((1, Some(true), Some(POLICY.into())))
    );
    assert_eq!(
        at("/directory-b/images/2024/cat.jpg"),
        Some((2, Some(false), None))
    );
    // Unset where no rule matches.
    assert_eq!(at("/directory-b/images/cat.png"), None);
    assert_eq!(at("/elsewhere"), None);
}

#[test]
fn the_first_matching_rule_wins_not_the_longest() {
    let file = TdmFile::parse(
        br#"[{"location": "/a/", "tdm-reservation": 0},
             {"location": "/a/b/", "tdm-reservation": 1}]"#,
    )
    .unwrap();
    assert_eq!(file.rule_for("https://x.test/a/b/c").unwrap().index, 0);
}

#[test]
fn locations_match_as_robots_txt_patterns() {
    let file = TdmFile::parse(
        br#"[{"location": "/this/path/exactly$", "tdm-reservation": 1},
             {"location": "/this/*/then", "tdm-reservation": 1},
             {"location": "/path/foo-%24", "tdm-reservation": 1},
             {"location": "/%7Euser/", "tdm-reservation": 1}]"#,
    )
    .unwrap();
    let index = |path: &str| {
        file.rule_for(&format!("https://x.test{path}"))
            .map(|r| r.index)
    };
    assert_eq!(index("/this/path/exactly"), Some(0));
    assert_eq!(index("/this/path/exactly/not"), None);
    assert_eq!(index("/this/is/then/more"), Some(1));
    // Case-sensitive.
    assert_eq!(index("/THIS/is/then"), None);
    // A `$` matched verbatim is written `%24`.
    assert_eq!(index("/path/foo-%24"), Some(2));
    // Unreserved characters compare decoded.
    assert_eq!(index("/~user/page"), Some(3));
    assert_eq!(index("/%7euser/page"), Some(3));
}

#[test]
fn what_is_not_a_rule_is_skipped_and_counted() {
    let file = TdmFile::parse(
        br#"[{"location": "/a", "tdm-reservation": 2},
             "not an object",
             {"tdm-reservation": 1},
             {"location": 7, "tdm-reservation": 1},
             {"location": "/b", "tdm-reservation": "1", "tdm-policy": 7}]"#,
    )
    .unwrap();
    assert_eq!(file.skipped, 3);
    assert_eq!(file.rules.len(), 2);
    // A value other than 0 or 1 is unset for the URLs its rule matches.
    assert_eq!(file.rules[0].reservation, None);
    assert_eq!(file.rules[1].reservation, Some(true));
    assert_eq!(file.rules[1].policy, None);
}

#[test]
fn a_file_that_is_not_an_array_of_rules_is_an_error() {
    assert_eq!(
        TdmFile::parse(br#"{"location": "/"}"#),
        Err(TdmFileError::NotAnArray)
    );
    assert!(matches!(
        TdmFile::parse(b"<html>"),
        Err(TdmFileError::Json(_))
    ));
}

#[test]
fn rules_past_the_bound_are_counted_not_kept() {
    let rules: Vec<String> = (0..MAX_FILE_RULES + 10)
        .map(|i| format!(r#"{{"location": "/{i}/", "tdm-reservation": 1}}"#))
        .collect();
    let file = TdmFile::parse(format!("[{}]", rules.join(",")).as_bytes()).unwrap();
    assert_eq!(file.rules.len(), MAX_FILE_RULES);
    assert_eq!(file.skipped, 10);
}
