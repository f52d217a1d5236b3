//! Usage preferences for AI (`docs/usage.md`): the `Content-Usage` rule of
//! draft-ietf-aipref-attach-05 with the vocabulary of draft-ietf-aipref-vocab-08, and
//! Cloudflare's `Content-Signal`, kept apart from each other and from the verdict.
//!
//! Both are group members with an optional path and a statement of preference, an RFC 9651
//! Dictionary of `label=value` ([`sf`]). For a URL and the groups that applied to it, the lines
//! whose path matches are compared as `allow`/`disallow` rules are (longest pattern first), and
//! the statements of the lines tied for longest are combined with the most restrictive value
//! winning (aipref-vocab §5.1), which is the opposite of `allow` winning a tie. Nothing here
//! changes a verdict: preferences apply only to URLs that may be fetched.
//!
//! This module reads the lines ([`lines`], [`sf`]) and names their terms ([`terms`],
//! [`vocabulary`]), below the parse, which builds its tables with it; the answers for a URL,
//! read from a parsed file, are `preferences`, above the parse.

pub(crate) mod lines;
pub(crate) mod sf;
pub(crate) mod terms;
#[cfg(test)]
mod tests;
pub mod vocabulary;

pub(crate) use lines::UsageLineData;
pub use terms::{Preference, UsageSource};
