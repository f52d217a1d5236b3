//! The service's integration tests, as one test binary (one link of the crate instead of one per
//! file): each module is what used to be its own `tests/*.rs`. Run one part with
//! `cargo test --test service api::` (or `bounds::`, `cache_pressure::`, `cli::`, `cluster_failover::`, `connections::`,
//! `deploy_artifacts::`, `fetch_cache::`, `fleet::`, `fleet_processes::`, `logging::`, `long_redirects::`, `page::`, `pacing::`, `percent_decoding::`,
//! `redis_tls::`, `request_bounds::`, `request_fuzz::`, `rsl::`, `ssrf::`, `store_refusals::`, `tester::`, `usage::`).

mod api;
mod bot_auth;
mod bounds;
mod cache_pressure;
mod challenges;
mod chaos;
mod cli;
mod connections;
mod cpu_work;
mod deploy_artifacts;
mod dns;
mod dns_server;
mod failover;
mod fair_share;
mod fetch_cache;
mod fetch_threads;
mod fleet;
mod fleet_processes;
mod logging;
mod long_redirects;
mod memory_charge;
mod pacing;
mod page;
mod percent_decoding;
mod record;
mod redis_sentinel;
mod redis_server;
mod redis_tls;
mod request_bounds;
mod request_fuzz;
mod revalidation;
mod rsl;
mod ssrf;
mod store_refusals;
mod support;
mod tester;
mod usage;
