//! The simulated system: CPUs and their queues, clients (threads grouped into
//! processes and users, Zepp §3's two-level tickets) with their behaviours,
//! and timed events that change tickets, funding and placement.

use serde::{Deserialize, Serialize};

/// A length drawn from a distribution, in ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Dist {
    Const { ns: u64 },
    Uniform { lo_ns: u64, hi_ns: u64 },
    Exp { mean_ns: u64 },
}

impl Dist {
    /// The mean length, ns.
    pub fn mean_ns(&self) -> f64 {
        match *self {
            Dist::Const { ns } => ns as f64,
            Dist::Uniform { lo_ns, hi_ns } => (lo_ns as f64 + hi_ns as f64) / 2.0,
            Dist::Exp { mean_ns } => mean_ns as f64,
        }
    }

    pub fn sample(&self, rng: &mut crate::rng::WorkRng) -> u64 {
        match *self {
            Dist::Const { ns } => ns,
            Dist::Uniform { lo_ns, hi_ns } => rng.range(lo_ns, hi_ns),
            Dist::Exp { mean_ns } => rng.exp(mean_ns as f64).round() as u64,
        }
    }
}

/// What a client does with the CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Behaviour {
    /// Always wants the CPU.
    Cpu,
    /// Runs for a drawn length, then blocks for a drawn length, forever.
    Io { run: Dist, block: Dist },
    /// Interactive: `work_ns` of CPU released every `period_ns`.
    Periodic { period_ns: u64, work_ns: u64 },
    /// A client of a server (Waldspurger §5.3): sends `server` (a client
    /// index) one query after another, each costing `query_ns` of the
    /// server's CPU, and lends the server all its tickets while it waits
    /// for the reply (§4.6: the loan ends with the reply). Between
    /// queries it thinks for `think` of its own CPU (None: none); after
    /// `queries` replies (None: no end) it exits.
    Calls {
        server: usize,
        query_ns: u64,
        think: Option<Dist>,
        queries: Option<u64>,
    },
    /// Runs only to answer its caller's queries, on the tickets lent.
    Server,
}

/// One simulated thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientSpec {
    pub name: String,
    /// Tickets of the client's process (Zepp's process tickets; with no
    /// users, the client's weight). 0 = holds nothing of its own and runs
    /// only on tickets transferred to it (Waldspurger §5.3's server).
    pub tickets: u64,
    /// Index into the user list (None: no users in this system).
    pub user: Option<usize>,
    /// Index into the currency list: the client's tickets are issued in it
    /// (None: in the base currency, or no currencies in this system).
    #[serde(default)]
    pub currency: Option<usize>,
    /// Process the thread belongs to (threads of a process share its tickets).
    pub process: String,
    pub arrive_ns: u64,
    pub exit_ns: Option<u64>,
    /// Total CPU work; the client exits when it is done.
    pub work_ns: Option<u64>,
    pub behaviour: Behaviour,
    /// Initial CPU with per-CPU queues (None: the least-loaded one).
    pub cpu: Option<usize>,
}

/// A currency (Waldspurger §3.3) backed by one ticket of `amount` issued in
/// `from` (None: the base currency; otherwise an earlier currency).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurrencySpec {
    pub name: String,
    pub from: Option<usize>,
    pub amount: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserSpec {
    pub name: String,
    /// Base tickets (Zepp's user currency funding).
    pub base: u64,
}

/// A timed change to the system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "action")]
pub enum Action {
    /// Set the tickets of a client's process (Zepp's `set_process_tkts`).
    Tickets { client: usize, tickets: u64 },
    /// Fund a user's currency with a new number of base tickets.
    Fund { user: usize, base: u64 },
    /// Set the amount of the ticket backing a currency (inflate/deflate it).
    FundCurrency { currency: usize, amount: u64 },
    /// Move tickets from one client's process to another's (Waldspurger §3.1).
    Transfer {
        from: usize,
        to: usize,
        tickets: u64,
    },
    /// The client leaves for good.
    Exit { client: usize },
    /// Move a client to another CPU (per-CPU queues).
    Migrate { client: usize, cpu: usize },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimedEvent {
    pub at_ns: u64,
    pub action: Action,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueMode {
    /// One policy instance shared by every CPU.
    Shared,
    /// One policy instance per CPU, with balancing between them.
    PerCpu,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Balance {
    None,
    /// Linux CFS load balancing as Samih Ch. 4 models it (Eqs. 4.1–4.3).
    Cfs,
    /// CFS plus Samih's shuttle process (Ch. 4 §4.4).
    Shuttle,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimConfig {
    pub algo: String,
    pub cpus: usize,
    pub queue: QueueMode,
    pub balance: Balance,
    pub balance_ns: u64,
    pub quantum_ns: u64,
    pub seed: u64,
    pub duration_ns: u64,
    /// Interval of the per-client time series.
    pub sample_ns: u64,
}

impl SimConfig {
    pub fn new(algo: &str, duration_ns: u64) -> Self {
        SimConfig {
            algo: algo.to_string(),
            cpus: 1,
            queue: QueueMode::Shared,
            balance: Balance::None,
            balance_ns: 40_000_000,
            quantum_ns: 10_000_000,
            seed: 1,
            duration_ns,
            sample_ns: (duration_ns / 100).max(1),
        }
    }
}

/// A whole system to simulate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct System {
    pub config: SimConfig,
    pub users: Vec<UserSpec>,
    #[serde(default)]
    pub currencies: Vec<CurrencySpec>,
    pub clients: Vec<ClientSpec>,
    pub events: Vec<TimedEvent>,
}

impl System {
    pub fn new(config: SimConfig) -> Self {
        System {
            config,
            users: Vec::new(),
            currencies: Vec::new(),
            clients: Vec::new(),
            events: Vec::new(),
        }
    }
    /// Add a CPU-bound client with its own process; returns its index.
    pub fn cpu_client(&mut self, name: &str, tickets: u64) -> usize {
        self.client(name, tickets, Behaviour::Cpu)
    }
    pub fn client(&mut self, name: &str, tickets: u64, behaviour: Behaviour) -> usize {
        self.clients.push(ClientSpec {
            name: name.to_string(),
            tickets,
            user: None,
            currency: None,
            process: name.to_string(),
            arrive_ns: 0,
            exit_ns: None,
            work_ns: None,
            behaviour,
            cpu: None,
        });
        self.clients.len() - 1
    }
    pub fn user(&mut self, name: &str, base: u64) -> usize {
        self.users.push(UserSpec {
            name: name.to_string(),
            base,
        });
        self.users.len() - 1
    }
    /// Add a currency backed by `amount` tickets of `from` (None: base).
    pub fn currency(&mut self, name: &str, from: Option<usize>, amount: u64) -> usize {
        self.currencies.push(CurrencySpec {
            name: name.to_string(),
            from,
            amount,
        });
        self.currencies.len() - 1
    }
    pub fn at(&mut self, at_ns: u64, action: Action) {
        self.events.push(TimedEvent { at_ns, action });
    }
}
