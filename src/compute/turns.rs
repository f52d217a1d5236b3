//! Turns on the compute threads, shared among callers by start-time fair queuing.
//!
//! A FIFO queue let one caller's batches hold every other caller's checks behind them: while one
//! caller sent heavy batches, an ordinary check of another site waited 10.8 s (issue 58). Here
//! each waiting job gets a start tag: the later of the queue's virtual time and the finish tag
//! of its caller's job queued before it; its finish tag is its start plus its work. A free turn
//! goes to the job with the smallest start tag (the first to come among equals), and the
//! virtual time moves to it. So a caller with nothing queued starts at the virtual time, ahead
//! of every job of a caller that has a backlog, and callers with backlogs share the turns in
//! proportion to the work they ask for, not to how many jobs they queue.
//!
//! Besides the turns for any job, one turn is kept for small jobs ([`SMALL_WORK`] at most), so
//! that a check never waits behind large jobs (a page of 2 MiB is read in up to 180 ms): at worst
//! it waits for one small job.
//!
//! A caller is remembered only while it has jobs waiting, so the queue holds at most one entry
//! per waiting job; a waiter that gives up takes its place out of the queue.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use super::Caller;

/// The most work, in the units of [`super::Compute::run`], that a job may ask for and take the
/// turn kept for small jobs: 64 times the inline bound, a millisecond or so of matching.
pub const SMALL_WORK: u64 = 64 * super::INLINE_WORK;

/// The turns: `general` for any job, and one kept for small jobs.
#[derive(Debug)]
pub(super) struct Turns {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// Turns for any job not taken.
    free: usize,
    /// Whether the turn kept for small jobs is not taken.
    kept_free: bool,
    /// The virtual time: the start tag of the job last given a turn.
    now: u64,
    /// Numbers the waiters in the order they came, to break ties.
    arrivals: u64,
    /// Callers with jobs waiting: the finish tag of the last one queued, and how many wait.
    backlogs: HashMap<Caller, Backlog>,
    /// Small jobs waiting, by start tag and arrival.
    small: BTreeMap<(u64, u64), Waiter>,
    /// The other jobs waiting, by start tag and arrival.
    large: BTreeMap<(u64, u64), Waiter>,
}

#[derive(Debug)]
struct Backlog {
    finish: u64,
    waiting: usize,
}

#[derive(Debug)]
struct Waiter {
    caller: Caller,
    wake: oneshot::Sender<Turn>,
}

impl State {
    /// One of `caller`'s waiting jobs left the queue (given a turn, or given up).
    fn left(&mut self, caller: Caller) {
        if let Some(backlog) = self.backlogs.get_mut(&caller) {
            backlog.waiting -= 1;
            if backlog.waiting == 0 {
                self.backlogs.remove(&caller);
            }
        }
    }

    /// The next waiter a turn freed goes to: for the kept turn, the first small job; for any
    /// other, the first job.
    fn next(&mut self, kept: bool) -> Option<Waiter> {
        let small = self.small.first_key_value().map(|(key, _)| *key);
        let large = self.large.first_key_value().map(|(key, _)| *key);
        let (key, waiter) = match (small, large) {
            (Some(s), Some(l)) if kept || s <= l => self.small.pop_first(),
            (Some(_), None) => self.small.pop_first(),
            (_, Some(_)) if !kept => self.large.pop_first(),
            _ => None,
        }?;
        self.now = self.now.max(key.0);
        self.left(waiter.caller);
        Some(waiter)
    }
}

/// A turn on the compute threads, given back when dropped.
#[derive(Debug)]
pub(super) struct Turn {
    turns: Option<Arc<Turns>>,
    kept: bool,
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let Some(turns) = self.turns.take() {
            turns.give_back(self.kept);
        }
    }
}

/// A place in the queue, taken out again if its job gives up before its turn comes.
struct Place<'a> {
    turns: &'a Turns,
    key: (u64, u64),
    small: bool,
    caller: Caller,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        let mut state = self.turns.lock();
        let queue = if self.small {
            &mut state.small
        } else {
            &mut state.large
        };
        // Gone already when its turn was sent: the turn then goes back as the receiver drops.
        if queue.remove(&self.key).is_some() {
            state.left(self.caller);
        }
    }
}

impl Turns {
    /// `general` turns for any job, and one kept for small ones.
    pub(super) fn new(general: usize) -> Turns {
        Turns {
            state: Mutex::new(State {
                free: general,
                kept_free: true,
                now: 0,
                arrivals: 0,
                backlogs: HashMap::new(),
                small: BTreeMap::new(),
                large: BTreeMap::new(),
            }),
        }
    }

    // Nothing panics while the lock is held; a poisoned lock's state is whole.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A turn for a job of `caller` asking for `work`, once one is its own; `None` only if the
    /// turns were dropped meanwhile, which their owner's being here rules out.
    pub(super) async fn take(self: &Arc<Self>, caller: Caller, work: u64) -> Option<Turn> {
        let small = work <= SMALL_WORK;
        let (key, given) = {
            let mut state = self.lock();
            if state.free > 0 {
                state.free -= 1;
                return Some(self.turn(false));
            }
            if small && state.kept_free {
                state.kept_free = false;
                return Some(self.turn(true));
            }
            let now = state.now;
            let backlog = state.backlogs.entry(caller).or_insert(Backlog {
                finish: 0,
                waiting: 0,
            });
            let start = backlog.finish.max(now);
            backlog.finish = start.saturating_add(work.max(1));
            backlog.waiting += 1;
            let key = (start, state.arrivals);
            state.arrivals += 1;
            let (wake, given) = oneshot::channel();
            let queue = if small {
                &mut state.small
            } else {
                &mut state.large
            };
            queue.insert(key, Waiter { caller, wake });
            (key, given)
        };
        let _place = Place {
            turns: self,
            key,
            small,
            caller,
        };
        // A waiter leaves the queue only when its turn is sent, or when this future is dropped.
        given.await.ok()
    }

    fn turn(self: &Arc<Self>, kept: bool) -> Turn {
        Turn {
            turns: Some(Arc::clone(self)),
            kept,
        }
    }

    /// A turn ended: it goes to the next waiter it may go to, else it is free.
    fn give_back(self: Arc<Self>, kept: bool) {
        loop {
            let waiter = {
                let mut state = self.lock();
                match state.next(kept) {
                    Some(waiter) => waiter,
                    None => {
                        if kept {
                            state.kept_free = true;
                        } else {
                            state.free += 1;
                        }
                        return;
                    }
                }
            };
            match waiter.wake.send(self.turn(kept)) {
                Ok(()) => return,
                // Its job gave up as the turn came: the next one takes it, and this one must
                // not give it back a second time.
                Err(mut turn) => turn.turns = None,
            }
        }
    }

    /// Jobs waiting, and callers with jobs waiting.
    #[cfg(test)]
    pub(super) fn waiting(&self) -> (usize, usize) {
        let state = self.lock();
        (state.small.len() + state.large.len(), state.backlogs.len())
    }
}
