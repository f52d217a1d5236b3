//! The pacer on tokio's paused clock: alone, with replicas sharing a store, and with the store
//! down.

use futures_util::future::{BoxFuture, FutureExt as _};

use super::*;
use crate::clock::TokioClock;
use crate::pace_policy::{LendRequest, Signal, Timetable};
use crate::store::{
    BodyWrite, BreakerState, Encoded, Lease, LendAnswer, Looked, MemoryStore, SharedStore,
    StoreError, StoreSettings,
};

const ORIGIN: &str = "https://example.com";

fn pacer(clock: &Arc<dyn Clock>) -> Pacer {
    Pacer::new(PaceConfig::default(), 1 << 20, Arc::clone(clock))
}

fn store(inner: Arc<dyn SharedStore>, clock: &Arc<dyn Clock>) -> Store {
    Store::new(inner, StoreSettings::default(), Arc::clone(clock))
}

#[tokio::test(start_paused = true)]
async fn alone_it_paces_by_the_crawl_delay_or_the_default() {
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
    let pacer = pacer(&clock);
    let first = pacer.reserve(ORIGIN, Some((0.5, 3))).await;
    assert!(first.reserved);
    assert_eq!(first.wait, Duration::ZERO);
    assert_eq!(first.source, IntervalSource::CrawlDelay);
    assert_eq!(first.crawl_delay_line, Some(3));
    assert_eq!(first.scope, Scope::Local);
    // Each interval and the 50 ms guard band after the slot before.
    let second = pacer.reserve(ORIGIN, Some((0.5, 3))).await;
    assert_eq!(second.wait, Duration::from_millis(550));
    assert_eq!(second.interval, Duration::from_millis(500));
    assert_eq!(
        second
            .not_before
            .saturating_duration_since(first.not_before),
        Duration::from_millis(550)
    );
    let third = pacer.reserve(ORIGIN, None).await;
    assert_eq!(third.source, IntervalSource::Default);
    assert_eq!(third.wait, Duration::from_millis(1600));
    let capped = pacer
        .reserve("https://slow.example", Some((86_400.0, 1)))
        .await;
    assert!(capped.capped);
    assert_eq!(capped.interval, Duration::from_secs(60));
}

#[tokio::test(start_paused = true)]
async fn replicas_sharing_a_store_pace_as_one() {
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
    let shared = Arc::new(MemoryStore::new(Arc::clone(&clock)));
    let replicas: Vec<Pacer> = (0..3)
        .map(|_| pacer(&clock).with_store(store(shared.clone(), &clock)))
        .collect();
    let mut slots = Vec::new();
    for round in 0..4 {
        for replica in &replicas {
            let pace = replica.reserve(ORIGIN, Some((0.2, 2))).await;
            assert_eq!(pace.scope, Scope::Fleet, "round {round}");
            slots.push(pace.not_before);
        }
    }
    slots.sort();
    for pair in slots.windows(2) {
        assert!(pair[1].saturating_duration_since(pair[0]) >= Duration::from_millis(200));
    }
}

#[tokio::test(start_paused = true)]
async fn a_slot_beyond_the_longest_wait_is_deferred() {
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
    let config = PaceConfig {
        max_wait: Duration::from_secs(2),
        ..PaceConfig::default()
    };
    let pacer = Pacer::new(config, 1 << 20, Arc::clone(&clock));
    // Slots at 0, 1.05 s and 2.1 s: the third is past the 2 s wait.
    for _ in 0..2 {
        assert!(pacer.reserve(ORIGIN, None).await.reserved);
    }
    let deferred = pacer.reserve(ORIGIN, None).await;
    assert!(!deferred.reserved);
    assert_eq!(deferred.wait, Duration::from_millis(100));
    tokio::time::advance(deferred.wait).await;
    assert!(pacer.reserve(ORIGIN, None).await.reserved);
}

