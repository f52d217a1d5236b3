//! Engine benchmarks (BENCHMARKS.md): parse throughput on the corpus, and one check against an
//! already parsed typical file, the 500 KiB file, the adversarial wildcard cases and the files of
//! many wildcard rules.

mod common;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use robotsd_engine::{PercentDecoding, RobotsTxt, tokenizer};

fn parse(c: &mut Criterion) {
    let corpus = common::corpus();
    let bytes: usize = corpus.iter().map(|(_, b)| b.len()).sum();
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(20);
    group.bench_function("corpus", |b| {
        b.iter(|| {
            for (_, body) in &corpus {
                black_box(RobotsTxt::parse(black_box(body)));
            }
        })
    });
    // The tokenizer alone, calling back per line as the reference's ParseRobotsTxt calls its
    // handler: the like-for-like comparison with the reference's parse figure.
    group.bench_function("corpus_tokenize", |b| {
        b.iter(|| {
            let mut directives = 0usize;
            for (_, body) in &corpus {
                tokenizer::for_each_line(black_box(body), |line| {
                    directives += usize::from(line.directive.is_some());
                });
            }
            directives
        })
    });
    let typical = common::corpus_file(common::TYPICAL);
    group.throughput(Throughput::Bytes(typical.len() as u64));
    group.sample_size(100);
    group.bench_function("typical", |b| {
        b.iter(|| RobotsTxt::parse(black_box(&typical)))
    });
    group.finish();
}

/// Paths that exercise allowed and disallowed answers on the typical file.
const TYPICAL_PATHS: [&str; 6] = [
    "/",
    "/products/processors/cortex-a/cortex-a78",
    "/ja/includes/header.html",
    "/search?q=cortex",
    "/-/media/files/pdf/manual.pdf",
    "/zh-TW/products/silicon-ip-cpu",
];

fn check(c: &mut Criterion) {
    let mut group = c.benchmark_group("check");
    let typical = RobotsTxt::parse(&common::corpus_file(common::TYPICAL));
    for (i, path) in TYPICAL_PATHS.iter().enumerate() {
        group.bench_function(format!("typical/{i}"), |b| {
            b.iter(|| {
                black_box(typical.check_path(black_box(&["Googlebot"]), black_box(path))).allowed
            })
        });
    }
    let large_body = common::corpus_file(common::LARGE);
    let large = RobotsTxt::parse(&large_body[..common::BODY_LIMIT.min(large_body.len())]);
    for (i, path) in [
        "/en/cloud/saas/r13-update18a/index.html",
        "/en/java/javase/11/docs/api/",
        "/",
    ]
    .iter()
    .enumerate()
    {
        group.bench_function(format!("large/{i}"), |b| {
            b.iter(|| {
                black_box(large.check_path(black_box(&["Googlebot"]), black_box(path))).allowed
            })
        });
    }
    // The first check of a set also builds that set's rule index.
    let typical_body = common::corpus_file(common::TYPICAL);
    group.bench_function("typical/first", |b| {
        b.iter_batched(
            || RobotsTxt::parse(&typical_body),
            |robots| black_box(robots.check_path(&["Googlebot"], TYPICAL_PATHS[1]).allowed),
            criterion::BatchSize::SmallInput,
        )
    });
    let (body, path) = common::adversarial();
    let adversarial = RobotsTxt::parse(&body);
    group.bench_function("adversarial", |b| {
        b.iter(|| {
            black_box(adversarial.check_path(black_box(&["FooBot"]), black_box(&path))).allowed
        })
    });
    let (body, path) = common::adversarial_shifted();
    let shifted = RobotsTxt::parse(&body);
    group.bench_function("adversarial_shifted", |b| {
        b.iter(|| black_box(shifted.check_path(black_box(&["FooBot"]), black_box(&path))).allowed)
    });
    // Files of many rules beginning `/*` against a 1,000-byte path (issue 40, BENCHMARKS.md
    // "The engine's worst case per check"): each check was milliseconds before.
    group.sample_size(10);
    for (name, (body, path)) in [
        ("many_rules/repeated", common::repeated_wildcard()),
        ("many_rules/distinct", common::distinct_wildcards()),
        ("many_rules/late", common::distinct_late_failures()),
    ] {
        let robots = RobotsTxt::parse(&body);
        group.bench_function(name, |b| {
            b.iter(|| {
                black_box(robots.check_path(black_box(&["FooBot"]), black_box(&path))).allowed
            })
        });
    }
    // The RFC 9309 mode on such files with one pattern its form changes: the index of RFC forms.
    for (name, (body, path)) in [
        (
            "many_rules/distinct_rfc9309",
            common::distinct_wildcards_rfc(),
        ),
        (
            "many_rules/late_rfc9309",
            common::distinct_late_failures_rfc(),
        ),
    ] {
        let robots = RobotsTxt::parse(&body);
        group.bench_function(name, |b| {
            b.iter(|| {
                let path = black_box(path.as_str());
                let verdict = robots.check_path_with(&["FooBot"], path, PercentDecoding::Rfc9309);
                black_box(verdict).allowed
            })
        });
    }
    group.finish();
}

criterion_group!(benches, parse, check);
criterion_main!(benches);
