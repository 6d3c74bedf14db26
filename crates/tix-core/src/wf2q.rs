//! WF2Q+ (Bennett & Zhang's worst-case fair WFQ, as GR3 §3 cites it; the
//! "+" system virtual time of Stoica et al.): a client is eligible when its
//! virtual start ≤ the system virtual time V; the eligible client with the
//! smallest virtual finish runs. V advances by used/Σw per charge and is
//! raised to the smallest virtual start whenever nobody is eligible.

use crate::error::Result;
use crate::registry::{roster_accessors, Roster};
use crate::sched::{ClientId, PolicyOptions, Scheduler};
use crate::wfq::vt_delta;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

type Entry = Reverse<(i128, ClientId, u32)>;

/// Two heaps for "smallest finish among those whose start ≤ V" (shared with
/// EEVDF): the ineligible heap is keyed by virtual start, the eligible heap
/// by finish (deadline). A client moves ineligible → eligible once per
/// service, so pick is amortised O(log n). Entries are invalidated lazily
/// by a per-client generation; when V can move backwards (EEVDF's average)
/// an eligible entry found ineligible at the top goes back.
#[derive(Debug, Clone, Default)]
pub(crate) struct EligibleQueue {
    pub start: Vec<i128>,
    pub finish: Vec<i128>,
    gen: Vec<u32>,
    live: usize,
    ineligible: BinaryHeap<Entry>,
    eligible: BinaryHeap<Entry>,
}

impl EligibleQueue {
    /// A new client slot (not queued).
    pub fn add(&mut self) {
        self.start.push(0);
        self.finish.push(0);
        self.gen.push(0);
    }

    /// Queue (or re-queue) a client with its current start and finish.
    pub fn insert(&mut self, id: ClientId, live_before: bool) {
        self.gen[id] = self.gen[id].wrapping_add(1);
        if !live_before {
            self.live += 1;
        }
        self.ineligible
            .push(Reverse((self.start[id], id, self.gen[id])));
        self.compact();
    }

    /// Re-queue a client that was just taken (after its charge): straight
    /// into the eligible heap if start ≤ v, saving a move at the next pick.
    pub fn requeue(&mut self, id: ClientId, v: i128) {
        self.gen[id] = self.gen[id].wrapping_add(1);
        self.live += 1;
        let g = self.gen[id];
        if self.start[id] <= v {
            self.eligible.push(Reverse((self.finish[id], id, g)));
        } else {
            self.ineligible.push(Reverse((self.start[id], id, g)));
        }
        self.compact();
    }

    pub fn remove(&mut self, id: ClientId) {
        self.gen[id] = self.gen[id].wrapping_add(1);
        self.live -= 1;
        self.compact();
    }

    fn compact(&mut self) {
        if self.ineligible.len() + self.eligible.len() > 2 * self.live + 64 {
            let gen = &self.gen;
            self.ineligible.retain(|Reverse((_, c, g))| gen[*c] == *g);
            self.eligible.retain(|Reverse((_, c, g))| gen[*c] == *g);
        }
    }

    /// Smallest virtual start among ineligible clients.
    pub fn min_ineligible_start(&mut self) -> Option<i128> {
        while let Some(&Reverse((s, id, g))) = self.ineligible.peek() {
            if self.gen[id] == g {
                return Some(s);
            }
            self.ineligible.pop();
        }
        None
    }

    /// Take the eligible client (start ≤ v) with the smallest finish, ties
    /// by id; it leaves the queue until re-inserted.
    pub fn take(&mut self, v: i128) -> Option<ClientId> {
        while let Some(&Reverse((s, id, g))) = self.ineligible.peek() {
            if self.gen[id] != g {
                self.ineligible.pop();
            } else if s <= v {
                self.ineligible.pop();
                self.eligible.push(Reverse((self.finish[id], id, g)));
            } else {
                break;
            }
        }
        while let Some(Reverse((f, id, g))) = self.eligible.pop() {
            if self.gen[id] != g {
                continue;
            }
            if self.start[id] > v {
                self.ineligible.push(Reverse((self.start[id], id, g)));
                continue;
            }
            debug_assert_eq!(f, self.finish[id]);
            self.gen[id] = self.gen[id].wrapping_add(1);
            self.live -= 1;
            return Some(id);
        }
        None
    }
}

/// WF2Q+ scheduler.
#[derive(Debug, Clone)]
pub struct Wf2qPlus {
    roster: Roster,
    q: EligibleQueue,
    /// System virtual time (units of 2^-40 ns per unit of weight).
    vtime: i128,
    total_weight: u128,
}

impl Wf2qPlus {
    pub fn new(opts: &PolicyOptions) -> Self {
        Wf2qPlus {
            roster: Roster::new(opts),
            q: EligibleQueue::default(),
            vtime: 0,
            total_weight: 0,
        }
    }

    /// System virtual time V.
    pub fn vtime(&self) -> i128 {
        self.vtime
    }

    fn set_finish(&mut self, id: ClientId) {
        let w = self.roster.weights[id];
        self.q.finish[id] = self.q.start[id] + vt_delta(self.roster.quantum_ns, w) as i128;
    }

    fn enqueue_fresh(&mut self, id: ClientId) {
        // A client that becomes backlogged starts at max(its finish, V).
        self.q.start[id] = self.q.start[id].max(self.vtime);
        self.set_finish(id);
        self.total_weight += self.roster.weights[id] as u128;
        self.q.insert(id, false);
    }

    fn dequeue(&mut self, id: ClientId) {
        self.total_weight -= self.roster.weights[id] as u128;
        self.q.remove(id);
    }
}

impl Scheduler for Wf2qPlus {
    fn name(&self) -> &'static str {
        "wf2q"
    }
    roster_accessors!();
    fn join(&mut self, weight: u64) -> Result<ClientId> {
        let id = self.roster.join(weight)?;
        self.q.add();
        self.q.start[id] = self.vtime;
        self.enqueue_fresh(id);
        Ok(id)
    }
    fn leave(&mut self, id: ClientId) -> Result<()> {
        let w = self.roster.weights.get(id).copied().unwrap_or(0);
        if self.roster.leave(id)? {
            self.total_weight -= w as u128;
            self.q.remove(id);
        }
        Ok(())
    }
    fn set_weight(&mut self, id: ClientId, weight: u64) -> Result<()> {
        let (old, runnable) = self.roster.set_weight(id, weight)?;
        if runnable {
            self.total_weight = self.total_weight - old as u128 + weight as u128;
            self.set_finish(id);
            self.q.insert(id, true);
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
        let id = match self.q.take(self.vtime) {
            Some(id) => id,
            None => {
                // Nobody eligible: V = max(V, min start), WF2Q+'s rule.
                let s = self.q.min_ineligible_start()?;
                self.vtime = self.vtime.max(s);
                self.q.take(self.vtime)?
            }
        };
        self.roster.in_service = Some(id);
        Some(id)
    }
    fn charge(&mut self, id: ClientId, used_ns: u64) -> Result<()> {
        self.roster.charge(id)?;
        let w = self.roster.weights[id];
        // The client was taken out of the queue by pick: it is still
        // counted in total_weight, so V advances over all backlogged weight.
        self.vtime +=
            (((used_ns as u128) << crate::wfq::VT_SHIFT) / self.total_weight.max(1)) as i128;
        self.q.start[id] += vt_delta(used_ns, w) as i128;
        self.set_finish(id);
        self.q.requeue(id, self.vtime);
        Ok(())
    }
}
