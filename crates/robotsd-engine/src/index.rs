//! Finding the deciding rule of a set of groups without trying every rule (SEMANTICS.md §1
//! "Precedence").
//!
//! Every rule has a literal prefix (its bytes before the first `*`, or before a final `$`), and it
//! can only match paths that start with that prefix. The entries of a set are sorted by prefix;
//! entries of one prefix form a run, and each run points `up` to the nearest earlier run whose
//! prefix is a prefix of its own. For a path, the greatest entry not above the path is found by
//! binary search; every rule whose prefix is a prefix of the path lies in a run on that entry's
//! `up` chain (any string between such a prefix and the path in sort order starts with that
//! prefix). Only those candidates are matched, so a check costs a binary search plus the
//! candidates, not the number of rules.
//!
//! A hostile file makes one run huge: 46,000 rules beginning `/*` all share the prefix `/`. Two
//! things keep such a run cheap (the bound is in robotsd's docs/behaviour.md):
//! - rules that match exactly the same paths (the same pattern, or an `index.htm` directory form
//!   equal to a written `dir/$`) are indexed once, as the one of them that would decide: `allow`
//!   over `disallow`, then the earliest line, as the reference reports;
//! - a run is ordered by precedence and tried from its best member down, so its first match is
//!   its answer, and a run none of whose members can beat the best match so far is not tried;
//! - a run of many wildcard members (distinct patterns none of which may match) hands them to a
//!   [`Sieve`], which decides them together in one pass over the path.
//!
//! Google's `index.htm` extension (an `allow: /d/index.html` also allows `/d/` exactly) is
//! indexed as a second entry of the same rule with the pattern `/d/$`.
//!
//! The RFC 9309 mode indexes the RFC forms of a set's patterns the same way (`robots_txt::rfc`):
//! rules whose pattern there is another, ranked by [`Lengths`] instead of their bytes.

use std::cmp::Ordering;

use super::data::RuleData;
use super::pattern::{Shape, index_htm_directory, matches_tail};
use super::sieve::{self, Item, Member, Sieve};

/// No enclosing run.
const NONE: u32 = u32::MAX >> 2;
const DERIVED: u32 = 1 << 31;
/// Marks, in [`Entry::up`], the first (lowest-precedence) member of a run.
const RUN_START: u32 = 1 << 31;
/// Marks, in [`Entry::up`], a member the run's [`Sieve`] decides instead of the walk.
const SIEVED: u32 = 1 << 30;
/// Runs with at least this many wildcard members are decided by a [`Sieve`]: below it, trying
/// each member costs less than a pass over the path.
pub(crate) const SIEVE_RUN: usize = 16;

/// One indexed rule (8 bytes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    /// Rule id, with [`DERIVED`] set for the `index.htm` directory form.
    rule: u32,
    /// Position (within the set) of the last member of the enclosing run, or [`NONE`]; with
    /// [`RUN_START`] on the first member of its own run.
    up: u32,
}

impl Entry {
    fn exit(self) -> u32 {
        self.up & !(RUN_START | SIEVED)
    }
    fn starts_run(self) -> bool {
        self.up & RUN_START != 0
    }
    fn sieved(self) -> bool {
        self.up & SIEVED != 0
    }
}

#[cfg(test)]
thread_local! {
    /// Candidates matched against a path on this thread, for tests that bound the work of a
    /// check without timing it.
    pub(crate) static MATCHED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The sorted entries of one set of groups.
#[derive(Debug, Clone)]
pub(crate) struct RuleIndex {
    entries: Box<[Entry]>,
    /// The wildcard members of the large runs, decided together.
    sieve: Option<Box<Sieve>>,
}

/// How long a rule counts for precedence (SEMANTICS.md §1 "Precedence"): the bytes of its
/// pattern in Google's mode; in the RFC 9309 mode, where a character may be encoded only to
/// compare it, the octets as written (`percent::rfc_pattern`). A type parameter rather than a
/// table looked up at run time, so that Google's mode pays nothing for the other.
pub(crate) trait Lengths: Copy {
    /// The precedence length of rule `id`, whose data is `rule`.
    fn priority(self, id: u32, rule: RuleData) -> u32;
}

/// Every rule counts its pattern's bytes (Google's mode, and the RFC forms when no character is
/// encoded only to compare it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PatternBytes;

impl Lengths for PatternBytes {
    #[inline(always)]
    fn priority(self, _id: u32, rule: RuleData) -> u32 {
        u32::from(rule.pattern_len)
    }
}

/// A length per rule id; an empty table means [`PatternBytes`].
impl Lengths for &[u16] {
    #[inline]
    fn priority(self, id: u32, rule: RuleData) -> u32 {
        u32::from(self.get(id as usize).copied().unwrap_or(rule.pattern_len))
    }
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

fn form<'a>(
    entry_rule: u32,
    rules: &[RuleData],
    arena: &'a [u8],
    lengths: impl Lengths,
) -> Form<'a> {
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
            priority: lengths.priority(entry_rule, rule),
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

/// Bytes of a prefix held in a sort key: most prefixes of a large set differ within them.
const HEAD: usize = 16;

/// An entry while the index is built.
#[derive(Clone, Copy)]
struct Keyed<'a> {
    head: u128,
    form: Form<'a>,
    anchored: bool,
    best: Best,
}

