//! Runs the benchmark checks a fixed number of times: a workload for instruction counting
//! (`valgrind --tool=callgrind`), which is repeatable where wall-clock timing on a shared
//! machine is not.
#[path = "../benches/common/mod.rs"]
mod common;

use robotsd_engine::{PercentDecoding, RobotsTxt};

fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    let rounds: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100);
    let (body, path) = match which.as_str() {
        "adversarial" => common::adversarial(),
        "shifted" => common::adversarial_shifted(),
        "repeated" => common::repeated_wildcard(),
        "distinct" => common::distinct_wildcards(),
        "late" => common::distinct_late_failures(),
        "rfc" => common::distinct_wildcards_rfc(),
        "rfc-late" => common::distinct_late_failures_rfc(),
        "late-segments" | "late-segments-rfc" => common::late_segments(4_090),
        "late-segments-full" => common::late_segments(usize::MAX),
        _ => (
            common::corpus_file(common::TYPICAL),
            "/products/processors/cortex-a/cortex-a78".into(),
        ),
    };
    let robots = RobotsTxt::parse(&body);
    // The Google mode through `check_path`, as before the RFC files were added, so that its
    // figures compare with older ones; `typical-rfc` is the typical file in the RFC mode.
    let rfc = matches!(
        which.as_str(),
        "rfc" | "rfc-late" | "typical-rfc" | "late-segments-rfc"
    );
    let mut allowed = 0;
    for _ in 0..rounds {
        let path = std::hint::black_box(path.as_str());
        let verdict = if rfc {
            robots.check_path_with(&["FooBot"], path, PercentDecoding::Rfc9309)
        } else {
            robots.check_path(&["FooBot"], path)
        };
        allowed += usize::from(verdict.allowed);
    }
    println!("{allowed}");
}
