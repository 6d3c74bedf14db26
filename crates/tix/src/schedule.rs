//! `tix schedule`: a policy over fixed shares, its order of picks and the
//! per-client service error (GR3 eq. 2, in quanta) — the seeds' worked
//! examples at a glance (`tix schedule --algo gr3 --shares 3,2,1`).

use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use serde_json::json;
use tix_core::metrics::ServiceTracker;
use tix_core::{registry, PolicyOptions};

/// Longest run printed without an explicit --quanta.
const DEFAULT_MAX: u64 = 100_000;
/// Longest run accepted at all.
const HARD_MAX: u64 = 10_000_000;

#[derive(ClapArgs)]
pub struct Args {
    /// Policy name: rr, wrr, lottery, lottery-tree, lottery-o1, lottery-race,
    /// stride, wfq, wf2q, eevdf, vtrr, srr, gr3, fcfs, sjf, srtf, mlfq.
    #[arg(long, default_value = "gr3")]
    pub algo: String,
    /// Comma-separated shares (weights ≥ 1), one client each: A, B, C, …
    #[arg(long)]
    pub shares: String,
    /// Number of quanta to run (default: one cycle, the sum of the shares).
    #[arg(long)]
    pub quanta: Option<u64>,
    /// Seed for the lottery policies.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

fn name(i: usize, n: usize) -> String {
    if n <= 26 {
        ((b'A' + i as u8) as char).to_string()
    } else {
        i.to_string()
    }
}

fn parse_shares(s: &str) -> anyhow::Result<Vec<u64>> {
    let v: Vec<u64> = s
        .split(',')
        .map(|x| {
            let x = x.trim();
            x.parse::<u64>()
                .with_context(|| format!("--shares: '{x}' is not a non-negative integer"))
        })
        .collect::<anyhow::Result<_>>()?;
    if v.is_empty() {
        bail!("--shares: give at least one share");
    }
    Ok(v)
}

pub fn run(args: Args) -> anyhow::Result<u8> {
    let shares = parse_shares(&args.shares)?;
    const Q: u64 = 1_000_000;
    let opts = PolicyOptions {
        quantum_ns: Q,
        seed: args.seed,
    };
    let mut s = registry::build(&args.algo, &opts)
        .with_context(|| format!("--algo: known policies are {}", registry::ALGOS.join(", ")))?;
    let mut t = ServiceTracker::new(Q)?;
    let n = shares.len();
    for (i, &w) in shares.iter().enumerate() {
        s.join(w)
            .with_context(|| format!("--shares: client {} has share {w}", name(i, n)))?;
        t.join(w)?;
    }
    let total: u128 = shares.iter().map(|&w| w as u128).sum();
    let quanta = match args.quanta {
        Some(0) => bail!("--quanta must be at least 1"),
        Some(q) if q > HARD_MAX => bail!("--quanta {q} is more than {HARD_MAX}"),
        Some(q) => q,
        None if total > DEFAULT_MAX as u128 => {
            bail!("one cycle is {total} quanta; give --quanta N (at most {HARD_MAX})")
        }
        None => total as u64,
    };
    let mut order = Vec::with_capacity(quanta as usize);
    for _ in 0..quanta {
        let c = s.pick().context("no runnable client")?;
        s.charge(c, Q)?;
        t.charge(c, Q)?;
        order.push(c);
    }
    let report = t.report();
    let (lo, hi) = t.error_range();
    if args.json {
        let clients: Vec<_> = report
            .iter()
            .map(|r| {
                json!({
                    "id": r.id,
                    "name": name(r.id, n),
                    "share": r.weight,
                    "quanta": (r.service_ns / Q as u128) as u64,
                    "error": r.error,
                    "min_error": r.min_error,
                    "max_error": r.max_error,
                })
            })
            .collect();
        let out = json!({
            "algo": args.algo,
            "shares": shares,
            "quanta": quanta,
            "order": order,
            "order_names": order.iter().map(|&c| name(c, n)).collect::<Vec<_>>(),
            "clients": clients,
            "min_error": lo,
            "max_error": hi,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(0);
    }
    println!(
        "{} over shares {} for {quanta} quanta",
        args.algo, args.shares
    );
    let names: Vec<String> = order.iter().map(|&c| name(c, n)).collect();
    println!("order: {}", names.join(if n <= 26 { "" } else { " " }));
    println!(
        "{:>6} {:>12} {:>10} {:>10} {:>10} {:>10}",
        "client", "share", "quanta", "min E", "max E", "E at end"
    );
    for r in &report {
        println!(
            "{:>6} {:>12} {:>10} {:>+10.3} {:>+10.3} {:>+10.3}",
            name(r.id, n),
            r.weight,
            r.service_ns / Q as u128,
            r.min_error,
            r.max_error,
            r.error
        );
    }
    println!("service error range (tu): {lo:+.3} .. {hi:+.3}");
    Ok(0)
}
