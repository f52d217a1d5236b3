//! [`MemoryStore`]: the shared store inside one process, with Redis's semantics for what
//! robotsd uses (records with a time to live, `SET NX PX` leases, compare-and-delete, and the
//! pacing state that the Redis script keeps, here by the pure policy itself). Caches in one
//! process that share it behave as replicas sharing a Redis; expiry follows the given clock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::{BoxFuture, FutureExt as _};

use super::record::{Encoded, MAX_META_BYTES};
use super::{BodyWrite, Lease, LendAnswer, Looked, PaceReading, SharedStore, StoreError};
use crate::clock::{Clock, Timestamp};
use crate::pace_policy::{
    Lease as PlaceLease, LendRequest, Lending, PaceState, Signal, SlotGrant, SlotRequest,
    Timetable, lend, millis,
};

#[derive(Debug, Default)]
struct Inner {
    records: HashMap<String, (Encoded, Timestamp)>,
    leases: HashMap<String, (String, Timestamp)>,
    paces: HashMap<String, (PaceState, Timestamp)>,
    /// The replicas' leases on their places, by index, until the table's expiry.
    places: (std::collections::BTreeMap<u32, PlaceLease>, Timestamp),
}

/// The shared store of one process. Cheap to clone; clones share everything.
#[derive(Debug, Clone)]
pub struct MemoryStore {
    inner: Arc<Mutex<Inner>>,
    clock: Arc<dyn Clock>,
    /// Its identity, as Redis's replication id: a lease written on another store is void here.
    id: Arc<str>,
}

impl MemoryStore {
    /// An empty store whose entries expire on `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> MemoryStore {
        MemoryStore {
            inner: Arc::default(),
            clock,
            id: format!("{:016x}", rand::random::<u64>()).into(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Replaces an origin's stored fields as they are, without checks: what a rolling upgrade
    /// or a stray writer leaves behind.
    pub fn put_raw(&self, origin: &str, encoded: Encoded, ttl: Duration) {
        let now = self.clock.now();
        let mut inner = self.lock();
        // Expired entries go when the map doubles, so it holds at most twice the live ones.
        if inner.records.len() >= 1024 && inner.records.len().is_power_of_two() {
            inner.records.retain(|_, (_, expires)| *expires > now);
            inner.leases.retain(|_, (_, expires)| *expires > now);
        }
        if inner.paces.len() >= 1024 && inner.paces.len().is_power_of_two() {
            inner.paces.retain(|_, (_, expires)| *expires > now);
        }
        inner
            .records
            .insert(origin.to_string(), (encoded, now + ttl));
    }

    /// Runs `change` on the origin's pacing state (a fresh one when none is kept) and keeps it
    /// for `keep`; what `change` returns, and the now it ran at.
    fn with_pace<T>(
        &self,
        origin: &str,
        keep: Duration,
        change: impl FnOnce(&mut PaceState, u64) -> T,
    ) -> (T, PaceState, u64) {
        let now = self.clock.now();
        let now_ms = millis(now.since_epoch());
        let mut inner = self.lock();
        let mut state = inner
            .paces
            .get(origin)
            .filter(|(_, expires)| *expires > now)
            .map_or_else(PaceState::default, |(state, _)| *state);
        let out = change(&mut state, now_ms);
        inner.paces.insert(origin.to_string(), (state, now + keep));
        (out, state, now_ms)
    }

    /// Takes `origin`'s lease for `token` unless another unexpired one holds it; whether it did.
    fn lease_now(&self, inner: &mut Inner, origin: &str, token: &str, ttl: Duration) -> bool {
        let now = self.clock.now();
        let free = inner
            .leases
            .get(origin)
            .is_none_or(|(_, expires)| *expires <= now);
        if free {
            inner
                .leases
                .insert(origin.to_string(), (token.to_string(), now + ttl));
        }
        free
    }

    /// Releases `origin`'s lease if `token` holds it.
    fn release_now(&self, origin: &str, token: &str) {
        let mut inner = self.lock();
        if inner
            .leases
            .get(origin)
            .is_some_and(|(held, _)| held == token)
        {
            inner.leases.remove(origin);
        }
    }

    /// An origin's stored fields as they are, if unexpired.
    pub fn get_raw(&self, origin: &str) -> Option<Encoded> {
        let now = self.clock.now();
        self.lock()
            .records
            .get(origin)
            .filter(|(_, expires)| *expires > now)
            .map(|(encoded, _)| encoded.clone())
    }
}

impl SharedStore for MemoryStore {
    fn load<'a>(
        &'a self,
        origin: &'a str,
        max_body_bytes: usize,
    ) -> BoxFuture<'a, Result<Option<Encoded>, StoreError>> {
        let result = match self.get_raw(origin) {
            Some(encoded)
                if encoded.meta.len() > MAX_META_BYTES || encoded.body.len() > max_body_bytes =>
            {
                Err(StoreError::TooLarge)
            }
            found => Ok(found),
        };
        async move { result }.boxed()
    }

