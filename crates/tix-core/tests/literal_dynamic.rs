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
//! Scope: stride, WFQ, EEVDF, WF2Q+. GR3's §4.3 (eqs. 6–21), VTRR's, SRR's
//! and WRR's changes are not modelled yet.

mod literal;

use literal::EXACT_Q as Q;
use proptest::prelude::*;
use tix_core::{registry, ClientId, PolicyOptions};

/// One step of a workload. Indices pick among the clients that exist at
/// that moment (mod their number), so every generated sequence is valid.
#[derive(Debug, Clone)]
enum Op {
    Pick,
    Join(u64),
    Leave(usize),
    Block(usize),
    Wake(usize),
    Weight(usize, u64),
}

fn weight() -> impl Strategy<Value = u64> {
    let odd = prop::sample::select(literal::ODD.to_vec());
    (odd, 0u32..=6).prop_map(|(d, k)| d << k)
}

fn ops() -> impl Strategy<Value = (Vec<u64>, Vec<Op>)> {
    let op = prop_oneof![
        6 => Just(Op::Pick),
        1 => weight().prop_map(Op::Join),
        1 => any::<usize>().prop_map(Op::Leave),
        2 => any::<usize>().prop_map(Op::Block),
        2 => any::<usize>().prop_map(Op::Wake),
        1 => (any::<usize>(), weight()).prop_map(|(i, w)| Op::Weight(i, w)),
    ];
    (
        prop::collection::vec(weight(), 1..=8),
        prop::collection::vec(op, 1..=300),
    )
}

#[derive(Clone, Copy, PartialEq)]
enum St {
    Runnable,
    Blocked,
    Gone,
}

/// What the harness asks of a model. Ops arrive only where they are valid:
/// `block` and `leave` of a runnable client, or `leave` of a blocked one,
/// `wake` of a blocked one; never while a pick is unanswered.
trait Model {
    fn states(&self) -> &[St];
    fn join(&mut self, t: u64) -> ClientId;
    fn pick(&mut self) -> Option<ClientId>;
    fn leave(&mut self, a: ClientId);
    fn block(&mut self, a: ClientId);
    fn wake(&mut self, a: ClientId);
    fn weight(&mut self, a: ClientId, t: u64);
}

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

/// The clients that exist (joined, not left), in join order.
fn alive(state: &[St]) -> Vec<ClientId> {
    (0..state.len()).filter(|&a| state[a] != St::Gone).collect()
}

fn run_model(
    algo: &str,
    m: &mut dyn Model,
    initial: &[u64],
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let mut lib = registry::build(
        algo,
        &PolicyOptions {
            quantum_ns: Q,
            seed: 1,
        },
    )
    .unwrap();
    for &t in initial {
        let id = lib.join(t).unwrap();
        prop_assert_eq!(id, m.join(t));
    }
    for (step, op) in ops.iter().enumerate() {
        let live = alive(m.states());
        let nth = |i: usize| live[i % live.len()];
        match *op {
            Op::Pick => {
                let want = m.pick();
                let got = lib.pick();
                prop_assert_eq!(got, want, "step {}: {:?}", step, op);
                if let Some(c) = got {
                    lib.charge(c, Q).unwrap();
                }
            }
            Op::Join(t) => {
                let id = lib.join(t).unwrap();
                prop_assert_eq!(id, m.join(t));
            }
            _ if live.is_empty() => {}
            Op::Leave(i) => {
                let a = nth(i);
                lib.leave(a).unwrap();
                m.leave(a);
            }
            Op::Block(i) => {
                let a = nth(i);
                if m.states()[a] == St::Runnable {
                    lib.block(a).unwrap();
                    m.block(a);
                }
            }
            Op::Wake(i) => {
                let a = nth(i);
                if m.states()[a] == St::Blocked {
                    lib.wake(a).unwrap();
                    m.wake(a);
                }
            }
            Op::Weight(i, t) => {
                let a = nth(i);
                lib.set_weight(a, t).unwrap();
                m.weight(a, t);
            }
        }
    }
    Ok(())
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
