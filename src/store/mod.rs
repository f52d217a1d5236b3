//! The shared store behind the origin cache: where replicas share each origin's robots.txt, its
//! backoff and its refusal, and take the lease that makes a fetch fleet-wide single flight
//! (docs/fleet.md).
//!
//! [`SharedStore`] is the port, with two implementations: [`RedisStore`] (Redis, Valkey, a
//! Redis Cluster, or the master Sentinel names) and [`MemoryStore`] (one process; replicas in
//! one test process share it). The cache reaches either through [`Store`], which puts a time limit and a circuit breaker around
//! every call and counts it: the store is never needed to answer, so a slow or dead store must
//! cost a check nothing but the time limit, once, and then nothing until it comes back.

mod breaker;
mod coalesce;
mod lua;
mod memory;
pub mod record;
mod recovery;
mod redis_config;
mod redis_lease;
mod redis_pace;
mod redis_record;
mod redis_store;
mod sentinel;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;

pub use breaker::{Breaker, BreakerState};
pub use memory::MemoryStore;
pub use record::{Encoded, Record, RecordError};
pub use redis_config::{
    RedisConfig, RedisStoreError, RedisTarget, RedisTls, SentinelConfig, redact,
};
pub use redis_store::RedisStore;

use crate::clock::Clock;
use crate::pace_policy::{
    LendRequest, Lending, Lent, PaceState, Signal, SlotGrant, SlotRequest, Timetable,
};

/// Why a store call did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The store answered with an error, or the connection failed.
    #[error("store error: {0}")]
    Failed(String),
    /// The store answers but refuses what robotsd needs of it: writes refused for memory
    /// (`OOM`, a full `maxmemory` with `noeviction`), by a replica (`READONLY`: a connection
    /// that still reaches a master demoted by a failover), or for persistence (`MISCONF`). The
    /// store is down for robotsd until it accepts writes again.
    #[error("store refuses writes: {0}")]
    Refused(String),
    /// The call took longer than its time limit.
    #[error("store call timed out")]
    Timeout,
    /// The circuit breaker is open: the call was not sent.
    #[error("store unavailable (circuit open)")]
    Unavailable,
    /// A value in the store is larger than robotsd ever writes.
    #[error("stored value too large")]
    TooLarge,
}

/// What to do with a record's body field when writing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyWrite {
    /// Store this (deflated) body.
    Set(Vec<u8>),
    /// Leave the stored body as it is (a backoff update keeps the last good copy's body).
    Keep,
    /// Remove it (no parsed copy any more).
    Remove,
}

/// What an attempt to take a fetch lease found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lease<T> {
    /// Taken, with the record as it was read in the same step: `None` when there is none.
    Taken(Option<T>),
    /// Another replica holds it.
    Held,
}

/// What a read that takes the fetch lease when nothing is stored found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Looked<T> {
    /// A record is stored: read (`None` when it cannot be), and no lease tried.
    Read(Option<T>),
    /// Nothing is stored, and this read took the fetch lease.
    Leased,
    /// Nothing is stored, and another replica holds the fetch lease.
    Held,
}

