//! The lease a foreground miss takes with its read.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::{BoxFuture, FutureExt as _};
use tokio::sync::Notify;

use crate::cache::{CacheConfig, FleetConfig, OriginCache};
use crate::clock::{Clock, TokioClock};
use crate::destination::DestinationPolicy;
use crate::fetch::{FetchConfig, Fetcher};
use crate::origin::Origin;
use crate::pace_policy::{LendRequest, Signal, SlotGrant, SlotRequest, Timetable};
use crate::store::{
    BodyWrite, Encoded, Lease, LendAnswer, Looked, MemoryStore, PaceReading, SharedStore, Store,
    StoreError, StoreSettings,
};

/// A memory store whose `load_or_lease` does its work and then never answers, as a Redis whose
/// reply is on its way when the caller gives up.
#[derive(Debug)]
struct Stalls {
    inner: Arc<MemoryStore>,
    called: Arc<Notify>,
}

impl SharedStore for Stalls {
    fn load<'a>(
        &'a self,
        o: &'a str,
        m: usize,
    ) -> BoxFuture<'a, Result<Option<Encoded>, StoreError>> {
        self.inner.load(o, m)
    }
    fn save<'a>(
        &'a self,
        o: &'a str,
        v: &'a str,
        m: &'a [u8],
        b: &'a BodyWrite,
        t: Duration,
        r: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.save(o, v, m, b, t, r)
    }
    fn try_lease<'a>(
        &'a self,
        o: &'a str,
        k: &'a str,
        t: Duration,
        m: usize,
    ) -> BoxFuture<'a, Result<Lease<Encoded>, StoreError>> {
        self.inner.try_lease(o, k, t, m)
    }
    fn load_or_lease<'a>(
        &'a self,
        o: &'a str,
        k: &'a str,
        t: Duration,
        m: usize,
    ) -> BoxFuture<'a, Result<Looked<Encoded>, StoreError>> {
        async move {
            let _ = self.inner.load_or_lease(o, k, t, m).await;
            self.called.notify_one();
            futures_util::future::pending().await
        }
        .boxed()
    }
    fn release<'a>(&'a self, o: &'a str, k: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        self.inner.release(o, k)
    }
    fn reserve<'a>(
        &'a self,
        l: &'a str,
        r: SlotRequest,
        k: Duration,
        t: Option<Arc<Timetable>>,
    ) -> BoxFuture<'a, Result<SlotGrant, StoreError>> {
        self.inner.reserve(l, r, k, t)
    }
    fn lend<'a>(
        &'a self,
        r: &'a LendRequest,
        n: u32,
        k: Duration,
    ) -> BoxFuture<'a, Result<LendAnswer, StoreError>> {
        self.inner.lend(r, n, k)
    }
    fn signal<'a>(
        &'a self,
        l: &'a str,
        o: &'a str,
        s: Signal,
        k: Duration,
    ) -> BoxFuture<'a, Result<Option<PaceReading>, StoreError>> {
        self.inner.signal(l, o, s, k)
    }
    fn pace<'a>(&'a self, l: &'a str) -> BoxFuture<'a, Result<Option<PaceReading>, StoreError>> {
        self.inner.pace(l)
    }
    fn ping(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        self.inner.ping()
    }
}

/// A check that gives up while its read is in flight (its client went away) must not leave the
/// lease that read took: every replica's checks of the origin would wait on it for its whole
/// time to live (15 s by default) before one of them fetched.
#[tokio::test]
async fn a_miss_given_up_mid_read_leaves_no_lease_behind() {
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
    let memory = Arc::new(MemoryStore::new(Arc::clone(&clock)));
    let called = Arc::new(Notify::new());
    let stalls = Stalls {
        inner: Arc::clone(&memory),
        called: Arc::clone(&called),
    };
    // The store's own time limit is not what ends the call here: the caller is.
    let settings = StoreSettings {
        timeout: Duration::from_secs(600),
        ..StoreSettings::default()
    };
    let store = Store::new(Arc::new(stalls), settings, Arc::clone(&clock));
    let fetcher = Fetcher::new(FetchConfig::default(), DestinationPolicy::default())
        .expect("default fetcher");
    let cache = OriginCache::with_clock(CacheConfig::default(), fetcher, clock)
        .with_store(store, FleetConfig::default());
    // A documentation address: never fetched, the check stops at the store.
    let origin = Origin::from_url(&url::Url::parse("http://192.0.2.1/").unwrap()).unwrap();
    let check = tokio::spawn({
        let (cache, origin) = (cache.clone(), origin.clone());
        async move { cache.lookup(&origin).await }
    });
    called.notified().await;
    let ttl = Duration::from_secs(60);
    assert_eq!(
        memory.try_lease(origin.key(), "another", ttl, 1).await,
        Ok(Lease::Held),
        "the read took the lease"
    );
    check.abort();
    assert!(check.await.is_err_and(|e| e.is_cancelled()));
    // Released in the background, at once; the bound only spares a loaded machine.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match memory.try_lease(origin.key(), "another", ttl, 1).await {
            Ok(Lease::Taken(None)) => break,
            held => assert!(
                tokio::time::Instant::now() < deadline,
                "still {held:?} after the check gave up"
            ),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
