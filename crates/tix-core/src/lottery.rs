//! Lottery scheduling (Waldspurger 001 §2.2, §4.2): each quantum goes to the
//! holder of a uniformly drawn ticket, so a client with t of T tickets wins
//! with probability t/T. Four draws of that one distribution: the paper's
//! list with move-to-front, a partial-sum tree, an O(1) draw by power-of-two
//! groups with rejection, and the kernel's exponential race (`race.rs`).

use crate::compensation::Compensation;
use crate::currency::{HolderId, Ledger};
use crate::error::{Error, Result};
use crate::race::{neg_ln_q16, race_delta};
use crate::rng::{DefaultRng, Rng};
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
    /// A Fenwick tree of partial ticket sums over client ids. O(log n).
    Tree,
    /// Clients grouped by ⌊log2 tickets⌋; a group is drawn by its ticket sum,
    /// a member uniformly and accepted with probability tickets/2^(k+1) ≥ 1/2.
    /// O(1) expected (at most 64 groups are scanned).
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
    tickets: Vec<u64>,
    extra: Vec<u64>,
    state: Vec<State>,
    in_service: Option<ClientId>,
    runnable: usize,
    /// Σ tickets of all joined clients (for the overflow bound).
    joined_tickets: u64,
    /// Σ value of runnable clients, the range of a draw.
    total: u64,
    engine: Engine,
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
    /// the paper's prototype); `opts.seed` is not used.
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
            tickets: Vec::new(),
            extra: Vec::new(),
            state: Vec::new(),
            in_service: None,
            runnable: 0,
            joined_tickets: 0,
            total: 0,
            engine,
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
        Ok(self.extra[id])
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
        self.tickets[id] + self.extra[id]
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
        if tickets == self.tickets[id] && extra == self.extra[id] {
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
                self.tickets[id] = tickets;
                self.extra[id] = extra;
                self.insert(id);
                return;
            }
            self.total = self.total - old + new;
        } else {
            self.total = self.total - old + new;
            match &mut self.engine {
                Engine::List(_) | Engine::Race(_) => {}
                Engine::Tree(t) => {
                    t.sub(id, old);
                    t.add(id, new);
                }
                Engine::O1(o) => {
                    o.remove(id, old);
                    o.insert(id, new);
                }
            }
        }
        self.tickets[id] = tickets;
        self.extra[id] = extra;
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
        self.joined_tickets += w;
        let id = self.tickets.len();
        self.tickets.push(w);
        self.extra.push(0);
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
        self.joined_tickets -= self.tickets[id];
        self.state[id] = State::Gone;
        Ok(())
    }

    fn set_weight(&mut self, id: ClientId, weight: u64) -> Result<()> {
        self.changeable(id)?;
        let w = check_weight(weight)?;
        let joined = self.joined_tickets - self.tickets[id] + w;
        if joined > MAX_TOTAL_TICKETS {
            return Err(Error::Overflow("total tickets above 2^52"));
        }
        self.joined_tickets = joined;
        self.revalue(id, w, self.extra[id]);
        Ok(())
    }

    fn weight(&self, id: ClientId) -> Result<u64> {
        self.known(id)?;
        Ok(self.tickets[id])
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
    fn pick(&mut self) -> Option<ClientId> {
        if let Some(id) = self.in_service {
            return Some(id);
        }
        if self.runnable == 0 {
            return None;
        }
        let winner = match &mut self.engine {
            Engine::List(l) => l.pick(&mut self.rng, self.total, &self.tickets, &self.extra),
            Engine::Tree(t) => t.pick(&mut self.rng, self.total),
            Engine::O1(o) => o.pick(&mut self.rng, self.total, &self.tickets, &self.extra),
            Engine::Race(r) => r.pop(),
        };
        if self.extra[winner] != 0 {
            // Compensation lasts until the client next wins.
            let t = self.tickets[winner];
            self.revalue(winner, t, 0);
        }
        self.in_service = Some(winner);
        Some(winner)
    }

    fn charge(&mut self, id: ClientId, used_ns: u64) -> Result<()> {
        self.known(id)?;
        if self.in_service != Some(id) {
            return Err(Error::NotInService(id));
        }
        self.in_service = None;
        let t = self.tickets[id];
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
        if !lottery.tickets.is_empty() {
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

    fn pick<R: Rng>(&mut self, rng: &mut R, total: u64, tickets: &[u64], extra: &[u64]) -> usize {
        let r = rng.below(total);
        let mut sum = 0u64;
        let mut id = self.head;
        loop {
            sum += tickets[id] + extra[id];
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

/// A Fenwick (binary indexed) tree of values over ids; blocked and departed
/// clients count 0. `cap` is a power of two so the search descends by halves.
#[derive(Debug, Clone, Default)]
struct TreeDraw {
    /// 1-based: `tree[i]` holds the sum over `(i − lowbit(i), i]`.
    tree: Vec<u64>,
    cap: usize,
}

impl TreeDraw {
    fn reserve(&mut self, n: usize) {
        if n <= self.cap {
            return;
        }
        // Rebuild at double size; the old partial sums of the first `cap`
        // slots stay valid, and slots ≥ cap are empty, so the only new
        // nodes with content are the powers of two above the old cap.
        let mut cap = self.cap.max(16);
        while cap < n {
            cap *= 2;
        }
        let old_cap = self.cap;
        let total_old: u64 = if old_cap == 0 { 0 } else { self.tree[old_cap] };
        self.tree.resize(cap + 1, 0);
        let mut p = old_cap.max(1) * 2;
        while p <= cap {
            if old_cap > 0 {
                self.tree[p] = total_old;
            }
            p *= 2;
        }
        self.cap = cap;
    }

    fn add(&mut self, id: usize, v: u64) {
        let mut i = id + 1;
        while i <= self.cap {
            self.tree[i] = self.tree[i].wrapping_add(v);
            i += i & i.wrapping_neg();
        }
    }

    fn sub(&mut self, id: usize, v: u64) {
        let mut i = id + 1;
        while i <= self.cap {
            self.tree[i] = self.tree[i].wrapping_sub(v);
            i += i & i.wrapping_neg();
        }
    }

    /// The id whose running sum first exceeds a uniform `r < total`.
    fn pick<R: Rng>(&mut self, rng: &mut R, total: u64) -> usize {
        let mut r = rng.below(total);
        let mut pos = 0usize;
        let mut step = self.cap;
        while step > 0 {
            let next = pos + step;
            if next <= self.cap && self.tree[next] <= r {
                r -= self.tree[next];
                pos = next;
            }
            step >>= 1;
        }
        pos
    }
}

/// Clients grouped by ⌊log2 value⌋. `slot[id]` is the index in its group's
/// member list, `group[id]` the group, so removal is a swap-remove.
#[derive(Debug, Clone)]
struct O1Draw {
    members: [Vec<usize>; 64],
    sums: [u64; 64],
    nonempty: u64,
    slot: Vec<usize>,
    group: Vec<u8>,
}

impl Default for O1Draw {
    fn default() -> Self {
        O1Draw {
            members: std::array::from_fn(|_| Vec::new()),
            sums: [0; 64],
            nonempty: 0,
            slot: Vec::new(),
            group: Vec::new(),
        }
    }
}

impl O1Draw {
    fn insert(&mut self, id: usize, v: u64) {
        let k = 63 - v.leading_zeros() as usize;
        self.slot[id] = self.members[k].len();
        self.group[id] = k as u8;
        self.members[k].push(id);
        self.sums[k] += v;
        self.nonempty |= 1 << k;
    }

    fn remove(&mut self, id: usize, v: u64) {
        let k = self.group[id] as usize;
        let s = self.slot[id];
        let m = &mut self.members[k];
        m.swap_remove(s);
        if s < m.len() {
            self.slot[m[s]] = s;
        }
        self.sums[k] -= v;
        if m.is_empty() {
            self.nonempty &= !(1 << k);
        }
    }

    fn pick<R: Rng>(&mut self, rng: &mut R, total: u64, tickets: &[u64], extra: &[u64]) -> usize {
        let mut r = rng.below(total);
        // Heaviest groups first: they hold most of the tickets, so the scan
        // usually stops at once.
        let mut mask = self.nonempty;
        let mut k = 63 - mask.leading_zeros() as usize;
        loop {
            let s = self.sums[k];
            if r < s {
                break;
            }
            r -= s;
            mask &= !(1 << k);
            k = 63 - mask.leading_zeros() as usize;
        }
        let m = &self.members[k];
        loop {
            // A member uniformly, accepted with probability value/2^(k+1):
            // P(id) ∝ (1/len)·value/2^(k+1) ∝ value, and value ≥ 2^k makes
            // acceptance ≥ 1/2, so 2 tries are expected.
            let j = ((rng.next_u64() as u128 * m.len() as u128) >> 64) as usize;
            let id = m[j];
            let bits = rng.next_u64() >> (63 - k);
            if bits < tickets[id] + extra[id] {
                return id;
            }
        }
    }
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
