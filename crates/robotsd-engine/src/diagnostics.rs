//! Per-line findings of a parse (SEMANTICS.md §1 "Keys"): what a robots.txt tester shows its
//! user. They never change a verdict.

/// Keys Google knows but does not use; the reference reports them as "unused" rather than
/// "unknown". Compared case-insensitively with the whole key.
pub const UNSUPPORTED_KEYS: [&str; 13] = [
    "clean-param",
    "content-signal",
    "content-usage",
    "crawl-delay",
    "domain",
    "host",
    "license",
    "noarchive",
    "nofollow",
    "noindex",
    "request-rate",
    "revisit-after",
    "visit-time",
];

/// Whether `key` is one of [`UNSUPPORTED_KEYS`].
pub fn is_unsupported_key(key: &[u8]) -> bool {
    UNSUPPORTED_KEYS
        .iter()
        .any(|k| k.as_bytes().eq_ignore_ascii_case(key))
}

/// At most this many diagnostics are kept per file, so that a junk body (an HTML page served as
/// robots.txt) cannot make one parsed file large; the rest are only counted.
pub const MAX_DIAGNOSTICS: usize = 1024;

/// Unknown keys are kept up to this many bytes.
pub const MAX_DIAGNOSTIC_KEY_BYTES: usize = 64;

/// What was found on a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum DiagnosticKind {
    /// A misspelt key the reference accepts (`useragent`, `disalow`, `site-map`, …).
    AcceptedTypo,
    /// Key and value separated by whitespace instead of a colon (accepted).
    MissingColon,
    /// The line exceeded 16,663 bytes; the rest was dropped.
    LineTooLong,
    /// A key that means nothing to any crawler robotsd knows of; the line is ignored.
    UnknownKey,
    /// A key Google does not use (`crawl-delay`, `host`, `noindex`, …); the line is ignored.
    UnsupportedKey,
    /// A non-empty line that is neither a comment nor a `key: value` pair; it is ignored.
    NotADirective,
    /// An `allow`/`disallow` (or a `content-usage`/`content-signal`) before any `user-agent`
    /// line; it is ignored.
    RuleOutsideGroup,
    /// A `content-usage`/`content-signal` statement that is not an RFC 9651 Dictionary (a
    /// capital letter in a label, a missing `,`…): the line states no preference.
    PreferenceSyntax,
    /// A label whose value is not `y`/`n` (`yes`/`no` for `content-signal`): that category is
    /// left unknown. The key is the label.
    InvalidPreferenceValue,
    /// A label outside the vocabulary implemented (`docs/usage.md`); its preference is reported
    /// as written. The key is the label.
    UnknownPreferenceLabel,
}

/// One finding, with the key it concerns where there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic<'a> {
    /// 1-based line number.
    pub line: u32,
    /// What was found.
    pub kind: DiagnosticKind,
    /// The key as written (cut to 64 bytes) for typos and unknown or unsupported keys.
    pub key: Option<std::borrow::Cow<'a, str>>,
}

/// Counts over the whole file, as the reference's parse reporter keeps them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ParseStats {
    /// Number of lines, counting a final empty line after the last line ending.
    pub lines: u32,
    /// `user-agent`, `allow`, `disallow` and `sitemap` lines.
    pub valid_directives: u32,
    /// Lines with any other key.
    pub unknown_directives: u32,
    /// Diagnostics beyond [`MAX_DIAGNOSTICS`], counted but not kept.
    pub diagnostics_dropped: u32,
}
