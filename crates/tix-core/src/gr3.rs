//! Group Ratio Round-Robin (Chan & Nieh, GR3 §4): clients grouped by 2^k ≤
//! share < 2^(k+1); groups in a list sorted by group share, chosen by group
//! ratios (eqs. 3–4); clients inside a group by rounds with the skip rule
//! (eq. 5); joins, leaves and reweights by eqs. 6–21. Pick is O(1) amortised.
//!
//! Choices where the paper leaves one open (each has a test in
//! tests/worked_examples.rs or tests/properties.rs):
//! * Groups are k ≥ 0 (share 1 is group 0), as the paper's examples use.
//! * Ratios are kept as numerators over the next group's share,
//!   `ratio_num = R_G · S_next`. Then eqs. 12, 13, 15 and 21 (a group's
//!   *successor* changed) leave `ratio_num` untouched, eq. 4 is `+= S_G`, and
//!   only eqs. 11/14 (the group's own share changed) rescale it by
//!   S_G/S_G_old, rounded to nearest: the one rounding in the ratios. Static
//!   schedules are therefore exact.
//! * The last group has ratio 1 (`ratio_num = S_G`, "next share" = its own);
//!   when it drops below 1 selection wraps to the head with R += 1.
//! * A cycle ends when the total counter reaches 0; counters and ratios are
//!   then reset to the shares (eq. 3) and every round restarts at its head.
//! * Eqs. 8–9 (counter of a client that becomes runnable mid-cycle) round
//!   up: C_A = ⌈C_TOTAL·S_A / S_TOTAL⌉, so a joiner never loses its fraction;
//!   C_TOTAL and C_G then add exactly C_A, keeping the sums consistent.
//!   Eq. 16 (ratio of a new group) is C_G/S_next, or 1 if it is last.
//! * "Has run in this cycle" is a per-client cycle stamp.
//! * The intergroup decision is taken at charge time, so an insert/remove
//!   between a charge and the next pick sees the decision already made from
//!   the pre-change order: the paper's rule for a current group that moves.
//!   (Changes to *other* clients while one is in service are allowed by the
//!   protocol; the decision at its charge then uses the new order, a small
//!   departure.) If the group chosen to run next is emptied, its successor
//!   in the old order (or the head) is chosen instead.
//! * Guard: if the chosen group has no counter left, or no member passes
//!   eq. 5 within two rounds (only possible after dynamic changes), the next
//!   group / member with counter left is used and `guard_hits` counts it.
//!   A static schedule never needs it (tested).
//! * Every charge counts as one quantum, whatever `used_ns` (the paper's
//!   quanta model); a client that yields early forfeits the rest.

use crate::error::Result;
use crate::registry::{roster_accessors, Roster};
use crate::runqueue::{run_queue_lifecycle, RunQueue};
use crate::sched::{ClientId, PolicyOptions, Scheduler};

const NGROUPS: usize = 33;

#[derive(Debug, Clone, Default)]
struct Group {
    queue: Vec<ClientId>,
    /// Index in `queue` of the next client to consider; 0 starts a round.
    pos: usize,
    share: u128,
    counter: u128,
    last_counter: u128,
    ratio_num: i128,
}

/// GR3 scheduler.
#[derive(Debug, Clone)]
pub struct Gr3 {
    roster: Roster,
    counter: Vec<u64>,
    ran_cycle: Vec<u64>,
    groups: Vec<Group>,
    /// Group numbers sorted by (share desc, group number desc).
    order: Vec<usize>,
    rank: [usize; NGROUPS],
    s_total: u128,
    c_total: u128,
    current: Option<usize>,
    cycle: u64,
    guard_hits: u64,
}

fn group_of(w: u64) -> usize {
    (63 - w.leading_zeros()) as usize
}

impl Gr3 {
    pub fn new(opts: &PolicyOptions) -> Self {
        Gr3 {
            roster: Roster::new(opts),
            counter: Vec::new(),
            ran_cycle: Vec::new(),
            groups: vec![Group::default(); NGROUPS],
            order: Vec::new(),
            rank: [usize::MAX; NGROUPS],
            s_total: 0,
            c_total: 0,
            current: None,
            cycle: 1,
            guard_hits: 0,
        }
    }

