//! robotsd: robots.txt as a service.
//!
//! The crate is layered so that the decision can be tested without a network:
//! - The robots.txt engine is its own crate, [`robotsd_engine`] (`crates/robotsd-engine`): pure,
//!   with no IO, async runtime or HTTP, which its dependencies enforce.
//! - [`origin`], [`user_agent`]: which robots.txt and which agent token a check is about.
//! - [`destination`], [`fetch`]: the SSRF guard and the robots.txt fetcher; [`fetch_runtime`]:
//!   the threads fetches run on, after the API's.
//! - [`cache`]: the origin cache; its rules are the pure state machine [`cache::policy`], on
//!   the time of a [`clock`]; [`kept`]: the bounds on, and the price of, what its entries
//!   keep of text a site controls.
//! - [`pace_policy`]: the pure state machine of fetch slots per origin and the sites'
//!   pushback, which both the store and [`pacing`] run.
//! - [`store`]: the shared store behind the cache (Redis), for a fleet of replicas.
//! - [`pacing`]: politeness for the whole fleet: slots handed out in the store, or locally
//!   while it is down.
//! - [`checker`]: URL + agents → answer, joining the above; [`bounds`]: the bounds every
//!   answer keeps, whatever the file behind it holds; [`compute`]: the threads a request's
//!   heavier matching runs on, off the async workers.
//! - [`api`], [`server`], [`metrics`], [`config`]: the HTTP service; [`ui`]: the tester page it
//!   serves at `/`.
//! - [`fast`]: the hot path's hand-written replacements for library code, each held to its
//!   library by tests.
//! - [`cli`]: the command line (`robotsd serve`, `robotsd eval`).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod api;
pub mod auth;
pub mod bot_auth;
pub mod bounds;
pub mod cache;
pub mod checker;
pub mod cli;
pub mod clock;
pub mod compute;
pub mod config;
pub mod destination;
pub mod dns;
pub mod documents;
pub mod fast;
pub mod fetch;
pub mod fetch_runtime;
pub mod hex;
pub mod kept;
pub mod metrics;
pub mod origin;
pub mod pace_policy;
pub mod pacing;
pub mod page;
pub mod rsl;
pub mod server;
pub mod store;
pub mod tdmrep;
pub mod ui;
pub mod user_agent;
