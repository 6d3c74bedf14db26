//! The resource-rights model (Waldspurger §3, §4.3–4.6; Zepp §4; Samih
//! Ch. 2): worked examples of the seeds and properties of currencies.

use proptest::prelude::*;
use tix_core::compensation::Compensation;
use tix_core::currency::{CurrencyId, Holder, Ledger, BASE};
use tix_core::lottery::{CurrencyLottery, Draw, Lottery};
use tix_core::transfer::Transfers;
use tix_core::zepp::ZeppSystem;
use tix_core::{Error, PolicyOptions, Scheduler};

fn opts(quantum_ns: u64, seed: u64) -> PolicyOptions {
    PolicyOptions { quantum_ns, seed }
}

#[test]
fn samih_lottery_shares() {
    // Samih Table 2.5: P1..P4 hold 8, 4, 9, 5 tickets; shares 8/26, 4/26,
    // 9/26, 5/26. Exact weights, then 52k draws tested by χ² with df = 3
    // (0.999 quantile 16.27).
    let mut ledger = Ledger::new();
    let procs: Vec<_> = [8u64, 4, 9, 5]
        .iter()
        .map(|&n| {
            let h = ledger.new_client();
            let t = ledger.issue(BASE, n).unwrap();
            ledger.give(h, t).unwrap();
            h
        })
        .collect();
    for d in Draw::ALL {
        let mut cl = CurrencyLottery::new(Lottery::new(&opts(4, 9), d), 1.0).unwrap();
        cl.sync(&ledger).unwrap();
        assert_eq!(cl.lottery().total_value(), 26);
        let weights: Vec<u64> = procs
            .iter()
            .map(|&h| cl.lottery().weight(cl.lottery_id(h).unwrap()).unwrap())
            .collect();
        assert_eq!(weights, [8, 4, 9, 5]);
        let mut counts = [0u64; 4];
        let n = 52_000;
        for _ in 0..n {
            let h = cl.pick().unwrap();
            counts[procs.iter().position(|&p| p == h).unwrap()] += 1;
            cl.charge(h, 4).unwrap();
        }
        let chi: f64 = counts
            .iter()
            .zip(&weights)
            .map(|(&c, &w)| {
                let e = n as f64 * w as f64 / 26.0;
                (c as f64 - e).powi(2) / e
            })
            .sum();
        assert!(chi < 16.27, "{d:?} chi {chi} {counts:?}");
    }
}

#[test]
fn zepp_tables_1_and_2() {
    // Table 1: Fred (200 base) runs Proc1 (1000) and Proc2 (3000), John
    // (200) runs Proc3 (100): values 50, 150, 200, draw range 400, Proc1's
    // odds 1/8. Table 2: Proc1 used 1 of its 6 ticks → 250 compensation
    // tickets, range 650, odds 300/650 = 6/13.
    let mut z = ZeppSystem::new();
    let fred = z.add_user("fred", 200).unwrap();
    let john = z.add_user("john", 200).unwrap();
    let p1 = z.spawn(fred, 1000).unwrap();
    let p2 = z.spawn(fred, 3000).unwrap();
    let p3 = z.spawn(john, 100).unwrap();
    let slice = 60_000_000;
    let lot = Lottery::new(&opts(slice, 3), Draw::List)
        .with_compensation(Compensation::zepp(6, false).unwrap());
    let mut cl = CurrencyLottery::new(lot, 1.0).unwrap();
    cl.sync(z.ledger()).unwrap();
    let id = |cl: &CurrencyLottery, p| cl.lottery_id(z.client(p).unwrap()).unwrap();
    let w: Vec<u64> = [p1, p2, p3]
        .iter()
        .map(|&p| cl.lottery().weight(id(&cl, p)).unwrap())
        .collect();
    assert_eq!(w, [50, 150, 200]);
    assert_eq!(cl.lottery().total_value(), 400);
    assert_eq!(w[0] * 8, cl.lottery().total_value());
    // Run until Proc1 wins, then it uses one tick (10 ms) of 60.
    let proc1 = z.client(p1).unwrap();
    loop {
        let h = cl.pick().unwrap();
        if h == proc1 {
            cl.charge(h, 10_000_000).unwrap();
            break;
        }
        cl.charge(h, slice).unwrap();
    }
    let l = cl.lottery();
    assert_eq!(l.compensation_tickets(id(&cl, p1)).unwrap(), 250);
    assert_eq!(l.total_value(), 650);
    let v1 = l.weight(id(&cl, p1)).unwrap() + l.compensation_tickets(id(&cl, p1)).unwrap();
    assert_eq!((v1 * 13, l.total_value() * 6), (3900, 3900));
}

