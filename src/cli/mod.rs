//! The command line: `robotsd eval` (the offline engine tool). Parsing of arguments lives here;
//! what each command does lives in its own module.

mod eval;

use std::io::{BufRead, Write};
use std::sync::Arc;

use crate::config::{LogFormat, ServeArgs};
use std::path::PathBuf;

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

pub use eval::{EvalError, EvalRequest, EvalResult, evaluate_request};

/// robots.txt as a service: may this user-agent fetch this URL?
///
/// Without a subcommand, robotsd serves (the same as `robotsd serve`).
#[derive(Debug, Parser)]
#[command(name = "robotsd", version, about, long_about = None, args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// What to do (default: serve).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Settings for serving without the `serve` subcommand.
    #[command(flatten)]
    pub serve: crate::config::ServeArgs,
}

impl Cli {
    /// Parses the process's arguments and `ROBOTSD_*` variables, exiting with clap's message
    /// on an error. A variable set to the empty string counts as unset, as twelve-factor
    /// services read them: Helm and Compose render an unset value as an empty one.
    pub fn parse_args() -> Cli {
        let matches = empty_env_unset(Cli::command()).get_matches();
        Cli::from_arg_matches(&matches).unwrap_or_else(|error| error.exit())
    }
}

/// `command` with every argument whose variable is set to the empty string reading it as unset
/// (clap reads each variable when the argument is built, and would take the empty value).
fn empty_env_unset(command: clap::Command) -> clap::Command {
    let names: Vec<String> = command
        .get_subcommands()
        .map(|sub| sub.get_name().to_owned())
        .collect();
    let mut command = command.mut_args(|arg| {
        let empty = arg
            .get_env()
            .and_then(std::env::var_os)
            .is_some_and(|value| value.is_empty());
        if empty {
            arg.env(clap::builder::Resettable::Reset)
        } else {
            arg
        }
    });
    for name in names {
        command = command.mut_subcommand(name, empty_env_unset);
    }
    command
}

/// The subcommands.
#[derive(Debug, Subcommand)]
// Parsed once per process: the size of `Serve` does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Serve the HTTP API (the default): `/v1/check`, `/v1/robots`, `/v1/evaluate`, probes,
    /// metrics and the OpenAPI document. Every flag can also be set by its `ROBOTSD_*` variable.
    Serve(crate::config::ServeArgs),
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
    /// The robots.txt file to evaluate against (`-`: standard input).
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
    /// How percent-encoded unreserved characters (`%70` for `p`) compare: `google` (as Google's
    /// reference: not decoded) or `rfc9309` (decoded, as RFC 9309 §2.2.2). With `--jsonl`, the
    /// default of records that do not say.
    #[arg(long, value_enum, value_name = "MODE", default_value = "google")]
    pub percent_decoding: crate::config::DecodingName,
}

