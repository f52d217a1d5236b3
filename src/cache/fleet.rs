//! The cache's side of the shared store (docs/fleet.md): an origin's state written to the store
//! after each fetch and read from it when this replica knows nothing newer, and the fleet-wide
//! lease that lets one replica fetch while the others wait for its result.
//!
//! The store is never needed to answer. Every call is bounded by the store's time limit and
//! breaker ([`crate::store::Store`]); when it fails, this replica does what a lone replica does:
//! it answers from its own cache and fetches itself, still one fetch at a time per origin.

use std::net::IpAddr;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use url::Url;

use super::policy::{Backoff, Copy, OriginState, PolicyConfig, Rules};
use super::prior::{Prior, new_token};
use super::slots::Slot;
use super::{Detail, FetchedBody, KeptBody, OriginCache, Remembered, state_weight};
use crate::clock::Timestamp;
use crate::fetch::{FetchMeta, NoRobotsReason, Validators};
use crate::origin::Origin;
use crate::store::record::{
    StoredBackoff, StoredChallenge, StoredCopy, StoredFetch, from_ms, to_ms,
};
use crate::store::{BodyWrite, Lease, Record, Store};

/// How the cache uses the shared store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetConfig {
    /// How long a fetch lease lasts: a replica that dies holding one delays the others by at
    /// most this. At least the fetch's total time limit.
    pub lease_ttl: Duration,
    /// How often a replica waiting for another's fetch looks for its result.
    pub poll_interval: Duration,
    /// How long a fresh entry of this replica may go without being compared with the store: the
    /// bound on how stale this replica's answers can be against what another replica stored.
    pub sync_interval: Duration,
}

impl Default for FleetConfig {
    fn default() -> Self {
        FleetConfig {
            lease_ttl: Duration::from_secs(15),
            poll_interval: Duration::from_millis(50),
            sync_interval: Duration::from_secs(60),
        }
    }
}

/// The store, as the cache uses it.
#[derive(Debug, Clone)]
pub(crate) struct Fleet {
    pub(crate) store: Store,
    pub(crate) config: FleetConfig,
    /// Body bytes accepted from the store (the fetch limit).
    pub(crate) max_body_bytes: usize,
}

fn stored_fetch(meta: &FetchMeta) -> StoredFetch {
    StoredFetch {
        status: meta.status,
        bytes: meta.bytes,
        truncated: meta.truncated,
        final_url: meta.final_url.as_str().to_owned(),
        redirects: meta.redirects,
        fetched_at_ms: to_ms(meta.fetched_at),
        duration_ms: u64::try_from(meta.duration.as_millis()).unwrap_or(u64::MAX),
        address: meta.address,
        etag: meta.validators.etag.as_deref().map(str::to_owned),
        last_modified: meta.validators.last_modified.as_deref().map(str::to_owned),
        challenge: meta.challenge.map(|c| StoredChallenge {
            vendor: c.vendor.to_owned(),
            marker: c.marker.to_owned(),
        }),
    }
}

fn fetch_meta(stored: &StoredFetch) -> Option<FetchMeta> {
    Some(FetchMeta {
        status: stored.status,
        bytes: stored.bytes,
        truncated: stored.truncated,
        final_url: Url::parse(&stored.final_url).ok()?,
        redirects: stored.redirects,
        fetched_at: from_ms(stored.fetched_at_ms),
        duration: Duration::from_millis(stored.duration_ms),
        address: stored.address,
        // Bounded as a fetch bounds them: another replica, or anyone, may have written these.
        validators: Validators::of(
            stored.etag.as_deref().map(str::as_bytes),
            stored.last_modified.as_deref().map(str::as_bytes),
        ),
        challenge: stored
            .challenge
            .as_ref()
            .and_then(|c| crate::fetch::challenge::known(&c.vendor, &c.marker)),
    })
}

fn no_robots_name(reason: NoRobotsReason) -> String {
    match reason {
        NoRobotsReason::Status(code) => format!("status:{code}"),
        NoRobotsReason::RedirectLimit => "redirect_limit".into(),
        NoRobotsReason::RedirectLoop => "redirect_loop".into(),
        NoRobotsReason::BadRedirect => "bad_redirect".into(),
    }
}

