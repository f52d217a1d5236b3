//! Checks one path against one robots.txt, both read from files, a given number of times: the
//! workload `benches/worst_case.py` counts in instructions
//! (`valgrind --tool=callgrind --toggle-collect=*measured*`), so that only the checks are
//! counted, not the parse or the first check, which builds the index.
//!
//! `check_case <robots.txt> <path file> <checks> [google|rfc9309]`

use robotsd_engine::{PercentDecoding, RobotsTxt};

/// The checks counted: each a check of `path` under `robots` for one agent.
#[inline(never)]
fn measured(robots: &RobotsTxt, path: &str, checks: usize, decoding: PercentDecoding) -> usize {
    (0..checks)
        .map(|_| {
            let path = std::hint::black_box(path);
            usize::from(robots.check_path_with(&["FooBot"], path, decoding).allowed)
        })
        .sum()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, robots, path, checks, rest @ ..] = args.as_slice() else {
        eprintln!("usage: check_case <robots.txt> <path file> <checks> [google|rfc9309]");
        std::process::exit(2);
    };
    let body = std::fs::read(robots).expect("robots.txt");
    let path = std::fs::read_to_string(path).expect("path");
    let checks: usize = checks.parse().expect("a number of checks");
    let decoding = match rest.first().map(String::as_str) {
        Some("rfc9309") => PercentDecoding::Rfc9309,
        _ => PercentDecoding::Google,
    };
    let robots = RobotsTxt::parse(&body);
    // The first check builds the set's index: not counted.
    let first = robots.check_path_with(&["FooBot"], &path, decoding).allowed;
    let allowed = measured(&robots, &path, checks, decoding);
    println!("{} {allowed}", u8::from(first));
}
