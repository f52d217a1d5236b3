//! The parsed robots.txt: groups, rules, sitemaps and diagnostics, built once from the body by
//! [`RobotsTxt::parse`] and then only read (SEMANTICS.md §1 "Groups").
//!
//! Memory is the design constraint: the service keeps one of these per origin. Every string lives
//! in one byte arena referenced by 32-bit offsets; a rule is 16 bytes plus its pattern, stored
//! once when the normalised form equals the written one (almost always). Comments, blank lines and
//! the body itself are not kept.

use std::collections::HashMap;
use std::sync::OnceLock;

mod rfc;
mod sets;
mod values;

use rfc::RfcForms;
use sets::SetInterner;
pub(crate) use sets::cmp_ignore_ascii_case;
use values::scan_value;

use super::agent::is_global_agent;
pub use super::data::CrawlDelay;
pub(crate) use super::data::{ALLOW_BIT, AgentLineData, DiagnosticData, GroupData, RuleData, Span};
use super::diagnostics::{
    DiagnosticKind, MAX_DIAGNOSTIC_KEY_BYTES, MAX_DIAGNOSTICS, is_unsupported_key,
};
use super::escape::{escape_into, needs_escaping};
use super::index::{PatternBytes, Plan, RuleIndex, ScansLeft, SieveCharge};
use super::pattern;
use super::scratch::{self, Scratch};
use super::tokenizer::{KeyKind, Line, for_each_line};
use super::usage::lines::{UsageBuilder, UsageTables};
use super::usage::terms::UsageSource;

/// Whether a rule allows or disallows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Directive {
    /// `allow:`
    Allow,
    /// `disallow:`
    Disallow,
}

/// Groups that apply together: all groups naming one agent, or all `*` groups.
///
/// The rule index of a set is built the first time the set is asked about: parsing stays a
/// single pass, and the sets of agents nobody asks about (most of them, in a file with many
/// groups) cost nothing.
#[derive(Debug, Clone)]
pub(crate) struct SetData {
    pub(crate) groups: (u32, u32),
    /// Entries the index will hold, for [`RobotsTxt::heap_size`] to charge before it is built.
    pub(crate) entry_count: u32,
    /// Heap bytes the index's sieve may take, charged the same way (`index::charge`).
    pub(crate) sieve_bound: SieveCharge,
    /// A small set, matched by trying each rule: never indexed (`index::scan`).
    pub(crate) scanned: bool,
    /// Checks of the set left to try rule by rule before its index is built (`index::scan`):
    /// none for a set that is indexed at once.
    pub(crate) scans_left: ScansLeft,
    pub(crate) index: OnceLock<RuleIndex>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct AgentKey {
    /// The product token (the leading `[A-Za-z_-]` run of a `user-agent` value), compared
    /// ignoring case.
    pub(crate) token: Span,
    pub(crate) set: u32,
}

/// A parsed robots.txt: immutable, `Send + Sync`, cheap to share behind an `Arc`.
///
/// Parse once with [`RobotsTxt::parse`], then ask [`RobotsTxt::check`] as often as needed from as
/// many threads as needed.
#[derive(Debug, Clone)]
pub struct RobotsTxt {
    pub(crate) arena: Box<[u8]>,
    pub(crate) rules: Box<[RuleData]>,
    pub(crate) agent_lines: Box<[AgentLineData]>,
    pub(crate) groups: Box<[GroupData]>,
    pub(crate) sets: Box<[SetData]>,
    /// Group ids of each set, sorted.
    pub(crate) set_groups: Box<[u32]>,
    /// Sorted by token, ignoring case.
    pub(crate) agent_keys: Box<[AgentKey]>,
    pub(crate) global_set: Option<u32>,
    pub(crate) sitemaps: Box<[(Span, u32)]>,
    /// RSL's `License:` lines (see [`crate::license`]).
    pub(crate) licenses: Box<[(Span, u32)]>,
    /// The first valid `crawl-delay` of each group that has one, by group id.
    pub(crate) crawl_delays: Box<[(u32, CrawlDelay)]>,
    /// The rules whose written value differs from their pattern (by rule id), with the written
    /// value's length; it is stored right after the pattern.
    pub(crate) rewritten: Box<[(u32, u32)]>,
    pub(crate) diagnostics: Box<[DiagnosticData]>,
    /// The RFC 9309 forms of the patterns, when some differ from Google's (see `rfc`).
    pub(crate) rfc: Option<Box<RfcForms>>,
    /// The `Content-Usage` / `Content-Signal` lines, when there are any.
    pub(crate) usage: Option<Box<UsageTables>>,
    pub(crate) stats: super::diagnostics::ParseStats,
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

struct Builder {
    s: Box<Scratch>,
    /// The current group ended with a rule: the next `user-agent` starts a new group.
    group_has_rule: bool,
    usage: UsageBuilder,
    stats: super::diagnostics::ParseStats,
}

impl Builder {
    fn push_bytes(&mut self, bytes: &[u8]) -> Span {
        let start = to_u32(self.s.arena.len());
        self.s.arena.extend_from_slice(bytes);
        Span {
            start,
            len: to_u32(bytes.len()),
        }
    }

