//! The fleet's fetch lease as a foreground miss meets it (docs/fleet.md). A miss reads the store
//! before it fetches, since another replica may have fetched already; when nothing is stored
//! (a cold origin, the common miss of a crawl frontier), that same read takes the lease
//! ([`crate::store::Store::load_or_lease`]), so the miss goes to the store twice (the read, then
//! the write that releases the lease) rather than three times.

use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::OriginCache;
use super::fleet::Fleet;
use super::policy::OriginState;
use super::prior::new_token;
use super::remembered::Remembered;
use super::slots::Slot;
use crate::fetch_runtime::FetchRuntime;
use crate::origin::Origin;
use crate::store::{Looked, Store};

/// What a foreground miss found in the store.
#[derive(Debug)]
pub(super) enum Look {
    /// A record newer than this replica's state, taken in.
    Pulled(Box<OriginState<Remembered>>),
    /// Nothing stored, and this replica took the fetch lease with this token.
    Leased(String),
    /// Nothing stored, and another replica holds the fetch lease: it is fetching.
    Held,
    /// Nothing to answer from: no store, a record no newer than this replica's, or a failure.
    /// The fetch takes the lease as before.
    Nothing,
}

impl OriginCache {
    /// Reads the origin's record, taking the fleet's fetch lease in the same call when none is
    /// stored. The slot is marked as compared with the store.
    pub(super) async fn look(&self, origin: &Origin, slot: &Arc<Slot>) -> Look {
        let Some(fleet) = self.fleet.as_ref() else {
            return Look::Nothing;
        };
        slot.synced_ms
            .store(self.clock.now().unix_millis(), Ordering::Relaxed);
        let pending = PendingLease {
            store: fleet.store.clone(),
            runtime: self.fetch_runtime.clone(),
            origin: origin.key().to_owned(),
            token: Some(new_token()),
        };
        let looked = fleet
            .store
            .load_or_lease(
                origin.key(),
                pending.token(),
                fleet.config.lease_ttl,
                fleet.max_body_bytes,
            )
            .await;
        match looked {
            Ok(Looked::Read(record)) => {
                pending.settle();
                record
                    .and_then(|record| self.take_in(slot, record))
                    .map_or(Look::Nothing, |state| Look::Pulled(Box::new(state)))
            }
            Ok(Looked::Leased) => {
                self.stats.leases_taken.fetch_add(1, Ordering::Relaxed);
                Look::Leased(pending.settle())
            }
            Ok(Looked::Held) => {
                pending.settle();
                Look::Held
            }
            // The call may have taken the lease before it failed (a reply too late): `pending`
            // releases it as it drops.
            Err(_) => Look::Nothing,
        }
    }

    /// For a foreground miss whose read found nothing stored and the lease held: waits for the
    /// holder's result with one call a poll ([`crate::store::Store::load_or_lease`]), which
    /// reads the result once it is stored and takes the lease over if it expires without one
    /// (its holder died). `Break` with the state taken in when done; `Continue` when a record
    /// came that answers nothing (the lease's loop then goes on as for any miss).
    pub(super) async fn wait_for_holder(
        &self,
        origin: &Origin,
        slot: &Arc<Slot>,
        fleet: &Fleet,
    ) -> ControlFlow<Option<OriginState<Remembered>>> {
        let key = origin.key();
        let ttl = fleet.config.lease_ttl;
        // As long as the lease's loop waits: a dead holder's lease, then a fetch.
        let deadline = tokio::time::Instant::now() + 2 * ttl;
        let mut token = new_token();
        while tokio::time::Instant::now() < deadline {
            tokio::time::sleep(fleet.config.poll_interval).await;
            token = new_token();
            let looked = fleet
                .store
                .load_or_lease(key, &token, ttl, fleet.max_body_bytes)
                .await;
            match looked {
                Ok(Looked::Held) => continue,
                Ok(Looked::Read(record)) => {
                    slot.synced_ms
                        .store(self.clock.now().unix_millis(), Ordering::Relaxed);
                    if let Some(taken_in) = record.and_then(|record| self.take_in(slot, record))
                        && !self.fetch_due(slot)
                    {
                        self.stats.leases_waited.fetch_add(1, Ordering::Relaxed);
                        return ControlFlow::Break(Some(taken_in));
                    }
                    return ControlFlow::Continue(());
                }
                Ok(Looked::Leased) => {
                    self.stats.leases_taken.fetch_add(1, Ordering::Relaxed);
                    self.stats.leases_expired.fetch_add(1, Ordering::Relaxed);
                    let fetched = self.fetch_now(origin, slot).await;
                    return ControlFlow::Break(Some(
                        self.push(origin, slot, fetched, fleet, Some(&token)).await,
                    ));
                }
                Err(_) => break,
            }
        }
        // The store failed, or the wait outlasted two leases: this replica fetches, as a lone
        // replica does. A call that failed late may have taken the lease: the write releases it
        // if so (compare and delete).
        self.stats.leases_expired.fetch_add(1, Ordering::Relaxed);
        let fetched = self.fetch_now(origin, slot).await;
        ControlFlow::Break(Some(
            self.push(origin, slot, fetched, fleet, Some(&token)).await,
        ))
    }
}

/// A lease the store may hold for this replica while its read is in flight. The check that
/// reads runs on its caller's request, which may be dropped mid-call (the client went away, its
/// time limit passed); the lease would then stay taken for its whole time to live, and every
/// replica's checks of the origin would wait on it. Dropped before [`PendingLease::settle`], it
/// releases the lease in the background (compare and delete: nothing if it was never taken).
struct PendingLease {
    store: Store,
    runtime: FetchRuntime,
    origin: String,
    token: Option<String>,
}

impl PendingLease {
    fn token(&self) -> &str {
        self.token.as_deref().unwrap_or_default()
    }

    /// The reply came: the lease is the caller's to use or was never taken. Its token.
    fn settle(mut self) -> String {
        self.token.take().unwrap_or_default()
    }
}

impl Drop for PendingLease {
    fn drop(&mut self) {
        let Some(token) = self.token.take() else {
            return;
        };
        let (store, origin) = (self.store.clone(), std::mem::take(&mut self.origin));
        // If this fails, the lease expires by itself.
        self.runtime.try_spawn(async move {
            let _ = store.release(&origin, &token).await;
        });
    }
}

#[cfg(test)]
mod tests;
