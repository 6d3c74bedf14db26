//! The client roster the deterministic policies share: ids, weights, run
//! state, and the pick/charge protocol of `sched.rs` (checks a policy would
//! otherwise repeat), with the accessors it lends a policy's `Scheduler`.

use crate::error::{Error, Result};
use crate::sched::{check_weight, ClientId, PolicyOptions};

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