    fn diagnose(&mut self, line: u32, kind: DiagnosticKind, key: Option<&[u8]>) {
        if self.s.diagnostics.len() >= MAX_DIAGNOSTICS {
            self.stats.diagnostics_dropped = self.stats.diagnostics_dropped.saturating_add(1);
            return;
        }
        let key = key.map(|k| {
            let mut end = k.len().min(MAX_DIAGNOSTIC_KEY_BYTES);
            // Cut on a character boundary when the key is UTF-8, so it displays cleanly.
            while end < k.len() && end > 0 && (k[end] & 0xC0) == 0x80 {
                end -= 1;
            }
            self.push_bytes(&k[..end])
        });
        self.s.diagnostics.push(DiagnosticData { line, kind, key });
    }

    fn line(&mut self, line: Line<'_>) {
        let number = line.number;
        let meta = line.metadata;
        if meta.is_line_too_long {
            self.diagnose(number, DiagnosticKind::LineTooLong, None);
        }
        let Some(kv) = line.directive else {
            if !meta.is_empty && !meta.is_comment {
                self.diagnose(number, DiagnosticKind::NotADirective, None);
            }
            return;
        };
        if meta.is_missing_colon_separator {
            self.diagnose(number, DiagnosticKind::MissingColon, None);
        }
        if meta.is_acceptable_typo {
            self.diagnose(number, DiagnosticKind::AcceptedTypo, Some(kv.key));
        }
        match kv.kind {
            KeyKind::UserAgent => {
                self.stats.valid_directives += 1;
                if self.s.groups.is_empty() || self.group_has_rule {
                    let at = to_u32(self.s.agent_lines.len());
                    let rules_at = to_u32(self.s.rules.len());
                    self.s.groups.push(GroupData {
                        agents: (at, at),
                        rules: (rules_at, rules_at),
                    });
                    self.group_has_rule = false;
                }
                let value = self.push_bytes(kv.value);
                self.s.agent_lines.push(AgentLineData {
                    value,
                    line: number,
                    global: is_global_agent(kv.value),
                });
                if let Some(group) = self.s.groups.last_mut() {
                    group.agents.1 = to_u32(self.s.agent_lines.len());
                }
            }
            KeyKind::Allow | KeyKind::Disallow => {
                self.stats.valid_directives += 1;
                if self.s.groups.is_empty() {
                    self.diagnose(number, DiagnosticKind::RuleOutsideGroup, None);
                    return;
                }
                self.group_has_rule = true;
                self.push_rule(kv.kind == KeyKind::Allow, kv.value, number);
                if let Some(group) = self.s.groups.last_mut() {
                    group.rules.1 = to_u32(self.s.rules.len());
                }
            }
            KeyKind::Sitemap => {
                self.stats.valid_directives += 1;
                let span = self.push_bytes(kv.value);
                self.s.sitemaps.push((span, number));
            }
            KeyKind::Unknown => {
                self.stats.unknown_directives += 1;
                if is_unsupported_key(kv.key) {
                    self.diagnose(number, DiagnosticKind::UnsupportedKey, Some(kv.key));
                    if kv.key.eq_ignore_ascii_case(b"crawl-delay") {
                        self.crawl_delay(kv.value, number);
                    } else if let Some(source) = UsageSource::of_key(kv.key) {
                        self.usage_line(source, kv.value, number);
                    } else if kv.key.eq_ignore_ascii_case(b"license") {
                        let span = self.push_bytes(kv.value);
                        self.s.licenses.push((span, number));
                    }
                } else {
                    self.diagnose(number, DiagnosticKind::UnknownKey, Some(kv.key));
                }
            }
        }
    }

    /// A `Content-Usage` / `Content-Signal` line: a member of the current group, which it
    /// neither starts nor ends (so it never changes which rules a group has).
    fn usage_line(&mut self, source: UsageSource, value: &[u8], line: u32) {
        let Some(group) = self.s.groups.len().checked_sub(1).map(to_u32) else {
            self.diagnose(line, DiagnosticKind::RuleOutsideGroup, None);
            return;
        };
        let mut found = Vec::new();
        self.usage.add(
            &mut self.s.arena,
            group,
            source,
            value,
            line,
            |kind, key| {
                found.push((kind, key));
            },
        );
        for (kind, key) in found {
            self.diagnose(line, kind, key);
        }
    }

