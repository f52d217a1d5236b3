//! The `robotsd` binary: see `robotsd --help`.

use std::process::ExitCode;

use robotsd::cli::{Cli, run};

/// Every request allocates and frees a few dozen small blocks (query, URL, answer, JSON body,
/// hyper and tower state); mimalloc's per-thread free lists make each of those several times
/// cheaper than glibc's malloc. BENCHMARKS.md has the before and after.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse_args();
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let code = run(
        cli,
        &mut stdin.lock(),
        &mut std::io::BufWriter::new(stdout.lock()),
        &mut std::io::stderr(),
    );
    ExitCode::from(code)
}
