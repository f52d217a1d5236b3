//! Query parameters: decoded once, refused when unknown or repeated, and read into the values
//! the handlers need (`url`, `view`, `percent_decoding`).

use std::borrow::Cow;

use robotsd_engine::PercentDecoding;
use smallvec::SmallVec;

use super::problem::{ApiError, ParameterProblem};

/// The decoded name/value pairs of a query string.
pub(super) type Pairs<'q> = [(Cow<'q, str>, Cow<'q, str>)];

/// The decoded query parameters; values are borrowed from the query unless they had escapes.
/// Kept inline up to a check's usual number (`url`, `ua` and a few options), so that reading a
/// query allocates nothing for them.
pub(super) fn query_pairs(query: Option<&str>) -> SmallVec<[(Cow<'_, str>, Cow<'_, str>); 6]> {
    crate::fast::query::pairs(query.unwrap_or_default()).collect()
}

/// Refuses query parameters the endpoint does not take (`known`: each name, and whether it may
/// be repeated), and repeats of those it takes once: a silently ignored parameter, or a URL cut
/// at an unencoded `&`, would answer a question that was not asked.
pub(super) fn check_params(pairs: &Pairs<'_>, known: &[(&str, bool)]) -> Result<(), ApiError> {
    for (i, (name, _)) in pairs.iter().enumerate() {
        let problem = match known.iter().find(|(known, _)| known == name) {
            None => ParameterProblem::Unknown,
            Some((_, repeatable)) if !repeatable && pairs[..i].iter().any(|(n, _)| n == name) => {
                ParameterProblem::Repeated
            }
            Some(_) => continue,
        };
        return Err(ApiError::Parameter {
            name: name.to_string(),
            problem,
        });
    }
    Ok(())
}

/// A `true`/`false` parameter; `false` when absent.
pub(super) fn flag(pairs: &Pairs<'_>, name: &'static str) -> Result<bool, ApiError> {
    match pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_ref())
    {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(_) => Err(ApiError::Parameter {
            name: name.into(),
            problem: ParameterProblem::Value("true, false"),
        }),
    }
}

/// The `sign` parameter: the method a signature is asked for (Web Bot Auth), if any.
pub(super) fn sign_method(pairs: &Pairs<'_>) -> Result<Option<&'static str>, ApiError> {
    match pairs
        .iter()
        .find(|(k, _)| k == "sign")
        .map(|(_, v)| v.as_ref())
    {
        None => Ok(None),
        Some("GET") => Ok(Some("GET")),
        Some("HEAD") => Ok(Some("HEAD")),
        Some(_) => Err(ApiError::Parameter {
            name: "sign".into(),
            problem: ParameterProblem::Value("GET, HEAD"),
        }),
    }
}

/// How much of an answer to send: all of it, or only the verdict (`?view=verdict`), for fleets
/// that check every URL and need nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum View {
    Full,
    Verdict,
}

/// The `view` parameter.
pub(super) fn view(pairs: &Pairs<'_>) -> Result<View, ApiError> {
    match pairs
        .iter()
        .find(|(k, _)| k == "view")
        .map(|(_, v)| v.as_ref())
    {
        None | Some("full") => Ok(View::Full),
        Some("verdict") => Ok(View::Verdict),
        Some(_) => Err(ApiError::Parameter {
            name: "view".into(),
            problem: ParameterProblem::Value("full, verdict"),
        }),
    }
}

/// The `url` query parameter, which every GET endpoint requires.
pub(super) fn required_url<'q>(pairs: &mut Pairs<'q>) -> Result<Cow<'q, str>, ApiError> {
    // Taken rather than borrowed: a decoded URL is already a copy the check may keep.
    pairs
        .iter_mut()
        .find(|(k, _)| k == "url")
        .map(|(_, v)| std::mem::take(v))
        .filter(|v| !v.is_empty())
        .ok_or(ApiError::Missing("url"))
}

/// The `percent_decoding` parameter: how percent-encoded unreserved characters compare
/// (`default` when it is absent: `--percent-decoding`).
pub(super) fn percent_decoding(
    pairs: &Pairs<'_>,
    default: PercentDecoding,
) -> Result<PercentDecoding, ApiError> {
    match pairs.iter().find(|(k, _)| k == "percent_decoding") {
        None => Ok(default),
        Some((_, value)) => value.parse().map_err(|_| ApiError::Parameter {
            name: "percent_decoding".into(),
            problem: ParameterProblem::Value("google, rfc9309"),
        }),
    }
}
