//! Changing workloads against literal models: random orders of joins,
//! leaves, blocks, wakes and weight changes, before and between picks, and
//! the library's schedule must equal the model's pick for pick. Each model
//! transcribes the rules its policy's module states, sharing no code with
//! the library.
//!
//! Stride (Waldspurger & Weihl, as stride.rs states its rules): the
//! smallest pass runs, ties to the earlier joiner; a quantum adds the stride
//! stride1/tickets; the global pass is the largest pass any client had when
//! it was picked; a joiner starts at the global pass; a waking client at
//! max(its pass, the global pass); a weight change keeps the pass and
//! changes the stride. Passes are integers here: the shares are drawn so
//! that every stride, (Q << 16)/tickets at Q = literal::EXACT_Q, is exact,
//! as the library computes it.
//!
//! WFQ (GR3 §3, as wfq.rs states its rules): the same with the virtual
//! finishing time as the key — a client's virtual time after one more
//! quantum, virtual time + Q/share — and the system virtual time the
//! largest virtual time a client had when picked; joins and wakes as
//! stride's. Virtual times are integers: (Q << 40)/share, exact for the
//! shares drawn.
//!
//! EEVDF and WF2Q+: the models below, each stating its rules.
//!
//! Two EEVDF rules no case here can tell apart, said so that nobody counts
//! them as tested: the lag clamp (±2 quanta) never binds when every run is
//! a whole quantum (Linux's placement keeps each lag within about one),
//! and the V pinned when the last runnable client leaves moves every later
//! placement alike, which changes no pick.
//!
//! VTRR, SRR and WRR: the models below, each stating its rules. GR3 (§4.3,
//! eqs. 6–21) has its own file, literal_gr3_dynamic.rs.

mod literal;

use literal::{ops, run_model, Model, St, EXACT_Q as Q};
use proptest::prelude::*;
use tix_core::ClientId;

/// Stride (`wfq` false) or WFQ (`wfq` true): `pass` is stride's pass or
/// WFQ's virtual time (its start).
struct StrideModel {
    wfq: bool,
    tickets: Vec<u64>,
    pass: Vec<u128>,
    state: Vec<St>,
    global: u128,
}

impl StrideModel {
    fn new(wfq: bool) -> Self {
        StrideModel {
            wfq,
            tickets: Vec::new(),
            pass: Vec::new(),
            state: Vec::new(),
            global: 0,
        }
    }
    fn stride(&self, t: u64) -> u128 {
        if self.wfq {
            ((Q as u128) << 40) / t as u128
        } else {
            ((Q as u128) << 16) / t as u128
        }
    }
    /// What the smallest of runs: the pass, or the VFT.
    fn key(&self, a: ClientId) -> u128 {
        if self.wfq {
            self.pass[a] + self.stride(self.tickets[a])
        } else {
            self.pass[a]
        }
    }
}

impl Model for StrideModel {
    fn states(&self) -> &[St] {
        &self.state
    }
    fn join(&mut self, t: u64) -> ClientId {
        self.tickets.push(t);
        self.pass.push(self.global);
        self.state.push(St::Runnable);
        self.tickets.len() - 1
    }
    fn pick(&mut self) -> Option<ClientId> {
        let best = (0..self.tickets.len())
            .filter(|&a| self.state[a] == St::Runnable)
            .min_by_key(|&a| (self.key(a), a))?;
        self.global = self.global.max(self.pass[best]);
        self.pass[best] += self.stride(self.tickets[best]);
        Some(best)
    }
    fn leave(&mut self, a: ClientId) {
        self.state[a] = St::Gone;
    }
    fn block(&mut self, a: ClientId) {
        self.state[a] = St::Blocked;
    }
    fn wake(&mut self, a: ClientId) {
        self.state[a] = St::Runnable;
        self.pass[a] = self.pass[a].max(self.global);
    }
    fn weight(&mut self, a: ClientId, t: u64) {
        self.tickets[a] = t;
    }
}

