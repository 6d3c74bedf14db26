//! Lottery scheduling (Waldspurger 001 §2.2, §4.2): each quantum goes to the
//! holder of a uniformly drawn ticket, so a client with t of T tickets wins
//! with probability t/T. Four draws of that one distribution: the paper's
//! list with move-to-front, a partial-sum tree (§4.2's "tree of partial
//! ticket sums", 32-ary), an O(1) draw by power-of-two groups with
//! rejection, and the kernel's exponential race (`race.rs`).

use crate::compensation::Compensation;
use crate::currency::{HolderId, Ledger};
use crate::error::{Error, Result};
use crate::race::{neg_ln_q16, race_delta};
use crate::rng::{DefaultRng, Rng, WyRand};
use crate::sched::{check_weight, ClientId, PolicyOptions, Scheduler};

/// Largest sum of tickets of all joined clients. With compensation inflating
/// a value at most 1024-fold plus Zepp's bonus (< 2^31 per client), every
/// running total stays below 2^63 in u64.
pub const MAX_TOTAL_TICKETS: u64 = 1 << 52;

mod list;
mod look_ahead;
mod o1;
mod race_draw;
mod tree;

use self::list::*;
use self::look_ahead::*;
use self::o1::*;
use self::race_draw::*;
use self::tree::*;

const NIL: usize = usize::MAX;

/// How the winner of a lottery is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Draw {
    /// The paper's run queue: a list walked with a running ticket sum, the
    /// winner moved to the front. O(n).
    List,
    /// A 32-ary tree of partial ticket sums over client ids, read as u32
    /// (two cache lines a node) where a node's total is below 2^31; the
    /// winner is the first id whose running sum exceeds the
    /// drawn ticket, as in the list walked in id order. O(log n).
    Tree,
    /// Clients grouped by ⌊log2 tickets⌋; a group is drawn by its ticket sum,
    /// a member uniformly and accepted with probability tickets/2^(k+1) ≥ 1/2
    /// (two candidates per round). O(1) expected (at most 64 groups are
    /// scanned). Holds at most 2^32 clients.
    O1,
    /// Exponential race: keys `T + Exp(1)/tickets` in a heap, smallest wins.
    /// O(log n).
    Race,
}

impl Draw {
    pub const ALL: [Draw; 4] = [Draw::List, Draw::Tree, Draw::O1, Draw::Race];

    /// The policy name as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Draw::List => "lottery",
            Draw::Tree => "lottery-tree",
            Draw::O1 => "lottery-o1",
            Draw::Race => "lottery-race",
        }
    }

    /// The draw a policy name selects, if it is one of the lottery names.
    pub fn from_name(name: &str) -> Option<Draw> {
        Draw::ALL.into_iter().find(|d| d.name() == name)
    }
}

/// What the draw needs of a client: its value is `tickets + extra`.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(16))]
struct Client {
    tickets: u64,
    /// Compensation tickets until the next win.
    extra: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Runnable,
    Blocked,
    Gone,
}

/// A lottery scheduler over abstract clients.
///
/// A client's *value* in the draw is its tickets plus any compensation
/// tickets granted at its last charge; compensation is revoked when the
/// client next wins (Waldspurger §3.4; Zepp §4.2) and survives blocking.
#[derive(Debug, Clone)]
pub struct Lottery<R: Rng = DefaultRng> {
    draw: Draw,
    quantum_ns: u64,
    rng: R,
    compensation: Compensation,
    /// Tickets and compensation side by side: a winner's charge reads both,
    /// and with 10^5 clients each separate array would cost its own miss.
    clients: Vec<Client>,
    state: Vec<State>,
    /// How many clients hold compensation tickets (any state). While it is
    /// 0 a pick has nothing to revoke and does not read the winner's record
    /// (a cache miss of its own with 10^5 clients).
    compensated: usize,
    in_service: Option<ClientId>,
    runnable: usize,
    /// Σ tickets of all joined clients (for the overflow bound).
    joined_tickets: u64,
    /// Σ value of runnable clients, the range of a draw.
    total: u64,
    engine: Engine,
    /// `opts.seed`: seeds the O(1) look-ahead's generators.
    seed: u64,
    /// Runnable clients from which the O(1) draw looks ahead
    /// ([`O1_PREFETCH_MIN`]; lower in tests, to reach that path cheaply).
    look_ahead_from: usize,
    /// The O(1) draw's planned lotteries, from [`O1_PREFETCH_MIN`]
    /// runnable clients; made at the first such pick and kept (its
    /// generators go on where they were). Below the threshold its plans
    /// lie unused, and go stale with the leave or block that got there.
    ahead: Option<Box<LookAhead>>,
}

