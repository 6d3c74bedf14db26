//! GR3 through joins, leaves, blocks, wakes and share changes against a
//! literal model of Chan & Nieh §4.2–4.3, sharing no code with
//! `tix_core::gr3` (nor with literal_gr3.rs, whose static model this one
//! extends): exact rational group ratios updated case by case by eqs.
//! 11–16 and 21, counters by eqs. 6–10 and 17–20, pick for pick.
//!
//! Where §4.3 leaves a choice the model follows the library's documented
//! one (gr3.rs header), each named where it is used:
//! * eqs. 8–9 round the joiner's counter up; a join into an empty system
//!   starts a new cycle with C_A = S_A;
//! * eqs. 11 and 14 keep R_G as a numerator over S_next and round that to
//!   the nearest integer (halves up): the one rounding;
//! * the last group's ratio is one, its "S_next" its own share (so eq. 13
//!   for a predecessor that was last reads R·S_prev/S_G);
//! * a cycle in which nothing has run yet starts at the head of the list
//!   as it stands at the first pick (§4.2's start, kept through changes);
//! * a group emptied while current hands over to its successor in the old
//!   list, or the head (§4.3's "based on the position before removal");
//! * the guards: a chosen group with no counter left yields to the next
//!   group in the list that has one; a group where nobody passes eq. 5 in
//!   two rounds serves its first member with counter left;
//! * a client that ran in the cycle keeps that through a block (§4.3's
//!   "previous execution history"), and every new cycle clears it.

mod literal;

use literal::{ops, run_model, Model, St};
use proptest::prelude::*;
use tix_core::ClientId;

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a.abs()
    } else {
        gcd(b, a % b)
    }
}

/// An exact rational with a positive denominator (ratios can dip below 0
/// between eq. 4's decrement and its increment).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Q {
    n: i128,
    d: i128,
}

fn q(n: i128, d: i128) -> Q {
    let g = gcd(n, d).max(1);
    let s = if d < 0 { -1 } else { 1 };
    Q {
        n: s * n / g,
        d: s * d / g,
    }
}

impl Q {
    fn mul(self, n: i128, d: i128) -> Q {
        q(self.n * n, self.d * d)
    }
    fn add(self, o: Q) -> Q {
        q(self.n * o.d + o.n * self.d, self.d * o.d)
    }
    fn below_one(self) -> bool {
        self.n < self.d
    }
    /// ⌊self + 1/2⌋.
    fn round(self) -> i128 {
        (2 * self.n + self.d).div_euclid(2 * self.d)
    }
}

struct Group {
    number: u32,
    /// Clients in run-queue order.
    queue: Vec<ClientId>,
    share: i128,
    counter: i128,
    /// C_G^last, taken when a round starts.
    last: i128,
    ratio: Q,
    /// Next queue position to consider; 0 starts a round.
    at: usize,
}

struct Paper {
    share: Vec<i128>,
    counter: Vec<i128>,
    ran: Vec<bool>,
    state: Vec<St>,
    /// The group list, largest group share first, ties to the larger number.
    list: Vec<Group>,
    s_total: i128,
    c_total: i128,
    /// The group to run next, by number.
    current: Option<u32>,
    /// No quantum has run in this cycle yet.
    fresh: bool,
}

fn group_number(share: i128) -> u32 {
    127 - share.leading_zeros()
}

impl Paper {
    fn new() -> Paper {
        Paper {
            share: Vec::new(),
            counter: Vec::new(),
            ran: Vec::new(),
            state: Vec::new(),
            list: Vec::new(),
            s_total: 0,
            c_total: 0,
            current: None,
            fresh: true,
        }
    }

    fn pos(&self, k: u32) -> Option<usize> {
        self.list.iter().position(|g| g.number == k)
    }

    /// S_next of the group at `i`: the next group's share, or its own if last.
    fn s_next(&self, i: usize) -> i128 {
        self.list.get(i + 1).unwrap_or(&self.list[i]).share
    }

    fn sort(&mut self) {
        self.list
            .sort_by(|a, b| b.share.cmp(&a.share).then(b.number.cmp(&a.number)));
    }

    /// Eq. 11's form R_old · S_next-old / S_G_old · S_G / S_next, with the
    /// library's rounding of the numerator R · S_next.
    fn rescaled(r_old: Q, s_next_old: i128, s_old: i128, s_new: i128, s_next: i128) -> Q {
        q(r_old.mul(s_next_old * s_new, s_old).round(), s_next)
    }