/// EEVDF (Linux fair.c, as eevdf.rs states its rules). Integers in the
/// library's unit, 2^-20 ns per unit of weight, and its roundings, which
/// the module documents: V = ⌊Σ w·v / Σ w⌋ over the runnable clients
/// (pinned where it was when the last one left); a quantum adds
/// ⌊Q·2^20/w⌋ to v, and the deadline d moves to v + that only once v
/// reaches it; eligible when v ≤ V, the earliest deadline runs, ties to
/// the earlier joiner, and when nobody is eligible the smallest v is taken
/// as V. A joiner is placed at lag 0 with a one-quantum deadline; a
/// blocker keeps lag V − v clamped to ±2 quanta and d − v; a waker is
/// placed at v = V − lag·(W + w)/W (W the runnable weight before it; the
/// division truncates); a weight change scales the lag and d − v by
/// w_old/w_new (truncating) around V, or the saved pair when blocked.
struct EevdfModel {
    w: Vec<u64>,
    v: Vec<i128>,
    d: Vec<i128>,
    saved: Vec<(i128, i128)>,
    state: Vec<St>,
    pinned: i128,
}

fn vd(ns: u64, w: u64) -> i128 {
    (((ns as u128) << 20) / w as u128) as i128
}

impl EevdfModel {
    fn new() -> Self {
        EevdfModel {
            w: Vec::new(),
            v: Vec::new(),
            d: Vec::new(),
            saved: Vec::new(),
            state: Vec::new(),
            pinned: 0,
        }
    }
    fn runnable(&self) -> Vec<ClientId> {
        (0..self.w.len())
            .filter(|&a| self.state[a] == St::Runnable)
            .collect()
    }
    fn total(&self) -> i128 {
        self.runnable().iter().map(|&a| self.w[a] as i128).sum()
    }
    fn avg(&self) -> i128 {
        let r = self.runnable();
        if r.is_empty() {
            return self.pinned;
        }
        let swv: i128 = r.iter().map(|&a| self.w[a] as i128 * self.v[a]).sum();
        swv.div_euclid(self.total())
    }
    fn place(&mut self, a: ClientId, lag: i128, rel: i128) {
        let (big_v, big_w, w) = (self.avg(), self.total(), self.w[a] as i128);
        let lag = if big_w > 0 {
            lag * (big_w + w) / big_w
        } else {
            lag
        };
        self.v[a] = big_v - lag;
        self.d[a] = self.v[a] + rel;
        self.state[a] = St::Runnable;
    }
    /// Out of the average; the last one out pins V.
    fn remove(&mut self, a: ClientId, to: St) {
        let big_v = self.avg();
        self.state[a] = to;
        if self.runnable().is_empty() {
            self.pinned = big_v;
        }
    }
}

impl Model for EevdfModel {
    fn states(&self) -> &[St] {
        &self.state
    }
    fn join(&mut self, t: u64) -> ClientId {
        self.w.push(t);
        self.v.push(0);
        self.d.push(0);
        self.saved.push((0, 0));
        self.state.push(St::Blocked);
        let a = self.w.len() - 1;
        self.place(a, 0, vd(Q, t));
        a
    }
    fn pick(&mut self) -> Option<ClientId> {
        let r = self.runnable();
        let mut big_v = self.avg();
        if !r.iter().any(|&a| self.v[a] <= big_v) {
            big_v = r.iter().map(|&a| self.v[a]).min()?;
        }
        let a = r
            .into_iter()
            .filter(|&a| self.v[a] <= big_v)
            .min_by_key(|&a| (self.d[a], a))?;
        self.v[a] += vd(Q, self.w[a]);
        if self.v[a] >= self.d[a] {
            self.d[a] = self.v[a] + vd(Q, self.w[a]);
        }
        Some(a)
    }
    fn leave(&mut self, a: ClientId) {
        if self.state[a] == St::Runnable {
            self.remove(a, St::Gone);
        } else {
            self.state[a] = St::Gone;
        }
    }
    fn block(&mut self, a: ClientId) {
        let limit = vd(2 * Q, self.w[a]);
        let lag = (self.avg() - self.v[a]).clamp(-limit, limit);
        self.saved[a] = (lag, self.d[a] - self.v[a]);
        self.remove(a, St::Blocked);
    }
    fn wake(&mut self, a: ClientId) {
        let (lag, rel) = self.saved[a];
        self.place(a, lag, rel);
    }
    fn weight(&mut self, a: ClientId, t: u64) {
        let (o, n) = (self.w[a] as i128, t as i128);
        if self.state[a] == St::Runnable {
            let big_v = self.avg();
            let rel = self.d[a] - self.v[a];
            self.v[a] = big_v - (big_v - self.v[a]) * o / n;
            self.d[a] = self.v[a] + rel * o / n;
        } else {
            let (l, r) = self.saved[a];
            self.saved[a] = (l * o / n, r * o / n);
        }
        self.w[a] = t;
    }
}

