//! `tix top`: per task, what it holds (tickets, base, value), the share it
//! should get (the water-filled ideal of its value) against the share it got,
//! its lottery wins and its quantum-use profile (Zepp 000 §5: the fraction of
//! each slice used). Live in a terminal (ratatui), or one sample as text or
//! JSON for scripts.

use crate::ctl::{ask, socket_path};
use anyhow::{bail, Result};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, Paragraph, Row as TRow, Table, TableState};
use serde::Serialize;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tix_core::waterfill::{ideal_cpus_affine, Demand};
use tix_ctl::{Request, Response, Status, Top};

#[derive(clap::Args, Debug)]
pub struct TopArgs {
    #[arg(long)]
    pub socket: Option<PathBuf>,
    /// Print one sample and exit (for scripts).
    #[arg(long)]
    pub once: bool,
    /// With --once: the sample as JSON (one object, a row per task).
    #[arg(long, requires = "once")]
    pub json: bool,
    /// Seconds between the two samples that give measured shares.
    #[arg(long, default_value_t = 1.0)]
    pub interval: f64,
    /// Only tasks that ran in the interval or are runnable.
    #[arg(long)]
    pub active: bool,
    /// Row order: error (|measured - expected|, largest first), measured,
    /// tickets or pid. Live, `s` cycles through them.
    #[arg(long, value_enum, default_value_t = SortKey::Pid)]
    pub sort: SortKey,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    Error,
    Measured,
    Tickets,
    Pid,
}

impl SortKey {
    fn next(self) -> SortKey {
        match self {
            SortKey::Error => SortKey::Measured,
            SortKey::Measured => SortKey::Tickets,
            SortKey::Tickets => SortKey::Pid,
            SortKey::Pid => SortKey::Error,
        }
    }

    fn name(self) -> &'static str {
        match self {
            SortKey::Error => "share error",
            SortKey::Measured => "measured",
            SortKey::Tickets => "tickets",
            SortKey::Pid => "pid",
        }
    }
}

/// One task between two samples. Shares are of the whole machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub pid: u32,
    pub tgid: u32,
    pub uid: u32,
    pub comm: String,
    pub runnable: bool,
    pub tickets: u64,
    pub base: u64,
    pub value: u64,
    /// The runnable tasks' water-filled ideal; None when not runnable.
    pub expected: Option<f64>,
    /// CPU time in the interval / (interval × CPUs).
    pub measured: Option<f64>,
    pub wins: u64,
    /// Slices by tenth of the slice used, since the task started.
    pub hist: Vec<u64>,
    /// CPU time in the interval, ns.
    pub ran_ns: u64,
}

impl Row {
    fn error(&self) -> Option<f64> {
        Some((self.measured? - self.expected?).abs())
    }
}

/// Rows of `tix top`, as shares of the machine: expected = the runnable
/// tasks' water-filled ideal (tix_core::waterfill: value-proportional, each
/// task capped at one CPU and confined to its affinity); measured = CPU time
/// in the interval / (interval × CPUs). A daemon that does not report its
/// CPUs is read as one CPU with measured = share of the listed tasks' time.
/// WINS counts lottery wins (runs on an idle CPU found at wake-up are not
/// decisions and are not counted).
pub fn rows(before: &Top, after: &Top) -> Vec<Row> {
    let prev: HashMap<u32, u64> = before.tasks.iter().map(|t| (t.pid, t.runtime_ns)).collect();
    // A task absent from the first sample began within the interval: all
    // of its time is the interval's (it showed 0% before, however busy).
    let deltas: Vec<u64> = after
        .tasks
        .iter()
        .map(|t| t.runtime_ns.saturating_sub(*prev.get(&t.pid).unwrap_or(&0)))
        .collect();
    let cpus = after.nr_cpus.max(1) as usize;
    let interval = after.now_ns.saturating_sub(before.now_ns);
    let capacity = if after.nr_cpus > 0 && interval > 0 {
        interval as f64 * cpus as f64
    } else {
        deltas.iter().sum::<u64>() as f64
    };
    let runnable: Vec<usize> = (0..after.tasks.len())
        .filter(|&i| after.tasks[i].runnable)
        .collect();
    let demands: Vec<Demand> = runnable
        .iter()
        .map(|&i| Demand {
            weight: after.tasks[i].value.max(1),
            cpus: after.tasks[i].cpus_allowed,
        })
        .collect();
    let ideal = ideal_cpus_affine(&demands, cpus);
    let expected: HashMap<usize, f64> = runnable
        .iter()
        .zip(&ideal)
        .map(|(&i, &c)| (i, c / cpus as f64))
        .collect();
    after
        .tasks
        .iter()
        .zip(&deltas)
        .enumerate()
        .map(|(i, (t, &d))| Row {
            pid: t.pid,
            tgid: t.tgid,
            uid: t.uid,
            comm: t.comm.clone(),
            runnable: t.runnable,
            tickets: t.tickets,
            base: t.base,
            value: t.value,
            expected: expected.get(&i).copied(),
            measured: (capacity > 0.0).then(|| d as f64 / capacity),
            wins: t.wins,
            hist: t.hist.clone(),
            ran_ns: d,
        })
        .collect()
}

