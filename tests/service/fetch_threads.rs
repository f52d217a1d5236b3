//! The fetches of origins run on threads of their own, which the kernel runs after the API's
//! (`src/fetch_runtime.rs`; BENCHMARKS.md, "The miss path"): the real binary, seen from
//! `/proc` as an operator would see it with `top -H`. Its threads' names, their nice values,
//! and which of them spent the CPU of a round of misses, each a large file to fetch, parse,
//! deflate and digest. CPU time counted by the kernel (`schedstat`), not wall time: the test
//! does not depend on the machine's speed.

use std::collections::HashMap;

use robotsd::fetch_runtime::DEFAULT_NICE;

use crate::support::*;

/// What the kernel says of one thread of a process.
#[derive(Debug, Clone)]
struct Thread {
    name: String,
    nice: i32,
    /// Nanoseconds it has run on a CPU.
    ran_ns: u64,
}

/// Every thread of `pid`, by thread id.
fn threads(pid: u32) -> HashMap<u32, Thread> {
    let mut found = HashMap::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("/proc") {
        let task = task.expect("a task").path();
        let tid: u32 = task.file_name().unwrap().to_str().unwrap().parse().unwrap();
        // A thread that ended since the listing has nothing left to read.
        let (Ok(stat), Ok(schedstat)) = (
            std::fs::read_to_string(task.join("stat")),
            std::fs::read_to_string(task.join("schedstat")),
        ) else {
            continue;
        };
        // `pid (comm) state ppid …`: the name may hold spaces and parentheses; nice is the
        // 19th field, the 17th after the name.
        let (head, rest) = stat.rsplit_once(')').expect("a stat line");
        let name = head.split_once('(').expect("a name").1.to_owned();
        let nice = rest.split_whitespace().nth(16).unwrap().parse().unwrap();
        let ran_ns = schedstat
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        found.insert(tid, Thread { name, nice, ran_ns });
    }
    found
}

/// The nice value of this test's own thread, which robotsd's API threads inherit.
fn own_nice() -> i32 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    let rest = stat.rsplit_once(')').unwrap().1;
    rest.split_whitespace().nth(16).unwrap().parse().unwrap()
}

/// The CPU the threads named (or not named) `robotsd-fetch` spent between two readings.
fn ran_between(before: &HashMap<u32, Thread>, after: &HashMap<u32, Thread>) -> (u64, u64) {
    let (mut fetch, mut rest) = (0, 0);
    for (tid, thread) in after {
        let earlier = before.get(tid).map_or(0, |t| t.ran_ns);
        let ran = thread.ran_ns.saturating_sub(earlier);
        if thread.name == "robotsd-fetch" {
            fetch += ran;
        } else {
            rest += ran;
        }
    }
    (fetch, rest)
}

/// A robots.txt of about 400 KB: a few milliseconds of parse, deflate and SHA-256 each time.
fn large_file() -> String {
    let mut robots = String::from("User-agent: *\n");
    for n in 0..16_000 {
        robots.push_str(&format!("Disallow: /private/{n}/\n"));
    }
    robots
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misses_are_fetched_parsed_and_kept_on_threads_run_after_the_api() {
    let body = large_file();
    let mut origins = Vec::new();
    for host in 2..14 {
        let body = body.clone();
        origins.push(origin_on(&format!("127.0.0.{host}"), move || ok(&body)).await);
    }
    let robotsd = Robotsd::start(&["--allow-private-networks"], false).await;
    // One fetch worker a core, as many as the API has; a thread that has not yet run its start
    // (a busy machine) is waited for.
    let cores = std::thread::available_parallelism().unwrap().get();
    let lowered = |found: &HashMap<u32, Thread>| {
        let fetch = found.values().filter(|t| t.name == "robotsd-fetch");
        fetch.clone().count() >= cores && fetch.clone().all(|t| t.nice == i32::from(DEFAULT_NICE))
    };
    assert!(eventually(|| lowered(&threads(robotsd.pid()))).await);
    let started = threads(robotsd.pid());
    assert!(lowered(&started), "{started:?}");
    // The API's threads keep the process's priority.
    let api = started.values().filter(|t| t.name != "robotsd-fetch");
    assert!(api.clone().all(|t| t.nice == own_nice()), "{started:?}");

    let client = reqwest::Client::new();
    for origin in &origins {
        let answer = json_of(
            client
                .get(robotsd.url(&format!(
                    "/v1/check?url={}&ua=bot",
                    origin.url("/private/7/x")
                )))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(answer["robots"]["cache"], "miss", "{answer}");
        assert_eq!(answer["allowed"], false, "{answer}");
        assert_eq!(origin.hits(), 1);
    }
    let after = threads(robotsd.pid());
    let (fetch, rest) = ran_between(&started, &after);
    // Twelve fetches, parses, deflates and digests of 400 KB on the fetch threads; twelve
    // small requests answered on the API's.
    assert!(
        fetch > rest,
        "the fetch threads ran {fetch} ns, the others {rest} ns"
    );
    // Every thread that fetched (tokio's blocking threads are named alike) was lowered.
    assert!(
        after
            .values()
            .filter(|t| t.name == "robotsd-fetch")
            .all(|t| t.nice == i32::from(DEFAULT_NICE)),
        "{after:?}"
    );
}

#[tokio::test]
async fn fetch_nice_zero_runs_the_fetches_at_the_apis_priority() {
    let robotsd = Robotsd::start(&["--fetch-nice", "0"], false).await;
    let named = |found: &HashMap<u32, Thread>| found.values().any(|t| t.name == "robotsd-fetch");
    assert!(eventually(|| named(&threads(robotsd.pid()))).await);
    let found = threads(robotsd.pid());
    assert!(found.values().all(|t| t.nice == own_nice()), "{found:?}");
}