fn no_robots_reason(name: &str) -> Option<NoRobotsReason> {
    Some(match name {
        "redirect_limit" => NoRobotsReason::RedirectLimit,
        "redirect_loop" => NoRobotsReason::RedirectLoop,
        "bad_redirect" => NoRobotsReason::BadRedirect,
        _ => NoRobotsReason::Status(name.strip_prefix("status:")?.parse().ok()?),
    })
}

/// When the state last took in a fetch's outcome: which of two states is newer.
pub(crate) fn last_change(state: &OriginState<Remembered>) -> Option<Timestamp> {
    let copy = state.copy.as_ref().map(|c| c.fetched_at);
    let backoff = state
        .backoff
        .as_ref()
        .map(|b| Timestamp::from_system(b.last.meta.fetched_at) + b.last.meta.duration);
    copy.max(backoff)
}

/// The record of a state; refusals are this replica's own (they are short and name a
/// destination this replica refused).
pub(crate) fn export(state: &OriginState<Remembered>) -> Record {
    Record {
        copy: state.copy.as_ref().map(|copy| StoredCopy {
            fetch: stored_fetch(&copy.meta.meta),
            no_robots: match copy.meta.detail {
                Detail::NoRobots(reason) => Some(no_robots_name(reason)),
                _ => None,
            },
            kept_at_ms: copy.fetched_at.unix_millis(),
            expires_at_ms: copy.expires_at.unix_millis(),
        }),
        backoff: state.backoff.as_ref().map(|backoff| StoredBackoff {
            since_ms: backoff.since.unix_millis(),
            failures: backoff.failures,
            next_retry_ms: backoff.next_retry.unix_millis(),
            last: stored_fetch(&backoff.last.meta),
            reason: match &backoff.last.detail {
                Detail::Failed(reason) => reason.clone(),
                _ => String::new(),
            },
        }),
    }
}

/// The state a record describes, with its body parsed; `None` when it cannot be used (a URL
/// that does not parse, an unknown reason).
pub(crate) fn import(record: &Record, body: Option<&[u8]>) -> Option<OriginState<Remembered>> {
    let copy = match &record.copy {
        None => None,
        Some(stored) => {
            let meta = fetch_meta(&stored.fetch)?;
            let (rules, detail) = match (&stored.no_robots, body) {
                (Some(name), _) => (Rules::NoRobots, Detail::NoRobots(no_robots_reason(name)?)),
                (None, Some(body)) => (
                    Rules::Parsed(Arc::new(crate::fetch::parse_weighed(body))),
                    Detail::Parsed(KeptBody::keep(body)),
                ),
                (None, None) => return None,
            };
            Some(Copy {
                rules,
                fetched_at: Timestamp::from_unix_millis(stored.kept_at_ms),
                expires_at: Timestamp::from_unix_millis(stored.expires_at_ms),
                meta: Remembered::new(meta, detail),
            })
        }
    };
    let backoff = match &record.backoff {
        None => None,
        Some(stored) => Some(Backoff {
            since: Timestamp::from_unix_millis(stored.since_ms),
            failures: stored.failures,
            next_retry: Timestamp::from_unix_millis(stored.next_retry_ms),
            last: Remembered::new(
                fetch_meta(&stored.last)?,
                Detail::Failed(stored.reason.clone()),
            ),
        }),
    };
    Some(OriginState {
        last_fetch: copy.as_ref().map(|c| c.fetched_at),
        copy,
        backoff,
        refusal: None,
    })
}

/// How long the store keeps a record: long enough for the last good copy to serve the whole
/// §5 window of a backoff that starts when the copy expires.
pub(crate) fn record_ttl(policy: &PolicyConfig) -> Duration {
    policy.max_lifetime + policy.last_copy_window
}

/// What a fetch's outcome does to the stored body: a new body is stored as the copy keeps it,
/// deflated once for both.
pub(crate) fn body_write(body: Option<&KeptBody>, parsed: bool) -> BodyWrite {
    match body {
        Some(body) => BodyWrite::Set(body.deflated().to_vec()),
        // A failure keeps the last good copy's body; "no robots.txt" has none.
        None if parsed => BodyWrite::Keep,
        None => BodyWrite::Remove,
    }
}

