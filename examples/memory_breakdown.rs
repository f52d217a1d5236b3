//! Heap bytes of every corpus file parsed, by part of the parsed value.
fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/robots");
    let mut totals: Vec<(&str, usize)> = Vec::new();
    let (mut bytes, mut shallow) = (0, 0);
    for entry in std::fs::read_dir(dir).expect("corpus") {
        let body = std::fs::read(entry.expect("entry").path()).expect("file");
        bytes += body.len();
        let robots = robotsd::robots::RobotsTxt::parse(&body);
        shallow += std::mem::size_of_val(&robots);
        for (i, (name, n)) in robots.heap_breakdown().into_iter().enumerate() {
            if totals.len() <= i {
                totals.push((name, 0));
            }
            totals[i].1 += n;
        }
    }
    let heap: usize = totals
        .iter()
        .filter(|t| !t.0.starts_with('('))
        .map(|t| t.1)
        .sum();
    println!(
        "corpus bytes {bytes}; heap {heap} + structs {shallow} = {}",
        heap + shallow
    );
    for (name, n) in totals {
        println!("{name:>14} {n:>10}");
    }
}
