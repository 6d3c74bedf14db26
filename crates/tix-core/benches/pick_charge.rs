//! Cost of one pick + one whole-quantum charge per policy, at 10, 10^3,
//! 10^5 and 10^6 runnable clients (every registry algorithm; the O(n) list
//! lottery only up to 10^5). Weights are a fixed pseudo-random spread over
//! 1..=1024, joined largest first (keeps VTRR's sorted insert at the tail).
//!
//! Group `pick_charge` calls each policy through its concrete type, as a
//! library user (or the simulator's inner loop) would; group `dyn` calls a
//! few through `Box<dyn Scheduler>` from the registry, to show what the
//! dynamic dispatch adds; group `shuffled` repeats the tree- and group-based
//! policies at 10^5+ clients with weights joined in hash order, so that
//! equal weights do not sit at adjacent ids. rr is the peer every row is
//! compared against. Group `floor` times what no draw can avoid: the
//! default generator's `below(N)` and one load from a random slot of an
//! N-entry u64 array (a lottery draw reads at least one random client),
//! so past the caches a row can be read against the memory it must touch.
//! Run: `cargo bench -p tix-core --bench pick_charge`
//! (`TIX_BENCH_SIZES=10,1000,100000` to choose the sizes).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use std::time::Duration;
use tix_core::lottery::{Draw, Lottery};
use tix_core::{registry, PolicyOptions, Scheduler};

const Q: u64 = 1_000_000;

fn weights(n: usize) -> Vec<u64> {
    let mut w = hashed_weights(n);
    w.sort_unstable_by(|a, b| b.cmp(a));
    w
}

/// The same weights in hash order: equal weights no longer hold adjacent
/// ids, so the clients a tree touches in a row are scattered in memory.
fn hashed_weights(n: usize) -> Vec<u64> {
    // splitmix-style hash of the index: deterministic, no RNG dependency.
    (0..n as u64)
        .map(|i| {
            let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            1 + (z ^ (z >> 31)) % 1024
        })
        .collect()
}

fn sizes() -> Vec<usize> {
    match std::env::var("TIX_BENCH_SIZES") {
        Ok(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) => vec![10, 1_000, 100_000, 1_000_000],
    }
}

const OPTS: PolicyOptions = PolicyOptions {
    quantum_ns: Q,
    seed: 1,
};

/// Join `n` clients, then time pick + charge of whatever was picked.
fn run<S: Scheduler + ?Sized>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    n: usize,
    s: &mut S,
) {
    run_with(g, name, n, s, weights(n))
}

fn run_with<S: Scheduler + ?Sized>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    n: usize,
    s: &mut S,
    ws: Vec<u64>,
) {
    for w in ws {
        s.join(w).expect("valid weight");
    }
    g.bench_with_input(BenchmarkId::new(name, n), &n, |b, _| {
        b.iter(|| {
            let id = s.pick().expect("runnable clients");
            s.charge(black_box(id), Q)
                .expect("charge the picked client");
        })
    });
}

fn group<'a>(
    c: &'a mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(name);
    g.warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    g
}

