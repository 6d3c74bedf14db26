//! The built-in reproductions of the seeds' experiments, one module per
//! seed; each returns the page sections for `tix sim report`.

use crate::error::Result;
use crate::report::{Ctx, Experiment};

pub mod gr3;
pub mod mutex;
pub mod ras;
pub mod samih;
pub mod waldspurger;
pub mod zepp;

/// The reproduction families, as `--only` matches them.
pub const FAMILIES: [&str; 6] = [
    "GR3 §5.1",
    "Waldspurger",
    "Waldspurger mutex",
    "Zepp",
    "Samih",
    "RAS",
];

/// Run every reproduction, or only the families whose name contains `only`.
pub fn all(cx: &Ctx, only: Option<&str>) -> Result<Vec<Experiment>> {
    let mut v = Vec::new();
    type Repro = fn(&Ctx) -> Result<Vec<Experiment>>;
    let runs: [Repro; 6] = [
        gr3::run,
        waldspurger::run,
        mutex::run,
        zepp::run,
        samih::run,
        ras::run,
    ];
    for (name, f) in FAMILIES.into_iter().zip(runs) {
        if let Some(o) = only {
            if !name.to_lowercase().contains(&o.to_lowercase()) {
                continue;
            }
        }
        match f(cx) {
            Ok(e) => v.extend(e),
            Err(e) => {
                // A failed reproduction is shown on the page, not hidden.
                eprintln!("tix sim report: {name}: {e}");
                v.push(Experiment {
                    id: format!("failed-{}", v.len()),
                    title: format!("{name}: could not run"),
                    ours: format!(
                        "<p class=\"diff\">{}</p>",
                        crate::report::esc(&e.to_string())
                    ),
                    agrees: Some((false, format!("the reproduction failed: {e}"))),
                    ..Default::default()
                });
            }
        }
    }
    Ok(v)
}

/// Format a number with a sign and `d` decimals.
pub fn sf(x: f64, d: usize) -> String {
    format!("{x:+.d$}")
}

use crate::engine::{simulate, simulate_with, Controller, SimResult};

/// Write a scenario under DIR/scenarios, parse it back and run it; the
/// written file is exactly what the page's rerun command runs.
pub fn run_text(cx: &Ctx, name: &str, text: &str) -> Result<(String, SimResult)> {
    let rel = cx.scenario(name, text)?;
    let sys = crate::scenario::parse(&rel, text)?;
    Ok((rel, simulate(sys)?))
}

/// As [`run_text`], under a controller (the rerun command cannot attach
/// one, so the page says so).
pub fn run_text_with(
    cx: &Ctx,
    name: &str,
    text: &str,
    c: Box<dyn Controller>,
) -> Result<(String, SimResult)> {
    let rel = cx.scenario(name, text)?;
    let sys = crate::scenario::parse(&rel, text)?;
    Ok((rel, simulate_with(sys, c)?))
}

/// Index of a client by name.
pub fn idx(r: &SimResult, name: &str) -> usize {
    r.clients.iter().position(|c| c.name == name).unwrap_or(0)
}

/// Service (ns) of client g at time t, interpolated between samples.
pub fn service_at(r: &SimResult, g: usize, t: u64) -> f64 {
    let ts = &r.series.t_ns;
    let s = &r.series.service_ns[g];
    match ts.binary_search(&t) {
        Ok(k) => s[k] as f64,
        Err(0) => 0.0,
        Err(k) if k >= ts.len() => s[ts.len() - 1] as f64,
        Err(k) => {
            let (t0, t1) = (ts[k - 1] as f64, ts[k] as f64);
            let f = (t as f64 - t0) / (t1 - t0);
            s[k - 1] as f64 + f * (s[k] as f64 - s[k - 1] as f64)
        }
    }
}

/// First time (ns) client g's service reaches `level` ns, interpolated.
pub fn time_reaching(r: &SimResult, g: usize, level: f64) -> Option<f64> {
    let ts = &r.series.t_ns;
    let s = &r.series.service_ns[g];
    for k in 1..ts.len() {
        if s[k] as f64 >= level {
            let (a, b) = (s[k - 1] as f64, s[k] as f64);
            let f = if b > a { (level - a) / (b - a) } else { 0.0 };
            return Some(ts[k - 1] as f64 + f * (ts[k] - ts[k - 1]) as f64);
        }
    }
    None
}

pub fn cmd_run(rel: &str) -> String {
    format!("tix sim run DIR/{rel} --plot /tmp/plots")
}