    /// Group `k`'s share went from `s_old` (> 0) to its present one (> 0):
    /// re-sort, then eqs. 14–15 if it kept its place, 11–13 if it moved.
    fn regroup(&mut self, k: u32, s_old: i128) {
        let i = self.pos(k).unwrap();
        let prev_old = i.checked_sub(1).map(|p| self.list[p].number);
        // S_Gnext-old: the old successor's share, or G's old one if last.
        let s_next_old = if i + 1 < self.list.len() {
            self.list[i + 1].share
        } else {
            s_old
        };
        self.sort();
        let j = self.pos(k).unwrap();
        let s_g = self.list[j].share;
        let s_next = self.s_next(j);
        let r_old = self.list[j].ratio;
        if i == j {
            // Eq. 14 (the numerator over an unchanged S_next, rounded) ...
            self.list[j].ratio = Self::rescaled(r_old, s_next_old, s_old, s_g, s_next);
            // ... and eq. 15: R_prev · S_G_old / S_G.
            if j > 0 {
                let p = &mut self.list[j - 1];
                p.ratio = p.ratio.mul(s_old, s_g);
            }
        } else {
            // Eq. 11.
            self.list[j].ratio = Self::rescaled(r_old, s_next_old, s_old, s_g, s_next);
            // Eq. 12: the old predecessor now precedes G's old successor
            // (or is last): R · S_G_old / S_Gnext-old.
            if let Some(po) = prev_old {
                let x = self.pos(po).unwrap();
                let after = self.s_next(x);
                let p = &mut self.list[x];
                p.ratio = p.ratio.mul(s_old, after);
            }
            self.eq13(j);
        }
    }

    /// Eq. 13 for the group now before the one at `j` (moved or new): it
    /// preceded what now follows that group (or was last, its own share),
    /// so R_prev · S_Gnext / S_G.
    fn eq13(&mut self, j: usize) {
        if j == 0 {
            return;
        }
        let s_g = self.list[j].share;
        let before = self.list.get(j + 1).unwrap_or(&self.list[j - 1]).share;
        let p = &mut self.list[j - 1];
        p.ratio = p.ratio.mul(before, s_g);
    }

    /// The last group's ratio is one (eq. 11's "one if it is the last").
    fn last_is_one(&mut self) {
        if let Some(g) = self.list.last_mut() {
            g.ratio = q(1, 1);
        }
    }

    /// §4.2's cycle start: counters to shares, ratios by eq. 3, rounds from
    /// the queue heads, the head group current, nobody has run.
    fn start_cycle(&mut self) {
        for a in 0..self.share.len() {
            self.counter[a] = self.share[a];
            self.ran[a] = false;
        }
        for i in 0..self.list.len() {
            let r = q(self.list[i].share, self.s_next(i));
            let g = &mut self.list[i];
            g.counter = g.share;
            g.ratio = r;
            g.at = 0;
        }
        self.last_is_one();
        self.c_total = self.s_total;
        self.current = self.list.first().map(|g| g.number);
        self.fresh = true;
    }

    /// §4.3: a client becomes runnable.
    fn insert(&mut self, a: ClientId) {
        let s_a = self.share[a];
        let c_a = if self.s_total == 0 {
            // An empty system: a new cycle, C_A = S_A.
            self.ran.iter_mut().for_each(|r| *r = false);
            self.c_total = 0;
            self.fresh = true;
            s_a
        } else {
            // Eqs. 8–9: C_TOTAL · S_TOTAL / S_TOTAL_old − C_TOTAL_old, up.
            (self.c_total * s_a + self.s_total - 1) / self.s_total
        };
        self.counter[a] = c_a;
        self.s_total += s_a; // eq. 6
        self.c_total += c_a; // eq. 8
        let k = group_number(s_a);
        match self.pos(k) {
            None => {
                self.list.push(Group {
                    number: k,
                    queue: vec![a],
                    share: s_a,
                    counter: c_a,
                    last: 0,
                    ratio: q(1, 1),
                    at: 0,
                });
                self.sort();
                let j = self.pos(k).unwrap();
                self.eq13(j);
                // Eq. 16: R_G = C_G / S_next.
                let s_next = self.s_next(j);
                self.list[j].ratio = q(c_a, s_next);
            }
            Some(i) => {
                let ran = self.ran[a];
                let g = &mut self.list[i];
                let s_old = g.share;
                g.share += s_a; // eq. 7
                g.counter += c_a; // eq. 10
                let cur = if g.at == 0 {
                    g.queue.len() - 1
                } else {
                    g.at - 1
                };
                // Ran this cycle: right after the current client; else right
                // before it.
                let at = if ran { cur + 1 } else { cur };
                g.queue.insert(at, a);
                if at < g.at {
                    g.at += 1;
                }
                self.regroup(k, s_old);
            }
        }
        self.last_is_one();
        if self.current.is_none() || self.fresh {
            self.current = self.list.first().map(|g| g.number);
        }
    }

