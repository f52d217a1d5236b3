//! Where the fetches of origins run: on a tokio runtime of their own, whose threads the kernel
//! runs after the API's, so that a storm of new origins (their connections, bodies, parses,
//! deflates and digests) does not queue the cached checks of other origins behind it.
//!
//! Measured on two cores (BENCHMARKS.md, "The miss path"): with the fetches on the API's own
//! workers, the p99 of cached checks went from under a millisecond idle to 15-68 ms while
//! robotsd took in thousands of new origins a second; a runtime of their own at the API's
//! priority cut that to 20-28 ms, the kernel still sharing the cores evenly between the two;
//! its threads at nice 5 brought that p99 to 6-12 ms, near what the same machine's
//! load costs a check without robotsd fetching at all. The price, while a storm saturates the
//! cores: 4-29 % more CPU an origin (most with Redis, whose replies cross between the
//! runtimes) and 6-26 % fewer origins a second. At nice 10 the p99 was no better and fewer
//! origins still came in (the fetch threads, preempted more often, spent more CPU an origin).
//!
//! A higher nice value yields the CPU when both want it and costs nothing when the API is idle;
//! at nice 5 a fetch still gets about a quarter of a core against a saturated API, far more
//! than the half millisecond of CPU a fetch takes, so its time limits are not spent waiting.
//!
//! A cache built without one ([`FetchRuntime::caller`], the default) fetches on the runtime of
//! whoever asks, where tests hold a paused clock.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::runtime::{Handle, Runtime};
use tokio::task::JoinHandle;

/// The nice value of the fetch threads unless `--fetch-nice` says otherwise.
pub const DEFAULT_NICE: u8 = 5;

/// The name of every fetch thread (`/proc/PID/task/*/comm`, `top -H`).
pub const THREAD_NAME: &str = "robotsd-fetch";

/// Where a cache starts its fetches. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct FetchRuntime {
    handle: Option<Handle>,
}

impl FetchRuntime {
    /// Fetches on the runtime of whoever starts them.
    pub fn caller() -> FetchRuntime {
        FetchRuntime::default()
    }

    /// Starts `future` where fetches run.
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match &self.handle {
            Some(handle) => handle.spawn(future),
            None => tokio::spawn(future),
        }
    }

    /// Starts `future` where fetches run if there is a runtime to run it, and drops it if not:
    /// for a destructor, which may run outside any runtime and must not panic there.
    pub fn try_spawn<F>(&self, future: F)
    where
        F: Future<Output = ()> + Send + 'static,
    {
        match self.handle.clone().or_else(|| Handle::try_current().ok()) {
            Some(handle) => drop(handle.spawn(future)),
            None => drop(future),
        }
    }
}

/// The fetch threads' runtime, owned by whoever serves: built before the API's runtime and shut
/// down after it.
#[derive(Debug)]
pub struct FetchThreads {
    runtime: Runtime,
    nice: u8,
    not_lowered: Arc<AtomicUsize>,
}

impl FetchThreads {
    /// A runtime of `workers` threads (and its blocking threads, which resolve names), each at
    /// `nice`; 0 leaves them at the process's priority.
    pub fn start(workers: usize, nice: u8) -> std::io::Result<FetchThreads> {
        let not_lowered = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&not_lowered);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers.max(1))
            .thread_name(THREAD_NAME)
            .on_thread_start(move || {
                if nice > 0 && lower_this_thread(nice).is_err() {
                    counted.fetch_add(1, Ordering::Relaxed);
                }
            })
            .enable_all()
            .build()?;
        Ok(FetchThreads {
            runtime,
            nice,
            not_lowered,
        })
    }

    /// Where caches start their fetches: on these threads.
    pub fn runtime(&self) -> FetchRuntime {
        FetchRuntime {
            handle: Some(self.runtime.handle().clone()),
        }
    }

    /// The nice value asked for.
    pub fn nice(&self) -> u8 {
        self.nice
    }

    /// Threads started so far whose priority could not be lowered (none on Linux, where
    /// lowering one's own priority needs no privilege; every one elsewhere).
    pub fn not_lowered(&self) -> usize {
        self.not_lowered.load(Ordering::Relaxed)
    }

    /// Stops the threads, waiting up to `grace` for fetches under way: once the API has stopped
    /// answering, nobody waits for them.
    pub fn shutdown(self, grace: Duration) {
        self.runtime.shutdown_timeout(grace);
    }
}

/// Sets the calling thread's nice value. On Linux a thread has its own (`setpriority` with a
/// thread id); elsewhere the call would change the whole process, so it is not made.
#[cfg(target_os = "linux")]
fn lower_this_thread(nice: u8) -> std::io::Result<()> {
    let tid = rustix::thread::gettid();
    rustix::process::setpriority_process(Some(tid), i32::from(nice)).map_err(Into::into)
}

#[cfg(not(target_os = "linux"))]
fn lower_this_thread(_nice: u8) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The nice value of the thread running this, read back from the kernel.
    #[cfg(target_os = "linux")]
    fn own_nice() -> i32 {
        let tid = rustix::thread::gettid();
        rustix::process::getpriority_process(Some(tid)).unwrap()
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn fetches_run_on_named_threads_at_the_nice_value_asked() {
        // Above the test's own value, which a test run under `nice` starts from.
        let before = own_nice();
        let asked = (before + 3).min(19);
        let threads = FetchThreads::start(2, u8::try_from(asked).unwrap()).unwrap();
        let api = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (name, nice) = api.block_on(async {
            threads
                .runtime()
                .spawn(async {
                    let name = std::thread::current().name().map(str::to_owned);
                    (name, own_nice())
                })
                .await
                .unwrap()
        });
        assert_eq!(name.as_deref(), Some(THREAD_NAME));
        assert_eq!(nice, asked);
        assert_eq!(threads.not_lowered(), 0);
        // The thread that asked keeps its own priority.
        assert_eq!(own_nice(), before);
        threads.shutdown(Duration::from_secs(1));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn nice_zero_leaves_the_threads_as_they_were() {
        let threads = FetchThreads::start(1, 0).unwrap();
        let api = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let nice = api.block_on(async { threads.runtime().spawn(async { own_nice() }).await });
        assert_eq!(nice.unwrap(), own_nice());
        threads.shutdown(Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn without_threads_of_its_own_a_fetch_runs_where_it_is_asked() {
        // On the test's runtime, where the paused clock holds.
        let asked = std::thread::current().id();
        let ran = FetchRuntime::caller()
            .spawn(async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                std::thread::current().id()
            })
            .await
            .unwrap();
        assert_eq!(ran, asked);
    }
}
