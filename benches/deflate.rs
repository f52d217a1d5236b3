//! The deflate of a cold origin's body (BENCHMARKS.md, "The miss path"): every robots.txt robotsd
//! fetches is kept deflated, for `/v1/robots` and for the fleet's store, so each miss pays one
//! `deflate_body`. Measured per file over the corpus (`../shared/corpus/robots`, or
//! `ROBOTSD_SHARED_DIR`), all of it and the files under 1 KiB alone, where a compressor's fixed
//! cost (its reset, its tables) is most of the work.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use robotsd::store::record::deflate_body;

fn corpus() -> Vec<Vec<u8>> {
    let shared = std::env::var_os("ROBOTSD_SHARED_DIR")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    let dir = shared.join("corpus/robots");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {} is required: {e}", dir.display()))
        .map(|entry| entry.expect("dir entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|path| std::fs::read(path).expect("corpus file"))
        .collect()
}

fn deflate(c: &mut Criterion) {
    let all = corpus();
    let small: Vec<Vec<u8>> = all.iter().filter(|f| f.len() < 1024).cloned().collect();
    let mut group = c.benchmark_group("deflate_body");
    group.sample_size(20);
    for (name, files) in [("corpus", &all), ("corpus_under_1KiB", &small)] {
        // One element a file: criterion's time per element is the time per miss.
        group.throughput(Throughput::Elements(files.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| {
                files
                    .iter()
                    .map(|file| deflate_body(black_box(file)).len())
                    .sum::<usize>()
            })
        });
    }
    group.finish();
    let (raw, deflated) = all.iter().fold((0, 0), |(raw, deflated), file| {
        (raw + file.len(), deflated + deflate_body(file).len())
    });
    println!(
        "deflate_body: {} files, {raw} bytes -> {deflated} ({:.3} of their size)",
        all.len(),
        deflated as f64 / raw as f64
    );
}

criterion_group!(benches, deflate);
criterion_main!(benches);