    /// How often the guard (see module docs) had to step in.
    pub fn guard_hits(&self) -> u64 {
        self.guard_hits
    }

    /// Scheduling cycles started so far (1 at creation).
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Quanta a runnable client is still owed in this cycle (C_A).
    pub fn counter(&self, id: ClientId) -> Result<u64> {
        self.roster.state(id)?;
        Ok(self.counter[id])
    }

    /// The group list as (group number, group share, ratio R_G as f64).
    pub fn group_list(&self) -> Vec<(usize, u128, f64)> {
        (0..self.order.len())
            .map(|r| {
                let g = self.order[r];
                (
                    g,
                    self.groups[g].share,
                    self.groups[g].ratio_num as f64 / self.den(r) as f64,
                )
            })
            .collect()
    }

    /// Share of the group after rank r ("S_next"); the last group's own.
    fn den(&self, r: usize) -> i128 {
        let g = self.order.get(r + 1).copied().unwrap_or(self.order[r]);
        self.groups[g].share as i128
    }

    fn rerank(&mut self) {
        for (r, &g) in self.order.iter().enumerate() {
            self.rank[g] = r;
        }
        if let Some(&last) = self.order.last() {
            // Eq. 11: the last group's ratio is one.
            self.groups[last].ratio_num = self.groups[last].share as i128;
        }
    }

    /// Move group g to its sorted place (O(k), k ≤ 33 groups).
    fn reposition(&mut self, g: usize) {
        if let Some(r) = self.order.iter().position(|&x| x == g) {
            self.order.remove(r);
        }
        let key = |gr: &Group, n: usize| (std::cmp::Reverse(gr.share), std::cmp::Reverse(n));
        let kg = key(&self.groups[g], g);
        let at = self
            .order
            .iter()
            .position(|&x| key(&self.groups[x], x) > kg)
            .unwrap_or(self.order.len());
        self.order.insert(at, g);
        self.rerank();
    }

    fn rescale_ratio(&mut self, g: usize, old_share: u128) {
        let gr = &mut self.groups[g];
        if old_share > 0 {
            let (s, o) = (gr.share as i128, old_share as i128);
            gr.ratio_num = (2 * gr.ratio_num * s + o).div_euclid(2 * o);
        }
    }

    fn reset_cycle(&mut self) {
        self.cycle += 1;
        for &g in &self.order {
            let gr = &mut self.groups[g];
            for &c in &gr.queue {
                self.counter[c] = self.roster.weights[c];
            }
            gr.counter = gr.share;
            gr.ratio_num = gr.share as i128;
            gr.pos = 0;
        }
        self.c_total = self.s_total;
        self.current = self.order.first().copied();
    }

    fn insert(&mut self, id: ClientId) {
        let w = self.roster.weights[id];
        let k = group_of(w);
        let c_a = if self.s_total == 0 {
            self.cycle += 1;
            self.c_total = 0;
            w as u128
        } else {
            // Eqs. 8–9, rounded up.
            (self.c_total * w as u128).div_ceil(self.s_total)
        };
        self.s_total += w as u128;
        self.c_total += c_a;
        self.counter[id] = c_a as u64;
        let ran = self.ran_cycle[id] == self.cycle;
        let gr = &mut self.groups[k];
        if gr.queue.is_empty() {
            gr.queue.push(id);
            gr.pos = 0;
            gr.share = w as u128;
            gr.counter = c_a;
            gr.last_counter = 0;
            self.reposition(k);
            if self.rank[k] + 1 < self.order.len() {
                // Eq. 16: a new group's ratio is C_G / S_next.
                self.groups[k].ratio_num = c_a as i128;
            }
        } else {
            let old = gr.share;
            gr.share += w as u128;
            gr.counter += c_a;
            let len = gr.queue.len();
            let cur = (gr.pos + len - 1) % len;
            // Ran this cycle: right after the current client; else right before.
            let at = if ran { cur + 1 } else { cur };
            gr.queue.insert(at, id);
            if at < gr.pos {
                gr.pos += 1;
            }
            self.rescale_ratio(k, old);
            self.reposition(k);
        }
        if self.current.is_none() {
            self.current = self.order.first().copied();
        }
    }

