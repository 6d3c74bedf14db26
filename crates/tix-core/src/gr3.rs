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
//!   schedules are therefore exact; under changes the rounding is a
//!   departure from exact eqs. 11/14 (tests/literal_gr3_dynamic.rs follows
//!   it; an exact reading differs on ~1% of its random sequences).
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
//!
//! Laid out for speed; the schedule is exactly that of the plain reading
//! (tests/gr3_equivalence.rs holds one recorded from it). A group's queue
//! keeps each member's weight, counter and cycle stamp next to its id, so
//! eq. 5 reads one array front to back with u64 products, 64 verdicts at a
//! time into a bit window that pick consumes lowest bit first (short queues
//! keep a plain slice search);
//! what charge needs from the group list (S_next, the next group, the head)
//! is cached per group whenever the list changes; pick and charge are
//! `#[inline]` with the guards and the u128 fallback out of line.

use crate::error::{Error, Result};
use crate::roster::{roster_accessors, Roster, State};
use crate::runqueue::{run_queue_lifecycle, RunQueue};
use crate::sched::{ClientId, PolicyOptions, Scheduler};

const NGROUPS: usize = 33;

/// Queues up to this long are searched member by member rather than
/// through the bit window (see `Group::search`).
const SHORT: usize = 8;

/// A runnable client in its group's queue: all that pick and charge touch
/// of it, in 16 bytes (four to a cache line): at 10^6 clients the queues
/// are 16 MB, inside L3, where 32-byte entries streamed past it.
/// `weight_m1` mirrors the roster's weight less one (a queued client's
/// weight only changes by a remove and a re-insert; MAX_WEIGHT = 2^32 less
/// one fits 32 bits).
#[derive(Debug, Clone, Copy)]
#[repr(C, align(16))]
struct Entry {
    /// The client id (< 2^31, see `MAX_ID`) and, in bit 31, "has run in
    /// this cycle": a flag rather than a stamp, as every cycle reset
    /// already visits every entry to refill its counter.
    tag: u32,
    weight_m1: u32,
    /// C_A: quanta still owed in this cycle (≤ S_A ≤ 2^32: 33 bits).
    counter: u64,
}

/// Bit of `Entry::tag` set once the client has run in this cycle.
const RAN: u32 = 1 << 31;

/// Largest client id an `Entry` holds.
const MAX_ID: ClientId = (RAN - 1) as ClientId;

impl Entry {
    #[inline(always)]
    fn id(&self) -> ClientId {
        (self.tag & !RAN) as ClientId
    }
    #[inline(always)]
    fn weight(&self) -> u64 {
        self.weight_m1 as u64 + 1
    }
    #[inline(always)]
    fn ran(&self) -> bool {
        self.tag & RAN != 0
    }
}

/// A client's counter and cycle stamp while it is out of the queue, as
/// they were when it left (blocked clients report that counter; a wake
/// reads the stamp).
#[derive(Debug, Clone, Copy, Default)]
struct Cold {
    ran_cycle: u64,
    counter: u64,
}

#[derive(Debug, Clone, Default)]
struct Group {
    /// Index in `queue` of the next client to consider; 0 starts a round.
    pos: usize,
    /// The window: eq. 5's verdicts under the current G_last for the
    /// members of the aligned block of 64 that holds `pos`, from `pos` on
    /// (bit j for member `(pos & !63) + j`; earlier bits are clear). Zero
    /// when exhausted or stale: every change to the queue, S_G or a
    /// member's counter outside charge clears it.
    bits: u64,
    queue: Vec<Entry>,
    share: u128,
    last_counter: u128,
    counter: u128,
    ratio_num: i128,
    /// Cached by `rerank` from the group list, so charge needs no lookup:
    /// the share of the next group ("S_next", own share if last) ...
    den: i128,
    /// ... and the group to run when this one's ratio drops below 1 (the
    /// next one, or the head if last).
    after: usize,
}

