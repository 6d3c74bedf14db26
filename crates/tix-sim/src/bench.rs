//! `tix sim bench`: simulated quanta per second of the whole engine
//! (dispatch, charge, accounting) for CPU-bound clients on one CPU, each
//! policy as a ratio against rr, the simplest, timed in the same run.

use crate::engine::simulate;
use crate::error::Result;
use crate::model::{SimConfig, System};
use crate::rng::WorkRng;
use serde::Serialize;
use std::time::Instant;

/// The policies timed when none are named.
pub const DEFAULT: [&str; 12] = [
    "wrr", "stride", "wfq", "wf2q", "eevdf", "vtrr", "srr", "gr3", "lottery", "lottery-tree", "lottery-o1",
    "lottery-race",
];

#[derive(Debug, Clone, Serialize)]
pub struct BenchRow {
    pub algo: String,
    pub quanta: u64,
    pub seconds: f64,
    pub quanta_per_s: f64,
    /// quanta/s of this policy ÷ quanta/s of rr in the same run.
    pub vs_rr: f64,
}

/// A system of `clients` CPU-bound clients with weights 1..=100 (fixed seed).
pub fn workload(algo: &str, clients: usize, quanta: u64) -> System {
    let q = 1_000_000;
    let mut cfg = SimConfig::new(algo, quanta * q);
    cfg.quantum_ns = q;
    cfg.sample_ns = quanta * q;
    let mut sys = System::new(cfg);
    let mut rng = WorkRng::new(42);
    for i in 0..clients {
        sys.cpu_client(&format!("c{i}"), rng.range(1, 100));
    }
    sys
}

fn time_one(algo: &str, clients: usize, quanta: u64) -> Result<(u64, f64)> {
    let sys = workload(algo, clients, quanta);
    let t0 = Instant::now();
    let r = simulate(sys)?;
    Ok((r.quanta, t0.elapsed().as_secs_f64()))
}

pub fn run(clients: usize, quanta: u64, algos: &[String]) -> Result<Vec<BenchRow>> {
    let list: Vec<String> = if algos.is_empty() {
        let known = crate::policy::algos();
        DEFAULT
            .iter()
            .filter(|a| known.contains(a))
            .map(|a| a.to_string())
            .collect()
    } else {
        algos.to_vec()
    };
    let (rq, rs) = time_one("rr", clients, quanta)?;
    let rr_rate = rq as f64 / rs;
    let mut rows = vec![BenchRow {
        algo: "rr".into(),
        quanta: rq,
        seconds: rs,
        quanta_per_s: rr_rate,
        vs_rr: 1.0,
    }];
    for a in list.iter().filter(|a| a.as_str() != "rr") {
        let (n, s) = time_one(a, clients, quanta)?;
        let rate = n as f64 / s;
        rows.push(BenchRow {
            algo: a.clone(),
            quanta: n,
            seconds: s,
            quanta_per_s: rate,
            vs_rr: rate / rr_rate,
        });
    }
    Ok(rows)
}

pub fn table(rows: &[BenchRow], clients: usize) -> String {
    let mut s = format!(
        "{clients} CPU-bound clients, 1 cpu, whole engine (pick + charge + accounting)\n{:<14} {:>12} {:>9} {:>14} {:>8}\n",
        "policy", "quanta", "seconds", "M quanta/s", "vs rr"
    );
    for r in rows {
        s.push_str(&format!(
            "{:<14} {:>12} {:>9.3} {:>14.2} {:>8.3}\n",
            r.algo,
            r.quanta,
            r.seconds,
            r.quanta_per_s / 1e6,
            r.vs_rr
        ));
    }
    s
}