/// WF2Q+ (as wf2q.rs states its rules, GR3 §3's citation): integers in
/// 2^-40 ns per unit of weight. A client's finish is its start + ⌊Q·2^40/w⌋;
/// eligible when start ≤ V; the smallest finish runs, ties to the earlier
/// joiner; nobody eligible raises V to the smallest start. A quantum adds
/// ⌊Q·2^40/w⌋ to the start and ⌊Q·2^40/Σw⌋ to V (Σw over the runnable
/// clients, the one served included). A joiner starts at V, a waker at
/// max(its start, V); a weight change keeps the start.
struct Wf2qModel {
    w: Vec<u64>,
    start: Vec<i128>,
    state: Vec<St>,
    big_v: i128,
}

fn vt(ns: u64, w: u64) -> i128 {
    (((ns as u128) << 40) / w as u128) as i128
}

impl Model for Wf2qModel {
    fn states(&self) -> &[St] {
        &self.state
    }
    fn join(&mut self, t: u64) -> ClientId {
        self.w.push(t);
        self.start.push(self.big_v);
        self.state.push(St::Runnable);
        self.w.len() - 1
    }
    fn pick(&mut self) -> Option<ClientId> {
        let r: Vec<ClientId> = (0..self.w.len())
            .filter(|&a| self.state[a] == St::Runnable)
            .collect();
        if !r.iter().any(|&a| self.start[a] <= self.big_v) {
            self.big_v = r.iter().map(|&a| self.start[a]).min()?;
        }
        let a = r
            .iter()
            .copied()
            .filter(|&a| self.start[a] <= self.big_v)
            .min_by_key(|&a| (self.start[a] + vt(Q, self.w[a]), a))?;
        let total: u64 = r.iter().map(|&b| self.w[b]).sum();
        self.big_v += vt(Q, total);
        self.start[a] += vt(Q, self.w[a]);
        Some(a)
    }
    fn leave(&mut self, a: ClientId) {
        self.state[a] = St::Gone;
    }
    fn block(&mut self, a: ClientId) {
        self.state[a] = St::Blocked;
    }
    fn wake(&mut self, a: ClientId) {
        self.state[a] = St::Runnable;
        self.start[a] = self.start[a].max(self.big_v);
    }
    fn weight(&mut self, a: ClientId, t: u64) {
        self.w[a] = t;
    }
}

/// VTRR (as vtrr.rs states its rules, GR3 §3 and Nieh et al.): a queue
/// sorted by share, largest first, a newcomer behind its equals; virtual
/// times in 2^-40 quanta with the library's floors (a quantum is ⌊2^40/S⌋
/// of a client's VFT and ⌊2^40/S_TOTAL⌋ of QVT). Each pick runs the client
/// the scan stands at; a spent one sends the scan to the head, and a spent
/// head to the first unspent client (a new cycle if none). After a quantum
/// the scan moves on if the next client's counter exceeds the one just run,
/// or it is unspent with VFT < QVT(t+Q) + 1/S; else back to the head. A
/// joiner gets ⌈C_TOTAL·S/S_TOTAL⌉ (S_A if alone) and VFT = QVT + 1/S, a
/// waker max(its VFT, that); mid-scan the client the scan stands at stays
/// next. The last counter spent, or a leaver taking it, starts a cycle.
struct VtrrModel {
    w: Vec<u64>,
    counter: Vec<u128>,
    vft: Vec<u128>,
    state: Vec<St>,
    queue: Vec<ClientId>,
    pos: usize,
    qvt: u128,
}