/// Runs a parsed command line; returns the process exit code (0 success, 2 usage or file error).
pub fn run(
    cli: Cli,
    stdin: &mut dyn BufRead,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let result = match cli.command {
        Some(Command::Eval(args)) if args.jsonl => eval::run_jsonl(&args, stdin, stdout),
        Some(Command::Eval(args)) => eval::run_file(&args, stdin, stdout),
        Some(Command::Serve(args)) => return serve(&args, stderr),
        None => return serve(&cli.serve, stderr),
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

/// Log lines queued for stderr at most (about 2 MB of typical lines); past that, lines are dropped
/// and counted instead of blocking.
const LOG_QUEUE_LINES: usize = 8_192;

/// How long the process waits, once the drain is over, for work left on the runtime's blocking
/// threads: a moment for what ends at once, never the length of a parse or a stuck lookup.
const BLOCKING_SHUTDOWN: std::time::Duration = std::time::Duration::from_millis(250);

/// Validates the settings, starts the service and serves until SIGTERM or SIGINT.
fn serve(args: &ServeArgs, stderr: &mut dyn Write) -> u8 {
    let settings = match args.settings() {
        Ok(settings) => settings,
        Err(error) => {
            let _ = writeln!(stderr, "robotsd: invalid settings: {error}");
            return 2;
        }
    };
    let filter = match tracing_subscriber::EnvFilter::try_new(&settings.log.level) {
        Ok(filter) => filter,
        Err(error) => {
            let _ = writeln!(stderr, "robotsd: invalid --log-level: {error}");
            return 2;
        }
    };
    // Lines go to stderr from a thread of their own, through a bounded queue that drops lines
    // (counted in robotsd_log_lines_dropped_total) rather than block: a log reader that stalls,
    // or a full pipe, must never stall requests or the probes. `_flush` writes what is queued
    // when serving ends.
    let (writer, _flush) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .thread_name("robotsd-log")
        .finish(std::io::stderr());
    let dropped = writer.error_counter();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(writer);
    // A second initialisation (in tests) keeps the first subscriber.
    let _ = match settings.log.format {
        LogFormat::Json => subscriber.json().try_init(),
        LogFormat::Text => subscriber.try_init(),
    };
    // As many fetch threads as API workers (tokio's default), run after them by the kernel.
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let fetches = match crate::fetch_runtime::FetchThreads::start(workers, settings.fetch_nice) {
        Ok(fetches) => fetches,
        Err(error) => {
            let _ = writeln!(stderr, "robotsd: cannot start the fetch threads: {error}");
            return 1;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = writeln!(stderr, "robotsd: cannot start the runtime: {error}");
            return 1;
        }
    };
    let result = runtime.block_on(async {
        let state = crate::server::state_fetching_on(&settings, fetches.runtime())?;
        match fetches.not_lowered() {
            0 => tracing::debug!(workers, nice = fetches.nice(), "fetch threads started"),
            threads => tracing::warn!(
                threads,
                nice = fetches.nice(),
                "the fetch threads' nice value could not be set (only Linux has one per thread): \
                 they run at the API's priority, and a storm of new origins slows cached checks"
            ),
        }
        tokio::spawn(crate::server::reload_on_hangup(
            state.api_tokens.clone(),
            state.signing.clone(),
        ));
        state
            .metrics
            .count_dropped_log_lines(Arc::new(move || dropped.dropped_lines() as u64));
        let listener = tokio::net::TcpListener::bind(settings.listen).await?;
        let admin = match settings.admin_listen {
            Some(addr) => Some(tokio::net::TcpListener::bind(addr).await?),
            None => None,
        };
        if !settings.operator_identified {
            tracing::warn!(
                "no operator contact: the sites robotsd fetches robots.txt from see only the \
                 project's address and cannot reach whoever runs this service; set \
                 --operator-contact (ROBOTSD_OPERATOR_CONTACT) to an https:// URL or mailto: address"
            );
        }
        match settings.admin_listen {
            Some(admin) => tracing::info!(listen = %settings.listen, %admin, "robotsd serving"),
            None => tracing::info!(listen = %settings.listen, "robotsd serving"),
        }
        if let Some(store) = &settings.store {
            // Never a credential: a URL without its userinfo, or the sentinels and master name.
            let redis = &store.redis.target;
            tracing::info!(%redis, "sharing origin state through the store");
        }
        crate::server::run(state, listener, admin, crate::server::shutdown_signal()).await
    });
    // Dropping a runtime waits for every task on its blocking threads; a license document still
    // being parsed (or a DNS lookup) must not keep the process past the drain, which has ended
    // by now: its result has no one left to go to.
    runtime.shutdown_timeout(BLOCKING_SHUTDOWN);
    fetches.shutdown(BLOCKING_SHUTDOWN);
    match result {
        Ok(()) => {
            tracing::info!("robotsd stopped");
            0
        }
        Err(error) => {
            let _ = writeln!(stderr, "robotsd: {error}");
            1
        }
    }
}