impl Lottery<DefaultRng> {
    /// A lottery with the default generator seeded from `opts.seed`. A zero
    /// quantum disables compensation (f is undefined); use
    /// [`Lottery::try_new`] to have it refused instead.
    pub fn new(opts: &PolicyOptions, draw: Draw) -> Lottery<DefaultRng> {
        Lottery::with_rng(opts, draw, DefaultRng::new(opts.seed))
    }

    /// As [`Lottery::new`], refusing a zero quantum.
    pub fn try_new(opts: &PolicyOptions, draw: Draw) -> Result<Lottery<DefaultRng>> {
        if opts.quantum_ns == 0 {
            return Err(Error::ZeroQuantum);
        }
        Ok(Lottery::new(opts, draw))
    }
}

impl<R: Rng> Lottery<R> {
    /// A lottery drawing from a given generator (e.g. `ParkMiller` to follow
    /// the paper's prototype); `opts.seed` also seeds the generators of the
    /// O(1) draw's look-ahead, which draws from 2^16 runnable clients on.
    pub fn with_rng(opts: &PolicyOptions, draw: Draw, rng: R) -> Lottery<R> {
        let engine = match draw {
            Draw::List => Engine::List(ListDraw::default()),
            Draw::Tree => Engine::Tree(TreeDraw::default()),
            Draw::O1 => Engine::O1(Box::default()),
            Draw::Race => Engine::Race(RaceDraw::default()),
        };
        Lottery {
            draw,
            quantum_ns: opts.quantum_ns,
            rng,
            compensation: Compensation::None,
            clients: Vec::new(),
            state: Vec::new(),
            compensated: 0,
            in_service: None,
            runnable: 0,
            joined_tickets: 0,
            total: 0,
            engine,
            seed: opts.seed,
            look_ahead_from: O1_PREFETCH_MIN,
            ahead: None,
        }
    }

    /// Grant compensation tickets at every charge by the given rule.
    pub fn with_compensation(mut self, compensation: Compensation) -> Self {
        self.compensation = compensation;
        self
    }

    pub fn draw(&self) -> Draw {
        self.draw
    }

    pub fn compensation(&self) -> Compensation {
        self.compensation
    }

    /// Compensation tickets a client holds now (0 for the race, which folds
    /// compensation into the winner's next key instead).
    pub fn compensation_tickets(&self, id: ClientId) -> Result<u64> {
        self.known(id)?;
        Ok(self.clients[id].extra)
    }

    /// Σ value of the runnable clients: the range of the next draw.
    pub fn total_value(&self) -> u64 {
        self.total
    }

    fn known(&self, id: ClientId) -> Result<State> {
        match self.state.get(id) {
            None | Some(State::Gone) => Err(Error::UnknownClient(id)),
            Some(&s) => Ok(s),
        }
    }

    /// Known and not in service: the only clients that may be changed.
    fn changeable(&self, id: ClientId) -> Result<State> {
        let s = self.known(id)?;
        if self.in_service == Some(id) {
            return Err(Error::PickPending);
        }
        Ok(s)
    }

    fn value(&self, id: ClientId) -> u64 {
        let c = self.clients[id];
        c.tickets + c.extra
    }

