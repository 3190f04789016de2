//! The tests that run a real NATS server (collectors, readers, the history stream), in one
//! binary of their own (`cargo test --test nats`; one file's tests: `cargo test --test nats
//! bus::`), so that they never share the machine with the CPU-heavy tests of `tests/local.rs`:
//! collectors on two busy cores miss their announcements.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

mod common;

mod bus;
mod bus_delivery;
mod bus_history;
mod bus_proposals;
mod bus_reader;
mod collector_endpoints;
mod images;
mod nats_cluster;
mod nats_election;
mod nats_failover;
mod nats_logins;
mod stopping;
