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

/// The run queue as an intrusive doubly linked list over ids.
#[derive(Debug, Clone, Default)]
struct ListDraw {
    head: usize,
    next: Vec<usize>,
    prev: Vec<usize>,
    len: usize,
}

impl ListDraw {
    fn insert(&mut self, id: usize) {
        // New and woken clients go to the back, as a run queue appends them.
        if self.len == 0 {
            self.head = id;
            self.next[id] = id;
            self.prev[id] = id;
        } else {
            let tail = self.prev[self.head];
            self.next[tail] = id;
            self.prev[id] = tail;
            self.next[id] = self.head;
            self.prev[self.head] = id;
        }
        self.len += 1;
    }

    fn remove(&mut self, id: usize) {
        self.len -= 1;
        if self.len == 0 {
            self.head = NIL;
        } else {
            let (p, n) = (self.prev[id], self.next[id]);
            self.next[p] = n;
            self.prev[n] = p;
            if self.head == id {
                self.head = n;
            }
        }
        self.next[id] = NIL;
        self.prev[id] = NIL;
    }

    fn pick<R: Rng>(&mut self, rng: &mut R, total: u64, clients: &[Client]) -> usize {
        let r = rng.below(total);
        let mut sum = 0u64;
        let mut id = self.head;
        loop {
            sum += clients[id].tickets + clients[id].extra;
            if sum > r {
                break;
            }
            id = self.next[id];
        }
        if id != self.head {
            self.remove(id);
            // Re-link at the front: insert puts it at the back of the ring,
            // so moving the head pointer onto it makes it the front.
            self.insert(id);
            self.head = id;
        }
        id
    }
}

/// Children per node of the sum tree: 32 u64, four whole cache lines. The
/// levels of a descent are a chain of dependent loads while a node's lines
/// load side by side, so few wide levels win: 32 measured faster than 8 or
/// 16 at 10^3 and 10^5 clients (4 levels at 10^5).
const FANOUT: usize = 32;

/// One node of the sum tree, aligned to cache lines. Entry `j` is the
/// inclusive prefix sum of the node's children `0..=j`, so the last entry
/// is the node's total and a descent needs no adding up.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
struct Node([u64; FANOUT]);

/// A node's prefix sums as u32 while its total is below 2^31 (so every
/// entry and a ticket below the total fit, with a sign bit to spare for
/// the branch-free count); a wider node has [`WIDE`] as its last entry
/// and a descent reads its [`Node`] instead. Rewritten from the node at
/// every update, so it is exact whenever it is used.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Narrow([u32; FANOUT]);

/// The last entry of a [`Narrow`] whose node total is 2^31 or more.
const WIDE: u32 = u32::MAX;

impl Narrow {
    fn of(node: &Node) -> Narrow {
        let mut n = Narrow([0; FANOUT]);
        if node.0[FANOUT - 1] < 1 << 31 {
            for (d, &p) in n.0.iter_mut().zip(&node.0) {
                *d = p as u32;
            }
        } else {
            n.0[FANOUT - 1] = WIDE;
        }
        n
    }
}

/// A [`FANOUT`]-ary tree of partial sums of values over ids; blocked and
/// departed clients count 0. A draw descends one node per level (4 levels
/// at 10^5 clients, against 17 dependent loads of a binary Fenwick tree),
/// and an update walks leaf to root at addresses known from the id alone,
/// so its loads do not wait on one another.
#[derive(Debug, Clone, Default)]
struct TreeDraw {
    /// With B = FANOUT, `levels[0]` holds ids `Bi..Bi+B` in node `i`; node
    /// `i` of `levels[k + 1]` holds the totals of nodes `Bi..Bi+B` of
    /// `levels[k]`. The last level is a single node, the root.
    levels: Vec<Vec<Node>>,
    /// The same nodes in u32 ([`Narrow`]), which a descent reads instead:
    /// half the bytes (the leaf level of 10^5 ids then fits in L2) and
    /// twice the entries per vector compare.
    narrow: Vec<Vec<Narrow>>,
    /// Number of id slots, `B · levels[0].len()`: a power of two ≥ B.
    cap: usize,
}

impl TreeDraw {
    /// The value of one id, from the prefix sums of its leaf node.
    fn value(&self, id: usize) -> u64 {
        let node = &self.levels[0][id / FANOUT].0;
        let j = id % FANOUT;
        let before = if j == 0 { 0 } else { node[j - 1] };
        node[j].wrapping_sub(before)
    }

    fn reserve(&mut self, n: usize) {
        if n <= self.cap {
            return;
        }
        // Rebuild at (at least) double size from the values: O(cap), so
        // amortised O(1) per join.
        let mut cap = self.cap.max(FANOUT);
        while cap < n {
            cap *= 2;
        }
        let mut values: Vec<u64> = (0..self.cap).map(|id| self.value(id)).collect();
        values.resize(cap, 0);
        let mut levels = Vec::new();
        let mut level = Self::build_level(&values);
        while level.len() > 1 {
            let totals: Vec<u64> = level.iter().map(|n| n.0[FANOUT - 1]).collect();
            let up = Self::build_level(&totals);
            levels.push(level);
            level = up;
        }
        levels.push(level);
        self.narrow = levels
            .iter()
            .map(|l| l.iter().map(Narrow::of).collect())
            .collect();
        self.levels = levels;
        self.cap = cap;
    }

