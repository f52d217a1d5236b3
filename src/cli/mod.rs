//! The command line: `robotsd eval` (the offline engine tool). Parsing of arguments lives here;
//! what each command does lives in its own module.

mod eval;

use std::io::{BufRead, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use eval::{EvalError, EvalRequest, EvalResult, GroupJson, RuleJson, evaluate_request};

/// robots.txt as a service: may this user-agent fetch this URL?
#[derive(Debug, Parser)]
#[command(name = "robotsd", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Evaluate URLs against a robots.txt offline, exactly as the engine decides (no network).
    ///
    /// Agents are used verbatim (pass product tokens such as `Googlebot`, not whole User-Agent
    /// headers) and URLs as given, like the reference's `robots_main`. Prints one JSON line per
    /// URL.
    Eval(EvalArgs),
}

/// Arguments of `robotsd eval`.
#[derive(Debug, clap::Args)]
pub struct EvalArgs {
    /// The robots.txt file to evaluate against.
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "jsonl",
        conflicts_with = "jsonl"
    )]
    pub robots: Option<PathBuf>,
    /// A user-agent product token; repeat it for a crawler that answers to several.
    #[arg(long = "ua", value_name = "AGENT", required_unless_present = "jsonl")]
    pub user_agents: Vec<String>,
    /// The URLs (or paths) to check.
    #[arg(
        value_name = "URL",
        required_unless_present = "jsonl",
        conflicts_with = "jsonl"
    )]
    pub urls: Vec<String>,
    /// Read requests as JSON lines on standard input and answer one JSON line per URL, in order
    /// (the format is described in README.md).
    #[arg(long, conflicts_with = "user_agents")]
    pub jsonl: bool,
}

/// Runs a parsed command line; returns the process exit code (0 success, 2 usage or file error).
pub fn run(
    cli: Cli,
    stdin: &mut dyn BufRead,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let result = match cli.command {
        Command::Eval(args) if args.jsonl => eval::run_jsonl(stdin, stdout),
        Command::Eval(args) => eval::run_file(&args, stdout),
    };
    match result {
        Ok(()) => 0,
        Err(error) => {
            // Nothing more useful can be done if stderr itself is closed.
            let _ = writeln!(stderr, "robotsd: {error}");
            2
        }
    }
}
