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
//! Scope: stride and WFQ. GR3's §4.3 (eqs. 6–21), EEVDF's and WF2Q+'s
//! changes are not modelled yet.

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
    fn wake(&mut self, a: ClientId) {
        self.state[a] = St::Runnable;
        self.pass[a] = self.pass[a].max(self.global);
    }
}

/// The clients that exist (joined, not left), in join order.
fn alive(state: &[St]) -> Vec<ClientId> {
    (0..state.len()).filter(|&a| state[a] != St::Gone).collect()
}

fn run_model(algo: &str, initial: &[u64], ops: &[Op]) -> Result<(), TestCaseError> {
    let mut lib = registry::build(
        algo,
        &PolicyOptions {
            quantum_ns: Q,
            seed: 1,
        },
    )
    .unwrap();
    let mut m = StrideModel::new(algo == "wfq");
    for &t in initial {
        let id = lib.join(t).unwrap();
        prop_assert_eq!(id, m.join(t));
    }
    for (step, op) in ops.iter().enumerate() {
        let live = alive(&m.state);
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
                m.state[a] = St::Gone;
            }
            Op::Block(i) => {
                let a = nth(i);
                if m.state[a] == St::Runnable {
                    lib.block(a).unwrap();
                    m.state[a] = St::Blocked;
                }
            }
            Op::Wake(i) => {
                let a = nth(i);
                if m.state[a] == St::Blocked {
                    lib.wake(a).unwrap();
                    m.wake(a);
                }
            }
            Op::Weight(i, t) => {
                let a = nth(i);
                lib.set_weight(a, t).unwrap();
                m.tickets[a] = t;
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(literal::config())]

    #[test]
    fn stride_follows_the_model_through_changes((initial, ops) in ops()) {
        run_model("stride", &initial, &ops)?;
    }

    #[test]
    fn wfq_follows_the_model_through_changes((initial, ops) in ops()) {
        run_model("wfq", &initial, &ops)?;
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
