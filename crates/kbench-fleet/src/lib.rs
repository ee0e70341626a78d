//! The client side of the shared lab (`kbench serve`, docs/api.md): the
//! HTTP client ([`client`], with the CAs it trusts), the lab API with its
//! retries ([`api`]), `kbench push` ([`push`]) and `kbench job`
//! ([`jobs`]), the live upload of a run as it goes on ([`mirror`], a
//! `RunSink` decorator, sending through [`upload`] what [`batch`]
//! gathers), and the worker that runs the lab's jobs ([`worker`], under a
//! [`lease`], in its [`workplace`]).
//!
//! It talks to the server only over HTTP: the two crates share kbench-model's
//! wire types (`LiveBatch`, `JobLease`, `Job`...), never each other.

pub mod api;
pub mod batch;
pub mod client;
mod error;
pub mod jobs;
pub mod lease;
pub mod mirror;
pub mod push;
mod trust;
pub mod upload;
pub mod worker;
pub mod workplace;

#[cfg(test)]
mod test_support;

pub use error::FleetError;
