//! Service time error (GR3 §2 eq. 2) of a policy over fixed, always-runnable
//! shares, and the GR3 §5.1 method: average min and max error over many
//! random or skewed share sets (`tix sim error`, `tix sim sweep`).

use crate::error::{Result, SimError};
use crate::policy;
use crate::rng::WorkRng;
use serde::Serialize;
use tix_core::metrics::QuantumErrors;
use tix_core::{PolicyOptions, MAX_WEIGHT};

/// Service error of one client over a run, in quanta.
#[derive(Debug, Clone, Serialize)]
pub struct ClientError {
    pub share: u64,
    /// Quanta received.
    pub service: u64,
    pub min: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ErrorRun {
    pub algo: String,
    pub shares: Vec<u64>,
    pub quanta: u64,
    /// Client indices (in the order the shares were given), one per quantum.
    pub picks: Vec<usize>,
    pub clients: Vec<ClientError>,
    pub min: f64,
    pub max: f64,
}

fn check_shares(shares: &[u64]) -> Result<()> {
    if shares.is_empty() {
        return Err(SimError::Invalid(
            "--shares: expected at least one share".into(),
        ));
    }
    for (i, &s) in shares.iter().enumerate() {
        if s == 0 || s > MAX_WEIGHT {
            return Err(SimError::Invalid(format!(
                "--shares: share {} is {s}; expected 1..={MAX_WEIGHT}",
                i + 1
            )));
        }
    }
    Ok(())
}

/// Run `algo` over `shares` for `quanta` quanta (default: one cycle, ΣS).
pub fn error_run(algo: &str, shares: &[u64], quanta: Option<u64>, seed: u64) -> Result<ErrorRun> {
    check_shares(shares)?;
    let total: u64 = shares.iter().sum();
    let quanta = quanta.unwrap_or(total);
    if quanta == 0 {
        return Err(SimError::Invalid("--quanta: 0; expected at least 1".into()));
    }
    if quanta > 100_000_000 {
        return Err(SimError::Invalid(format!(
            "--quanta: {quanta} picks would be printed; expected at most 100,000,000 (use `tix sim sweep` for long runs)"
        )));
    }
    let (picks, tr) = run_shares(algo, shares, quanta, seed, true)?;
    let clients = (0..shares.len())
        .map(|a| ClientError {
            share: shares[a],
            service: tr.work(a),
            min: tr.min(a),
            max: tr.max(a),
        })
        .collect::<Vec<_>>();
    let min = clients.iter().map(|c| c.min).fold(0.0, f64::min);
    let max = clients.iter().map(|c| c.max).fold(0.0, f64::max);
    Ok(ErrorRun {
        algo: algo.to_string(),
        shares: shares.to_vec(),
        quanta,
        picks,
        clients,
        min,
        max,
    })
}

fn run_shares(
    algo: &str,
    shares: &[u64],
    quanta: u64,
    seed: u64,
    record: bool,
) -> Result<(Vec<usize>, QuantumErrors)> {
    let opts = PolicyOptions {
        quantum_ns: 1_000_000,
        seed,
    };
    let mut sched = policy::build(algo, &opts)?;
    let q = sched.quantum_ns();
    // Ids are dense in join order, so id == index in `shares`.
    for &s in shares {
        sched.join(s)?;
    }
    let mut tr = QuantumErrors::new(shares);
    let mut picks = Vec::new();
    if record {
        picks.reserve(quanta.min(1 << 24) as usize);
    }
    for _ in 0..quanta {
        match sched.pick() {
            Some(a) => {
                sched.charge(a, q)?;
                tr.served(a);
                if record {
                    picks.push(a);
                }
            }
            None => tr.idle(),
        }
    }
    tr.finish();
    Ok((picks, tr))
}

/// How a sweep draws its share sets (GR3 §5.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ShareDist {
    /// Random shares scaled to sum to S.
    Random,
    /// One client holds 75% of S, the others share the rest at random.
    Skewed,
}

impl std::str::FromStr for ShareDist {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "random" => Ok(ShareDist::Random),
            "skewed" => Ok(ShareDist::Skewed),
            _ => Err(SimError::Invalid(format!(
                "--dist: got '{s}'; expected random or skewed"
            ))),
        }
    }
}

/// `n` positive integers summing to `total`, proportional to uniform draws.
fn random_split(rng: &mut WorkRng, n: usize, total: u64) -> Vec<u64> {
    let draws: Vec<u64> = (0..n).map(|_| rng.range(1, 1 << 20)).collect();
    let sum: u128 = draws.iter().map(|&d| d as u128).sum();
    let spare = (total - n as u64) as u128;
    let mut out: Vec<u64> = draws
        .iter()
        .map(|&d| 1 + (d as u128 * spare / sum) as u64)
        .collect();
    let mut left = total - out.iter().sum::<u64>();
    // Rounding left fewer than n units: hand them out one each at random.
    while left > 0 {
        let i = rng.range(0, n as u64 - 1) as usize;
        out[i] += 1;
        left -= 1;
    }
    out
}