/// The store's operations, keyed by origin (`scheme://host[:port]`).
pub trait SharedStore: Send + Sync + std::fmt::Debug {
    /// The origin's record: `(version, meta, body)` fields, `None` when nothing is stored.
    /// Fields larger than `max_body_bytes` (the body) or [`record::MAX_META_BYTES`] are
    /// [`StoreError::TooLarge`] and are not transferred.
    fn load<'a>(
        &'a self,
        origin: &'a str,
        max_body_bytes: usize,
    ) -> BoxFuture<'a, Result<Option<Encoded>, StoreError>>;

    /// Writes the version and metadata, and the body as `body` says, and keeps the record for
    /// `ttl`; then releases the origin's lease if `release` (a token) still holds it, in the
    /// same step, as [`SharedStore::release`] does.
    fn save<'a>(
        &'a self,
        origin: &'a str,
        version: &'a str,
        meta: &'a [u8],
        body: &'a BodyWrite,
        ttl: Duration,
        release: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Takes the origin's fetch lease for `ttl` if nobody holds it (`SET NX PX`) and, when it
    /// took it, reads the origin's record in the same step (as [`SharedStore::load`] does, within
    /// `max_body_bytes`): the lease's previous holder stored its result before releasing it.
    fn try_lease<'a>(
        &'a self,
        origin: &'a str,
        token: &'a str,
        ttl: Duration,
        max_body_bytes: usize,
    ) -> BoxFuture<'a, Result<Lease<Encoded>, StoreError>>;

    /// Reads the origin's record as [`SharedStore::load`] does and, only when none is stored,
    /// takes the fetch lease for `ttl` in the same step, as [`SharedStore::try_lease`] would: a
    /// cold origin's foreground miss reads and leases in one round trip rather than two.
    fn load_or_lease<'a>(
        &'a self,
        origin: &'a str,
        token: &'a str,
        ttl: Duration,
        max_body_bytes: usize,
    ) -> BoxFuture<'a, Result<Looked<Encoded>, StoreError>>;

    /// Releases the lease if `token` still holds it (compare and delete).
    fn release<'a>(
        &'a self,
        origin: &'a str,
        token: &'a str,
    ) -> BoxFuture<'a, Result<(), StoreError>>;

    /// Reserves a fetch slot in a lane (docs/politeness.md; [`crate::pacing::PaceKey`]) in one
    /// atomic step on the store's own clock, so that neither concurrent replicas nor their
    /// clocks' skew can hand out two slots closer than the interval; the state is kept for
    /// `keep`.
    /// With `timetable` (the fleet lends its places: [`crate::pace_policy::Timetable`]), only
    /// a place lent to the store, on the grid of the request's period.
    fn reserve<'a>(
        &'a self,
        lane: &'a str,
        request: SlotRequest,
        keep: Duration,
        timetable: Option<Arc<Timetable>>,
    ) -> BoxFuture<'a, Result<SlotGrant, StoreError>>;

    /// Renews a replica's lease on its places ([`crate::pace_policy::lend`]) on the store's
    /// clock, kept for `keep`, in one atomic step: what it did, and the fleet's leases after it
    /// (those of indices below `size`).
    fn lend<'a>(
        &'a self,
        request: &'a LendRequest,
        size: u32,
        keep: Duration,
    ) -> BoxFuture<'a, Result<LendAnswer, StoreError>>;

    /// Takes in what `origin` answered a worker, into its lane, in one atomic step on the
    /// store's clock; the state after it, kept for `keep`. Only when the store holds something
    /// of it (the lane's pacing state, or the origin's robots.txt record: some replica checked
    /// it): `None`, and nothing written, otherwise, so that reports about made-up origins cannot
    /// fill the store.
    fn signal<'a>(
        &'a self,
        lane: &'a str,
        origin: &'a str,
        signal: Signal,
        keep: Duration,
    ) -> BoxFuture<'a, Result<Option<PaceReading>, StoreError>>;

    /// A lane's pacing state, `None` when none is kept.
    fn pace<'a>(&'a self, lane: &'a str) -> BoxFuture<'a, Result<Option<PaceReading>, StoreError>>;

    /// The cheapest call that shows the store answers and accepts writes (a short-lived probe
    /// key): the background probe of a store believed down. A `PING` would close the breaker
    /// on a Redis that answers but refuses every write.
    fn ping(&self) -> BoxFuture<'_, Result<(), StoreError>>;
}

/// What a renewal of a replica's lease did, with the fleet's leases after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LendAnswer {
    /// What it did.
    pub lending: Lending,
    /// Every lease the store keeps, in index order.
    pub table: Vec<Lent>,
}

/// An origin's pacing state as a store read it, with the store's own now (milliseconds since
/// the epoch), against which its times mean something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaceReading {
    /// The state.
    pub state: PaceState,
    /// The store's now.
    pub now: u64,
}

