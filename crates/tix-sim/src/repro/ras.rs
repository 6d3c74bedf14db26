//! The Race-Averse Scheduler report (002) Ch. 2–3: weighted round robin whose
//! slice falls with a task's race probability (10 × its writes / all writes,
//! eq. 2-1; slice = 100 ms − 10 ms × race_prob, eq. 2-2), against RR with
//! 100 ms slices, on the report's benchmark model.

use super::run_text_with;
use crate::engine::{Controller, SimResult};
use crate::error::Result;
use crate::model::Action;
use crate::plot::{line_chart, Line};
use crate::report::{html_table, Ctx, Experiment};
use crate::rng::WorkRng;
use tix_core::ras;

/// CPU cost of one traced write (fault → SIGSEGV → mprotect), calibrated so
/// that 20 tasks of the report's 16..8192 writes take its ~7 s under RR.
const WRITE_US: u64 = 87;

/// RAS's slices (tix_core::ras) as WRR weights in 10 ms quanta: weight =
/// 10 − race_prob, with the report's special cases at the maximum.
struct RaceAverse {
    work_ns: Vec<u64>,
}

impl Controller for RaceAverse {
    fn at_sample(&mut self, _now: u64, s: &[u64]) -> Vec<Action> {
        // wcounts are cumulative writes, i.e. ∝ CPU used so far.
        let live: Vec<usize> = (0..s.len()).filter(|&g| s[g] < self.work_ns[g]).collect();
        let sum: u64 = live.iter().map(|&g| s[g]).sum();
        live.iter()
            .map(|&g| Action::Tickets {
                client: g,
                // Slices in 10 ms quanta: 10 − race_prob.
                tickets: ras::next_slice_ns(s[g], sum, live.len() as u64) / ras::MIN_SLICE_NS,
            })
            .collect()
    }
}

fn scenario(algo: &str, quantum_ms: u64, works: &[u64]) -> String {
    let total: u64 = works.iter().sum();
    let mut s = format!(
        "# RAS report Ch. 3: {} tasks with 16..8192 traced writes ({WRITE_US} µs of CPU each), all forked at 0;\n\
# {algo} with {quantum_ms} ms quanta.\n[sim]\nalgo = \"{algo}\"\nquantum_ms = {quantum_ms}\nduration_ns = {}\nsample_ms = 100\n\n",
        works.len(),
        total + 1_000_000_000
    );
    for (i, w) in works.iter().enumerate() {
        s += &format!("[[client]]\nname = \"t{i}\"\ntickets = 10\nwork_ns = {w}\n\n");
    }
    s
}

struct Stats {
    total_s: f64,
    turn_mean: f64,
    turn_p50: f64,
    turn_p99: f64,
    lat_mean: f64,
}

fn stats(r: &SimResult) -> Stats {
    let t: Vec<f64> = r
        .clients
        .iter()
        .filter_map(|c| c.turnaround_ns)
        .map(|x| x as f64 / 1e9)
        .collect();
    let s = crate::engine::Summary::of(&t);
    let lat: Vec<f64> = r.clients.iter().map(|c| c.response.mean / 1e9).collect();
    Stats {
        total_s: s.max,
        turn_mean: s.mean,
        turn_p50: s.p50,
        turn_p99: s.p99,
        lat_mean: lat.iter().sum::<f64>() / lat.len() as f64,
    }
}

