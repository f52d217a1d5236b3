//! The parsed robots.txt: groups, rules, sitemaps and diagnostics, built once from the body by
//! [`RobotsTxt::parse`] and then only read (SEMANTICS.md §1 "Groups").
//!
//! Memory is the design constraint: the service keeps one of these per origin. Every string lives
//! in one byte arena referenced by 32-bit offsets; a rule is 16 bytes plus its pattern, stored
//! once when the normalised form equals the written one (almost always). Comments, blank lines and
//! the body itself are not kept.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::agent::is_global_agent;
use super::diagnostics::{
    DiagnosticKind, MAX_DIAGNOSTIC_KEY_BYTES, MAX_DIAGNOSTICS, is_unsupported_key,
};
use super::escape::{escape_into, needs_escaping};
use super::index::RuleIndex;
use super::pattern::{self, Shape};
use super::tokenizer::{KeyKind, Line, for_each_line};

/// Whether a rule allows or disallows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Directive {
    /// `allow:`
    Allow,
    /// `disallow:`
    Disallow,
}

/// A byte range of the arena.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: u32,
    pub(crate) len: u32,
}

impl Span {
    pub(crate) fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.start as usize + self.len as usize
    }
}

/// One `allow`/`disallow` line. 16 bytes: the service holds many of these.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RuleData {
    /// Start of the normalised pattern in the arena; the written value follows it when it differs.
    pub(crate) start: u32,
    pub(crate) line: u32,
    /// Length of the normalised pattern (≤ 3 × the longest line, so it fits).
    pub(crate) pattern_len: u16,
    /// Length of the written value, stored after the pattern when `written_differs`.
    pub(crate) written_len: u16,
    /// Bytes before the first `*` (or before the final `$` when there is no `*`).
    pub(crate) prefix_len: u16,
    pub(crate) flags: u8,
    pub(crate) shape: Shape,
}

pub(crate) const FLAG_ALLOW: u8 = 1;
pub(crate) const FLAG_WRITTEN_DIFFERS: u8 = 2;
/// An `allow` whose last segment starts with `/index.htm`: it also allows its directory.
pub(crate) const FLAG_INDEX_HTM: u8 = 4;

impl RuleData {
    pub(crate) fn is_allow(&self) -> bool {
        self.flags & FLAG_ALLOW != 0
    }
    pub(crate) fn pattern(self, arena: &[u8]) -> &[u8] {
        let start = self.start as usize;
        &arena[start..start + usize::from(self.pattern_len)]
    }
    pub(crate) fn written(self, arena: &[u8]) -> &[u8] {
        if self.flags & FLAG_WRITTEN_DIFFERS == 0 {
            return self.pattern(arena);
        }
        let start = self.start as usize + usize::from(self.pattern_len);
        &arena[start..start + usize::from(self.written_len)]
    }
}

/// One `user-agent` line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AgentLineData {
    pub(crate) value: Span,
    pub(crate) line: u32,
    pub(crate) global: bool,
}

