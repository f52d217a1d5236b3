//! Reservations of one lane that arrive while a call for it is out wait, and go together in the
//! next call: one script call (one round trip, one run of the script on Redis) for all of them,
//! each reserved after the ones before it at one `now` on Redis's clock, so that the spacing is
//! exactly what one call at a time would give (`redis_pace.rs`).
//!
//! A fleet's workers ask for the same few busy sites at once; one call a reservation made the
//! store the bottleneck of `pace=true` (BENCHMARKS.md, "Reservations that share a call").
//!
//! Each lane with a call out has a queue here; whoever finds none starts the task that calls,
//! and the task takes what has queued after each call until nothing has. The calls run in that
//! task, not in the callers' futures, so that a caller that goes away (a closed connection, its
//! own time limit) leaves the others' call running; each caller still keeps its own time limit
//! (`store::Store::call`).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;

use super::StoreError;
use crate::pace_policy::{SlotGrant, SlotRequest};

/// The most reservations one call carries; the rest wait for the next. Bounds a call's size
/// (four numbers each) and the time Redis spends in one script.
pub(super) const MAX_BATCH: usize = 64;

/// A reservation waiting for its call: its request `R` (a [`SlotRequest`], with what else the
/// call needs of it).
struct Waiting<R> {
    request: R,
    keep: Duration,
    reply: oneshot::Sender<Result<SlotGrant, StoreError>>,
}

/// The lanes with a call out, each with what has queued since it was sent.
pub(super) struct Coalescer<R = SlotRequest> {
    lanes: Mutex<HashMap<String, Vec<Waiting<R>>>>,
}

impl<R> Default for Coalescer<R> {
    fn default() -> Self {
        Coalescer {
            lanes: Mutex::default(),
        }
    }
}

impl<R> Coalescer<R> {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Waiting<R>>>> {
        // Held for a push or a take, never across an await: a poisoned map is still whole.
        self.lanes.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl<R: Clone + Send + 'static> Coalescer<R> {
    /// Reserves a slot of `lane` through `call`, which reserves slots for requests in turn, kept
    /// for `keep`: in a call of its own, or in the next one for the lane.
    pub(super) async fn reserve<C, F>(
        self: &Arc<Self>,
        lane: &str,
        request: R,
        keep: Duration,
        call: C,
    ) -> Result<SlotGrant, StoreError>
    where
        C: Fn(String, Vec<R>, Duration) -> F + Send + Sync + 'static,
        F: Future<Output = Result<Vec<SlotGrant>, StoreError>> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let waiting = Waiting {
            request,
            keep,
            reply,
        };
        let first = {
            let mut lanes = self.lock();
            match lanes.get_mut(lane) {
                Some(queue) => {
                    queue.push(waiting);
                    false
                }
                None => {
                    lanes.insert(lane.to_owned(), vec![waiting]);
                    true
                }
            }
        };
        if first {
            tokio::spawn(Arc::clone(self).drain(lane.to_owned(), call));
        }
        answer
            .await
            .unwrap_or_else(|_| Err(StoreError::Failed("the reservation's call ended".into())))
    }

    /// Calls for `lane` until nothing more has queued for it.
    async fn drain<C, F>(self: Arc<Self>, lane: String, call: C)
    where
        C: Fn(String, Vec<R>, Duration) -> F,
        F: Future<Output = Result<Vec<SlotGrant>, StoreError>>,
    {
        // Whatever ends this task (a panic in a call included), the lane's queue goes with it:
        // what waits in it is answered with an error rather than never.
        let mut guard = LaneGuard {
            coalescer: &self,
            lane: &lane,
            ended: false,
        };
        while let Some(batch) = guard.take() {
            let requests: Vec<R> = batch.iter().map(|w| w.request.clone()).collect();
            let keep = batch.iter().map(|w| w.keep).max().unwrap_or_default();
            match call(lane.clone(), requests, keep).await {
                Ok(grants) if grants.len() == batch.len() => {
                    for (waiting, grant) in batch.into_iter().zip(grants) {
                        let _ = waiting.reply.send(Ok(grant));
                    }
                }
                Ok(grants) => {
                    let error = StoreError::Failed(format!(
                        "{} slots for {} reservations",
                        grants.len(),
                        batch.len()
                    ));
                    answer_all(batch, &error);
                }
                Err(error) => answer_all(batch, &error),
            }
        }
    }

