//! Parses every corpus file many times: a workload for profilers (`perf record`).
fn main() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/robots");
    let bodies: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .expect("corpus")
        .map(|e| std::fs::read(e.expect("entry").path()).expect("file"))
        .collect();
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let mut rules = 0;
    for _ in 0..rounds {
        for body in &bodies {
            rules += robotsd_engine::RobotsTxt::parse(body).indexed_rules();
        }
    }
    println!("{rules}");
}