/// A `crawl-delay` value, kept for information (never part of a verdict).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CrawlDelay {
    /// Seconds, as written.
    pub seconds: f64,
    /// The line it was on.
    pub line: u32,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct GroupData {
    pub(crate) agents: (u32, u32),
    pub(crate) rules: (u32, u32),
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
    pub(crate) index: OnceLock<RuleIndex>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct AgentKey {
    /// The product token (the leading `[A-Za-z_-]` run of a `user-agent` value), compared
    /// ignoring case.
    pub(crate) token: Span,
    pub(crate) set: u32,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct DiagnosticData {
    pub(crate) line: u32,
    pub(crate) kind: DiagnosticKind,
    pub(crate) key: Option<Span>,
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
    /// The first valid `crawl-delay` of each group that has one, by group id.
    pub(crate) crawl_delays: Box<[(u32, CrawlDelay)]>,
    pub(crate) diagnostics: Box<[DiagnosticData]>,
    pub(crate) stats: super::diagnostics::ParseStats,
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The growable buffers a parse fills. They are kept per thread between parses, so that a parse
/// allocates only the exact-size slices of its result instead of regrowing a dozen vectors:
/// most robots.txt files are small, and their parse cost was dominated by allocation.
#[derive(Default)]
struct Scratch {
    arena: Vec<u8>,
    rules: Vec<RuleData>,
    agent_lines: Vec<AgentLineData>,
    groups: Vec<GroupData>,
    sitemaps: Vec<(Span, u32)>,
    /// Sparse, by group id: few groups have one.
    crawl_delays: Vec<(u32, CrawlDelay)>,
    diagnostics: Vec<DiagnosticData>,
}

/// Buffers larger than this are not kept for the next parse (a thread that once parsed a large
/// file does not hold its memory forever).
const MAX_KEPT_SCRATCH_BYTES: usize = 256 * 1024;

impl Scratch {
    fn clear(&mut self) {
        self.arena.clear();
        self.rules.clear();
        self.agent_lines.clear();
        self.groups.clear();
        self.sitemaps.clear();
        self.crawl_delays.clear();
        self.diagnostics.clear();
    }

    fn capacity_bytes(&self) -> usize {
        use std::mem::size_of;
        self.arena.capacity()
            + self.rules.capacity() * size_of::<RuleData>()
            + self.agent_lines.capacity() * size_of::<AgentLineData>()
            + self.groups.capacity() * size_of::<GroupData>()
            + self.sitemaps.capacity() * size_of::<(Span, u32)>()
            + self.crawl_delays.capacity() * size_of::<(u32, CrawlDelay)>()
            + self.diagnostics.capacity() * size_of::<DiagnosticData>()
    }
}

thread_local! {
    static SCRATCH: std::cell::Cell<Option<Box<Scratch>>> = const { std::cell::Cell::new(None) };
}

struct Builder {
    s: Box<Scratch>,
    /// The current group ended with a rule: the next `user-agent` starts a new group.
    group_has_rule: bool,
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
                    }
                } else {
                    self.diagnose(number, DiagnosticKind::UnknownKey, Some(kv.key));
                }
            }
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
        let start = to_u32(self.s.arena.len());
        let differs = needs_escaping(written);
        if differs {
            escape_into(written, &mut self.s.arena);
        } else {
            self.s.arena.extend_from_slice(written);
        }
        let pattern_len = self.s.arena.len() - start as usize;
        if differs {
            self.s.arena.extend_from_slice(written);
        }
        let pattern = &self.s.arena[start as usize..start as usize + pattern_len];
        let (prefix_len, shape) = pattern::split(pattern);
        let mut flags = if allow { FLAG_ALLOW } else { 0 };
        if differs {
            flags |= FLAG_WRITTEN_DIFFERS;
        }
        if allow && index_htm_directory(pattern).is_some() {
            flags |= FLAG_INDEX_HTM;
        }
        // Lines are at most 16,663 bytes and escaping at most triples them, so these fit.
        self.s.rules.push(RuleData {
            start,
            line,
            pattern_len: u16::try_from(pattern_len).unwrap_or(u16::MAX),
            written_len: u16::try_from(written.len()).unwrap_or(u16::MAX),
            prefix_len: u16::try_from(prefix_len).unwrap_or(u16::MAX),
            flags,
            shape,
        });
    }

    /// Groups the groups into the sets the engine chooses between, and indexes each set's rules.
    fn finish(&self) -> RobotsTxt {
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

        let mut interner = SetInterner {
            set_groups: Vec::new(),
            sets: Vec::new(),
            single: vec![u32::MAX; self.s.groups.len()],
            multi: HashMap::new(),
        };
        let global_set = (!global_groups.is_empty()).then(|| interner.intern(&global_groups));
        let mut agent_keys = Vec::new();
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
                let rule_ids = interner.set_groups[a as usize..b as usize]
                    .iter()
                    .flat_map(|&g| {
                        let (x, y) = self.s.groups[g as usize].rules;
                        x..y
                    });
                SetData {
                    groups: (a, b),
                    entry_count: to_u32(RuleIndex::entry_count(rule_ids, &self.s.rules)),
                    index: OnceLock::new(),
                }
            })
            .collect();
        let set_groups = interner.set_groups;

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
            crawl_delays: Box::from(&self.s.crawl_delays[..]),
            diagnostics: Box::from(&self.s.diagnostics[..]),
            stats: self.stats,
        }
    }
}