    /// How many lanes have a call out (for tests).
    #[cfg(test)]
    fn lanes_out(&self) -> usize {
        self.lock().len()
    }
}

fn answer_all<R>(batch: Vec<Waiting<R>>, error: &StoreError) {
    for waiting in batch {
        let _ = waiting.reply.send(Err(error.clone()));
    }
}

/// A lane's call task: takes its batches, and ends its queue if the task ends before the queue
/// is empty (a panic).
struct LaneGuard<'a, R> {
    coalescer: &'a Coalescer<R>,
    lane: &'a str,
    /// The queue was found empty and removed: the lane's next queue is another task's.
    ended: bool,
}

impl<R: Clone + Send + 'static> LaneGuard<'_, R> {
    /// The next batch, at most [`MAX_BATCH`] long; `None` when nothing has queued, and then the
    /// lane has no call out (the next reservation starts one).
    fn take(&mut self) -> Option<Vec<Waiting<R>>> {
        let mut lanes = self.coalescer.lock();
        let Some(queue) = lanes.get_mut(self.lane) else {
            self.ended = true;
            return None;
        };
        if queue.is_empty() {
            lanes.remove(self.lane);
            self.ended = true;
            return None;
        }
        let rest = queue.split_off(queue.len().min(MAX_BATCH));
        Some(std::mem::replace(queue, rest))
    }
}