impl OriginCache {
    /// Where `origin`'s server answered the last fetch of its robots.txt that got an answer
    /// (the failed fetch's in backoff, else the copy's), for lanes by address: from this
    /// replica's state, else from the fleet's record, so that a report reaching a replica that
    /// never checked the origin lands in the lane the others reserve in. Nothing is fetched,
    /// and nothing is kept here.
    pub async fn address(&self, origin: &Origin) -> Option<IpAddr> {
        if let Some(slot) = self.slots.get(origin.key()) {
            let state = slot.lock();
            if state.copy.is_some() || state.backoff.is_some() {
                return state
                    .backoff
                    .as_ref()
                    .and_then(|backoff| backoff.last.meta.address)
                    .or_else(|| state.copy.as_ref().and_then(|copy| copy.meta.meta.address));
            }
        }
        let fleet = self.fleet.as_ref()?;
        let (record, _) = fleet
            .store
            .load(origin.key(), fleet.max_body_bytes)
            .await
            .ok()??;
        record
            .backoff
            .as_ref()
            .and_then(|backoff| backoff.last.address)
            .or_else(|| record.copy.as_ref().and_then(|copy| copy.fetch.address))
    }

    /// Takes the store's state for the origin if it is newer than this replica's: that state
    /// when it did. Without a store, or when the store fails, nothing changes.
    pub(super) async fn pull(
        &self,
        origin: &Origin,
        slot: &Arc<Slot>,
    ) -> Option<OriginState<Remembered>> {
        let loaded = self.load_record(origin, slot).await?;
        self.take_in(slot, loaded)
    }

    /// The store's record of the origin, read now (and the slot marked as compared with it);
    /// `None` without a store, without a record, or when the store fails.
    async fn load_record(&self, origin: &Origin, slot: &Slot) -> Option<(Record, Option<Vec<u8>>)> {
        let fleet = self.fleet.as_ref()?;
        slot.synced_ms
            .store(self.clock.now().unix_millis(), Ordering::Relaxed);
        fleet
            .store
            .load(origin.key(), fleet.max_body_bytes)
            .await
            .ok()
            .flatten()
    }

    /// For a check whose copy the full cache dropped: the store's state when it holds a copy,
    /// taken in if it is newer than this replica's, and returned either way unless this replica
    /// knows of a backoff since. Concurrent checks of the origin each read the store: the first
    /// takes the record in, the full cache may drop it again at once, and the others find the
    /// record no newer than what the first took, so they would have nothing to answer from but
    /// `cache-full`, though the fleet holds the copy.
    pub(super) async fn pull_copy(
        &self,
        origin: &Origin,
        slot: &Arc<Slot>,
    ) -> Option<OriginState<Remembered>> {
        let (record, body) = self.load_record(origin, slot).await?;
        let mut state = import(&record, body.as_deref())?;
        state.copy.as_ref()?;
        if !self.adopt(slot, &mut state) && slot.lock().backoff.is_some() {
            return None;
        }
        Some(state)
    }

    /// Takes in a record read from the store if it is newer than this replica's state: the
    /// state then, or `None` when it was not taken.
    pub(super) fn take_in(
        &self,
        slot: &Arc<Slot>,
        (record, body): (Record, Option<Vec<u8>>),
    ) -> Option<OriginState<Remembered>> {
        // Parsed before the lock is taken: checks of this origin go on meanwhile.
        let mut state = import(&record, body.as_deref())?;
        self.adopt(slot, &mut state).then_some(state)
    }

    /// Makes `state` the slot's if it is newer than the slot's own, keeping the later of the two
    /// last fetches; whether it did.
    fn adopt(&self, slot: &Arc<Slot>, state: &mut OriginState<Remembered>) -> bool {
        let held_bytes = state_weight(state);
        {
            let mut local = slot.lock();
            if last_change(state) <= last_change(&local) {
                return false;
            }
            state.last_fetch = state.last_fetch.max(local.last_fetch);
            *local = state.clone();
        }
        self.slots.settle(slot, held_bytes);
        true
    }