/// A store operation, for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreOp {
    /// [`SharedStore::load`], and [`SharedStore::load_or_lease`].
    Load,
    /// [`SharedStore::save`].
    Save,
    /// [`SharedStore::try_lease`].
    Lease,
    /// [`SharedStore::release`].
    Release,
    /// [`SharedStore::reserve`].
    Reserve,
    /// [`SharedStore::signal`].
    Signal,
    /// [`SharedStore::pace`].
    Pace,
    /// [`SharedStore::ping`], the background probe while the store is down.
    Probe,
    /// [`SharedStore::lend`].
    Lend,
}

impl StoreOp {
    /// Every operation, in label order.
    pub const ALL: [StoreOp; 9] = [
        StoreOp::Load,
        StoreOp::Save,
        StoreOp::Lease,
        StoreOp::Release,
        StoreOp::Reserve,
        StoreOp::Signal,
        StoreOp::Pace,
        StoreOp::Probe,
        StoreOp::Lend,
    ];

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreOp::Load => "load",
            StoreOp::Save => "save",
            StoreOp::Lease => "lease",
            StoreOp::Release => "release",
            StoreOp::Reserve => "reserve",
            StoreOp::Signal => "signal",
            StoreOp::Pace => "pace",
            StoreOp::Probe => "probe",
            StoreOp::Lend => "lend",
        }
    }
}

/// How a store call ended, for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoreOutcome {
    /// It completed.
    Ok,
    /// The store failed it.
    Error,
    /// It ran out of time.
    Timeout,
    /// The breaker was open: not sent.
    Skipped,
}

impl StoreOutcome {
    /// Every outcome, in label order.
    pub const ALL: [StoreOutcome; 4] = [
        StoreOutcome::Ok,
        StoreOutcome::Error,
        StoreOutcome::Timeout,
        StoreOutcome::Skipped,
    ];

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            StoreOutcome::Ok => "ok",
            StoreOutcome::Error => "error",
            StoreOutcome::Timeout => "timeout",
            StoreOutcome::Skipped => "skipped",
        }
    }
}

/// Told of every store call: its operation, outcome and duration. The metrics layer installs
/// one.
pub type StoreObserver = Arc<dyn Fn(StoreOp, StoreOutcome, Duration) + Send + Sync>;

/// A stored record decoded, or `None`, said in the log, when it cannot be used.
fn decoded(
    origin: &str,
    encoded: &Encoded,
    max_body_bytes: usize,
) -> Option<(Record, Option<Vec<u8>>)> {
    match Record::decode(encoded, max_body_bytes) {
        Ok(decoded) => Some(decoded),
        Err(error) => {
            tracing::warn!(origin, %error, "ignoring an unreadable record in the shared store");
            None
        }
    }
}

/// Store settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreSettings {
    /// Time limit of every call (250 ms): a store slower than this is treated as down.
    pub timeout: Duration,
    /// Failures in a row that open the circuit breaker (3).
    pub breaker_threshold: u32,
    /// How long the breaker stays open before one probe (5 s).
    pub breaker_cooldown: Duration,
}

impl Default for StoreSettings {
    fn default() -> Self {
        StoreSettings {
            timeout: Duration::from_millis(250),
            breaker_threshold: 3,
            breaker_cooldown: Duration::from_secs(5),
        }
    }
}

