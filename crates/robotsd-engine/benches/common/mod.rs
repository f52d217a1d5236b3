//! Shared by the benchmarks: the corpus location and the fixtures named in BENCHMARKS.md.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared` beside the checkout, or `ROBOTSD_SHARED_DIR`.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("ROBOTSD_SHARED_DIR")
        // Empty means unset, as for every ROBOTSD_* variable.
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

/// Every corpus file's bytes, in name order.
pub fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = shared_dir().join("corpus/robots");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus {} is required: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).expect("corpus file"))
        })
        .collect()
}

/// One corpus file's bytes.
pub fn corpus_file(name: &str) -> Vec<u8> {
    std::fs::read(shared_dir().join("corpus/robots").join(name)).expect("corpus file")
}

/// The "typical" file: 5 KB, about 100 rules (www.arm.com).
pub const TYPICAL: &str = "www.arm.com-cd592869";
/// The large file: docs.oracle.com cut at the service's 500 KiB limit (about 17k rules).
pub const LARGE: &str = "docs.oracle.com-5fc39574";
/// The service's body limit (SEMANTICS.md §3).
pub const BODY_LIMIT: usize = 512_000;

/// The adversarial case: one 16 KB `*a*a…` rule against a 16 KB path.
pub fn adversarial() -> (Vec<u8>, String) {
    let mut body = b"user-agent: *\ndisallow: /".to_vec();
    body.extend(b"*a".repeat(8_000));
    body.extend(b"b\n");
    let path = format!("/{}", "a".repeat(16_000));
    (body, path)
}

/// A second adversarial shape: thousands of two-byte segments, each found one byte late
/// (`*ab*ab…` against `xabxab…`), so that no segment is found at its first try.
pub fn adversarial_shifted() -> (Vec<u8>, String) {
    let mut body = b"user-agent: *\ndisallow: /".to_vec();
    body.extend(b"*ab".repeat(5_333));
    body.extend(b"c\n");
    let path = format!("/{}", "xab".repeat(5_333));
    (body, path)
}