const ONE: u128 = 1 << 40;

impl VtrrModel {
    fn new() -> Self {
        VtrrModel {
            w: Vec::new(),
            counter: Vec::new(),
            vft: Vec::new(),
            state: Vec::new(),
            queue: Vec::new(),
            pos: 0,
            qvt: 0,
        }
    }
    fn s_total(&self) -> u128 {
        self.queue.iter().map(|&c| self.w[c] as u128).sum()
    }
    fn c_total(&self) -> u128 {
        self.queue.iter().map(|&c| self.counter[c]).sum()
    }
    fn new_cycle(&mut self) {
        for &c in &self.queue {
            self.counter[c] = self.w[c] as u128;
        }
        self.pos = 0;
    }
    fn insert(&mut self, a: ClientId, fresh: bool) {
        let (s, w) = (self.s_total(), self.w[a] as u128);
        self.counter[a] = if s == 0 {
            w
        } else {
            (self.c_total() * w).div_ceil(s)
        };
        let start = self.qvt + ONE / w;
        self.vft[a] = if fresh { start } else { self.vft[a].max(start) };
        let at = self
            .queue
            .iter()
            .position(|&c| (self.w[c] as u128) < w)
            .unwrap_or(self.queue.len());
        if self.pos > 0 && at <= self.pos {
            self.pos += 1;
        }
        self.queue.insert(at, a);
        self.state[a] = St::Runnable;
    }
    fn remove(&mut self, a: ClientId, to: St) {
        let i = self.queue.iter().position(|&c| c == a).unwrap();
        self.queue.remove(i);
        self.state[a] = to;
        if i < self.pos {
            self.pos -= 1;
        }
        if self.pos >= self.queue.len() {
            self.pos = 0;
        }
        if self.c_total() == 0 && !self.queue.is_empty() {
            self.new_cycle();
        }
    }
}

impl Model for VtrrModel {
    fn states(&self) -> &[St] {
        &self.state
    }
    fn join(&mut self, t: u64) -> ClientId {
        self.w.push(t);
        self.counter.push(0);
        self.vft.push(0);
        self.state.push(St::Blocked);
        let a = self.w.len() - 1;
        self.insert(a, true);
        a
    }
    fn pick(&mut self) -> Option<ClientId> {
        if self.queue.is_empty() {
            return None;
        }
        if self.counter[self.queue[self.pos]] == 0 {
            self.pos = 0;
        }
        if self.counter[self.queue[self.pos]] == 0 {
            match self.queue.iter().position(|&c| self.counter[c] > 0) {
                Some(i) => self.pos = i,
                None => self.new_cycle(),
            }
        }
        let a = self.queue[self.pos];
        let s = self.s_total();
        self.counter[a] = self.counter[a].saturating_sub(1);
        self.vft[a] += ONE / self.w[a] as u128;
        self.qvt += ONE / s;
        let qvt_next = self.qvt + ONE / s;
        self.pos = match self.queue.get(self.pos + 1) {
            Some(&c)
                if self.counter[c] > self.counter[a]
                    || (self.counter[c] > 0
                        && self.vft[c] < qvt_next + ONE / self.w[c] as u128) =>
            {
                self.pos + 1
            }
            _ => 0,
        };
        if self.c_total() == 0 {
            self.new_cycle();
        }
        Some(a)
    }
    fn leave(&mut self, a: ClientId) {
        if self.state[a] == St::Runnable {
            self.remove(a, St::Gone);
        }
        self.state[a] = St::Gone;
    }
    fn block(&mut self, a: ClientId) {
        self.remove(a, St::Blocked);
    }
    fn wake(&mut self, a: ClientId) {
        self.insert(a, false);
    }
    fn weight(&mut self, a: ClientId, t: u64) {
        if self.state[a] == St::Runnable {
            self.remove(a, St::Blocked);
            self.w[a] = t;
            self.insert(a, false);
        } else {
            self.w[a] = t;
        }
    }
}

