//! robotsd: robots.txt as a service.
//!
//! The crate is layered so that the decision can be tested without a network:
//! - [`robots`]: the pure robots.txt engine (parse once, check many times from many threads).
//! - [`cli`]: the offline `robotsd eval` tool over the engine.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod cache;
pub mod checker;
pub mod cli;
pub mod destination;
pub mod fetch;
pub mod origin;
pub mod robots;
pub mod user_agent;