    /// Nodes holding the inclusive prefix sums of `items` in runs of B
    /// (the last run padded with zeros).
    fn build_level(items: &[u64]) -> Vec<Node> {
        items
            .chunks(FANOUT)
            .map(|run| {
                let mut node = Node::default();
                let mut sum = 0u64;
                for (j, slot) in node.0.iter_mut().enumerate() {
                    sum = sum.wrapping_add(run.get(j).copied().unwrap_or(0));
                    *slot = sum;
                }
                node
            })
            .collect()
    }

    /// Add `delta` (mod 2^64, so a subtraction is the negated amount) to the
    /// value of `id`: in each node on the way up, to the prefixes of its
    /// child and of every later child.
    fn add(&mut self, id: usize, delta: u64) {
        let mut i = id;
        for (level, narrow) in self.levels.iter_mut().zip(&mut self.narrow) {
            let j = i % FANOUT;
            let node = &mut level[i / FANOUT];
            // A mask rather than a loop from j: no branch on the position.
            for (t, x) in node.0.iter_mut().enumerate() {
                let take = 0u64.wrapping_sub((t >= j) as u64);
                *x = x.wrapping_add(delta & take);
            }
            narrow[i / FANOUT] = Narrow::of(node);
            i /= FANOUT;
        }
    }

    fn sub(&mut self, id: usize, v: u64) {
        self.add(id, v.wrapping_neg());
    }

    /// The id whose running sum first exceeds a uniform `r < total`.
    fn pick<R: Rng>(&self, rng: &mut R, total: u64) -> usize {
        self.find(rng.below(total))
    }

    /// The id whose running sum (in id order) first exceeds `r`.
    #[inline]
    fn find(&self, mut r: u64) -> usize {
        let mut i = 0usize;
        for (level, narrow) in self.levels.iter().rev().zip(self.narrow.iter().rev()) {
            let n = &narrow[i].0;
            // The child is the number of prefixes ≤ r, counted without
            // branches (the comparisons are coin flips to a predictor) as
            // the sign bits of p − (r + 1): in a narrow node every sum and
            // r + 1 are < 2^31, in a wide one every sum is < 2^63.
            // r < node total (the last entry), so c < B while the sums are
            // right; the `%` only keeps a broken invariant from indexing out.
            let (c, before) = if n[FANOUT - 1] != WIDE {
                let r1 = (r as u32).wrapping_add(1);
                // Summed in u32 so that the count stays in 4-lane vectors.
                let c = n.iter().map(|&p| p.wrapping_sub(r1) >> 31).sum::<u32>() as usize;
                let before = if c == 0 { 0 } else { n[(c - 1) % FANOUT] };
                (c, before as u64)
            } else {
                let node = &level[i].0;
                let r1 = r + 1;
                let c = node
                    .iter()
                    .map(|&p| (p.wrapping_sub(r1) >> 63) as usize)
                    .sum::<usize>();
                (c, if c == 0 { 0 } else { node[(c - 1) % FANOUT] })
            };
            r -= before;
            i = i * FANOUT + c;
        }
        i
    }
}

/// One member of an O(1)-draw group in 8 bytes, so that a group of 10^5
/// clients stays within a megabyte and a candidate costs one memory access.
/// `top` is the member's value shifted right by `shift(k)` (its top 32
/// bits in groups k ≥ 32, the whole value below), enough to decide the
/// acceptance test except on a tie of those bits (p < 2^-31).
#[derive(Debug, Clone, Copy)]
struct Member {
    top: u32,
    id: u32,
}

/// Bits of a group-k value below the 32 kept in [`Member::top`].
#[inline]
fn shift(k: usize) -> u32 {
    k.saturating_sub(31) as u32
}

/// Clients grouped by ⌊log2 value⌋. `slot[id]` is the index in its group's
/// member list, `group[id]` the group, so removal is a swap-remove.
#[derive(Debug, Clone)]
struct O1Draw {
    members: [Vec<Member>; 64],
    sums: [u64; 64],
    /// `len << (k+1)` for group k when one 32-bit half of a word can carry
    /// a candidate's index and acceptance bits (k < 32, len ≤ 2^31 >> k),
    /// else 0: kept with the member lists so a draw does not work it out.
    spans: [u64; 64],
    nonempty: u64,
    slot: Vec<usize>,
    group: Vec<u8>,
    /// Bumped by every change of the members, so that a planned lottery
    /// knows whether the group and candidates it worked out still hold.
    version: u64,
}

