//! tix-core: the one algorithm core of tix. Every proportional-share policy of
//! the seeds (lottery with currencies, stride/WFQ, WF2Q+, EEVDF, VTRR, SRR, GR3,
//! the classic baselines) behind one [`Scheduler`] interface, plus the lottery
//! resource-rights model, the seeds' random number generators and the metrics.
//!
//! Everything is deterministic given a seed; nothing panics on user data.

pub mod error;
pub mod sched;

pub use error::{Error, Result};
pub use sched::{BurstAware, ClientId, PolicyOptions, Scheduler, MAX_WEIGHT};
