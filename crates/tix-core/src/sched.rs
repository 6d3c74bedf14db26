//! The common interface of every policy (GR3 §2's model of clients with
//! weights φ served in quanta; Waldspurger §2's clients holding tickets).
//! A policy is a single-processor queue: pick a client, let it run, charge it.

use crate::error::Result;
use serde::{Deserialize, Serialize};

/// A client handle. The scheduler hands them out on [`Scheduler::join`]:
/// dense indices 0, 1, 2, … in join order, never reused, so callers may
/// index arrays by them.
pub type ClientId = usize;

/// Largest weight (tickets, shares) a client may hold: 2^32. Keeps every
/// product of a weight and a time in ns (< 2^64 ns ≈ 584 years / 2^32)
/// inside u128 arithmetic and most of them inside u64.
pub const MAX_WEIGHT: u64 = 1 << 32;

/// Options every policy constructor takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyOptions {
    /// Length of one quantum (time slice) in ns.
    pub quantum_ns: u64,
    /// Seed for randomized policies (lottery); ignored by the others.
    pub seed: u64,
}

impl Default for PolicyOptions {
    fn default() -> Self {
        PolicyOptions {
            quantum_ns: 1_000_000,
            seed: 1,
        }
    }
}

/// A proportional-share scheduler over abstract clients.
///
/// Protocol (one processor): `pick` returns the client to run next and puts it
/// *in service*; the caller runs it for at most one quantum and then calls
/// `charge` with the time it actually used (ns), before the next `pick`. A
/// client that blocks during its quantum is charged first, then blocked.
/// Joining, leaving, reweighting, blocking and waking may happen between a
/// charge and the next pick; a client in service may only be charged.
/// Multiprocessor shells run one instance per processor (or share one and
/// serialise pick/charge) and say which.
pub trait Scheduler {
    /// The policy's name as the CLI spells it (`gr3`, `lottery-tree`, …).
    fn name(&self) -> &'static str;
    /// A new runnable client with the given weight (1..=MAX_WEIGHT).
    fn join(&mut self, weight: u64) -> Result<ClientId>;
    /// The client leaves for good; its id is never returned again.
    fn leave(&mut self, id: ClientId) -> Result<()>;
    /// Change a client's weight (runnable or blocked).
    fn set_weight(&mut self, id: ClientId, weight: u64) -> Result<()>;
    /// Current weight of a client that has joined and not left.
    fn weight(&self, id: ClientId) -> Result<u64>;
    /// The client stops competing until `wake`.
    fn block(&mut self, id: ClientId) -> Result<()>;
    /// A blocked client competes again.
    fn wake(&mut self, id: ClientId) -> Result<()>;
    /// The next client to run, or None when nobody is runnable.
    fn pick(&mut self) -> Option<ClientId>;
    /// Charge the client in service with the time it used (ns, may be less
    /// than a quantum when it blocked or yielded early).
    fn charge(&mut self, id: ClientId, used_ns: u64) -> Result<()>;
    /// Number of runnable clients (in service included).
    fn runnable(&self) -> usize;
    /// The quantum this instance was built with.
    fn quantum_ns(&self) -> u64;
    /// Policies that need burst lengths (SJF, SRTF) expose them here;
    /// proportional-share policies keep the default.
    fn as_burst_aware(&mut self) -> Option<&mut dyn BurstAware> {
        None
    }
}

/// Extra knowledge the classic baselines need: the length of a client's
/// next CPU burst (SJF) or its remaining work (SRTF), in ns.
pub trait BurstAware {
    fn set_burst(&mut self, id: ClientId, burst_ns: u64) -> Result<()>;
}

/// Validate a weight the way every policy must.
pub fn check_weight(weight: u64) -> Result<u64> {
    use crate::error::Error;
    if weight == 0 {
        Err(Error::ZeroWeight)
    } else if weight > MAX_WEIGHT {
        Err(Error::WeightTooLarge {
            got: weight,
            max: MAX_WEIGHT,
        })
    } else {
        Ok(weight)
    }
}
