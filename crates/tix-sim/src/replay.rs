//! A scenario simulated beside the same clients run as real processes
//! (`tix sim kernel`; GR3 §5's proportional-share claim on a real kernel),
//! and the report's section built from saved runs of it: the ideal share
//! the paper promises, the simulator's, the kernel's.

use crate::error::{Result, SimError};
use crate::report::{esc, html_table, Experiment};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One client: its share of the clients' CPU time, simulated and measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    pub name: String,
    pub tickets: u64,
    pub nice: i32,
    pub sim: f64,
    pub kernel: f64,
}

/// One replay of a scenario file (what `tix sim kernel --json` prints).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Replay {
    pub algo: String,
    pub cpus: usize,
    /// The sched_ext scheduler attached while measuring ("" if none).
    pub scheduler: String,
    /// `uname -r` of the machine that ran the processes.
    #[serde(default)]
    pub kernel_release: String,
    pub seconds: f64,
    pub clients: Vec<Row>,
}

/// A replay as saved for the report, with the build and command that
/// measured it (the page cites both).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measured {
    #[serde(flatten)]
    pub replay: Replay,
    pub build: String,
    pub command: String,
}

/// Most saved replays read (one line each); more is a malformed file.
const MAX_RECORDS: usize = 1000;

/// Saved replays, one JSON object per line; a line that is not one is
/// named in a one-line error.
pub fn load(path: &Path) -> Result<Vec<Measured>> {
    let text = std::fs::read_to_string(path).map_err(|e| SimError::io(path, e))?;
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if v.len() == MAX_RECORDS {
            return Err(SimError::Invalid(format!(
                "{}: more than {MAX_RECORDS} replays",
                path.display()
            )));
        }
        let m: Measured = serde_json::from_str(line).map_err(|e| {
            SimError::Invalid(format!(
                "{}:{}: not a saved replay: {e}",
                path.display(),
                i + 1
            ))
        })?;
        if m.replay.clients.is_empty() || m.replay.cpus == 0 {
            return Err(SimError::Invalid(format!(
                "{}:{}: a replay needs clients and CPUs",
                path.display(),
                i + 1
            )));
        }
        v.push(m);
    }
    if v.is_empty() {
        return Err(SimError::Invalid(format!("{}: no replays", path.display())));
    }
    Ok(v)
}

/// Each client's water-filled ideal share of the clients' time: weight
/// over the sum, with a weight worth more than one CPU capped at one and
/// its excess handed to the rest (tix_core::waterfill).
pub fn ideal(r: &Replay) -> Vec<f64> {
    let w: Vec<u64> = r.clients.iter().map(|c| c.tickets).collect();
    let machine = tix_core::waterfill::ideal_cpus(&w, r.cpus);
    let sum: f64 = machine.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    machine.iter().map(|s| s / sum).collect()
}

/// How far a client's kernel share may sit from the simulator's: 2 points
/// for a deterministic policy (issue 17's target); for lottery 4 binomial
/// sd over the draws of the window (one per 4 ms quantum per CPU) plus
/// .005 for the snapshots.
pub fn bound(r: &Replay, sim: f64) -> f64 {
    if r.algo.starts_with("lottery") {
        let n = (r.seconds * 250.0 * r.cpus as f64).max(1.0);
        4.0 * (sim * (1.0 - sim) / n).sqrt() + 0.005
    } else {
        0.02
    }
}

