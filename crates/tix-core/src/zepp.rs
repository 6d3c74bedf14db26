//! Zepp's two-level lottery rights for Linux (000 §3–4): every user holds
//! base tickets, every process holds process tickets in its user's currency,
//! and a runnable process is worth `base · tickets / user_tpt` base tickets.
//! [`ZeppSystem`] expresses the same model as Waldspurger currencies.

use crate::currency::{CurrencyId, HolderId, Ledger, TicketId, BASE};
use crate::error::{Error, Result};

/// Base tickets a user starts with. Zepp leaves the constant unnamed; his
/// profile (Table 4) shows a lone test process worth 1000, so we use that.
pub const DEFAULT_BASE: u64 = 1000;
/// Process tickets a process starts with (Zepp's `DEF_PROCESS_TICKETS`,
/// value not given in the thesis; 100 keeps 1..=10000 on both sides).
pub const DEFAULT_TICKETS: u64 = 100;
/// Smallest and largest process tickets `set_process_tkts` accepts (000 §4.1).
pub const MIN_PROCESS_TICKETS: u64 = 1;
pub const MAX_PROCESS_TICKETS: u64 = 10_000;
/// Smallest and largest base tickets `set_base_tkts` accepts (000 §4.1).
pub const MIN_BASE_TICKETS: u64 = 100;
pub const MAX_BASE_TICKETS: u64 = 10_000;

/// The base-ticket value of one runnable task (Zepp's `v = b·p/t`), with a
/// further split among the process's runnable threads (a Linux process may
/// have several; Zepp's 2.4 kernel had one task per process).
///
/// Integer floor division in the stated order, as the kernel does it, and
/// clamped to at least 1 so no runnable task ever has zero odds (Zepp §4.2).
/// Zero denominators count as 1 so the function is total.
pub fn task_value(
    base: u64,
    tickets: u64,
    user_runnable_tickets: u64,
    process_runnable_threads: u64,
) -> u64 {
    let v = (base as u128) * (tickets as u128)
        / (user_runnable_tickets.max(1) as u128)
        / (process_runnable_threads.max(1) as u128);
    v.clamp(1, u64::MAX as u128) as u64
}

/// Check a process-ticket count against Zepp's range 1..=10000.
pub fn check_process_tickets(tickets: u64) -> Result<u64> {
    check_range(
        "process tickets",
        tickets,
        MIN_PROCESS_TICKETS,
        MAX_PROCESS_TICKETS,
    )
}

/// Check a base-ticket count against Zepp's range 100..=10000.
pub fn check_base_tickets(base: u64) -> Result<u64> {
    check_range("base tickets", base, MIN_BASE_TICKETS, MAX_BASE_TICKETS)
}

fn check_range(what: &'static str, got: u64, min: u64, max: u64) -> Result<u64> {
    if (min..=max).contains(&got) {
        Ok(got)
    } else {
        Err(Error::OutOfRange {
            what,
            got,
            min,
            max,
        })
    }
}

/// Zepp's users and processes as currencies: each user is a currency
/// funded by one base ticket of the user's base tickets; each process is a
/// ledger client holding one ticket of its process tickets in its user's
/// currency. Blocking a process deactivates its ticket, so the user's
/// value is shared by its runnable processes only (Zepp's `user_tpt`), and a
/// user with nothing runnable drops out of the base total.
#[derive(Debug, Clone, Default)]
pub struct ZeppSystem {
    ledger: Ledger,
    users: Vec<ZeppUser>,
    procs: Vec<ZeppProc>,
}

#[derive(Debug, Clone)]
struct ZeppUser {
    currency: CurrencyId,
    base_ticket: TicketId,
}

#[derive(Debug, Clone)]
struct ZeppProc {
    user: usize,
    client: HolderId,
    ticket: TicketId,
}

impl ZeppSystem {
    pub fn new() -> ZeppSystem {
        ZeppSystem::default()
    }

    /// The ledger the model lives in (for valuation and a lottery sync).
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// A user with `base` base tickets (100..=10000); the currency is named
    /// `user:<name>`.
    pub fn add_user(&mut self, name: &str, base: u64) -> Result<usize> {
        let base = check_base_tickets(base)?;
        let c = self.ledger.create_currency(&format!("user:{name}"))?;
        let t = self.ledger.issue(BASE, base)?;
        self.ledger.fund(c, t)?;
        self.users.push(ZeppUser {
            currency: c,
            base_ticket: t,
        });
        Ok(self.users.len() - 1)
    }

    /// `set_base_tkts`: all of the user's processes change at once.
    pub fn set_base(&mut self, user: usize, base: u64) -> Result<()> {
        let base = check_base_tickets(base)?;
        let u = self.user(user)?;
        self.ledger.set_amount(u.base_ticket, base)
    }

    /// A runnable process of `user` with `tickets` process tickets
    /// (1..=10000). Returns the process index, which is also returned by
    /// [`ZeppSystem::client`] as a ledger client.
    pub fn spawn(&mut self, user: usize, tickets: u64) -> Result<usize> {
        let tickets = check_process_tickets(tickets)?;
        let c = self.user(user)?.currency;
        let client = self.ledger.new_client();
        let ticket = self.ledger.issue(c, tickets)?;
        self.ledger.give(client, ticket)?;
        self.procs.push(ZeppProc {
            user,
            client,
            ticket,
        });
        Ok(self.procs.len() - 1)
    }

