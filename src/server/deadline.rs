//! A request's time limit that costs nothing when the answer is ready at once.
//!
//! `tokio::time::timeout` builds its timer when it is made: it looks up the runtime's handle,
//! clones it and sets up a timer entry, about 400 instructions, which a cached check, answered
//! in its first poll, paid on every request for a timer it never waited on. [`within`] polls
//! the work once first and builds the timer only when the work has to wait.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::Poll;

use tokio::time::Instant;
use tokio::time::error::Elapsed;

/// `work`'s output, or [`Elapsed`] once `deadline` passes while it waits (never without one).
/// Work that is ready in its first poll is never timed, whatever the deadline: it took no time
/// to wait on. The work is pinned by the caller, where it was made: taken by value, it would be
/// moved into this future and held twice in the caller's (a request's future is kilobytes,
/// and hyper copies it).
pub(super) async fn within<F: Future>(
    deadline: Option<Instant>,
    mut work: Pin<&mut F>,
) -> Result<F::Output, Elapsed> {
    // The first poll registers this task's waker with whatever the work waits on, as the timed
    // polls below would; a wake-up before the timer exists is not lost, it polls again there.
    if let Poll::Ready(output) = poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await {
        return Ok(output);
    }
    match deadline {
        Some(deadline) => tokio::time::timeout_at(deadline, work).await,
        None => Ok(work.await),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use std::pin::pin;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn ready_work_is_answered_even_past_its_deadline() {
        let past = Instant::now() - Duration::from_secs(1);
        assert_eq!(within(Some(past), pin!(async { 7 })).await, Ok(7));
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_work_is_cut_at_its_deadline_from_when_it_was_set() {
        let started = Instant::now();
        let deadline = started + Duration::from_secs(2);
        tokio::time::sleep(Duration::from_millis(500)).await;
        let slow = pin!(tokio::time::sleep(Duration::from_secs(10)));
        assert!(within(Some(deadline), slow).await.is_err());
        assert_eq!(started.elapsed(), Duration::from_secs(2));
    }

    #[tokio::test(start_paused = true)]
    async fn waiting_work_that_finishes_in_time_is_answered() {
        let deadline = Instant::now() + Duration::from_secs(2);
        let work = async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            "done"
        };
        assert_eq!(within(Some(deadline), pin!(work)).await, Ok("done"));
        // Without a deadline it waits as long as the work takes.
        let long = tokio::time::sleep(Duration::from_secs(3600));
        assert_eq!(within(None, pin!(long)).await, Ok(()));
    }

    #[tokio::test]
    async fn work_woken_by_another_task_is_answered() {
        // Pending at its first poll, then woken by another task: the timed polls see it.
        let (tell, told) = tokio::sync::oneshot::channel();
        let deadline = Some(Instant::now() + Duration::from_secs(30));
        let waiting = tokio::spawn(async move { within(deadline, pin!(told)).await });
        tokio::task::yield_now().await;
        tell.send(5).unwrap();
        let answered = tokio::time::timeout(Duration::from_secs(10), waiting).await;
        assert_eq!(answered.unwrap().unwrap().unwrap(), Ok(5));
    }
}