/// Drop idle tasks (with `active_only`) and order the rest by `key`.
pub fn select(mut rows: Vec<Row>, active_only: bool, key: SortKey) -> Vec<Row> {
    if active_only {
        rows.retain(|r| r.ran_ns > 0 || r.runnable);
    }
    let desc = |a: Option<f64>, b: Option<f64>| {
        // Known values first, largest first; unknown ones last.
        b.unwrap_or(-1.0).total_cmp(&a.unwrap_or(-1.0))
    };
    match key {
        SortKey::Error => rows.sort_by(|a, b| desc(a.error(), b.error()).then(a.pid.cmp(&b.pid))),
        SortKey::Measured => {
            rows.sort_by(|a, b| desc(a.measured, b.measured).then(a.pid.cmp(&b.pid)))
        }
        SortKey::Tickets => rows.sort_by(|a, b| b.tickets.cmp(&a.tickets).then(a.pid.cmp(&b.pid))),
        SortKey::Pid => rows.sort_by_key(|r| r.pid),
    }
    rows
}

fn pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{:.1}%", 100.0 * v))
}

const HEADER: [&str; 10] = [
    "PID", "TGID", "UID", "COMM", "TICKETS", "BASE", "VALUE", "EXPECTED", "MEASURED", "WINS",
];

fn cells(r: &Row) -> [String; 10] {
    [
        r.pid.to_string(),
        r.tgid.to_string(),
        if r.uid == tix_core::cgroup::KERNEL_UID {
            crate::ctl::KERNEL_USER.into()
        } else {
            r.uid.to_string()
        },
        r.comm.clone(),
        r.tickets.to_string(),
        r.base.to_string(),
        r.value.to_string(),
        pct(r.expected),
        pct(r.measured),
        r.wins.to_string(),
    ]
}

/// The text table of `tix top --once`.
pub fn render(rows: &[Row]) -> String {
    let line = |c: &[String; 10]| {
        format!(
            "{:>7} {:>7} {:>6} {:<15} {:>7} {:>6} {:>8} {:>9} {:>9} {:>8}\n",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9]
        )
    };
    let mut out = line(&HEADER.map(String::from));
    for r in rows {
        out += &line(&cells(r));
    }
    out
}

fn sample(sock: &Path) -> Result<Top> {
    match ask(sock, Request::Top)? {
        Response::Top(t) => Ok(t),
        other => bail!("unexpected answer {other:?}"),
    }
}

fn status(sock: &Path) -> Option<Status> {
    match ask(sock, Request::Status) {
        Ok(Response::Status(s)) => Some(*s),
        _ => None,
    }
}

pub fn top(a: TopArgs) -> Result<u8> {
    let sock = a.socket.clone().unwrap_or_else(socket_path);
    if !(a.interval > 0.0 && a.interval <= 3600.0) {
        bail!("--interval must be in (0, 3600] seconds");
    }
    let mut before = sample(&sock)?;
    if !a.once && std::io::stdout().is_terminal() {
        return live(&sock, &a, before);
    }
    loop {
        std::thread::sleep(Duration::from_secs_f64(a.interval));
        let after = sample(&sock)?;
        let rows = select(rows(&before, &after), a.active, a.sort);
        if a.json {
            println!(
                "{}",
                serde_json::json!({ "nr_cpus": after.nr_cpus, "tasks": rows })
            );
        } else {
            print!("{}", render(&rows));
        }
        if a.once {
            return Ok(0);
        }
        before = after;
    }
}

/// The live view: a header with the scheduler's status, the table (↑/↓
/// selects), and the selected task's quantum-use histogram.
struct View {
    rows: Vec<Row>,
    table: TableState,
    sort: SortKey,
    active: bool,
    status: Option<Status>,
    interval: f64,
}

