use super::values::MIB;
use super::*;
use crate::fetch::DEFAULT_USER_AGENT;
use clap::{CommandFactory, FromArgMatches, Parser};
use ipnet::IpNet;
use url::Url;

const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);

#[derive(Debug, Parser)]
#[command(name = "t")]
struct T {
    #[command(flatten)]
    a: ServeArgs,
}

/// Parses `args` with every `env` removed, so the real environment cannot leak in.
pub(super) fn parse(args: &[&str]) -> Result<ServeArgs, clap::Error> {
    let command = T::command().mut_args(|arg| arg.env(None));
    let matches = command.try_get_matches_from(std::iter::once("t").chain(args.iter().copied()))?;
    ServeArgs::from_arg_matches(&matches)
}

pub(super) fn settings(args: &[&str]) -> Result<Settings, ConfigError> {
    parse(args).expect("arguments parse").settings()
}

#[test]
fn no_flags_yield_the_defaults() {
    let parsed = settings(&[]).expect("defaults are valid");
    let default = Settings::default();
    assert_eq!(parsed.listen, default.listen);
    assert_eq!(parsed.admin_listen, default.admin_listen);
    assert_eq!(parsed.fetch, default.fetch);
    assert_eq!(parsed.cache, default.cache);
    assert_eq!(
        parsed.destinations.allows_private_networks(),
        default.destinations.allows_private_networks()
    );
    assert_eq!(
        parsed.destinations.allow_cidrs(),
        default.destinations.allow_cidrs()
    );
    assert_eq!(
        parsed.destinations.deny_cidrs(),
        default.destinations.deny_cidrs()
    );
    assert_eq!(parsed.limits, default.limits);
    assert_eq!(parsed.log, default.log);
    assert_eq!(parsed.fetch_nice, default.fetch_nice);
}

#[test]
fn the_fetch_threads_nice_value_is_zero_to_nineteen() {
    assert_eq!(settings(&[]).unwrap().fetch_nice, 5);
    assert_eq!(settings(&["--fetch-nice", "0"]).unwrap().fetch_nice, 0);
    assert_eq!(settings(&["--fetch-nice", "19"]).unwrap().fetch_nice, 19);
    for refused in ["20", "-1", "high"] {
        let flag = format!("--fetch-nice={refused}");
        let message = parse(&[&flag]).unwrap_err().to_string();
        assert!(message.contains("--fetch-nice"), "{refused}: {message}");
    }
}

#[test]
fn defaults_are_the_documented_numbers() {
    let s = Settings::default();
    assert_eq!(s.listen, "0.0.0.0:8080".parse().unwrap());
    assert_eq!(s.fetch.user_agent, DEFAULT_USER_AGENT);
    assert_eq!(s.fetch.connect_timeout, Duration::from_secs(5));
    assert_eq!(s.fetch.total_timeout, Duration::from_secs(10));
    assert_eq!(s.fetch.max_body_bytes, 512_000);
    assert_eq!(s.fetch.max_redirects, 5);
    assert_eq!(s.fetch.proxy, None);
    assert_eq!(s.cache.capacity_bytes, 256 * MIB);
    let p = &s.cache.policy;
    assert_eq!(p.default_lifetime, 24 * HOUR);
    assert_eq!(p.min_lifetime, MINUTE);
    assert_eq!(p.max_lifetime, 24 * HOUR);
    assert_eq!(p.disallow_window, 12 * HOUR);
    assert_eq!(p.last_copy_window, 30 * 24 * HOUR);
    assert_eq!(p.retry_min, MINUTE);
    assert_eq!(p.retry_max, HOUR);
    assert!(!s.destinations.allows_private_networks());
    assert_eq!(s.limits.max_url_bytes, 8192);
    assert_eq!(s.limits.max_user_agent_bytes, 1024);
    assert_eq!(s.limits.max_agents, 32);
    assert_eq!(s.limits.max_agent_names, 16);
    assert_eq!(s.limits.max_request_work, 50_000_000);
    assert_eq!(s.limits.max_batch, 1000);
    assert_eq!(s.limits.max_body_bytes, 1024 * 1024);
    assert_eq!(s.limits.request_timeout, Duration::from_secs(30));
    assert_eq!(s.limits.concurrency_limit, 1024);
    assert_eq!(s.limits.batch_concurrency, 16);
    assert_eq!(s.limits.shutdown_grace, Duration::from_secs(25));
    assert_eq!(s.log.format, LogFormat::Text);
    assert_eq!(s.log.level, "info");
}