/// SRR (Guo, as srr.rs states its rules, GR3 §3): the weight matrix's
/// column b lists, in the order they became runnable, the clients whose
/// share has bit b; WSS^1 = 1, WSS^i = WSS^(i−1), i, WSS^(i−1), built here
/// term by term; term i of a pass over WSS^k serves column k − i, one
/// client per pick, empty columns skipped. k is the bit length of the
/// largest runnable share; when it changes the pass restarts at its first
/// term. A leaver before the scan's place in the column being served moves
/// that place back by one.
struct SrrModel {
    w: Vec<u64>,
    state: Vec<St>,
    columns: Vec<Vec<ClientId>>,
    k: u32,
    wss: Vec<u32>,
    term: usize,
    idx: usize,
}

fn wss(k: u32) -> Vec<u32> {
    if k == 0 {
        return Vec::new();
    }
    let inner = wss(k - 1);
    let mut v = inner.clone();
    v.push(k);
    v.extend(inner);
    v
}

impl SrrModel {
    fn new() -> Self {
        SrrModel {
            w: Vec::new(),
            state: Vec::new(),
            columns: vec![Vec::new(); 64],
            k: 0,
            wss: Vec::new(),
            term: 0,
            idx: 0,
        }
    }
    fn column(&self) -> usize {
        (self.k - self.wss[self.term]) as usize
    }
    fn rescan(&mut self) {
        let k = (0..self.w.len())
            .filter(|&a| self.state[a] == St::Runnable)
            .map(|a| 64 - self.w[a].leading_zeros())
            .max()
            .unwrap_or(0);
        if k != self.k {
            self.k = k;
            self.wss = wss(k);
            self.term = 0;
            self.idx = 0;
        }
    }
    fn insert(&mut self, a: ClientId) {
        for b in 0..64 {
            if self.w[a] >> b & 1 == 1 {
                self.columns[b].push(a);
            }
        }
        self.state[a] = St::Runnable;
        self.rescan();
    }
    fn remove(&mut self, a: ClientId, to: St) {
        let cur = (self.k > 0).then(|| self.column());
        for b in 0..64 {
            if let Some(i) = self.columns[b].iter().position(|&c| c == a) {
                self.columns[b].remove(i);
                if Some(b) == cur && i < self.idx {
                    self.idx -= 1;
                }
            }
        }
        self.state[a] = to;
        self.rescan();
    }
}

impl Model for SrrModel {
    fn states(&self) -> &[St] {
        &self.state
    }
    fn join(&mut self, t: u64) -> ClientId {
        self.w.push(t);
        self.state.push(St::Blocked);
        let a = self.w.len() - 1;
        self.insert(a);
        a
    }
    fn pick(&mut self) -> Option<ClientId> {
        if self.k == 0 {
            return None;
        }
        loop {
            if let Some(&a) = self.columns[self.column()].get(self.idx) {
                self.idx += 1;
                return Some(a);
            }
            self.term = (self.term + 1) % self.wss.len();
            self.idx = 0;
        }
    }
    fn leave(&mut self, a: ClientId) {
        if self.state[a] == St::Runnable {
            self.remove(a, St::Gone);
        }
        self.state[a] = St::Gone;
    }
    fn block(&mut self, a: ClientId) {
        self.remove(a, St::Blocked);
    }
    fn wake(&mut self, a: ClientId) {
        self.insert(a);
    }
    fn weight(&mut self, a: ClientId, t: u64) {
        if self.state[a] == St::Runnable {
            self.remove(a, St::Blocked);
            self.w[a] = t;
            self.insert(a);
        } else {
            self.w[a] = t;
        }
    }
}

