//! Stride and WFQ against small, obviously correct O(n) reference models:
//! the same random join/leave/set_weight/block/wake/pick/charge sequences
//! (partial and saturating charges, invalid ids and weights included) must
//! give identical picks, identical accept/refuse decisions and identical
//! passes / virtual finishing times.
//!
//! The reference models scan every client for the minimum (key, id), which
//! is the schedule the stride and WFQ modules document (smallest pass / VFT,
//! ties to join order = lower id). This test was first run, unchanged,
//! against the binary-heap implementations these modules had before the
//! tournament tree replaced them (it passed), so it pins the old schedule.

use proptest::prelude::*;
use tix_core::sched::check_weight;
use tix_core::stride::{pass_delta, Stride};
use tix_core::wfq::Wfq;
use tix_core::{ClientId, PolicyOptions, Scheduler, MAX_WEIGHT};

#[derive(Debug, Clone, Copy, PartialEq)]
enum St {
    Runnable,
    Blocked,
    Left,
}

/// Client bookkeeping of the references: the protocol of `sched.rs`
/// (only the client in service may be charged; it may not change otherwise).
#[derive(Debug, Default)]
struct Clients {
    w: Vec<u64>,
    st: Vec<St>,
    in_service: Option<ClientId>,
}

impl Clients {
    fn live(&self, id: ClientId) -> bool {
        matches!(self.st.get(id), Some(St::Runnable | St::Blocked))
    }
    fn idle_live(&self, id: ClientId) -> bool {
        self.live(id) && self.in_service != Some(id)
    }
    fn runnable(&self) -> impl Iterator<Item = ClientId> + '_ {
        (0..self.st.len()).filter(|&i| self.st[i] == St::Runnable)
    }
    // leave, set_weight and block change only this bookkeeping in both
    // policies; join and wake also set the policy's key (on the models).
    fn leave(&mut self, id: ClientId) -> bool {
        if !self.idle_live(id) {
            return false;
        }
        self.st[id] = St::Left;
        true
    }
    fn set_weight(&mut self, id: ClientId, w: u64) -> bool {
        if !self.idle_live(id) || check_weight(w).is_err() {
            return false;
        }
        self.w[id] = w;
        true
    }
    fn block(&mut self, id: ClientId) -> bool {
        if !self.idle_live(id) || self.st[id] == St::Blocked {
            return false;
        }
        self.st[id] = St::Blocked;
        true
    }
}

/// Stride as its module documents it, by linear scan.
#[derive(Debug, Default)]
struct RefStride {
    c: Clients,
    pass: Vec<u64>,
    global: u64,
}

impl RefStride {
    fn join(&mut self, w: u64) -> bool {
        if check_weight(w).is_err() {
            return false;
        }
        self.c.w.push(w);
        self.c.st.push(St::Runnable);
        self.pass.push(self.global);
        true
    }
    fn wake(&mut self, id: ClientId) -> bool {
        if !self.c.idle_live(id) || self.c.st[id] == St::Runnable {
            return false;
        }
        self.c.st[id] = St::Runnable;
        self.pass[id] = self.pass[id].max(self.global);
        true
    }
    fn pick(&mut self) -> Option<ClientId> {
        if self.c.in_service.is_some() {
            return self.c.in_service;
        }
        let id = self.c.runnable().min_by_key(|&i| (self.pass[i], i))?;
        self.global = self.global.max(self.pass[id]);
        self.c.in_service = Some(id);
        Some(id)
    }
    fn charge(&mut self, id: ClientId, used: u64) -> bool {
        if !self.c.live(id) || self.c.in_service != Some(id) {
            return false;
        }
        self.c.in_service = None;
        self.pass[id] = self.pass[id].saturating_add(pass_delta(used, self.c.w[id]));
        true
    }
}

/// WFQ as its module documents it, by linear scan.
#[derive(Debug, Default)]
struct RefWfq {
    c: Clients,
    q: u64,
    vstart: Vec<u128>,
    vtime: u128,
}

/// 2^-40 ns per unit of share, as `wfq.rs` documents its fixed point.
fn vt(used: u64, w: u64) -> u128 {
    ((used as u128) << 40) / w as u128
}