    /// §4.3: a client stops being runnable.
    fn remove(&mut self, a: ClientId) {
        let s_a = self.share[a];
        let c_a = self.counter[a];
        let k = group_number(s_a);
        let i = self.pos(k).unwrap();
        self.s_total -= s_a; // eq. 17
        self.c_total -= c_a; // eq. 19
        let g = &mut self.list[i];
        let s_old = g.share;
        g.share -= s_a; // eq. 18
        g.counter -= c_a; // eq. 20
        let x = g.queue.iter().position(|&c| c == a).unwrap();
        g.queue.remove(x);
        if x < g.at {
            g.at -= 1;
        }
        if g.at >= g.queue.len() {
            g.at = 0;
        }
        if g.queue.is_empty() {
            // Eq. 21: R_prev · S_G_old / S_Gnext (last now: one, below).
            let s_next_old = self.list.get(i + 1).map(|g| g.share);
            self.list.remove(i);
            if let (Some(s), true) = (s_next_old, i > 0) {
                let p = &mut self.list[i - 1];
                p.ratio = p.ratio.mul(s_old, s);
            }
            if self.current == Some(k) {
                self.current = self.list.get(i).or(self.list.first()).map(|g| g.number);
            }
        } else {
            self.regroup(k, s_old);
        }
        self.last_is_one();
        if self.s_total == 0 {
            self.current = None;
            self.c_total = 0;
        } else if self.c_total == 0 {
            self.start_cycle();
        } else if self.fresh {
            self.current = self.list.first().map(|g| g.number);
        }
    }

    /// Eq. 5 over at most two rounds and one visit.
    fn member(g: &mut Group, share: &[i128], counter: &[i128]) -> Option<ClientId> {
        for _ in 0..2 * g.queue.len() + 1 {
            if g.at == 0 {
                g.last = g.counter;
            }
            let a = g.queue[g.at];
            g.at = (g.at + 1) % g.queue.len();
            if g.last > 0 && share[a] * g.last <= counter[a] * g.share {
                return Some(a);
            }
        }
        None
    }

    /// One quantum: §4.2's choice, the run, eq. 4.
    fn step(&mut self) -> Option<ClientId> {
        let mut gi = self.pos(self.current.unwrap_or(self.list.first()?.number))?;
        if self.list[gi].counter == 0 {
            // Guard: the next group in the list with counter left.
            let n = self.list.len();
            gi = (1..=n)
                .map(|d| (gi + d) % n)
                .find(|&x| self.list[x].counter > 0)?;
        }
        let a = match Self::member(&mut self.list[gi], &self.share, &self.counter) {
            Some(a) => a,
            // Guard: the first member with counter left.
            None => *self.list[gi].queue.iter().find(|&&c| self.counter[c] > 0)?,
        };
        self.fresh = false;
        if self.counter[a] > 0 {
            self.counter[a] -= 1;
            self.list[gi].counter -= 1;
            self.c_total -= 1;
        }
        self.ran[a] = true;
        // Eq. 4: R −= 1; below one, R += S_G / S_next and on to the next
        // group (the head after the last); else back to the head.
        let s_next = self.s_next(gi);
        let g = &mut self.list[gi];
        g.ratio = g.ratio.add(q(-1, 1));
        self.current = if g.ratio.below_one() {
            g.ratio = g.ratio.add(q(g.share, s_next));
            self.list.get(gi + 1).or(self.list.first())
        } else {
            self.list.first()
        }
        .map(|g| g.number);
        if self.c_total == 0 {
            self.start_cycle();
        }
        Some(a)
    }
}

impl Model for Paper {
    fn states(&self) -> &[St] {
        &self.state
    }
    fn join(&mut self, t: u64) -> ClientId {
        self.share.push(t as i128);
        self.counter.push(0);
        self.ran.push(false);
        self.state.push(St::Runnable);
        let a = self.share.len() - 1;
        self.insert(a);
        a
    }
    fn pick(&mut self) -> Option<ClientId> {
        self.step()
    }
    fn leave(&mut self, a: ClientId) {
        if self.state[a] == St::Runnable {
            self.remove(a);
        }
        self.state[a] = St::Gone;
    }
    fn block(&mut self, a: ClientId) {
        self.remove(a);
        self.state[a] = St::Blocked;
    }
    fn wake(&mut self, a: ClientId) {
        self.state[a] = St::Runnable;
        self.insert(a);
    }
    fn weight(&mut self, a: ClientId, t: u64) {
        // §4.3: a runnable client's share change is a removal and an
        // insertion under the new share.
        if self.state[a] == St::Runnable {
            self.remove(a);
            self.share[a] = t as i128;
            self.insert(a);
        } else {
            self.share[a] = t as i128;
        }
    }
}

proptest! {
    #![proptest_config(literal::config())]

    #[test]
    fn gr3_follows_the_model_through_changes((initial, ops) in ops()) {
        run_model("gr3", &mut Paper::new(), &initial, &ops)?;
    }
}

/// §4.2's worked example through the model's own insertions (3, 2, 1; B
/// queued before A, as a second joiner that has not run goes before the
/// current client).
#[test]
fn model_reproduces_the_papers_example() {
    let mut p = Paper::new();
    for s in [3, 2, 1] {
        p.join(s);
    }
    let order: String = (0..12)
        .map(|_| (b'A' + p.pick().unwrap() as u8) as char)
        .collect();
    assert_eq!(order, "BAABACBAABAC");
}
