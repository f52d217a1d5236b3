//! Small sets of groups are matched by trying each rule, and never indexed.
//!
//! Most files' sets hold a few dozen rules, and most sets are checked a few times per parse (the
//! tester, `/v1/evaluate`, a re-fetched file): an index's build (a sort of its entries, a sieve)
//! cost more than all the checks it served. Against Google's reference on the shared corpus, the
//! build was half of robotsd's work to parse a file and check ten paths (issue 58). So a set is
//! matched as the reference matches, every rule, keeping the best:
//! - always, when it is small: at most [`SCAN_ENTRIES`] entries, fewer than [`SIEVE_RUN`]
//!   wildcards;
//! - for its first [`SCAN_CHECKS`] checks, when it has at most [`SCAN_FIRST_ENTRIES`] entries
//!   (an `allow` weighing four) and [`SCAN_LITERAL_BYTES`] of literal prefixes, each check
//!   whose wildcard rules read at most [`SCAN_BYTES`] (their patterns, and the path once for
//!   each); then its index is built.
//!
//! Neither is a worse case than the index's: a small set has fewer than [`SIEVE_RUN`] wildcards
//! (a run of that many in an index is tried member by member too), and a larger one is tried so
//! only within [`SCAN_FIRST_ENTRIES`] entries, [`SCAN_LITERAL_BYTES`] compared and
//! [`SCAN_BYTES`] of wildcard matching.

use std::sync::atomic::{AtomicU32, Ordering};

use super::{Best, DERIVED, Lengths, SIEVE_RUN, anchored, form, matches_form};
use crate::data::RuleData;
use crate::pattern::Shape;

/// The most entries a set may have and be matched by trying each: a check of such a set cost
/// less by trying each (about 40 instructions an entry) than by the index's binary search and
/// walk, and its build is never paid.
pub(crate) const SCAN_ENTRIES: usize = 32;

/// The most bytes a check may read to match a set's wildcard rules one by one before it is
/// indexed: their patterns, and the path once for each (a wildcard match reads the path and its
/// pattern once, `pattern::matches_tail`).
pub(crate) const SCAN_BYTES: usize = 64 * 1024;

/// The most entries a larger set may have to be tried rule by rule for its first checks, an
/// `allow` rule counting four ([`Plan::scan_weight`]). A `disallow` costs a check at most about
/// 90 instructions tried so, an `allow` up to about 460 (its `index.htm` form is looked for, a
/// `memrchr`, and tried), against about 1,100 an entry to build the index: the corpus's largest
/// sets (31,843 `disallow` entries, 502 KB of prefixes, in docs.oracle.com's file) were built on
/// their first check, two thirds of the index builds of a parse and one check of every file
/// (issue 58). Measured per check tried so, with an 8 KiB path: 32,700 `disallow:/x` 2.8 M
/// instructions, 32 Ki distinct `disallow` 2.5 M, 8,190 `allow:/index.html` 3.8 M (16 Ki of
/// them cost 7.5 M: so the weight), within the bound of docs/behaviour.md.
pub(crate) const SCAN_FIRST_ENTRIES: usize = 32 * 1024;

/// The most bytes of literal prefixes a larger set may have to be tried rule by rule for its
/// first checks: a prefix is compared with the path only as far as they agree, so this bounds
/// what a check compares, whatever the file's size.
pub(crate) const SCAN_LITERAL_BYTES: usize = 1024 * 1024;

/// Checks of a larger set tried rule by rule before its index is built. An index's build cost
/// more than this many checks tried rule by rule on the corpus (about 1,100 instructions an
/// entry to build, 20 to 40 to try), so a set checked fewer times never pays for one, and one
/// checked more pays these checks besides the build (issue 58: the reference re-parses for
/// every check, and robotsd's builds made it slower than that). Building sooner, as soon as the
/// checks tried would have paid for it by that estimate, cost more on the corpus (ten checks a
/// file: 621 M instructions against 547 M).
pub(crate) const SCAN_CHECKS: u32 = 16;

/// Bytes a check of a path of `path_len` bytes reads to match every wildcard rule of a set of
/// `wildcards` such rules and `wild_bytes` of their patterns ([`Plan`]): within [`SCAN_BYTES`],
/// it is tried rule by rule while it has checks to try so.
pub(crate) fn scan_reads(wild_bytes: u32, wildcards: u32, path_len: usize) -> usize {
    (wild_bytes as usize).saturating_add((wildcards as usize).saturating_mul(path_len))
}

/// Checks of a set left to try rule by rule before its index is built, and what matching its
/// wildcard rules reads besides the path.
#[derive(Debug, Default)]
pub(crate) struct ScansLeft {
    left: AtomicU32,
    wild_bytes: u32,
    wildcards: u32,
}

impl ScansLeft {
    /// [`SCAN_CHECKS`] checks for a set `plan` says may be tried first, else none.
    pub(crate) fn of(plan: Plan) -> ScansLeft {
        let first = plan.scanned_first();
        ScansLeft {
            left: AtomicU32::new(if first { SCAN_CHECKS } else { 0 }),
            wild_bytes: u32::try_from(plan.wild_bytes).unwrap_or(u32::MAX),
            wildcards: u32::try_from(plan.wildcards).unwrap_or(u32::MAX),
        }
    }

    /// Takes one for a check of a path of `path_len` bytes, if any is left and matching every
    /// wildcard rule reads at most [`SCAN_BYTES`] ([`scan_reads`]).
    pub(crate) fn take(&self, path_len: usize) -> bool {
        self.left.load(Ordering::Relaxed) > 0
            && scan_reads(self.wild_bytes, self.wildcards, path_len) <= SCAN_BYTES
            && self
                .left
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok()
    }
}