impl Default for O1Draw {
    fn default() -> Self {
        O1Draw {
            members: std::array::from_fn(|_| Vec::new()),
            sums: [0; 64],
            spans: [0; 64],
            nonempty: 0,
            slot: Vec::new(),
            group: Vec::new(),
            version: 0,
        }
    }
}

/// Largest id the O(1) draw can hold (ids are 32 bits in a [`Member`]).
const O1_MAX_ID: usize = u32::MAX as usize;

/// Runnable clients from which the O(1) draw plans its lotteries ahead
/// ([`LookAhead`]): 2^16 members are 512 KB, the size of L2 here. Measured
/// (alternated six times) at 7·10^4 and 10^5 clients, planning took a pick
/// from 19.2 / 19.9 ns to 15.4 / 16.0 (medians); when plans cost four
/// xoshiro words (before wyrand and the cached group order) it made 10^5
/// dearer (19 against 15 ns), hence 2^18 then.
const O1_PREFETCH_MIN: usize = 1 << 16;

/// Lotteries planned ahead: at ~20 ns a pick, 8 give a prefetch ~160 ns
/// to land, more than one miss to DRAM through a nested page walk in this
/// VM (a chained random read over 8 MB: 50–140 ns). Measured at 10^6
/// clients: 4 were too few (23–25 ns against 19 ns), 16 no better than 8.
const O1_LOOKAHEAD: usize = 8;

/// Mixed into the policy's seed for the look-ahead's generators, so that
/// their words are not those of another generator from the same seed.
const WORDS_SEED: u64 = 0x2545_f491_4f6c_dd1d;
const RETRY_SEED: u64 = 0x6c07_8965_d5a6_2c1d;

/// Candidates in a planned lottery's first round. A round fails when all
/// reject, with probability E[(1 − value/2^(k+1))^c] ≤ 2^-c (weights
/// uniform in an octave: 1/12 for 2, 1/32 for 3), and a failed round goes
/// on from the retry generator, its lines prefetched only when it falls
/// in the group of the last failure; each candidate is one more line to
/// fetch per pick. Drawn two to a word ([`pair_below`]). Measured in
/// criterion, alternated four times: 2 against 3 took pick + charge from
/// 18.0 to 15.1 ns at 10^5 clients and from 21.9 to 19.7 at 10^6 (medians).
const O1_CANDIDATES: usize = 2;

/// A plan's `k` when its ticket word was rejected: the whole lottery is
/// drawn from the retry generator.
const PLAN_NONE: usize = 128;

/// Added to a plan's `k` when its group is known but its candidates are
/// not (a rejected candidate word, or a group of values ≥ 2^32): the
/// lottery goes on from the retry generator in that group.
const PLAN_GROUP_ONLY: usize = 64;

/// A lottery planned [`O1_LOOKAHEAD`] picks before it is held: the group
/// and candidates its words named, as of the members' `version`. The
/// words themselves are not kept: a plan gone stale is dropped and its
/// lottery drawn afresh from the retry generator — whether a plan goes
/// stale depends on the callers' changes, never on the plan's words, so
/// dropping it biases nothing. So is a plan made before the clients last
/// fell below the threshold: any leave or block since bumped `version`.
#[derive(Debug, Clone, Copy)]
struct Plan {
    version: u64,
    /// The group, below 64 when `cands` hold the first round; else
    /// [`PLAN_GROUP_ONLY`] + the group, or [`PLAN_NONE`].
    k: usize,
    cands: [u64; O1_CANDIDATES],
}

/// The groups in the look-ahead's order ([`O1Draw::order`]): `first`, the
/// two heaviest, take tickets below `cut[0]` and `cut[1]`; the groups of
/// `rest` follow from the top down.
#[derive(Debug, Clone, Copy, Default)]
struct Order {
    first: [usize; 2],
    cut: [u64; 2],
    rest: u64,
}

/// No plan: the lottery is drawn from the retry generator.
const UNPLANNED: Plan = Plan {
    version: 0,
    k: PLAN_NONE,
    cands: [0; O1_CANDIDATES],
};

/// The O(1) draw's look-ahead: the next [`O1_LOOKAHEAD`] lotteries, each
/// planned (its words drawn, its first members prefetched) when the one
/// that many picks earlier is held. A lottery's words are fixed when it
/// is planned, so the members it loads first are known — and in cache —
/// by the time it is held; anything else it needs comes from `retry`.
/// Its own generators, not the policy's: wyrand's words cost half the
/// instructions of xoshiro256**'s (with three words a plan, cachegrind
/// counted ~30 fewer a pick), and a lottery's law does not depend on
/// which generator its words come from.
#[derive(Debug, Clone)]
struct LookAhead {
    plans: [Plan; O1_LOOKAHEAD],
    /// The plan of the next lottery.
    next: usize,
    /// The plans' words.
    words: WyRand,
    /// Whatever a plan cannot settle.
    retry: WyRand,
    /// [`O1Draw::order`] as of the members' version `order_version`.
    order: Order,
    order_version: u64,
}

