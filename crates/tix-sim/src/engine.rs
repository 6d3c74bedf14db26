//! The discrete-event engine: CPUs dispatch clients picked by tix-core
//! policies, quantum by quantum, while clients block, wake, arrive, exit and
//! change tickets; service, GPS lag (GR3 §2 eq. 1–2), waits and responses
//! are recorded per client over time.
//!
//! Timing model (named approximations):
//! - A slice is charged to the policy when it is dispatched (its length is
//!   known: the behaviour says how much CPU the client will use), so a
//!   policy never has two clients in service at once.
//! - Events (wakes, ticket changes, arrivals) take effect at the next
//!   dispatch on any CPU, i.e. at quantum boundaries, after the running
//!   slice was charged (the `Scheduler` protocol's order); there is no
//!   preemption on wake. So a client woken mid-slice is queued after the
//!   running client's requeue (rr may run the hog twice before it).
//! - With one shared queue and several CPUs, the policy's picks are turns
//!   and a client stays queued while it runs, as the kernel backend
//!   (scx_tix_user) has it: a turn dealt to a client running on another CPU
//!   is owed to it and run on that CPU right after its slice, back to back
//!   (so a heavy client's consecutive turns on N CPUs become one run rather
//!   than being lost); owed turns beyond OWED_MAX are dropped, which caps
//!   a client at one CPU (water-filling). A continued turn was charged
//!   a whole quantum when dealt. (Blocking a running client instead, the
//!   earlier model, made every slice a sleep and a wake: GR3 re-prorated a
//!   group's counter at each and starved a lone heavy client.)
//! - The GPS ideal is re-accrued at every change of the runnable set or of
//!   a weight, water-filled over the CPUs (nobody gets more than one CPU).

use crate::error::{Result, SimError};
use crate::model::*;
use crate::policy;
use crate::rng::WorkRng;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use tix_core::currency::{Ledger, TicketId, BASE};
use tix_core::shuttle::{Balancer, Queue, Rule};
use tix_core::{ClientId, PolicyOptions, Scheduler};

/// Most turns a client running on a shared queue is owed (the rest are
/// dropped): scx_tix_user's longest run (MAX_RUN quanta). A feasible share
/// stays below it; an infeasible one saturates it and is capped at a CPU.
const OWED_MAX: u64 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Sample,
    Balance,
    Script(usize),
    Arrive(usize),
    Release(usize),
    Wake(usize),
    SliceEnd(usize),
    Exit(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    NotArrived,
    Ready,
    Blocked,
    Exited,
}

#[derive(Debug, Clone)]
struct Cl {
    st: St,
    cpu: usize,
    local: ClientId,
    /// Currently joined and runnable in its policy instance.
    queued: bool,
    /// Dispatched and its slice has not ended (shared queue, several CPUs).
    running: bool,
    /// Turns dealt while it ran on another CPU (shared queue), to be run
    /// back to back on its own.
    owed: u64,
    exit_pending: bool,
    weight: u64,
    burst_left: u64,
    work_left: u64,
    service: u64,
    ideal: f64,
    ready_since: u64,
    wait: u64,
    dispatches: u64,
    awaiting_since: Option<u64>,
    responses: Vec<u64>,
    turnaround: Option<u64>,
    rng: WorkRng,
    min_lag: f64,
    max_lag: f64,
    /// A caller's tickets lent to its server while a query is out.
    lent: u64,
    /// Replies a caller has had.
    replies: u64,
}

/// Min, max, mean and percentiles of a sample (ns).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    pub count: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
}

