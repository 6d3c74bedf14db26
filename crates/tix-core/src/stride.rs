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

use crate::error::Result;
use crate::registry::{roster_accessors, Roster};
use crate::runqueue::{run_queue_lifecycle, RunQueue};
use crate::sched::{ClientId, PolicyOptions, Scheduler};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Fixed-point shift of a pass: one tick of pass is 2^-16 ns per ticket.
pub const PASS_SHIFT: u32 = 16;

/// The pass a client gains by running `used_ns` with `weight` tickets,
/// exactly as the kernel computes it. `weight` 0 is treated as 1 (callers
/// validate weights; this is a pure rule and must not panic).
pub fn pass_delta(used_ns: u64, weight: u64) -> u64 {
    let d = ((used_ns as u128) << PASS_SHIFT) / (weight.max(1) as u128);
    u64::try_from(d).unwrap_or(u64::MAX)
}

/// Waldspurger's stride scheduler over a heap of passes (O(log n) per
/// pick+charge). Stale heap entries (left, blocked, re-keyed clients) are
/// dropped lazily when they surface.
#[derive(Debug, Clone)]
pub struct Stride {
    roster: Roster,
    pass: Vec<u64>,
    /// Generation of each client's live heap entry.
    gen: Vec<u32>,
    heap: BinaryHeap<Reverse<(u64, ClientId, u32)>>,
    global_pass: u64,
}

impl Stride {
    pub fn new(opts: &PolicyOptions) -> Self {
        Stride {
            roster: Roster::new(opts),
            pass: Vec::new(),
            gen: Vec::new(),
            heap: BinaryHeap::new(),
            global_pass: 0,
        }
    }

    /// Current pass of a client (for tests and the kernel's cross-checks).
    pub fn pass(&self, id: ClientId) -> Result<u64> {
        self.roster.state(id)?;
        Ok(self.pass[id])
    }

    /// The global pass (see the module documentation).
    pub fn global_pass(&self) -> u64 {
        self.global_pass
    }

    fn push(&mut self, id: ClientId) {
        self.gen[id] = self.gen[id].wrapping_add(1);
        self.heap.push(Reverse((self.pass[id], id, self.gen[id])));
    }

    /// Re-key the charged client: in place if its entry is still on top
    /// (nobody with a smaller key arrived while it ran), else push anew.
    fn rekey(&mut self, id: ClientId, key: u64) {
        if let Some(mut top) = self.heap.peek_mut() {
            let Reverse((_, c, g)) = *top;
            if c == id && g == self.gen[id] {
                *top = Reverse((key, id, g));
                return;
            }
        }
        self.push(id);
    }

    fn drop_entry(&mut self, id: ClientId) {
        self.gen[id] = self.gen[id].wrapping_add(1);
        // Keep the heap from growing without bound under churn.
        if self.heap.len() > 2 * self.roster.runnable + 64 {
            let gen = &self.gen;
            self.heap.retain(|Reverse((_, c, g))| gen[*c] == *g);
        }
    }
}

impl RunQueue for Stride {
    fn grow(&mut self, _id: ClientId) {
        self.pass.push(self.global_pass);
        self.gen.push(0);
    }
    /// A waking client resumes no earlier than the global pass, so sleep
    /// earns no credit (a fresh client starts exactly there).
    fn enqueue(&mut self, id: ClientId, _fresh: bool) {
        self.pass[id] = self.pass[id].max(self.global_pass);
        self.push(id);
    }
    fn dequeue(&mut self, id: ClientId, _weight: u64) {
        self.drop_entry(id);
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
        // The winner's entry stays at the top while it runs; charge re-keys
        // it in place (one sift-down instead of a pop and a push).
        while let Some(&Reverse((p, id, g))) = self.heap.peek() {
            if self.gen[id] == g {
                self.global_pass = self.global_pass.max(p);
                self.roster.in_service = Some(id);
                return Some(id);
            }
            self.heap.pop();
        }
        None
    }
    fn charge(&mut self, id: ClientId, used_ns: u64) -> Result<()> {
        self.roster.charge(id)?;
        let d = pass_delta(used_ns, self.roster.weights[id]);
        self.pass[id] = self.pass[id].saturating_add(d);
        self.rekey(id, self.pass[id]);
        Ok(())
    }
}
