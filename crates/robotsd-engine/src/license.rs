//! RSL's `License:` lines (Really Simple Licensing 1.0): a robots.txt names the license
//! documents that state on what terms its content may be used. Like `Sitemap:`, a `License:`
//! line is global, may appear several times, and belongs to no group: it never changes a verdict
//! or a group, and the engine only reports it, with its line, as written.

use std::borrow::Cow;

use super::robots_txt::RobotsTxt;

/// A `License:` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct License<'a> {
    /// The license document's URL as written (RSL asks for an absolute URL; nothing is checked).
    pub url: Cow<'a, str>,
    /// The 1-based line number.
    pub line: u32,
}

impl RobotsTxt {
    /// The `License:` lines, in file order, wherever they appear.
    pub fn licenses(&self) -> impl Iterator<Item = License<'_>> {
        self.licenses.iter().map(|(span, line)| License {
            url: String::from_utf8_lossy(&self.arena[span.range()]),
            line: *line,
        })
    }
}