impl Group {
    /// Intragroup rounds (eq. 5): index of the next member that passes the
    /// skip rule, or None if two rounds find nobody.
    ///
    /// The visit-by-visit definition is `scan`. Visits that skip change
    /// nothing but `pos`, and G_last changes only at a round start, so the
    /// same answer is the first passing member of the rest of this round,
    /// else of the next round (a third partial round revisits members
    /// already refused under the same G_last). Nor does a visit change any
    /// member's verdict but its own: only the client picked is charged, and
    /// it lies behind `pos`. So the verdicts are taken 64 members at a time
    /// into a bit window, in a loop with no branch on them (their pattern
    /// defeats a predictor when weights differ from one member to the
    /// next), and pick takes the lowest set bit. While S_G and G_last are
    /// below 2^32 eq. 5's products fit in u64: S_A, C_A ≤ 2^32, and the
    /// group counter (the next G_last) is at most S_G, being the sum of its
    /// members' C_A ≤ S_A. Bigger groups take the u128 `scan`.
    #[inline]
    fn next_member(&mut self) -> Option<usize> {
        // The window is consulted after the same checks as every call: the
        // u128 and short-queue paths never see an open window (they close
        // it, or never open one), and set bits imply an open window.
        const SMALL: u128 = 1 << 32;
        if self.share | self.last_counter >= SMALL {
            self.close_window();
            return self.scan();
        }
        if self.queue.len() <= SHORT {
            return self.search();
        }
        if self.bits != 0 {
            // Set bits lie past `pos`, in its block (see `bits`).
            return Some(self.take_bit(self.pos & !63));
        }
        self.refill()
    }

    /// The member of the window's lowest set bit, in the block of 64 that
    /// starts at `block`: cleared from the window, and the round moves on
    /// past it.
    #[inline(always)]
    fn take_bit(&mut self, block: usize) -> usize {
        let i = block + self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        self.pos = wrap(i + 1, self.queue.len());
        i
    }

    /// Forget the window (its verdicts may be stale).
    #[inline]
    fn close_window(&mut self) {
        self.bits = 0;
    }

    /// `next_member` for a short queue, by two plain slice searches: there
    /// the verdicts repeat with a short period, which a predictor learns,
    /// and the window's refills would cost more than they save.
    #[inline]
    fn search(&mut self) -> Option<usize> {
        let (share, counter) = (self.share as u64, self.counter as u64);
        let len = self.queue.len();
        let p = self.pos;
        let first = |q: &[Entry], last: u64| {
            if last == 0 {
                return None;
            }
            q.iter()
                .position(|e| e.weight() * last <= e.counter * share)
        };
        let last = if p == 0 {
            counter
        } else {
            self.last_counter as u64
        };
        if let Some(j) = first(self.queue.get(p..).unwrap_or(&[]), last) {
            self.last_counter = last as u128;
            self.pos = wrap(p + j + 1, len);
            return Some(p + j);
        }
        self.last_counter = self.counter;
        let found = first(&self.queue, counter);
        self.pos = wrap(found.unwrap_or(p) + 1, len);
        found
    }

    /// `next_member` when the window has no passing member left: fill it
    /// from `pos` to the end of its block, then block by block, starting
    /// the next round at the end of the queue (once per call; a second
    /// round end means nobody passes). Refilling from `pos` re-reads the
    /// members of an exhausted block that were refused (same verdicts, a
    /// few visits wasted) and spares a field that would say where the
    /// window stood.
    #[inline(never)]
    fn refill(&mut self) -> Option<usize> {
        let len = self.queue.len();
        let p = self.pos;
        let share = self.share as u64;
        // A round that starts at `pos` takes G_last now (what the visit at
        // position 0 does in `scan`).
        let mut restarted = p == 0;
        if restarted {
            self.last_counter = self.counter;
        }
        let mut from = p;
        loop {
            let to = len.min((from | 63) + 1);
            let members = self.queue.get(from..to).unwrap_or(&[]);
            self.bits = pass_bits(members, from, self.last_counter as u64, share);
            if self.bits != 0 {
                break;
            }
            from = to;
            if from >= len {
                if restarted {
                    // Two round ends in one call: nobody passes.
                    self.pos = wrap(p + 1, len);
                    return None;
                }
                restarted = true;
                self.last_counter = self.counter;
                from = 0;
            }
        }
        Some(self.take_bit(from & !63))
    }