#[test]
fn figure3_through_a_lottery() {
    let mut l = Ledger::new();
    let alice = l.create_currency("alice").unwrap();
    let bob = l.create_currency("bob").unwrap();
    for (c, a) in [(alice, 1000), (bob, 2000)] {
        let t = l.issue(BASE, a).unwrap();
        l.fund(c, t).unwrap();
    }
    let task2 = l.create_currency("task2").unwrap();
    let t = l.issue(alice, 200).unwrap();
    l.fund(task2, t).unwrap();
    let task3 = l.create_currency("task3").unwrap();
    let t = l.issue(bob, 100).unwrap();
    l.fund(task3, t).unwrap();
    let mut threads = vec![];
    for (c, a) in [(task2, 200), (task2, 300), (task3, 100)] {
        let h = l.new_client();
        let t = l.issue(c, a).unwrap();
        l.give(h, t).unwrap();
        threads.push(h);
    }
    let mut cl = CurrencyLottery::new(Lottery::new(&opts(1, 1), Draw::Tree), 1.0).unwrap();
    cl.sync(&l).unwrap();
    let w: Vec<u64> = threads
        .iter()
        .map(|&h| cl.lottery().weight(cl.lottery_id(h).unwrap()).unwrap())
        .collect();
    assert_eq!(w, [400, 600, 2000]);
    // thread4 blocks: bob deactivates, the lottery follows at the next sync.
    l.block(threads[2]).unwrap();
    cl.sync(&l).unwrap();
    assert_eq!(cl.lottery().runnable(), 2);
    assert_eq!(cl.lottery().total_value(), 1000);
    // A client removed from the ledger leaves the lottery.
    l.remove_client(threads[0]).unwrap();
    cl.sync(&l).unwrap();
    assert_eq!(cl.lottery().total_value(), 1000);
    assert_eq!(cl.lottery_id(threads[0]), None);
    assert!(CurrencyLottery::new(Lottery::new(&opts(1, 1), Draw::O1), 0.0).is_err());
}

/// A random acyclic ledger: currency i (1..=n) is funded by tickets of
/// currencies < i (base included); clients hold one ticket each in a random
/// currency and some are blocked. Returns the ledger, the non-base
/// currencies, the funding edges (funded, funder) and the clients.
#[allow(clippy::type_complexity)]
fn build(
    funders: &[(usize, u64, usize, u64)],
    clients: &[(usize, u64, bool)],
) -> (
    Ledger,
    Vec<CurrencyId>,
    Vec<(CurrencyId, CurrencyId)>,
    Vec<usize>,
) {
    let mut l = Ledger::new();
    let mut curs = vec![BASE];
    let mut edges = vec![];
    for (i, &(f1, a1, f2, a2)) in funders.iter().enumerate() {
        let c = l.create_currency(&format!("c{i}")).unwrap();
        let mut from = vec![curs[f1 % curs.len()]];
        if a2 % 2 == 0 {
            from.push(curs[f2 % curs.len()]);
        }
        for (k, &src) in from.iter().enumerate() {
            let t = l.issue(src, if k == 0 { a1 } else { a2 }).unwrap();
            l.fund(c, t).unwrap();
            edges.push((c, src));
        }
        curs.push(c);
    }
    let hs = clients
        .iter()
        .map(|&(ci, a, runnable)| {
            let h = l.new_client();
            let t = l.issue(curs[ci % curs.len()], a).unwrap();
            l.give(h, t).unwrap();
            if !runnable {
                l.block(h).unwrap();
            }
            h
        })
        .collect();
    (l, curs[1..].to_vec(), edges, hs)
}

fn funders() -> impl Strategy<Value = Vec<(usize, u64, usize, u64)>> {
    prop::collection::vec((0usize..8, 1u64..1000, 0usize..8, 1u64..1000), 1..7)
}