    fn crawl_delay(&mut self, value: &[u8], line: u32) {
        let Some(group) = self.s.groups.len().checked_sub(1).map(to_u32) else {
            return;
        };
        if self.s.crawl_delays.last().is_some_and(|(g, _)| *g == group) {
            return;
        }
        let seconds = std::str::from_utf8(value)
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0);
        if let Some(seconds) = seconds {
            self.s
                .crawl_delays
                .push((group, CrawlDelay { seconds, line }));
        }
    }

    fn push_rule(&mut self, allow: bool, written: &[u8], line: u32) {
        let scan = scan_value(written);
        let differs = scan.maybe_escaped && needs_escaping(written);
        let (start, pattern_len) = if differs {
            let start = to_u32(self.s.arena.len());
            escape_into(written, &mut self.s.arena);
            let pattern_len = self.s.arena.len() - start as usize;
            // The written value follows its pattern (see `RobotsTxt::written`).
            self.s.arena.extend_from_slice(written);
            (start, pattern_len)
        } else {
            (self.intern_pattern(written, scan.hash), written.len())
        };
        let prefix_len = if differs {
            pattern::split(&self.s.arena[start as usize..start as usize + pattern_len]).0
        } else {
            // Unchanged by normalisation: the prefix ends at the first `*`, or before a final `$`.
            scan.first_star
                .unwrap_or(pattern_len - usize::from(written.last() == Some(&b'$')))
        };
        if differs {
            let id = to_u32(self.s.rules.len());
            self.s.rewritten.push((id, to_u32(written.len())));
        }
        let maybe_rfc = scan.maybe_escaped || scan.dollar_or_query;
        // Lines are at most 16,663 bytes and escaping at most triples them, so these fit.
        self.s.rules.push(RuleData {
            start,
            line_allow: line.min(ALLOW_BIT - 1) | if allow { ALLOW_BIT } else { 0 },
            pattern_len: u16::try_from(pattern_len).unwrap_or(u16::MAX),
            prefix_len: u16::try_from(prefix_len).unwrap_or(u16::MAX),
        });
        self.keep_rfc_form(maybe_rfc);
    }

    /// Stores a pattern once per file: sites repeat the same rules for many crawlers, and a
    /// tenth of all pattern bytes in the corpus are such repeats. Keyed by its hash (from the
    /// value's scan, which reads the same words); a collision
    /// merely stores the pattern again.
    fn intern_pattern(&mut self, pattern: &[u8], hash: u64) -> u32 {
        let end = to_u32(self.s.arena.len());
        let start = self.s.patterns.get_or_insert(hash, end);
        let range = start as usize..start as usize + pattern.len();
        if start != end && self.s.arena.get(range) == Some(pattern) {
            return start;
        }
        self.s.arena.extend_from_slice(pattern);
        end
    }

