//! One timetable for a lane in every mode (issue 57, `shared/spec/PACING-TRANSITIONS.md`): the
//! places of a grid of periods counted from the epoch, each owned by one replica of the fleet
//! (place `m` by replica `m mod N`), whoever hands it out.
//!
//! A replica deciding alone uses only its own places ([`super::PaceState::reserve_share`]). The
//! store hands out a replica's places only while that replica lends them: each replica renews a
//! lease, `from..until` of its places, and the store grants a place of replica `k` only inside
//! `k`'s lease. A replica cut off from the store counts the end of its lease on its own clock
//! (the latest `until` it ever asked for, answered or not) and uses its places only from there,
//! so no place is handed out by both. A replica lends again only the places after its last local
//! one, and a store that forgot (restarted empty, or a replica promoted without the last writes:
//! its identity differs from the one a lease was written on) has no lease until each replica
//! lends again, from past every `until` it ever asked for: the store may have granted any of its
//! places before that, and forgot it. Forgetting is then safe without replicating each grant.
//!
//! Pure arithmetic on milliseconds, as the rest of the policy: the Redis scripts
//! (`store::redis_lease`) run the same rules, and a test compares them.

use super::{PaceState, SlotGrant, SlotRequest, on_phase};

/// How long after it is asked for a lease ends: the store grants a replica's places at most this
/// far ahead, and a replica cut off from the store uses its own from this far after its last
/// renewal. Renewed every [`RENEW_MS`].
pub const LEASE_MS: u64 = 10_000;
/// How often a replica renews its lease.
pub const RENEW_MS: u64 = 500;

/// A replica's places that the store may hand out: those of `index`'s phase in `from..until`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lent {
    /// The replica's index.
    pub index: u32,
    /// The first place lent.
    pub from: u64,
    /// The end of the lease: places before it.
    pub until: u64,
    /// The store the lease was written on (its replication id): a lease of another store is
    /// void on this one.
    pub store: String,
}

/// The places lent to the store, as a reservation reads them: the fleet's size and each lease.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Timetable {
    /// The fleet's size: the grid's cycle is this many periods.
    pub size: u32,
    /// The leases, at most one an index.
    pub lent: Vec<Lent>,
}

/// The grid place `index` of a cycle of `size` at or after `at`; `at` itself with no period.
fn place(at: u64, period: u64, size: u32, index: u32) -> u64 {
    if period == 0 || size <= 1 {
        at
    } else {
        on_phase(at, period, u64::from(size), u64::from(index))
    }
}

impl Timetable {
    /// The leases valid on `store` (every one when `store` is `None`: it cannot be checked).
    fn valid<'a>(&'a self, store: Option<&'a str>) -> impl Iterator<Item = &'a Lent> + 'a {
        self.lent
            .iter()
            .filter(move |lent| store.is_none_or(|store| lent.store == store))
            .filter(move |lent| lent.index < self.size)
    }

    /// The first place at or after `at` on the grid of `period` that the store may hand out, or
    /// when to ask again. Places are taken in order: a place of a replica that renews its lease
    /// but whose lease does not reach it yet stops the search (skipping it would waste it for
    /// good: it is lent a renewal later), while a place of a replica that lends nothing, or has
    /// not renewed for half a lease (cut off, or gone), is skipped.
    fn next(&self, at: u64, period: u64, now: u64, store: Option<&str>) -> Next {
        let renewing = now.saturating_add(LEASE_MS / 2);
        self.valid(store)
            .filter_map(|lent| {
                let t = place(at.max(lent.from), period, self.size, lent.index);
                if t < lent.until {
                    Some((t, Next::Grant(t)))
                } else if lent.until >= renewing {
                    let ask = now.saturating_add(t - lent.until).saturating_add(1);
                    Some((t, Next::Wait(ask)))
                } else {
                    None
                }
            })
            .min_by_key(|&(t, _)| t)
            .map_or(Next::Wait(now.saturating_add(RENEW_MS)), |(_, next)| next)
    }
}

/// What the timetable allows next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// This place.
    Grant(u64),
    /// Nothing yet: ask again then.
    Wait(u64),
}

