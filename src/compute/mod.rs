//! Where the CPU work a request asks for runs when it is more than a moment's: on tokio's
//! blocking threads, a bounded number at a time, never on the async workers that answer probes
//! and the cached checks of other sites (`docs/behaviour.md`, "What one request may cost").
//!
//! Matching is CPU work that never yields. A check of a small file is a few microseconds and
//! runs where it is asked, as a thread hand-off would cost more than the work. But a stranger
//! writes the file, and a request names the URLs and agents: on the async workers, two batches
//! of a 46,000-rule file stalled `/livez` for 8 s on a two-core machine. So a job is sized
//! first, in the units of [`crate::checker::WorkMeter`] (agents × rules to match), and one past
//! [`INLINE_WORK`] goes to this pool:
//! - at most [`threads`] jobs run at once (one core fewer than the machine has, at least one),
//!   so that one core is left for the async workers whatever requests ask, and one more small
//!   job ([`SMALL_WORK`] at most) when those are all taken, so that a check never waits behind
//!   large jobs;
//! - callers take turns ([`Caller`], `turns.rs`): one caller's batches delay another caller's
//!   check by at most the jobs already running;
//! - a job's caller may stop waiting (a deadline, a client gone); the job then ends on its own
//!   and keeps its turn until it does, so abandoned jobs never pile up. A job that loops over
//!   items checks [`Stop::now`] between them, so that it ends soon after its caller is gone.

mod caller;
mod turns;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

pub use caller::Caller;
pub use turns::SMALL_WORK;
use turns::Turns;

/// The most work a job may do where it is asked, on an async worker: about 4,000 rule matches,
/// under a millisecond however the file is written (docs/behaviour.md states the engine's worst
/// case per rule), and far more than a check of any real site's file.
pub const INLINE_WORK: u64 = 4_096;

/// Why a job gave no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ComputeError {
    /// The job panicked.
    #[error("a computation failed")]
    Panicked,
    /// The compute threads were gone before the job's turn came.
    #[error("the compute threads are gone")]
    Closed,
}

/// The blocking threads CPU work runs on. Cheap to clone; clones share the turns.
#[derive(Debug, Clone)]
pub struct Compute {
    turns: Arc<Turns>,
    threads: usize,
    inline_work: u64,
}

impl Default for Compute {
    fn default() -> Self {
        Compute::new(threads(), INLINE_WORK)
    }
}

/// The jobs that run at once by default: one fewer than the cores this process may use
/// (a container's CPU limit counts), at least one.
pub fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .saturating_sub(1)
        .max(1)
}

/// Tells a job that its caller no longer waits: past its deadline, or gone.
#[derive(Debug, Clone)]
pub struct Stop {
    gone: Arc<AtomicBool>,
    deadline: Option<Instant>,
}

impl Stop {
    /// A stop that comes only when the caller is gone, or at `deadline` if any.
    pub fn at(deadline: Option<Instant>) -> Stop {
        Stop {
            gone: Arc::new(AtomicBool::new(false)),
            deadline,
        }
    }

    /// Whether the job should stop now.
    pub fn now(&self) -> bool {
        self.gone.load(Ordering::Relaxed) || self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

/// Marks the job's [`Stop`] when its caller's future is dropped.
struct Gone(Arc<AtomicBool>);

impl Drop for Gone {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Compute {
    /// A pool running at most `threads` jobs at once (and one more small one), and any job of
    /// at most `inline_work` where it is asked.
    pub fn new(threads: usize, inline_work: u64) -> Compute {
        let threads = threads.max(1);
        Compute {
            turns: Arc::new(Turns::new(threads)),
            threads,
            inline_work,
        }
    }

    /// The jobs that run at once, besides the one small job a turn is kept for.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Whether a job of `work` runs where it is asked.
    pub fn inline(&self, work: u64) -> bool {
        work <= self.inline_work
    }

    /// Runs `job` for `caller` once its turn comes (at once, where it is asked, if `work` is
    /// within [`INLINE_WORK`]). Dropping the returned future stops waiting; the job, if
    /// started, ends on its own, told by its [`Stop`].
    pub async fn run<T: Send + 'static>(
        &self,
        work: u64,
        caller: Caller,
        stop: Stop,
        job: impl FnOnce(&Stop) -> T + Send + 'static,
    ) -> Result<T, ComputeError> {
        if self.inline(work) {
            return Ok(job(&stop));
        }
        self.offload(work, caller, stop, job).await
    }

    /// Runs `job`, of `work` units, on a blocking thread once its turn among `caller`'s and
    /// other callers' jobs comes, whatever its size.
    pub async fn offload<T: Send + 'static>(
        &self,
        work: u64,
        caller: Caller,
        stop: Stop,
        job: impl FnOnce(&Stop) -> T + Send + 'static,
    ) -> Result<T, ComputeError> {
        let _gone = Gone(Arc::clone(&stop.gone));
        let turn = self
            .turns
            .take(caller, work)
            .await
            .ok_or(ComputeError::Closed)?;
        let task = tokio::task::spawn_blocking(move || {
            // Held until the job ends, however long after its caller gave up.
            let _turn = turn;
            job(&stop)
        });
        task.await.map_err(|_| ComputeError::Panicked)
    }
}

#[cfg(test)]
mod tests;
