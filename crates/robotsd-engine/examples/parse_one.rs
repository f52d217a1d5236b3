//! Parses one file many times: a workload for profilers (`perf record`).
fn main() {
    let path = std::env::args().nth(1).expect("a robots.txt file");
    let rounds: usize = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let body = std::fs::read(path).expect("file");
    let mut n = 0;
    for _ in 0..rounds {
        n += robotsd_engine::RobotsTxt::parse(std::hint::black_box(&body)).indexed_rules();
    }
    println!("{n}");
}
