//! Cost of one pick + one whole-quantum charge per policy, at 10, 10^3,
//! 10^5 and 10^6 runnable clients (every registry algorithm; the O(n) list
//! lottery only up to 10^5). Weights are a fixed pseudo-random spread over
//! 1..=1024, joined largest first (keeps VTRR's sorted insert at the tail).
//! Run: `cargo bench -p tix-core --bench pick_charge`; compare against rr.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use std::time::Duration;
use tix_core::{registry, PolicyOptions};

const Q: u64 = 1_000_000;

fn weights(n: usize) -> Vec<u64> {
    // splitmix-style hash of the index: deterministic, no RNG dependency.
    let mut w: Vec<u64> = (0..n as u64)
        .map(|i| {
            let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            1 + (z ^ (z >> 31)) % 1024
        })
        .collect();
    w.sort_unstable_by(|a, b| b.cmp(a));
    w
}

fn pick_charge(c: &mut Criterion) {
    let sizes: Vec<usize> = match std::env::var("TIX_BENCH_SIZES") {
        Ok(s) => s.split(',').filter_map(|x| x.trim().parse().ok()).collect(),
        Err(_) => vec![10, 1_000, 100_000, 1_000_000],
    };
    let opts = PolicyOptions {
        quantum_ns: Q,
        seed: 1,
    };
    let mut g = c.benchmark_group("pick_charge");
    g.warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    for algo in registry::ALGOS {
        for &n in &sizes {
            if *algo == "lottery" && n > 100_000 {
                continue;
            }
            let mut s = registry::build(algo, &opts).expect("registry name");
            for w in weights(n) {
                s.join(w).expect("valid weight");
            }
            g.bench_with_input(BenchmarkId::new(*algo, n), &n, |b, _| {
                b.iter(|| {
                    let id = s.pick().expect("runnable clients");
                    s.charge(black_box(id), Q)
                        .expect("charge the picked client");
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, pick_charge);
criterion_main!(benches);