impl RefWfq {
    fn vft(&self, id: ClientId) -> u128 {
        self.vstart[id] + vt(self.q, self.c.w[id])
    }
    fn join(&mut self, w: u64) -> bool {
        if check_weight(w).is_err() {
            return false;
        }
        self.c.w.push(w);
        self.c.st.push(St::Runnable);
        self.vstart.push(self.vtime);
        true
    }
    fn wake(&mut self, id: ClientId) -> bool {
        if !self.c.idle_live(id) || self.c.st[id] == St::Runnable {
            return false;
        }
        self.c.st[id] = St::Runnable;
        self.vstart[id] = self.vstart[id].max(self.vtime);
        true
    }
    fn pick(&mut self) -> Option<ClientId> {
        if self.c.in_service.is_some() {
            return self.c.in_service;
        }
        let id = self.c.runnable().min_by_key(|&i| (self.vft(i), i))?;
        self.vtime = self.vtime.max(self.vstart[id]);
        self.c.in_service = Some(id);
        Some(id)
    }
    fn charge(&mut self, id: ClientId, used: u64) -> bool {
        if !self.c.live(id) || self.c.in_service != Some(id) {
            return false;
        }
        self.c.in_service = None;
        self.vstart[id] += vt(used, self.c.w[id]);
        true
    }
}

#[derive(Debug, Clone)]
enum Op {
    Join(u64),
    Leave(usize),
    SetWeight(usize, u64),
    Block(usize),
    Wake(usize),
    /// Pick, then charge the picked client `used` ns.
    Run(u64),
    /// Pick only (the next op then meets a client in service).
    Pick,
    /// Charge an arbitrary id (mostly refused).
    Charge(usize, u64),
}

/// Weights with many ties (1..=4), the extremes, and the invalid 0 and
/// MAX_WEIGHT + 1.
fn weight() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 1u64..=4,
        3 => 1u64..=1024,
        1 => Just(MAX_WEIGHT),
        1 => Just(0u64),
        1 => Just(MAX_WEIGHT + 1),
    ]
}

/// Used time: whole quanta, partial ones, zero, and u64::MAX (saturates a
/// weight-1 stride pass at u64::MAX, so runnable clients tie at the top).
fn used(q: u64) -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => Just(q),
        4 => 0..=q,
        1 => Just(0u64),
        1 => Just(u64::MAX),
    ]
}

fn op(q: u64) -> impl Strategy<Value = Op> {
    // Ids range a little past the clients that can exist: unknown ids too.
    prop_oneof![
        4 => weight().prop_map(Op::Join),
        1 => (0usize..24).prop_map(Op::Leave),
        2 => (0usize..24, weight()).prop_map(|(i, w)| Op::SetWeight(i, w)),
        2 => (0usize..24).prop_map(Op::Block),
        2 => (0usize..24).prop_map(Op::Wake),
        10 => used(q).prop_map(Op::Run),
        1 => Just(Op::Pick),
        1 => (0usize..24, used(q)).prop_map(|(i, u)| Op::Charge(i, u)),
    ]
}

fn quantum() -> impl Strategy<Value = u64> {
    prop_oneof![Just(1u64), Just(1000u64), Just(1_000_000u64)]
}

fn ops() -> impl Strategy<Value = (u64, Vec<Op>)> {
    quantum().prop_flat_map(|q| (Just(q), prop::collection::vec(op(q), 1..300)))
}

fn cfg() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// One step on both; returns (policy accepted?, reference accepted?) and
/// the picks when the op picks.
macro_rules! step {
    ($s:expr, $r:expr, $op:expr) => {{
        match $op {
            Op::Join(w) => {
                prop_assert_eq!($s.join(*w).is_ok(), $r.join(*w));
            }
            Op::Leave(i) => {
                prop_assert_eq!($s.leave(*i).is_ok(), $r.c.leave(*i));
            }
            Op::SetWeight(i, w) => {
                prop_assert_eq!($s.set_weight(*i, *w).is_ok(), $r.c.set_weight(*i, *w));
            }
            Op::Block(i) => {
                prop_assert_eq!($s.block(*i).is_ok(), $r.c.block(*i));
            }
            Op::Wake(i) => {
                prop_assert_eq!($s.wake(*i).is_ok(), $r.wake(*i));
            }
            Op::Pick => {
                prop_assert_eq!($s.pick(), $r.pick());
            }
            Op::Run(u) => {
                let got = $s.pick();
                prop_assert_eq!(got, $r.pick());
                if let Some(id) = got {
                    prop_assert_eq!($s.charge(id, *u).is_ok(), $r.charge(id, *u));
                }
            }
            Op::Charge(i, u) => {
                prop_assert_eq!($s.charge(*i, *u).is_ok(), $r.charge(*i, *u));
            }
        }
        prop_assert_eq!($s.runnable(), $r.c.runnable().count());
    }};
}