impl<R> Drop for LaneGuard<'_, R> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        if let Some(queue) = self.coalescer.lock().remove(self.lane) {
            answer_all(
                queue,
                &StoreError::Failed("the reservation's call ended".into()),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::pace_policy::PaceState;

    fn request(interval_ms: u64) -> SlotRequest {
        SlotRequest {
            interval_ms,
            max_interval_ms: 60_000,
            max_wait_ms: 60_000,
            guard_ms: 0,
        }
    }

    type Call = std::pin::Pin<Box<dyn Future<Output = Result<Vec<SlotGrant>, StoreError>> + Send>>;

    /// A store whose calls take `delay` and reserve on one state at a fixed `now`, counting
    /// its calls.
    #[derive(Clone)]
    struct Counted {
        state: Arc<Mutex<PaceState>>,
        calls: Arc<AtomicUsize>,
        sizes: Arc<Mutex<Vec<usize>>>,
        delay: Duration,
    }

    impl Counted {
        fn new(delay: Duration) -> Counted {
            Counted {
                state: Arc::default(),
                calls: Arc::default(),
                sizes: Arc::default(),
                delay,
            }
        }

        fn call(
            &self,
        ) -> impl Fn(String, Vec<SlotRequest>, Duration) -> Call + Send + Sync + use<> {
            let this = self.clone();
            move |_lane, requests, _keep| {
                let this = this.clone();
                Box::pin(async move {
                    this.calls.fetch_add(1, Ordering::SeqCst);
                    this.sizes.lock().unwrap().push(requests.len());
                    tokio::time::sleep(this.delay).await;
                    let mut state = this.state.lock().unwrap();
                    Ok(requests
                        .into_iter()
                        .map(|request| state.reserve(1_000, request))
                        .collect())
                })
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn reservations_that_arrive_together_share_a_call_and_keep_their_spacing() {
        let coalescer = Arc::new(Coalescer::default());
        let store = Counted::new(Duration::from_millis(5));
        let grants = futures_util::future::join_all((0..200).map(|_| {
            coalescer.reserve("lane", request(100), Duration::from_secs(60), store.call())
        }))
        .await;
        let mut slots: Vec<u64> = grants.into_iter().map(|g| g.unwrap().at).collect();
        slots.sort_unstable();
        // Every slot once, each 100 ms after the one before: as 200 calls one at a time.
        assert_eq!(slots, (0..200).map(|i| 1_000 + i * 100).collect::<Vec<_>>());
        let calls = store.calls.load(Ordering::SeqCst);
        assert!(calls <= 4, "{calls} calls for 200 reservations");
        assert!(store.sizes.lock().unwrap().iter().all(|&n| n <= MAX_BATCH));
        assert_eq!(coalescer.lanes_out(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn lanes_do_not_wait_for_each_other_and_a_lone_reservation_calls_at_once() {
        let coalescer = Arc::new(Coalescer::default());
        let (a, b) = (
            Counted::new(Duration::from_secs(1)),
            Counted::new(Duration::ZERO),
        );
        let slow = coalescer.reserve("a", request(100), Duration::from_secs(60), a.call());
        let fast = coalescer.reserve("b", request(100), Duration::from_secs(60), b.call());
        let start = tokio::time::Instant::now();
        let (slow, fast) = tokio::join!(slow, async {
            let grant = fast.await;
            (grant, start.elapsed())
        });
        assert!(slow.unwrap().reserved);
        assert!(fast.0.unwrap().reserved);
        assert_eq!(fast.1, Duration::ZERO);
        assert_eq!(coalescer.lanes_out(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_failed_call_fails_its_batch_and_the_lane_calls_again_after() {
        let coalescer = Arc::new(Coalescer::default());
        let failing = |_lane, _requests: Vec<SlotRequest>, _keep| async {
            Err::<Vec<SlotGrant>, _>(StoreError::Timeout)
        };
        let error = coalescer
            .reserve("lane", request(100), Duration::from_secs(60), failing)
            .await;
        assert_eq!(error, Err(StoreError::Timeout));
        let store = Counted::new(Duration::ZERO);
        let grant = coalescer
            .reserve("lane", request(100), Duration::from_secs(60), store.call())
            .await;
        assert!(grant.unwrap().reserved);
        // A call that answers for the wrong number of reservations is an error, not a slot.
        let short = |_lane, _requests: Vec<SlotRequest>, _keep| async { Ok(Vec::new()) };
        let error = coalescer
            .reserve("lane", request(100), Duration::from_secs(60), short)
            .await;
        assert!(matches!(error, Err(StoreError::Failed(_))), "{error:?}");
        assert_eq!(coalescer.lanes_out(), 0);
    }

    /// Reservations that keep arriving as each call ends, from several threads: a call task that
    /// ends never takes a queue that a newer task owns, so every one is answered with a slot.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_lane_handed_from_task_to_task_loses_no_reservation() {
        let coalescer = Arc::new(Coalescer::default());
        let store = Counted::new(Duration::ZERO);
        let workers = (0..4).map(|_| {
            let (coalescer, store) = (Arc::clone(&coalescer), store.clone());
            tokio::spawn(async move {
                for _ in 0..500 {
                    let grant = coalescer
                        .reserve("lane", request(0), Duration::from_secs(60), store.call())
                        .await;
                    assert!(grant.expect("a slot").reserved);
                }
            })
        });
        for worker in futures_util::future::join_all(workers).await {
            worker.expect("no reservation failed");
        }
        // The last call's task may still be between its last answer and finding the queue empty.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while coalescer.lanes_out() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(coalescer.lanes_out(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_that_panics_answers_its_waiters_and_frees_the_lane() {
        let coalescer = Arc::new(Coalescer::default());
        async fn panicking() -> Result<Vec<SlotGrant>, StoreError> {
            tokio::time::sleep(Duration::from_millis(10)).await;
            panic!("a call that panics")
        }
        let panics = |_lane, _requests: Vec<SlotRequest>, _keep| panicking();
        let answers = futures_util::future::join_all(
            (0..3).map(|_| coalescer.reserve("lane", request(1), Duration::ZERO, panics)),
        )
        .await;
        assert!(answers.iter().all(Result::is_err), "{answers:?}");
        assert_eq!(coalescer.lanes_out(), 0);
    }
}
