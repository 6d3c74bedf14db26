//! The daemon's time per change (issue: currencies on the real kernel): a
//! `fund`, a `mktkt` and a `lrenice` through `Daemon::handle` — the rules,
//! the record, the scheduler's table writes (in memory) — on a system of
//! 1,000 currencies (100 users, 10 each, chains up to 4 deep) and 10,000
//! processes holding tickets in them, against the same changes on an empty
//! daemon; and the state file's serialisation at that size, which the real
//! daemon adds (then an fsync) to every change.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use std::collections::BTreeMap;
use tix_ctl::daemon::memory::{user, MemBackend};
use tix_ctl::daemon::Daemon;
use tix_ctl::{Request, Response};

const USERS: u32 = 100;
const PER_USER: u32 = 10;
const PROCS: u32 = 10_000;

fn ok(r: Option<Response>) {
    if let Some(Response::Error { message, .. }) = r {
        panic!("setup refused: {message}");
    }
}

fn name(u: u32, i: u32) -> String {
    format!("u{u}c{i}")
}

/// `procs` processes (pid 10000 + i, owner 2000 + i % USERS), and with
/// `currencies` each user's PER_USER currencies, funded in chains of 4
/// below the user's own, each process holding 50 tickets in one of them.
fn system(procs: u32, currencies: bool) -> Daemon<MemBackend> {
    let mut b = MemBackend::default();
    for i in 0..procs {
        b = b.with_proc(10_000 + i, 10_000 + i, 1, 2000 + i % USERS);
    }
    let mut d = Daemon::new(b, BTreeMap::new());
    if currencies {
        for u in 0..USERS {
            let c = user(2000 + u);
            for i in 0..PER_USER {
                ok(d.handle(&c, &Request::MkCur { name: name(u, i) }));
                let from = (i % 4 != 0).then(|| name(u, i - 1));
                ok(d.handle(
                    &c,
                    &Request::Fund {
                        name: name(u, i),
                        amount: 100 + i as u64,
                        from,
                    },
                ));
            }
        }
        for i in 0..procs {
            let u = i % USERS;
            ok(d.handle(
                &user(2000 + u),
                &Request::Hold {
                    pid: 10_000 + i,
                    tickets: 50,
                    currency: Some(name(u, i % PER_USER)),
                },
            ));
        }
    }
    d
}

fn changes(c: &mut Criterion) {
    let mut g = c.benchmark_group("daemon change");
    g.sample_size(20);
    for (label, procs) in [
        ("1000 currencies, 10000 processes", PROCS),
        ("one currency, one process", 1),
    ] {
        let mut d = system(procs, procs == PROCS);
        let alice = user(2000);
        if procs == 1 {
            ok(d.handle(&alice, &Request::MkCur { name: name(0, 0) }));
        }
        let mut amount = 100;
        g.bench_function(format!("fund, {label}"), |b| {
            b.iter(|| {
                amount = if amount == 100 { 200 } else { 100 };
                black_box(d.handle(
                    &alice,
                    &Request::Fund {
                        name: name(0, 0),
                        amount,
                        from: None,
                    },
                ))
            })
        });
        let mut t = 50;
        g.bench_function(format!("mktkt, {label}"), |b| {
            b.iter(|| {
                t = if t == 50 { 60 } else { 50 };
                black_box(d.handle(
                    &alice,
                    &Request::Hold {
                        pid: 10_000,
                        tickets: t,
                        currency: Some(name(0, 0)),
                    },
                ))
            })
        });
        g.bench_function(format!("lrenice, {label}"), |b| {
            b.iter(|| {
                t = if t == 50 { 60 } else { 50 };
                black_box(d.handle(
                    &alice,
                    &Request::SetTickets {
                        pid: 10_000,
                        tickets: t,
                    },
                ))
            })
        });
        g.bench_function(format!("state file serialisation, {label}"), |b| {
            b.iter(|| black_box(serde_json::to_vec(&d.saved).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, changes);
criterion_main!(benches);
