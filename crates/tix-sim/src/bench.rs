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
    "wrr",
    "stride",
    "wfq",
    "wf2q",
    "eevdf",
    "vtrr",
    "srr",
    "gr3",
    "lottery",
    "lottery-tree",
    "lottery-o1",
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
    /// The policy alone (a bare pick + charge loop), quanta/s: the
    /// engine's own cost is the difference.
    pub policy_only_per_s: f64,
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

/// The same clients in a bare pick + charge loop, no engine around it.
fn time_raw(algo: &str, clients: usize, quanta: u64) -> Result<f64> {
    let sys = workload(algo, clients, quanta);
    let opts = tix_core::PolicyOptions {
        quantum_ns: sys.config.quantum_ns,
        seed: 1,
    };
    let mut s = crate::policy::build(algo, &opts)?;
    for c in &sys.clients {
        s.join(c.tickets)?;
    }
    let t0 = Instant::now();
    for _ in 0..quanta {
        if let Some(id) = s.pick() {
            s.charge(id, opts.quantum_ns)?;
        }
    }
    Ok(quanta as f64 / t0.elapsed().as_secs_f64())
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
        policy_only_per_s: time_raw("rr", clients, quanta)?,
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
            policy_only_per_s: time_raw(a, clients, quanta)?,
        });
    }
    Ok(rows)
}

pub fn table(rows: &[BenchRow], clients: usize) -> String {
    let mut s = format!(
        "{clients} CPU-bound clients, 1 cpu: whole engine (pick + charge + accounting), and the policy alone\n\
{:<14} {:>12} {:>9} {:>14} {:>8} {:>16}\n",
        "policy", "quanta", "seconds", "M quanta/s", "vs rr", "policy-only M/s"
    );
    for r in rows {
        s.push_str(&format!(
            "{:<14} {:>12} {:>9.3} {:>14.2} {:>8.3} {:>16.2}\n",
            r.algo,
            r.quanta,
            r.seconds,
            r.quanta_per_s / 1e6,
            r.vs_rr,
            r.policy_only_per_s / 1e6
        ));
    }
    s
}
