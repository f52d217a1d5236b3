//! Why a license document is not one robotsd can use: the error both the reader
//! ([`super::document`]) and the pre-scan before it ([`super::prescan`]) give, in a file below
//! both so that neither depends on the other for it (issue 42).

/// The XML namespace of RSL 1.0 documents (RSL 1.0 §3.1: `<rsl>` "MUST" declare it).
pub const RSL_NAMESPACE: &str = "https://rslstandard.org/rsl";

/// Why a fetched document is not an RSL document robotsd can use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RslError {
    /// Not well-formed XML, or XML with a DTD (entities are never expanded: a document type
    /// declaration is refused outright). The parser's message, cut to
    /// [`crate::kept::MAX_KEPT_TEXT_BYTES`].
    #[error("not well-formed XML without a DTD: {0}")]
    Xml(String),
    /// More nodes, deeper nesting, more elements, attributes, namespace declarations or text
    /// than the limits allow.
    #[error("over the limits robotsd reads RSL within: {0}")]
    TooLarge(&'static str),
    /// Parsed, and holding more memory than one document may take of `--rsl-capacity`.
    #[error(
        "the parsed document takes {bytes} bytes, more than the {share} bytes one document may take of --rsl-capacity"
    )]
    TooHeavy {
        /// Bytes the parsed document holds.
        bytes: usize,
        /// The most one document may hold.
        share: u64,
    },
    /// Not parsed within the time budget; the parse may end later, and its result is dropped.
    #[error("the parse exceeded its time budget ({0} ms)")]
    Overtime(u64),
    /// No parser came free within the time budget (other documents were being parsed).
    #[error("no parser was free within the time budget ({0} ms)")]
    Busy(u64),
    /// The parser stopped without a result (a bug in it).
    #[error("the XML parser failed")]
    ParserFailed,
    /// The body was cut at the fetch size limit.
    #[error("larger than the fetch size limit ({0} bytes)")]
    Truncated(usize),
    /// The root is not `<rsl>` in the RSL namespace: the root found, cut to
    /// [`crate::kept::MAX_KEPT_TEXT_BYTES`].
    #[error("the root element is not <rsl> in the {RSL_NAMESPACE} namespace (found {0})")]
    NotRsl(String),
    /// A `<content>` without the required `url` attribute.
    #[error("a <content> element (line {0}) has no url attribute")]
    ContentWithoutUrl(u32),
    /// No `<content>` element: RSL 1.0 requires at least one.
    #[error("the document has no <content> element")]
    NoContent,
}

impl RslError {
    /// Heap bytes the error holds, for the license cache's weigher.
    pub fn heap_size(&self) -> usize {
        match self {
            RslError::Xml(text) | RslError::NotRsl(text) => crate::kept::string(text),
            _ => 0,
        }
    }
}
