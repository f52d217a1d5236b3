//! The bounds every answer keeps, whatever the file behind it holds.
//!
//! robotsd reads files that strangers write (robots.txt, RSL license documents). Every list an
//! answer copies from such a file is cut at a stated number, and every text at a stated length,
//! so that no site can make an answer, and the memory a batch of answers takes, grow with its
//! file: a robots.txt naming 36,000 agents in one group answered 349 KB per check before these
//! bounds. What was cut is always said: a cut object carries `"truncated": true`, and a cut list
//! its full length beside it (`agents_total`, `contents_total`, …). `docs/behaviour.md`
//! ("Bounded answers") lists every number; a test holds the answer to them.
//!
//! Texts are measured as JSON, escapes included: a control character costs six bytes in an
//! answer (`\u0001`), so a length in raw bytes would bound nothing.

/// `group.agents` (and `group.lines`) of a check answer: the first this many `user-agent` lines.
pub const MAX_GROUP_AGENTS: usize = 16;

/// One `user-agent` value of `group.agents`, and one value or token of the agents an answer
/// echoes (`agent.input`, `agent.tokens`), in JSON bytes.
pub const MAX_AGENT_JSON_BYTES: usize = 256;

/// `agent.input` and `agent.tokens` of a check answer: the first this many agents asked about.
/// A request names at most `--max-agents` (32) of them, each value up to 1,024 bytes: echoed
/// whole in each of a thousand items, they made the answer, and a batch's memory, grow with the
/// request (a batch of 950 agents of 1,000 bytes answered 7.7 MB and took 1 GB resident). Eight
/// values and tokens of 256 bytes are at most about 4.2 KiB an answer, so that a thousand
/// answers of such agents still fit a batch's bound whole.
pub const MAX_ECHOED_AGENTS: usize = 8;

/// The deciding rule's `pattern`, in JSON bytes (a URL of 2,048 bytes is already longer than
/// browsers and search engines keep).
pub const MAX_PATTERN_JSON_BYTES: usize = 2_048;

/// Categories of one vocabulary (`content_usage`, `content_signal`) in a check answer. The
/// vocabularies implemented have two and three labels.
pub const MAX_USAGE_CATEGORIES: usize = 16;

/// A usage category label, in bytes: a longer one (RFC 9651 asks parsers to take keys of 64
/// characters) is left out of the answer and counted in the total.
pub const MAX_USAGE_LABEL_BYTES: usize = 64;

/// `usage.rsl` of a check answer: the reports of the first this many distinct license URLs,
/// which are also the only documents fetched for a robots.txt (`rsl::MAX_REPORTED_PER_FILE`).
pub const MAX_RSL_REPORTS: usize = 4;

/// The `<content>` elements one RSL report shows (those tied for the most specific match).
pub const MAX_RSL_CONTENTS: usize = 4;

/// The JSON of all `<content>` elements a check answer shows, across its RSL reports.
pub const MAX_RSL_CONTENTS_JSON_BYTES: usize = 16 * 1024;

/// A `license_url` shown in an RSL report, in JSON bytes.
pub const MAX_LICENSE_URL_JSON_BYTES: usize = 2_048;

/// The whole of one check answer, beyond what the request itself sends and the answer echoes
/// (its URL, as given and normalised, and the agents asked about, within their own bounds
/// above: 8 values and tokens of 256 bytes, about 4.2 KiB at most). The sum of the
/// bounds above and of the stored texts' bounds (a `final_url` of 4,096 bytes, an error of 256)
/// stays under it; the service tests hold a check of a hostile file to it.
pub const MAX_CHECK_ANSWER_BYTES: usize = 64 * 1024;

/// A batch's answer (`POST /v1/check`, the `results` of `/v1/evaluate`): once this many bytes
/// are written, every further item is answered as `view=verdict` answers it, and the batch says
/// `"truncated": true`. A thousand answers of real files take well under 4 MiB.
pub const MAX_BATCH_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// The bytes `text` takes as a JSON string's contents, as serde_json escapes it.
pub fn json_len(text: &str) -> usize {
    text.bytes().map(escaped_len).sum()
}

fn escaped_len(b: u8) -> usize {
    match b {
        b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
        0..0x20 => 6,
        _ => 1,
    }
}

/// `text` cut so that its JSON takes at most `max` bytes, at a character boundary; `None` when
/// it fits whole (the usual case, which costs one scan and no copy).
pub fn cut_json(text: &str, max: usize) -> Option<&str> {
    // Most texts are far shorter than any bound even at six bytes a byte.
    if text.len().saturating_mul(6) <= max {
        return None;
    }
    let mut used = 0;
    for (at, c) in text.char_indices() {
        let cost = if c.is_ascii() {
            escaped_len(c as u8)
        } else {
            c.len_utf8()
        };
        if used + cost > max {
            return Some(&text[..at]);
        }
        used += cost;
    }
    None
}

/// `text`, cut as [`cut_json`] says, owned; and whether it was cut.
pub fn cut_owned(text: &str, max: usize) -> (String, bool) {
    match cut_json(text, max) {
        Some(cut) => (cut.to_owned(), true),
        None => (text.to_owned(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_len_counts_escapes_as_serde_json_writes_them() {
        for text in [
            "plain",
            "a\"b\\c",
            "tab\there\nline",
            "\u{1}\u{1f}",
            "é ü 日本",
            "",
        ] {
            let written = serde_json::to_string(text).unwrap();
            assert_eq!(json_len(text), written.len() - 2, "{text:?}");
        }
    }

    #[test]
    fn a_text_that_fits_is_not_cut() {
        assert_eq!(cut_json("/private", 8), None);
        assert_eq!(cut_json(&"a".repeat(100), 100), None);
    }

    #[test]
    fn a_cut_keeps_to_the_bound_in_json_bytes() {
        let text = "\u{1}".repeat(100);
        let cut = cut_json(&text, 64).unwrap();
        assert_eq!(cut.len(), 10);
        assert!(json_len(cut) <= 64);
    }

    #[test]
    fn a_cut_falls_on_a_character_boundary() {
        // 'é' is two bytes: a cut at 5 bytes would split the third.
        let text = "ééééé".repeat(10);
        let cut = cut_json(&text, 5).unwrap();
        assert_eq!(cut, "éé");
    }

    proptest::proptest! {
        #[test]
        fn a_cut_is_a_prefix_within_the_bound(text in "\\PC{0,80}|[\\x00-\\x7f]{0,80}", max in 0usize..200) {
            match cut_json(&text, max) {
                Some(cut) => {
                    proptest::prop_assert!(text.starts_with(cut));
                    proptest::prop_assert!(json_len(cut) <= max);
                    proptest::prop_assert!(json_len(&text) > max);
                }
                None => proptest::prop_assert!(json_len(&text) <= max),
            }
        }
    }
}
