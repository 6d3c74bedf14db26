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
pub mod cgroup;
pub mod compensation;
pub mod currency;
pub mod eevdf;
pub mod eligible;
pub mod fcfs;
pub mod gr3;
pub mod inverse;
pub mod lottery;
pub mod metrics;
pub mod mlfq;
pub mod mutex;
pub mod race;
pub mod ras;
pub mod registry;
pub mod rng;
mod roster;
pub mod rr;
pub mod runqueue;
pub mod shuttle;
pub mod sjf;
pub mod srr;
pub mod srtf;
pub mod stride;
pub mod tournament;
pub mod transfer;
pub mod twrs;
pub mod vtime;
pub mod vtrr;
pub mod waterfill;
pub mod weight_classes;
pub mod wf2q;
pub mod wfq;
pub mod wrr;
pub mod zepp;