    /// `set_process_tkts`.
    pub fn set_tickets(&mut self, p: usize, tickets: u64) -> Result<()> {
        let tickets = check_process_tickets(tickets)?;
        let t = self.proc(p)?.ticket;
        self.ledger.set_amount(t, tickets)
    }

    pub fn block(&mut self, p: usize) -> Result<()> {
        let c = self.proc(p)?.client;
        self.ledger.block(c)
    }

    pub fn wake(&mut self, p: usize) -> Result<()> {
        let c = self.proc(p)?.client;
        self.ledger.wake(c)
    }

    /// The ledger client of a process.
    pub fn client(&self, p: usize) -> Result<HolderId> {
        Ok(self.proc(p)?.client)
    }

    /// A process's value in base tickets, from the currency graph.
    pub fn value(&self, p: usize) -> Result<f64> {
        self.ledger.client_value(self.proc(p)?.client)
    }

    /// The same value as Zepp's kernel computes it ([`task_value`]: integer
    /// floors, at least 1), for a runnable process.
    pub fn kernel_value(&self, p: usize) -> Result<u64> {
        let pr = self.proc(p)?;
        let u = self.user(pr.user)?;
        let base = self.ledger.ticket_amount(u.base_ticket)?;
        let tickets = self.ledger.ticket_amount(pr.ticket)?;
        let c = self.ledger.ticket_currency(pr.ticket)?;
        let tpt = self.ledger.active_amount(c)?;
        Ok(task_value(base, tickets, tpt, 1))
    }

    fn user(&self, u: usize) -> Result<&ZeppUser> {
        self.users
            .get(u)
            .ok_or_else(|| Error::Invalid(format!("unknown user {u}")))
    }

    fn proc(&self, p: usize) -> Result<&ZeppProc> {
        self.procs
            .get(p)
            .ok_or_else(|| Error::Invalid(format!("unknown process {p}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table1_values() {
        // Fred (200 base) runs Proc1 (1000) and Proc2 (3000): user_tpt 4000.
        assert_eq!(task_value(200, 1000, 4000, 1), 50);
        assert_eq!(task_value(200, 3000, 4000, 1), 150);
        // John (200 base) runs Proc3 (100) alone: all of his base.
        assert_eq!(task_value(200, 100, 100, 1), 200);
    }

    #[test]
    fn floor_order_and_clamp() {
        // Floors in order: 1000·1/3 = 333, then /2 = 166.
        assert_eq!(task_value(1000, 1, 3, 2), 166);
        assert_eq!(task_value(7, 1, 2, 2), 1);
        // Below one base ticket is clamped up to 1.
        assert_eq!(task_value(100, 1, 10_000, 1), 1);
        // Zero denominators count as 1.
        assert_eq!(task_value(1000, 100, 0, 0), 100_000);
        // Four threads share the process's value.
        assert_eq!(task_value(1000, 100, 100, 4), 250);
        // No overflow at the extremes.
        assert_eq!(task_value(u64::MAX, u64::MAX, 1, 1), u64::MAX);
    }

    #[test]
    fn table1_as_currencies() {
        let mut z = ZeppSystem::new();
        let fred = z.add_user("fred", 200).unwrap();
        let john = z.add_user("john", 200).unwrap();
        let p1 = z.spawn(fred, 1000).unwrap();
        let p2 = z.spawn(fred, 3000).unwrap();
        let p3 = z.spawn(john, 100).unwrap();
        for (p, v) in [(p1, 50), (p2, 150), (p3, 200)] {
            assert_eq!(z.value(p).unwrap(), v as f64);
            assert_eq!(z.kernel_value(p).unwrap(), v);
        }
        assert_eq!(z.ledger().active_amount(BASE).unwrap(), 400);
        // Proc2 sleeps: Proc1 gets all of fred's 200.
        z.block(p2).unwrap();
        assert_eq!(z.value(p1).unwrap(), 200.0);
        assert_eq!(z.kernel_value(p1).unwrap(), 200);
        // set_base changes all of fred's processes at once.
        z.set_base(fred, 1000).unwrap();
        assert_eq!(z.value(p1).unwrap(), 1000.0);
        assert!(z.set_base(fred, 50).is_err());
        assert!(z.spawn(john, 0).is_err());
        assert!(z.spawn(7, 10).is_err());
        assert!(z.add_user("fred", 200).is_err());
    }

    #[test]
    fn ranges() {
        assert_eq!(check_process_tickets(1), Ok(1));
        assert_eq!(check_process_tickets(10_000), Ok(10_000));
        assert!(matches!(
            check_process_tickets(0),
            Err(Error::OutOfRange { got: 0, .. })
        ));
        assert!(check_process_tickets(10_001).is_err());
        assert_eq!(check_base_tickets(100), Ok(100));
        assert!(check_base_tickets(99).is_err());
        assert!(check_base_tickets(10_001).is_err());
        assert_eq!(check_base_tickets(DEFAULT_BASE), Ok(DEFAULT_BASE));
        assert_eq!(check_process_tickets(DEFAULT_TICKETS), Ok(DEFAULT_TICKETS));
    }
}
