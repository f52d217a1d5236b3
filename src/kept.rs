//! What the caches keep of text a site controls, and what keeping it costs.
//!
//! A cache entry outlives the fetch that made it, so every string it keeps is bounded and
//! charged to the cache's capacity: otherwise a site could make one entry as large as its
//! responses allow while the weigher counts a few hundred bytes (issue 28 §3: a redirect to a
//! 390 KB `Location`, kept as the final URL and again inside the error text, made 400 license
//! entries charged 225,560 bytes hold 244 MB). URLs are bounded where they are followed (a
//! `Location` over [`crate::fetch::MAX_LOCATION_BYTES`] is not followed, and no URL over
//! [`crate::origin::MAX_URL_BYTES`] is fetched); texts (error messages, reasons) are cut to
//! [`MAX_KEPT_TEXT_BYTES`] when they are kept, here. What each costs is [`allocation`]'s model.

/// The longest error text or reason kept in a cache entry or a shared-store record, in bytes.
/// An error's text names what failed and why in well under this; what goes past it is a URL or
/// a message a site chose, which no answer needs whole.
pub const MAX_KEPT_TEXT_BYTES: usize = 256;

/// What marks a text as cut: a reader sees that there was more.
const CUT_MARK: &str = "…";

/// `text` within `max` bytes: unchanged when it fits, else its longest prefix that ends on a
/// character boundary and leaves room for `…`, then `…` (so the result is at most `max` bytes
/// and still valid UTF-8). A `max` too small for the mark gives the prefix alone.
pub fn cut(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let Some(room) = max.checked_sub(CUT_MARK.len()) else {
        return text[..floor_char_boundary(text, max)].into();
    };
    let mut kept = String::with_capacity(max);
    kept.push_str(&text[..floor_char_boundary(text, room)]);
    kept.push_str(CUT_MARK);
    kept.into()
}

/// The largest character boundary of `text` at or below `at` (`str::floor_char_boundary`,
/// stable only since Rust 1.91, past this crate's MSRV).
fn floor_char_boundary(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    // A UTF-8 character is at most four bytes, so a boundary is at most three bytes back.
    (at.saturating_sub(3)..=at)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0)
}

/// `text` as a cache entry keeps it: cut to [`MAX_KEPT_TEXT_BYTES`], holding no spare capacity
/// (the weigher charges what is allocated).
pub fn kept_text(text: String) -> String {
    let mut kept = match cut(&text, MAX_KEPT_TEXT_BYTES) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(cut) => cut,
    };
    kept.shrink_to_fit();
    kept
}

/// What an allocation of `bytes` costs robotsd's allocator (mimalloc, `src/main.rs`): nothing
/// for none; else a block of its size class: whole words up to 64 bytes, then four classes to
/// each doubling (at most a quarter more than asked), and past 512 KiB whole 4 KiB pages. mimalloc
/// keeps no header beside a block; its per-page metadata is under 1 % and not counted. The
/// classes are `mi_bin`'s in mimalloc v3 (`page-queue.c`), the version `mimalloc` 0.1.52 builds.
pub fn allocation(bytes: usize) -> usize {
    const WORD: usize = std::mem::size_of::<usize>();
    const LARGEST_CLASS: usize = 512 * 1024;
    const PAGE: usize = 4096;
    if bytes == 0 {
        return 0;
    }
    let words = bytes.div_ceil(WORD);
    if words <= 8 {
        return words * WORD;
    }
    if bytes > LARGEST_CLASS {
        return bytes.next_multiple_of(PAGE);
    }
    // The class is set by the top three bits of `words - 1`.
    let below = words - 1;
    let step = 1 << (below.ilog2() - 2);
    ((below / step + 1) * step) * WORD
}

/// What an entry of a `moka` cache costs beside the heap its key and value own: the key and
/// value themselves (`inline` bytes, their size), moka's bucket, its shared entry with the
/// access and write order nodes, and the hash table's slots. The part beside `inline` is
/// measured: 250,000 pacing lanes grow a release robotsd by 295 to 496 bytes each, about 160 of
/// them their key and lock, as they fill the holes of earlier work or not
/// (tests/service/memory_charge.rs holds them, with their copies, within 15 % of their resident
/// memory).
pub fn table_entry_bytes(inline: usize) -> usize {
    const MOKA_ENTRY_BYTES: usize = 290;
    MOKA_ENTRY_BYTES + inline
}

/// What a kept string costs: its buffer, as allocated.
pub fn string(text: &String) -> usize {
    allocation(text.capacity())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_text_is_kept_whole() {
        let text = "could not connect: connection refused".to_owned();
        assert_eq!(kept_text(text.clone()), text);
        assert_eq!(kept_text("x".repeat(256)), "x".repeat(256));
    }

    #[test]
    fn a_long_text_is_cut_to_the_bound_and_marked() {
        let kept = kept_text(format!(
            "error sending request for url ({})",
            "a".repeat(400_000)
        ));
        assert_eq!(kept.len(), MAX_KEPT_TEXT_BYTES);
        assert!(kept.starts_with("error sending request for url (aaa"));
        assert!(kept.ends_with('…'), "{kept}");
        assert_eq!(kept.capacity(), kept.len());
    }

    #[test]
    fn the_cut_never_splits_a_character() {
        // 252 ASCII bytes, then `é` (2 bytes) across the 253-byte room left beside the mark.
        let text = format!("{}é{}", "a".repeat(252), "b".repeat(10));
        let kept = kept_text(text);
        assert_eq!(kept, format!("{}…", "a".repeat(252)));
        assert_eq!(kept.len(), 255);
        // A four-byte character at every offset around the cut: always whole or left out.
        for pad in 245..256 {
            let text = format!("{}😀{}", "a".repeat(pad), "b".repeat(300));
            let kept = kept_text(text);
            assert!(kept.len() <= MAX_KEPT_TEXT_BYTES, "{pad}: {}", kept.len());
            assert!(kept.ends_with('…'));
            let whole = kept.contains('😀');
            assert_eq!(whole, pad + 4 <= 253, "{pad}");
        }
    }

    #[test]
    fn a_bound_below_the_mark_keeps_a_prefix() {
        assert_eq!(cut("héllo", 2), "h");
        assert_eq!(cut("héllo", 4), "h…");
        assert_eq!(cut("héllo", 5), "h…");
    }

    #[test]
    fn allocations_are_charged_as_mimalloc_makes_them() {
        assert_eq!(allocation(0), 0);
        assert_eq!(allocation(1), 8);
        assert_eq!(allocation(24), 24);
        assert_eq!(allocation(65), 80);
        assert_eq!(allocation(4096), 4096);
        assert_eq!(allocation(4097), 5120);
        // mimalloc v3's classes (`mi_bin` in page-queue.c) past 64 bytes: 80, 96, 112, 128, 160…
        let classes: Vec<usize> = (65..=1024).map(allocation).collect();
        let mut distinct = classes.clone();
        distinct.dedup();
        assert_eq!(
            &distinct[..12],
            &[80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512]
        );
        assert_eq!(allocation(512 * 1024), 512 * 1024);
        assert_eq!(allocation(512 * 1024 + 1), 512 * 1024 + 4096);
        // Never less than asked, never more than a quarter over past 64 bytes.
        for bytes in (1..200_000).chain((200_000..3_000_000).step_by(4_099)) {
            let got = allocation(bytes);
            assert!(
                got >= bytes && (bytes <= 64 || got * 4 <= bytes * 5),
                "{bytes}: {got}"
            );
        }
    }
}
