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
    /// The lower-cased product token.
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
    /// Sorted by token bytes.
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

struct Builder {
    arena: Vec<u8>,
    rules: Vec<RuleData>,
    agent_lines: Vec<AgentLineData>,
    groups: Vec<GroupData>,
    /// The current group ended with a rule: the next `user-agent` starts a new group.
    group_has_rule: bool,
    sitemaps: Vec<(Span, u32)>,
    /// Sparse, by group id: few groups have one.
    crawl_delays: Vec<(u32, CrawlDelay)>,
    diagnostics: Vec<DiagnosticData>,
    stats: super::diagnostics::ParseStats,
}

impl Builder {
    fn push_bytes(&mut self, bytes: &[u8]) -> Span {
        let start = to_u32(self.arena.len());
        self.arena.extend_from_slice(bytes);
        Span {
            start,
            len: to_u32(bytes.len()),
        }
    }

    fn diagnose(&mut self, line: u32, kind: DiagnosticKind, key: Option<&[u8]>) {
        if self.diagnostics.len() >= MAX_DIAGNOSTICS {
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
        self.diagnostics.push(DiagnosticData { line, kind, key });
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
                if self.groups.is_empty() || self.group_has_rule {
                    let at = to_u32(self.agent_lines.len());
                    let rules_at = to_u32(self.rules.len());
                    self.groups.push(GroupData {
                        agents: (at, at),
                        rules: (rules_at, rules_at),
                    });
                    self.group_has_rule = false;
                }
                let value = self.push_bytes(kv.value);
                self.agent_lines.push(AgentLineData {
                    value,
                    line: number,
                    global: is_global_agent(kv.value),
                });
                if let Some(group) = self.groups.last_mut() {
                    group.agents.1 = to_u32(self.agent_lines.len());
                }
            }
            KeyKind::Allow | KeyKind::Disallow => {
                self.stats.valid_directives += 1;
                if self.groups.is_empty() {
                    self.diagnose(number, DiagnosticKind::RuleOutsideGroup, None);
                    return;
                }
                self.group_has_rule = true;
                self.push_rule(kv.kind == KeyKind::Allow, kv.value, number);
                if let Some(group) = self.groups.last_mut() {
                    group.rules.1 = to_u32(self.rules.len());
                }
            }
            KeyKind::Sitemap => {
                self.stats.valid_directives += 1;
                let span = self.push_bytes(kv.value);
                self.sitemaps.push((span, number));
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
        let Some(group) = self.groups.len().checked_sub(1).map(to_u32) else {
            return;
        };
        if self.crawl_delays.last().is_some_and(|(g, _)| *g == group) {
            return;
        }
        let seconds = std::str::from_utf8(value)
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0);
        if let Some(seconds) = seconds {
            self.crawl_delays
                .push((group, CrawlDelay { seconds, line }));
        }
    }

    fn push_rule(&mut self, allow: bool, written: &[u8], line: u32) {
        let start = to_u32(self.arena.len());
        let differs = needs_escaping(written);
        if differs {
            escape_into(written, &mut self.arena);
        } else {
            self.arena.extend_from_slice(written);
        }
        let pattern_len = self.arena.len() - start as usize;
        if differs {
            self.arena.extend_from_slice(written);
        }
        let pattern = &self.arena[start as usize..start as usize + pattern_len];
        let (prefix_len, shape) = pattern::split(pattern);
        let mut flags = if allow { FLAG_ALLOW } else { 0 };
        if differs {
            flags |= FLAG_WRITTEN_DIFFERS;
        }
        if allow && index_htm_directory(pattern).is_some() {
            flags |= FLAG_INDEX_HTM;
        }
        // Lines are at most 16,663 bytes and escaping at most triples them, so these fit.
        self.rules.push(RuleData {
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
    fn finish(mut self) -> RobotsTxt {
        let mut by_token: HashMap<Vec<u8>, Vec<u32>> = HashMap::new();
        let mut global_groups: Vec<u32> = Vec::new();
        for (g, group) in self.groups.iter().enumerate() {
            let g = to_u32(g);
            for agent in &self.agent_lines[group.agents.0 as usize..group.agents.1 as usize] {
                if agent.global {
                    if global_groups.last() != Some(&g) {
                        global_groups.push(g);
                    }
                    continue;
                }
                let value = &self.arena[agent.value.range()];
                let token = super::agent::extract_token(value).to_ascii_lowercase();
                let groups = by_token.entry(token).or_default();
                if groups.last() != Some(&g) {
                    groups.push(g);
                }
            }
        }

        let mut set_ids: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut set_lists: Vec<Vec<u32>> = Vec::new();
        let mut intern = |groups: Vec<u32>| -> u32 {
            *set_ids.entry(groups.clone()).or_insert_with(|| {
                set_lists.push(groups);
                to_u32(set_lists.len() - 1)
            })
        };
        let global_set = (!global_groups.is_empty()).then(|| intern(global_groups));
        let mut agent_keys: Vec<(Vec<u8>, u32)> = by_token
            .into_iter()
            .map(|(token, groups)| (token, intern(groups)))
            .collect();
        agent_keys.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let agent_keys: Vec<AgentKey> = agent_keys
            .into_iter()
            .map(|(token, set)| AgentKey {
                token: self.push_bytes(&token),
                set,
            })
            .collect();

        let mut set_groups = Vec::new();
        let mut sets = Vec::with_capacity(set_lists.len());
        for groups in &set_lists {
            let first = to_u32(set_groups.len());
            set_groups.extend_from_slice(groups);
            let rule_ids = groups.iter().flat_map(|&g| {
                let (a, b) = self.groups[g as usize].rules;
                a..b
            });
            sets.push(SetData {
                groups: (first, to_u32(set_groups.len())),
                entry_count: to_u32(RuleIndex::entry_count(rule_ids, &self.rules)),
                index: OnceLock::new(),
            });
        }

        RobotsTxt {
            arena: self.arena.into_boxed_slice(),
            rules: self.rules.into_boxed_slice(),
            agent_lines: self.agent_lines.into_boxed_slice(),
            groups: self.groups.into_boxed_slice(),
            sets: sets.into_boxed_slice(),
            set_groups: set_groups.into_boxed_slice(),
            agent_keys: agent_keys.into_boxed_slice(),
            global_set,
            sitemaps: self.sitemaps.into_boxed_slice(),
            crawl_delays: self.crawl_delays.into_boxed_slice(),
            diagnostics: self.diagnostics.into_boxed_slice(),
            stats: self.stats,
        }
    }
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
        let mut builder = Builder {
            // Most of a body is comments, keys and whitespace; half is a generous first guess
            // that avoids regrowing the arena for typical files.
            arena: Vec::with_capacity(body.len() / 2),
            rules: Vec::new(),
            agent_lines: Vec::new(),
            groups: Vec::new(),
            group_has_rule: false,
            sitemaps: Vec::new(),
            crawl_delays: Vec::new(),
            diagnostics: Vec::new(),
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
        builder.finish()
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
