//! What the store said before a fetch, handed from the check that read it to the fetch that
//! goes on from there (`OriginCache::fetch_shared`), and the lease tokens both use.

/// What the store said before a fetch: how `OriginCache::fetch_shared` goes on.
#[derive(Debug)]
pub(super) enum Prior {
    /// Not read (a background refresh): it is read before the lease is taken.
    Unread,
    /// Read just before, by a foreground miss that found nothing to answer from: the lease is
    /// taken, and the record read again with it.
    Read,
    /// Nothing was stored, and the read took the fetch lease with this token: fetch.
    Leased(String),
    /// Nothing was stored, and another replica held the lease: its result is waited for.
    Held,
}

/// A fresh lease token: whoever holds it owns the lease, and only they release it.
pub(super) fn new_token() -> String {
    format!("{:032x}", rand::random::<u128>())
}
