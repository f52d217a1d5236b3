//! The RFC 9309 mode's reading of a parsed file (`PercentDecoding::Rfc9309`): patterns compared
//! in the RFC's form (`crate::percent`), with the same precedence and the same bound on a check's
//! work as Google's mode (docs/behaviour.md, "The cost of a check, whatever the file").
//!
//! Nearly every file's patterns are their own RFC form, and then each set's rule index answers in
//! the RFC mode too. A file where some pattern changes (an escape of an unreserved character, a
//! `$` before the end, a general delimiter in the query) keeps the RFC forms from its parse: the
//! changed patterns' forms in the arena, the rules again with those forms, their lengths for
//! precedence, and, for each set holding a changed rule, an index of its own over them. That
//! index is the rule index of Google's mode, sieve included, built on the set's first check in
//! the RFC mode, so a check costs what it costs in Google's mode on the same forms. Trying every
//! rule instead cost 86 M instructions a check on a file of 27,000 wildcard patterns and one
//! `%41`. The forms are worked out at parse time because their size must be known then: a
//! parsed file's weight, which a byte-weighed cache charges once, counts every index it may
//! build ([`RobotsTxt::heap_size`]).

use std::sync::OnceLock;

use super::{Builder, RobotsTxt, SetData, to_u32};
use crate::data::{GroupData, RuleData};
use crate::index::{Best, Plan, RuleIndex, ScansLeft, SieveCharge};
use crate::pattern;
use crate::percent::{pattern_rewritten, rfc_pattern};

/// The RFC forms of a file some of whose patterns change in that form.
#[derive(Debug, Clone)]
pub(crate) struct RfcForms {
    /// Every rule by id, as in [`RobotsTxt::rules`] but for the changed patterns, which point to
    /// their RFC form: a whole copy, since the index finds rules by id.
    rules: Box<[RuleData]>,
    /// Precedence lengths by rule id, when some rule's is not its RFC form's bytes (a character
    /// encoded only to compare it counts as the one octet written); empty otherwise.
    lengths: Box<[u16]>,
    /// The sets holding a changed rule, ascending by set id, each with its index of RFC forms.
    /// The other sets' own indexes answer for them.
    sets: Box<[(u32, RfcSet)]>,
}

/// The index of one set's RFC forms, charged before it is built as [`SetData`]'s is.
#[derive(Debug, Clone)]
struct RfcSet {
    entry_count: u32,
    sieve_bound: SieveCharge,
    /// Matched by trying each rule, as its set is in Google's mode.
    scanned: bool,
    /// Checks left to try rule by rule before the index is built.
    scans_left: ScansLeft,
    index: OnceLock<RuleIndex>,
}

impl Builder {
    /// Keeps the RFC form of the rule just pushed when it differs from Google's form. `maybe`
    /// says whether the written value holds what could make it differ (`%`, `$`, `?` or a byte
    /// ≥ 0x80): a cheap test from the parse's scan, so that the exact one runs on few rules.
    pub(super) fn keep_rfc_form(&mut self, maybe: bool) {
        if !maybe {
            return;
        }
        let id = self.s.rules.len() - 1;
        let rule = self.s.rules[id];
        if !pattern_rewritten(rule.pattern(&self.s.arena)) {
            return;
        }
        let (form, priority) = rfc_pattern(rule.pattern(&self.s.arena));
        let form = form.into_owned();
        let start = to_u32(self.s.arena.len());
        self.s.arena.extend_from_slice(&form);
        // A form is at most three bytes per byte written, and lines at most 16,663 bytes.
        let data = RuleData {
            start,
            line_allow: rule.line_allow,
            pattern_len: u16::try_from(form.len()).unwrap_or(u16::MAX),
            prefix_len: u16::try_from(pattern::split(&form).0).unwrap_or(u16::MAX),
        };
        let priority = u16::try_from(priority).unwrap_or(u16::MAX);
        self.s.rfc_forms.push((to_u32(id), data, priority));
    }
}