    /// Put a runnable client into the draw with its current value.
    fn insert(&mut self, id: ClientId) {
        let v = self.value(id);
        self.total += v;
        match &mut self.engine {
            Engine::List(l) => l.insert(id),
            Engine::Tree(t) => t.add(id, v),
            Engine::O1(o) => o.insert(id, v),
            Engine::Race(r) => {
                let e = neg_ln_q16(self.rng.next_u32());
                r.push(id, race_delta(e, v, 0, 0, false));
            }
        }
    }

    /// Take a runnable client out of the draw.
    fn remove(&mut self, id: ClientId) {
        let v = self.value(id);
        self.total -= v;
        match &mut self.engine {
            Engine::List(l) => l.remove(id),
            Engine::Tree(t) => t.sub(id, v),
            Engine::O1(o) => o.remove(id, v),
            Engine::Race(r) => r.remove(id),
        }
    }

    /// Change the tickets and/or compensation of a client; if it is runnable
    /// its draw entry and the total follow. In the list, tree and O(1) draws
    /// a client in service stays in the structure; in the race it is out of
    /// the heap until its charge draws its next key.
    fn revalue(&mut self, id: ClientId, tickets: u64, extra: u64) {
        let c = self.clients[id];
        if tickets == c.tickets && extra == c.extra {
            // Nothing changes (every charge without compensation): keep the
            // hot path free of structure updates.
            return;
        }
        let old = self.value(id);
        let new = tickets + extra;
        if self.state[id] != State::Runnable {
            // Blocked: not in the draw; the new value applies at wake.
        } else if let Engine::Race(_) = self.engine {
            if self.in_service != Some(id) {
                // Memorylessness: a waiting client's remaining time from T
                // is a fresh Exp(value), so a new value means a fresh key.
                self.remove(id);
                self.set_client(id, tickets, extra);
                self.insert(id);
                return;
            }
            self.total = self.total - old + new;
        } else {
            self.total = self.total - old + new;
            match &mut self.engine {
                Engine::List(_) | Engine::Race(_) => {}
                Engine::Tree(t) => t.add(id, new.wrapping_sub(old)),
                Engine::O1(o) => o.update(id, old, new),
            }
        }
        self.set_client(id, tickets, extra);
    }

    fn set_client(&mut self, id: ClientId, tickets: u64, extra: u64) {
        let had = self.clients[id].extra != 0;
        self.compensated = self.compensated + (extra != 0) as usize - had as usize;
        self.clients[id] = Client { tickets, extra };
    }
}

impl<R: Rng> Lottery<R> {
    /// The error for charging a client not in service: only a known client
    /// can be in service, so this gives the same errors as checking the id
    /// first, without a lookup on the hot path.
    #[cold]
    fn not_in_service(&self, id: ClientId) -> Error {
        match self.known(id) {
            Err(e) => e,
            Ok(_) => Error::NotInService(id),
        }
    }

    /// The value a charge leaves the client in service with: its next key
    /// in the race, its compensation tickets in the other draws.
    #[inline(never)]
    fn charge_value(&mut self, id: ClientId, used_ns: u64) {
        let t = self.clients[id].tickets;
        if let Engine::Race(r) = &mut self.engine {
            let e = neg_ln_q16(self.rng.next_u32());
            // Waldspurger's rule exactly as the kernel computes it; Zepp's
            // rule by the value it would grant, for this one key only.
            let delta = match self.compensation {
                Compensation::Waldspurger => race_delta(e, t, used_ns, self.quantum_ns, true),
                c => {
                    let v = t + c.tickets(t, used_ns, self.quantum_ns);
                    race_delta(e, v, 0, 0, false)
                }
            };
            r.push(id, delta);
        } else {
            let extra = self.compensation.tickets(t, used_ns, self.quantum_ns);
            self.revalue(id, t, extra);
        }
    }
}

impl<R: Rng> Lottery<R> {
    /// The winner of a lottery in the list, tree and race draws.
    #[inline(never)]
    fn draw_winner(&mut self) -> ClientId {
        match &mut self.engine {
            Engine::List(l) => l.pick(&mut self.rng, self.total, &self.clients),
            Engine::Tree(t) => t.pick(&mut self.rng, self.total),
            Engine::O1(o) => o.pick(&mut self.rng, self.total, &self.clients),
            Engine::Race(r) => r.pop(),
        }
    }
}

