//! A fuzzer for the API's request side (issue 40): hostile request bodies and queries, drawn by
//! proptest ([`requests`]), sent to the real binary one at a time, and every answer held to what
//! the docs promise of it, not only to "no panic" ([`answers`]):
//!
//! - its status is one the OpenAPI document lists for the endpoint (less those that cannot
//!   happen here, and 500 and 504), and every problem, of the request or of an item, is
//!   problem+json with `type`, `title`, `detail` and its `status`;
//! - its size is within a stated function of the request: a check answer within 64 KiB besides
//!   its URL and agents, at most 8 agents of 256 bytes echoed, a batch within 8 MiB besides its
//!   items' problems, each problem within what it may quote, and so on;
//! - it comes within [`MAX_SECONDS`], well inside the 30 s request time limit;
//! - the process's peak resident memory (`VmHWM`) grows over one request by at most
//!   [`max_growth_bytes`] of it, and over the run by at most [`MAX_RUN_GROWTH`], once the sites'
//!   files are held ([`warm`]).
//!
//! robotsd runs with `--max-request-work 500000`, a hundredth of the default, because the binary
//! the tests build is unoptimised: there a check against a file of distinct wildcard rules with
//! an 8 KB path costs about 6 µs a rule (12 s for 2,000,000), fifty times the release binary's.
//! At this budget a request takes at most about 3 s. The cost rules are the same whatever the
//! budget, so cases near it test them, and cases past it are refused before they start.
//!
//! Every fetch goes to [`sites::Sites`] through `--proxy`, whatever host the URL names: nothing
//! leaves this machine and robotsd sends no DNS query. robotsd runs without
//! `--allow-private-networks`, so it refuses loopback, private and metadata literals before
//! anything is sent, and the test checks that none of them reached the proxy.
//!
//! `ROBOTSD_FUZZ_CASES` sets the number of cases (default [`DEFAULT_CASES`], about 30 s on an
//! idle two-core machine). The seed is printed and `PROPTEST_RNG_SEED` replays it; a failing case
//! is shrunk, and its seed kept in `tests/service/request_fuzz.proptest-regressions`, which,
//! committed, replays it first on every run.

mod answers;
mod findings;
mod requests;
mod sites;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use proptest::prop_assert;
use proptest::test_runner::{
    Config, FileFailurePersistence, RngSeed, TestCaseError, TestError, TestRunner,
};
use serde_json::Value;

use crate::support::{Robotsd, peak_resident_bytes};
use requests::{Case, Endpoint};

/// Cases in a plain `cargo test` run.
const DEFAULT_CASES: u32 = 1_000;

/// The longest any request may take. robotsd answers within its `--request-timeout` (30 s)
/// whatever it is asked (a 504, or a batch's problems past its deadline); a request at this work
/// budget takes at most about 3 s unoptimised on an idle two-core machine. 20 s leaves a busy
/// machine room, and still catches a request whose work the budget does not bound.
const MAX_SECONDS: u64 = 20;

/// How much the process's peak resident memory may grow over the whole run: what one request
/// may take at once ([`max_growth_bytes`] of the largest: a 4 MiB page body, an 8 MiB batch
/// answer, a parsed file), with the allocator's pages and the handful of files the cache holds.
const MAX_RUN_GROWTH: u64 = 256 << 20;

/// How much one request may raise the process's peak resident memory: its body several times
/// over (read, parsed into a value, then into the request's types: 16 bytes a byte), its answer
/// twice (the buffer grows by doubling), and 32 MiB for a file fetched and parsed on the way (at
/// most 512,000 bytes), the allocator's and the runtime's buffers. Only a new peak moves it, so
/// this bounds the growth of the peak.
fn max_growth_bytes(case: &Case, answer_bytes: usize) -> u64 {
    (32 << 20) + 16 * case.body.len() as u64 + 2 * answer_bytes as u64
}