impl LookAhead {
    fn new(seed: u64) -> Box<LookAhead> {
        Box::new(LookAhead {
            plans: [UNPLANNED; O1_LOOKAHEAD],
            next: 0,
            words: WyRand::new(seed ^ WORDS_SEED),
            retry: WyRand::new(seed ^ RETRY_SEED),
            order: Order::default(),
            // No version of the members reaches this (2^64 − 1 changes).
            order_version: u64::MAX,
        })
    }
}

/// Ask for the cache line at `p` without waiting for it (a hint: no
/// fault, whatever the address).
#[inline(always)]
fn prefetch_line<T>(p: *const T) {
    // SAFETY: the intrinsic needs SSE, which every x86_64 target has, and
    // a prefetch never dereferences: any address, even a dangling one, is
    // allowed. Measured: planning ahead takes two thirds off a pick at
    // 10^6 clients.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The member index a joint-path candidate u names in group k (its low
/// k + 1 bits are the acceptance bits): shared by the draw and the
/// look-ahead, which must aim at the members the draw will read.
#[inline(always)]
fn joint_index(k: usize, u: u64) -> usize {
    (u >> (k + 1)) as usize
}

impl O1Draw {
    fn insert(&mut self, id: usize, v: u64) {
        let k = 63 - v.leading_zeros() as usize;
        self.slot[id] = self.members[k].len();
        self.group[id] = k as u8;
        // `join` refuses ids above O1_MAX_ID, so the cast keeps the id.
        self.members[k].push(Member {
            top: (v >> shift(k)) as u32,
            id: id as u32,
        });
        self.sums[k] += v;
        self.nonempty |= 1 << k;
        self.respan(k);
        self.version = self.version.wrapping_add(1);
    }

    fn respan(&mut self, k: usize) {
        let len = self.members[k].len() as u64;
        let joint = k < 32 && len <= (1u64 << 31) >> k;
        self.spans[k] = if joint { len << (k + 1) } else { 0 };
    }

    fn remove(&mut self, id: usize, v: u64) {
        let k = self.group[id] as usize;
        let s = self.slot[id];
        let m = &mut self.members[k];
        m.swap_remove(s);
        if s < m.len() {
            self.slot[m[s].id as usize] = s;
        }
        self.sums[k] -= v;
        if m.is_empty() {
            self.nonempty &= !(1 << k);
        }
        self.respan(k);
        self.version = self.version.wrapping_add(1);
    }

    /// A new value for a member: in place when it stays in its group.
    fn update(&mut self, id: usize, old: u64, new: u64) {
        let k = self.group[id] as usize;
        if 63 - new.leading_zeros() as usize == k {
            self.members[k][self.slot[id]].top = (new >> shift(k)) as u32;
            self.sums[k] = self.sums[k] - old + new;
            self.version = self.version.wrapping_add(1);
        } else {
            self.remove(id, old);
            self.insert(id, new);
        }
    }

    #[inline]
    fn pick<R: Rng>(&self, rng: &mut R, total: u64, clients: &[Client]) -> usize {
        let (k, _) = self.group(rng.below(total));
        let k = k % 64;
        // The first round of the joint path (below) inline, where most
        // lotteries end; a failed round or the other path go on out of
        // line, from the next round, taking the same words in the same
        // order as if the first round had run there. The rounds' set-up
        // (masks, shifts) and registers are then paid only when needed.
        let span = self.spans[k];
        if span != 0 {
            if let Some((u1, u2)) = two_below(rng.next_u64(), span) {
                if let Some(id) = self.joint_round(k, [u1, u2]) {
                    return id;
                }
            }
        }
        self.rounds(rng, k, clients)
    }

    /// One round of the joint path in group k from N uniform draws below
    /// `len << (k+1)` (two in the ordinary draw, [`O1_CANDIDATES`] in the
    /// look-ahead): each is a candidate's index (high bits) and acceptance
    /// bits (the low k + 1); the first that accepts wins. Taken last to
    /// first, so that the first acceptance is the last to set `id`.
    /// Values < 2^32 here, so bits < value is the sign of their difference;
    /// arithmetic rather than compares, so that the compiler neither
    /// branches on a candidate (a coin flip to a predictor) nor delays the
    /// next one's load, and one sign test of them all OR-ed covers "any
    /// accepts".
    #[inline(always)]
    fn joint_round<const N: usize>(&self, k: usize, u: [u64; N]) -> Option<usize> {
        let k = k % 64;
        let bits = (1u64 << (k + 1)) - 1;
        let m = &self.members[k];
        let (mut id, mut any) = (0u32, 0u64);
        for &u in u.iter().rev() {
            let c = m.get(joint_index(k, u))?;
            let d = (u & bits).wrapping_sub(c.top as u64);
            id ^= (c.id ^ id) & ((d as i64) >> 63) as u32;
            any |= d;
        }
        ((any as i64) < 0).then_some(id as usize)
    }

    /// Rounds of candidates in group `k` until one is accepted.
    #[inline(never)]
    fn rounds<R: Rng>(&self, rng: &mut R, k: usize, clients: &[Client]) -> usize {
        // Nothing below panics (no bounds checks): a panic path would make
        // the compiler keep the generator's state in memory, not registers.
        let k = k % 64;
        let m = &self.members[k];
        let len = m.len() as u64;
        let sh = shift(k);
        // One 32-bit half of a word gives a candidate its index and its k+1
        // acceptance bits together, as one uniform u < len·2^(k+1) (index
        // u >> (k+1), bits the rest), when that product fits in 32 bits.
        let span = self.spans[k];
        let joint = span != 0;
        loop {
            // A member uniformly, accepted with probability value/2^(k+1):
            // P(id) ∝ (1/len)·value/2^(k+1) ∝ value, and value ≥ 2^k makes
            // acceptance ≥ 1/2. Two independent candidates per round, both
            // loaded at once: the first accepted of an i.i.d. sequence of
            // trials has the law of one trial repeated until accepted, and a
            // round fails with probability ≤ 1/4.
            if joint {
                let Some((u1, u2)) = two_below(rng.next_u64(), span) else {
                    continue;
                };
                match self.joint_round(k, [u1, u2]) {
                    Some(id) => return id,
                    None => continue,
                }
            }
            let Some((j1, j2)) = two_below(rng.next_u64(), len) else {
                continue;
            };
            let (b1, b2) = if k < 32 {
                // Both candidates' k+1 uniform bits from one word's halves.
                let x = rng.next_u64();
                ((x & 0xffff_ffff) >> (31 - k), x >> (63 - k))
            } else {
                (rng.next_u64() >> (63 - k), rng.next_u64() >> (63 - k))
            };
            let (Some(&c1), Some(&c2)) = (m.get(j1 as usize), m.get(j2 as usize)) else {
                continue;
            };
            let a1 = accepts(b1, sh, c1, clients);
            let a2 = accepts(b2, sh, c2, clients);
            if a1 | a2 {
                return if a1 { c1.id } else { c2.id } as usize;
            }
        }
    }

    /// Plan a lottery from words of `rng` (the look-ahead's own) — one for
    /// the ticket, one per two candidates — and prefetch the members its
    /// first round will read.
    #[inline(always)]
    fn plan(&self, rng: &mut WyRand, total: u64, order: &Order) -> Plan {
        let ticket = rng.next_u64();
        let mut words = [0; O1_CANDIDATES.div_ceil(2)];
        for w in &mut words {
            *w = rng.next_u64();
        }
        let mut p = Plan {
            version: self.version,
            k: PLAN_NONE,
            cands: [0; O1_CANDIDATES],
        };
        let Some(r) = below_word(ticket, total) else {
            return p;
        };
        let k = self.group_ahead(r, order);
        p.k = k | PLAN_GROUP_ONLY;
        if let Some(cands) = self.candidates(k, words) {
            let base = self.members[k].as_ptr();
            for u in cands {
                prefetch_line(base.wrapping_add(joint_index(k, u)));
            }
            (p.k, p.cands) = (k, cands);
        }
        p
    }

    /// The candidates `words` name in group k, uniform below
    /// `len << (k+1)` (index and acceptance bits, as in
    /// [`O1Draw::joint_round`]), two from each word by [`pair_below`] —
    /// the 32-bit halves of [`O1Draw::pick`] are rejected ~10% of the time
    /// at 10^6 clients. None when a word is rejected or the group holds
    /// values ≥ 2^32.
    #[inline(always)]
    fn candidates(
        &self,
        k: usize,
        words: [u64; O1_CANDIDATES.div_ceil(2)],
    ) -> Option<[u64; O1_CANDIDATES]> {
        // The joint span (0 when the group has none), below 2^32 so that
        // span² fits a word.
        let span = self.spans[k % 64];
        if span.wrapping_sub(1) >= u32::MAX as u64 {
            return None;
        }
        let mut c = [0; O1_CANDIDATES];
        for (i, &w) in words.iter().enumerate() {
            let (a, b) = pair_below(w, span)?;
            c[2 * i] = a;
            if let Some(x) = c.get_mut(2 * i + 1) {
                *x = b;
            }
        }
        Some(c)
    }

    /// A lottery of the look-ahead: the oldest plan is held and a new one
    /// made in its place for the lottery [`O1_LOOKAHEAD`] picks on. The
    /// plan's group and candidates stand if no client changed since it was
    /// made; else the lottery is drawn afresh from `retry`, as is whatever
    /// the plan cannot settle — a rejected word, a group of values ≥ 2^32,
    /// a first round that accepts no one. The law is the ordinary draw's:
    /// the ticket is uniform, and the first accepted of independent
    /// uniform candidates is drawn with probability ∝ value, from
    /// whichever generator they come.
    #[inline]
    fn pick_ahead(&self, a: &mut LookAhead, total: u64, clients: &[Client]) -> usize {
        if a.order_version != self.version {
            (a.order, a.order_version) = (self.order(), self.version);
        }
        let i = a.next % O1_LOOKAHEAD;
        let p = &a.plans[i];
        // The lottery is settled from its plan before the plan's slot is
        // reused (no copy of it); its words were taken long ago.
        let held = if p.version == self.version && p.k < 64 {
            self.joint_round(p.k, p.cands).ok_or(p.k)
        } else if p.version == self.version && p.k < PLAN_NONE {
            Err(p.k - PLAN_GROUP_ONLY)
        } else {
            Err(PLAN_NONE)
        };
        a.plans[i] = self.plan(&mut a.words, total, &a.order);
        a.next = (i + 1) % O1_LOOKAHEAD;
        match held {
            Ok(id) => id,
            Err(PLAN_NONE) => self.redraw(&mut a.retry, total, clients),
            Err(k) => {
                let id = self.rounds(&mut a.retry, k, clients);
                self.prefetch_retry(&a.retry, k);
                id
            }
        }
    }

    /// The group a ticket r names in the look-ahead's order of the groups
    /// (`order`, from [`O1Draw::order`]): one compare, made arithmetic (a
    /// branch on it would be a coin flip to a predictor), tells the two
    /// heaviest groups apart; the scan past them is rare.
    #[inline(always)]
    fn group_ahead(&self, r: u64, order: &Order) -> usize {
        if r >= order.cut[1] {
            return self.group_rest(r - order.cut[1], order.rest).0;
        }
        order.first[(r >= order.cut[0]) as usize]
    }

    /// The group of offset r past the first two groups of either order
    /// ([`O1Draw::group`], [`O1Draw::group_ahead`]), and r's offset in it:
    /// the groups of `mask` laid end to end from the top down.
    #[inline]
    fn group_rest(&self, mut r: u64, mut mask: u64) -> (usize, u64) {
        loop {
            let k = 63 - (mask | 1).leading_zeros() as usize;
            mask &= !(1 << k);
            if r < self.sums[k] || mask == 0 {
                return (k, r);
            }
            r -= self.sums[k];
        }
    }

    /// A lottery whose plan is stale or lost its ticket, drawn afresh from
    /// the retry generator; out of line, as the plan's fallbacks are.
    #[inline(never)]
    fn redraw(&self, retry: &mut WyRand, total: u64, clients: &[Client]) -> usize {
        self.pick(retry, total, clients)
    }

    /// Prefetch the members the next retry round would take in group k
    /// (retry words are taken only by failed first rounds, so the lines
    /// stay until the next failure, which is most often in the same group).
    #[inline(never)]
    fn prefetch_retry(&self, retry: &WyRand, k: usize) {
        let k = k % 64;
        let mut g = retry.clone();
        if let Some((u1, u2)) = two_below(g.next_u64(), self.spans[k]) {
            let base = self.members[k].as_ptr();
            prefetch_line(base.wrapping_add(joint_index(k, u1)));
            prefetch_line(base.wrapping_add(joint_index(k, u2)));
        }
    }

    /// The group whose stretch of `[0, total)` holds `r`, the groups laid
    /// end to end from the largest values down, and r's offset in it. The
    /// two top groups are told apart without a branch (they usually hold most of
    /// the tickets, and which one wins is a coin flip to a predictor); the
    /// rest are scanned. `| 1` and `% 64` only keep a broken invariant
    /// (r ≥ Σ sums) from indexing out; it cannot arise.
    #[inline]
    fn group(&self, mut r: u64) -> (usize, u64) {
        let mut mask = self.nonempty;
        let k1 = 63 - (mask | 1).leading_zeros() as usize;
        mask &= !(1 << k1);
        let k2 = 63 - (mask | 1).leading_zeros() as usize;
        let s1 = self.sums[k1 % 64];
        let s2 = self.sums[k2 % 64] & 0u64.wrapping_sub((mask != 0) as u64);
        // Comparisons as sign bits of differences (every sum is < 2^63):
        // written as compares, the compiler turns them back into branches.
        let second = s1.wrapping_sub(r).wrapping_sub(1) >> 63;
        r -= s1 & 0u64.wrapping_sub(second);
        let k = k1 ^ ((k1 ^ k2) & 0usize.wrapping_sub(second as usize));
        if second & (s2.wrapping_sub(r).wrapping_sub(1) >> 63) != 0 {
            return self.group_rest(r - s2, mask & !(1 << k2));
        }
        (k, r)
    }

    /// The look-ahead's order of the groups: which group a ticket names
    /// does not change the law, so the two of the largest sums come first
    /// and the scan past them (a branch, mispredicted when taken) is rare.
    /// With weights over 1..=1024, the two top groups by value hold 75% of
    /// the tickets, the two heaviest 94%.
    fn order(&self) -> Order {
        let first = self.heaviest();
        let one = first[0] == first[1];
        let cut0 = self.sums[first[0]];
        let cut1 = cut0 + if one { 0 } else { self.sums[first[1]] };
        Order {
            first,
            cut: [cut0, cut1],
            rest: self.nonempty & !(1 << first[0]) & !(1 << first[1]),
        }
    }

    /// The two groups of the largest sums (ties to the lower group; the
    /// second is the first when one group is nonempty).
    fn heaviest(&self) -> [usize; 2] {
        let (mut a, mut b) = (64, 64);
        let mut m = self.nonempty;
        while m != 0 {
            let k = m.trailing_zeros() as usize;
            m &= m - 1;
            let s = self.sums[k];
            if a == 64 || s > self.sums[a] {
                (a, b) = (k, a);
            } else if b == 64 || s > self.sums[b] {
                b = k;
            }
        }
        let a = a % 64;
        [a, if b == 64 { a } else { b }]
    }
}

/// A uniform integer below `n` ≥ 1 from one word by Lemire's
/// multiply-shift, or None (probability < n/2^64) when the word falls in
/// the sliver that would bias it.
#[inline(always)]
fn below_word(w: u64, n: u64) -> Option<u64> {
    let m = (w as u128) * (n as u128);
    let lo = m as u64;
    if lo < n && lo < n.wrapping_neg() % n {
        return None;
    }
    Some((m >> 64) as u64)
}

/// Two independent uniform draws below `n` (1 ≤ n < 2^32) from one word:
/// Lemire's multiply-shift for the range n², its result's two base-n
/// digits taken one multiplication at a time (the high word of w·n is the
/// first; the high word of the low word times n the second, and that
/// low word is w·n² mod 2^64, the one Lemire's rejection tests). None
/// (probability < n²/2^64) when w falls in the sliver that would bias it.
#[inline(always)]
fn pair_below(w: u64, n: u64) -> Option<(u64, u64)> {
    let m1 = (w as u128) * (n as u128);
    let m2 = (m1 as u64 as u128) * (n as u128);
    let lo = m2 as u64;
    let nn = n * n;
    if lo < nn && lo < nn.wrapping_neg() % nn {
        return None;
    }
    Some(((m1 >> 64) as u64, (m2 >> 64) as u64))
}

/// Two independent uniform indices below `len` (1 ≤ len ≤ 2^32) from the
/// halves of one word, each by Lemire's multiply-shift on 32 bits; None
/// (probability < 2·len/2^32) when either half falls in the rejected
/// sliver that would bias it, and the caller draws again.
#[inline]
fn two_below(x: u64, len: u64) -> Option<(u64, u64)> {
    let p1 = (x & 0xffff_ffff) * len;
    let p2 = (x >> 32) * len;
    let lo = (p1 & 0xffff_ffff).min(p2 & 0xffff_ffff);
    if lo < len && lo < (1u64 << 32) % len {
        return None;
    }
    Some((p1 >> 32, p2 >> 32))
}

/// Whether `bits` (uniform below 2^(k+1)) is below the member's value:
/// decided by its top 32 bits, and on a tie of those by the full value.
#[inline]
fn accepts(bits: u64, sh: u32, c: Member, clients: &[Client]) -> bool {
    let b = bits >> sh;
    let top = c.top as u64;
    if b != top || sh == 0 {
        return b < top;
    }
    clients
        .get(c.id as usize)
        .is_some_and(|v| bits < v.tickets + v.extra)
}

/// The exponential race: an indexed binary min-heap of (key, id).
#[derive(Debug, Clone, Default)]
struct RaceDraw {
    heap: Vec<(u64, usize)>,
    pos: Vec<usize>,
    /// Virtual time T: the key of the last winner.
    vt: u64,
}

impl RaceDraw {
    fn push(&mut self, id: usize, delta: u64) {
        if self.vt > (1 << 62) {
            // Rebase before keys can overflow: every key is ≥ T, so
            // subtracting T keeps the order and the race.
            for e in &mut self.heap {
                e.0 -= self.vt;
            }
            self.vt = 0;
        }
        let key = self.vt.saturating_add(delta);
        self.heap.push((key, id));
        let i = self.heap.len() - 1;
        self.pos[id] = i;
        self.up(i);
    }

    fn pop(&mut self) -> usize {
        let (key, id) = self.heap[0];
        self.vt = key;
        self.take(0);
        id
    }

    fn remove(&mut self, id: usize) {
        let i = self.pos[id];
        self.take(i);
    }

    fn take(&mut self, i: usize) {
        let id = self.heap[i].1;
        let last = self.heap.pop().unwrap_or((0, id));
        self.pos[id] = NIL;
        if i < self.heap.len() {
            self.heap[i] = last;
            self.pos[last.1] = i;
            self.up(i);
            self.down(self.pos[last.1]);
        }
    }

    fn up(&mut self, mut i: usize) {
        while i > 0 {
            let p = (i - 1) / 2;
            if self.heap[i] < self.heap[p] {
                self.swap(i, p);
                i = p;
            } else {
                break;
            }
        }
    }

    fn down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && self.heap[l + 1] < self.heap[l] {
                l + 1
            } else {
                l
            };
            if self.heap[c] < self.heap[i] {
                self.swap(i, c);
                i = c;
            } else {
                break;
            }
        }
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].1] = a;
        self.pos[self.heap[b].1] = b;
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