    /// Groups the groups into the sets the engine chooses between, and indexes each set's rules.
    fn finish(&mut self) -> RobotsTxt {
        let arena = &self.s.arena;
        // Named agents as (token head, token, group), sorted by product token ignoring case,
        // then group: each run of one token lists the groups naming it, in file order. The head
        // (first eight bytes, lower-cased, big-endian) settles most comparisons; tokens never
        // hold a NUL, so zero padding orders a shorter token first. Sorting rather than hashing
        // keeps this allocation-light for small files and fast for files with a thousand agents.
        let mut named: Vec<(u64, Span, u32)> = Vec::with_capacity(self.s.agent_lines.len());
        let mut global_groups: Vec<u32> = Vec::new();
        for (g, group) in self.s.groups.iter().enumerate() {
            let g = to_u32(g);
            for line in &self.s.agent_lines[group.agents.0 as usize..group.agents.1 as usize] {
                if line.global {
                    if global_groups.last() != Some(&g) {
                        global_groups.push(g);
                    }
                    continue;
                }
                let token = super::agent::extract_token(&arena[line.value.range()]);
                let mut head = [0u8; 8];
                for (h, b) in head.iter_mut().zip(token) {
                    *h = b.to_ascii_lowercase();
                }
                let span = Span {
                    start: line.value.start,
                    len: to_u32(token.len()),
                };
                named.push((u64::from_be_bytes(head), span, g));
            }
        }
        let token = |span: Span| &arena[span.range()];
        named.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| cmp_ignore_ascii_case(token(a.1), token(b.1)))
                .then(a.2.cmp(&b.2))
        });

        // Sized for the usual file, where each named agent and `*` has a set of one group of its
        // own: growing these cost more than the rest of the interning.
        let mut interner = SetInterner {
            set_groups: Vec::with_capacity(named.len() + 1),
            sets: Vec::with_capacity(named.len() + 1),
            single: vec![u32::MAX; self.s.groups.len()],
            multi: HashMap::new(),
        };
        let global_set = (!global_groups.is_empty()).then(|| interner.intern(&global_groups));
        let mut agent_keys = Vec::with_capacity(named.len());
        let mut run_groups: Vec<u32> = Vec::new();
        let mut i = 0;
        while i < named.len() {
            let (head, first, _) = named[i];
            run_groups.clear();
            while i < named.len()
                && named[i].0 == head
                && token(named[i].1).eq_ignore_ascii_case(token(first))
            {
                if run_groups.last() != Some(&named[i].2) {
                    run_groups.push(named[i].2);
                }
                i += 1;
            }
            agent_keys.push(AgentKey {
                token: first,
                set: interner.intern(&run_groups),
            });
        }
        let sets: Vec<SetData> = interner
            .sets
            .iter()
            .map(|&(a, b)| {
                let set_groups = &interner.set_groups[a as usize..b as usize];
                let rules = &self.s.rules;
                // Most sets are one group, whose rules are a range: planned over it, without
                // the flattening of several groups' ranges, the loop is a third cheaper.
                let plan = match set_groups {
                    [g] => {
                        let (x, y) = self.s.groups[*g as usize].rules;
                        Plan::of(x..y, rules, arena)
                    }
                    _ => {
                        let rule_ids = set_groups.iter().flat_map(|&g| {
                            let (x, y) = self.s.groups[g as usize].rules;
                            x..y
                        });
                        Plan::of(rule_ids, rules, arena)
                    }
                };
                SetData {
                    groups: (a, b),
                    sieve_bound: SieveCharge::new(plan.may_sieve()),
                    entry_count: to_u32(plan.entries),
                    scanned: plan.scanned(),
                    scans_left: ScansLeft::of(plan),
                    index: OnceLock::new(),
                }
            })
            .collect();
        let set_groups = interner.set_groups;
        let rfc = RfcForms::build(
            &self.s.rfc_forms,
            &self.s.rules,
            arena,
            &sets,
            &set_groups,
            &self.s.groups,
        );

        RobotsTxt {
            arena: Box::from(&self.s.arena[..]),
            rules: Box::from(&self.s.rules[..]),
            agent_lines: Box::from(&self.s.agent_lines[..]),
            groups: Box::from(&self.s.groups[..]),
            sets: sets.into_boxed_slice(),
            set_groups: set_groups.into_boxed_slice(),
            agent_keys: agent_keys.into_boxed_slice(),
            global_set,
            sitemaps: Box::from(&self.s.sitemaps[..]),
            licenses: Box::from(&self.s.licenses[..]),
            crawl_delays: Box::from(&self.s.crawl_delays[..]),
            rewritten: Box::from(&self.s.rewritten[..]),
            diagnostics: Box::from(&self.s.diagnostics[..]),
            rfc,
            usage: self.usage.finish(),
            stats: self.stats,
        }
    }
}

impl RobotsTxt {
    /// Parses a robots.txt body. Never fails: whatever is not a directive is skipped and
    /// reported in [`RobotsTxt::diagnostics`].
    pub fn parse(body: &[u8]) -> RobotsTxt {
        let scratch = scratch::take();
        let mut builder = Builder {
            s: scratch,
            group_has_rule: false,
            usage: UsageBuilder::default(),
            stats: super::diagnostics::ParseStats {
                lines: 0,
                valid_directives: 0,
                unknown_directives: 0,
                diagnostics_dropped: 0,
            },
        };
        for_each_line(body, |line| {
            builder.stats.lines = line.number;
            builder.line(line);
        });
        let robots = builder.finish();
        scratch::give_back(builder.s);
        robots
    }

    /// Heap bytes of the rule indexes, counted as if every set had been asked about, so that the
    /// figure does not grow after the value is weighed.
    fn index_heap_size(&self) -> usize {
        self.sets
            .iter()
            .filter(|s| !s.scanned)
            .map(|s| RuleIndex::heap_size(s.entry_count as usize) + self.sieve_charge(s))
            .sum()
    }

    /// Heap bytes a set's sieve is charged, worked out on the first call (`index::charge`).
    pub(crate) fn sieve_charge(&self, set: &SetData) -> usize {
        set.sieve_bound
            .bytes(|| RuleIndex::sieve_bound(self.set_rule_ids(set), &self.rules, &self.arena))
    }