impl<R: Rng> Scheduler for Lottery<R> {
    fn name(&self) -> &'static str {
        self.draw.name()
    }

    fn join(&mut self, weight: u64) -> Result<ClientId> {
        let w = check_weight(weight)?;
        if self.joined_tickets + w > MAX_TOTAL_TICKETS {
            return Err(Error::Overflow("total tickets above 2^52"));
        }
        if self.draw == Draw::O1 && self.clients.len() > O1_MAX_ID {
            return Err(Error::Overflow("the O(1) draw holds at most 2^32 clients"));
        }
        self.joined_tickets += w;
        let id = self.clients.len();
        self.clients.push(Client {
            tickets: w,
            extra: 0,
        });
        self.state.push(State::Runnable);
        self.engine.grow(id + 1);
        self.runnable += 1;
        self.insert(id);
        Ok(id)
    }

    fn leave(&mut self, id: ClientId) -> Result<()> {
        if self.changeable(id)? == State::Runnable {
            self.remove(id);
            self.runnable -= 1;
        }
        self.joined_tickets -= self.clients[id].tickets;
        self.state[id] = State::Gone;
        Ok(())
    }

    fn set_weight(&mut self, id: ClientId, weight: u64) -> Result<()> {
        self.changeable(id)?;
        let w = check_weight(weight)?;
        let joined = self.joined_tickets - self.clients[id].tickets + w;
        if joined > MAX_TOTAL_TICKETS {
            return Err(Error::Overflow("total tickets above 2^52"));
        }
        self.joined_tickets = joined;
        self.revalue(id, w, self.clients[id].extra);
        Ok(())
    }

    fn weight(&self, id: ClientId) -> Result<u64> {
        self.known(id)?;
        Ok(self.clients[id].tickets)
    }

    fn block(&mut self, id: ClientId) -> Result<()> {
        if self.changeable(id)? == State::Blocked {
            return Err(Error::AlreadyBlocked(id));
        }
        self.remove(id);
        self.state[id] = State::Blocked;
        self.runnable -= 1;
        Ok(())
    }

    fn wake(&mut self, id: ClientId) -> Result<()> {
        if self.changeable(id)? == State::Runnable {
            return Err(Error::AlreadyRunnable(id));
        }
        self.state[id] = State::Runnable;
        self.runnable += 1;
        self.insert(id);
        Ok(())
    }

    /// Hold a lottery. While a picked client has not been charged, the same
    /// client is returned again (it is still in service).
    // Forced inline (a plain hint was declined) into callers that name the
    // type: the O(1) and tree draws are a few dozen instructions, and the
    // call's register saves were a tenth of them.
    #[inline(always)]
    fn pick(&mut self) -> Option<ClientId> {
        if let Some(id) = self.in_service {
            return Some(id);
        }
        if self.runnable == 0 {
            return None;
        }
        // The O(1) and tree draws inline, the others out of line: their
        // few instructions are most of a pick, and a shared body would make
        // them pay for the registers and the jump table of all four.
        let winner = if let Engine::O1(o) = &self.engine {
            if self.runnable >= self.look_ahead_from {
                let seed = self.seed;
                let a = self.ahead.get_or_insert_with(|| LookAhead::new(seed));
                o.pick_ahead(a, self.total, &self.clients)
            } else {
                o.pick(&mut self.rng, self.total, &self.clients)
            }
        } else if let Engine::Tree(t) = &self.engine {
            t.pick(&mut self.rng, self.total)
        } else {
            self.draw_winner()
        };
        if self.compensated > 0 {
            let c = self.clients[winner];
            if c.extra != 0 {
                // Compensation lasts until the client next wins.
                self.revalue(winner, c.tickets, 0);
            }
        }
        self.in_service = Some(winner);
        Some(winner)
    }

    #[inline(always)]
    fn charge(&mut self, id: ClientId, used_ns: u64) -> Result<()> {
        if self.in_service != Some(id) {
            return Err(self.not_in_service(id));
        }
        self.in_service = None;
        if self.compensation == Compensation::None && !matches!(self.engine, Engine::Race(_)) {
            // A plain lottery grants nothing at a charge, and the winner's
            // compensation was revoked when it won: nothing changes. The
            // rest is out of line so this path saves no registers.
            return Ok(());
        }
        self.charge_value(id, used_ns);
        Ok(())
    }

    fn runnable(&self) -> usize {
        self.runnable
    }

    fn quantum_ns(&self) -> u64 {
        self.quantum_ns
    }
}