    /// Eq. 5 visit by visit: at most two rounds and one visit.
    #[cold]
    #[inline(never)]
    fn scan(&mut self) -> Option<usize> {
        let len = self.queue.len();
        let mut pos = self.pos;
        for _ in 0..2 * len + 1 {
            if pos == 0 {
                self.last_counter = self.counter;
            }
            let i = pos;
            pos = wrap(pos + 1, len);
            let e = &self.queue[i];
            let (s_a, c_a) = (e.weight() as u128, e.counter as u128);
            if self.last_counter > 0 && s_a * self.last_counter <= c_a * self.share {
                self.pos = pos;
                return Some(i);
            }
        }
        self.pos = pos;
        None
    }

    /// Index of `id` in the queue: `hint` (where pick found it) unless a
    /// change to another member of the group moved it since; then searched.
    #[inline]
    fn index_of(&self, id: ClientId, hint: usize) -> Option<usize> {
        match self.queue.get(hint) {
            Some(e) if e.id() == id => Some(hint),
            _ => self.queue.iter().position(|e| e.id() == id),
        }
    }
}

/// GR3 scheduler.
#[derive(Debug, Clone)]
pub struct Gr3 {
    roster: Roster,
    cold: Vec<Cold>,
    groups: Vec<Group>,
    /// Group numbers sorted by (share desc, group number desc).
    order: Vec<usize>,
    rank: [usize; NGROUPS],
    /// `order[0]` (cached by `rerank`; meaningless while `order` is empty).
    head: usize,
    /// Group and queue index of the client in service (set by pick, read
    /// by charge).
    serving_group: usize,
    serving_index: usize,
    s_total: u128,
    c_total: u128,
    current: Option<usize>,
    /// No quantum charged yet in this cycle: §4.2 starts a cycle at the
    /// first group of the list, so until the first charge `current`
    /// follows the head through joins and leaves (a cycle that began with
    /// one client in a light group still starts at the heaviest group).
    fresh: bool,
    cycle: u64,
    guard_hits: u64,
}

/// `i mod len` for i < 2·len.
#[inline(always)]
fn wrap(i: usize, len: usize) -> usize {
    if i >= len {
        i - len
    } else {
        i
    }
}

/// Eq. 5's verdicts under G_last = `last` for `members`, which start at
/// queue index `from` and end in its block of 64: bit `from % 64 + j` set
/// when `members[j]` passes, S_A · G_last ≤ C_A · S_G (none passes while
/// G_last is 0). The caller guarantees both products fit in u64 (see
/// `next_member`).
#[inline]
fn pass_bits(members: &[Entry], from: usize, last: u64, share: u64) -> u64 {
    if last == 0 {
        return 0;
    }
    let mut bits = 0u64;
    for (j, e) in members.iter().enumerate() {
        bits |= u64::from(e.weight() * last <= e.counter * share) << j;
    }
    bits << (from & 63)
}

fn group_of(w: u64) -> usize {
    (63 - w.leading_zeros()) as usize
}