#[tokio::test(start_paused = true)]
async fn a_reported_retry_after_holds_every_replica_back() {
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
    let shared = Arc::new(MemoryStore::new(Arc::clone(&clock)));
    let one = pacer(&clock).with_store(store(shared.clone(), &clock));
    let other = pacer(&clock).with_store(store(shared, &clock));
    one.reserve(ORIGIN, None).await;
    let report = Report::new(Some(429), Some("3".into()), false).unwrap();
    let view = one
        .report(ORIGIN, ORIGIN, &report, false)
        .await
        .expect("applied");
    assert_eq!(view.slowdown, 2.0);
    assert!(view.retry_after_until.is_some());
    assert_eq!(one.origins_slowed(), 1);
    let held = other.reserve(ORIGIN, None).await;
    assert_eq!(held.wait, Duration::from_secs(3));
    assert_eq!(held.source, IntervalSource::Pushback);
    assert_eq!(other.view(ORIGIN).await.unwrap().slowdown, 2.0);
}

#[tokio::test(start_paused = true)]
async fn a_report_about_an_origin_nobody_checked_changes_nothing() {
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
    let shared = Arc::new(MemoryStore::new(Arc::clone(&clock)));
    let fleet = pacer(&clock).with_store(store(shared.clone(), &clock));
    let alone = pacer(&clock);
    let report = Report::new(Some(429), Some("600".into()), false).unwrap();
    for pacer in [&fleet, &alone] {
        assert_eq!(
            pacer
                .report(
                    "https://made-up.test",
                    "https://made-up.test",
                    &report,
                    false
                )
                .await,
            None
        );
        assert_eq!(pacer.view("https://made-up.test").await, None);
        assert_eq!(pacer.origins_slowed(), 0);
    }
    assert_eq!(shared.pace("https://made-up.test").await.unwrap(), None);
    // Alone, an origin this replica checked takes the report.
    let view = alone
        .report(ORIGIN, ORIGIN, &report, true)
        .await
        .expect("applied");
    assert_eq!(view.scope, Scope::Local);
    assert!(view.retry_after_until.is_some());
}

/// A store that never answers in time.
#[derive(Debug)]
struct DeadStore;

impl SharedStore for DeadStore {
    fn load<'a>(
        &'a self,
        _: &'a str,
        _: usize,
    ) -> BoxFuture<'a, Result<Option<Encoded>, StoreError>> {
        futures_util::future::pending().boxed()
    }
    fn save<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a [u8],
        _: &'a BodyWrite,
        _: Duration,
        _: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        futures_util::future::pending().boxed()
    }
    fn try_lease<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: Duration,
        _: usize,
    ) -> BoxFuture<'a, Result<Lease<Encoded>, StoreError>> {
        futures_util::future::pending().boxed()
    }
    fn load_or_lease<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: Duration,
        _: usize,
    ) -> BoxFuture<'a, Result<Looked<Encoded>, StoreError>> {
        futures_util::future::pending().boxed()
    }
    fn release<'a>(&'a self, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        futures_util::future::pending().boxed()
    }
    fn reserve<'a>(
        &'a self,
        _: &'a str,
        _: SlotRequest,
        _: Duration,
        _: Option<Arc<Timetable>>,
    ) -> BoxFuture<'a, Result<SlotGrant, StoreError>> {
        futures_util::future::pending().boxed()
    }
    fn lend<'a>(
        &'a self,
        _: &'a LendRequest,
        _: u32,
        _: Duration,
    ) -> BoxFuture<'a, Result<LendAnswer, StoreError>> {
        futures_util::future::pending().boxed()
    }
    fn signal<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: Signal,
        _: Duration,
    ) -> BoxFuture<'a, Result<Option<PaceReading>, StoreError>> {
        futures_util::future::pending().boxed()
    }
    fn pace<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Option<PaceReading>, StoreError>> {
        futures_util::future::pending().boxed()
    }
    fn ping(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        futures_util::future::pending().boxed()
    }
}

