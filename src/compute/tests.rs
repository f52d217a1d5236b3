//! The compute threads: where a job runs, how many at once, and whose turn comes next.

use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

use super::*;

/// Work past [`SMALL_WORK`]: such a job never takes the turn kept for small ones.
const LARGE: u64 = SMALL_WORK + 1;

fn caller(n: u8) -> Caller {
    Caller::address(std::net::IpAddr::from([192, 0, 2, n]))
}

/// Takes the one general turn of `compute` with a large job that runs until `open` is sent.
async fn hold(compute: &Compute) -> mpsc::Sender<()> {
    let (open, gate) = mpsc::channel::<()>();
    let (started_tx, started) = tokio::sync::oneshot::channel();
    let held = compute.clone();
    tokio::spawn(async move {
        held.run(LARGE, caller(0), Stop::at(None), move |_| {
            started_tx.send(()).unwrap();
            gate.recv().ok();
        })
        .await
    });
    started.await.unwrap();
    open
}

/// Waits until `jobs` jobs wait for a turn.
async fn queued(compute: &Compute, jobs: usize) {
    while compute.turns.waiting().0 < jobs {
        tokio::task::yield_now().await;
    }
}

/// Queues a job of `caller` asking for `work` that records `name` in `ran` when it runs.
fn queue(
    compute: &Compute,
    caller: Caller,
    work: u64,
    name: &'static str,
    ran: &Arc<Mutex<Vec<&'static str>>>,
) -> tokio::task::JoinHandle<()> {
    let (compute, ran) = (compute.clone(), Arc::clone(ran));
    tokio::spawn(async move {
        compute
            .run(work, caller, Stop::at(None), move |_| {
                ran.lock().unwrap().push(name)
            })
            .await
            .unwrap();
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_with_nothing_queued_goes_ahead_of_another_callers_backlog() {
    let compute = Compute::new(1, 0);
    let open = hold(&compute).await;
    let ran = Arc::default();
    let mut jobs = Vec::new();
    // One caller's batch: five items queued behind the job running.
    for (n, name) in ["a1", "a2", "a3", "a4", "a5"].into_iter().enumerate() {
        jobs.push(queue(&compute, caller(1), LARGE, name, &ran));
        queued(&compute, n + 1).await;
    }
    // Another caller's check, come last. In a FIFO queue it would run last.
    jobs.push(queue(&compute, caller(2), LARGE, "b", &ran));
    queued(&compute, 6).await;
    assert_eq!(compute.turns.waiting(), (6, 2));
    open.send(()).unwrap();
    for job in jobs {
        job.await.unwrap();
    }
    // Its start is the queue's time, which the first item's start equals (the first come among
    // equals goes first): it waits for one item, not five.
    assert_eq!(*ran.lock().unwrap(), ["a1", "b", "a2", "a3", "a4", "a5"]);
    assert_eq!(compute.turns.waiting(), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_with_backlogs_share_the_turns_by_the_work_they_ask_for() {
    let compute = Compute::new(1, 0);
    let open = hold(&compute).await;
    let ran = Arc::default();
    let mut jobs = Vec::new();
    // One caller asks for twice the work a job of the other's.
    for (n, name) in ["a1", "a2", "a3"].into_iter().enumerate() {
        jobs.push(queue(&compute, caller(1), 2 * LARGE, name, &ran));
        queued(&compute, n + 1).await;
    }
    for (n, name) in ["b1", "b2", "b3", "b4", "b5", "b6"].into_iter().enumerate() {
        jobs.push(queue(&compute, caller(2), LARGE, name, &ran));
        queued(&compute, n + 4).await;
    }
    open.send(()).unwrap();
    for job in jobs {
        job.await.unwrap();
    }
    assert_eq!(
        *ran.lock().unwrap(),
        ["a1", "b1", "b2", "a2", "b3", "b4", "a3", "b5", "b6"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_small_job_runs_while_large_ones_hold_every_other_turn() {
    let compute = Compute::new(1, 0);
    let open = hold(&compute).await;
    let ran = Arc::default();
    let large = queue(&compute, caller(1), LARGE, "large", &ran);
    queued(&compute, 1).await;
    // The general turn is held and a large job waits for it: the small one does not.
    queue(&compute, caller(2), SMALL_WORK, "small", &ran)
        .await
        .unwrap();
    assert_eq!(*ran.lock().unwrap(), ["small"]);
    open.send(()).unwrap();
    large.await.unwrap();
    assert_eq!(*ran.lock().unwrap(), ["small", "large"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_that_gives_up_waiting_leaves_no_place_and_takes_no_turn() {
    let compute = Compute::new(1, 0);
    let open = hold(&compute).await;
    let ran = Arc::default();
    let given_up = queue(&compute, caller(1), LARGE, "given up", &ran);
    queued(&compute, 1).await;
    given_up.abort();
    let _ = given_up.await;
    assert_eq!(compute.turns.waiting(), (0, 0));
    open.send(()).unwrap();
    // The held turn came back free: a job later runs on it.
    queue(&compute, caller(2), LARGE, "later", &ran)
        .await
        .unwrap();
    assert_eq!(*ran.lock().unwrap(), ["later"]);
}

#[tokio::test]
async fn small_work_runs_where_it_is_asked() {
    let compute = Compute::new(1, 10);
    let here = std::thread::current().id();
    let ran_on = compute
        .run(10, Caller::Unknown, Stop::at(None), |_| {
            std::thread::current().id()
        })
        .await
        .unwrap();
    assert_eq!(ran_on, here);
}

#[tokio::test]
async fn larger_work_runs_on_another_thread() {
    let compute = Compute::new(1, 10);
    let here = std::thread::current().id();
    let ran_on = compute
        .run(11, Caller::Unknown, Stop::at(None), |_| {
            std::thread::current().id()
        })
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
        compute.run(LARGE, Caller::Unknown, Stop::at(None), move |_| {
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
            .run(1, Caller::Unknown, Stop::at(None), move |stop| {
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
    let ended = tokio::task::spawn_blocking(move || ended_rx.recv_timeout(Duration::from_secs(30)))
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
        .run(1, Caller::Unknown, Stop::at(None), |_| -> u8 {
            panic!("job")
        })
        .await;
    assert_eq!(done, Err(ComputeError::Panicked));
}
