//! tix-sim: runs tix-core's policies on simulated workloads (GR3 §5,
//! Waldspurger §5–6, Zepp §5.2–5.3, Samih Ch. 2–4, RAS Ch. 3).
//! The simulator is a shell: every policy decision comes from tix-core.

pub mod error;
pub mod policy;
pub mod rng;
pub mod service_error;

pub use error::{Result, SimError};
pub mod bench;
pub mod engine;
pub mod model;
pub mod output;
pub mod plot;
pub mod progress;
pub mod replay;
pub mod report;
pub mod repro;
pub mod scenario;
