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
//!   so that one core is left for the async workers whatever requests ask;
//! - a job's caller may stop waiting (a deadline, a client gone); the job then ends on its own
//!   and keeps its permit until it does, so abandoned jobs never pile up. A job that loops over
//!   items checks [`Stop::now`] between them, so that it ends soon after its caller is gone.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tokio::sync::Semaphore;

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
}

/// The blocking threads CPU work runs on. Cheap to clone; clones share the permits.
#[derive(Debug, Clone)]
pub struct Compute {
    permits: Arc<Semaphore>,
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
    /// A pool running at most `threads` jobs at once, and any job of at most `inline_work`
    /// where it is asked.
    pub fn new(threads: usize, inline_work: u64) -> Compute {
        let threads = threads.max(1);
        Compute {
            permits: Arc::new(Semaphore::new(threads)),
            threads,
            inline_work,
        }
    }

    /// The jobs that run at once.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Whether a job of `work` runs where it is asked.
    pub fn inline(&self, work: u64) -> bool {
        work <= self.inline_work
    }

    /// Runs `job` once a thread is free (at once, where it is asked, if `work` is within
    /// [`INLINE_WORK`]). Dropping the returned future stops waiting; the job, if started, ends
    /// on its own, told by its [`Stop`].
    pub async fn run<T: Send + 'static>(
        &self,
        work: u64,
        stop: Stop,
        job: impl FnOnce(&Stop) -> T + Send + 'static,
    ) -> Result<T, ComputeError> {
        if self.inline(work) {
            return Ok(job(&stop));
        }
        self.offload(stop, job).await
    }

    /// Runs `job` on a blocking thread once one is free, whatever its size.
    pub async fn offload<T: Send + 'static>(
        &self,
        stop: Stop,
        job: impl FnOnce(&Stop) -> T + Send + 'static,
    ) -> Result<T, ComputeError> {
        let _gone = Gone(Arc::clone(&stop.gone));
        // The semaphore is never closed.
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|_| ComputeError::Panicked)?;
        let task = tokio::task::spawn_blocking(move || {
            // Held until the job ends, however long after its caller gave up.
            let _permit = permit;
            job(&stop)
        });
        task.await.map_err(|_| ComputeError::Panicked)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn small_work_runs_where_it_is_asked() {
        let compute = Compute::new(1, 10);
        let here = std::thread::current().id();
        let ran_on = compute
            .run(10, Stop::at(None), |_| std::thread::current().id())
            .await
            .unwrap();
        assert_eq!(ran_on, here);
    }

    #[tokio::test]
    async fn larger_work_runs_on_another_thread() {
        let compute = Compute::new(1, 10);
        let here = std::thread::current().id();
        let ran_on = compute
            .run(11, Stop::at(None), |_| std::thread::current().id())
            .await
            .unwrap();
        assert_ne!(ran_on, here);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn at_most_threads_jobs_run_at_once() {
        let compute = Compute::new(2, 0);
        let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let jobs = (0..8).map(|_| {
            let (running, most) = (Arc::clone(&running), Arc::clone(&most));
            compute.run(1, Stop::at(None), move |_| {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(20));
                running.fetch_sub(1, Ordering::SeqCst);
            })
        });
        for done in futures_util::future::join_all(jobs).await {
            done.unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_job_learns_its_caller_is_gone() {
        let compute = Compute::new(1, 0);
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (ended_tx, ended_rx) = std::sync::mpsc::channel();
        let waiting = tokio::spawn(async move {
            compute
                .run(1, Stop::at(None), move |stop| {
                    started_tx.send(()).unwrap();
                    let mut rounds = 0u64;
                    while !stop.now() {
                        rounds += 1;
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    ended_tx.send(rounds).unwrap();
                })
                .await
        });
        tokio::task::spawn_blocking(move || started_rx.recv().unwrap())
            .await
            .unwrap();
        waiting.abort();
        // The job loops until told; it ends only because its caller went away.
        let ended =
            tokio::task::spawn_blocking(move || ended_rx.recv_timeout(Duration::from_secs(30)))
                .await
                .unwrap();
        assert!(ended.is_ok(), "the job never learned its caller was gone");
    }

    #[test]
    fn a_stop_comes_at_its_deadline() {
        assert!(Stop::at(Some(Instant::now())).now());
        assert!(!Stop::at(Some(Instant::now() + Duration::from_secs(3600))).now());
        assert!(!Stop::at(None).now());
    }

    #[tokio::test]
    async fn a_panicking_job_is_an_error_not_a_panic() {
        let compute = Compute::new(1, 0);
        let done = compute
            .run(1, Stop::at(None), |_| -> u8 { panic!("job") })
            .await;
        assert_eq!(done, Err(ComputeError::Panicked));
    }
}
