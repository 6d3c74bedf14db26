//! WF2Q+'s queue by weight class against the obviously correct scan: the
//! smallest (finish, id) among queued clients with start ≤ V, where a
//! client's finish is its start plus its weight's slice. Every form of the
//! queue (scanning its classes, heaps from the start, heaps after 3 class
//! slots) must give the scan's answer to every call.

use proptest::prelude::*;
use tix_core::rng::{Rng as _, SplitMix64};
use tix_core::weight_classes::ClassQueue;

/// One slice per weight, small so that finishes tie often.
fn slice(w: u64) -> i128 {
    1 + (w % 5) as i128
}

mod common;
use common::Scan;

#[derive(Debug, Clone)]
enum Op {
    Add,
    /// (Re-)queue slot i with weight w and start s; V = v.
    Enqueue(usize, u64, i128, i128),
    Remove(usize),
    Take(i128),
    TakeOrRaise(i128),
    /// take_or_raise at v, then re-queue the pick `part` past its start
    /// (a charge: whole slices keep a class's FIFO in order, parts spill).
    Serve(i128, i128),
}

/// A few weights (big classes: long FIFOs, spills, stale entries) or many
/// (classes of one, emptied and swept).
fn weight() -> impl Strategy<Value = u64> {
    prop_oneof![4 => 1u64..4, 1 => 1u64..200]
}

fn key() -> impl Strategy<Value = i128> {
    prop_oneof![
        8 => -6i128..6,
        1 => Just(i128::MAX / 4),
        1 => Just(i128::MIN / 4),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => Just(Op::Add),
        4 => (0usize..40, weight(), key(), key()).prop_map(|(i, w, s, v)| Op::Enqueue(i, w, s, v)),
        1 => (0usize..40).prop_map(Op::Remove),
        2 => key().prop_map(Op::Take),
        2 => key().prop_map(Op::TakeOrRaise),
        4 => (key(), 0i128..6).prop_map(|(v, p)| Op::Serve(v, p)),
    ]
}

fn queues() -> [ClassQueue; 3] {
    [
        ClassQueue::new(),
        ClassQueue::with_scan_max(0),
        ClassQueue::with_scan_max(3),
    ]
}

struct Pair {
    q: ClassQueue,
    m: Scan,
    /// The weight each slot was last queued with (a serve re-queues with it).
    w: Vec<u64>,
    start: Vec<i128>,
}

impl Pair {
    fn apply(&mut self, op: Op) -> Result<(), TestCaseError> {
        let (q, m) = (&mut self.q, &mut self.m);
        match op {
            Op::Add => {
                prop_assert_eq!(q.add(), Ok(m.slots.len()));
                m.slots.push(None);
                self.w.push(1);
                self.start.push(0);
            }
            Op::Enqueue(i, w, s, v) => {
                let known = i < m.slots.len();
                prop_assert_eq!(q.enqueue(i, w, s, slice(w), v).is_ok(), known);
                if known {
                    m.slots[i] = Some((s, s + slice(w)));
                    self.w[i] = w;
                    self.start[i] = s;
                }
            }
            Op::Remove(i) => {
                let known = i < m.slots.len();
                prop_assert_eq!(q.remove(i).is_ok(), known);
                if known {
                    m.slots[i] = None;
                }
            }
            Op::Take(v) => {
                prop_assert_eq!(q.take(v), m.take(v));
            }
            Op::TakeOrRaise(v) => {
                prop_assert_eq!(q.take_or_raise(v), m.take_or_raise(v));
            }
            Op::Serve(v, part) => {
                let got = q.take_or_raise(v);
                prop_assert_eq!(got, m.take_or_raise(v));
                if let Some((id, vr)) = got {
                    let w = self.w[id];
                    let s = self.start[id] + part;
                    self.start[id] = s;
                    q.enqueue(id, w, s, slice(w), vr).expect("known slot");
                    m.slots[id] = Some((s, s + slice(w)));
                }
            }
        }
        for id in 0..m.slots.len() {
            prop_assert_eq!(q.contains(id), m.slots[id].is_some());
        }
        Ok(())
    }
}

fn check(ops: &[Op]) -> Result<(), TestCaseError> {
    for q in queues() {
        let mut p = Pair {
            q,
            m: Scan::default(),
            w: Vec::new(),
            start: Vec::new(),
        };
        for op in ops.iter().cloned() {
            p.apply(op)?;
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(common::cases(256))]

    /// Any mix of adds, (re-)queues, removals, takes and serves, V moving
    /// backwards too (the queue does not rely on WF2Q+'s monotone V).
    #[test]
    fn class_queue_matches_scan(ops in proptest::collection::vec(op(), 1..300)) {
        check(&ops)?;
    }
}

/// Long seeded runs over 300 slots: classes of hundreds (so a class piles
/// up more than 64 stale entries and compacts) and hundreds of weights (so
/// more than 64 classes sit empty and are swept, and their slots reused by
/// other weights), served mostly in whole slices as WF2Q+ charges.
#[test]
fn long_runs_compact_and_sweep_and_match_scan() {
    for seed in [1u64, 2, 3] {
        let mut r = SplitMix64::new(seed);
        let mut ops = vec![Op::Add; 300];
        let mut v = 0i128;
        for step in 0..20_000u64 {
            let many = (step / 2000) % 2 == 1;
            let w = if many {
                1 + r.below(400)
            } else {
                1 + r.below(3)
            };
            let i = r.below(300) as usize;
            v += r.below(3) as i128;
            ops.push(match r.below(10) {
                0..=2 => Op::Enqueue(i, w, v + r.below(4) as i128, v),
                3..=4 => Op::Remove(i),
                5 => Op::Take(v),
                _ => Op::Serve(v, slice(w) * (r.below(4) != 0) as i128),
            });
        }
        check(&ops).expect("the class queue answers as the scan");
    }
}

/// A class whose members leave from behind its head: once more than 64
/// entries (and more than the live ones) are stale the class compacts, and
/// the survivors still come out in (finish, id) order, spilled ones too.
#[test]
fn stale_entries_compact() {
    let mut ops = vec![Op::Add; 200];
    for i in 0..200 {
        // Starts 0, 1, 2, ... except every 7th, which arrives out of order
        // (into the spill).
        let s = if i % 7 == 3 { -(i as i128) } else { i as i128 };
        ops.push(Op::Enqueue(i, 2, s, 0));
    }
    for i in (1..200).filter(|i| i % 4 != 0) {
        ops.push(Op::Remove(i));
    }
    for v in 0..60 {
        ops.push(Op::TakeOrRaise(v * 5));
    }
    check(&ops).expect("the class queue answers as the scan");
}