    fn remove(&mut self, id: ClientId, w: u64) {
        let k = group_of(w);
        let c_a = self.counter[id] as u128;
        self.s_total -= w as u128;
        self.c_total -= c_a.min(self.c_total);
        let gr = &mut self.groups[k];
        let old = gr.share;
        gr.share -= w as u128;
        gr.counter -= c_a.min(gr.counter);
        if let Some(i) = gr.queue.iter().position(|&c| c == id) {
            gr.queue.remove(i);
            if i < gr.pos {
                gr.pos -= 1;
            }
            if gr.pos >= gr.queue.len() {
                gr.pos = 0;
            }
        }
        if gr.queue.is_empty() {
            let r = self.rank[k];
            self.order.remove(r);
            self.rank[k] = usize::MAX;
            if self.current == Some(k) {
                self.current = self.order.get(r).or(self.order.first()).copied();
            }
            self.rerank();
        } else {
            self.rescale_ratio(k, old);
            self.reposition(k);
        }
        if self.s_total == 0 {
            self.current = None;
            self.c_total = 0;
        } else if self.c_total == 0 {
            self.reset_cycle();
        }
    }

    /// Intragroup rounds (eq. 5) in group g; None if two rounds find nobody.
    fn intragroup(&mut self, g: usize) -> Option<ClientId> {
        let gr = &mut self.groups[g];
        let len = gr.queue.len();
        for _ in 0..2 * len + 1 {
            if gr.pos == 0 {
                gr.last_counter = gr.counter;
            }
            let a = gr.queue[gr.pos];
            gr.pos = (gr.pos + 1) % len;
            let s_a = self.roster.weights[a] as u128;
            let c_a = self.counter[a] as u128;
            if gr.last_counter > 0 && s_a * gr.last_counter <= c_a * gr.share {
                return Some(a);
            }
        }
        None
    }
}

impl RunQueue for Gr3 {
    fn grow(&mut self, _id: ClientId) {
        self.counter.push(0);
        self.ran_cycle.push(0);
    }
    fn enqueue(&mut self, id: ClientId, _fresh: bool) {
        self.insert(id);
    }
    fn dequeue(&mut self, id: ClientId, weight: u64) {
        self.remove(id, weight);
    }
    fn reweigh(&mut self, id: ClientId, old: u64, runnable: bool) {
        if runnable {
            self.remove(id, old);
            self.insert(id);
        }
    }
}

impl Scheduler for Gr3 {
    fn name(&self) -> &'static str {
        "gr3"
    }
    roster_accessors!();
    run_queue_lifecycle!();
    fn pick(&mut self) -> Option<ClientId> {
        if self.roster.in_service.is_some() {
            return self.roster.in_service;
        }
        let mut g = self.current.or(self.order.first().copied())?;
        if self.groups[g].counter == 0 {
            self.guard_hits += 1;
            let r = self.rank[g];
            let n = self.order.len();
            g = (1..=n)
                .map(|i| self.order[(r + i) % n])
                .find(|&x| self.groups[x].counter > 0)?;
        }
        let a = match self.intragroup(g) {
            Some(a) => a,
            None => {
                self.guard_hits += 1;
                let counter = &self.counter;
                *self.groups[g].queue.iter().find(|&&c| counter[c] > 0)?
            }
        };
        self.current = Some(g);
        self.roster.in_service = Some(a);
        Some(a)
    }
    fn charge(&mut self, id: ClientId, _used_ns: u64) -> Result<()> {
        self.roster.charge(id)?;
        let g = group_of(self.roster.weights[id]);
        if self.counter[id] > 0 {
            self.counter[id] -= 1;
            self.groups[g].counter -= 1;
            self.c_total -= 1;
        }
        self.ran_cycle[id] = self.cycle;
        // Intergroup step (eq. 4): R −= 1; below 1 → next group, else head.
        let r = self.rank[g];
        let den = self.den(r);
        let gr = &mut self.groups[g];
        gr.ratio_num -= den;
        self.current = if gr.ratio_num < den {
            gr.ratio_num += gr.share as i128;
            self.order.get(r + 1).or(self.order.first()).copied()
        } else {
            self.order.first().copied()
        };
        if self.c_total == 0 {
            self.reset_cycle();
        }
        Ok(())
    }
}
