//! The fast paths: hand-written replacements for library code on the cached check's hot path.
//!
//! Each one earned its place by instruction counts (callgrind on the release binary, per cached
//! `GET /v1/check`; BENCHMARKS.md has the method and the history), and each is held to the
//! library it replaces by tests over arbitrary input, so it can never answer differently:
//!
//! | fast path | replaces | held to it by | saving per cached check |
//! | --- | --- | --- | --- |
//! | [`answer_json`]: the check answer written straight from [`crate::checker::Answer`] | `serde_json::to_vec(&CheckResponse::from(answer))` | byte-for-byte equality over every variant and proptest strings; every field of the documented `CheckResponse` present | 49,700 → 43,000 instructions (with borrowed query values), and 32,400 from escape scans in vectorisable chunks |
//! | `rsl_json`: `usage.rsl` (RSL license terms, `--rsl`) written straight from the cached document | serde of `RslJson` through `UsageJson::of` | byte-for-byte equality over every license state, tied contents, escapes (`answer_json`'s tests) | 63,900 → 51,300 on an answer carrying terms |
//! | `pace_json`: the `pace` member (`pace=true`) written straight from the reservation | serde of `PaceJson` (`pacing::answer`) | byte-for-byte equality over every variant and proptest values (`answer_json`'s tests) | 35,073 → 30,804 on a check with `pace=true` |
//! | [`query`]: query strings decoded with slice scans | `form_urlencoded::parse` | proptest equality on any input | 43,000 → 41,600 |
//! | `origin::canonical` (in [`crate::origin`], whose job is parsing a URL into an origin): URLs already in WHATWG form confirmed by one scan | `url::Url::parse` and the setters of `origin::parse_target` | proptest equality of URL, path and origin on arbitrary and URL-like text, and a floor on how often the fast path is taken | 41,600 → 37,100, then 31,200 with path and query in one pass |
//! | [`timestamp`]: RFC 3339 without `fmt` | `humantime::format_rfc3339_seconds` | proptest equality over the years 1970–9999 | 37,100 → 34,500 (with fewer `Display` round trips) |
//!
//! Not here, because they replace no library: the pre-sized response buffer
//! (`api::json`, 75,700 → 66,800), the pre-resolved metric series (`metrics`, 31,200 →
//! 30,900, and each route's own since, in `metrics::RouteSeries`), and the edge answering
//! `GET /v1/check` without the router (`server::edge`, 37,400 → 31,700; BENCHMARKS.md has that
//! session's steps and where a check's instructions go now). Anything new on this list needs the
//! same three things: a measured saving, a reference it is tested against, and a row above.

pub mod answer_json;
mod json;
mod pace_json;
pub mod query;
mod rsl_json;
pub mod timestamp;