/// One share set of the GR3 §5.1 method.
pub fn share_set(dist: ShareDist, n: usize, total: u64, rng: &mut WorkRng) -> Vec<u64> {
    match dist {
        ShareDist::Random => random_split(rng, n, total),
        ShareDist::Skewed => {
            let big = total * 3 / 4;
            let mut rest = random_split(rng, n - 1, total - big);
            let at = rng.range(0, (n - 1) as u64) as usize;
            rest.insert(at, big);
            rest
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SweepPoint {
    pub algo: String,
    pub clients: usize,
    pub total: u64,
    pub runs: u64,
    pub dist: ShareDist,
    pub seed: u64,
    /// Average over runs of each run's most negative error (quanta).
    pub avg_min: f64,
    /// Average over runs of each run's most positive error (quanta).
    pub avg_max: f64,
    /// Worst single run.
    pub worst_min: f64,
    pub worst_max: f64,
}

/// Most runs a sweep takes: the paper's grids use 2,500; 10^7 runs of the
/// largest grid point already take hours.
pub const MAX_RUNS: u64 = 10_000_000;

pub fn check_sweep(n: usize, total: u64, runs: u64, dist: ShareDist) -> Result<()> {
    if n == 0 {
        return Err(SimError::Invalid("--clients: expected at least 1".into()));
    }
    if runs == 0 || runs > MAX_RUNS {
        return Err(SimError::Invalid(format!(
            "--runs: {runs}; expected 1..={MAX_RUNS}"
        )));
    }
    if total > MAX_WEIGHT {
        return Err(SimError::Invalid(format!(
            "--total: expected at most {MAX_WEIGHT}"
        )));
    }
    match dist {
        ShareDist::Random if total < n as u64 => Err(SimError::Invalid(format!(
            "--total: {total} is less than --clients {n}; every client needs a share of at least 1"
        ))),
        ShareDist::Skewed if n < 2 => Err(SimError::Invalid(
            "--clients: a skewed set needs at least 2 clients".into(),
        )),
        ShareDist::Skewed if total - total * 3 / 4 < (n - 1) as u64 => {
            Err(SimError::Invalid(format!(
                "--total: {total} leaves {} units (25%) for {} other clients; expected at least 1 each",
                total - total * 3 / 4,
                n - 1
            )))
        }
        _ => Ok(()),
    }
}

/// The GR3 §5.1 method: `runs` share sets, each run for one cycle of S quanta
/// (a deterministic policy's schedule repeats after that), min and max error
/// per run, averaged. Runs are split over the machine's cores; each run has
/// its own derived seed, so the result does not depend on the split.
pub fn sweep(
    algo: &str,
    n: usize,
    total: u64,
    runs: u64,
    dist: ShareDist,
    seed: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<SweepPoint> {
    check_sweep(n, total, runs, dist)?;
    // Fail early and clearly on an unknown policy.
    policy::build(algo, &PolicyOptions::default())?;
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(runs as usize)
        .max(1);
    let one = |r: u64| -> Result<(f64, f64)> {
        let mut rng = WorkRng::derive(seed, r);
        let shares = share_set(dist, n, total, &mut rng);
        let (_, tr) = run_shares(algo, &shares, total, rng.next_u64(), false)?;
        let mut lo = 0.0f64;
        let mut hi = 0.0f64;
        for a in 0..n {
            lo = lo.min(tr.min(a));
            hi = hi.max(tr.max(a));
        }
        Ok((lo, hi))
    };
    // Each worker folds its runs (r = w, w + workers, …) into sums and
    // extremes: memory does not grow with --runs.
    type Acc = (f64, f64, f64, f64);
    let fold = |w: usize| -> Result<Acc> {
        let mut acc: Acc = (0.0, 0.0, 0.0, 0.0);
        let mut r = w as u64;
        while r < runs {
            let (lo, hi) = one(r)?;
            acc.0 += lo;
            acc.1 += hi;
            acc.2 = acc.2.min(lo);
            acc.3 = acc.3.max(hi);
            progress(1);
            r += workers as u64;
        }
        Ok(acc)
    };
    let parts: Vec<Result<Acc>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let fold = &fold;
                s.spawn(move || fold(w))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a sweep worker panicked"))
            .collect()
    });
    let (mut smin, mut smax, mut wmin, mut wmax) = (0.0, 0.0, 0.0f64, 0.0f64);
    for p in parts {
        let (a, b, c, d) = p?;
        smin += a;
        smax += b;
        wmin = wmin.min(c);
        wmax = wmax.max(d);
    }
    Ok(SweepPoint {
        algo: algo.to_string(),
        clients: n,
        total,
        runs,
        dist,
        seed,
        avg_min: smin / runs as f64,
        avg_max: smax / runs as f64,
        worst_min: wmin,
        worst_max: wmax,
    })
}