impl Keyed<'_> {
    /// Orders entries of one prefix so that those matching exactly the same paths compare
    /// equal: same length, shape, tail and anchoring means the same pattern.
    fn same_paths_cmp(&self, other: &Keyed<'_>) -> Ordering {
        (self.form.priority, self.form.shape as u8, self.anchored)
            .cmp(&(other.form.priority, other.form.shape as u8, other.anchored))
            .then_with(|| self.form.tail.cmp(other.form.tail))
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
        form(entry_rule, rules, arena, PatternBytes).prefix
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
    fn key(&self) -> (u32, bool, std::cmp::Reverse<u32>) {
        (self.priority, self.allow, std::cmp::Reverse(self.line))
    }

    /// [`Best::key`] as one integer, as the sieve ranks members.
    fn rank(&self) -> u64 {
        sieve::rank(self.priority, self.allow, self.line)
    }

    fn of_member(member: Member) -> Best {
        Best {
            priority: (member.rank >> 32) as u32,
            allow: member.rank & (1 << 31) != 0,
            line: 0x7FFF_FFFF - (member.rank & 0x7FFF_FFFF) as u32,
            rule: member.rule,
        }
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
    /// Heap bytes the sieve of `rule_ids` will take (see [`sieve::heap_of`]): charged before
    /// the index is built, as the sieve is built with it. Nothing unless the rules make a sieved
    /// run.
    pub(crate) fn sieve_bound(
        rule_ids: impl Iterator<Item = u32>,
        rules: &[RuleData],
        arena: &[u8],
    ) -> usize {
        let mut wild = Vec::new();
        for id in rule_ids {
            let rule = rules[id as usize];
            if rule.pattern_len == 0 {
                continue;
            }
            let forms = [
                Some(id),
                rule.has_index_htm_form(arena).then_some(id | DERIVED),
            ];
            for e in forms.into_iter().flatten() {
                let f = form(e, rules, arena, PatternBytes);
                if f.shape == Shape::Wildcard {
                    wild.push(sieve::Planned {
                        prefix: f.prefix,
                        tail: f.tail,
                        anchored: anchored(e, &rule, arena),
                    });
                }
            }
        }
        if wild.len() < SIEVE_RUN {
            return 0;
        }
        sieve::heap_of(&wild, SIEVE_RUN)
    }

    /// Heap bytes of the sieve, once built.
    #[cfg(test)]
    pub(crate) fn sieve_heap_size(&self) -> usize {
        self.sieve.as_ref().map_or(0, |s| s.heap_size())
    }

    /// Heap bytes of an index of `entry_count` entries.
    pub(crate) fn heap_size(entry_count: usize) -> usize {
        entry_count * std::mem::size_of::<Entry>()
    }

    /// Indexes `rule_ids` (rules with an empty pattern decide nothing and are left out), ranked
    /// by `lengths`.
    pub(crate) fn build(
        rule_ids: impl Iterator<Item = u32>,
        entry_count: usize,
        rules: &[RuleData],
        arena: &[u8],
        lengths: impl Lengths,
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
        // Sort on precomputed prefixes; the first sixteen bytes as a big-endian integer settle
        // most comparisons without touching the arena (a prefix never holds a NUL byte, so
        // zero-padding orders a shorter prefix first, as slice order does). Within a prefix,
        // entries that match the same paths end up adjacent, the one that would decide last.
        let unsorted: Vec<Keyed<'_>> = entries
            .iter()
            .map(|&e| {
                let f = form(e.rule, rules, arena, lengths);
                let rule = &rules[(e.rule & !DERIVED) as usize];
                let mut head = [0u8; HEAD];
                let n = f.prefix.len().min(HEAD);
                head[..n].copy_from_slice(&f.prefix[..n]);
                Keyed {
                    head: u128::from_be_bytes(head),
                    form: f,
                    anchored: anchored(e.rule, rule, arena),
                    best: Best {
                        priority: f.priority,
                        allow: rule.is_allow(),
                        line: rule.line(),
                        rule: e.rule,
                    },
                }
            })
            .collect();
        // The sort moves a head and a position (32 bytes), not the entries: it was a third of a
        // large set's build.
        let mut order: Vec<(u128, u32)> = unsorted
            .iter()
            .enumerate()
            .map(|(i, k)| (k.head, u32::try_from(i).unwrap_or(NONE)))
            .collect();
        order.sort_unstable_by(|&(a_head, a), &(b_head, b)| {
            a_head.cmp(&b_head).then_with(|| {
                let (a, b) = (&unsorted[a as usize], &unsorted[b as usize]);
                // Equal heads: the prefixes agree on their first bytes, and only what follows
                // is compared (nothing for two short ones, without a call to memcmp).
                let (pa, pb) = (a.form.prefix, b.form.prefix);
                let rest = if pa.len() <= HEAD && pb.len() <= HEAD {
                    pa.len().cmp(&pb.len())
                } else {
                    pa[pa.len().min(HEAD)..].cmp(&pb[pb.len().min(HEAD)..])
                };
                rest.then_with(|| a.same_paths_cmp(b))
                    .then_with(|| a.best.key().cmp(&b.best.key()))
            })
        });
        let mut keyed: Vec<Keyed<'_>> = order.iter().map(|&(_, i)| unsorted[i as usize]).collect();
        drop((order, unsorted));
        // Of entries matching the same paths (so of the same length), only the last can decide.
        keyed.dedup_by(|later, kept| {
            let same = kept.same_paths_cmp(later) == Ordering::Equal
                && kept.form.prefix == later.form.prefix;
            if same {
                *kept = *later;
            }
            same
        });
        // A run in precedence order, so that its walk from the top ends at its first match;
        // deduplication left members of equal length ordered by pattern instead.
        // A run of many wildcard members hands them to the sieve: they go below the others,
        // which the walk still tries in precedence order, and stops at the first sieved one.
        let mut sieved = vec![false; keyed.len()];
        let mut walk_ends = vec![false; keyed.len()];
        let mut items = Vec::new();
        let mut runs = Vec::new();
        let mut from = 0;
        while from < keyed.len() {
            let prefix = keyed[from].form.prefix;
            let to = from + keyed[from..].partition_point(|k| k.form.prefix == prefix);
            let run = &mut keyed[from..to];
            let wild = run
                .iter()
                .filter(|k| k.form.shape == Shape::Wildcard)
                .count();
            if wild >= SIEVE_RUN {
                run.sort_unstable_by_key(|k| (k.form.shape != Shape::Wildcard, k.best.key()));
                let top = u32::try_from(to - 1).unwrap_or(NONE);
                let ordinal = u32::try_from(runs.len()).unwrap_or(NONE);
                runs.push(sieve::Run {
                    top,
                    prefix_len: u32::try_from(prefix.len()).unwrap_or(NONE),
                });
                // The walk of the run ends below its last member that is not sieved.
                if from + wild < to {
                    walk_ends[from + wild] = true;
                }
                for (i, k) in run[..wild].iter().enumerate() {
                    sieved[from + i] = true;
                    let (segments, anchored) = sieve::segments(k.form.tail, k.anchored);
                    items.push(Item {
                        member: Member {
                            rank: k.best.rank(),
                            rule: k.best.rule,
                            run: ordinal,
                        },
                        segments,
                        anchored,
                    });
                }
            } else {
                run.sort_unstable_by_key(|k| k.best.key());
            }
            from = to;
        }
        let sieve = (!runs.is_empty()).then(|| Box::new(Sieve::build(items, runs)));
        entries.clear();
        // `chain` holds the last member of each run whose prefix extends the previous one's.
        let mut chain: Vec<u32> = Vec::new();
        for (i, k) in keyed.iter().enumerate() {
            let prefix = k.form.prefix;
            let starts_run = i == 0 || keyed[i - 1].form.prefix != prefix;
            if starts_run {
                while let Some(&top) = chain.last() {
                    if prefix.starts_with(keyed[top as usize].form.prefix) {
                        break;
                    }
                    chain.pop();
                }
            }
            let exit = match chain.last() {
                Some(&top) if !starts_run => entries[top as usize].exit(),
                Some(&top) => top,
                None => NONE,
            };
            entries.push(Entry {
                rule: k.best.rule,
                up: exit
                    | if starts_run || walk_ends[i] {
                        RUN_START
                    } else {
                        0
                    }
                    | if sieved[i] { SIEVED } else { 0 },
            });
            let i = u32::try_from(i).unwrap_or(NONE);
            match chain.last_mut() {
                Some(top) if !starts_run => *top = i,
                _ => chain.push(i),
            }
        }
        RuleIndex {
            entries: entries.into_boxed_slice(),
            sieve,
        }
    }

    /// The best matching rule for `path`, if any; `rules`, `arena` and `lengths` are those the
    /// index was built from.
    pub(crate) fn best_match(
        &self,
        path: &[u8],
        rules: &[RuleData],
        arena: &[u8],
        lengths: impl Lengths,
    ) -> Option<Best> {
        // Two copies of the walk, so that a file without a sieve (nearly all) pays nothing for it.
        match self.sieve {
            None => self.walk::<false>(path, rules, arena, lengths),
            Some(_) => self.walk::<true>(path, rules, arena, lengths),
        }
    }

    fn walk<const SIEVED: bool>(
        &self,
        path: &[u8],
        rules: &[RuleData],
        arena: &[u8],
        lengths: impl Lengths,
    ) -> Option<Best> {
        let set = &*self.entries;
        let after =
            set.partition_point(|e| prefix(e.rule, rules, arena).cmp(path) != Ordering::Greater);
        // The last member of the greatest run not above the path.
        let mut top = after.checked_sub(1)?;
        let top_prefix = prefix(set[top].rule, rules, arena);
        let common = top_prefix
            .iter()
            .zip(path)
            .take_while(|(a, b)| a == b)
            .count();
        let mut best: Option<Best> = None;
        // The sieved runs on the chain (their last members' positions); empty, and so never
        // allocated, for a file without a sieve.
        let mut sieved_runs: Vec<u32> = Vec::new();
        loop {
            let exit = set[top].exit();
            // Every run on the chain has a prefix of `top_prefix`: it is a prefix of the path
            // when it is no longer than what the two share.
            if prefix(set[top].rule, rules, arena).len() <= common {
                let run = u32::try_from(top).unwrap_or(NONE);
                if SIEVED && self.sieve.as_ref().is_some_and(|s| s.decides(run)) {
                    sieved_runs.push(run);
                }
                // A sieved run's walk ends at its lowest member that is not sieved (marked as a
                // run's start), so only a run of nothing else needs this test.
                let mut i = top;
                while !(SIEVED && set[top].sieved()) {
                    let entry = set[i];
                    let rule = &rules[(entry.rule & !DERIVED) as usize];
                    let f = form(entry.rule, rules, arena, lengths);
                    let candidate = Best {
                        priority: f.priority,
                        allow: rule.is_allow(),
                        line: rule.line(),
                        rule: entry.rule,
                    };
                    // The run descends in precedence: nothing below can beat the best either.
                    if best.is_some_and(|b| candidate.key() <= b.key()) {
                        break;
                    }
                    #[cfg(test)]
                    MATCHED.with(|m| m.set(m.get() + 1));
                    if matches_form(path, &f, anchored(entry.rule, rule, arena)) {
                        best = Some(candidate);
                        break;
                    }
                    if entry.starts_run() {
                        break;
                    }
                    i -= 1;
                }
            }
            if exit == NONE {
                break;
            }
            top = exit as usize;
        }
        if let Some(sieve) = self
            .sieve
            .as_ref()
            .filter(|_| SIEVED && !sieved_runs.is_empty())
        {
            // The chain was walked from its longest prefix down: reversed, it ascends.
            sieved_runs.reverse();
            let floor = best.map_or(0, |b| b.rank());
            if let Some(member) = sieve.best(path, &sieved_runs, floor) {
                best = Some(Best::of_member(member));
            }
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

mod charge;
mod scan;
#[cfg(test)]
mod tests;

pub(crate) use charge::SieveCharge;
pub(crate) use scan::{Plan, SCAN_CHECKS, ScansLeft, best_of};