/// WRR (GR3 §3, as wrr.rs states its rules): a FIFO of runnable clients;
/// the head runs S quanta in a row, then goes to the tail; joiners and
/// wakers go to the tail; a head that stops being runnable forfeits the
/// rest of its turn; a weight change of the head mid-turn leaves it
/// max(1, S_new − quanta already run) of the turn.
struct WrrModel {
    w: Vec<u64>,
    state: Vec<St>,
    fifo: Vec<ClientId>,
    /// Quanta left in the head's turn; 0 before it starts.
    left: u64,
}

impl WrrModel {
    fn remove(&mut self, a: ClientId, to: St) {
        let i = self.fifo.iter().position(|&c| c == a).unwrap();
        self.fifo.remove(i);
        if i == 0 {
            self.left = 0;
        }
        self.state[a] = to;
    }
}

impl Model for WrrModel {
    fn states(&self) -> &[St] {
        &self.state
    }
    fn join(&mut self, t: u64) -> ClientId {
        self.w.push(t);
        self.state.push(St::Runnable);
        self.fifo.push(self.w.len() - 1);
        self.w.len() - 1
    }
    fn pick(&mut self) -> Option<ClientId> {
        let a = *self.fifo.first()?;
        if self.left == 0 {
            self.left = self.w[a];
        }
        self.left -= 1;
        if self.left == 0 {
            self.fifo.rotate_left(1);
        }
        Some(a)
    }
    fn leave(&mut self, a: ClientId) {
        if self.state[a] == St::Runnable {
            self.remove(a, St::Gone);
        }
        self.state[a] = St::Gone;
    }
    fn block(&mut self, a: ClientId) {
        self.remove(a, St::Blocked);
    }
    fn wake(&mut self, a: ClientId) {
        self.state[a] = St::Runnable;
        self.fifo.push(a);
    }
    fn weight(&mut self, a: ClientId, t: u64) {
        if self.fifo.first() == Some(&a) && self.left > 0 {
            let run = self.w[a].saturating_sub(self.left);
            self.left = t.saturating_sub(run).max(1);
        }
        self.w[a] = t;
    }
}

proptest! {
    #![proptest_config(literal::config())]

    #[test]
    fn stride_follows_the_model_through_changes((initial, ops) in ops()) {
        run_model("stride", &mut StrideModel::new(false), &initial, &ops)?;
    }

    #[test]
    fn wfq_follows_the_model_through_changes((initial, ops) in ops()) {
        run_model("wfq", &mut StrideModel::new(true), &initial, &ops)?;
    }

    #[test]
    fn eevdf_follows_the_model_through_changes((initial, ops) in ops()) {
        run_model("eevdf", &mut EevdfModel::new(), &initial, &ops)?;
    }

    #[test]
    fn wf2q_follows_the_model_through_changes((initial, ops) in ops()) {
        let mut m = Wf2qModel { w: Vec::new(), start: Vec::new(), state: Vec::new(), big_v: 0 };
        run_model("wf2q", &mut m, &initial, &ops)?;
    }

    #[test]
    fn vtrr_follows_the_model_through_changes((initial, ops) in ops()) {
        run_model("vtrr", &mut VtrrModel::new(), &initial, &ops)?;
    }

    #[test]
    fn srr_follows_the_model_through_changes((initial, ops) in ops()) {
        run_model("srr", &mut SrrModel::new(), &initial, &ops)?;
    }

    #[test]
    fn wrr_follows_the_model_through_changes((initial, ops) in ops()) {
        let mut m = WrrModel { w: Vec::new(), state: Vec::new(), fifo: Vec::new(), left: 0 };
        run_model("wrr", &mut m, &initial, &ops)?;
    }
}

/// A waking client banks no credit: after sleeping through ten quanta of
/// another's, it resumes at the global pass, not below it.
#[test]
fn model_wakes_at_the_global_pass() {
    let mut m = StrideModel::new(false);
    let a = m.join(1);
    let b = m.join(1);
    m.state[b] = St::Blocked;
    for _ in 0..10 {
        assert_eq!(m.pick(), Some(a));
    }
    m.wake(b);
    assert_eq!(m.pass[b], m.global);
    assert_eq!(m.pick(), Some(b));
}