fn pick_charge(c: &mut Criterion) {
    use tix_core::*;
    let mut g = group(c, "pick_charge");
    for n in sizes() {
        // One concrete type per registry name; the match keeps this list
        // and registry::ALGOS from drifting apart (an unknown name panics).
        for algo in registry::ALGOS {
            if *algo == "lottery" && n > 100_000 {
                continue;
            }
            let o = &OPTS;
            match *algo {
                "rr" => run(&mut g, algo, n, &mut rr::RoundRobin::new(o)),
                "wrr" => run(&mut g, algo, n, &mut wrr::WeightedRoundRobin::new(o)),
                "lottery" => run(&mut g, algo, n, &mut Lottery::new(o, Draw::List)),
                "lottery-tree" => run(&mut g, algo, n, &mut Lottery::new(o, Draw::Tree)),
                "lottery-o1" => run(&mut g, algo, n, &mut Lottery::new(o, Draw::O1)),
                "lottery-race" => run(&mut g, algo, n, &mut Lottery::new(o, Draw::Race)),
                "stride" => run(&mut g, algo, n, &mut stride::Stride::new(o)),
                "wfq" => run(&mut g, algo, n, &mut wfq::Wfq::new(o)),
                "wf2q" => run(&mut g, algo, n, &mut wf2q::Wf2qPlus::new(o)),
                "eevdf" => run(&mut g, algo, n, &mut eevdf::Eevdf::new(o)),
                "vtrr" => run(&mut g, algo, n, &mut vtrr::Vtrr::new(o)),
                "srr" => run(&mut g, algo, n, &mut srr::Srr::new(o)),
                "gr3" => run(&mut g, algo, n, &mut gr3::Gr3::new(o)),
                "fcfs" => run(&mut g, algo, n, &mut fcfs::Fcfs::new(o)),
                "sjf" => run(&mut g, algo, n, &mut sjf::Sjf::new(o)),
                "srtf" => run(&mut g, algo, n, &mut srtf::Srtf::new(o)),
                "mlfq" => run(&mut g, algo, n, &mut mlfq::Mlfq::new(o)),
                other => panic!("bench does not know policy {other}"),
            }
        }
    }
    g.finish();
}

fn dyn_dispatch(c: &mut Criterion) {
    let mut g = group(c, "dyn");
    for n in sizes() {
        for algo in ["rr", "gr3", "lottery-o1", "stride"] {
            let mut s = registry::build(algo, &OPTS).expect("registry name");
            run(&mut g, algo, n, s.as_mut());
        }
    }
    g.finish();
}

/// The tree- and group-based policies again, at 10^5 clients and more only,
/// with weights joined in hash order (see [`hashed_weights`]): what their
/// cost is when ids carry no locality.
fn shuffled(c: &mut Criterion) {
    use tix_core::*;
    let mut g = group(c, "shuffled");
    for n in sizes().into_iter().filter(|&n| n >= 100_000) {
        let o = &OPTS;
        let ws = || hashed_weights(n);
        run_with(&mut g, "rr", n, &mut rr::RoundRobin::new(o), ws());
        run_with(&mut g, "gr3", n, &mut gr3::Gr3::new(o), ws());
        let mut l = Lottery::new(o, Draw::Tree);
        run_with(&mut g, "lottery-tree", n, &mut l, ws());
        run_with(
            &mut g,
            "lottery-o1",
            n,
            &mut Lottery::new(o, Draw::O1),
            ws(),
        );
        run_with(&mut g, "stride", n, &mut stride::Stride::new(o), ws());
        run_with(&mut g, "wfq", n, &mut wfq::Wfq::new(o), ws());
        run_with(&mut g, "wf2q", n, &mut wf2q::Wf2qPlus::new(o), ws());
        run_with(&mut g, "eevdf", n, &mut eevdf::Eevdf::new(o), ws());
    }
    g.finish();
}

/// One uniform slot of an N-entry array per iteration: the memory floor of
/// a random draw at that size (see the module header). `random-load` lets
/// consecutive loads overlap (what the out-of-order core does when a draw's
/// address depends only on the generator); `random-chain` makes each
/// address wait for the previous load (XOR with its value masked by a zero
/// the compiler cannot see), the latency a draw pays when it cannot overlap.
fn floor(c: &mut Criterion) {
    use tix_core::rng::{DefaultRng, Rng};
    let mut g = group(c, "floor");
    for n in sizes() {
        let slots = weights(n);
        let mut rng = DefaultRng::new(OPTS.seed);
        let mut acc = 0u64;
        g.bench_with_input(BenchmarkId::new("random-load", n), &n, |b, _| {
            b.iter(|| {
                acc = acc.wrapping_add(slots[rng.below(n as u64) as usize]);
                black_box(acc)
            })
        });
        let zero = black_box(0u64);
        let mut last = 0u64;
        g.bench_with_input(BenchmarkId::new("random-chain", n), &n, |b, _| {
            b.iter(|| {
                let i = rng.below(n as u64) ^ (last & zero);
                last = slots[i as usize];
                black_box(last)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, pick_charge, dyn_dispatch, shuffled, floor);
criterion_main!(benches);