/// A copy of a parsed file counts its own checks, from where the original's count was.
impl Clone for ScansLeft {
    fn clone(&self) -> ScansLeft {
        ScansLeft {
            left: AtomicU32::new(self.left.load(Ordering::Relaxed)),
            wild_bytes: self.wild_bytes,
            wildcards: self.wildcards,
        }
    }
}

/// What a set's rules make: the entries an index of them holds, how many are wildcards, and the
/// bytes a check reads to try them all, besides the path: literal prefixes, wildcard patterns.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    pub(crate) entries: usize,
    /// `allow` rules (with a pattern): each costs a check tried rule by rule up to four entries.
    pub(crate) allows: usize,
    pub(crate) wildcards: usize,
    pub(crate) bytes: usize,
    pub(crate) wild_bytes: usize,
}

impl Plan {
    /// The plan of `rule_ids` (rules with an empty pattern decide nothing and are left out).
    pub(crate) fn of(
        rule_ids: impl Iterator<Item = u32>,
        rules: &[RuleData],
        arena: &[u8],
    ) -> Plan {
        let mut plan = Plan {
            entries: 0,
            allows: 0,
            wildcards: 0,
            bytes: 0,
            wild_bytes: 0,
        };
        for id in rule_ids {
            let rule = rules[id as usize];
            if rule.pattern_len == 0 {
                continue;
            }
            plan.entries += 1;
            plan.allows += usize::from(rule.is_allow());
            let wild = rule.shape(arena) == Shape::Wildcard;
            plan.wildcards += usize::from(wild);
            if wild {
                plan.wild_bytes += usize::from(rule.pattern_len);
            } else {
                plan.bytes += usize::from(rule.prefix_len);
            }
            if rule.has_index_htm_form(arena) {
                plan.entries += 1;
                let derived = form(id | DERIVED, rules, arena, super::PatternBytes);
                let read = derived.prefix.len() + derived.tail.len();
                if derived.shape == Shape::Wildcard {
                    plan.wildcards += 1;
                    plan.wild_bytes += read;
                } else {
                    plan.bytes += read;
                }
            }
        }
        plan
    }

    /// Whether the set is matched by trying each rule: no index is built for it.
    pub(crate) fn scanned(self) -> bool {
        self.entries <= SCAN_ENTRIES && self.wildcards < SIEVE_RUN
    }

    /// Whether the set may be tried rule by rule for its first [`SCAN_CHECKS`] checks, before
    /// an index is built: when it has at most [`SCAN_FIRST_ENTRIES`] entries and
    /// [`SCAN_LITERAL_BYTES`] of literal prefixes, and its wildcard patterns alone are within
    /// [`SCAN_BYTES`] (each check also bounds them with the path, [`scan_reads`]).
    pub(crate) fn scanned_first(self) -> bool {
        !self.scanned()
            && self.scan_weight() <= SCAN_FIRST_ENTRIES
            && self.bytes <= SCAN_LITERAL_BYTES
            && self.wild_bytes <= SCAN_BYTES
    }

    /// The entries a check tried rule by rule reads, weighed by cost: an `allow` counts four
    /// (its entries, and the search for its `index.htm` form, [`SCAN_FIRST_ENTRIES`]).
    pub(crate) fn scan_weight(self) -> usize {
        self.entries + 3 * self.allows
    }

    /// Whether an index of the set may build a sieve (only then is its size worth working out).
    pub(crate) fn may_sieve(self) -> bool {
        !self.scanned() && self.wildcards >= SIEVE_RUN
    }
}

/// The best rule of `rule_ids` for `path`, trying each: the longest pattern, then `allow`, then
/// the earliest line, as the index decides.
pub(crate) fn best_of(
    rule_ids: impl Iterator<Item = u32>,
    path: &[u8],
    rules: &[RuleData],
    arena: &[u8],
    lengths: impl Lengths,
) -> Option<Best> {
    let mut best: Option<Best> = None;
    let offer = |best: &mut Option<Best>, entry: u32, rule: &RuleData| {
        let f = form(entry, rules, arena, lengths);
        let candidate = Best {
            priority: f.priority,
            allow: rule.is_allow(),
            line: rule.line(),
            rule: entry,
        };
        if best.is_some_and(|b| candidate.key() <= b.key()) || !path.starts_with(f.prefix) {
            return;
        }
        #[cfg(test)]
        super::MATCHED.with(|m| m.set(m.get() + 1));
        if matches_form(path, &f, anchored(entry, rule, arena)) {
            *best = Some(candidate);
        }
    };
    for id in rule_ids {
        let rule = rules[id as usize];
        if rule.pattern_len == 0 {
            continue;
        }
        // Most rules fail on their literal prefix: that is tested before anything else is read.
        // Then one that cannot beat the best so far is left before its form is worked out: a
        // set of many equal rules (32 Ki `disallow:/x`) cost a check 4.4 M instructions else.
        let pattern = rule.pattern(arena);
        if path.starts_with(&pattern[..usize::from(rule.prefix_len)]) {
            let key = (
                lengths.priority(id, rule),
                rule.is_allow(),
                std::cmp::Reverse(rule.line()),
            );
            if best.is_none_or(|b| key > b.key()) {
                offer(&mut best, id, &rule);
            }
        }
        if rule.has_index_htm_form(arena) {
            offer(&mut best, id | DERIVED, &rule);
        }
    }
    best
}
