//! Memory of every corpus file parsed and held at once (BENCHMARKS.md): the heap each parsed
//! value accounts for, by part, and the process's resident memory as a cross-check (it also
//! counts allocator overhead).

fn resident_bytes() -> usize {
    // Linux: the second field of /proc/self/statm is resident pages.
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

fn main() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/robots");
    let bodies: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .expect("corpus")
        .map(|e| std::fs::read(e.expect("entry").path()).expect("file"))
        .collect();
    let bytes: usize = bodies.iter().map(Vec::len).sum();

    let before = resident_bytes();
    let parsed: Vec<robotsd_engine::RobotsTxt> = bodies
        .iter()
        .map(|b| robotsd_engine::RobotsTxt::parse(b))
        .collect();
    let after_parse = resident_bytes();
    for robots in &parsed {
        std::hint::black_box(robots.check_path(&["Googlebot"], "/some/path?q=1"));
    }
    let after_check = resident_bytes();

    let mut totals: Vec<(&str, usize)> = Vec::new();
    let structs = parsed.len() * std::mem::size_of::<robotsd_engine::RobotsTxt>();
    for robots in &parsed {
        for (i, (name, n)) in robots.heap_breakdown().into_iter().enumerate() {
            if totals.len() <= i {
                totals.push((name, 0));
            }
            totals[i].1 += n;
        }
    }
    let index: usize = totals
        .iter()
        .filter(|t| t.0.starts_with("index"))
        .map(|t| t.1)
        .sum();
    let heap: usize = parsed.iter().map(|r| r.heap_size()).sum();
    let ratio = |n: usize| n as f64 / bytes as f64;
    println!("files: {}, corpus bytes: {bytes}", parsed.len());
    println!(
        "accounted, parsed (no index built yet): {} ({:.2}x)",
        heap - index + structs,
        ratio(heap - index + structs)
    );
    println!(
        "accounted, every set's index built (what heap_size() charges): {} ({:.2}x)",
        heap + structs,
        ratio(heap + structs)
    );
    println!(
        "resident growth: after parsing all {} ({:.2}x); after one Googlebot check each {} ({:.2}x)",
        after_parse - before,
        ratio(after_parse - before),
        after_check - before,
        ratio(after_check - before)
    );
    println!("by part:");
    for (name, n) in totals {
        println!("{name:>22} {n:>10}");
    }
}
