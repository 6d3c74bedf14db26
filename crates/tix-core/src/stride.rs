//! Stride scheduling (Waldspurger & Weihl, the deterministic relative of
//! lottery; GR3 §3 calls it the CPU form of WFQ): each client's pass grows by
//! used time / tickets, the minimum pass runs next, ties go to join order.
//!
//! The kernel scheduler (scx_tix) mirrors this module exactly:
//! * pass advance: [`pass_delta`], `((used_ns << 16) / tickets)`, saturating;
//! * global pass: the largest pass any client had at the moment it was picked
//!   (monotone; every runnable client's pass is ≥ it after each pick);
//! * join: pass = global pass;
//! * wake: pass = max(own pass, global pass), so sleeping banks no credit;
//! * weight change: pass kept (an approximation: Waldspurger rescales the
//!   remaining pass; keeping it costs at most one stride of error).

use crate::eligible::udiv;
use crate::error::Result;
use crate::roster::{roster_accessors, Roster};
use crate::runqueue::{run_queue_lifecycle, RunQueue};
use crate::sched::{ClientId, PolicyOptions, Scheduler};
use crate::tournament::{Entry, Tournament};

/// Fixed-point shift of a pass: one tick of pass is 2^-16 ns per ticket.
pub const PASS_SHIFT: u32 = 16;

/// The pass a client gains by running `used_ns` with `weight` tickets,
/// exactly as the kernel computes it. `weight` 0 is treated as 1 (callers
/// validate weights; this is a pure rule and must not panic).
pub fn pass_delta(used_ns: u64, weight: u64) -> u64 {
    let d = udiv((used_ns as u128) << PASS_SHIFT, weight.max(1) as u128);
    u64::try_from(d).unwrap_or(u64::MAX)
}

/// (pass, id) packed as pass · 2^64 + id: one u128 comparison orders by
/// pass, then join order. No client has id u64::MAX, so `EMPTY` (all ones)
/// stays after a runnable client whose pass saturated at u64::MAX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct PassEntry(u128);

impl PassEntry {
    fn new(pass: u64, id: ClientId) -> Self {
        PassEntry(((pass as u128) << 64) | id as u128)
    }
    fn pass(self) -> u64 {
        (self.0 >> 64) as u64
    }
    fn id(self) -> ClientId {
        self.0 as u64 as ClientId
    }
    /// Tests the id word only: a 16-byte load of the root just written as
    /// two 8-byte words would miss store forwarding.
    fn is_empty(self) -> bool {
        self.0 as u64 == u64::MAX
    }
}

impl Entry for PassEntry {
    const EMPTY: Self = PassEntry(u128::MAX);
    #[inline]
    fn min2(a: Self, b: Self) -> Self {
        PassEntry(crate::tournament::min_u128(a.0, b.0))
    }
}

#[derive(Debug, Clone, Copy)]
struct PassStride {
    pass: u64,
    /// Waldspurger's stride: the pass of one whole quantum at the client's
    /// tickets, `pass_delta(quantum, tickets)`, kept to spare a division.
    stride: u64,
}

/// Waldspurger's stride scheduler over a tournament tree of passes
/// (O(log n) per pick+charge; blocked and departed clients hold an empty
/// leaf).
#[derive(Debug, Clone)]
pub struct Stride {
    roster: Roster,
    /// Pass and stride per client, side by side: a charge misses the cache
    /// once for both.
    clients: Vec<PassStride>,
    tree: Tournament<PassEntry>,
    global_pass: u64,
}

impl Stride {
    pub fn new(opts: &PolicyOptions) -> Self {
        Stride {
            roster: Roster::new(opts),
            clients: Vec::new(),
            tree: Tournament::new(),
            global_pass: 0,
        }
    }

    /// Current pass of a client (for tests and the kernel's cross-checks).
    pub fn pass(&self, id: ClientId) -> Result<u64> {
        self.roster.state(id)?;
        Ok(self.clients[id].pass)
    }

    /// The global pass (see the module documentation).
    pub fn global_pass(&self) -> u64 {
        self.global_pass
    }
}

impl RunQueue for Stride {
    fn grow(&mut self, id: ClientId) {
        let stride = pass_delta(self.roster.quantum_ns, self.roster.weights[id]);
        self.clients.push(PassStride {
            pass: self.global_pass,
            stride,
        });
    }
    /// A waking client resumes no earlier than the global pass, so sleep
    /// earns no credit (a fresh client starts exactly there).
    fn enqueue(&mut self, id: ClientId, _fresh: bool) {
        self.clients[id].pass = self.clients[id].pass.max(self.global_pass);
        self.tree.set(id, PassEntry::new(self.clients[id].pass, id));
    }
    fn dequeue(&mut self, id: ClientId, _weight: u64) {
        self.tree.clear(id);
    }
    /// The pass is kept (see the module documentation); only the stride of
    /// a whole quantum follows the new tickets.
    fn reweigh(&mut self, id: ClientId, _old: u64, _runnable: bool) {
        self.clients[id].stride = pass_delta(self.roster.quantum_ns, self.roster.weights[id]);
    }
}

impl Scheduler for Stride {
    fn name(&self) -> &'static str {
        "stride"
    }
    roster_accessors!();
    run_queue_lifecycle!();
    fn pick(&mut self) -> Option<ClientId> {
        if self.roster.in_service.is_some() {
            return self.roster.in_service;
        }
        // The winner keeps its leaf while it runs; charge re-keys it.
        let top = self.tree.min();
        if top.is_empty() {
            return None;
        }
        self.global_pass = self.global_pass.max(top.pass());
        self.roster.in_service = Some(top.id());
        Some(top.id())
    }
    fn charge(&mut self, id: ClientId, used_ns: u64) -> Result<()> {
        self.roster.charge(id)?;
        let d = if used_ns == self.roster.quantum_ns {
            self.clients[id].stride
        } else {
            pass_delta(used_ns, self.roster.weights[id])
        };
        self.clients[id].pass = self.clients[id].pass.saturating_add(d);
        self.tree.set(id, PassEntry::new(self.clients[id].pass, id));
        Ok(())
    }
}
