//! The parsed file's data, below everything that builds or reads it: the arena spans, the rules,
//! the `user-agent` lines, the groups and the diagnostics that [`crate::RobotsTxt`] holds, with
//! no behaviour but their own accessors. The parse (`robots_txt`), its scratch space (`scratch`),
//! the rule index (`index`) and the readers build on these.

use crate::diagnostics::DiagnosticKind;
use crate::pattern::{Shape, index_htm_directory};

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

/// One `allow`/`disallow` line: 12 bytes, since the service holds hundreds of thousands.
///
/// What can be derived is not stored: the shape from the byte after the literal prefix, the
/// `index.htm` form from the pattern, and the written value (stored after the pattern in the
/// rare case it differs) from [`RobotsTxt::rewritten`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct RuleData {
    /// Start of the normalised pattern in the arena.
    pub(crate) start: u32,
    /// The line number, with [`ALLOW_BIT`] set for `allow`.
    pub(crate) line_allow: u32,
    /// Length of the normalised pattern (≤ 3 × the longest line, so it fits).
    pub(crate) pattern_len: u16,
    /// Bytes before the first `*` (or before the final `$` when there is no `*`).
    pub(crate) prefix_len: u16,
}

/// Marks an `allow` in [`RuleData::line_allow`]; line numbers saturate below it (a body would
/// need two billion lines to reach it).
pub(crate) const ALLOW_BIT: u32 = 1 << 31;

impl RuleData {
    pub(crate) fn is_allow(&self) -> bool {
        self.line_allow & ALLOW_BIT != 0
    }
    pub(crate) fn line(&self) -> u32 {
        self.line_allow & !ALLOW_BIT
    }
    pub(crate) fn pattern(self, arena: &[u8]) -> &[u8] {
        let start = self.start as usize;
        &arena[start..start + usize::from(self.pattern_len)]
    }
    pub(crate) fn shape(self, arena: &[u8]) -> Shape {
        match self.pattern(arena).get(usize::from(self.prefix_len)) {
            None => Shape::Prefix,
            Some(b'*') => Shape::Wildcard,
            Some(_) => Shape::Exact,
        }
    }
    /// An `allow` whose last segment starts with `/index.htm`: it also allows its directory.
    pub(crate) fn has_index_htm_form(self, arena: &[u8]) -> bool {
        self.is_allow() && index_htm_directory(self.pattern(arena)).is_some()
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
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
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

#[derive(Debug, Clone, Copy)]
pub(crate) struct DiagnosticData {
    pub(crate) line: u32,
    pub(crate) kind: DiagnosticKind,
    pub(crate) key: Option<Span>,
}