fn live(sock: &Path, a: &TopArgs, mut before: Top) -> Result<u8> {
    let mut view = View {
        rows: Vec::new(),
        table: TableState::default().with_selected(Some(0)),
        sort: a.sort,
        active: a.active,
        status: status(sock),
        interval: a.interval,
    };
    let mut terminal = ratatui::init();
    let tick = Duration::from_secs_f64(a.interval);
    let mut next = Instant::now() + tick;
    let mut last: Option<Vec<Row>> = None;
    let result = (|| -> Result<u8> {
        loop {
            if let Some(all) = &last {
                view.rows = select(all.clone(), view.active, view.sort);
            }
            terminal.draw(|f| draw(f, &mut view))?;
            let wait = next.saturating_duration_since(Instant::now());
            if event::poll(wait)? {
                if let Event::Key(k) = event::read()? {
                    if k.kind != KeyEventKind::Press {
                        continue;
                    }
                    match k.code {
                        KeyCode::Char('q') | KeyCode::Esc => return Ok(0),
                        KeyCode::Char('s') => view.sort = view.sort.next(),
                        KeyCode::Char('a') => view.active = !view.active,
                        KeyCode::Down | KeyCode::Char('j') => view.table.select_next(),
                        KeyCode::Up | KeyCode::Char('k') => view.table.select_previous(),
                        _ => {}
                    }
                }
                continue;
            }
            let after = sample(sock)?;
            last = Some(rows(&before, &after));
            view.status = status(sock);
            before = after;
            next = Instant::now() + tick;
        }
    })();
    ratatui::restore();
    result
}