    /// Writes the slot's state to the store after this replica's fetch (best effort: a store
    /// that fails only means the others fetch for themselves), and releases `lease` (a token)
    /// in the same call when the fetch was made under it.
    /// `taken_in` is the state the fetch left, as it was before the cache decided whether to
    /// keep its copy: a copy dropped for memory at once is still stored for the fleet.
    pub(super) async fn push(
        &self,
        origin: &Origin,
        slot: &Arc<Slot>,
        (fetched, taken_in): (FetchedBody, OriginState<Remembered>),
        fleet: &Fleet,
        lease: Option<&str>,
    ) -> OriginState<Remembered> {
        let body = match fetched {
            FetchedBody::Refused => {
                // A refusal is this replica's own: nothing is stored, the lease only let go.
                if let Some(token) = lease {
                    let _ = fleet.store.release(origin.key(), token).await;
                }
                return taken_in;
            }
            FetchedBody::Parsed(body) => Some(body),
            FetchedBody::None => None,
        };
        let parsed_copy = taken_in
            .copy
            .as_ref()
            .is_some_and(|c| matches!(c.rules, Rules::Parsed(_)));
        let record = export(&taken_in);
        let write = body_write(body.as_ref(), parsed_copy);
        let ttl = record_ttl(&self.policy);
        if fleet
            .store
            .save(origin.key(), &record, &write, ttl, lease)
            .await
            .is_ok()
        {
            slot.synced_ms
                .store(self.clock.now().unix_millis(), Ordering::Relaxed);
        }
        taken_in
    }

    /// Whether the slot's state calls for a fetch now (nothing known, expired, a retry due).
    pub(super) fn fetch_due(&self, slot: &Slot) -> bool {
        slot.lock().fetch_due(self.clock.now(), &self.policy)
    }

    /// The fleet-wide single flight: the replica that takes the origin's lease fetches and
    /// stores the result; the others wait for that result, and fetch themselves only when the
    /// lease expires without one (its holder died) or the store fails. The caller holds the
    /// slot's `fetching` lock, so this replica waits for the store at most once per origin.
    pub(super) async fn fetch_shared(
        &self,
        origin: &Origin,
        slot: &Arc<Slot>,
        fleet: &Fleet,
        prior: Prior,
    ) -> Option<OriginState<Remembered>> {
        // Another replica may have fetched since this one looked (a background refresh has not
        // looked at the store yet; a foreground miss just did).
        match prior {
            Prior::Unread => {
                if let Some(taken_in) = self.pull(origin, slot).await
                    && !self.fetch_due(slot)
                {
                    return Some(taken_in);
                }
            }
            Prior::Read => {}
            Prior::Held => {
                if let ControlFlow::Break(taken_in) =
                    self.wait_for_holder(origin, slot, fleet).await
                {
                    return taken_in;
                }
            }
            // The read found nothing stored and took the lease: there is no result to wait for.
            Prior::Leased(token) => {
                let fetched = self.fetch_now(origin, slot).await;
                return Some(self.push(origin, slot, fetched, fleet, Some(&token)).await);
            }
        }
        let key = origin.key();
        let token = new_token();
        // Long enough for a holder that died just after taking the lease (its lease runs out)
        // and then for the replica that takes it over to fetch (within a lease of its own):
        // waiting only one lease from here made every waiter that started early fetch too.
        let deadline = tokio::time::Instant::now() + 2 * fleet.config.lease_ttl;
        let mut waited = false;
        loop {
            match fleet
                .store
                .try_lease(key, &token, fleet.config.lease_ttl, fleet.max_body_bytes)
                .await
            {
                Ok(Lease::Taken(record)) => {
                    self.stats.leases_taken.fetch_add(1, Ordering::Relaxed);
                    if waited {
                        self.stats.leases_expired.fetch_add(1, Ordering::Relaxed);
                    }
                    // The previous holder stored its result before releasing the lease: the
                    // record came with it.
                    slot.synced_ms
                        .store(self.clock.now().unix_millis(), Ordering::Relaxed);
                    let pulled = record.and_then(|record| self.take_in(slot, record));
                    let taken_in = match pulled {
                        Some(pulled) if !self.fetch_due(slot) => {
                            // If this fails, the lease expires by itself.
                            let _ = fleet.store.release(key, &token).await;
                            pulled
                        }
                        _ => {
                            let fetched = self.fetch_now(origin, slot).await;
                            self.push(origin, slot, fetched, fleet, Some(&token)).await
                        }
                    };
                    return Some(taken_in);
                }
                Ok(Lease::Held) if tokio::time::Instant::now() < deadline => {
                    waited = true;
                    tokio::time::sleep(fleet.config.poll_interval).await;
                    if let Some(taken_in) = self.pull(origin, slot).await
                        && !self.fetch_due(slot)
                    {
                        self.stats.leases_waited.fetch_add(1, Ordering::Relaxed);
                        return Some(taken_in);
                    }
                }
                Ok(Lease::Held) | Err(_) => break,
            }
        }
        if waited {
            self.stats.leases_expired.fetch_add(1, Ordering::Relaxed);
        }
        let fetched = self.fetch_now(origin, slot).await;
        Some(self.push(origin, slot, fetched, fleet, None).await)
    }