impl RfcForms {
    /// The RFC forms of a parsed file from the changed rules (`changed`, ascending by id), or
    /// nothing when no pattern changes. `arena` holds the changed forms.
    pub(super) fn build(
        changed: &[(u32, RuleData, u16)],
        rules: &[RuleData],
        arena: &[u8],
        sets: &[SetData],
        set_groups: &[u32],
        groups: &[GroupData],
    ) -> Option<Box<RfcForms>> {
        if changed.is_empty() {
            return None;
        }
        let mut forms = rules.to_vec();
        for &(id, data, _) in changed {
            forms[id as usize] = data;
        }
        let lengths = if changed.iter().any(|(_, d, len)| d.pattern_len != *len) {
            let mut lengths: Vec<u16> = forms.iter().map(|r| r.pattern_len).collect();
            for &(id, _, len) in changed {
                lengths[id as usize] = len;
            }
            lengths.into_boxed_slice()
        } else {
            Box::default()
        };
        let changes = |g: &u32| {
            let (a, b) = groups[*g as usize].rules;
            let first = changed.partition_point(|c| c.0 < a);
            changed.get(first).is_some_and(|c| c.0 < b)
        };
        let rule_ids = |set: &SetData| {
            set_groups[set.groups.0 as usize..set.groups.1 as usize]
                .iter()
                .flat_map(|&g| {
                    let (a, b) = groups[g as usize].rules;
                    a..b
                })
        };
        let sets = sets
            .iter()
            .enumerate()
            .filter(|(_, set)| {
                set_groups[set.groups.0 as usize..set.groups.1 as usize]
                    .iter()
                    .any(changes)
            })
            .map(|(id, set)| {
                let ids = rule_ids(set);
                let plan = Plan::of(ids.clone(), &forms, arena);
                // A set is scanned in both modes or in neither: the RFC forms have the same
                // rules and stars.
                let scanned = set.scanned;
                let rfc_set = RfcSet {
                    entry_count: to_u32(plan.entries),
                    sieve_bound: SieveCharge::new(plan.may_sieve() && !scanned),
                    scanned,
                    scans_left: ScansLeft::of(plan),
                    index: OnceLock::new(),
                };
                (to_u32(id), rfc_set)
            })
            .collect();
        Some(Box::new(RfcForms {
            rules: forms.into_boxed_slice(),
            lengths,
            sets,
        }))
    }

    /// Heap bytes, the indexes counted as if built (see [`RobotsTxt::heap_size`]); the forms'
    /// bytes are in the file's arena.
    pub(super) fn heap_size(&self, robots: &RobotsTxt) -> usize {
        use std::mem::{size_of, size_of_val};
        size_of::<RfcForms>()
            + size_of_val(&*self.rules)
            + size_of_val(&*self.lengths)
            + size_of_val(&*self.sets)
            + self.index_heap_size(robots)
    }

    /// Heap bytes of the indexes alone, as if built; `robots` is the file these forms are of.
    pub(super) fn index_heap_size(&self, robots: &RobotsTxt) -> usize {
        self.sets
            .iter()
            .filter(|(_, s)| !s.scanned)
            .map(|(id, s)| {
                RuleIndex::heap_size(s.entry_count as usize) + self.sieve_charge(robots, *id, s)
            })
            .sum()
    }

    /// Heap bytes the sieve of set `id`'s RFC index is charged, worked out on the first call.
    fn sieve_charge(&self, robots: &RobotsTxt, id: u32, set: &RfcSet) -> usize {
        set.sieve_bound.bytes(|| {
            let ids = robots.set_rule_ids(&robots.sets[id as usize]);
            RuleIndex::sieve_bound(ids, &self.rules, &robots.arena)
        })
    }
}

impl RobotsTxt {
    /// The best rule of a set for a path in RFC form: the same precedence as Google's mode
    /// (longest pattern, `allow` on ties, earliest line), lengths counted as `rfc_pattern`
    /// counts them, and Google's `index.htm` extension on the RFC form.
    pub(crate) fn best_in_set_rfc(&self, set: u32, path: &[u8]) -> Option<Best> {
        let forms = self.rfc.as_deref().and_then(|rfc| {
            let at = rfc.sets.binary_search_by_key(&set, |s| s.0).ok()?;
            Some((rfc, &rfc.sets[at].1))
        });
        let Some((rfc, rfc_set)) = forms else {
            // No pattern of the set changes: Google's forms are the RFC forms.
            return self.best_in_set(set, path);
        };
        let lengths: &[u16] = &rfc.lengths;
        let scans = rfc_set.index.get().is_none() && rfc_set.scans_left.take(path.len());
        if rfc_set.scanned || scans {
            let ids = self.set_rule_ids(&self.sets[set as usize]);
            return crate::index::best_of(ids, path, &rfc.rules, &self.arena, lengths);
        }
        rfc_set
            .index
            .get_or_init(|| {
                let ids = self.set_rule_ids(&self.sets[set as usize]);
                let count = rfc_set.entry_count as usize;
                RuleIndex::build(ids, count, &rfc.rules, &self.arena, lengths)
            })
            .best_match(path, &rfc.rules, &self.arena, lengths)
    }

    /// Whether the RFC 9309 index of `set` is built, and its sieve's heap bytes, for tests
    /// that check the charge.
    #[cfg(test)]
    pub(crate) fn rfc_index_built(&self, set: u32) -> Option<(usize, usize)> {
        let rfc = self.rfc.as_deref()?;
        let at = rfc.sets.binary_search_by_key(&set, |s| s.0).ok()?;
        let rfc_set = &rfc.sets[at].1;
        let index = rfc_set.index.get()?;
        Some((
            index.sieve_heap_size(),
            rfc.sieve_charge(self, set, rfc_set),
        ))
    }
}
