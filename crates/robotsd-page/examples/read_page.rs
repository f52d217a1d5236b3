//! Reads one page `N` times (for instruction counts: `valgrind --tool=callgrind`), from a file of
//! HTML: `cargo run --release -p robotsd-page --example read_page -- page.html 100`.

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("an HTML file");
    let rounds: usize = args.next().map_or(1, |n| n.parse().expect("a count"));
    let html = std::fs::read_to_string(path).expect("readable UTF-8");
    let headers = [
        ("Content-Type", "text/html; charset=utf-8"),
        ("X-Robots-Tag", "noimageindex"),
        ("X-Robots-Tag", "ExampleBot: nofollow"),
        ("Content-Usage", "train-ai=n, search=y"),
    ];
    let mut rules = 0;
    for _ in 0..rounds {
        rules += robotsd_page::page::read(&headers, Some(&html), &["ExampleBot"], 0)
            .rules
            .len();
    }
    println!("{rules} rules");
}