#[tokio::test(start_paused = true)]
async fn with_the_store_down_it_paces_locally_and_never_blocks() {
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
    let pacer = pacer(&clock).with_store(store(Arc::new(DeadStore), &clock));
    let started = tokio::time::Instant::now();
    let first = pacer.reserve(ORIGIN, None).await;
    // One store time limit, then local.
    assert_eq!(first.scope, Scope::Local);
    assert!(started.elapsed() <= StoreSettings::default().timeout);
    let mut last = first.not_before;
    for _ in 0..5 {
        let next = pacer.reserve(ORIGIN, None).await;
        assert_eq!(next.scope, Scope::Local);
        assert!(next.not_before.saturating_duration_since(last) >= Duration::from_secs(1));
        last = next.not_before;
    }
    // The breaker is open by now: no more waiting for the store.
    let again = tokio::time::Instant::now();
    pacer.reserve(ORIGIN, None).await;
    assert_eq!(again.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn replicas_deciding_alone_keep_their_share_of_the_rate_and_their_phases() {
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
    // Three replicas: the first two with the store down, the third without one.
    let share = |index| FleetShare::new(3, Some(index)).unwrap();
    let replicas = [
        pacer(&clock)
            .with_share(share(0))
            .with_store(store(Arc::new(DeadStore), &clock)),
        pacer(&clock)
            .with_share(share(1))
            .with_store(store(Arc::new(DeadStore), &clock)),
        pacer(&clock).with_share(share(2)),
    ];
    let mut slots = Vec::new();
    for round in 0..6 {
        for (i, replica) in replicas.iter().enumerate() {
            let pace = replica.reserve(ORIGIN, Some((0.5, 2))).await;
            assert_eq!(pace.scope, Scope::Local, "round {round}");
            assert_eq!(pace.fleet, share(i as u32));
            assert!(pace.reserved, "round {round}: {pace:?}");
            slots.push((pace.not_before, i));
        }
        tokio::time::advance(Duration::from_millis(300)).await;
    }
    // Each says it decides alone: the dead stores' breakers are open by now.
    assert!(replicas.iter().all(Pacer::alone));
    slots.sort();
    // At the site: a whole period (interval and guard band) between any two of the fleet's
    // slots, and three periods between one replica's.
    for pair in slots.windows(2) {
        let gap = pair[1].0.saturating_duration_since(pair[0].0);
        assert!(gap >= Duration::from_millis(550), "{gap:?}: {pair:?}");
    }
    for i in 0..3 {
        let own: Vec<Timestamp> = slots.iter().filter(|s| s.1 == i).map(|s| s.0).collect();
        for pair in own.windows(2) {
            assert!(pair[1].saturating_duration_since(pair[0]) >= Duration::from_millis(1650));
        }
    }
    // With a store that answers, the share plays no part: the store keeps every interval.
    let shared = Arc::new(MemoryStore::new(Arc::clone(&clock)));
    let fleet = pacer(&clock)
        .with_share(share(1))
        .with_store(store(shared, &clock));
    let first = fleet.reserve("https://other.example", Some((0.5, 2))).await;
    let second = fleet.reserve("https://other.example", Some((0.5, 2))).await;
    assert_eq!(first.scope, Scope::Fleet);
    assert!(!fleet.alone());
    assert_eq!(
        second
            .not_before
            .saturating_duration_since(first.not_before),
        Duration::from_millis(550)
    );
}

#[tokio::test(start_paused = true)]
async fn the_first_slot_decided_alone_shows_at_once_before_the_breaker_opens() {
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let dead = store(Arc::new(DeadStore), &clock);
    let pacer = pacer(&clock)
        .with_store(dead.clone())
        .with_observer(Arc::new(move |event| seen.lock().unwrap().push(event)));
    assert!(!pacer.alone(), "nothing has failed yet");
    let first = pacer.reserve(ORIGIN, None).await;
    assert_eq!(first.scope, Scope::Local);
    // One failure: the breaker is still closed, and the replica already says it is alone.
    assert_eq!(dead.breaker(), BreakerState::Closed { failures: 1 });
    assert!(!dead.is_up());
    assert!(pacer.alone());
    assert_eq!(pacer.scope(), Scope::Local);
    let alone: Vec<PaceEvent> = events
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|event| matches!(event, PaceEvent::Alone(_)))
        .collect();
    assert_eq!(alone, [PaceEvent::Alone(AloneCause::StoreDown)]);

    // Without a store every reservation is alone, by that cause.
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let lone = pacer_with_observer(&clock, seen);
    lone.reserve(ORIGIN, None).await;
    assert!(lone.alone());
    assert!(
        events
            .lock()
            .unwrap()
            .contains(&PaceEvent::Alone(AloneCause::NoStore))
    );
}

#[tokio::test(start_paused = true)]
async fn a_store_that_answers_again_decides_again_and_is_up_without_traffic() {
    let clock: Arc<dyn Clock> = Arc::new(TokioClock::new());
    let flaky = Arc::new(Flaky {
        inner: MemoryStore::new(Arc::clone(&clock)),
        down: std::sync::atomic::AtomicBool::new(true),
    });
    let shared = store(flaky.clone(), &clock);
    let pacer = pacer(&clock).with_store(shared.clone());
    assert_eq!(pacer.reserve(ORIGIN, None).await.scope, Scope::Local);
    assert!(pacer.alone());
    flaky.down.store(false, Ordering::Release);
    // The background probe started at the first failure sees it answer, with no reservation.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(shared.is_up());
    assert!(!pacer.alone());
    assert_eq!(pacer.reserve(ORIGIN, None).await.scope, Scope::Fleet);
}

fn pacer_with_observer(
    clock: &Arc<dyn Clock>,
    seen: Arc<std::sync::Mutex<Vec<PaceEvent>>>,
) -> Pacer {
    pacer(clock).with_observer(Arc::new(move |event| seen.lock().unwrap().push(event)))
}

/// A memory store that fails every call while `down`.
#[derive(Debug)]
struct Flaky {
    inner: MemoryStore,
    down: std::sync::atomic::AtomicBool,
}

impl Flaky {
    fn gate<'a, T: Send + 'a>(
        &'a self,
        call: BoxFuture<'a, Result<T, StoreError>>,
    ) -> BoxFuture<'a, Result<T, StoreError>> {
        if self.down.load(Ordering::Acquire) {
            async { Err(StoreError::Failed("connection refused".into())) }.boxed()
        } else {
            call
        }
    }
}