/// A [`SharedStore`] behind a time limit and a circuit breaker, observed. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    inner: Arc<dyn SharedStore>,
    breaker: Arc<Mutex<Breaker>>,
    settings: StoreSettings,
    clock: Arc<dyn Clock>,
    observer: Option<StoreObserver>,
    /// Whether the store answered the last call that reached it (or the probe): false from the
    /// first call that fails, not only once the breaker opens, so that the first answer decided
    /// without the store shows at once (issue 57).
    answering: Arc<AtomicBool>,
    /// Whether the background probe runs ([`recovery`]): at most one per store.
    recovering: Arc<AtomicBool>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("inner", &self.inner)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// `inner` behind the limits of `settings`, on `clock`.
    pub fn new(
        inner: Arc<dyn SharedStore>,
        settings: StoreSettings,
        clock: Arc<dyn Clock>,
    ) -> Store {
        Store {
            inner,
            breaker: Arc::new(Mutex::new(Breaker::new(
                settings.breaker_threshold,
                settings.breaker_cooldown,
            ))),
            settings,
            clock,
            observer: None,
            answering: Arc::new(AtomicBool::new(true)),
            recovering: Arc::default(),
        }
    }

    /// The same store, telling `observer` of every call.
    pub fn with_observer(mut self, observer: StoreObserver) -> Store {
        self.observer = Some(observer);
        self
    }

    /// Whether the store answered the last call that reached it: `false` from the first call
    /// that failed (an error, its time limit, a refusal) until a call or the background probe
    /// succeeds. This is what `robotsd_store_up` shows and what decides whether a replica's
    /// answers are its own: the breaker only spares later calls the wait ([`Store::breaker`]).
    pub fn is_up(&self) -> bool {
        self.answering.load(Ordering::Acquire)
    }

    /// Where the circuit breaker stands.
    pub fn breaker(&self) -> BreakerState {
        self.lock_breaker().state()
    }

    /// Records whether the store answered a call of `op` (`error` when it did not), and says so
    /// in the log when that changes: once when the first call fails, once when one succeeds
    /// again.
    fn answered(&self, op: StoreOp, error: Option<&StoreError>) {
        let up = error.is_none();
        if self.answering.swap(up, Ordering::AcqRel) == up {
            return;
        }
        match error {
            Some(error) => {
                tracing::warn!(
                    op = op.as_str(),
                    %error,
                    "the shared store is down for robotsd: this replica answers alone (fetching, \
                     caching and pacing by itself) until the store answers and accepts writes again"
                );
                self.recover_in_background();
            }
            None => tracing::info!(
                op = op.as_str(),
                "the shared store answers again: sharing with the fleet"
            ),
        }
    }

    fn lock_breaker(&self) -> std::sync::MutexGuard<'_, Breaker> {
        // The breaker's updates are single assignments: a poisoned lock is still consistent.
        self.breaker.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs one call under the breaker and the time limit.
    async fn call<T>(
        &self,
        op: StoreOp,
        call: BoxFuture<'_, Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let started = tokio::time::Instant::now();
        if !self.lock_breaker().allow(self.clock.now()) {
            self.observe(op, StoreOutcome::Skipped, started.elapsed());
            return Err(StoreError::Unavailable);
        }
        let result = match tokio::time::timeout(self.settings.timeout, call).await {
            Ok(result) => result,
            Err(_) => Err(StoreError::Timeout),
        };
        let outcome = match &result {
            Ok(_) => StoreOutcome::Ok,
            Err(StoreError::Timeout) => StoreOutcome::Timeout,
            Err(_) => StoreOutcome::Error,
        };
        let opened = {
            let mut breaker = self.lock_breaker();
            let was_closed = breaker.is_closed();
            match &result {
                // An oversized value is the store's content, not its health.
                Ok(_) | Err(StoreError::TooLarge) => breaker.success(),
                // A store that refuses writes is down at once: the reads that still succeed
                // between the refused writes would otherwise keep the breaker closed while every
                // slot and record is kept apart from the fleet.
                Err(StoreError::Refused(_)) => breaker.trip(self.clock.now()),
                Err(_) => breaker.failure(self.clock.now()),
            }
            was_closed && !breaker.is_closed()
        };
        match &result {
            Ok(_) | Err(StoreError::TooLarge) => self.answered(op, None),
            Err(error) => self.answered(op, Some(error)),
        }
        if opened {
            tracing::info!(
                op = op.as_str(),
                cooldown_ms =
                    u64::try_from(self.settings.breaker_cooldown.as_millis()).unwrap_or(u64::MAX),
                "the shared store's circuit breaker opened: calls skip it, without waiting, \
                 until a probe succeeds"
            );
            self.recover_in_background();
        }
        self.observe(op, outcome, started.elapsed());
        result
    }

    fn observe(&self, op: StoreOp, outcome: StoreOutcome, took: Duration) {
        if let Some(observer) = &self.observer {
            observer(op, outcome, took);
        }
    }

    /// The origin's stored record, decoded; `None` when there is none or it cannot be used
    /// (another schema, garbage, an inconsistent body): such a record is skipped, and the next
    /// write replaces it.
    pub async fn load(
        &self,
        origin: &str,
        max_body_bytes: usize,
    ) -> Result<Option<(Record, Option<Vec<u8>>)>, StoreError> {
        let encoded = self
            .call(StoreOp::Load, self.inner.load(origin, max_body_bytes))
            .await?;
        Ok(encoded.and_then(|encoded| decoded(origin, &encoded, max_body_bytes)))
    }

    /// Writes `record`, with `body` as it says, kept for `ttl`; and releases the origin's lease
    /// if `release` (a token) holds it.
    pub async fn save(
        &self,
        origin: &str,
        record: &Record,
        body: &BodyWrite,
        ttl: Duration,
        release: Option<&str>,
    ) -> Result<(), StoreError> {
        let encoded = record.encode(None);
        self.call(
            StoreOp::Save,
            self.inner
                .save(origin, &encoded.version, &encoded.meta, body, ttl, release),
        )
        .await
    }

    /// Takes the origin's fetch lease for `ttl` if it is free, with the record it then holds,
    /// decoded as [`Store::load`] decodes it.
    pub async fn try_lease(
        &self,
        origin: &str,
        token: &str,
        ttl: Duration,
        max_body_bytes: usize,
    ) -> Result<Lease<(Record, Option<Vec<u8>>)>, StoreError> {
        let lease = self
            .call(
                StoreOp::Lease,
                self.inner.try_lease(origin, token, ttl, max_body_bytes),
            )
            .await?;
        Ok(match lease {
            Lease::Taken(encoded) => {
                Lease::Taken(encoded.and_then(|encoded| decoded(origin, &encoded, max_body_bytes)))
            }
            Lease::Held => Lease::Held,
        })
    }

    /// Reads the origin's record, and takes its lease with `token` if none is stored. Counted
    /// as a [`StoreOp::Load`]: it is the read of a foreground miss.
    pub async fn load_or_lease(
        &self,
        origin: &str,
        token: &str,
        ttl: Duration,
        max_body_bytes: usize,
    ) -> Result<Looked<(Record, Option<Vec<u8>>)>, StoreError> {
        let looked = self
            .call(
                StoreOp::Load,
                self.inner.load_or_lease(origin, token, ttl, max_body_bytes),
            )
            .await?;
        Ok(match looked {
            Looked::Read(encoded) => {
                Looked::Read(encoded.and_then(|encoded| decoded(origin, &encoded, max_body_bytes)))
            }
            Looked::Leased => Looked::Leased,
            Looked::Held => Looked::Held,
        })
    }

    /// Releases the lease if `token` holds it.
    pub async fn release(&self, origin: &str, token: &str) -> Result<(), StoreError> {
        self.call(StoreOp::Release, self.inner.release(origin, token))
            .await
    }

    /// Reserves a fetch slot in a lane on the store's clock, among the places lent in
    /// `timetable` when the fleet lends them.
    pub async fn reserve(
        &self,
        lane: &str,
        request: SlotRequest,
        keep: Duration,
        timetable: Option<Arc<Timetable>>,
    ) -> Result<SlotGrant, StoreError> {
        self.call(
            StoreOp::Reserve,
            self.inner.reserve(lane, request, keep, timetable),
        )
        .await
    }

    /// Renews a replica's lease on its places.
    pub async fn lend(
        &self,
        request: &LendRequest,
        size: u32,
        keep: Duration,
    ) -> Result<LendAnswer, StoreError> {
        self.call(StoreOp::Lend, self.inner.lend(request, size, keep))
            .await
    }

    /// Takes in what `origin` answered a worker into its lane, if the store holds anything of
    /// either.
    pub async fn signal(
        &self,
        lane: &str,
        origin: &str,
        signal: Signal,
        keep: Duration,
    ) -> Result<Option<PaceReading>, StoreError> {
        self.call(
            StoreOp::Signal,
            self.inner.signal(lane, origin, signal, keep),
        )
        .await
    }

    /// A lane's pacing state.
    pub async fn pace(&self, lane: &str) -> Result<Option<PaceReading>, StoreError> {
        self.call(StoreOp::Pace, self.inner.pace(lane)).await
    }
}