/// A lottery over the base-unit values of a currency [`Ledger`]
/// (Waldspurger §4.4: "draw … between 0 and the total active tickets in the
/// base currency"). [`CurrencyLottery::sync`] copies every ledger client's
/// value into the lottery as its weight, `max(1, round(value · scale))`;
/// a client competes while it is runnable in the ledger with a value > 0.
/// `scale` sets the resolution: values are fractions of base tickets (a
/// third of 1000 is 333.3…), and rounding at `scale = 1` moves a share by
/// at most 0.5/value.
#[derive(Debug, Clone)]
pub struct CurrencyLottery<R: Rng = DefaultRng> {
    lottery: Lottery<R>,
    scale: f64,
    /// Ledger client → lottery client.
    to_lottery: Vec<Option<ClientId>>,
    /// Lottery client → ledger client.
    to_ledger: Vec<HolderId>,
}

impl<R: Rng> CurrencyLottery<R> {
    /// Wrap an empty lottery. `scale` must be finite and > 0.
    pub fn new(lottery: Lottery<R>, scale: f64) -> Result<CurrencyLottery<R>> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::Invalid(format!("scale {scale} must be > 0")));
        }
        if !lottery.clients.is_empty() {
            return Err(Error::Invalid("the lottery must be empty".into()));
        }
        Ok(CurrencyLottery {
            lottery,
            scale,
            to_lottery: Vec::new(),
            to_ledger: Vec::new(),
        })
    }

    pub fn lottery(&self) -> &Lottery<R> {
        &self.lottery
    }

    /// The lottery client standing for a ledger client, once synced.
    pub fn lottery_id(&self, h: HolderId) -> Option<ClientId> {
        self.to_lottery.get(h).copied().flatten()
    }

    /// Bring the lottery up to date with the ledger: new clients join,
    /// removed ones leave, weights follow values, blocked or unfunded
    /// clients stop competing. A client in service is left as it is until
    /// it has been charged (the protocol allows it nothing else).
    pub fn sync(&mut self, ledger: &Ledger) -> Result<()> {
        let values = ledger.client_values();
        let mut alive = vec![false; self.to_lottery.len()];
        for (h, v) in values {
            if h >= self.to_lottery.len() {
                self.to_lottery.resize(h + 1, None);
                alive.resize(h + 1, false);
            }
            alive[h] = true;
            let w = (v * self.scale)
                .round()
                .clamp(1.0, crate::MAX_WEIGHT as f64) as u64;
            let compete = ledger.is_runnable(h)? && v > 0.0;
            let id = match self.to_lottery[h] {
                Some(id) => {
                    if self.lottery.in_service == Some(id) {
                        continue;
                    }
                    if self.lottery.weight(id)? != w {
                        self.lottery.set_weight(id, w)?;
                    }
                    id
                }
                None => {
                    let id = self.lottery.join(w)?;
                    self.to_lottery[h] = Some(id);
                    self.to_ledger.push(h);
                    id
                }
            };
            let runnable = self.lottery.state[id] == State::Runnable;
            if compete && !runnable {
                self.lottery.wake(id)?;
            } else if !compete && runnable {
                self.lottery.block(id)?;
            }
        }
        for (h, slot) in self.to_lottery.iter_mut().enumerate() {
            if let Some(id) = *slot {
                if !alive[h] && self.lottery.in_service != Some(id) {
                    self.lottery.leave(id)?;
                    *slot = None;
                }
            }
        }
        Ok(())
    }

    /// Hold a lottery; the winner as a ledger client.
    pub fn pick(&mut self) -> Option<HolderId> {
        self.lottery.pick().map(|id| self.to_ledger[id])
    }

    /// Charge the ledger client in service (compensation as configured on
    /// the wrapped lottery).
    pub fn charge(&mut self, h: HolderId, used_ns: u64) -> Result<()> {
        let id = self.lottery_id(h).ok_or(Error::UnknownClient(h))?;
        self.lottery.charge(id, used_ns)
    }
}

