//! The policy registry: every algorithm the CLI and the simulator can name,
//! built from one [`PolicyOptions`]; plus the client roster (ids, weights, run
//! state, the pick/charge protocol of `sched.rs`) the deterministic policies share.

use crate::error::{Error, Result};
use crate::sched::{check_weight, ClientId, PolicyOptions, Scheduler};

/// Every policy name [`build`] accepts, in the order the CLI lists them.
pub const ALGOS: &[&str] = &[
    "rr",
    "wrr",
    "lottery",
    "lottery-tree",
    "lottery-o1",
    "lottery-race",
    "stride",
    "wfq",
    "wf2q",
    "eevdf",
    "vtrr",
    "srr",
    "gr3",
    "fcfs",
    "sjf",
    "srtf",
    "mlfq",
];

/// Build the policy named `algo`. A zero quantum is refused here (the
/// constructors themselves clamp it to 1 ns so they can stay infallible).
pub fn build(algo: &str, opts: &PolicyOptions) -> Result<Box<dyn Scheduler>> {
    use crate::lottery::{Draw, Lottery};
    if opts.quantum_ns == 0 {
        return Err(Error::ZeroQuantum);
    }
    Ok(match algo {
        "rr" => Box::new(crate::rr::RoundRobin::new(opts)),
        "wrr" => Box::new(crate::wrr::WeightedRoundRobin::new(opts)),
        "lottery" => Box::new(Lottery::new(opts, Draw::List)),
        "lottery-tree" => Box::new(Lottery::new(opts, Draw::Tree)),
        "lottery-o1" => Box::new(Lottery::new(opts, Draw::O1)),
        "lottery-race" => Box::new(Lottery::new(opts, Draw::Race)),
        "stride" => Box::new(crate::stride::Stride::new(opts)),
        "wfq" => Box::new(crate::wfq::Wfq::new(opts)),
        "wf2q" => Box::new(crate::wf2q::Wf2qPlus::new(opts)),
        "eevdf" => Box::new(crate::eevdf::Eevdf::new(opts)),
        "vtrr" => Box::new(crate::vtrr::Vtrr::new(opts)),
        "srr" => Box::new(crate::srr::Srr::new(opts)),
        "gr3" => Box::new(crate::gr3::Gr3::new(opts)),
        "fcfs" => Box::new(crate::fcfs::Fcfs::new(opts)),
        "sjf" => Box::new(crate::sjf::Sjf::new(opts)),
        "srtf" => Box::new(crate::srtf::Srtf::new(opts)),
        "mlfq" => Box::new(crate::mlfq::Mlfq::new(opts)),
        other => return Err(Error::UnknownPolicy(other.to_string())),
    })
}

/// Run state of a client in a [`Roster`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Runnable,
    Blocked,
    Left,
}

/// Bookkeeping every deterministic policy needs and validates the same way:
/// dense ids in join order, weights, run state, and the one client in service
/// between `pick` and `charge`. The client in service may only be charged:
/// leaving, reweighting, blocking or waking it is refused with
/// [`Error::PickPending`] (the protocol of `sched.rs`, read as the lottery
/// policies read it); other clients may change while it runs.
#[derive(Debug, Clone)]
pub(crate) struct Roster {
    pub weights: Vec<u64>,
    pub states: Vec<State>,
    pub in_service: Option<ClientId>,
    pub runnable: usize,
    pub quantum_ns: u64,
}

impl Roster {
    pub fn new(opts: &PolicyOptions) -> Self {
        Roster {
            weights: Vec::new(),
            states: Vec::new(),
            in_service: None,
            runnable: 0,
            quantum_ns: opts.quantum_ns.max(1),
        }
    }

    fn idle(&self, id: ClientId) -> Result<()> {
        if self.in_service == Some(id) {
            Err(Error::PickPending)
        } else {
            Ok(())
        }
    }

    /// State of a client that has joined and not left.
    pub fn state(&self, id: ClientId) -> Result<State> {
        match self.states.get(id) {
            Some(State::Left) | None => Err(Error::UnknownClient(id)),
            Some(s) => Ok(*s),
        }
    }

    pub fn weight(&self, id: ClientId) -> Result<u64> {
        self.state(id)?;
        Ok(self.weights[id])
    }

    pub fn join(&mut self, weight: u64) -> Result<ClientId> {
        check_weight(weight)?;
        self.weights.push(weight);
        self.states.push(State::Runnable);
        self.runnable += 1;
        Ok(self.weights.len() - 1)
    }

    /// Returns whether the client was runnable (policies then dequeue it).
    pub fn leave(&mut self, id: ClientId) -> Result<bool> {
        self.state(id)?;
        self.idle(id)?;
        let was = self.state(id)? == State::Runnable;
        if was {
            self.runnable -= 1;
        }
        self.states[id] = State::Left;
        Ok(was)
    }

    /// Returns (old weight, runnable?).
    pub fn set_weight(&mut self, id: ClientId, weight: u64) -> Result<(u64, bool)> {
        let s = self.state(id)?;
        self.idle(id)?;
        check_weight(weight)?;
        let old = std::mem::replace(&mut self.weights[id], weight);
        Ok((old, s == State::Runnable))
    }

    pub fn block(&mut self, id: ClientId) -> Result<()> {
        let st = self.state(id)?;
        self.idle(id)?;
        match st {
            State::Blocked => Err(Error::AlreadyBlocked(id)),
            _ => {
                self.states[id] = State::Blocked;
                self.runnable -= 1;
                Ok(())
            }
        }
    }

    pub fn wake(&mut self, id: ClientId) -> Result<()> {
        let st = self.state(id)?;
        self.idle(id)?;
        match st {
            State::Runnable => Err(Error::AlreadyRunnable(id)),
            _ => {
                self.states[id] = State::Runnable;
                self.runnable += 1;
                Ok(())
            }
        }
    }

    /// Validate a charge and end the client's service.
    pub fn charge(&mut self, id: ClientId) -> Result<()> {
        self.state(id)?;
        if self.in_service != Some(id) {
            return Err(Error::NotInService(id));
        }
        self.in_service = None;
        Ok(())
    }
}

/// Implements the bookkeeping half of [`Scheduler`] by delegating to a
/// `roster` field; the policy supplies the rest in an inherent `impl`.
macro_rules! roster_accessors {
    () => {
        fn weight(&self, id: $crate::sched::ClientId) -> $crate::error::Result<u64> {
            self.roster.weight(id)
        }
        fn runnable(&self) -> usize {
            self.roster.runnable
        }
        fn quantum_ns(&self) -> u64 {
            self.roster.quantum_ns
        }
    };
}
pub(crate) use roster_accessors;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_policy_is_a_typed_error() {
        let e = build("nope", &PolicyOptions::default()).err();
        assert_eq!(e, Some(Error::UnknownPolicy("nope".into())));
    }

    #[test]
    fn zero_quantum_is_refused() {
        let opts = PolicyOptions {
            quantum_ns: 0,
            seed: 1,
        };
        assert_eq!(build("rr", &opts).err(), Some(Error::ZeroQuantum));
    }
}