impl PaceState {
    /// Reserves the earliest place for `request` at `now` among those lent to the store, on the
    /// grid of the request's period: the rule of the store when the fleet lends its places. A
    /// deferral says when to ask again: when the slot comes within the longest wait, or when a
    /// lease is likely to reach a free place. `store` is the store's identity, against which the
    /// leases are checked (`None`: they cannot be, and all count).
    pub fn reserve_lent(
        &mut self,
        now: u64,
        request: SlotRequest,
        timetable: &Timetable,
        store: Option<&str>,
    ) -> SlotGrant {
        let (slowdown, interval_ms, period) = self.paced(now, request);
        let mut first = now.max(self.blocked_until);
        if self.last_slot > 0 {
            first = first.max(self.last_slot.saturating_add(period));
        }
        let latest = now.saturating_add(request.max_wait_ms);
        let (reserved, at) = if first > latest {
            (false, first - request.max_wait_ms)
        } else {
            match timetable.next(first, period, now, store) {
                Next::Grant(t) if t <= latest => {
                    self.last_slot = t;
                    (true, t)
                }
                Next::Grant(t) => (false, t - request.max_wait_ms),
                Next::Wait(ask) => (false, ask),
            }
        };
        SlotGrant {
            reserved,
            at,
            now,
            interval_ms,
            slowdown,
            blocked_until: self.blocked_at(now),
            last_slot: self.last_slot,
        }
    }

    /// [`PaceState::reserve_lent`] for `count` reservations of `request` one after another, each
    /// grant showing the last slot after all of them (as a store call that carries them does).
    pub fn reserve_lent_run(
        &mut self,
        now: u64,
        request: SlotRequest,
        count: u64,
        timetable: &Timetable,
        store: Option<&str>,
    ) -> Vec<SlotGrant> {
        let mut grants = Vec::new();
        for _ in 0..count {
            let grant = self.reserve_lent(now, request, timetable, store);
            grants.push(grant);
            if !grant.reserved {
                // Nothing changed: the rest are deferred alike.
                let rest = count - grants.len() as u64;
                grants.extend((0..rest).map(|_| grant));
                break;
            }
        }
        for grant in &mut grants {
            grant.last_slot = self.last_slot;
        }
        grants
    }
}

/// A lease as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The process that holds it (a random id each start).
    pub holder: String,
    /// The store it was written on.
    pub store: String,
    /// The first place lent.
    pub from: u64,
    /// The end of the lease.
    pub until: u64,
}

impl Lease {
    /// The places this lease of replica `index` lends, as a reservation reads them.
    pub fn lent(&self, index: u32) -> Lent {
        Lent {
            index,
            from: self.from,
            until: self.until,
            store: self.store.clone(),
        }
    }
}

/// A replica's renewal of its lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LendRequest {
    /// Its index.
    pub index: u32,
    /// Its process's id.
    pub holder: String,
    /// The end of the lease it asks for: its now and [`LEASE_MS`].
    pub until: u64,
    /// The first place it may lend: after its last local one.
    pub floor: u64,
    /// The first place of a new lease on a store that holds none of this process: past every
    /// `until` it ever asked for (a store that forgot may have granted any place before it).
    pub fresh_from: u64,
    /// The first place of a lease taken over from another process of the same index (its
    /// previous run): past the longest wait from now, beyond any place the other may have used
    /// alone.
    pub takeover_from: u64,
}

/// What a renewal did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lending {
    /// The lease after it.
    Lent(Lease),
    /// Another live process holds the index, until `until`: nothing was lent.
    Held {
        /// The other process's id.
        holder: String,
        /// The end of its lease.
        until: u64,
    },
}

/// The store's rule for a renewal: `held` is the index's lease as the store keeps it, `now` and
/// `store` the store's clock and identity.
pub fn lend(held: Option<&Lease>, now: u64, store: &str, request: &LendRequest) -> Lending {
    let fresh = |from: u64| Lease {
        holder: request.holder.clone(),
        store: store.to_owned(),
        from,
        until: request.until,
    };
    match held {
        // The same lease, renewed: never lending back a place used alone since.
        Some(lease) if lease.store == store && lease.holder == request.holder => {
            Lending::Lent(Lease {
                from: lease.from.max(request.floor),
                until: lease.until.max(request.until),
                ..fresh(0)
            })
        }
        Some(lease) if lease.store == store && lease.until > now => Lending::Held {
            holder: lease.holder.clone(),
            until: lease.until,
        },
        // Another process's lease that ended (this index's previous run), or one of another
        // store: its places up to its end may have been granted.
        Some(lease) if lease.holder != request.holder => Lending::Lent(fresh(
            request
                .floor
                .max(request.fresh_from)
                .max(request.takeover_from)
                .max(lease.until),
        )),
        _ => Lending::Lent(fresh(request.floor.max(request.fresh_from))),
    }
}

#[cfg(test)]
mod tests;
