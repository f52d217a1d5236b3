//! Bytes the answer layer derives once from a kept copy and reuses for every answer from it:
//! the JSON of where the copy came from (its status, times, digest, size and final URL) is the
//! same in every cached check of the origin, and writing it anew cost about 1,300 instructions
//! a check (two timestamps, 64 hex digits, the URL's scan). The cache keeps the slot and knows
//! nothing of JSON; what is kept, and for which copy, is the writer's business.

use std::sync::OnceLock;
use std::time::SystemTime;

/// What the kept bytes were made from: the copy's fetch and expiry times. A copy keeps one
/// [`CopyMemo`] for its life, but the key makes a mismatch impossible to miss rather than
/// trusting that no later change of the copy reuses it.
pub type MemoKey = (Option<SystemTime>, Option<SystemTime>);

/// The bytes kept for one copy, made by the first answer that asks.
#[derive(Default)]
pub struct CopyMemo {
    kept: OnceLock<(MemoKey, Box<[u8]>)>,
}

impl CopyMemo {
    /// The most bytes a memo of a copy whose final URL is `url_bytes` long may keep, charged to
    /// the copy in the cache before anything is kept: the source object's start and members
    /// but the URL come to at most 205 bytes (`{"status":` and three digits, two quoted RFC 3339
    /// times, 64 quoted hex digits and a size of at most 20 digits, with their keys), and the
    /// URL needs no JSON escape (a serialised URL has no control character, quote or
    /// backslash), so it is its own length and its quotes. A copy answered by a bot challenge
    /// keeps its `challenged` member too: 39 bytes and the vendor's and marker's own (robotsd's
    /// constants, which need no escape).
    pub fn bound(url_bytes: usize, challenge: Option<crate::fetch::challenge::Challenge>) -> usize {
        let challenged = challenge.map_or(0, |c| 39 + c.vendor.len() + c.marker.len());
        205 + url_bytes + challenged
    }

    /// The bytes kept for `key`, made by `make` when none are kept yet; `None` when the bytes
    /// kept were made for another key (then the caller writes them itself).
    pub fn get_or_make(&self, key: MemoKey, make: impl FnOnce() -> Vec<u8>) -> Option<&[u8]> {
        let (kept_key, bytes) = self.kept.get_or_init(|| (key, make().into_boxed_slice()));
        (*kept_key == key).then_some(&**bytes)
    }
}

/// Every memo is equal to every other: what it keeps is derived from what it is kept beside, so
/// two answers that agree on everything else are equal whatever their memos hold.
impl PartialEq for CopyMemo {
    fn eq(&self, _other: &CopyMemo) -> bool {
        true
    }
}

impl std::fmt::Debug for CopyMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopyMemo")
            .field("kept_bytes", &self.kept.get().map(|(_, bytes)| bytes.len()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn keeps_the_first_bytes_for_their_key_and_refuses_another_key() {
        let memo = CopyMemo::default();
        let key = (Some(UNIX_EPOCH), Some(UNIX_EPOCH + Duration::from_secs(60)));
        assert_eq!(
            memo.get_or_make(key, || b"first".to_vec()),
            Some(&b"first"[..])
        );
        // Made once: a second maker is not called.
        assert_eq!(
            memo.get_or_make(key, || unreachable!("made twice")),
            Some(&b"first"[..])
        );
        let renewed = (key.0, Some(UNIX_EPOCH + Duration::from_secs(120)));
        assert_eq!(memo.get_or_make(renewed, || b"second".to_vec()), None);
    }
}
