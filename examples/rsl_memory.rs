//! Memory per RSL license document (BENCHMARKS.md, "RSL licenses"): the resident memory a
//! parsed document takes (10,000 copies held at once, so that allocator overhead counts) against
//! what the license cache charges for it (`RslDocument::heap_size`, its weigher), for documents
//! shaped like the spec's examples and a large one.
//!
//! Usage: cargo run --release --example rsl_memory

use robotsd::rsl::RslDocument;
use robotsd::rsl::document::Limits;

/// Resident bytes of this process (Linux: the second field of /proc/self/statm, in pages).
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

const NO_TRAINING: &str = r#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/">
    <license>
      <permits type="usage">search</permits>
      <prohibits type="usage">ai-train</prohibits>
    </license>
  </content>
</rsl>"#;

const SECTIONS: &str = r#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/*"><license><prohibits type="usage">all</prohibits></license></content>
  <content url="/articles/*">
    <license>
      <permits type="usage">ai-input search</permits>
      <permits type="user">non-commercial</permits>
      <permits type="geo">US CA</permits>
      <payment type="crawl"><amount currency="USD">0.015</amount>
        <standard>https://example.com/rates</standard></payment>
    </license>
  </content>
  <content url="/premium/*" server="https://license.example.com/api" encrypted="true">
    <license>
      <permits type="usage">ai-all</permits>
      <payment type="subscription"><custom>https://example.com/contact</custom></payment>
    </license>
  </content>
</rsl>"#;

fn large() -> String {
    let contents: String = (0..200)
        .map(|i| {
            format!(
                r#"<content url="/section-{i}/*"><license><permits type="usage">ai-input search</permits>
                <prohibits type="usage">ai-train</prohibits><payment type="use"><amount currency="EUR">0.0{i}</amount></payment>
                </license></content>"#
            )
        })
        .collect();
    format!(r#"<rsl xmlns="https://rslstandard.org/rsl">{contents}</rsl>"#)
}

fn main() {
    const COPIES: usize = 10_000;
    let large = large();
    let documents = [
        ("one", "prohibit AI training (one <content>)", NO_TRAINING),
        ("three", "three sections, payment, license server", SECTIONS),
        ("large", "200 sections", large.as_str()),
    ];
    // `rsl_memory NAME`: hold COPIES copies of one document and exit, for a heap profiler
    // (benches/rsl.sh runs it under valgrind's massif, which counts the allocator's overhead).
    if let Some(only) = std::env::args().nth(1) {
        let (_, _, xml) = documents
            .iter()
            .find(|d| d.0 == only)
            .expect("one, three or large");
        let held: Vec<RslDocument> = (0..COPIES)
            .map(|_| RslDocument::parse(xml.as_bytes(), false, &Limits::default()).expect("RSL"))
            .collect();
        println!(
            "{} copies, {} bytes charged each",
            held.len(),
            held[0].heap_size()
        );
        return;
    }
    println!(
        "| document | bytes | <content> | resident per document (measured) | charged by the cache |"
    );
    println!("| --- | --- | --- | --- | --- |");
    for (_, name, xml) in documents {
        let limits = Limits::default();
        let before = resident_bytes();
        let held: Vec<RslDocument> = (0..COPIES)
            .map(|_| RslDocument::parse(xml.as_bytes(), false, &limits).expect("valid RSL"))
            .collect();
        let measured = resident_bytes().saturating_sub(before) / COPIES;
        let charged = held[0].heap_size();
        println!(
            "| {name} | {} | {} | {measured} | {charged} |",
            xml.len(),
            held[0].contents.len()
        );
        drop(held);
    }
}