    /// Whether this check of `set`, of a path of `path_len` bytes, tries its rules one by one
    /// rather than build its index: for a small set always, for another while it has checks
    /// left to try so and trying them reads little enough (`index::scan`).
    pub(crate) fn scans(&self, set: &SetData, path_len: usize) -> bool {
        set.scanned || (set.index.get().is_none() && set.scans_left.take(path_len))
    }

    /// The rule index of a set, built on its first check that does not try each rule.
    pub(crate) fn set_index(&self, set: u32) -> &RuleIndex {
        let set = &self.sets[set as usize];
        set.index.get_or_init(|| {
            let count = set.entry_count as usize;
            let ids = self.set_rule_ids(set);
            RuleIndex::build(ids, count, &self.rules, &self.arena, PatternBytes)
        })
    }

    /// The rule ids of a set's groups, in file order.
    pub(crate) fn set_rule_ids(&self, set: &SetData) -> impl Iterator<Item = u32> + '_ {
        self.set_groups[set.groups.0 as usize..set.groups.1 as usize]
            .iter()
            .flat_map(|&g| {
                let (a, b) = self.groups[g as usize].rules;
                a..b
            })
    }

    /// The value as written of rule `id` (its pattern unless normalisation changed it).
    pub(crate) fn written(&self, id: u32) -> &[u8] {
        let rule = self.rules[id as usize];
        match self.rewritten.binary_search_by_key(&id, |(r, _)| *r) {
            Ok(i) => {
                let start = rule.start as usize + usize::from(rule.pattern_len);
                &self.arena[start..start + self.rewritten[i].1 as usize]
            }
            Err(_) => rule.pattern(&self.arena),
        }
    }

    /// Bytes this value holds on the heap (what a byte-weighed cache should charge for it),
    /// rule indexes included whether or not they are built yet.
    pub fn heap_size(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(&*self.arena)
            + size_of_val(&*self.rules)
            + size_of_val(&*self.agent_lines)
            + size_of_val(&*self.groups)
            + size_of_val(&*self.sets)
            + size_of_val(&*self.set_groups)
            + self.index_heap_size()
            + size_of_val(&*self.agent_keys)
            + size_of_val(&*self.sitemaps)
            + size_of_val(&*self.licenses)
            + size_of_val(&*self.crawl_delays)
            + size_of_val(&*self.rewritten)
            + size_of_val(&*self.diagnostics)
            + self.usage.as_ref().map_or(0, |u| u.heap_size())
            + self.rfc.as_ref().map_or(0, |r| r.heap_size(self))
    }
}

impl RobotsTxt {
    /// Heap bytes by part, for tuning (`examples/memory_breakdown.rs`).
    #[doc(hidden)]
    pub fn heap_breakdown(&self) -> [(&'static str, usize); 18] {
        use std::mem::size_of_val;
        [
            ("arena", size_of_val(&*self.arena)),
            ("rules", size_of_val(&*self.rules)),
            ("agent_lines", size_of_val(&*self.agent_lines)),
            ("groups", size_of_val(&*self.groups)),
            ("sets", size_of_val(&*self.sets)),
            ("set_groups", size_of_val(&*self.set_groups)),
            ("index (once built)", self.index_heap_size()),
            (
                "index of RFC 9309 forms (once built)",
                self.rfc.as_ref().map_or(0, |r| r.index_heap_size(self)),
            ),
            (
                "RFC 9309 forms: rules, lengths, sets",
                self.rfc
                    .as_ref()
                    .map_or(0, |r| r.heap_size(self) - r.index_heap_size(self)),
            ),
            ("agent_keys", size_of_val(&*self.agent_keys)),
            ("sitemaps", size_of_val(&*self.sitemaps)),
            ("crawl_delays", size_of_val(&*self.crawl_delays)),
            ("rewritten", size_of_val(&*self.rewritten)),
            (
                "(arena: patterns, before sharing)",
                self.rules.iter().map(|r| usize::from(r.pattern_len)).sum(),
            ),
            (
                "(arena: agents)",
                self.agent_lines.iter().map(|a| a.value.len as usize).sum(),
            ),
            (
                "(arena: sitemaps)",
                self.sitemaps.iter().map(|s| s.0.len as usize).sum(),
            ),
            (
                "(arena: keys)",
                self.diagnostics
                    .iter()
                    .map(|d| d.key.map_or(0, |k| k.len as usize))
                    .sum(),
            ),
            ("diagnostics", size_of_val(&*self.diagnostics)),
        ]
    }
}

#[cfg(test)]
mod tests;