/// Fetches, parses and indexes every site's file once, in both matching modes, before the cases:
/// what a file costs is its site's side (`docs/behaviour.md`, the bounds on what sites write, and
/// the cache's charge for it), not the request's that happens to fetch it first. The first check
/// of the 20,000 wildcard rules builds their sieve, about 27 MB at its peak with the release
/// binary, which a per-request bound on what the request asks would wrongly count.
async fn warm(client: &reqwest::Client, robotsd: &Robotsd) {
    for host in sites::HOSTS {
        for mode in ["google", "rfc9309"] {
            let url = robotsd.url(&format!(
                "/v1/check?ua=a&url=http://{host}/warm&percent_decoding={mode}"
            ));
            client
                .get(url)
                .send()
                .await
                .expect("warm-up check answered");
        }
    }
}

#[test]
fn hostile_requests_get_bounded_answers() {
    // proptest builds a value tree of the strategy's whole (deeply nested) type, which in an
    // unoptimised build takes more than a test thread's 2 MiB of stack.
    let run = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(fuzz)
        .unwrap()
        .join();
    if let Err(panic) = run {
        std::panic::resume_unwind(panic);
    }
}

fn fuzz() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (robotsd, sites) = runtime.block_on(async {
        let sites = sites::Sites::start().await;
        let log = std::fs::File::create(log_path()).expect("log file");
        let robotsd = Robotsd::start_with(
            &["--proxy", &sites.proxy(), "--max-request-work", "500000"],
            false,
            log.into(),
        )
        .await;
        (robotsd, sites)
    });
    let client = reqwest::Client::builder()
        // Far past `MAX_SECONDS`: a request that hangs fails the test instead of stalling it.
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    runtime.block_on(warm(&client, &robotsd));
    let start_peak = peak_resident_bytes(robotsd.pid());

    let cases = std::env::var("ROBOTSD_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    let mut config = Config {
        cases,
        // Each step of shrinking is a request: a failure is shrunk within bounds.
        max_shrink_iters: 200,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "tests/service/request_fuzz.proptest-regressions",
        ))),
        ..Config::default()
    };
    if config.rng_seed == RngSeed::Random {
        config.rng_seed = RngSeed::Fixed(rand::random());
    }
    let seed = config.rng_seed;
    eprintln!("request_fuzz: {cases} cases, PROPTEST_RNG_SEED={seed} replays them");
    let summary = std::sync::Mutex::new(Summary::default());
    let started = Instant::now();
    let result = TestRunner::new(config).run(&requests::case(), |case| {
        runtime.block_on(one_case(&client, &robotsd, &case, &summary))
    });
    let grown = peak_resident_bytes(robotsd.pid()).saturating_sub(start_peak);
    let summary = summary.into_inner().unwrap();
    eprintln!(
        "request_fuzz: {:.1} s; slowest request {:.2} s, largest answer {} bytes, largest \
         item problem {} bytes, `parsed` {:.1} bytes a byte of its file at most, peak memory \
         +{} bytes at most in a request, +{grown} in all; statuses {:?}; problems {:?}; the \
         slowest: {}",
        started.elapsed().as_secs_f64(),
        summary.seconds,
        summary.answer_bytes,
        summary.item_problem_bytes,
        summary.parsed_ratio,
        summary.growth,
        summary.statuses,
        summary.problems,
        summary.slowest,
    );
    if let Err(error) = result {
        let log = std::fs::read_to_string(log_path()).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(10).collect();
        eprintln!("robotsd's last log lines, last first:\n{}", tail.join("\n"));
        match error {
            TestError::Fail(why, case) => {
                panic!("{why}\nseed {seed}; minimal failing case: {case:?}")
            }
            TestError::Abort(why) => panic!("aborted: {why}"),
        }
    }
    assert!(
        grown <= MAX_RUN_GROWTH,
        "peak resident memory grew by {grown} bytes over the run, past {MAX_RUN_GROWTH}"
    );
    for host in sites.seen() {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<std::net::IpAddr>() {
            assert!(
                robotsd::destination::classify(ip).is_none(),
                "a fetch from {host} reached the proxy: robotsd must refuse it"
            );
        }
        assert!(!host.ends_with("localhost"), "{host} reached the proxy");
    }
}