impl SharedStore for Flaky {
    fn load<'a>(
        &'a self,
        origin: &'a str,
        max: usize,
    ) -> BoxFuture<'a, Result<Option<Encoded>, StoreError>> {
        self.gate(self.inner.load(origin, max))
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
        self.gate(self.inner.save(origin, version, meta, body, ttl, release))
    }
    fn try_lease<'a>(
        &'a self,
        origin: &'a str,
        token: &'a str,
        ttl: Duration,
        max: usize,
    ) -> BoxFuture<'a, Result<Lease<Encoded>, StoreError>> {
        self.gate(self.inner.try_lease(origin, token, ttl, max))
    }
    fn load_or_lease<'a>(
        &'a self,
        origin: &'a str,
        token: &'a str,
        ttl: Duration,
        max: usize,
    ) -> BoxFuture<'a, Result<Looked<Encoded>, StoreError>> {
        self.gate(self.inner.load_or_lease(origin, token, ttl, max))
    }
    fn release<'a>(
        &'a self,
        origin: &'a str,
        token: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        self.gate(self.inner.release(origin, token))
    }
    fn reserve<'a>(
        &'a self,
        lane: &'a str,
        request: SlotRequest,
        keep: Duration,
        timetable: Option<Arc<Timetable>>,
    ) -> BoxFuture<'a, Result<SlotGrant, StoreError>> {
        self.gate(self.inner.reserve(lane, request, keep, timetable))
    }
    fn lend<'a>(
        &'a self,
        request: &'a LendRequest,
        size: u32,
        keep: Duration,
    ) -> BoxFuture<'a, Result<LendAnswer, StoreError>> {
        self.gate(self.inner.lend(request, size, keep))
    }
    fn signal<'a>(
        &'a self,
        lane: &'a str,
        origin: &'a str,
        signal: Signal,
        keep: Duration,
    ) -> BoxFuture<'a, Result<Option<PaceReading>, StoreError>> {
        self.gate(self.inner.signal(lane, origin, signal, keep))
    }
    fn pace<'a>(&'a self, lane: &'a str) -> BoxFuture<'a, Result<Option<PaceReading>, StoreError>> {
        self.gate(self.inner.pace(lane))
    }
    fn ping(&self) -> BoxFuture<'_, Result<(), StoreError>> {
        self.gate(self.inner.ping())
    }
}