#[test]
fn flags_set_every_field() {
    let s = settings(&[
        "--listen=127.0.0.1:9000",
        "--admin-listen=127.0.0.1:9001",
        "--fetch-user-agent=MyBot/1.0",
        "--connect-timeout=2s",
        "--fetch-timeout=3s",
        "--max-robots-bytes=1MiB",
        "--max-redirects=0",
        "--proxy=http://user:pw@proxy.internal:3128",
        "--cache-capacity=1GiB",
        "--default-lifetime=2h",
        "--min-lifetime=30s",
        "--max-lifetime=7days",
        "--disallow-window=1h",
        "--last-copy-window=2days",
        "--retry-min=10s",
        "--retry-max=5m",
        "--allow-private-networks",
        "--allow-cidr=10.0.0.0/8",
        "--deny-cidr=10.1.0.0/16,10.2.0.0/16",
        "--max-url-bytes=4096",
        "--max-user-agent-bytes=512",
        "--max-batch=10",
        "--max-body-bytes=64KiB",
        "--max-agents=4",
        "--max-agent-names=2",
        "--max-request-work=1000",
        "--max-page-bytes=8MiB",
        "--request-timeout=1m",
        "--concurrency-limit=8",
        "--batch-concurrency=2",
        "--shutdown-grace=0",
        "--log-format=json",
        "--log-level=warn,robotsd=debug",
    ])
    .expect("valid");
    assert_eq!(s.listen, "127.0.0.1:9000".parse().unwrap());
    assert_eq!(s.admin_listen, Some("127.0.0.1:9001".parse().unwrap()));
    assert_eq!(s.fetch.user_agent, "MyBot/1.0");
    assert_eq!(s.fetch.connect_timeout, Duration::from_secs(2));
    assert_eq!(s.fetch.total_timeout, Duration::from_secs(3));
    assert_eq!(s.fetch.max_body_bytes, 1024 * 1024);
    assert_eq!(s.fetch.max_redirects, 0);
    assert_eq!(
        s.fetch.proxy.as_ref().map(Url::as_str),
        Some("http://user:pw@proxy.internal:3128/")
    );
    assert_eq!(s.cache.capacity_bytes, 1024 * MIB);
    assert_eq!(s.cache.policy.default_lifetime, 2 * HOUR);
    assert_eq!(s.cache.policy.min_lifetime, Duration::from_secs(30));
    assert_eq!(s.cache.policy.max_lifetime, 7 * 24 * HOUR);
    assert_eq!(s.cache.policy.disallow_window, HOUR);
    assert_eq!(s.cache.policy.last_copy_window, 2 * 24 * HOUR);
    assert_eq!(s.cache.policy.retry_min, Duration::from_secs(10));
    assert_eq!(s.cache.policy.retry_max, 5 * MINUTE);
    assert!(s.destinations.allows_private_networks());
    assert_eq!(
        s.destinations.allow_cidrs(),
        ["10.0.0.0/8".parse().unwrap()]
    );
    assert_eq!(
        s.destinations.deny_cidrs(),
        [
            "10.1.0.0/16".parse::<IpNet>().unwrap(),
            "10.2.0.0/16".parse().unwrap()
        ]
    );
    assert_eq!(
        s.limits,
        Limits {
            max_url_bytes: 4096,
            max_user_agent_bytes: 512,
            max_agents: 4,
            max_agent_names: 2,
            max_request_work: 1000,
            max_batch: 10,
            max_body_bytes: 64 * 1024,
            max_page_bytes: 8 * 1024 * 1024,
            request_timeout: MINUTE,
            concurrency_limit: 8,
            batch_concurrency: 2,
            shutdown_grace: Duration::ZERO,
        }
    );
    assert_eq!(s.log.format, LogFormat::Json);
    assert_eq!(s.log.level, "warn,robotsd=debug");
}

pub(super) fn error_of(args: &[&str]) -> ConfigError {
    settings(args).expect_err("should be refused")
}