/// The report's section: one table per saved replay.
pub fn experiment(saved: &[Measured], file: &Path) -> Experiment {
    let mut ours = String::new();
    let mut worst: Option<String> = None;
    for m in saved {
        let r = &m.replay;
        let ideal = ideal(r);
        let rows: Vec<Vec<String>> = r
            .clients
            .iter()
            .zip(&ideal)
            .map(|(c, i)| {
                let b = bound(r, c.sim);
                let off = (c.kernel - c.sim).abs();
                if off > b && worst.is_none() {
                    worst = Some(format!(
                        "{} on {} CPU(s): {} kernel {:.4} against the simulator's {:.4} (bound {:.4})",
                        r.algo, r.cpus, c.name, c.kernel, c.sim, b
                    ));
                }
                vec![
                    esc(&c.name),
                    c.tickets.to_string(),
                    format!("{:.4}", i),
                    format!("{:.4}", c.sim),
                    format!("{:.4}", c.kernel),
                    format!("{:+.4}", c.kernel - c.sim),
                    format!("{:.4}", b),
                ]
            })
            .collect();
        ours += &format!(
            "<h4>{} on {} CPU(s), {:.0} s; kernel {} under {}</h4>",
            esc(&r.algo),
            r.cpus,
            r.seconds,
            esc(if r.kernel_release.is_empty() {
                "?"
            } else {
                &r.kernel_release
            }),
            esc(if r.scheduler.is_empty() {
                "the default scheduler"
            } else {
                &r.scheduler
            })
        );
        ours += &html_table(
            &[
                "client",
                "tickets",
                "ideal",
                "sim",
                "kernel",
                "kernel − sim",
                "bound",
            ],
            &rows,
        );
        ours += &format!(
            "<p class=\"note\">Measured by <code>{}</code>, build {}.</p>",
            esc(&m.command),
            esc(&m.build)
        );
    }
    let n = saved.len();
    Experiment {
        id: "sim-vs-kernel".into(),
        title: "The simulator beside the real kernel".into(),
        source: "GR3 (003) §5: proportional share, each client's share of the CPU time in \
                 proportion to its weight; here one scenario file simulated and run as real \
                 processes"
            .into(),
        paper: "<p>Each client's share is its weight's share (the <i>ideal</i> column; a \
                weight worth more than one CPU is capped at one and its excess goes to the \
                others). GR3 holds every client within a constant number of quanta of it.</p>"
            .into(),
        ours,
        plots: Vec::new(),
        commands: vec![
            "tix sim kernel crates/tix-sim/scenarios/kernel-gr3.toml   # as root, a scheduler attached"
                .into(),
            "bash vm/tests/run.sh --only '77-*.sh'   # in the VM: gr3, stride, lottery on 1 and 2 CPUs"
                .into(),
            "bash scripts/kernel-replays.sh LOG > docs/kernel/sim-vs-kernel.jsonl   # save them"
                .into(),
        ],
        notes: format!(
            "The simulator's columns are recomputed by whoever ran the measurement, not by this \
             page: the kernel's run in a VM under TCG; the page reads {n} saved replay(s) from \
             <code>{}</code>. Bounds: 2 points for GR3 and stride, 4 binomial sd + .005 for \
             lottery.",
            esc(&file.display().to_string())
        ),
        agrees: Some(match worst {
            None => (
                true,
                format!("in all {n} replays every client's kernel share is within its bound of the simulator's"),
            ),
            Some(w) => (false, w),
        }),
        known_difference: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay(algo: &str, kernel: [f64; 2]) -> String {
        format!(
            r#"{{"algo":"{algo}","cpus":1,"scheduler":"tix_user","kernel_release":"7.2.13","seconds":8.0,"clients":[{{"name":"a","tickets":305,"nice":-5,"sim":0.753,"kernel":{}}},{{"name":"b","tickets":100,"nice":0,"sim":0.247,"kernel":{}}}],"build":"abc1234","command":"bash vm/tests/run.sh --only '77-*.sh'"}}"#,
            kernel[0], kernel[1]
        )
    }

    fn file(name: &str, text: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("tix-replay-{name}-{}", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn saved_replays_agree_within_their_bounds_and_not_beyond() {
        let p = file("ok", &(replay("gr3", [0.76, 0.24]) + "\n"));
        let saved = load(&p).unwrap();
        let e = experiment(&saved, &p);
        assert!(e.agrees.as_ref().unwrap().0, "{:?}", e.agrees);
        assert!(e.ours.contains("0.7600") && e.ours.contains("abc1234"));
        // 3 points off a deterministic policy: differs, and says where.
        let p = file("off", &replay("stride", [0.783, 0.217]));
        let e = experiment(&load(&p).unwrap(), &p);
        let (ok, why) = e.agrees.unwrap();
        assert!(
            !ok && why.contains("stride") && why.contains("a kernel 0.7830"),
            "{why}"
        );
        // The same 3 points under lottery over 2,000 draws: 4 sd of .753
        // is .0386, so it agrees.
        let p = file("lot", &replay("lottery", [0.783, 0.217]));
        assert!(experiment(&load(&p).unwrap(), &p).agrees.unwrap().0);
    }

    #[test]
    fn ideal_caps_a_weight_worth_more_than_one_cpu() {
        let mut r: Replay = serde_json::from_str(&replay("gr3", [0.5, 0.5])).unwrap();
        assert!((ideal(&r)[0] - 305.0 / 405.0).abs() < 1e-9);
        r.cpus = 2;
        // 305 of 405 on 2 CPUs is 1.5 CPUs: capped at one, the 100 gets
        // the other; each half the clients' time.
        let i = ideal(&r);
        assert!(
            (i[0] - 0.5).abs() < 1e-9 && (i[1] - 0.5).abs() < 1e-9,
            "{i:?}"
        );
    }

    #[test]
    fn malformed_files_are_refused_naming_the_line() {
        let p = file("bad", &(replay("gr3", [0.76, 0.24]) + "\n{\"algo\": 3}\n"));
        let e = load(&p).unwrap_err().to_string();
        assert!(e.contains(":2: not a saved replay"), "{e}");
        let p = file("empty", "\n");
        assert!(load(&p).unwrap_err().to_string().contains("no replays"));
        let p = file("none", &replay("gr3", [0.76, 0.24]).replace(
            r#""clients":[{"name":"a","tickets":305,"nice":-5,"sim":0.753,"kernel":0.76},{"name":"b","tickets":100,"nice":0,"sim":0.247,"kernel":0.24}]"#,
            r#""clients":[]"#,
        ));
        assert!(load(&p).unwrap_err().to_string().contains("needs clients"));
    }
}
