//! The `robotsd` binary: see `robotsd --help`.

use std::process::ExitCode;

use clap::Parser;
use robotsd::cli::{Cli, run};

fn main() -> ExitCode {
    let cli = Cli::parse();
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
