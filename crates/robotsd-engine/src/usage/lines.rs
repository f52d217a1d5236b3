//! Preference lines as the parsed file keeps them, and how a line's value becomes one
//! (draft-ietf-aipref-attach-05 §3.2): an optional path, then a statement of preference.

use super::sf::{self, Member};
use super::terms::{Preference, UsageSource};
use crate::data::Span;
use crate::diagnostics::DiagnosticKind;
use crate::escape::escape_into;

/// The preference lines of a file; absent (`None` in the file) when it has none, so that they
/// cost a pointer in the common case.
#[derive(Debug, Clone)]
pub(crate) struct UsageTables {
    /// Sorted by group, then line.
    pub(crate) lines: Box<[UsageLineData]>,
    /// Each line's preferences sorted by label.
    pub(crate) prefs: Box<[PrefData]>,
    /// The labels, end to end: RFC 9651 keys are ASCII, so they are kept as text once and
    /// sliced, not checked as UTF-8 on every answer.
    labels: Box<str>,
}

impl UsageTables {
    /// The lines of group `group`, in file order.
    pub(crate) fn group_lines(&self, group: u32) -> &[UsageLineData] {
        let start = self.lines.partition_point(|l| l.group < group);
        let end = start + self.lines[start..].partition_point(|l| l.group <= group);
        &self.lines[start..end]
    }

    pub(crate) fn heap_size(&self) -> usize {
        std::mem::size_of::<UsageTables>()
            + std::mem::size_of_val(&*self.lines)
            + std::mem::size_of_val(&*self.prefs)
            + self.labels.len()
    }

    /// The label of `pref`.
    pub(crate) fn label(&self, pref: &PrefData) -> &str {
        self.labels
            .get(pref.label.start as usize..(pref.label.start + pref.label.len) as usize)
            .unwrap_or_default()
    }
}

/// One `Content-Usage` / `Content-Signal` line.
#[derive(Debug, Clone)]
pub(crate) struct UsageLineData {
    pub(crate) group: u32,
    pub(crate) line: u32,
    pub(crate) source: UsageSource,
    /// The statement is an RFC 9651 Dictionary.
    pub(crate) parsed: bool,
    /// The value as written: the path (`path_len` bytes, none when 0), then the statement.
    value: Span,
    path_len: u32,
    statement_at: u32,
    /// The path normalised as an `allow` value is (empty when there is none).
    pattern: Span,
    /// Range of [`UsageTables::prefs`].
    pub(crate) prefs: (u32, u32),
}

impl UsageLineData {
    pub(crate) fn written_path<'a>(&self, arena: &'a [u8]) -> &'a [u8] {
        &arena[self.value.range()][..self.path_len as usize]
    }
    pub(crate) fn statement<'a>(&self, arena: &'a [u8]) -> &'a [u8] {
        &arena[self.value.range()][self.statement_at as usize..]
    }
    pub(crate) fn pattern<'a>(&self, arena: &'a [u8]) -> &'a [u8] {
        &arena[self.pattern.range()]
    }
}

/// An explicit preference of a line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PrefData {
    /// A range of [`UsageTables::labels`].
    label: Span,
    pub(crate) preference: Preference,
    /// Its index in the source's vocabulary, when it is one of its labels.
    pub(crate) known: Option<u8>,
}

/// Collects preference lines during the parse.
#[derive(Debug, Default)]
pub(crate) struct UsageBuilder {
    lines: Vec<UsageLineData>,
    prefs: Vec<PrefData>,
    labels: String,
}

fn span(arena: &mut Vec<u8>, bytes: &[u8]) -> Span {
    let start = u32::try_from(arena.len()).unwrap_or(u32::MAX);
    arena.extend_from_slice(bytes);
    Span {
        start,
        len: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
    }
}

impl UsageBuilder {
    /// Takes in the value of a preference line of `group`, storing the value as written in
    /// `arena`; calls `diagnose` for what is wrong with it.
    pub(crate) fn add<'v>(
        &mut self,
        arena: &mut Vec<u8>,
        group: u32,
        source: UsageSource,
        value: &'v [u8],
        line: u32,
        mut diagnose: impl FnMut(DiagnosticKind, Option<&'v [u8]>),
    ) {
        // §3.2: a path starts with `/` and ends before the first SP or HTAB.
        let path_len = if value.first() == Some(&b'/') {
            value
                .iter()
                .position(|&b| b == b' ' || b == b'\t')
                .unwrap_or(value.len())
        } else {
            0
        };
        let statement_at = value[path_len..]
            .iter()
            .position(|&b| b != b' ' && b != b'\t')
            .map_or(value.len(), |i| path_len + i);
        let written = span(arena, value);
        let pattern = {
            let start = u32::try_from(arena.len()).unwrap_or(u32::MAX);
            escape_into(&value[..path_len], arena);
            Span {
                start,
                len: u32::try_from(arena.len()).unwrap_or(u32::MAX) - start,
            }
        };
        let first_pref = u32::try_from(self.prefs.len()).unwrap_or(u32::MAX);
        let members = sf::parse_dictionary(&value[statement_at..]);
        if members.is_err() {
            diagnose(DiagnosticKind::PreferenceSyntax, None);
        }
        for Member { key, token } in members.as_deref().unwrap_or_default() {
            // RFC 9651 keys are ASCII; the parser checked.
            let label = std::str::from_utf8(key).unwrap_or_default();
            match token.and_then(|t| source.preference(t)) {
                None if source.takes_non_preference(label, *token) => {}
                None => diagnose(DiagnosticKind::InvalidPreferenceValue, Some(*key)),
                Some(preference) => {
                    let known = source.vocabulary().iter().position(|k| *k == label);
                    if known.is_none() {
                        diagnose(DiagnosticKind::UnknownPreferenceLabel, Some(*key));
                    }
                    let start = u32::try_from(self.labels.len()).unwrap_or(u32::MAX);
                    self.labels.push_str(label);
                    self.prefs.push(PrefData {
                        label: Span {
                            start,
                            len: u32::try_from(label.len()).unwrap_or(u32::MAX),
                        },
                        preference,
                        known: known.and_then(|i| u8::try_from(i).ok()),
                    });
                }
            }
        }
        // Sorted by label, so that an answer from one line needs no sorting.
        let labels = &self.labels;
        let label_of =
            |p: &PrefData| &labels[p.label.start as usize..(p.label.start + p.label.len) as usize];
        self.prefs[first_pref as usize..].sort_unstable_by(|a, b| label_of(a).cmp(label_of(b)));
        self.lines.push(UsageLineData {
            group,
            line,
            source,
            parsed: members.is_ok(),
            value: written,
            path_len: u32::try_from(path_len).unwrap_or(u32::MAX),
            statement_at: u32::try_from(statement_at).unwrap_or(u32::MAX),
            pattern,
            prefs: (
                first_pref,
                u32::try_from(self.prefs.len()).unwrap_or(u32::MAX),
            ),
        });
    }

    /// The tables, or `None` when the file has no preference line.
    pub(crate) fn finish(&mut self) -> Option<Box<UsageTables>> {
        if self.lines.is_empty() {
            return None;
        }
        Some(Box::new(UsageTables {
            lines: std::mem::take(&mut self.lines).into_boxed_slice(),
            prefs: std::mem::take(&mut self.prefs).into_boxed_slice(),
            labels: std::mem::take(&mut self.labels).into_boxed_str(),
        }))
    }
}