#[cfg(test)]
mod look_ahead_tests {
    //! The O(1) draw's look-ahead (planned lotteries, retry generator),
    //! reached with a few dozen clients by lowering its threshold.
    use super::*;
    use crate::rng::SplitMix64;
    use crate::Scheduler;

    const Q: u64 = 1_000_000;

    /// Chi-square of the wins of a look-ahead lottery over `values`, while
    /// every `every` picks one client is reweighted (so planned lotteries
    /// go stale) and one is blocked and woken; twice the clients fall
    /// below the threshold and come back (plans dropped and remade). The
    /// expected wins of a client are the sum over picks of its share of
    /// the runnable value at that pick.
    fn chi2(values: &[u64], seed: u64, picks: usize, every: usize) -> (f64, Lottery) {
        let opts = PolicyOptions {
            quantum_ns: Q,
            seed,
        };
        let mut l = Lottery::new(&opts, Draw::O1);
        l.look_ahead_from = values.len() - 2;
        let ids: Vec<ClientId> = values.iter().map(|&v| l.join(v).unwrap()).collect();
        let mut w = values.to_vec();
        let mut up = vec![true; w.len()];
        let mut g = SplitMix64::new(seed ^ 0xabc);
        let (mut won, mut expected) = (vec![0f64; w.len()], vec![0f64; w.len()]);
        for p in 0..picks {
            if p % every == every - 1 {
                let i = (g.next_u64() % w.len() as u64) as usize;
                let j = (g.next_u64() % w.len() as u64) as usize;
                // A reweight inside or across groups, within 2^32.
                w[i] = (values[j] >> (g.next_u64() % 3)).max(1);
                l.set_weight(ids[i], w[i]).unwrap();
                if up[j] {
                    l.block(ids[j]).unwrap();
                    l.wake(ids[j]).unwrap();
                }
            }
            if p == picks / 3 || p == 2 * picks / 3 {
                // Three down, below the threshold, then back up.
                for i in 0..3 {
                    l.block(ids[i]).unwrap();
                    up[i] = false;
                }
                for _ in 0..50 {
                    let c = l.pick().unwrap();
                    l.charge(c, Q).unwrap();
                }
                for i in 0..3 {
                    l.wake(ids[i]).unwrap();
                    up[i] = true;
                }
            }
            let total: u64 = (0..w.len()).filter(|&i| up[i]).map(|i| w[i]).sum();
            for i in (0..w.len()).filter(|&i| up[i]) {
                expected[i] += w[i] as f64 / total as f64;
            }
            let c = l.pick().unwrap();
            won[c] += 1.0;
            l.charge(c, Q).unwrap();
        }
        let x = (0..w.len())
            .map(|i| (won[i] - expected[i]).powi(2) / expected[i])
            .sum();
        (x, l)
    }