proptest! {
    #![proptest_config(cfg())]

    #[test]
    fn stride_matches_linear_scan((q, ops) in ops()) {
        let o = PolicyOptions { quantum_ns: q, seed: 1 };
        let mut s = Stride::new(&o);
        let mut r = RefStride::default();
        for op in &ops {
            step!(s, r, op);
            prop_assert_eq!(s.global_pass(), r.global);
            for id in 0..r.c.st.len() {
                if r.c.live(id) {
                    prop_assert_eq!(s.pass(id).ok(), Some(r.pass[id]));
                } else {
                    prop_assert!(s.pass(id).is_err());
                }
            }
        }
    }

    #[test]
    fn wfq_matches_linear_scan((q, ops) in ops()) {
        let o = PolicyOptions { quantum_ns: q, seed: 1 };
        let mut s = Wfq::new(&o);
        let mut r = RefWfq { q, ..RefWfq::default() };
        for op in &ops {
            step!(s, r, op);
            for id in 0..r.c.st.len() {
                if r.c.live(id) {
                    prop_assert_eq!(s.vft(id).ok(), Some(r.vft(id)));
                } else {
                    prop_assert!(s.vft(id).is_err());
                }
            }
        }
    }
}

/// Many clients (past several growths of the tree), long runs with whole
/// and partial charges and churn: the picks still equal the linear scan.
#[test]
fn stride_and_wfq_match_at_scale() {
    let q = 1_000_000;
    let o = PolicyOptions {
        quantum_ns: q,
        seed: 1,
    };
    let mut s = Stride::new(&o);
    let mut rs = RefStride::default();
    let mut f = Wfq::new(&o);
    let mut rf = RefWfq {
        q,
        ..RefWfq::default()
    };
    // splitmix64: a fixed, dependency-free sequence.
    let mut x: u64 = 0x1234_5678;
    let mut next = || {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for _ in 0..300 {
        let w = 1 + next() % 1024;
        assert!(s.join(w).is_ok() && rs.join(w));
        assert!(f.join(w).is_ok() && rf.join(w));
    }
    for step in 0..4000 {
        let r = next();
        let id = (r >> 8) as usize % rs.c.st.len();
        match r % 16 {
            0 => {
                assert_eq!(s.block(id).is_ok(), rs.c.block(id));
                assert_eq!(f.block(id).is_ok(), rf.c.block(id));
            }
            1 => {
                assert_eq!(s.wake(id).is_ok(), rs.wake(id));
                assert_eq!(f.wake(id).is_ok(), rf.wake(id));
            }
            2 if step % 7 == 0 => {
                let w = 1 + (r >> 32) % 1024;
                assert!(s.join(w).is_ok() && rs.join(w));
                assert!(f.join(w).is_ok() && rf.join(w));
            }
            3 if step % 5 == 0 => {
                assert_eq!(s.leave(id).is_ok(), rs.c.leave(id));
                assert_eq!(f.leave(id).is_ok(), rf.c.leave(id));
            }
            4 => {
                let w = 1 + (r >> 32) % 1024;
                assert_eq!(s.set_weight(id, w).is_ok(), rs.c.set_weight(id, w));
                assert_eq!(f.set_weight(id, w).is_ok(), rf.c.set_weight(id, w));
            }
            _ => {
                let used = if r & 0x100 == 0 { q } else { (r >> 20) % q };
                let a = s.pick();
                assert_eq!(a, rs.pick(), "stride step {step}");
                if let Some(a) = a {
                    assert!(s.charge(a, used).is_ok() && rs.charge(a, used));
                }
                let b = f.pick();
                assert_eq!(b, rf.pick(), "wfq step {step}");
                if let Some(b) = b {
                    assert!(f.charge(b, used).is_ok() && rf.charge(b, used));
                }
            }
        }
    }
}

/// `pass_delta`'s u64 fast path gives the kernel's u128 rule exactly, on
/// both sides of its 2^48 ns boundary and where the u128 result saturates.
#[test]
fn pass_delta_fast_path_is_the_u128_rule() {
    for used in [
        0,
        1,
        1_000_000,
        (1 << 48) - 1,
        1 << 48,
        (1 << 48) + 1,
        u64::MAX,
    ] {
        for w in [0, 1, 2, 1000, 1 << 31, MAX_WEIGHT] {
            let d = ((used as u128) << 16) / (w.max(1) as u128);
            let want = u64::try_from(d).unwrap_or(u64::MAX);
            assert_eq!(pass_delta(used, w), want, "used {used} weight {w}");
        }
    }
}
