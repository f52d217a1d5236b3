//! Reading a batch body, with errors in the caller's terms: which of the two forms was meant,
//! and what is wrong with it, rather than serde's "did not match any variant of untagged enum".

use serde_json::Value;

use super::problem::ApiError;
use super::types::{BatchRequest, ChecksBatch, UrlsBatch};

/// The two forms, as the errors name them.
const FORMS: &str = r#"{"ua": …, "urls": [...]} or {"checks": [{"url": …, "ua": …}, ...]}"#;

/// The batch in `body`, or what is wrong with it.
pub(super) fn parse(body: &[u8]) -> Result<BatchRequest, ApiError> {
    let invalid = |detail: String| ApiError::InvalidBody(detail);
    let value: Value =
        serde_json::from_slice(body).map_err(|e| invalid(format!("the body is not JSON: {e}")))?;
    let Value::Object(fields) = &value else {
        return Err(invalid(format!(
            "the body is a JSON {}; a batch is an object: {FORMS}",
            kind(&value)
        )));
    };
    let form = |e: serde_json::Error, name: &str| invalid(format!("{name} batch: {e}"));
    match (fields.contains_key("urls"), fields.contains_key("checks")) {
        (true, true) => Err(invalid(format!(
            "a batch has `urls` or `checks`, not both: {FORMS}"
        ))),
        (true, false) => serde_json::from_value::<UrlsBatch>(value)
            .map(BatchRequest::Urls)
            .map_err(|e| form(e, "a `urls`")),
        (false, true) => serde_json::from_value::<ChecksBatch>(value)
            .map(BatchRequest::Checks)
            .map_err(|e| form(e, "a `checks`")),
        (false, false) if fields.contains_key("url") => Err(invalid(
            "a batch takes `urls`, a list of URLs, not `url` (GET /v1/check takes one url)"
                .to_string(),
        )),
        (false, false) => Err(invalid(format!(
            "a batch needs `urls` or `checks`: {FORMS}"
        ))),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Null => "null",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(body: &str) -> String {
        match parse(body.as_bytes()) {
            Err(ApiError::InvalidBody(detail)) => detail,
            other => panic!("{body}: {other:?}"),
        }
    }

    #[test]
    fn each_mistake_is_named_in_the_callers_terms() {
        for (body, says) in [
            (r#"{"ua": "a", "url": "https://a.example/"}"#, "not `url`"),
            (
                r#"[{"url": "https://a.example/", "ua": "a"}]"#,
                "the body is a JSON array",
            ),
            (r#"{"urls": ["https://a.example/"]}"#, "missing field `ua`"),
            (
                r#"{"ua": "a", "urls": "https://a.example/"}"#,
                "a `urls` batch: invalid type",
            ),
            (
                r#"{"checks": [{"ua": "a"}]}"#,
                "a `checks` batch: missing field `url`",
            ),
            (r#"{"ua": "a", "urls": [], "checks": []}"#, "not both"),
            (r#"{"ua": "a"}"#, "needs `urls` or `checks`"),
            (
                r#"{"ua": "a", "urls": [], "extra": 1}"#,
                "unknown field `extra`",
            ),
            ("{", "the body is not JSON"),
        ] {
            let detail = detail(body);
            assert!(detail.contains(says), "{body}: {detail}");
            assert!(!detail.contains("untagged"), "{body}: {detail}");
        }
    }

    #[test]
    fn both_forms_parse() {
        assert!(matches!(
            parse(br#"{"ua": "a", "urls": ["https://a.example/"]}"#),
            Ok(BatchRequest::Urls(_))
        ));
        assert!(matches!(
            parse(br#"{"checks": [{"url": "https://a.example/", "ua": ["a", "b"]}]}"#),
            Ok(BatchRequest::Checks(_))
        ));
    }
}