    // Bound: the chi-square 0.999 quantile at df = n − 1 (expected wins
    // are sums of Bernoulli probabilities whose variance is below their
    // mean, so the statistic runs a little under chi-square(df)).
    // df = 23 → 49.73; df = 11 → 31.26.

    #[test]
    fn look_ahead_draws_in_proportion_to_value() {
        // 24 clients in 4 groups, from 2^k (a candidate accepted half the
        // time, so first rounds fail and the retry generator serves) to
        // 2^(k+1) − 1; the smallest expects ≥ 200000·256/Σ ≈ 4400 wins.
        let values: Vec<u64> = (0..24u64)
            .map(|i| {
                let k = 8 + i % 4;
                (1 << k) + (i * 97 % (1 << k))
            })
            .collect();
        for seed in [1, 2] {
            let (x, l) = chi2(&values, seed, 200_000, 7);
            assert!(x < 49.73, "seed {seed}: chi-square {x:.1} at df 23");
            let fresh = WyRand::new(seed ^ RETRY_SEED);
            assert_ne!(l.ahead.unwrap().retry, fresh, "no first round failed");
        }
    }

    #[test]
    fn look_ahead_serves_groups_it_cannot_plan() {
        // Values of 2^31.. and 2^32 (the group a plan leaves to `retry`).
        let values: Vec<u64> = (0..12u64)
            .map(|i| match i % 3 {
                0 => 1 << 32,
                1 => (1 << 31) + i * 12_345_678,
                _ => (1 << 30) + i,
            })
            .collect();
        let (x, _) = chi2(&values, 3, 100_000, 5);
        assert!(x < 31.26, "chi-square {x:.1} at df 11");
    }

    #[test]
    fn look_ahead_is_deterministic() {
        let values: Vec<u64> = (1..=30).map(|i| i * i * 37).collect();
        let run = || {
            let (_, mut l) = chi2(&values, 9, 5_000, 3);
            (0..100)
                .map(|_| {
                    let c = l.pick().unwrap();
                    l.charge(c, Q).unwrap();
                    c
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }
}
