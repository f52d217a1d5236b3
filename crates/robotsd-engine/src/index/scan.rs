//! Small sets of groups are matched by trying each rule, and never indexed.
//!
//! Most files' sets hold a few dozen rules, and most sets are checked a few times per parse (the
//! tester, `/v1/evaluate`, a re-fetched file): an index's build (a sort of its entries, a sieve)
//! cost more than all the checks it served. Against Google's reference on the shared corpus, the
//! build was half of robotsd's work to parse a file and check ten paths (issue 58). A set small
//! enough is matched as the reference matches: every rule, keeping the best. It is never a
//! worse case than the index's: at most [`SCAN_ENTRIES`] entries, fewer than
//! [`SIEVE_RUN`] of them wildcards (a run of that many in an index is tried member by member
//! too), and each literal prefix compared within the path's length.

use super::{Best, DERIVED, Lengths, SIEVE_RUN, anchored, form, matches_form};
use crate::data::RuleData;
use crate::pattern::Shape;

/// The most entries a set may have and be matched by trying each: a check of such a set cost
/// less by trying each (about 40 instructions an entry) than by the index's binary search and
/// walk, and its build is never paid.
pub(crate) const SCAN_ENTRIES: usize = 32;

/// What a set's rules make: the entries an index of them holds, and how many are wildcards.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    pub(crate) entries: usize,
    pub(crate) wildcards: usize,
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
            wildcards: 0,
        };
        for id in rule_ids {
            let rule = rules[id as usize];
            if rule.pattern_len == 0 {
                continue;
            }
            plan.entries += 1;
            plan.wildcards += usize::from(rule.shape(arena) == Shape::Wildcard);
            if rule.has_index_htm_form(arena) {
                plan.entries += 1;
                let derived = form(id | DERIVED, rules, arena, super::PatternBytes);
                plan.wildcards += usize::from(derived.shape == Shape::Wildcard);
            }
        }
        plan
    }

    /// Whether the set is matched by trying each rule: no index is built for it.
    pub(crate) fn scanned(self) -> bool {
        self.entries <= SCAN_ENTRIES && self.wildcards < SIEVE_RUN
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
    let mut offer = |entry: u32, rule: &RuleData| {
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
            best = Some(candidate);
        }
    };
    for id in rule_ids {
        let rule = rules[id as usize];
        if rule.pattern_len == 0 {
            continue;
        }
        // Most rules fail on their literal prefix: that is tested before anything else is read.
        let pattern = rule.pattern(arena);
        if path.starts_with(&pattern[..usize::from(rule.prefix_len)]) {
            offer(id, &rule);
        }
        if rule.has_index_htm_form(arena) {
            offer(id | DERIVED, &rule);
        }
    }
    best
}