impl Gr3 {
    pub fn new(opts: &PolicyOptions) -> Self {
        Gr3 {
            roster: Roster::new(opts),
            cold: Vec::new(),
            groups: vec![Group::default(); NGROUPS],
            order: Vec::new(),
            rank: [usize::MAX; NGROUPS],
            head: 0,
            serving_group: 0,
            serving_index: 0,
            s_total: 0,
            c_total: 0,
            current: None,
            fresh: true,
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

    /// Quanta a runnable client is still owed in this cycle (C_A); for a
    /// blocked client, what it was owed when it blocked. O(group size): a
    /// runnable client's counter lives in its group's queue.
    pub fn counter(&self, id: ClientId) -> Result<u64> {
        if self.roster.state(id)? == State::Runnable {
            let k = group_of(self.roster.weights[id]);
            if let Some(e) = self.groups[k].queue.iter().find(|e| e.id() == id) {
                return Ok(e.counter);
            }
        }
        Ok(self.cold[id].counter)
    }

    /// The group list as (group number, group share, ratio R_G as f64).
    pub fn group_list(&self) -> Vec<(usize, u128, f64)> {
        self.order
            .iter()
            .map(|&g| {
                let gr = &self.groups[g];
                (g, gr.share, gr.ratio_num as f64 / gr.den as f64)
            })
            .collect()
    }

    /// Every change of the group list or of a group's share ends here, so
    /// this is where the caches of the list (rank, den, after, head) are set.
    fn rerank(&mut self) {
        let n = self.order.len();
        for r in 0..n {
            let g = self.order[r];
            self.rank[g] = r;
            let next = if r + 1 < n { self.order[r + 1] } else { g };
            self.groups[g].den = self.groups[next].share as i128;
            self.groups[g].after = if r + 1 < n { next } else { self.order[0] };
        }
        if let Some(&last) = self.order.last() {
            // Eq. 11: the last group's ratio is one.
            self.groups[last].ratio_num = self.groups[last].share as i128;
        }
        self.head = self.order.first().copied().unwrap_or(0);
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
            for e in &mut gr.queue {
                e.counter = e.weight();
                e.tag &= !RAN;
            }
            gr.counter = gr.share;
            gr.ratio_num = gr.share as i128;
            gr.pos = 0;
            // Every counter was 0, so no bit is set; cleared all the same,
            // as `pos` moved.
            gr.close_window();
        }
        self.c_total = self.s_total;
        self.current = self.order.first().copied();
        self.fresh = true;
    }

    fn insert(&mut self, id: ClientId) {
        let w = self.roster.weights[id];
        let k = group_of(w);
        let c_a = if self.s_total == 0 {
            self.cycle += 1;
            self.c_total = 0;
            self.fresh = true;
            w as u128
        } else {
            // Eqs. 8–9, rounded up.
            (self.c_total * w as u128).div_ceil(self.s_total)
        };
        self.s_total += w as u128;
        self.c_total += c_a;
        let ran = self.cold[id].ran_cycle == self.cycle;
        // `check_room` keeps ids ≤ MAX_ID and the roster weights ≤ 2^32.
        let entry = Entry {
            tag: id as u32 | if ran { RAN } else { 0 },
            weight_m1: (w - 1) as u32,
            counter: c_a as u64,
        };
        let gr = &mut self.groups[k];
        gr.close_window();
        if gr.queue.is_empty() {
            gr.queue.push(entry);
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
            let cur = if gr.pos == 0 { len - 1 } else { gr.pos - 1 };
            // Ran this cycle: right after the current client; else right before.
            let at = if ran { cur + 1 } else { cur };
            gr.queue.insert(at, entry);
            if at < gr.pos {
                gr.pos += 1;
            }
            self.rescale_ratio(k, old);
            self.reposition(k);
        }
        if self.current.is_none() || self.fresh {
            self.current = self.order.first().copied();
        }
    }

    fn remove(&mut self, id: ClientId, w: u64) {
        let k = group_of(w);
        let gr = &mut self.groups[k];
        gr.close_window();
        let found = gr.queue.iter().position(|e| e.id() == id);
        // A queued client is always found; 0 owed keeps the sums if not.
        let c_a = match found {
            Some(i) => {
                let e = gr.queue[i];
                self.cold[id] = Cold {
                    // Any stamp but the current cycle's says "has not run".
                    ran_cycle: if e.ran() { self.cycle } else { 0 },
                    counter: e.counter,
                };
                e.counter
            }
            None => 0,
        };
        let c_a = c_a as u128;
        self.s_total -= w as u128;
        self.c_total -= c_a.min(self.c_total);
        let old = gr.share;
        gr.share -= w as u128;
        gr.counter -= c_a.min(gr.counter);
        if let Some(i) = found {
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
        } else if self.fresh {
            self.current = self.order.first().copied();
        }
    }

    /// Guard: the chosen group has no counter left; the next one in the
    /// list that has.
    #[cold]
    #[inline(never)]
    fn guard_group(&mut self, g: usize) -> Option<usize> {
        self.guard_hits += 1;
        let r = self.rank[g];
        let n = self.order.len();
        (1..=n)
            .map(|i| self.order[(r + i) % n])
            .find(|&x| self.groups[x].counter > 0)
    }

    /// Guard: nobody in group g passed eq. 5 in two rounds; its first
    /// member with counter left.
    #[cold]
    #[inline(never)]
    fn guard_member(&mut self, g: usize) -> Option<usize> {
        self.guard_hits += 1;
        // The window is already empty (next_member just found nobody), so
        // the member's out-of-turn charge cannot make a set bit stale.
        self.groups[g].queue.iter().position(|e| e.counter > 0)
    }
}

impl RunQueue for Gr3 {
    fn check_room(&self, next: ClientId) -> Result<()> {
        if next > MAX_ID {
            Err(Error::Overflow("GR3 holds at most 2^31 clients"))
        } else {
            Ok(())
        }
    }
    fn grow(&mut self, _id: ClientId) {
        self.cold.push(Cold::default());
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

impl Gr3 {
    /// A pick whose intragroup step (eq. 5) is `search`: `next_member`
    /// for real picks, `scan` (visit by visit) in the tests that hold the
    /// window to it. Generic, so each caller gets its own inlined copy.
    #[inline]
    fn pick_with(&mut self, search: impl FnOnce(&mut Group) -> Option<usize>) -> Option<ClientId> {
        if self.roster.in_service.is_some() {
            return self.roster.in_service;
        }
        let mut g = self.current.or(self.order.first().copied())?;
        if self.groups[g].counter == 0 {
            g = self.guard_group(g)?;
        }
        let i = match search(&mut self.groups[g]) {
            Some(i) => i,
            None => self.guard_member(g)?,
        };
        let a = self.groups[g].queue[i].id();
        self.current = Some(g);
        self.serving_group = g;
        self.serving_index = i;
        self.roster.in_service = Some(a);
        Some(a)
    }
}

impl Scheduler for Gr3 {
    fn name(&self) -> &'static str {
        "gr3"
    }
    roster_accessors!();
    run_queue_lifecycle!();
    #[inline]
    fn pick(&mut self) -> Option<ClientId> {
        self.pick_with(Group::next_member)
    }
    #[inline]
    fn charge(&mut self, id: ClientId, _used_ns: u64) -> Result<()> {
        if self.roster.in_service != Some(id) {
            // Always an error (unknown client or not in service); the
            // roster says which. The client in service cannot have left.
            return self.roster.charge(id);
        }
        self.roster.in_service = None;
        self.fresh = false;
        let g = self.serving_group;
        let gr = &mut self.groups[g];
        if let Some(e) = gr
            .index_of(id, self.serving_index)
            .map(|i| &mut gr.queue[i])
        {
            if e.counter > 0 {
                e.counter -= 1;
                gr.counter -= 1;
                self.c_total -= 1;
            }
            e.tag |= RAN;
        }
        // Intergroup step (eq. 4): R −= 1; below 1 → next group, else head.
        gr.ratio_num -= gr.den;
        // Masks rather than `if`: the compiler turns a plain select back
        // into a branch, and this one follows the ratios (a branch-predictor
        // simulation put a third of all the mispredicts here).
        let below = usize::from(gr.ratio_num < gr.den).wrapping_neg();
        gr.ratio_num += gr.share as i128 & (below as isize as i128);
        self.current = Some(self.head ^ ((self.head ^ gr.after) & below));
        if self.c_total == 0 {
            self.reset_cycle();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The bit window against `scan`, eq. 5 visit by visit: two instances
    //! take the same random calls, one picking members as `pick` does, the
    //! other always by `scan`; every pick and every call's outcome must
    //! agree. (tests/gr3_equivalence.rs pins whole schedules against the
    //! pre-optimisation code; this aims at the window's own edges: blocks
    //! of 64, round ends, queues crossing `SHORT`, the u128 path, and
    //! changes between and during quanta that must close a window.)
    use super::*;
    use crate::rng::{Rng as _, SplitMix64};
    use crate::sched::MAX_WEIGHT;

    impl Gr3 {
        /// `pick` with the intragroup step taken by `scan`.
        fn pick_by_scan(&mut self) -> Option<ClientId> {
            self.pick_with(Group::scan)
        }
    }

    /// A weight from a spread chosen per run: one group only (long queues,
    /// several blocks), spread over 1..=64, or few per group (queues
    /// around `SHORT`); with `big`, now and then one near 2^32 (the u128
    /// path; such a client takes most quanta, so only some runs have them).
    fn weight(r: &mut SplitMix64, spread: u64, big: bool) -> u64 {
        if big && r.below(100) == 0 {
            return MAX_WEIGHT - r.below(1 << 20);
        }
        // Small weights, so that cycles end within a run.
        match spread {
            0 => 8 + r.below(8),
            1 => 1 + r.below(64),
            _ => 1 << r.below(7),
        }
    }

    #[test]
    fn window_picks_what_scan_picks() {
        let opts = PolicyOptions::default();
        for seed in 0..48u64 {
            let mut r = SplitMix64::new(seed);
            let (spread, big) = (seed % 3, seed % 4 == 3);
            let (mut fast, mut slow) = (Gr3::new(&opts), Gr3::new(&opts));
            let mut n = 0u64;
            for _ in 0..10 + r.below(200) {
                let w = weight(&mut r, spread, big);
                assert_eq!(fast.join(w), slow.join(w));
                n += 1;
            }
            let change_pct = [0, 2, 10][(seed / 3 % 3) as usize];
            for step in 0..4000 {
                if r.below(100) < change_pct {
                    let id = r.below(n + 1) as usize;
                    let w = weight(&mut r, spread, big);
                    let (a, b) = match r.below(5) {
                        0 => {
                            n += 1;
                            (fast.join(w).map(|_| ()), slow.join(w).map(|_| ()))
                        }
                        1 => (fast.leave(id), slow.leave(id)),
                        2 => (fast.set_weight(id, w), slow.set_weight(id, w)),
                        3 => (fast.block(id), slow.block(id)),
                        _ => (fast.wake(id), slow.wake(id)),
                    };
                    assert_eq!(a, b, "seed {seed} step {step}");
                    continue;
                }
                let p = fast.pick();
                assert_eq!(p, slow.pick_by_scan(), "seed {seed} step {step}");
                let Some(c) = p else { continue };
                // A change to someone else while c runs.
                if r.below(100) < change_pct {
                    let id = r.below(n) as usize;
                    assert_eq!(fast.block(id), slow.block(id));
                }
                assert_eq!(
                    fast.charge(c, opts.quantum_ns),
                    slow.charge(c, opts.quantum_ns)
                );
            }
            assert_eq!(fast.guard_hits(), slow.guard_hits(), "seed {seed}");
            assert_eq!(fast.cycle(), slow.cycle(), "seed {seed}");
            for id in 0..n as usize {
                assert_eq!(fast.counter(id), slow.counter(id), "seed {seed}");
            }
        }
    }

    /// "Has run in this cycle" is a flag that every cycle reset clears: a
    /// client that ran only in an earlier cycle wakes as one that has not
    /// run (queued right before the current client), one that ran in this
    /// cycle right after it.
    #[test]
    fn ran_flag_is_per_cycle() {
        let opts = PolicyOptions::default();
        let run = |s: &mut Gr3, n: usize| -> Vec<ClientId> {
            (0..n)
                .map(|_| {
                    let id = s.pick().unwrap();
                    s.charge(id, opts.quantum_ns).unwrap();
                    id
                })
                .collect()
        };
        let mut s = Gr3::new(&opts);
        for _ in 0..3 {
            s.join(1).unwrap();
        }
        // Each join goes before the current client: queue [1, 2, 0].
        assert_eq!(run(&mut s, 3), [1, 2, 0]);
        // Cycle 2: 1 runs; 2, which ran only in cycle 1, blocks and wakes
        // and is queued before 1: [2, 1, 0] with 0 next, then the round
        // wraps to 2, still owed its quantum of cycle 2. Cycle 3 starts at
        // the head. (Were 2 taken to have run, it would go after 1 and run
        // next.)
        assert_eq!(run(&mut s, 1), [1]);
        s.block(2).unwrap();
        s.wake(2).unwrap();
        assert_eq!(run(&mut s, 5), [0, 2, 2, 1, 0]);
        // Cycle 4 ([2, 1, 0]): 2 runs, blocks and wakes; it ran in this
        // cycle, so it goes right after the current client (the end of the
        // queue, [1, 0, 2]) and the round goes on with 1 and 0 before it.
        // As a waking client it is owed ⌈C_total·S_A/S_total⌉ = 1 more
        // quantum in this cycle (eqs. 8–9), which ends after it.
        let cycle = s.cycle();
        assert_eq!(run(&mut s, 1), [2]);
        s.block(2).unwrap();
        s.wake(2).unwrap();
        assert_eq!(run(&mut s, 3), [1, 0, 2]);
        assert_eq!(s.cycle(), cycle + 1);
    }
}