    fn save<'a>(
        &'a self,
        origin: &'a str,
        version: &'a str,
        meta: &'a [u8],
        body: &'a BodyWrite,
        ttl: Duration,
        release: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let kept = match body {
            BodyWrite::Set(body) => body.clone(),
            BodyWrite::Keep => self.get_raw(origin).map(|e| e.body).unwrap_or_default(),
            BodyWrite::Remove => Vec::new(),
        };
        let encoded = Encoded {
            version: version.to_string(),
            meta: meta.to_vec(),
            body: kept,
        };
        self.put_raw(origin, encoded, ttl);
        if let Some(token) = release {
            self.release_now(origin, token);
        }
        async { Ok(()) }.boxed()
    }

    fn try_lease<'a>(
        &'a self,
        origin: &'a str,
        token: &'a str,
        ttl: Duration,
        max_body_bytes: usize,
    ) -> BoxFuture<'a, Result<Lease<Encoded>, StoreError>> {
        let free = self.lease_now(&mut self.lock(), origin, token, ttl);
        if !free {
            return async { Ok(Lease::Held) }.boxed();
        }
        let loaded = self.load(origin, max_body_bytes);
        async move { Ok(Lease::Taken(loaded.await?)) }.boxed()
    }

    fn load_or_lease<'a>(
        &'a self,
        origin: &'a str,
        token: &'a str,
        ttl: Duration,
        max_body_bytes: usize,
    ) -> BoxFuture<'a, Result<Looked<Encoded>, StoreError>> {
        let now = self.clock.now();
        // One lock for the read and the lease, as one script does both in Redis.
        let stored = {
            let mut inner = self.lock();
            let stored = inner
                .records
                .get(origin)
                .filter(|(_, expires)| *expires > now)
                .map(|(encoded, _)| encoded.clone());
            stored.ok_or_else(|| self.lease_now(&mut inner, origin, token, ttl))
        };
        let result = match stored {
            Ok(encoded)
                if encoded.meta.len() > MAX_META_BYTES || encoded.body.len() > max_body_bytes =>
            {
                Err(StoreError::TooLarge)
            }
            Ok(encoded) => Ok(Looked::Read(Some(encoded))),
            Err(true) => Ok(Looked::Leased),
            Err(false) => Ok(Looked::Held),
        };
        async move { result }.boxed()
    }

    fn release<'a>(
        &'a self,
        origin: &'a str,
        token: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.release_now(origin, token);
        async { Ok(()) }.boxed()
    }

    fn reserve<'a>(
        &'a self,
        origin: &'a str,
        request: SlotRequest,
        keep: Duration,
        timetable: Option<Arc<Timetable>>,
    ) -> BoxFuture<'a, Result<SlotGrant, StoreError>> {
        let id = Arc::clone(&self.id);
        let (grant, _, _) = self.with_pace(origin, keep, |state, now| match &timetable {
            Some(timetable) => state.reserve_lent(now, request, timetable, Some(&id)),
            None => state.reserve(now, request),
        });
        async move { Ok(grant) }.boxed()
    }

    fn lend<'a>(
        &'a self,
        request: &'a LendRequest,
        size: u32,
        keep: Duration,
    ) -> BoxFuture<'a, Result<LendAnswer, StoreError>> {
        let now = self.clock.now();
        let mut inner = self.lock();
        if inner.places.1 <= now {
            inner.places.0.clear();
        }
        let lending = lend(
            inner.places.0.get(&request.index),
            millis(now.since_epoch()),
            &self.id,
            request,
        );
        if let Lending::Lent(lease) = &lending {
            inner.places.0.insert(request.index, lease.clone());
        }
        inner.places.1 = now + keep;
        let table = inner
            .places
            .0
            .range(..size)
            .map(|(&index, lease)| lease.lent(index))
            .collect();
        async move { Ok(LendAnswer { lending, table }) }.boxed()
    }

    fn signal<'a>(
        &'a self,
        lane: &'a str,
        origin: &'a str,
        signal: Signal,
        keep: Duration,
    ) -> BoxFuture<'a, Result<Option<PaceReading>, StoreError>> {
        let held = {
            let now = self.clock.now();
            let inner = self.lock();
            let live = |expires: &Timestamp| *expires > now;
            inner.paces.get(lane).is_some_and(|(_, e)| live(e))
                || inner.records.get(origin).is_some_and(|(_, e)| live(e))
        };
        let reading = held.then(|| {
            let ((), state, now) =
                self.with_pace(lane, keep, |state, now| state.signal(now, signal));
            PaceReading { state, now }
        });
        async move { Ok(reading) }.boxed()
    }

    fn pace<'a>(
        &'a self,
        origin: &'a str,
    ) -> BoxFuture<'a, Result<Option<PaceReading>, StoreError>> {
        let now = self.clock.now();
        let reading = self
            .lock()
            .paces
            .get(origin)
            .filter(|(_, expires)| *expires > now)
            .map(|(state, _)| PaceReading {
                state: *state,
                now: millis(now.since_epoch()),
            });
        async move { Ok(reading) }.boxed()
    }

    fn ping(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        async { Ok(()) }.boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::TokioClock;

    /// What Redis's script does (`redis_record::load_or_lease_script`, tested against a real
    /// server by the fleet's tests), in one lock: the lease only where nothing is stored.
    #[tokio::test(start_paused = true)]
    async fn a_read_takes_the_lease_only_where_nothing_is_stored() {
        let store = MemoryStore::new(Arc::new(TokioClock::new()));
        let ttl = Duration::from_secs(15);
        let origin = "https://example.com";
        assert_eq!(
            store.load_or_lease(origin, "a", ttl, 100).await,
            Ok(Looked::Leased)
        );
        assert_eq!(
            store.load_or_lease(origin, "b", ttl, 100).await,
            Ok(Looked::Held)
        );
        assert_eq!(
            store.try_lease(origin, "b", ttl, 100).await,
            Ok(Lease::Held),
            "the lease is the one try_lease knows"
        );
        tokio::time::advance(ttl).await;
        assert_eq!(
            store.load_or_lease(origin, "b", ttl, 100).await,
            Ok(Looked::Leased),
            "an expired lease is taken over"
        );
        let body = BodyWrite::Set(b"deflated".to_vec());
        store
            .save(origin, "1", b"{}", &body, ttl, Some("b"))
            .await
            .unwrap();
        let Ok(Looked::Read(Some(read))) = store.load_or_lease(origin, "c", ttl, 100).await else {
            panic!("a stored record is read");
        };
        assert_eq!(read.body, b"deflated");
        assert_eq!(
            store.try_lease(origin, "c", ttl, 100).await,
            Ok(Lease::Taken(Some(read))),
            "reading a record took no lease, and saving released b's"
        );
        assert_eq!(
            store.load_or_lease(origin, "d", ttl, 4).await,
            Err(StoreError::TooLarge)
        );
    }
}