#[derive(Debug, Clone)]
// A plain tag: the niche in the boxes' and vectors' pointers made every
// `if let Engine::O1` a five-instruction decode on the pick path.
#[repr(u8)]
enum Engine {
    List(ListDraw),
    Tree(TreeDraw),
    O1(Box<O1Draw>),
    Race(RaceDraw),
}

impl Engine {
    /// Make room for ids below `n` (ids are dense).
    fn grow(&mut self, n: usize) {
        match self {
            Engine::List(l) => {
                l.next.resize(n, NIL);
                l.prev.resize(n, NIL);
            }
            Engine::Tree(t) => t.reserve(n),
            Engine::O1(o) => {
                o.slot.resize(n, 0);
                o.group.resize(n, 0);
            }
            Engine::Race(r) => r.pos.resize(n, NIL),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The engines' inner steps against plain scans, on every input of
    //! small cases and on the boundaries of the 32-bit member encoding.
    use super::*;
    use crate::rng::{DefaultRng, SplitMix64};

    #[test]
    fn tree_find_is_the_running_sum_scan() {
        let mut g = SplitMix64::new(1);
        // One to four levels (FANOUT = 32: 4 levels from 32769 ids).
        for n in [1usize, 7, 31, 32, 33, 100, 1023, 1025, 1100, 33_000] {
            let mut t = TreeDraw::default();
            t.reserve(n);
            let values: Vec<u64> = (0..n)
                .map(|_| match g.next_u64() % 4 {
                    0 => 0, // blocked or departed
                    _ => g.next_u64() % 5,
                })
                .collect();
            for (id, &v) in values.iter().enumerate() {
                t.add(id, v);
                t.add(id, 3);
                t.sub(id, 3);
            }
            let total: u64 = values.iter().sum();
            let mut sum = 0;
            let mut want = Vec::new();
            for (id, &v) in values.iter().enumerate() {
                sum += v;
                want.extend(std::iter::repeat_n(id, v as usize));
            }
            assert_eq!(sum, total);
            for (r, &id) in want.iter().enumerate() {
                assert_eq!(t.find(r as u64), id, "n {n} r {r}");
            }
            // Growing keeps every value.
            t.reserve(4 * n + 20);
            for (id, &v) in values.iter().enumerate() {
                assert_eq!(t.value(id), v);
            }
        }
    }

    #[test]
    fn tree_narrow_nodes_switch_at_2_pow_31() {
        // Node totals on both sides of 2^31 (the last that a u32 node
        // holds is 2^31 − 1), in the leaves and above them, moved across
        // the line by updates: every id's first and last ticket and a
        // random one in between must find that id, as the scan does.
        let mut g = SplitMix64::new(5);
        let n = 3 * FANOUT * FANOUT + 7; // three levels
        let edge = (1u64 << 31) / FANOUT as u64; // 32 of these: 2^31
        let mut t = TreeDraw::default();
        t.reserve(n);
        let mut values = vec![0u64; n];
        for round in 0..6 {
            for (id, v) in values.iter_mut().enumerate() {
                let new = match (round + id / FANOUT) % 4 {
                    0 => edge,                             // leaf total 2^31
                    1 => edge - (id % FANOUT == 0) as u64, // 2^31 − 1
                    2 => g.next_u64() % 1000,
                    _ => g.next_u64() % (1 << 33),
                };
                t.add(id, new.wrapping_sub(*v));
                *v = new;
            }
            let mut start = 0u64;
            for (id, &v) in values.iter().enumerate() {
                if v == 0 {
                    continue;
                }
                for r in [start, start + v - 1, start + g.next_u64() % v] {
                    assert_eq!(t.find(r), id, "round {round} id {id} r {r}");
                }
                start += v;
            }
            let wide = t.narrow.iter().flatten();
            let wide = wide.filter(|n| n.0[FANOUT - 1] == WIDE).count();
            assert!(wide > 0 && wide < t.narrow.iter().flatten().count());
        }
    }

    #[test]
    fn o1_pick_is_the_rounds_loop() {
        // `pick` runs the joint path's first round inline and hands a
        // failed round to `rounds`: the winner and the words taken must
        // be those of `rounds` run from the group's choice on. Groups of
        // every path: small values in crowded and small groups (joint),
        // 2^31.. (one member too many for the joint word), ≥ 2^32 (top
        // bits only).
        let mut g = SplitMix64::new(6);
        for case in 0..40 {
            let mut o = O1Draw::default();
            let n = 1 + case * 7;
            o.slot.resize(n, 0);
            o.group.resize(n, 0);
            let mut clients = Vec::new();
            let mut total = 0;
            for id in 0..n {
                let bits = [3, 10, 31, 33, 45][(g.next_u64() % 5) as usize];
                let v = (1u64 << bits) | (g.next_u64() & ((1u64 << bits) - 1));
                clients.push(Client {
                    tickets: v,
                    extra: 0,
                });
                o.insert(id, v);
                total += v;
            }
            let mut a = DefaultRng::new(case as u64);
            let mut b = a.clone();
            for _ in 0..200 {
                let won = o.pick(&mut a, total, &clients);
                let (k, _) = o.group(b.below(total));
                assert_eq!(won, o.rounds(&mut b, k, &clients), "case {case}");
                assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn o1_group_is_the_heaviest_first_scan() {
        let mut g = SplitMix64::new(2);
        for _ in 0..200 {
            let mut o = O1Draw::default();
            for k in 0..64 {
                if g.next_u64() % 3 == 1 {
                    o.sums[k] = 1 + g.next_u64() % 6;
                    o.nonempty |= 1 << k;
                }
            }
            if o.nonempty == 0 {
                continue;
            }
            let mut r = 0;
            for k in (0..64).rev().filter(|k| o.nonempty >> k & 1 == 1) {
                for off in 0..o.sums[k] {
                    assert_eq!(o.group(r), (k, off));
                    r += 1;
                }
            }
        }
    }

    #[test]
    fn o1_look_ahead_group_is_the_heaviest_two_then_the_scan() {
        // The look-ahead's order: the two largest sums (ties to the lower
        // group), then the other groups from the top down.
        let mut g = SplitMix64::new(4);
        for case in 0..300 {
            let mut o = O1Draw::default();
            let p = 1 + case % 5;
            for k in 0..64 {
                if g.next_u64().is_multiple_of(p) {
                    o.sums[k] = 1 + g.next_u64() % 6;
                    o.nonempty |= 1 << k;
                }
            }
            if o.nonempty == 0 {
                continue;
            }
            let mut ks: Vec<usize> = (0..64).filter(|k| o.nonempty >> k & 1 == 1).collect();
            ks.sort_by(|&a, &b| o.sums[b].cmp(&o.sums[a]).then(a.cmp(&b)));
            let heavy = o.heaviest();
            assert_eq!(heavy[0], ks[0]);
            assert_eq!(heavy[1], *ks.get(1).unwrap_or(&ks[0]));
            let ord = o.order();
            let mut rest: Vec<usize> = ks.iter().skip(2).copied().collect();
            rest.sort_by(|a, b| b.cmp(a));
            let order: Vec<usize> = ks.iter().take(2).chain(&rest).copied().collect();
            let mut r = 0;
            for &k in &order {
                for _ in 0..o.sums[k] {
                    assert_eq!(o.group_ahead(r, &ord), k, "case {case} r {r}");
                    r += 1;
                }
            }
        }
    }

    #[test]
    fn acceptance_is_exact_on_the_top_bits_boundary() {
        // Values of groups k ≥ 32 keep only their top 32 bits; bits that
        // tie with them must be decided by the full value.
        let mut g = SplitMix64::new(3);
        for k in [0usize, 1, 31, 32, 33, 40, 52, 63] {
            let sh = shift(k);
            for _ in 0..50 {
                let span = if k == 63 {
                    u64::MAX >> 1
                } else {
                    (1u64 << k) - 1
                };
                let v = (1u64 << k) | (g.next_u64() & span);
                let clients = [Client {
                    tickets: v / 3,
                    extra: v - v / 3,
                }];
                let m = Member {
                    top: (v >> sh) as u32,
                    id: 0,
                };
                let low = (1u64 << sh) - 1;
                let hi_bound = if k == 63 { u64::MAX } else { (2u64 << k) - 1 };
                for bits in [
                    0,
                    v - 1,
                    v,
                    v.saturating_add(1).min(hi_bound),
                    v & !low,
                    (v | low).min(hi_bound),
                    g.next_u64() & hi_bound,
                ] {
                    assert_eq!(
                        accepts(bits, sh, m, &clients),
                        bits < v,
                        "k {k} v {v} bits {bits}"
                    );
                }
            }
        }
    }

    #[test]
    fn two_below_halves() {
        // len = 2^32: never rejects, the halves themselves.
        let x = 0x1234_5678_9abc_def0u64;
        assert_eq!(two_below(x, 1 << 32), Some((0x9abc_def0, 0x1234_5678)));
        // len = 1: always (0, 0).
        assert_eq!(two_below(x, 1), Some((0, 0)));
        // len = 3: 2^32 mod 3 = 1, so only a half of 0 (low product 0) is
        // rejected; the largest half maps to 2.
        assert_eq!(two_below(0, 3), None);
        assert_eq!(two_below(u32::MAX as u64, 3), None);
        assert_eq!(two_below(u64::MAX, 3), Some((2, 2)));
        let mut g = SplitMix64::new(4);
        for _ in 0..10_000 {
            let len = 1 + g.next_u64() % 5000;
            if let Some((a, b)) = two_below(g.next_u64(), len) {
                assert!(a < len && b < len);
            }
        }
    }

    #[test]
    fn pair_below_is_lemire_below_n_squared() {
        // The pair must be the base-n digits of Lemire's draw below n²,
        // rejected exactly when that draw is (low word < 2^64 mod n²),
        // here worked out in 128 bits with a modulo.
        let lemire = |w: u64, n: u64| {
            let nn = n as u128 * n as u128;
            let m = w as u128 * nn;
            let t = (1u128 << 64) % nn;
            let j = (m >> 64) as u64;
            ((m as u64 as u128) >= t).then_some((j / n, j % n))
        };
        // 2^64 mod 9 = 7: a zero word is rejected.
        assert_eq!(pair_below(0, 3), None);
        assert_eq!(pair_below(u64::MAX, 3), Some((2, 2)));
        assert_eq!(pair_below(12345, 1), Some((0, 0)));
        let mut g = SplitMix64::new(8);
        let mut rejected = 0;
        for i in 0..200_000u64 {
            let n = match i % 4 {
                0 => u32::MAX as u64,
                1 => 1 + g.next_u64() % 16,
                2 => (1 << 31) + g.next_u64() % (1 << 31),
                _ => 1 + g.next_u64() % ((1 << 32) - 1),
            };
            // Half the words near the bottom, where rejections lie.
            let w = if i % 2 == 0 {
                g.next_u64()
            } else {
                g.next_u64() % (1 << 12)
            };
            let got = pair_below(w, n);
            assert_eq!(got, lemire(w, n), "w {w:#x} n {n}");
            rejected += got.is_none() as u32;
        }
        assert!(rejected > 0, "no rejection exercised");
    }
}
