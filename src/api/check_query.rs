//! The query of `GET /v1/check`, the hot path, read in one pass over its pairs.
//!
//! The general helpers (`params`) each scan the pairs for their name: six scans and a check of
//! every name against the known ones, about 400 instructions a check. This reads the names
//! once, then hands each helper only its own pair, so that the values are read, and refused,
//! exactly as the helpers do; the tests hold it to them.

use std::borrow::Cow;

use robotsd_engine::PercentDecoding;
use smallvec::SmallVec;

use super::params::{self, Pairs, View};
use super::problem::{ApiError, ParameterProblem};
use crate::checker::CheckOptions;

/// The parameters of one check.
#[derive(Debug)]
pub(super) struct CheckQuery<'p, 'q> {
    /// The URL, taken from its pair: a decoded one is a copy the check keeps.
    pub url: Cow<'q, str>,
    /// Each `ua` value, in order.
    pub agents: SmallVec<[&'p str; 2]>,
    pub view: View,
    pub options: CheckOptions,
    /// `record=true`.
    pub record: bool,
    /// `sign=GET` (or `HEAD`): the method a signature is asked for.
    pub sign: Option<&'static str>,
}

/// The parameters taken once, by their place in [`CheckQuery::read`]'s table; `ua` repeats.
const URL: usize = 0;
const VIEW: usize = 1;
const PERCENT_DECODING: usize = 2;
const PACE: usize = 3;
const RECORD: usize = 4;
const SIGN: usize = 5;

impl<'p, 'q> CheckQuery<'p, 'q> {
    /// Reads `pairs`, refusing what `params::check_params` refuses (the first unknown or
    /// repeated name, in order), then each value as its helper does, in the order the handler
    /// always read them: `view`, `percent_decoding`, `pace`, `record`, `sign`, `url`.
    pub(super) fn read(
        pairs: &'p mut Pairs<'q>,
        default_decoding: PercentDecoding,
    ) -> Result<CheckQuery<'p, 'q>, ApiError> {
        let mut at: [Option<usize>; 6] = [None; 6];
        for (i, (name, _)) in pairs.iter().enumerate() {
            let slot = match name.as_ref() {
                "url" => URL,
                "ua" => continue,
                "view" => VIEW,
                "percent_decoding" => PERCENT_DECODING,
                "pace" => PACE,
                "record" => RECORD,
                "sign" => SIGN,
                _ => return Err(refused(name, ParameterProblem::Unknown)),
            };
            if at[slot].replace(i).is_some() {
                return Err(refused(name, ParameterProblem::Repeated));
            }
        }
        let (view, options, record, sign) = {
            let one = |slot: usize| at[slot].map_or(&[][..], |i| std::slice::from_ref(&pairs[i]));
            let view = params::view(one(VIEW))?;
            let options = CheckOptions {
                decoding: params::percent_decoding(one(PERCENT_DECODING), default_decoding)?,
                pace: super::pace::pace_param(one(PACE))?,
                licenses: view == View::Full,
                // The caller is the request's, not the query's: the handler sets it.
                caller: crate::compute::Caller::Unknown,
            };
            let record = params::flag(one(RECORD), "record")?;
            (view, options, record, params::sign_method(one(SIGN))?)
        };
        let url = at[URL]
            .map(|i| std::mem::take(&mut pairs[i].1))
            .filter(|url| !url.is_empty())
            .ok_or(ApiError::Missing("url"))?;
        let pairs: &'p Pairs<'q> = pairs;
        let agents = pairs
            .iter()
            .filter(|(name, _)| name == "ua")
            .map(|(_, value)| value.as_ref())
            .collect();
        Ok(CheckQuery {
            url,
            agents,
            view,
            options,
            record,
            sign,
        })
    }
}

fn refused(name: &str, problem: ParameterProblem) -> ApiError {
    ApiError::Parameter {
        name: name.to_string(),
        problem,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// What the handler read with the general helpers, one scan each, as text to compare.
    fn reference(pairs: &mut Pairs<'_>, default: PercentDecoding) -> String {
        let read = (|| {
            params::check_params(
                pairs,
                &[
                    ("url", false),
                    ("ua", true),
                    ("view", false),
                    ("percent_decoding", false),
                    ("pace", false),
                    ("record", false),
                    ("sign", false),
                ],
            )?;
            let view = params::view(pairs)?;
            let decoding = params::percent_decoding(pairs, default)?;
            let pace = super::super::pace::pace_param(pairs)?;
            let record = params::flag(pairs, "record")?;
            let sign = params::sign_method(pairs)?;
            let url = params::required_url(pairs)?.into_owned();
            let agents: Vec<String> = pairs
                .iter()
                .filter(|(k, _)| k == "ua")
                .map(|(_, v)| v.to_string())
                .collect();
            Ok::<_, ApiError>(format!(
                "{url} {agents:?} {view:?} {decoding:?} {pace} {record} {sign:?} {}",
                view == View::Full
            ))
        })();
        read.unwrap_or_else(|error| format!("{:?}", error.problem()))
    }

    fn ours(pairs: &mut Pairs<'_>, default: PercentDecoding) -> String {
        match CheckQuery::read(pairs, default) {
            Ok(q) => format!(
                "{} {:?} {:?} {:?} {} {} {:?} {}",
                q.url,
                q.agents.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
                q.view,
                q.options.decoding,
                q.options.pace,
                q.record,
                q.sign,
                q.options.licenses
            ),
            Err(error) => format!("{:?}", error.problem()),
        }
    }

    fn both(query: &str) -> (String, String) {
        let mut a = params::query_pairs(Some(query));
        let mut b = params::query_pairs(Some(query));
        (
            reference(&mut a, PercentDecoding::Google),
            ours(&mut b, PercentDecoding::Google),
        )
    }

    #[test]
    fn examples() {
        for query in [
            "url=http%3A%2F%2Fa.test%2Fx&ua=SomeBot",
            "ua=A&url=http://a.test/&ua=B,C&view=verdict&pace=true&record=false",
            "url=http://a.test/&ua=A&percent_decoding=rfc9309",
            "",
            "ua=A",
            "url=&ua=A",
            "url=http://a.test/&url=http://b.test/&ua=A",
            "url=http://a.test/&ua=A&bogus=1",
            "bogus=1&view=nonsense",
            "url=http://a.test/&ua=A&view=nonsense&pace=maybe",
            "url=http://a.test/&ua=A&pace=maybe&record=maybe",
            "url=http://a.test/&ua=A&percent_decoding=x&view=verdict",
            "view=verdict&view=full&unknown=1",
            "url=http://a.test/&ua=A&sign=GET",
            "url=http://a.test/&ua=A&sign=HEAD&record=true",
            "url=http://a.test/&ua=A&sign=get",
            "url=http://a.test/&ua=A&sign=GET&sign=HEAD",
            "url=http://a.test/&ua=A&sign=POST&record=maybe",
        ] {
            let (reference, ours) = both(query);
            assert_eq!(ours, reference, "{query}");
        }
    }

    fn pair() -> impl Strategy<Value = String> {
        let names = prop::sample::select(vec![
            "url",
            "ua",
            "view",
            "percent_decoding",
            "pace",
            "record",
            "sign",
            "other",
            "",
        ]);
        let values = prop::sample::select(vec![
            "",
            "http://a.test/x",
            "SomeBot",
            "full",
            "verdict",
            "google",
            "rfc9309",
            "true",
            "false",
            "GET",
            "x",
        ]);
        (names, values).prop_map(|(name, value)| format!("{name}={value}"))
    }

    proptest! {
        #[test]
        fn reads_as_the_general_helpers_do(pairs in prop::collection::vec(pair(), 0..9)) {
            let query = pairs.join("&");
            let (reference, ours) = both(&query);
            prop_assert_eq!(ours, reference, "{}", query);
        }
    }
}