fn clients() -> impl Strategy<Value = Vec<(usize, u64, bool)>> {
    prop::collection::vec((0usize..8, 1u64..1000, prop::bool::weighted(0.7)), 1..12)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Blocking a client of currency C leaves value(C) unchanged while C
    /// stays active; C's active tickets always sum to value(C); all client
    /// values sum to the active base amount; and waking restores every value.
    #[test]
    fn active_value_conserved(f in funders(), c in clients(), pick in 0usize..12) {
        let (mut l, _curs, _e, hs) = build(&f, &c);
        let h = hs[pick % hs.len()];
        prop_assume!(l.is_runnable(h).unwrap());
        let t = l.held(h).unwrap()[0];
        let cur = l.ticket_currency(t).unwrap();
        let before = l.currency_values();
        l.block(h).unwrap();
        let after = l.currency_values();
        if cur != BASE && l.is_active(cur).unwrap() {
            prop_assert!(close(before[cur], after[cur]));
            let issued: f64 = l.clients().filter_map(|x| {
                let tk = l.held(x).unwrap().first().copied()?;
                (l.ticket_currency(tk).unwrap() == cur).then(|| l.client_value(x).unwrap())
            }).sum::<f64>();
            // Clients of `cur` plus currencies funded by `cur` share value(cur).
            let funded: f64 = l.currencies().filter(|&d| d != BASE).map(|d| {
                (0..).map_while(|i| l.ticket_value(i).ok().map(|v| (i, v)))
                    .filter(|&(i, _)| l.holder(i) == Ok(Holder::Currency(d)) && l.ticket_currency(i) == Ok(cur))
                    .map(|(_, v)| v).sum::<f64>()
            }).sum();
            prop_assert!(close(issued + funded, after[cur]));
        }
        let total: f64 = l.client_values().iter().map(|x| x.1).sum();
        prop_assert!(close(total, l.active_amount(BASE).unwrap() as f64));
        l.wake(h).unwrap();
        let back = l.currency_values();
        for (a, b) in before.iter().zip(&back) {
            prop_assert!(close(*a, *b));
        }
    }

    /// Inflating an active currency X (raising an active ticket of X, or
    /// issuing a new one to a runnable client) changes no currency whose
    /// value does not depend on X, and not X itself.
    #[test]
    fn inflation_is_insulated(f in funders(), c in clients(), pick in 0usize..12, grow in 2u64..50, new in any::<bool>()) {
        let (mut l, _curs, _e, hs) = build(&f, &c);
        let h = hs[pick % hs.len()];
        let t = l.held(h).unwrap()[0];
        let x = l.ticket_currency(t).unwrap();
        prop_assume!(x != BASE && l.is_active(x).unwrap() && l.ticket_active(t).unwrap());
        let before = l.currency_values();
        if new {
            let n = l.new_client();
            let nt = l.issue(x, grow).unwrap();
            l.give(n, nt).unwrap();
        } else {
            let a = l.ticket_amount(t).unwrap();
            l.set_amount(t, a * grow).unwrap();
        }
        let after = l.currency_values();
        for y in l.currencies() {
            if y == x || !l.depends_on(y, x) {
                prop_assert!(close(before[y], after[y]), "currency {} moved", y);
            }
        }
    }

    /// Funding a currency with a ticket of one that depends on it is refused
    /// with FundingCycle, and nothing changes; otherwise it is accepted.
    #[test]
    fn cycles_refused(f in funders(), c in clients(), a in 0usize..8, b in 0usize..8) {
        let (mut l, curs, edges, _hs) = build(&f, &c);
        let (ca, cb) = (curs[a % curs.len()], curs[b % curs.len()]);
        // Reachability from the test's own edge list.
        let mut reach = vec![cb];
        let mut i = 0;
        while i < reach.len() {
            let x = reach[i];
            for &(funded, funder) in &edges {
                if funded == x && !reach.contains(&funder) { reach.push(funder); }
            }
            i += 1;
        }
        let cycle = reach.contains(&ca);
        let before = l.currency_values();
        let t = l.issue(cb, 10).unwrap();
        let r = l.fund(ca, t);
        if cycle {
            prop_assert!(matches!(r, Err(Error::FundingCycle { .. })), "{:?}", r);
            prop_assert_eq!(l.holder(t), Ok(Holder::Nobody));
            prop_assert_eq!(l.currency_values(), before);
        } else {
            prop_assert!(r.is_ok());
        }
    }

    /// A transfer moves value from lender to recipient and its undo
    /// restores every value; lending more than held is refused unchanged.
    #[test]
    fn transfers_undo(f in funders(), c in clients(), a in 0usize..12, b in 0usize..12, frac in 1u64..=100) {
        let (mut l, _curs, _e, hs) = build(&f, &c);
        let (ha, hb) = (hs[a % hs.len()], hs[b % hs.len()]);
        let t = l.held(ha).unwrap()[0];
        let held = l.ticket_amount(t).unwrap();
        let before = l.currency_values();
        let vb = l.client_values();
        let mut x = Transfers::new();
        prop_assert_eq!(
            x.transfer(&mut l, t, held + 1, Holder::Client(hb)),
            Err(Error::InsufficientTickets { wanted: held + 1, held })
        );
        let amount = (held * frac).div_ceil(100);
        let h = x.transfer(&mut l, t, amount, Holder::Client(hb)).unwrap();
        prop_assert_eq!(l.ticket_amount(t), Ok(held - amount));
        prop_assert_eq!(x.undo(&mut l, h), Ok(amount));
        prop_assert_eq!(x.undo(&mut l, h), Err(Error::TransferReturned(h.0)));
        prop_assert_eq!(l.ticket_amount(t), Ok(held));
        for (p, q) in before.iter().zip(&l.currency_values()) {
            prop_assert!(close(*p, *q));
        }
        for ((_, p), (_, q)) in vb.iter().zip(&l.client_values()) {
            prop_assert!(close(*p, *q));
        }
    }
}