    /// Compares a fresh entry with the store once per `sync_interval`, in the background: the
    /// bound on how long this replica can miss what another stored (a new copy, a backoff).
    pub(super) fn sync_in_background(&self, origin: &Origin, slot: &Arc<Slot>, now: Timestamp) {
        let Some(fleet) = &self.fleet else {
            return;
        };
        let now = now.unix_millis();
        let synced = slot.synced_ms.load(Ordering::Relaxed);
        let interval = u64::try_from(fleet.config.sync_interval.as_millis()).unwrap_or(u64::MAX);
        if now.saturating_sub(synced) < interval {
            return;
        }
        let Ok(fetching) = Arc::clone(&slot.fetching).try_lock_owned() else {
            return;
        };
        slot.synced_ms.store(now, Ordering::Relaxed);
        let (cache, origin, slot) = (self.clone(), origin.clone(), Arc::clone(slot));
        self.fetch_runtime.spawn(async move {
            let _fetching = fetching;
            cache.pull(&origin, &slot).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;
    use crate::cache::policy::FetchResult;

    fn meta() -> Remembered {
        Remembered::new(
            FetchMeta {
                status: Some(200),
                bytes: 33,
                truncated: false,
                final_url: Url::parse("https://example.com/robots.txt").unwrap(),
                redirects: 1,
                fetched_at: SystemTime::UNIX_EPOCH + Duration::from_millis(1_795_000_000_000),
                duration: Duration::from_millis(12),
                address: Some([192, 0, 2, 7].into()),
                validators: Default::default(),
                challenge: None,
            },
            Detail::Parsed(KeptBody::keep(BODY)),
        )
    }

    const BODY: &[u8] = b"User-agent: *\nDisallow: /private\n";

    #[test]
    fn a_challenge_survives_the_store_and_only_a_known_one_is_read() {
        let mut fetched = (*meta().meta).clone();
        fetched.challenge = crate::fetch::challenge::known("cloudflare", "cf-mitigated: challenge");
        let mut stored = stored_fetch(&fetched);
        assert_eq!(fetch_meta(&stored).unwrap().challenge, fetched.challenge);
        // What another writer put there and robotsd does not know is dropped.
        stored.challenge = Some(StoredChallenge {
            vendor: "cloudflare".into(),
            marker: "<script>".into(),
        });
        assert_eq!(fetch_meta(&stored).unwrap().challenge, None);
        // A record written before challenges were kept reads as none.
        let json = serde_json::to_value(stored_fetch(&(*meta().meta).clone())).unwrap();
        assert!(json.get("challenge").is_none(), "{json}");
    }

    #[test]
    fn a_state_survives_the_store() {
        let config = PolicyConfig::default();
        let t0 = Timestamp::from_unix(Duration::from_millis(1_795_000_000_100));
        let mut state = OriginState::default();
        state.apply(
            FetchResult::Success {
                rules: Rules::Parsed(Arc::new(robotsd_engine::RobotsTxt::parse(BODY))),
                max_age: None,
                meta: meta(),
            },
            t0,
            0.0,
            &config,
        );
        let mut failed = meta();
        failed.detail = Detail::Failed("HTTP status 503".into());
        state.apply(
            FetchResult::Unreachable {
                retry_after: None,
                short: true,
                meta: failed,
            },
            t0 + Duration::from_secs(90_000),
            0.5,
            &config,
        );
        let record = export(&state);
        let back = import(&record, Some(BODY)).expect("importable");
        assert_eq!(export(&back), record);
        assert_eq!(last_change(&back), last_change(&state));
        let rules = &back.copy.as_ref().unwrap().rules;
        assert!(matches!(rules, Rules::Parsed(r) if !r.check(&["bot"], "/private").allowed));
    }

    #[test]
    fn no_robots_reasons_round_trip() {
        for reason in [
            NoRobotsReason::Status(404),
            NoRobotsReason::RedirectLimit,
            NoRobotsReason::RedirectLoop,
            NoRobotsReason::BadRedirect,
        ] {
            assert_eq!(no_robots_reason(&no_robots_name(reason)), Some(reason));
        }
        assert_eq!(no_robots_reason("status:x"), None);
        assert_eq!(no_robots_reason("whatever"), None);
    }
}
