//! Where documents are parsed: on tokio's blocking threads, a bounded number at a time, within a
//! time budget, never on the async workers that answer checks and probes.
//!
//! A document is supplied by whichever site names it, and parsing is CPU work that never yields.
//! On an async worker, two slow parses of RSL licenses on a two-core machine stalled `/livez` and
//! the cached checks of every other site. A kind's own bounds (the RSL pre-scan,
//! `crate::rsl`) are what bound a parse's time; this pool is the second line:
//! - at most [`PARSERS`] documents are parsed at once, so parsing takes at most that many cores,
//!   and a parse that outlives its budget keeps its permit until it really ends, so that parses
//!   abandoned by their callers never pile up on the blocking pool;
//! - a caller waits at most [`BUDGET`] in all, for a parser and for the parse: past it, the
//!   document is answered as unread ([`PoolError`]), and a late result is dropped.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

/// Documents parsed at once, per cache. One: within its kind's bounds a document parses in
/// milliseconds, so one parser keeps up with far more fetches than robotsd makes, and a hostile
/// document that got past the bounds could take one core, never all of them.
pub const PARSERS: usize = 1;

/// How long a caller waits for a parser and its parse together. A document within the
/// pre-scan's bounds parses in milliseconds even on a loaded machine; two seconds is the fetch
/// time limit's order, which a check already waits for.
pub const BUDGET: Duration = Duration::from_secs(2);

/// Why a job gave no result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolError {
    /// No parser came free within the budget.
    Busy,
    /// The job did not end within the budget (it may still end, and its result is dropped).
    Overtime,
    /// The job panicked.
    Panicked,
}

/// The parsers. Cheap to clone; clones share the permits.
#[derive(Debug, Clone)]
pub struct ParserPool {
    permits: Arc<Semaphore>,
    budget: Duration,
}

impl Default for ParserPool {
    fn default() -> Self {
        ParserPool::new(PARSERS, BUDGET)
    }
}

impl ParserPool {
    /// A pool running at most `parsers` jobs at once, each caller waiting at most `budget`.
    pub fn new(parsers: usize, budget: Duration) -> ParserPool {
        ParserPool {
            permits: Arc::new(Semaphore::new(parsers.max(1))),
            budget,
        }
    }

    /// The budget, for messages.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Runs `job` on a blocking thread once a parser is free; its result, if that all happens
    /// within the budget.
    pub async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, PoolError> {
        let deadline = tokio::time::Instant::now() + self.budget;
        let permit = match tokio::time::timeout_at(
            deadline,
            Arc::clone(&self.permits).acquire_owned(),
        )
        .await
        {
            Ok(Ok(permit)) => permit,
            // The semaphore is never closed; a closed one has no parser either.
            Ok(Err(_)) | Err(_) => return Err(PoolError::Busy),
        };
        let task = tokio::task::spawn_blocking(move || {
            // Held until the job ends, however long after its caller gave up.
            let _permit = permit;
            job()
        });
        match tokio::time::timeout_at(deadline, task).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(_)) => Err(PoolError::Panicked),
            Err(_) => Err(PoolError::Overtime),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    fn sleeper(ms: u64) -> impl FnOnce() -> u64 + Send + 'static {
        move || {
            std::thread::sleep(Duration::from_millis(ms));
            ms
        }
    }

    #[tokio::test]
    async fn a_job_within_the_budget_gives_its_result() {
        let pool = ParserPool::new(1, Duration::from_secs(5));
        assert_eq!(pool.run(sleeper(1)).await, Ok(1));
    }

    #[tokio::test]
    async fn a_job_past_the_budget_is_given_up_at_the_budget_and_keeps_its_parser() {
        let pool = ParserPool::new(1, Duration::from_millis(100));
        let started = Instant::now();
        assert_eq!(pool.run(sleeper(1_500)).await, Err(PoolError::Overtime));
        // Wide margins: the point is that the caller did not wait for the job.
        assert!(started.elapsed() < Duration::from_millis(1_000));
        // The abandoned job still holds the one parser: the next caller is told so at its
        // budget rather than starting a second parse.
        assert_eq!(pool.run(sleeper(1)).await, Err(PoolError::Busy));
        tokio::time::sleep(Duration::from_millis(1_600)).await;
        assert_eq!(pool.run(sleeper(1)).await, Ok(1));
    }

    #[tokio::test]
    async fn a_panicking_job_is_an_error_and_frees_its_parser() {
        let pool = ParserPool::new(1, Duration::from_secs(5));
        let job = || -> u8 { panic!("a parser bug") };
        assert_eq!(pool.run(job).await, Err(PoolError::Panicked));
        assert_eq!(pool.run(sleeper(1)).await, Ok(1));
    }
}
