//! WF2Q+ (Bennett & Zhang's worst-case fair WFQ, as GR3 §3 cites it; the
//! "+" system virtual time of Stoica et al.): a client is eligible when its
//! virtual start ≤ the system virtual time V; the eligible client with the
//! smallest virtual finish runs. V advances by used/Σw per charge and is
//! raised to the smallest virtual start whenever nobody is eligible. The
//! queue groups clients by weight ([`crate::weight_classes`]).

use crate::eligible::udiv;
use crate::error::Result;
use crate::roster::{roster_accessors, Roster};
use crate::sched::{ClientId, PolicyOptions, Scheduler};
use crate::weight_classes::ClassQueue;
use crate::wfq::{vt_delta, VT_SHIFT};

/// WF2Q+ scheduler.
#[derive(Debug, Clone)]
pub struct Wf2qPlus {
    roster: Roster,
    q: ClassQueue,
    /// Per client: virtual start (its finish is start + slice).
    start: Vec<i128>,
    /// System virtual time (units of 2^-40 ns per unit of weight).
    vtime: i128,
    total_weight: u128,
    /// Per client: vt_delta(quantum, weight), the virtual length of a
    /// whole quantum (kept with the weight, so a charge divides less).
    slice: Vec<i128>,
    /// (Σw, quantum·2^VT_SHIFT / Σw): V's step for a whole quantum,
    /// recomputed only when Σw has changed since.
    v_step: (u128, i128),
}

impl Wf2qPlus {
    pub fn new(opts: &PolicyOptions) -> Self {
        Wf2qPlus {
            roster: Roster::new(opts),
            q: ClassQueue::default(),
            start: Vec::new(),
            vtime: 0,
            total_weight: 0,
            slice: Vec::new(),
            v_step: (0, 0),
        }
    }

    /// System virtual time V.
    pub fn vtime(&self) -> i128 {
        self.vtime
    }

    /// (Re-)queue a runnable client with its start and weight.
    #[inline]
    fn queue(&mut self, id: ClientId) {
        let (w, slice) = (self.roster.weights[id], self.slice[id]);
        self.q.insert(id, w, slice, self.start[id], self.vtime);
    }

    fn set_slice(&mut self, id: ClientId) {
        self.slice[id] = vt_delta(self.roster.quantum_ns, self.roster.weights[id]) as i128;
    }

    fn enqueue_fresh(&mut self, id: ClientId) {
        // A client that becomes backlogged starts at max(its finish, V).
        self.start[id] = self.start[id].max(self.vtime);
        self.total_weight += self.roster.weights[id] as u128;
        self.queue(id);
    }

    fn dequeue(&mut self, id: ClientId) {
        self.total_weight -= self.roster.weights[id] as u128;
        self.q.dequeue(id);
    }
}

impl Scheduler for Wf2qPlus {
    fn name(&self) -> &'static str {
        "wf2q"
    }
    roster_accessors!();
    fn join(&mut self, weight: u64) -> Result<ClientId> {
        self.q.check_room()?;
        let id = self.roster.join(weight)?;
        self.q.add()?;
        self.slice.push(0);
        self.set_slice(id);
        self.start.push(self.vtime);
        self.enqueue_fresh(id);
        Ok(id)
    }
    fn leave(&mut self, id: ClientId) -> Result<()> {
        let w = self.roster.weights.get(id).copied().unwrap_or(0);
        if self.roster.leave(id)? {
            self.total_weight -= w as u128;
            self.q.dequeue(id);
        }
        Ok(())
    }
    fn set_weight(&mut self, id: ClientId, weight: u64) -> Result<()> {
        let (old, runnable) = self.roster.set_weight(id, weight)?;
        self.set_slice(id);
        if runnable {
            self.total_weight = self.total_weight - old as u128 + weight as u128;
            self.queue(id);
        }
        Ok(())
    }
    fn block(&mut self, id: ClientId) -> Result<()> {
        self.roster.block(id)?;
        self.dequeue(id);
        Ok(())
    }
    fn wake(&mut self, id: ClientId) -> Result<()> {
        self.roster.wake(id)?;
        self.enqueue_fresh(id);
        Ok(())
    }
    fn pick(&mut self) -> Option<ClientId> {
        if self.roster.in_service.is_some() {
            return self.roster.in_service;
        }
        // Nobody eligible: V = max(V, min start), WF2Q+'s rule.
        let (id, v) = self.q.take_or_raise(self.vtime)?;
        self.vtime = v;
        self.roster.in_service = Some(id);
        Some(id)
    }
    fn charge(&mut self, id: ClientId, used_ns: u64) -> Result<()> {
        self.roster.charge(id)?;
        let w = self.roster.weights[id];
        // The client was taken out of the queue by pick: it is still
        // counted in total_weight, so V advances over all backlogged weight.
        let total = self.total_weight.max(1);
        let q = self.roster.quantum_ns;
        if used_ns == q {
            if self.v_step.0 != total {
                self.v_step = (total, udiv((q as u128) << VT_SHIFT, total) as i128);
            }
            self.vtime += self.v_step.1;
            self.start[id] += self.slice[id];
        } else {
            self.vtime += udiv((used_ns as u128) << VT_SHIFT, total) as i128;
            self.start[id] += udiv((used_ns as u128) << VT_SHIFT, w as u128) as i128;
        }
        self.queue(id);
        Ok(())
    }
}
