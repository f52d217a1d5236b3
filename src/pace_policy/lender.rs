//! A replica's side of the lease on its places ([`super::timetable`]): what it asks the store
//! for, what it read of the fleet's leases, and the first of its places it may use alone.
//!
//! The lease's end is counted on this replica's clock from what it *asked* for, answered or not:
//! a renewal whose answer was lost may still have been written, and the store may then grant
//! this replica's places up to its end.

use std::sync::Arc;

use super::timetable::{LEASE_MS, LendRequest, Lending, Lent, Timetable};

/// What changed with an answer, for the log and the metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LenderEvent {
    /// Another live process holds this replica's index and renews it: two replicas claim one
    /// index (a surge, two releases), and deciding alone they would share a phase.
    Duplicate {
        /// The other process's id.
        holder: String,
    },
    /// The index is this replica's again.
    Resolved,
}

/// One replica's lease on its places.
#[derive(Debug, Clone)]
pub struct Lender {
    index: u32,
    holder: String,
    /// Places before this may have been lent by this index's previous run: its lease ended at
    /// most [`LEASE_MS`] after this process started.
    start_floor: u64,
    /// The latest lease end asked for.
    asked_until: u64,
    /// The latest place used alone (zero: none).
    last_alone: u64,
    /// The leases last read.
    table: Arc<Timetable>,
    /// Another process holding the index, with its lease's end as last seen.
    held_by: Option<(String, u64)>,
    duplicate: bool,
}

impl Lender {
    /// The lease of replica `index` of `size`, for the process `holder` started at `now`.
    pub fn new(index: u32, size: u32, holder: String, now: u64) -> Lender {
        Lender {
            index,
            holder,
            start_floor: now.saturating_add(LEASE_MS),
            asked_until: 0,
            last_alone: 0,
            table: Arc::new(Timetable {
                size,
                lent: Vec::new(),
            }),
            held_by: None,
            duplicate: false,
        }
    }

    /// This process's id.
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// The renewal to send at `now`, whose end is counted as asked for from now on. `max_wait_ms`
    /// bounds how far ahead a previous run of the index may have used its places alone.
    pub fn request(&mut self, now: u64, max_wait_ms: u64) -> LendRequest {
        let fresh_from = self.asked_until.max(self.start_floor);
        let until = now.saturating_add(LEASE_MS);
        self.asked_until = self.asked_until.max(until);
        LendRequest {
            index: self.index,
            holder: self.holder.clone(),
            until,
            floor: if self.last_alone > 0 {
                self.last_alone + 1
            } else {
                0
            },
            fresh_from,
            takeover_from: now.saturating_add(max_wait_ms),
        }
    }

    /// Takes in the store's answer to a renewal: the outcome and the fleet's leases.
    pub fn answered(&mut self, lending: &Lending, table: Vec<Lent>) -> Option<LenderEvent> {
        self.table = Arc::new(Timetable {
            size: self.table.size,
            lent: table,
        });
        match lending {
            Lending::Lent(lease) => {
                self.asked_until = self.asked_until.max(lease.until);
                self.held_by = None;
                std::mem::take(&mut self.duplicate).then_some(LenderEvent::Resolved)
            }
            Lending::Held { holder, until } => {
                let renewing = self
                    .held_by
                    .as_ref()
                    .is_some_and(|(seen, seen_until)| seen == holder && until > seen_until);
                self.held_by = Some((holder.clone(), *until));
                (renewing && !std::mem::replace(&mut self.duplicate, true)).then(|| {
                    LenderEvent::Duplicate {
                        holder: holder.clone(),
                    }
                })
            }
        }
    }

    /// Whether another live process renews this replica's index.
    pub fn duplicate(&self) -> bool {
        self.duplicate
    }

    /// The fleet's leases as last read.
    pub fn timetable(&self) -> Arc<Timetable> {
        Arc::clone(&self.table)
    }

    /// The first place this replica may use alone: past every lease end it asked for. `None`
    /// while another process holds its index: that one's places are not this one's to use.
    pub fn floor(&self) -> Option<u64> {
        self.held_by
            .is_none()
            .then(|| self.asked_until.max(self.start_floor))
    }

    /// Records a place used alone: it is never lent again.
    pub fn used_alone(&mut self, at: u64) {
        self.last_alone = self.last_alone.max(at);
    }
}
