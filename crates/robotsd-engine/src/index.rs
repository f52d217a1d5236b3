//! Finding the deciding rule of a set of groups without trying every rule (SEMANTICS.md §1
//! "Precedence").
//!
//! Every rule has a literal prefix (its bytes before the first `*`, or before a final `$`), and it
//! can only match paths that start with that prefix. The entries of a set are sorted by prefix,
//! and each entry points `up` to the nearest earlier entry whose prefix is a prefix of its own.
//! For a path, the greatest entry not above the path is found by binary search; every rule whose
//! prefix is a prefix of the path lies on that entry's `up` chain (any string between such a
//! prefix and the path in sort order starts with that prefix). Only those candidates are matched,
//! so a check costs a binary search plus the few candidates, not the number of rules.
//!
//! Google's `index.htm` extension (an `allow: /d/index.html` also allows `/d/` exactly) is
//! indexed as a second entry of the same rule with the pattern `/d/$`.

use std::cmp::Ordering;

use super::data::RuleData;
use super::pattern::{Shape, index_htm_directory, matches_tail};

const NONE: u32 = u32::MAX;
const DERIVED: u32 = 1 << 31;

/// One indexed rule (8 bytes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    /// Rule id, with [`DERIVED`] set for the `index.htm` directory form.
    rule: u32,
    /// Position (within the set) of the next candidate to try, or [`NONE`].
    up: u32,
}

/// The sorted entries of one set of groups.
#[derive(Debug, Clone)]
pub(crate) struct RuleIndex {
    entries: Box<[Entry]>,
}

/// A candidate's pattern as matched: literal prefix, shape, and what follows the prefix.
#[derive(Clone, Copy)]
struct Form<'a> {
    prefix: &'a [u8],
    shape: Shape,
    /// Bytes after the prefix, without a final anchoring `$`.
    tail: &'a [u8],
    priority: u32,
}

fn form<'a>(entry_rule: u32, rules: &[RuleData], arena: &'a [u8]) -> Form<'a> {
    let rule = rules[(entry_rule & !DERIVED) as usize];
    let pattern = rule.pattern(arena);
    if entry_rule & DERIVED == 0 {
        let prefix_len = usize::from(rule.prefix_len);
        let shape = rule.shape(arena);
        let tail = match shape {
            Shape::Prefix | Shape::Exact => &[][..],
            Shape::Wildcard => match pattern.split_last() {
                Some((b'$', body)) => &body[prefix_len..],
                _ => &pattern[prefix_len..],
            },
        };
        return Form {
            prefix: &pattern[..prefix_len],
            shape,
            tail,
            priority: u32::from(rule.pattern_len),
        };
    }
    // The directory form `dir/$`: exact, or anchored wildcard when `dir/` holds a `*`.
    let dir = &pattern[..index_htm_directory(pattern).unwrap_or(0)];
    let priority = u32::try_from(dir.len() + 1).unwrap_or(u32::MAX);
    match memchr::memchr(b'*', dir) {
        None => Form {
            prefix: dir,
            shape: Shape::Exact,
            tail: &[],
            priority,
        },
        Some(star) => Form {
            prefix: &dir[..star],
            shape: Shape::Wildcard,
            tail: &dir[star..],
            priority,
        },
    }
}

/// The literal prefix of an entry, which is all the binary search needs.
#[inline]
fn prefix<'a>(entry_rule: u32, rules: &[RuleData], arena: &'a [u8]) -> &'a [u8] {
    if entry_rule & DERIVED == 0 {
        let rule = rules[entry_rule as usize];
        let start = rule.start as usize;
        &arena[start..start + usize::from(rule.prefix_len)]
    } else {
        form(entry_rule, rules, arena).prefix
    }
}

fn anchored(entry_rule: u32, rule: &RuleData, arena: &[u8]) -> bool {
    entry_rule & DERIVED != 0 || rule.pattern(arena).last() == Some(&b'$')
}

/// The best rule found so far: longest pattern, then `allow`, then the earliest line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Best {
    pub(crate) priority: u32,
    pub(crate) allow: bool,
    pub(crate) line: u32,
    /// Rule id, with the derived flag.
    pub(crate) rule: u32,
}

impl Best {
    /// A candidate found outside an index (the RFC 9309 mode's linear scan); `derived` for the
    /// `index.htm` directory form.
    pub(crate) fn new(
        pattern_len: usize,
        allow: bool,
        line: u32,
        rule: u32,
        derived: bool,
    ) -> Best {
        Best {
            priority: u32::try_from(pattern_len).unwrap_or(u32::MAX),
            allow,
            line,
            rule: if derived { rule | DERIVED } else { rule },
        }
    }

    fn key(&self) -> (u32, bool, std::cmp::Reverse<u32>) {
        (self.priority, self.allow, std::cmp::Reverse(self.line))
    }

    /// Whether the rule id names the `index.htm` directory form.
    pub(crate) fn is_derived(&self) -> bool {
        self.rule & DERIVED != 0
    }