pub fn run(cx: &Ctx) -> Result<Vec<Experiment>> {
    let paper_total = [
        (20, 7.166, 6.140),
        (40, 15.089, 11.952),
        (60, 21.776, 17.358),
        (80, 28.040, 22.330),
        (100, 37.493, 29.473),
    ];
    let mut rows = Vec::new();
    let mut cmds = Vec::new();
    let mut mean_rr = Vec::new();
    let mut mean_ras = Vec::new();
    let mut better = true;
    for (n, p_rr, p_ras) in paper_total {
        let mut rng = WorkRng::new(2000 + n);
        let works: Vec<u64> = (0..n)
            .map(|_| rng.range(16, 8192) * WRITE_US * 1000)
            .collect();
        let (rel_rr, rr) = run_text_with(
            cx,
            &format!("ras-n{n}-rr"),
            &scenario("rr", 100, &works),
            Box::new(NoCtl),
        )?;
        let ctl = RaceAverse {
            work_ns: works.clone(),
        };
        let (rel_ras, ras) = run_text_with(
            cx,
            &format!("ras-n{n}-ras"),
            &scenario("wrr", 10, &works),
            Box::new(ctl),
        )?;
        if n == 20 {
            cmds.push(format!("tix sim run DIR/{rel_rr}"));
            cmds.push(format!("tix sim report{} --out DIR --only ras   # RAS needs its controller; DIR/{rel_ras} alone runs plain WRR", if cx.quick { " --quick" } else { "" }));
        }
        let (a, b) = (stats(&rr), stats(&ras));
        better &= b.turn_mean <= a.turn_mean;
        mean_rr.push((n as f64, a.turn_mean));
        mean_ras.push((n as f64, b.turn_mean));
        rows.push(vec![
            n.to_string(),
            format!(
                "{p_rr:.2} / {p_ras:.2} ({:.0}%)",
                (1.0 - p_ras / p_rr) * 100.0
            ),
            format!("{:.2} / {:.2}", a.total_s, b.total_s),
            format!("{:.2} / {:.2}", a.turn_mean, b.turn_mean),
            format!("{:.2} / {:.2}", a.turn_p50, b.turn_p50),
            format!("{:.2} / {:.2}", a.turn_p99, b.turn_p99),
            format!("{:.2} / {:.2}", a.lat_mean, b.lat_mean),
        ]);
    }
    let stem = "plots/ras-turnaround";
    line_chart(
        &cx.path(stem),
        "RAS vs RR: mean turnaround",
        "tasks",
        "mean turnaround (s)",
        &[
            Line {
                name: "RR (100 ms)".into(),
                points: mean_rr,
            },
            Line {
                name: "RAS".into(),
                points: mean_ras,
            },
        ],
    )?;
    Ok(vec![Experiment {
        id: "ras".into(),
        title: "RAS: race-averse slices against RR".into(),
        source: "Linux Race-Averse Scheduler report (002), Ch. 2 eqs. 2-1, 2-2; Ch. 3, Table 3-1, Figs. 3-2, 3-3".into(),
        paper: "<p>N = 20..100 tasks writing a traced region 16..8192 times each. Total time RR vs RAS (Table 3-1): \
RAS about <b>20% faster</b>; RAS has the lowest turnaround and latency \"slightly lower\" than RR (figures only).</p>"
            .into(),
        ours: html_table(
            &["N", "paper total s, RR / RAS", "tix total s", "tix mean turnaround", "p50", "p99", "mean latency (s)"],
            &rows,
        ),
        plots: vec![format!("{stem}.svg")],
        commands: cmds,
        notes: format!(
            "Model: a write costs {WRITE_US} µs of CPU (so the report's mean task of ~4100 writes × 20 tasks takes its \
~7 s under RR); nothing else costs time. RAS is tix-core's WRR in 10 ms quanta with weights 10 − race_prob recomputed \
every 100 ms from each task's writes so far (a controller; the report recomputes at every slice expiry). Two findings: \
(1) in a work-conserving model both policies finish all work at the same time, so the report's 20% total-time gain \
is <b>not</b> reproduced: it needs a cost of races (extra faults when racing writers interleave) that the report does not \
quantify; (2) with N ≥ 20 a task's race_prob = ⌊10·w/Σw⌋ stays 0 until it has done 10% of all writes, so nearly every \
slice is the 100 ms maximum and RAS schedules like RR — the report's own explanation of RAS ≈ RR at small N. \
On the real kernel (scx_tix --policy ras over write counts taken by tix trace, <code>vm/tests/78-trace-ras.sh</code>, \
7.2.13 guest, 2 vCPUs under TCG; N = 10, each write followed by 100 µs of CPU) the same benchmark finished in \
2.13–2.23 s under RAS against 2.83–3.07 s under lottery with 3.5 ms slices (21–31% sooner, the report's ~20%), mean \
turnaround 1.27–1.57 s against 1.76–1.88 s, three runs. The gain is the machine's, which the model does not charge: \
RAS's slices are up to 30 times longer, so it switches less; which cost it saves was not measured."
        ),
        agrees: Some((false, format!("total time equal by construction (no race cost in the model); RAS mean turnaround ≤ RR's at every N: {better}"))),
        // Not yet meant to agree: the model has no race cost (see notes).
        known_difference: true,
    }])
}

struct NoCtl;

impl Controller for NoCtl {
    fn at_sample(&mut self, _now: u64, _s: &[u64]) -> Vec<Action> {
        Vec::new()
    }
}
