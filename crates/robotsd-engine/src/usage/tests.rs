//! The Structured Field parser against the HTTP WG's test suite, and the building blocks of
//! preference lines. The drafts' examples, through the public API, are in `tests/usage.rs`.

use super::sf::{self, Member};
use serde_json::Value;

/// What the parser found: for each member, its key (dictionaries) and whether its value is a
/// token, and which.
type Found = Vec<(Option<String>, Option<String>)>;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn parse(header_type: &str, input: &[u8]) -> Option<Found> {
    match header_type {
        "dictionary" => sf::parse_dictionary(input).ok().map(|members| {
            members
                .into_iter()
                .map(|Member { key, token }| (Some(text(key)), token.map(text)))
                .collect()
        }),
        "item" => sf::parse_item(input)
            .ok()
            .map(|token| vec![(None, token.map(text))]),
        "list" => sf::parse_list(input)
            .ok()
            .map(|members| members.into_iter().map(|t| (None, t.map(text))).collect()),
        other => panic!("unexpected header_type {other}"),
    }
}

/// The token of an expected `[value, params]` pair, if the value is a token.
fn expected_token(pair: &Value) -> Option<String> {
    let value = &pair[0];
    (value["__type"] == "token").then(|| value["value"].as_str().unwrap_or_default().to_owned())
}

fn expected(header_type: &str, expected: &Value) -> Found {
    let members = expected.as_array().cloned().unwrap_or_default();
    match header_type {
        "dictionary" => members
            .iter()
            .map(|m| (m[0].as_str().map(str::to_owned), expected_token(&m[1])))
            .collect(),
        "item" => vec![(None, expected_token(expected))],
        _ => members.iter().map(|m| (None, expected_token(m))).collect(),
    }
}

#[test]
fn the_structured_field_test_suite_passes() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/structured-field-tests"
    );
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the vendored suite")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let (mut run, mut failures) = (0, Vec::new());
    for file in &files {
        let cases: Vec<Value> =
            serde_json::from_slice(&std::fs::read(file).expect("readable")).expect("JSON");
        for case in cases {
            let header_type = case["header_type"].as_str().expect("header_type");
            // Several field lines are combined with ", " (RFC 9110 §5.3).
            let raw: Vec<&str> = case["raw"]
                .as_array()
                .expect("raw")
                .iter()
                .map(|r| r.as_str().expect("raw line"))
                .collect();
            let input = raw.join(", ");
            let must_fail = case["must_fail"].as_bool().unwrap_or(false);
            let can_fail = case["can_fail"].as_bool().unwrap_or(false);
            let got = parse(header_type, input.as_bytes());
            run += 1;
            let ok = match (&got, must_fail) {
                (None, true) => true,
                (None, false) => can_fail,
                (Some(_), true) => false,
                (Some(found), false) => *found == expected(header_type, &case["expected"]),
            };
            if !ok {
                failures.push(format!(
                    "{}: {:?} ({header_type} {input:?}): got {got:?}",
                    file.file_name().unwrap_or_default().to_string_lossy(),
                    case["name"].as_str().unwrap_or_default(),
                ));
            }
        }
    }
    assert!(run > 1500, "only {run} cases found");
    assert!(
        failures.is_empty(),
        "{} of {run} cases fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_repeated_key_keeps_its_first_place_and_its_last_value() {
    let members = sf::parse_dictionary(b"a=y, b=n, a=n, c, b=y").expect("a dictionary");
    let found: Vec<(&[u8], Option<&[u8]>)> = members.iter().map(|m| (m.key, m.token)).collect();
    let expected: [(&[u8], Option<&[u8]>); 3] =
        [(b"a", Some(b"n")), (b"b", Some(b"y")), (b"c", None)];
    assert_eq!(found, expected);
}

#[test]
fn thousands_of_members_parse_in_one_pass() {
    let line: String = (0..4000)
        .map(|i| format!("k{}=y,", i % 50))
        .collect::<String>()
        + "z=n";
    let members = sf::parse_dictionary(line.as_bytes()).expect("a dictionary");
    assert_eq!(members.len(), 51);
}