    /// The rule id without the derived flag.
    pub(crate) fn rule_id(&self) -> u32 {
        self.rule & !DERIVED
    }

    pub(crate) fn max(a: Option<Best>, b: Option<Best>) -> Option<Best> {
        match (a, b) {
            (Some(x), Some(y)) => Some(if y.key() > x.key() { y } else { x }),
            (x, None) => x,
            (None, y) => y,
        }
    }
}

impl RuleIndex {
    /// How many entries [`RuleIndex::build`] makes of `rule_ids`, without building.
    pub(crate) fn entry_count(
        rule_ids: impl Iterator<Item = u32>,
        rules: &[RuleData],
        arena: &[u8],
    ) -> usize {
        rule_ids
            .map(|id| rules[id as usize])
            .filter(|r| r.pattern_len > 0)
            .map(|r| 1 + usize::from(r.has_index_htm_form(arena)))
            .sum()
    }

    /// Heap bytes of an index of `entry_count` entries.
    pub(crate) fn heap_size(entry_count: usize) -> usize {
        entry_count * std::mem::size_of::<Entry>()
    }

    /// Indexes `rule_ids` (rules with an empty pattern decide nothing and are left out).
    pub(crate) fn build(
        rule_ids: impl Iterator<Item = u32>,
        entry_count: usize,
        rules: &[RuleData],
        arena: &[u8],
    ) -> RuleIndex {
        // Sized exactly: the index lives as long as the parsed file, so no slack and no regrowth.
        let mut entries = Vec::with_capacity(entry_count);
        for id in rule_ids {
            let rule = rules[id as usize];
            if rule.pattern_len == 0 {
                continue;
            }
            entries.push(Entry { rule: id, up: NONE });
            if rule.has_index_htm_form(arena) {
                entries.push(Entry {
                    rule: id | DERIVED,
                    up: NONE,
                });
            }
        }
        // Sort on precomputed prefixes; the first eight bytes as a big-endian integer settle
        // most comparisons without touching the arena (a prefix never holds a NUL byte, so
        // zero-padding orders a shorter prefix first, as slice order does).
        let mut keyed: Vec<(u64, &[u8], Entry)> = entries
            .iter()
            .map(|&e| {
                let prefix = form(e.rule, rules, arena).prefix;
                let mut head = [0u8; 8];
                let n = prefix.len().min(8);
                head[..n].copy_from_slice(&prefix[..n]);
                (u64::from_be_bytes(head), prefix, e)
            })
            .collect();
        keyed.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| a.1.cmp(b.1))
                .then(a.2.rule.cmp(&b.2.rule))
        });
        let set = &mut entries[..];
        // `chain` holds positions whose prefixes each extend the previous one.
        let mut chain: Vec<u32> = Vec::new();
        for (i, &(_, prefix, entry)) in keyed.iter().enumerate() {
            while let Some(&top) = chain.last() {
                if prefix.starts_with(keyed[top as usize].1) {
                    break;
                }
                chain.pop();
            }
            set[i] = Entry {
                rule: entry.rule,
                up: chain.last().copied().unwrap_or(NONE),
            };
            let i = u32::try_from(i).unwrap_or(NONE);
            match chain.last_mut() {
                // Equal prefixes form a run; the chain keeps its last member.
                Some(top) if keyed[*top as usize].1.len() == prefix.len() => *top = i,
                _ => chain.push(i),
            }
        }
        RuleIndex {
            entries: entries.into_boxed_slice(),
        }
    }

    /// The best matching rule for `path`, if any.
    pub(crate) fn best_match(&self, path: &[u8], rules: &[RuleData], arena: &[u8]) -> Option<Best> {
        let set = &*self.entries;
        let after = set
            .partition_point(|e| form(e.rule, rules, arena).prefix.cmp(path) != Ordering::Greater);
        let mut i = after.checked_sub(1)?;
        let top_prefix = form(set[i].rule, rules, arena).prefix;
        let common = top_prefix
            .iter()
            .zip(path)
            .take_while(|(a, b)| a == b)
            .count();
        let mut best: Option<Best> = None;
        loop {
            let entry = set[i];
            let rule = &rules[(entry.rule & !DERIVED) as usize];
            if prefix(entry.rule, rules, arena).len() <= common {
                let f = form(entry.rule, rules, arena);
                let candidate = Best {
                    priority: f.priority,
                    allow: rule.is_allow(),
                    line: rule.line(),
                    rule: entry.rule,
                };
                let better = best.is_none_or(|b| candidate.key() > b.key());
                if better && matches_form(path, &f, anchored(entry.rule, rule, arena)) {
                    best = Some(candidate);
                }
            }
            if entry.up == NONE {
                break;
            }
            i = entry.up as usize;
        }
        best
    }
}

fn matches_form(path: &[u8], f: &Form<'_>, anchored: bool) -> bool {
    match f.shape {
        Shape::Prefix => true,
        Shape::Exact => path.len() == f.prefix.len(),
        Shape::Wildcard => matches_tail(&path[f.prefix.len()..], f.tail, anchored),
    }
}