#[test]
fn zero_limits_are_refused() {
    for (flag, value) in [
        ("--connect-timeout", "0s"),
        ("--fetch-timeout", "0"),
        ("--request-timeout", "0s"),
        ("--min-lifetime", "0s"),
        ("--retry-min", "0s"),
        ("--max-robots-bytes", "0"),
        ("--cache-capacity", "0"),
        ("--max-url-bytes", "0"),
        ("--max-user-agent-bytes", "0"),
        ("--max-agents", "0"),
        ("--max-agent-names", "0"),
        ("--max-request-work", "0"),
        ("--max-batch", "0"),
        ("--max-body-bytes", "0"),
        ("--max-page-bytes", "0"),
        ("--concurrency-limit", "0"),
        ("--batch-concurrency", "0"),
    ] {
        let err = error_of(&[flag, value]);
        assert!(
            matches!(err, ConfigError::Zero { flag: f } if f == flag),
            "{flag}: {err:?}"
        );
        assert_eq!(err.to_string(), format!("{flag} must be above zero"));
    }
}

#[test]
fn every_argument_has_an_env_var() {
    let command = T::command();
    let mut checked = 0;
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if id == "help" || id == "version" {
            continue;
        }
        let long = arg.get_long().expect("every setting is a long flag");
        let env = arg
            .get_env()
            .unwrap_or_else(|| panic!("--{long} has no env"))
            .to_str()
            .unwrap();
        let expected = format!("ROBOTSD_{}", long.to_ascii_uppercase().replace('-', "_"));
        assert_eq!(env, expected, "--{long}");
        assert!(arg.get_help().is_some(), "--{long} has no help");
        checked += 1;
    }
    assert_eq!(checked, FLAGS.len(), "arguments checked");
}

#[test]
fn the_table_names_every_flag_once() {
    let mut longs: Vec<String> = T::command()
        .get_arguments()
        .filter_map(|arg| arg.get_long())
        .filter(|long| *long != "help")
        .map(|long| format!("--{long}"))
        .collect();
    let mut flags: Vec<String> = FLAGS.iter().map(|(_, f)| f.to_string()).collect();
    longs.sort();
    flags.sort();
    assert_eq!(flags, longs);
    let mut paths: Vec<&str> = FLAGS.iter().map(|&(path, _)| path).collect();
    paths.sort();
    paths.dedup();
    assert_eq!(paths.len(), FLAGS.len(), "a path twice");
    assert_eq!(flag("", "listen"), "--listen");
    assert_eq!(flag("fetch", "max_body_bytes"), "--max-robots-bytes");
    assert_eq!(flag("limits", "max_body_bytes"), "--max-body-bytes");
    assert_eq!(flag("cache.policy", "retry_min"), "--retry-min");
    assert_eq!(flag("cache", "retry_min"), "a setting");
}

#[test]
fn help_groups_the_flags_by_concern() {
    let command = T::command();
    let mut headings = Vec::new();
    for arg in command.get_arguments().filter(|a| a.get_id() != "help") {
        let heading = arg.get_help_heading().expect("every setting has a heading");
        if headings.last() != Some(&heading) {
            headings.push(heading);
        }
    }
    let concerns = ["Network", "Fetching robots.txt", "Caching and backoff"];
    assert_eq!(
        headings,
        [
            &concerns[..],
            &[
                "Request limits",
                "Connection limits",
                "Logging",
                "Shared store (a fleet of replicas)",
                "API access",
                "Matching",
                "Fleet-wide politeness (pace=true)",
                "RSL licenses",
                "TDMRep",
                "Web Bot Auth",
            ]
        ]
        .concat()
    );
}

#[test]
fn help_lists_every_env_var() {
    let mut command = T::command();
    let help = command.render_long_help().to_string();
    for arg in T::command().get_arguments() {
        if let Some(env) = arg.get_env() {
            let env = env.to_str().unwrap();
            assert!(
                help.contains(&format!("env: {env}")),
                "{env} missing:\n{help}"
            );
        }
    }
    assert!(help.contains("[default: 0.0.0.0:8080]"), "{help}");
    assert!(help.contains("[default: 256MiB]"), "{help}");
}