/// The largest figures of the run, and what it answered, printed at its end.
#[derive(Default)]
struct Summary {
    seconds: f64,
    /// The slowest case, cut.
    slowest: String,
    answer_bytes: usize,
    item_problem_bytes: usize,
    /// The largest `parsed` of `/v1/evaluate`, in bytes of JSON a byte of its file.
    parsed_ratio: f64,
    growth: u64,
    statuses: BTreeMap<u16, usize>,
    problems: BTreeMap<String, usize>,
}

async fn one_case(
    client: &reqwest::Client,
    robotsd: &Robotsd,
    case: &Case,
    summary: &std::sync::Mutex<Summary>,
) -> Result<(), TestCaseError> {
    let mut target = robotsd.url(case.endpoint.path());
    if !case.query.is_empty() {
        target = format!("{target}?{}", case.query);
    }
    let request = match case.endpoint {
        Endpoint::CheckGet => client.get(&target),
        _ => client
            .post(&target)
            .header("content-type", case.content_type)
            .body(case.body.clone()),
    };
    let peak_before = peak_resident_bytes(robotsd.pid());
    let sent = Instant::now();
    let response = match request.send().await {
        Ok(response) => response,
        // A body past its route's limit is refused from its head (`Content-Length`), and the
        // connection closed while the client may still be sending: the client may see that
        // rather than the 413 (`page.rs` reads the 413 from a head sent alone).
        Err(_) if case.body.len() > body_limit(case.endpoint) => return Ok(()),
        Err(e) => return Err(TestCaseError::fail(format!("no answer: {e:?}"))),
    };
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response
        .bytes()
        .await
        .map_err(|e| TestCaseError::fail(format!("answer cut: {e:?}")))?;
    let elapsed = sent.elapsed();
    let growth = peak_resident_bytes(robotsd.pid()).saturating_sub(peak_before);

    let show = || String::from_utf8_lossy(&body[..body.len().min(2_000)]).into_owned();
    prop_assert!(
        answers::allowed_statuses(case.endpoint).contains(&status),
        "status {status} from {:?}: {}",
        case.endpoint,
        show()
    );
    prop_assert!(
        elapsed <= Duration::from_secs(MAX_SECONDS),
        "answered in {elapsed:?}, past {MAX_SECONDS} s"
    );
    let wanted = if status >= 400 {
        "application/problem+json"
    } else {
        "application/json"
    };
    prop_assert!(content_type == wanted, "{status} as {content_type:?}");
    let answer: Value = serde_json::from_slice(&body)
        .map_err(|e| TestCaseError::fail(format!("status {status}, not JSON ({e}): {}", show())))?;
    let mut seen = answers::Seen::default();
    answers::check(case, status, &answer, body.len(), &mut seen)?;
    let max_growth = max_growth_bytes(case, body.len());
    prop_assert!(
        growth <= max_growth,
        "peak resident memory grew by {growth} bytes in one request, past {max_growth}"
    );

    let mut summary = summary.lock().unwrap();
    if elapsed.as_secs_f64() > summary.seconds {
        summary.seconds = elapsed.as_secs_f64();
        summary.slowest = format!("{case:?}").chars().take(600).collect();
    }
    summary.answer_bytes = summary.answer_bytes.max(body.len());
    summary.item_problem_bytes = summary.item_problem_bytes.max(seen.item_problem_bytes);
    summary.parsed_ratio = summary.parsed_ratio.max(seen.parsed_ratio);
    summary.growth = summary.growth.max(growth);
    *summary.statuses.entry(status).or_default() += 1;
    for kind in seen.problems {
        *summary.problems.entry(kind).or_default() += 1;
    }
    Ok(())
}

/// The body limit of `endpoint`'s route (`--max-body-bytes`, `--max-page-bytes`).
fn body_limit(endpoint: Endpoint) -> usize {
    match endpoint {
        Endpoint::Page => 4 << 20,
        _ => 1 << 20,
    }
}

/// Where robotsd's log goes, to be shown when a case fails.
fn log_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("request_fuzz.log")
}