fn draw(f: &mut ratatui::Frame, v: &mut View) {
    let [head, body, foot] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(4),
        Constraint::Length(9),
    ])
    .areas(f.area());
    let st = v.status.as_ref().map_or_else(
        || "scheduler: no status".to_string(),
        |s| {
            format!(
                "scx_tix {} · policy {} · compensation {} · {:.0} decisions/s",
                if s.attached { "attached" } else { "detached" },
                s.policy.name(),
                s.compensation_name(),
                s.decisions_per_sec
            )
        },
    );
    let keys = format!(
        "every {:.1} s · sort: {} (s) · {} (a) · ↑↓ select · q quit",
        v.interval,
        v.sort.name(),
        if v.active {
            "active tasks"
        } else {
            "all tasks"
        }
    );
    f.render_widget(Paragraph::new(vec![Line::from(st), Line::from(keys)]), head);

    let widths = [7, 7, 6, 15, 7, 6, 8, 9, 9, 8].map(Constraint::Length);
    let header = TRow::new(HEADER).style(Style::new().add_modifier(Modifier::BOLD));
    let rows = v.rows.iter().map(|r| TRow::new(cells(r)));
    let table = Table::new(rows, widths)
        .header(header)
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .block(Block::bordered().title(" tix top: expected vs measured share of the machine "));
    // Keep a row selected while there are rows (the first sample arrives
    // after the first frame).
    match v.table.selected() {
        _ if v.rows.is_empty() => {}
        None => v.table.select(Some(0)),
        Some(i) if i >= v.rows.len() => v.table.select(Some(v.rows.len() - 1)),
        Some(_) => {}
    }
    f.render_stateful_widget(table, body, &mut v.table);

    let sel = v.table.selected().and_then(|i| v.rows.get(i));
    let title = sel.map_or_else(
        || " quantum use: no task selected ".to_string(),
        |r| {
            format!(
                " quantum use of {} ({}): slices by fraction of the slice used ",
                r.pid, r.comm
            )
        },
    );
    let bars: Vec<Bar> = (0..10)
        .map(|b| {
            let n = sel.and_then(|r| r.hist.get(b)).copied().unwrap_or(0);
            Bar::default()
                .value(n)
                .label(Line::from(format!("{}%", 10 * (b + 1))))
        })
        .collect();
    let chart = BarChart::default()
        .block(Block::bordered().title(title))
        .data(BarGroup::default().bars(&bars))
        .bar_width(5)
        .bar_gap(1);
    f.render_widget(chart, foot);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tix_ctl::TaskRow;

    fn text(a: &Top, b: &Top, active: bool) -> String {
        render(&select(rows(a, b), active, SortKey::Pid))
    }

    #[test]
    fn sorted_by_share_error_largest_first() {
        let a = Top {
            now_ns: 0,
            nr_cpus: 1,
            tasks: vec![
                row(1, 500, 0, true),
                row(2, 300, 0, true),
                row(3, 200, 0, true),
                row(4, 9, 0, false),
            ],
            users: vec![],
        };
        let mut b = a.clone();
        b.now_ns = 1_000_000_000;
        // expected .5 .3 .2; measured .45 .28 .27: errors .05 .02 .07
        b.tasks[0].runtime_ns = 450_000_000;
        b.tasks[1].runtime_ns = 280_000_000;
        b.tasks[2].runtime_ns = 270_000_000;
        let order: Vec<u32> = select(rows(&a, &b), false, SortKey::Error)
            .iter()
            .map(|r| r.pid)
            .collect();
        assert_eq!(order, [3, 1, 2, 4]);
        let order: Vec<u32> = select(rows(&a, &b), true, SortKey::Measured)
            .iter()
            .map(|r| r.pid)
            .collect();
        assert_eq!(order, [1, 2, 3]);
    }

    fn row(pid: u32, value: u64, runtime_ns: u64, runnable: bool) -> TaskRow {
        TaskRow {
            pid,
            tgid: pid,
            uid: 0,
            comm: format!("t{pid}"),
            runnable,
            tickets: 100,
            base: 1000,
            value,
            wins: 0,
            runtime_ns,
            hist: vec![0; 10],
            cpus_allowed: u64::MAX,
        }
    }

    #[test]
    fn shares_from_two_samples() {
        let a = Top {
            now_ns: 0,
            nr_cpus: 0,
            tasks: vec![
                row(1, 800, 0, true),
                row(2, 200, 0, true),
                row(3, 5, 7, false),
            ],
            users: vec![],
        };
        let b = Top {
            now_ns: 1,
            nr_cpus: 0,
            tasks: vec![
                row(1, 800, 600, true),
                row(2, 200, 400, true),
                row(3, 5, 7, false),
            ],
            users: vec![],
        };
        let out = text(&a, &b, true);
        // 800/(800+200) expected, 600/(600+400) measured; task 3 idle: hidden.
        assert!(out.contains("80.0%") && out.contains("60.0%"), "{out}");
        assert!(out.contains("20.0%") && out.contains("40.0%"), "{out}");
        assert!(!out.contains(" t3 "), "{out}");
        assert!(text(&a, &b, false).contains("t3"));
    }

    #[test]
    fn shares_on_two_cpus_are_water_filled() {
        // 2 CPUs, values 100:100:800 over 1 s: the 800 is capped at one CPU
        // (50% of the machine), the 100s share the other (25% each); the
        // fourth task may run on CPU 1 only and is not runnable.
        let mut pinned = row(4, 100, 0, false);
        pinned.cpus_allowed = 0b10;
        let a = Top {
            now_ns: 0,
            nr_cpus: 2,
            tasks: vec![
                row(1, 100, 0, true),
                row(2, 100, 0, true),
                row(3, 800, 0, true),
                pinned.clone(),
            ],
            users: vec![],
        };
        let mut b = a.clone();
        b.now_ns = 1_000_000_000;
        b.tasks[0].runtime_ns = 500_000_000;
        b.tasks[1].runtime_ns = 500_000_000;
        b.tasks[2].runtime_ns = 1_000_000_000;
        let out = text(&a, &b, false);
        let line = |pid: &str| {
            out.lines()
                .find(|l| l.split_whitespace().next() == Some(pid))
                .unwrap()
                .to_string()
        };
        assert!(
            line("1").contains("25.0%") && line("2").contains("25.0%"),
            "{out}"
        );
        assert_eq!(line("3").matches("50.0%").count(), 2, "{out}");
        assert!(line("4").contains(" - "), "{out}");
        // A pinned runnable task beside a free one on 2 CPUs, values 1:9:
        // each is capped at one CPU, so 50% each, not 10%/90%.
        let mut p = row(5, 100, 0, true);
        p.cpus_allowed = 1;
        let a = Top {
            now_ns: 0,
            nr_cpus: 2,
            tasks: vec![p, row(6, 900, 0, true)],
            users: vec![],
        };
        let out = text(&a, &a.clone(), false);
        assert_eq!(out.matches("50.0%").count(), 2, "{out}");
    }

    #[test]
    fn a_task_started_between_samples_shows_its_time() {
        let a = Top {
            now_ns: 0,
            nr_cpus: 1,
            tasks: vec![row(1, 100, 0, true)],
            users: vec![],
        };
        let mut b = a.clone();
        b.now_ns = 1_000_000_000;
        b.tasks[0].runtime_ns = 700_000_000;
        b.tasks.push(row(2, 100, 300_000_000, true));
        let out = text(&a, &b, false);
        let line = out.lines().find(|l| l.contains(" t2 ")).unwrap();
        assert!(line.contains("30.0%"), "{out}");
    }
}