/// Gives each distinct list of groups one set id.
struct SetInterner {
    set_groups: Vec<u32>,
    /// Ranges of `set_groups`.
    sets: Vec<(u32, u32)>,
    /// The set made of just this group, by group id (the common case).
    single: Vec<u32>,
    /// Sets of several groups (rare: an agent named in several groups).
    multi: HashMap<Vec<u32>, u32>,
}

impl SetInterner {
    fn intern(&mut self, groups: &[u32]) -> u32 {
        if let [g] = groups
            && self.single[*g as usize] != u32::MAX
        {
            return self.single[*g as usize];
        }
        if groups.len() > 1
            && let Some(&set) = self.multi.get(groups)
        {
            return set;
        }
        let set = to_u32(self.sets.len());
        let start = to_u32(self.set_groups.len());
        self.set_groups.extend_from_slice(groups);
        self.sets.push((start, to_u32(self.set_groups.len())));
        match groups {
            [g] => self.single[*g as usize] = set,
            _ => {
                self.multi.insert(groups.to_vec(), set);
            }
        }
        set
    }
}

/// Byte-wise order of `a` and `b` with ASCII letters folded to lower case.
pub(crate) fn cmp_ignore_ascii_case(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    a.iter()
        .map(u8::to_ascii_lowercase)
        .cmp(b.iter().map(u8::to_ascii_lowercase))
}

/// For an `allow` pattern whose last segment starts with `/index.htm`, the length of the
/// directory part (up to and including that last `/`): Google also allows the directory itself.
pub(crate) fn index_htm_directory(pattern: &[u8]) -> Option<usize> {
    let slash = memchr::memrchr(b'/', pattern)?;
    pattern[slash..]
        .starts_with(b"/index.htm")
        .then_some(slash + 1)
}

impl RobotsTxt {
    /// Parses a robots.txt body. Never fails: whatever is not a directive is skipped and
    /// reported in [`RobotsTxt::diagnostics`].
    pub fn parse(body: &[u8]) -> RobotsTxt {
        let mut scratch = SCRATCH.take().unwrap_or_default();
        scratch.clear();
        let mut builder = Builder {
            s: scratch,
            group_has_rule: false,
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
        if builder.s.capacity_bytes() <= MAX_KEPT_SCRATCH_BYTES {
            SCRATCH.set(Some(builder.s));
        }
        robots
    }

    /// Heap bytes of the rule indexes, counted as if every set had been asked about, so that the
    /// figure does not grow after the value is weighed.
    fn index_heap_size(&self) -> usize {
        self.sets
            .iter()
            .map(|s| RuleIndex::heap_size(s.entry_count as usize))
            .sum()
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
            + size_of_val(&*self.crawl_delays)
            + size_of_val(&*self.diagnostics)
    }
}

impl RobotsTxt {
    /// Heap bytes by part, for tuning (`examples/memory_breakdown.rs`).
    #[doc(hidden)]
    pub fn heap_breakdown(&self) -> [(&'static str, usize); 11] {
        use std::mem::size_of_val;
        [
            ("arena", size_of_val(&*self.arena)),
            ("rules", size_of_val(&*self.rules)),
            ("agent_lines", size_of_val(&*self.agent_lines)),
            ("groups", size_of_val(&*self.groups)),
            ("sets", size_of_val(&*self.sets)),
            ("set_groups", size_of_val(&*self.set_groups)),
            ("index (once built)", self.index_heap_size()),
            ("agent_keys", size_of_val(&*self.agent_keys)),
            ("sitemaps", size_of_val(&*self.sitemaps)),
            ("crawl_delays", size_of_val(&*self.crawl_delays)),
            ("diagnostics", size_of_val(&*self.diagnostics)),
        ]
    }
}