impl Summary {
    pub fn of(values: &[f64]) -> Summary {
        if values.is_empty() {
            return Summary::default();
        }
        let mut v = values.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        // Nearest-rank percentiles.
        let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
        Summary {
            count: v.len(),
            min: v[0],
            max: v[v.len() - 1],
            mean: v.iter().sum::<f64>() / v.len() as f64,
            p50: rank(0.50),
            p99: rank(0.99),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ClientReport {
    pub name: String,
    pub process: String,
    pub user: Option<String>,
    pub cpu: usize,
    /// CPU time received (ns).
    pub service_ns: u64,
    /// What GPS would have given it over the same runnable periods (ns).
    pub ideal_ns: f64,
    /// service − ideal at the end (ns).
    pub lag_ns: f64,
    pub min_lag_ns: f64,
    pub max_lag_ns: f64,
    /// Fraction of all CPU time in the run.
    pub share: f64,
    /// Time runnable but not running (ns).
    pub wait_ns: u64,
    pub dispatches: u64,
    /// Wake (or release) to first dispatch (ns).
    pub response: Summary,
    /// Arrival to completion of its work (ns), for clients that finished.
    pub turnaround_ns: Option<u64>,
}

/// Per-client time series, sampled every `sample_ns`.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub t_ns: Vec<u64>,
    /// `service_ns[client][sample]`, cumulative.
    pub service_ns: Vec<Vec<u64>>,
    /// `lag_ns[client][sample]` = service − GPS ideal.
    pub lag_ns: Vec<Vec<f64>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SimResult {
    pub algo: String,
    pub cpus: usize,
    pub duration_ns: u64,
    pub quanta: u64,
    pub idle_ns: u64,
    pub migrations: u64,
    /// Jain's index over service / GPS ideal of the clients that had any ideal.
    pub jain: f64,
    pub lag: Summary,
    pub clients: Vec<ClientReport>,
    pub series: Series,
}

/// A user-level manager (Waldspurger §6.3) that watches progress and
/// changes tickets: called at every sample with each client's service (ns).
pub trait Controller {
    fn at_sample(&mut self, now: u64, service_ns: &[u64]) -> Vec<Action>;
}

pub struct Engine {
    sys: System,
    scheds: Vec<Box<dyn Scheduler>>,
    /// Whether each instance wants burst lengths (asked once: a virtual
    /// call per dispatch is measurable at 20 M quanta/s).
    burst_aware: Vec<bool>,
    /// local id → client, per CPU instance.
    owners: Vec<Vec<usize>>,
    cl: Vec<Cl>,
    /// Process tickets and runnable-thread counts, by process index.
    proc_of: Vec<usize>,
    proc_tickets: Vec<u64>,
    proc_ready: Vec<u64>,
    user_base: Vec<u64>,
    /// Σ tickets of the user's processes that have a runnable thread.
    user_ready_tickets: Vec<u64>,
    user_members: Vec<Vec<usize>>,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    free_at: Vec<u64>,
    /// Per CPU: the client whose slice ended there last (shared queue: it
    /// runs on if owed turns).
    last_on: Vec<Option<usize>>,
    last_accrue: u64,
    quanta: u64,
    idle: u64,
    migrations: u64,
    series: Series,
    balancer: Balancer<usize>,
    controller: Option<Box<dyn Controller>>,
    /// Waldspurger's currencies (tix-core's ledger) when the system has any.
    ledger: Option<Ledger>,
    /// Per client: its ticket in the ledger (None: holds none).
    ticket: Vec<Option<TicketId>>,
    /// Per currency spec: its ledger id and backing ticket.
    backing: Vec<(usize, TicketId)>,
    /// Per client: the caller whose queries it serves (servers only).
    caller_of: Vec<Option<usize>>,
}

impl Engine {
    pub fn new(sys: System) -> Result<Engine> {
        let c = &sys.config;
        if c.cpus == 0 {
            return Err(SimError::Invalid("cpus: expected at least 1".into()));
        }
        if c.quantum_ns == 0 || c.sample_ns == 0 || c.balance_ns == 0 {
            return Err(SimError::Invalid(
                "quantum, sample and balance intervals: expected at least 1 ns".into(),
            ));
        }
        let instances = match c.queue {
            QueueMode::Shared => 1,
            QueueMode::PerCpu => c.cpus,
        };
        let mut scheds = Vec::new();
        for i in 0..instances {
            let opts = PolicyOptions {
                quantum_ns: c.quantum_ns,
                seed: c.seed.wrapping_add(i as u64),
            };
            scheds.push(policy::build(&c.algo, &opts)?);
        }
        let mut procs: Vec<String> = Vec::new();
        let mut proc_index: std::collections::HashMap<&str, usize> =
            std::collections::HashMap::new();
        let mut proc_of = Vec::new();
        let mut proc_tickets = Vec::new();
        let mut user_members = vec![Vec::new(); sys.users.len()];
        let n = sys.clients.len();
        let mut cl = Vec::with_capacity(n);
        for (g, s) in sys.clients.iter().enumerate() {
            if let Some(u) = s.user {
                if u >= sys.users.len() {
                    return Err(SimError::Invalid(format!(
                        "client {}: unknown user",
                        s.name
                    )));
                }
                user_members[u].push(g);
            }
            if let Some(cpu) = s.cpu {
                if cpu >= c.cpus {
                    return Err(SimError::Invalid(format!(
                        "client {}: cpu {cpu} but only {} cpus",
                        s.name, c.cpus
                    )));
                }
            }
            // A map, not a scan: 10^5 clients must build in O(n log n).
            let p = *proc_index.entry(s.process.as_str()).or_insert_with(|| {
                procs.push(s.process.clone());
                proc_tickets.push(s.tickets);
                procs.len() - 1
            });
            proc_of.push(p);
            cl.push(Cl {
                st: St::NotArrived,
                cpu: 0,
                local: usize::MAX,
                queued: false,
                running: false,
                owed: 0,
                exit_pending: false,
                weight: 0,
                burst_left: 0,
                work_left: s.work_ns.unwrap_or(u64::MAX),
                service: 0,
                ideal: 0.0,
                ready_since: 0,
                wait: 0,
                dispatches: 0,
                awaiting_since: None,
                responses: Vec::new(),
                turnaround: None,
                rng: WorkRng::derive(c.seed, g as u64 + 1),
                min_lag: 0.0,
                max_lag: 0.0,
                lent: 0,
                replies: 0,
            });
        }
        let mut caller_of = vec![None; n];
        for (g, s) in sys.clients.iter().enumerate() {
            if let Behaviour::Calls { server, .. } = s.behaviour {
                if sys.clients.get(server).map(|x| &x.behaviour) != Some(&Behaviour::Server) {
                    return Err(SimError::Invalid(format!(
                        "client {}: its server is not a behaviour = \"server\" client",
                        s.name
                    )));
                }
                if caller_of[server].replace(g).is_some() {
                    return Err(SimError::Invalid(format!(
                        "client {}: server {} already has a caller",
                        s.name, sys.clients[server].name
                    )));
                }
                if !sys.users.is_empty() || !sys.currencies.is_empty() {
                    return Err(SimError::Invalid(format!(
                        "client {}: calls only in a system without users or currencies",
                        s.name
                    )));
                }
            }
        }
        let nproc = procs.len();
        let burst_aware = scheds
            .iter_mut()
            .map(|s| s.as_burst_aware().is_some())
            .collect();
        let mut e = Engine {
            burst_aware,
            scheds,
            owners: vec![Vec::new(); instances],
            cl,
            proc_of,
            proc_tickets,
            proc_ready: vec![0; nproc],
            user_base: sys.users.iter().map(|u| u.base).collect(),
            user_ready_tickets: vec![0; sys.users.len()],
            user_members,
            heap: BinaryHeap::new(),
            seq: 0,
            free_at: vec![0; c.cpus],
            last_on: vec![None; c.cpus],
            last_accrue: 0,
            quanta: 0,
            idle: 0,
            migrations: 0,
            series: Series {
                t_ns: Vec::new(),
                service_ns: vec![Vec::new(); n],
                lag_ns: vec![Vec::new(); n],
            },
            balancer: Balancer::new(if sys.config.balance == Balance::Shuttle {
                Rule::Shuttle
            } else {
                Rule::Cfs
            }),
            controller: None,
            ledger: None,
            ticket: vec![None; n],
            backing: Vec::new(),
            caller_of,
            sys,
        };
        e.build_ledger()?;
        for g in 0..n {
            let at = e.sys.clients[g].arrive_ns;
            e.push(at, Ev::Arrive(g));
            if let Some(x) = e.sys.clients[g].exit_ns {
                e.push(x, Ev::Exit(g));
            }
        }
        for i in 0..e.sys.events.len() {
            let at = e.sys.events[i].at_ns;
            e.push(at, Ev::Script(i));
        }
        e.push(0, Ev::Sample);
        if e.sys.config.queue == QueueMode::PerCpu && e.sys.config.balance != Balance::None {
            let b = e.sys.config.balance_ns;
            e.push(b, Ev::Balance);
        }
        Ok(e)
    }

    /// Currencies: each backed by one ticket of its parent; each client a
    /// ledger holder (blocked until it arrives) with one ticket, ledger
    /// holder id = client index.
    fn build_ledger(&mut self) -> Result<()> {
        if self.sys.currencies.is_empty() {
            return Ok(());
        }
        let mut l = Ledger::new();
        for (i, c) in self.sys.currencies.iter().enumerate() {
            let id = l.create_currency(&c.name)?;
            let parent = match c.from {
                None => BASE,
                Some(p) if p < i => self.backing[p].0,
                Some(_) => {
                    return Err(SimError::Invalid(format!(
                        "currency {}: backed by a later currency",
                        c.name
                    )))
                }
            };
            let t = l.issue(parent, c.amount)?;
            l.fund(id, t)?;
            self.backing.push((id, t));
        }
        for g in 0..self.cl.len() {
            let h = l.new_client();
            l.block(h)?;
            let s = &self.sys.clients[g];
            if s.tickets > 0 {
                let cur = s.currency.map(|c| self.backing[c].0).unwrap_or(BASE);
                let t = l.issue(cur, s.tickets)?;
                l.give(h, t)?;
                self.ticket[g] = Some(t);
            }
        }
        self.ledger = Some(l);
        Ok(())
    }

    /// Attach a controller (called at every sample).
    pub fn with_controller(mut self, c: Box<dyn Controller>) -> Engine {
        self.controller = Some(c);
        self
    }

    fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, ev)));
    }

    fn inst(&self, cpu: usize) -> usize {
        match self.sys.config.queue {
            QueueMode::Shared => 0,
            QueueMode::PerCpu => cpu,
        }
    }

    /// The client's weight from its tickets (Zepp's v = b·p/t with users,
    /// its process tickets without); 0 = nothing to compete with.
    fn value(&self, g: usize) -> u64 {
        if let Some(l) = &self.ledger {
            // Base units scaled by 1000 so fractional values keep 3 digits.
            let v = l.client_value(g).unwrap_or(0.0);
            return ((v * 1000.0).round() as u64).min(tix_core::MAX_WEIGHT);
        }
        let p = self.proc_of[g];
        let tickets = self.proc_tickets[p];
        if tickets == 0 {
            return 0;
        }
        match self.sys.clients[g].user {
            None => tickets,
            Some(u) => tix_core::zepp::task_value(
                self.user_base[u],
                tickets,
                self.user_ready_tickets[u],
                self.proc_ready[p],
            ),
        }
        .min(tix_core::MAX_WEIGHT)
    }

    /// Bring the policy's view of client g in line with the model.
    fn sync(&mut self, g: usize) -> Result<()> {
        let w = if self.cl[g].st == St::Ready {
            self.value(g)
        } else {
            0
        };
        // A running client stays queued (shared queue: other CPUs' picks of
        // it are owed turns, see the header).
        let want = w > 0;
        let c = &mut self.cl[g];
        let i = match self.sys.config.queue {
            QueueMode::Shared => 0,
            QueueMode::PerCpu => c.cpu,
        };
        if w > 0 && w != c.weight && c.local != usize::MAX {
            self.scheds[i].set_weight(c.local, w)?;
        }
        if w > 0 {
            c.weight = w;
        }
        if want && !c.queued {
            if c.local == usize::MAX {
                c.local = self.scheds[i].join(w)?;
                let owners = &mut self.owners[i];
                if owners.len() <= c.local {
                    owners.resize(c.local + 1, usize::MAX);
                }
                owners[c.local] = g;
            } else {
                self.scheds[i].wake(c.local)?;
            }
            c.queued = true;
            let remaining = c.burst_left.min(c.work_left);
            let local = c.local;
            if self.burst_aware[i] {
                if let Some(b) = self.scheds[i].as_burst_aware() {
                    b.set_burst(local, remaining)?;
                }
            }
            return Ok(());
        } else if !want && c.queued {
            self.scheds[i].block(c.local)?;
            c.queued = false;
        }
        Ok(())
    }

    /// Re-sync every client whose value may change when g's state does.
    fn resync_around(&mut self, g: usize) -> Result<()> {
        if self.ledger.is_some() {
            // Activation can change any currency's value: resync everyone.
            for m in 0..self.cl.len() {
                if self.cl[m].st == St::Ready || m == g {
                    self.sync(m)?;
                }
            }
            return Ok(());
        }
        match self.sys.clients[g].user {
            None => self.sync(g),
            Some(u) => {
                for k in 0..self.user_members[u].len() {
                    let m = self.user_members[u][k];
                    if self.cl[m].st == St::Ready || m == g {
                        self.sync(m)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// Client g becomes ready (true) or stops being ready (false).
    fn set_ready(&mut self, g: usize, ready: bool, now: u64, next: St) -> Result<()> {
        let was = self.cl[g].st == St::Ready;
        self.accrue(now);
        self.cl[g].st = next;
        if was != ready {
            if let Some(l) = &mut self.ledger {
                if ready {
                    l.wake(g)?;
                } else {
                    l.block(g)?;
                }
            }
            let p = self.proc_of[g];
            if ready {
                self.proc_ready[p] += 1;
                self.cl[g].ready_since = now;
                self.cl[g].awaiting_since = Some(now);
            } else {
                self.proc_ready[p] -= 1;
            }
            if let Some(u) = self.sys.clients[g].user {
                let t = self.proc_tickets[p];
                if ready && self.proc_ready[p] == 1 {
                    self.user_ready_tickets[u] += t;
                } else if !ready && self.proc_ready[p] == 0 {
                    self.user_ready_tickets[u] -= t;
                }
            }
        }
        self.resync_around(g)
    }

    fn set_proc_tickets(&mut self, g: usize, tickets: u64, now: u64) -> Result<()> {
        self.accrue(now);
        if let Some(l) = &mut self.ledger {
            match (self.ticket[g], tickets) {
                (Some(t), 0) => {
                    l.destroy_ticket(t)?;
                    self.ticket[g] = None;
                }
                (Some(t), n) => l.set_amount(t, n)?,
                (None, 0) => {}
                (None, n) => {
                    let cur = self.sys.clients[g]
                        .currency
                        .map(|c| self.backing[c].0)
                        .unwrap_or(BASE);
                    let t = l.issue(cur, n)?;
                    l.give(g, t)?;
                    self.ticket[g] = Some(t);
                }
            }
            let p = self.proc_of[g];
            self.proc_tickets[p] = tickets;
            return self.resync_around(g);
        }
        let p = self.proc_of[g];
        let old = self.proc_tickets[p];
        self.proc_tickets[p] = tickets;
        if let Some(u) = self.sys.clients[g].user {
            if self.proc_ready[p] > 0 {
                self.user_ready_tickets[u] = self.user_ready_tickets[u] - old + tickets;
            }
            return self.resync_around(g);
        }
        // Threads of one process share its tickets: resync them all.
        for m in 0..self.cl.len() {
            if self.proc_of[m] == p {
                self.sync(m)?;
            }
        }
        Ok(())
    }

    /// GPS ideal service over [last, now): every ready client gets CPU in
    /// proportion to its weight, at most one CPU each (water-filling).
    fn accrue(&mut self, now: u64) {
        if now <= self.last_accrue {
            return;
        }
        let dt = (now - self.last_accrue) as f64;
        self.last_accrue = now;
        let mut set: Vec<(usize, f64)> = (0..self.cl.len())
            .filter(|&g| self.cl[g].st == St::Ready && self.cl[g].weight > 0)
            .map(|g| (g, self.cl[g].weight as f64))
            .collect();
        let mut cpus = self.sys.config.cpus as f64;
        loop {
            if set.is_empty() {
                return;
            }
            if set.len() as f64 <= cpus {
                for &(g, _) in &set {
                    self.cl[g].ideal += dt;
                }
                return;
            }
            let total: f64 = set.iter().map(|s| s.1).sum();
            let before = set.len();
            let mut rest = Vec::with_capacity(set.len());
            for &(g, w) in &set {
                if w / total * cpus > 1.0 {
                    self.cl[g].ideal += dt;
                } else {
                    rest.push((g, w));
                }
            }
            cpus -= (before - rest.len()) as f64;
            if rest.len() == before {
                for &(g, w) in &rest {
                    self.cl[g].ideal += dt * cpus * w / total;
                }
                return;
            }
            set = rest;
        }
    }

    fn sample(&mut self, now: u64) {
        self.accrue(now);
        self.series.t_ns.push(now);
        for g in 0..self.cl.len() {
            let c = &mut self.cl[g];
            let lag = c.service as f64 - c.ideal;
            c.min_lag = c.min_lag.min(lag);
            c.max_lag = c.max_lag.max(lag);
            self.series.service_ns[g].push(c.service);
            self.series.lag_ns[g].push(lag);
        }
    }

    fn start_burst(&mut self, g: usize) {
        let b = match &self.sys.clients[g].behaviour {
            Behaviour::Cpu => u64::MAX,
            Behaviour::Io { run, .. } => {
                let run = run.clone();
                run.sample(&mut self.cl[g].rng).max(1)
            }
            Behaviour::Periodic { .. } | Behaviour::Server => self.cl[g].burst_left,
            Behaviour::Calls { think, .. } => {
                let think = think.clone();
                think.map_or(0, |d| d.sample(&mut self.cl[g].rng))
            }
        };
        self.cl[g].burst_left = b;
    }

    fn least_loaded_cpu(&self) -> usize {
        let mut load = vec![0u64; self.sys.config.cpus];
        for c in &self.cl {
            if c.st == St::Ready {
                load[c.cpu] += c.weight;
            }
        }
        (0..load.len()).min_by_key(|&i| (load[i], i)).unwrap_or(0)
    }

    fn handle(&mut self, now: u64, ev: Ev) -> Result<()> {
        match ev {
            Ev::Sample => {
                self.sample(now);
                if let Some(mut c) = self.controller.take() {
                    let service: Vec<u64> = self.cl.iter().map(|c| c.service).collect();
                    let actions = c.at_sample(now, &service);
                    self.controller = Some(c);
                    for a in actions {
                        self.script(a, now)?;
                    }
                }
                let next = now + self.sys.config.sample_ns;
                if next < self.sys.config.duration_ns {
                    self.push(next, Ev::Sample);
                }
            }
            Ev::Balance => {
                self.accrue(now);
                self.balance()?;
                let next = now + self.sys.config.balance_ns;
                self.push(next, Ev::Balance);
            }
            Ev::Arrive(g) => {
                if self.cl[g].st != St::NotArrived {
                    return Ok(());
                }
                self.cl[g].cpu = match self.sys.clients[g].cpu {
                    Some(c) => c,
                    None if self.sys.config.queue == QueueMode::PerCpu => self.least_loaded_cpu(),
                    None => 0,
                };
                match self.sys.clients[g].behaviour {
                    Behaviour::Periodic { .. } => {
                        self.cl[g].st = St::Blocked;
                        self.push(now, Ev::Release(g));
                        return Ok(());
                    }
                    // Waits for its caller's first query.
                    Behaviour::Server => {
                        self.cl[g].st = St::Blocked;
                        return Ok(());
                    }
                    Behaviour::Calls { think: None, .. } => {
                        self.cl[g].st = St::Blocked;
                        return self.call(g, now);
                    }
                    _ => {}
                }
                self.start_burst(g);
                self.set_ready(g, true, now, St::Ready)?;
            }
            Ev::Release(g) => {
                if self.cl[g].st == St::Exited {
                    return Ok(());
                }
                if let Behaviour::Periodic { period_ns, work_ns } = self.sys.clients[g].behaviour {
                    self.cl[g].burst_left = self.cl[g].burst_left.saturating_add(work_ns);
                    self.push(now + period_ns.max(1), Ev::Release(g));
                    if self.cl[g].st == St::Blocked && !self.cl[g].running {
                        self.set_ready(g, true, now, St::Ready)?;
                    }
                }
            }
            Ev::Wake(g) => {
                if self.cl[g].st == St::Blocked {
                    self.start_burst(g);
                    self.set_ready(g, true, now, St::Ready)?;
                }
            }
            Ev::SliceEnd(g) => {
                self.cl[g].running = false;
                let cpu = self.cl[g].cpu;
                self.last_on[cpu] = Some(g);
                self.after_slice(g, now)?;
            }
            Ev::Exit(g) => {
                if self.cl[g].running {
                    self.cl[g].exit_pending = true;
                } else {
                    self.exit(g, now)?;
                }
            }
            Ev::Script(i) => {
                let a = self.sys.events[i].action.clone();
                self.script(a, now)?;
            }
        }
        Ok(())
    }

    /// Caller g sends its server the next query (or exits after its
    /// last): it blocks and lends the server all its tickets (001 §4.6).
    fn call(&mut self, g: usize, now: u64) -> Result<()> {
        let Behaviour::Calls {
            server,
            query_ns,
            queries,
            ..
        } = self.sys.clients[g].behaviour
        else {
            return Ok(());
        };
        if queries.is_some_and(|q| self.cl[g].replies >= q) {
            self.cl[g].turnaround = Some(now - self.sys.clients[g].arrive_ns);
            return self.exit(g, now);
        }
        self.set_ready(g, false, now, St::Blocked)?;
        if self.cl[server].st == St::Exited {
            // No one answers: the caller waits for good, keeping its tickets.
            return Ok(());
        }
        let have = self.proc_tickets[self.proc_of[g]];
        self.cl[g].lent = have;
        self.set_proc_tickets(g, 0, now)?;
        let s_have = self.proc_tickets[self.proc_of[server]];
        self.set_proc_tickets(server, s_have + have, now)?;
        self.cl[server].burst_left = query_ns;
        self.set_ready(server, true, now, St::Ready)
    }

    /// The loan of server s's caller comes back (the reply, or s exits).
    fn give_back(&mut self, s: usize, now: u64) -> Result<Option<usize>> {
        let Some(c) = self.caller_of[s] else {
            return Ok(None);
        };
        let lent = std::mem::take(&mut self.cl[c].lent);
        if lent == 0 {
            return Ok(None);
        }
        let s_have = self.proc_tickets[self.proc_of[s]];
        self.set_proc_tickets(s, s_have - lent.min(s_have), now)?;
        let c_have = self.proc_tickets[self.proc_of[c]];
        self.set_proc_tickets(c, c_have + lent, now)?;
        Ok(Some(c))
    }

    /// Server s has answered its query: it blocks, its caller gets its
    /// tickets back and thinks (or calls again at once).
    fn reply(&mut self, s: usize, now: u64) -> Result<()> {
        self.set_ready(s, false, now, St::Blocked)?;
        let Some(c) = self.give_back(s, now)? else {
            return Ok(());
        };
        if self.cl[c].st == St::Exited {
            return Ok(());
        }
        self.cl[c].replies += 1;
        self.start_burst(c);
        if self.cl[c].burst_left == 0 {
            return self.call(c, now);
        }
        self.set_ready(c, true, now, St::Ready)
    }

    fn exit(&mut self, g: usize, now: u64) -> Result<()> {
        if self.caller_of[g].is_some() && self.cl[g].st != St::Exited {
            // A server leaving ends its caller's loan (no reply comes).
            self.give_back(g, now)?;
        }
        match self.cl[g].st {
            St::Exited | St::NotArrived => {
                self.cl[g].st = St::Exited;
                return Ok(());
            }
            _ => {}
        }
        self.set_ready(g, false, now, St::Exited)?;
        if self.cl[g].local != usize::MAX {
            let i = self.inst(self.cl[g].cpu);
            self.scheds[i].leave(self.cl[g].local)?;
            self.cl[g].local = usize::MAX;
        }
        Ok(())
    }

    fn script(&mut self, a: Action, now: u64) -> Result<()> {
        match a {
            Action::Tickets { client, tickets } => self.set_proc_tickets(client, tickets, now),
            Action::Fund { user, base } => {
                self.accrue(now);
                self.user_base[user] = base;
                for k in 0..self.user_members[user].len() {
                    let m = self.user_members[user][k];
                    self.sync(m)?;
                }
                Ok(())
            }
            Action::FundCurrency { currency, amount } => {
                self.accrue(now);
                let Some(l) = &mut self.ledger else {
                    return Err(SimError::Invalid(
                        "fund: this system has no currencies".into(),
                    ));
                };
                let (_, t) = *self
                    .backing
                    .get(currency)
                    .ok_or_else(|| SimError::Invalid(format!("fund: no currency {currency}")))?;
                l.set_amount(t, amount)?;
                self.resync_around(usize::MAX)
            }
            Action::Transfer { from, to, tickets } => {
                let have = self.proc_tickets[self.proc_of[from]];
                if have < tickets {
                    return Err(SimError::Core(tix_core::Error::InsufficientTickets {
                        wanted: tickets,
                        held: have,
                    }));
                }
                self.set_proc_tickets(from, have - tickets, now)?;
                let to_have = self.proc_tickets[self.proc_of[to]];
                self.set_proc_tickets(to, to_have + tickets, now)
            }
            Action::Exit { client } => self.handle(now, Ev::Exit(client)),
            Action::Migrate { client, cpu } => {
                if cpu >= self.sys.config.cpus {
                    return Err(SimError::Invalid(format!("migrate: no cpu {cpu}")));
                }
                self.migrate(client, cpu)
            }
        }
    }

    fn migrate(&mut self, g: usize, cpu: usize) -> Result<()> {
        if self.cl[g].cpu == cpu || self.cl[g].running {
            return Ok(());
        }
        let old = self.inst(self.cl[g].cpu);
        if self.cl[g].local != usize::MAX {
            self.scheds[old].leave(self.cl[g].local)?;
        }
        let c = &mut self.cl[g];
        c.local = usize::MAX;
        c.queued = false;
        c.weight = 0;
        c.cpu = cpu;
        self.migrations += 1;
        self.sync(g)
    }

    /// Samih Ch. 4: CFS's balancing (Eqs. 4.1–4.3) between the busiest and
    /// the lightest CPU, and optionally the shuttle process
    /// (tix_core::shuttle); a running client does not move.
    fn balance(&mut self) -> Result<()> {
        let p = self.sys.config.cpus;
        let mut queues = vec![Queue::default(); p];
        for (g, c) in self.cl.iter().enumerate() {
            if c.st == St::Ready {
                queues[c.cpu].load += c.weight;
                queues[c.cpu].nr += 1;
                if !c.running {
                    queues[c.cpu].movable.push((g, c.weight));
                }
            }
        }
        let cl = &self.cl;
        let moves = self.balancer.period(&queues, |g| {
            (cl[g].st != St::Exited).then_some((cl[g].cpu, !cl[g].running))
        });
        for (g, _, to) in moves {
            self.migrate(g, to)?;
        }
        Ok(())
    }

    /// What happens when client g's slice (ending at `now`) is over.
    fn after_slice(&mut self, g: usize, now: u64) -> Result<()> {
        if self.cl[g].exit_pending {
            self.cl[g].exit_pending = false;
            return self.exit(g, now);
        }
        if self.cl[g].st != St::Ready {
            return Ok(());
        }
        if self.cl[g].work_left == 0 {
            self.cl[g].turnaround = Some(now - self.sys.clients[g].arrive_ns);
            return self.exit(g, now);
        }
        if self.cl[g].burst_left == 0 {
            match &self.sys.clients[g].behaviour {
                Behaviour::Io { block, .. } => {
                    let block = block.clone();
                    let b = block.sample(&mut self.cl[g].rng);
                    self.set_ready(g, false, now, St::Blocked)?;
                    self.push(now + b, Ev::Wake(g));
                }
                Behaviour::Calls { .. } => self.call(g, now)?,
                Behaviour::Server => self.reply(g, now)?,
                _ => self.set_ready(g, false, now, St::Blocked)?,
            }
            return Ok(());
        }
        self.cl[g].ready_since = now;
        self.sync(g)
    }

    fn dispatch(&mut self, cpu: usize, now: u64) -> Result<bool> {
        let i = self.inst(cpu);
        let q = self.sys.config.quantum_ns;
        let end = self.sys.config.duration_ns;
        let shared_mp = self.sys.config.queue == QueueMode::Shared && self.sys.config.cpus > 1;
        // The client whose slice just ended here runs on if it is owed turns.
        let cont = self.last_on[cpu].take().filter(|&g| {
            let c = &mut self.cl[g];
            if c.st != St::Ready || !c.queued {
                c.owed = 0;
            }
            c.owed > 0
        });
        let (g, charged) = if let Some(g) = cont {
            self.cl[g].owed -= 1;
            (g, true)
        } else {
            let mut tries = 0;
            loop {
                let Some(local) = self.scheds[i].pick() else {
                    return Ok(false);
                };
                let g = self.owners[i][local];
                if !(shared_mp && self.cl[g].running) {
                    break (g, false);
                }
                // Its turn, while it runs elsewhere: owed, or dropped past
                // OWED_MAX (the header's water-filling).
                self.scheds[i].charge(local, q)?;
                if self.cl[g].owed < OWED_MAX {
                    self.cl[g].owed += 1;
                }
                // Idle only when every queued client runs elsewhere (the
                // bound is a guard against a policy that never moves on).
                tries += 1;
                if tries == 1 {
                    let free = self
                        .cl
                        .iter()
                        .any(|c| c.st == St::Ready && c.queued && !c.running);
                    if !free {
                        return Ok(false);
                    }
                }
                if tries > 1 << 20 {
                    return Ok(false);
                }
            }
        };
        let local = self.cl[g].local;
        let used = {
            let c = &self.cl[g];
            q.min(c.burst_left).min(c.work_left).min(end - now).max(1)
        };
        if !charged {
            self.scheds[i].charge(local, used)?;
        }
        self.quanta += 1;
        let t_end = now + used;
        self.free_at[cpu] = t_end;
        let c = &mut self.cl[g];
        c.service += used;
        c.burst_left = c.burst_left.saturating_sub(used);
        c.work_left = c.work_left.saturating_sub(used);
        c.wait += now - c.ready_since;
        c.dispatches += 1;
        c.cpu = cpu;
        if let Some(s) = c.awaiting_since.take() {
            c.responses.push(now - s);
        }
        if shared_mp {
            c.running = true;
            self.sync(g)?;
            self.push(t_end, Ev::SliceEnd(g));
        } else if c.burst_left == 0 || c.work_left == 0 || c.exit_pending {
            self.after_slice(g, t_end)?;
        } else {
            c.ready_since = t_end;
            if self.burst_aware[i] {
                let remaining = c.burst_left.min(c.work_left);
                if let Some(b) = self.scheds[i].as_burst_aware() {
                    b.set_burst(local, remaining)?;
                }
            }
        }
        Ok(true)
    }

    pub fn run(mut self) -> Result<SimResult> {
        let end = self.sys.config.duration_ns;
        loop {
            let (cpu, now) = if self.free_at.len() == 1 {
                (0, self.free_at[0])
            } else {
                self.free_at
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| (i, t))
                    .min_by_key(|&(i, t)| (t, i))
                    .unwrap_or((0, end))
            };
            if now >= end {
                break;
            }
            while let Some(&Reverse((t, _, ev))) = self.heap.peek() {
                if t > now {
                    break;
                }
                self.heap.pop();
                self.handle(t.max(self.last_accrue.min(now)), ev)?;
            }
            if !self.dispatch(cpu, now)? {
                let next = self.heap.peek().map(|r| r.0 .0).unwrap_or(end).min(end);
                let next = next.max(now + 1);
                self.idle += next - now;
                self.free_at[cpu] = next;
            }
        }
        self.sample(end);
        Ok(self.finish())
    }

    fn finish(self) -> SimResult {
        let end = self.sys.config.duration_ns;
        let total: u64 = self.cl.iter().map(|c| c.service).sum();
        let mut xs = Vec::new();
        let mut lags = Vec::new();
        let clients = self
            .cl
            .iter()
            .enumerate()
            .map(|(g, c)| {
                let s = &self.sys.clients[g];
                if c.ideal > 0.0 {
                    xs.push(c.service as f64 / c.ideal);
                }
                let lag = c.service as f64 - c.ideal;
                lags.push(lag);
                ClientReport {
                    name: s.name.clone(),
                    process: s.process.clone(),
                    user: s.user.map(|u| self.sys.users[u].name.clone()),
                    cpu: c.cpu,
                    service_ns: c.service,
                    ideal_ns: c.ideal,
                    lag_ns: lag,
                    min_lag_ns: c.min_lag,
                    max_lag_ns: c.max_lag,
                    share: if total > 0 {
                        c.service as f64 / total as f64
                    } else {
                        0.0
                    },
                    wait_ns: c.wait,
                    dispatches: c.dispatches,
                    response: Summary::of(
                        &c.responses.iter().map(|&r| r as f64).collect::<Vec<_>>(),
                    ),
                    turnaround_ns: c.turnaround,
                }
            })
            .collect();
        SimResult {
            algo: self.sys.config.algo.clone(),
            cpus: self.sys.config.cpus,
            duration_ns: end,
            quanta: self.quanta,
            idle_ns: self.idle,
            migrations: self.migrations,
            jain: tix_core::metrics::jain_index(&xs),
            lag: Summary::of(&lags),
            clients,
            series: self.series,
        }
    }
}

/// Build and run a system.
pub fn simulate(sys: System) -> Result<SimResult> {
    Engine::new(sys)?.run()
}

/// Build and run a system under a controller.
pub fn simulate_with(sys: System, c: Box<dyn Controller>) -> Result<SimResult> {
    Engine::new(sys)?.with_controller(c).run()
}
