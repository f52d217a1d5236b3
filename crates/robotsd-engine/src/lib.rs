//! The robots.txt engine: robots.txt bytes + user-agent(s) + URL → verdict, exactly as Google's
//! reference parser decides (SEMANTICS.md §1). Pure: no IO, no clock, no async.
//!
//! - [`tokenizer`]: lines, keys and values, with the reference's per-line facts;
//! - [`escape_pattern`]: normalisation of rule values;
//! - [`path_params_query`]: the part of a URL that rules match;
//! - [`pattern`]: wildcard matching in linear time;
//! - [`RobotsTxt`]: the parsed file; [`RobotsTxt::check`] gives a [`Verdict`], exactly as the
//!   reference; [`RobotsTxt::check_with`] can instead decode percent-encoded unreserved
//!   characters as RFC 9309 says ([`PercentDecoding`]);
//! - [`Verdict::usage`]: the AI usage preferences (`Content-Usage`, `Content-Signal`) that apply
//!   to a URL that may be fetched ([`Usage`]); they never change a verdict.
//!
//! ```
//! use robotsd_engine::{Directive, RobotsTxt};
//!
//! let robots = RobotsTxt::parse(b"User-agent: *\nDisallow: /private\nAllow: /private/press\n");
//! let verdict = robots.check(&["ExampleBot"], "https://example.com/private/report.pdf");
//! assert!(!verdict.allowed);
//! let rule = verdict.rule.expect("a rule decided");
//! assert_eq!((rule.directive(), rule.pattern().as_ref(), rule.line()), (Directive::Disallow, "/private", 2));
//! assert!(verdict.groups.expect("the * group applied").is_global());
//!
//! // Longest match wins; on equal length `allow` wins.
//! assert!(robots.check(&["ExampleBot"], "https://example.com/private/press/2026").allowed);
//! ```
//!
//! Inside, the layers import downward only, and no two files import each other: the parsed
//! file's data (`data`: spans, rules, groups, diagnostics) and the pattern and percent-encoding
//! rules (`pattern`, `percent`) at the bottom; the sieve that decides a large run's wildcard rules
//! together (`sieve`) and the rule index above it (`index`), the parse's scratch
//! space (`scratch`) and the usage lines' builder and terms (`usage::lines`, `usage::terms`)
//! built on them; the parse and the core check (`robots_txt`, with the RFC mode's forms and
//! indexes in `robots_txt::rfc`) above those; and the readers of a parsed file (`verdict`,
//! `preferences` (the usage answers), `license`) on top. The same holds between modules: no two
//! import each other.
//!
//! Deviations from the reference, all deliberate and documented in `docs/engine.md`: a matching
//! empty `allow:`/`disallow:` value is not reported as the deciding rule (it decides nothing), and
//! wildcard matching is linear instead of quadratic (same answers).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod agent;
mod data;
mod diagnostics;
mod escape;
mod index;
mod license;
pub mod pattern;
mod percent;
mod preferences;
mod robots_txt;
mod scratch;
mod shared;
mod sieve;
pub mod tokenizer;
mod url_path;
mod usage;
mod verdict;

pub use agent::{extract_user_agent, is_global_agent, is_valid_user_agent_to_obey};
pub use diagnostics::{
    Diagnostic, DiagnosticKind, MAX_DIAGNOSTICS, ParseStats, UNSUPPORTED_KEYS, is_unsupported_key,
};
pub use escape::escape_pattern;
pub use license::License;
pub use percent::{PercentDecoding, UnknownPercentDecoding};
pub use preferences::{Usage, UsageEntry, UsageLine};
pub use robots_txt::{CrawlDelay, Directive, RobotsTxt};
pub use shared::{SharedGroups, SharedRule, SharedVerdict};
pub use url_path::path_params_query;
pub use usage::vocabulary::{AIPREF_VOCABULARY, USAGE_VOCABULARY, UsageLabel, rsl_usage_types};
pub use usage::{Preference, UsageSource};
pub use verdict::{AgentLine, AppliedGroups, Group, Rule, Sitemap, Verdict};

/// Checks of a set of groups tried rule by rule before its index is built, for tests that
/// compare both ways of deciding (`index::scan`).
#[doc(hidden)]
pub const SCAN_CHECKS: u32 = index::SCAN_CHECKS;

/// README.md's examples, compiled and run as doctests so they cannot go stale.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
