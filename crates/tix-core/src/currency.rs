//! Tickets and currencies (Waldspurger 001 §3.3, §4.3–4.4, Figs. 2–3):
//! currencies backed by tickets of more basic currencies form an acyclic
//! funding graph down to the conserved base currency; activation follows
//! runnability up the graph, and every ticket is valued in base units.

use crate::error::{Error, Result};
use crate::sched::check_weight;
use std::collections::HashMap;

pub type CurrencyId = usize;
pub type TicketId = u64;
/// A holder of tickets that competes (a thread, a process).
pub type HolderId = usize;

/// The base currency, created with every ledger; its tickets are worth
/// their face amount.
pub const BASE: CurrencyId = 0;

/// Who holds a ticket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// Issued but not handed out: never active.
    Nobody,
    /// Held by a client: active while the client is runnable.
    Client(HolderId),
    /// Backs (funds) a currency: active while that currency is.
    Currency(CurrencyId),
}

#[derive(Debug, Clone)]
pub(crate) struct Ticket {
    pub(crate) amount: u64,
    pub(crate) currency: CurrencyId,
    pub(crate) holder: Holder,
    pub(crate) active: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Currency {
    pub(crate) name: String,
    pub(crate) backing: Vec<TicketId>,
    pub(crate) issued: Vec<TicketId>,
    /// Σ amount of the active tickets issued in this currency.
    pub(crate) active_amount: u64,
}

#[derive(Debug, Clone)]
pub(crate) struct Client {
    pub(crate) runnable: bool,
    pub(crate) held: Vec<TicketId>,
}

/// The kernel objects of Fig. 2 and the minimal interface of §4.3: create
/// and destroy tickets and currencies, fund and unfund, value in base units.
#[derive(Debug, Clone)]
pub struct Ledger {
    pub(crate) currencies: Vec<Option<Currency>>,
    pub(crate) tickets: Vec<Option<Ticket>>,
    pub(crate) clients: Vec<Option<Client>>,
    names: HashMap<String, CurrencyId>,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger::new()
    }
}

impl Ledger {
    /// A ledger holding only the base currency, named "base".
    pub fn new() -> Ledger {
        let mut l = Ledger {
            currencies: Vec::new(),
            tickets: Vec::new(),
            clients: Vec::new(),
            names: HashMap::new(),
        };
        l.currencies.push(Some(Currency {
            name: "base".into(),
            backing: Vec::new(),
            issued: Vec::new(),
            active_amount: 0,
        }));
        l.names.insert("base".into(), BASE);
        l
    }

    // ---- lookups ------------------------------------------------------

    pub(crate) fn cur(&self, c: CurrencyId) -> Result<&Currency> {
        self.currencies
            .get(c)
            .and_then(|x| x.as_ref())
            .ok_or_else(|| Error::UnknownCurrency(format!("#{c}")))
    }

    pub(crate) fn tkt(&self, t: TicketId) -> Result<&Ticket> {
        self.tickets
            .get(t as usize)
            .and_then(|x| x.as_ref())
            .ok_or(Error::UnknownTicket(t))
    }

    pub(crate) fn cli(&self, h: HolderId) -> Result<&Client> {
        self.clients
            .get(h)
            .and_then(|x| x.as_ref())
            .ok_or(Error::UnknownClient(h))
    }

    fn cur_mut(&mut self, c: CurrencyId) -> &mut Currency {
        self.currencies[c].as_mut().expect("checked currency")
    }

    fn tkt_mut(&mut self, t: TicketId) -> &mut Ticket {
        self.tickets[t as usize].as_mut().expect("checked ticket")
    }

    /// The id of a currency by name.
    pub fn currency(&self, name: &str) -> Result<CurrencyId> {
        self.names
            .get(name)
            .copied()
            .ok_or_else(|| Error::UnknownCurrency(name.into()))
    }

    pub fn currency_name(&self, c: CurrencyId) -> Result<&str> {
        Ok(&self.cur(c)?.name)
    }

    /// Amount of the active tickets issued in a currency.
    pub fn active_amount(&self, c: CurrencyId) -> Result<u64> {
        Ok(self.cur(c)?.active_amount)
    }

    /// A currency is active while some ticket issued in it is active.
    pub fn is_active(&self, c: CurrencyId) -> Result<bool> {
        Ok(self.cur(c)?.active_amount > 0)
    }

    pub fn ticket_amount(&self, t: TicketId) -> Result<u64> {
        Ok(self.tkt(t)?.amount)
    }

    pub fn ticket_currency(&self, t: TicketId) -> Result<CurrencyId> {
        Ok(self.tkt(t)?.currency)
    }

    pub fn ticket_active(&self, t: TicketId) -> Result<bool> {
        Ok(self.tkt(t)?.active)
    }

    pub fn holder(&self, t: TicketId) -> Result<Holder> {
        Ok(self.tkt(t)?.holder)
    }

    /// Live currency ids, base first.
    pub fn currencies(&self) -> impl Iterator<Item = CurrencyId> + '_ {
        (0..self.currencies.len()).filter(|&c| self.currencies[c].is_some())
    }

    /// Live client ids.
    pub fn clients(&self) -> impl Iterator<Item = HolderId> + '_ {
        (0..self.clients.len()).filter(|&h| self.clients[h].is_some())
    }

    pub fn is_runnable(&self, h: HolderId) -> Result<bool> {
        Ok(self.cli(h)?.runnable)
    }

    /// Tickets held by a client.
    pub fn held(&self, h: HolderId) -> Result<&[TicketId]> {
        Ok(&self.cli(h)?.held)
    }

    // ---- currencies ---------------------------------------------------

    pub fn create_currency(&mut self, name: &str) -> Result<CurrencyId> {
        if name.is_empty() {
            return Err(Error::Invalid("a currency needs a name".into()));
        }
        if self.names.contains_key(name) {
            return Err(Error::DuplicateCurrency(name.into()));
        }
        let c = self.currencies.len();
        self.currencies.push(Some(Currency {
            name: name.into(),
            backing: Vec::new(),
            issued: Vec::new(),
            active_amount: 0,
        }));
        self.names.insert(name.into(), c);
        Ok(c)
    }

    /// Destroy a currency that has no tickets issued and no backing.
    pub fn destroy_currency(&mut self, c: CurrencyId) -> Result<()> {
        if c == BASE {
            return Err(Error::BaseCurrency("destroyed"));
        }
        let cur = self.cur(c)?;
        if !cur.issued.is_empty() || !cur.backing.is_empty() {
            return Err(Error::CurrencyInUse(cur.name.clone()));
        }
        let name = cur.name.clone();
        self.names.remove(&name);
        self.currencies[c] = None;
        Ok(())
    }

    /// Does the value of `c` depend on `target`, i.e. is `target` reachable
    /// from `c` along backing tickets' currencies (or equal to it)? Funding
    /// `target` with a ticket of `c` would then close a cycle.
    pub fn depends_on(&self, c: CurrencyId, target: CurrencyId) -> bool {
        let mut stack = vec![c];
        let mut seen = vec![false; self.currencies.len()];
        while let Some(x) = stack.pop() {
            if x == target {
                return true;
            }
            if std::mem::replace(&mut seen[x], true) {
                continue;
            }
            if let Some(cur) = &self.currencies[x] {
                for &b in &cur.backing {
                    if let Some(t) = &self.tickets[b as usize] {
                        stack.push(t.currency);
                    }
                }
            }
        }
        false
    }

    // ---- tickets ------------------------------------------------------

    /// Issue a new ticket of `amount` in currency `c`, held by nobody (so
    /// inactive). Issuing is inflation of `c`: it dilutes `c`'s tickets
    /// once handed out, and nothing outside what `c` funds.
    pub fn issue(&mut self, c: CurrencyId, amount: u64) -> Result<TicketId> {
        self.cur(c)?;
        let amount = check_weight(amount)?;
        Ok(self.issue_unchecked(c, amount))
    }

    pub(crate) fn issue_unchecked(&mut self, c: CurrencyId, amount: u64) -> TicketId {
        let t = self.tickets.len() as TicketId;
        self.tickets.push(Some(Ticket {
            amount,
            currency: c,
            holder: Holder::Nobody,
            active: false,
        }));
        self.cur_mut(c).issued.push(t);
        t
    }

    /// Destroy a ticket, first taking it from its holder.
    pub fn destroy_ticket(&mut self, t: TicketId) -> Result<()> {
        self.release(t)?;
        let c = self.tkt(t)?.currency;
        self.cur_mut(c).issued.retain(|&x| x != t);
        self.tickets[t as usize] = None;
        Ok(())
    }

    /// Change a ticket's amount: inflation (up) or deflation (down) of its
    /// currency. Only tickets of the same currency change value.
    pub fn set_amount(&mut self, t: TicketId, amount: u64) -> Result<()> {
        self.tkt(t)?;
        let amount = check_weight(amount)?;
        self.set_amount_unchecked(t, amount);
        Ok(())
    }

    /// As `set_amount`, allowing 0 (a ticket fully lent by a transfer).
    pub(crate) fn set_amount_unchecked(&mut self, t: TicketId, amount: u64) {
        let tk = self.tkt_mut(t);
        let (old, active, c) = (tk.amount, tk.active, tk.currency);
        tk.amount = amount;
        if active {
            let before = self.cur_mut(c).active_amount;
            let after = before - old + amount;
            self.cur_mut(c).active_amount = after;
            self.propagate(c, before, after);
        }
    }

    /// Fund currency `c` with ticket `t` (add it to `c`'s backing). Refused
    /// with [`Error::FundingCycle`] if `t`'s currency depends on `c`; the
    /// base currency is never funded. Nothing changes on error.
    pub fn fund(&mut self, c: CurrencyId, t: TicketId) -> Result<()> {
        self.check_fund(c, t)?;
        self.attach(t, Holder::Currency(c));
        Ok(())
    }

    pub(crate) fn check_fund(&self, c: CurrencyId, t: TicketId) -> Result<()> {
        let cur = self.cur(c)?;
        let tk = self.tkt(t)?;
        if c == BASE {
            return Err(Error::BaseCurrency("funded"));
        }
        if tk.holder != Holder::Nobody {
            return Err(Error::TicketHeld(t));
        }
        if self.depends_on(tk.currency, c) {
            return Err(Error::FundingCycle {
                from: cur.name.clone(),
                to: self.cur(tk.currency)?.name.clone(),
            });
        }
        Ok(())
    }

    /// Hand ticket `t` to client `h`.
    pub fn give(&mut self, h: HolderId, t: TicketId) -> Result<()> {
        self.cli(h)?;
        if self.tkt(t)?.holder != Holder::Nobody {
            return Err(Error::TicketHeld(t));
        }
        self.attach(t, Holder::Client(h));
        Ok(())
    }

    /// Take a ticket back from whoever holds it (unfund / take from a
    /// client); it stays issued, inactive.
    pub fn release(&mut self, t: TicketId) -> Result<()> {
        let holder = self.tkt(t)?.holder;
        self.set_active(t, false);
        match holder {
            Holder::Nobody => {}
            Holder::Client(h) => {
                if let Some(Some(cl)) = self.clients.get_mut(h) {
                    cl.held.retain(|&x| x != t);
                }
            }
            Holder::Currency(c) => self.cur_mut(c).backing.retain(|&x| x != t),
        }
        self.tkt_mut(t).holder = Holder::Nobody;
        Ok(())
    }

    /// Remove `t` from currency `c`'s backing.
    pub fn unfund(&mut self, c: CurrencyId, t: TicketId) -> Result<()> {
        self.cur(c)?;
        if self.tkt(t)?.holder != Holder::Currency(c) {
            return Err(Error::Invalid(format!(
                "ticket {t} does not fund that currency"
            )));
        }
        self.release(t)
    }

    pub(crate) fn attach(&mut self, t: TicketId, holder: Holder) {
        self.tkt_mut(t).holder = holder;
        let on = match holder {
            Holder::Nobody => false,
            Holder::Client(h) => {
                let cl = self.clients[h].as_mut().expect("checked client");
                cl.held.push(t);
                cl.runnable
            }
            Holder::Currency(c) => {
                let cur = self.cur_mut(c);
                cur.backing.push(t);
                cur.active_amount > 0
            }
        };
        self.set_active(t, on);
    }

    // ---- clients and activation --------------------------------------

    /// A new runnable client holding no tickets.
    pub fn new_client(&mut self) -> HolderId {
        self.clients.push(Some(Client {
            runnable: true,
            held: Vec::new(),
        }));
        self.clients.len() - 1
    }

    /// Remove a client; the tickets it held stay issued, held by nobody.
    pub fn remove_client(&mut self, h: HolderId) -> Result<()> {
        let held = self.cli(h)?.held.clone();
        for t in held {
            self.release(t)?;
        }
        self.clients[h] = None;
        Ok(())
    }

    /// The client leaves the run queue: its tickets are deactivated, and a
    /// currency whose active amount drops to zero deactivates its backing.
    pub fn block(&mut self, h: HolderId) -> Result<()> {
        if !self.cli(h)?.runnable {
            return Err(Error::AlreadyBlocked(h));
        }
        self.set_runnable(h, false);
        Ok(())
    }

    /// The client rejoins the run queue; activation propagates back.
    pub fn wake(&mut self, h: HolderId) -> Result<()> {
        if self.cli(h)?.runnable {
            return Err(Error::AlreadyRunnable(h));
        }
        self.set_runnable(h, true);
        Ok(())
    }

    fn set_runnable(&mut self, h: HolderId, on: bool) {
        let cl = self.clients[h].as_mut().expect("checked client");
        cl.runnable = on;
        let held = cl.held.clone();
        for t in held {
            self.set_active(t, on);
        }
    }

    /// (De)activate one ticket and propagate through its currency.
    fn set_active(&mut self, t: TicketId, on: bool) {
        let tk = self.tkt_mut(t);
        if tk.active == on {
            return;
        }
        tk.active = on;
        let (amount, c) = (tk.amount, tk.currency);
        let cur = self.cur_mut(c);
        let before = cur.active_amount;
        cur.active_amount = if on { before + amount } else { before - amount };
        let after = cur.active_amount;
        self.propagate(c, before, after);
    }

    /// A currency that became active activates its backing tickets, one that
    /// became inactive deactivates them (§4.4). The graph is acyclic, so
    /// this terminates at the base currency.
    fn propagate(&mut self, c: CurrencyId, before: u64, after: u64) {
        if (before == 0) != (after == 0) {
            let backing = self.cur(c).map(|x| x.backing.clone()).unwrap_or_default();
            for b in backing {
                self.set_active(b, after > 0);
            }
        }
    }

    // ---- valuation ----------------------------------------------------

    /// Every live currency's value in base units (index = id; 0 for dead
    /// ids): value(c) = Σ value(active backing tickets); the base currency
    /// is worth its active amount.
    pub fn currency_values(&self) -> Vec<f64> {
        let mut memo: Vec<Option<f64>> = vec![None; self.currencies.len()];
        for c in 0..self.currencies.len() {
            self.value_memo(c, &mut memo);
        }
        memo.into_iter().map(|v| v.unwrap_or(0.0)).collect()
    }

    fn value_memo(&self, c: CurrencyId, memo: &mut Vec<Option<f64>>) -> f64 {
        if let Some(v) = memo[c] {
            return v;
        }
        let v = match &self.currencies[c] {
            None => 0.0,
            Some(cur) if c == BASE => cur.active_amount as f64,
            Some(cur) => cur
                .backing
                .iter()
                .map(|&b| self.ticket_value_memo(b, memo))
                .sum(),
        };
        memo[c] = Some(v);
        v
    }

    fn ticket_value_memo(&self, t: TicketId, memo: &mut Vec<Option<f64>>) -> f64 {
        let Some(tk) = &self.tickets[t as usize] else {
            return 0.0;
        };
        if !tk.active {
            return 0.0;
        }
        if tk.currency == BASE {
            return tk.amount as f64;
        }
        let active = self.currencies[tk.currency]
            .as_ref()
            .map_or(0, |c| c.active_amount);
        if active == 0 {
            return 0.0;
        }
        self.value_memo(tk.currency, memo) * tk.amount as f64 / active as f64
    }

    /// A currency's value in base units.
    pub fn currency_value(&self, c: CurrencyId) -> Result<f64> {
        self.cur(c)?;
        Ok(self.value_memo(c, &mut vec![None; self.currencies.len()]))
    }

    /// A ticket's value in base units: its share of its currency's active
    /// amount times the currency's value; 0 while inactive.
    pub fn ticket_value(&self, t: TicketId) -> Result<f64> {
        self.tkt(t)?;
        Ok(self.ticket_value_memo(t, &mut vec![None; self.currencies.len()]))
    }

    /// A client's funding in base units (0 while blocked).
    pub fn client_value(&self, h: HolderId) -> Result<f64> {
        let cl = self.cli(h)?;
        let mut memo = vec![None; self.currencies.len()];
        Ok(cl
            .held
            .iter()
            .map(|&t| self.ticket_value_memo(t, &mut memo))
            .sum())
    }

    /// Every live client's funding in base units, sharing one memo.
    pub fn client_values(&self) -> Vec<(HolderId, f64)> {
        let mut memo = vec![None; self.currencies.len()];
        self.clients()
            .map(|h| {
                let v = self.clients[h].as_ref().map_or(0.0, |cl| {
                    cl.held
                        .iter()
                        .map(|&t| self.ticket_value_memo(t, &mut memo))
                        .sum()
                });
                (h, v)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The funding graph of Waldspurger Fig. 3 as reconstructed in the
    /// digest: base funds alice (1000) and bob (2000); alice funds task1
    /// (100, its threads all blocked) and task2 (200); bob funds task3
    /// (100); task2 funds thread2 (200) and thread3 (300); task3 funds
    /// thread4 (100).
    fn figure3() -> (Ledger, [HolderId; 4]) {
        let mut l = Ledger::new();
        let cur = |l: &mut Ledger, name: &str, funder: CurrencyId, amount: u64| {
            let c = l.create_currency(name).unwrap();
            let t = l.issue(funder, amount).unwrap();
            l.fund(c, t).unwrap();
            c
        };
        let alice = cur(&mut l, "alice", BASE, 1000);
        let bob = cur(&mut l, "bob", BASE, 2000);
        let task1 = cur(&mut l, "task1", alice, 100);
        let task2 = cur(&mut l, "task2", alice, 200);
        let task3 = cur(&mut l, "task3", bob, 100);
        let thread = |l: &mut Ledger, c: CurrencyId, amount: u64| {
            let h = l.new_client();
            let t = l.issue(c, amount).unwrap();
            l.give(h, t).unwrap();
            h
        };
        let t1 = thread(&mut l, task1, 100);
        let t2 = thread(&mut l, task2, 200);
        let t3 = thread(&mut l, task2, 300);
        let t4 = thread(&mut l, task3, 100);
        l.block(t1).unwrap();
        (l, [t1, t2, t3, t4])
    }

    #[test]
    fn figure3_values() {
        let (l, [t1, t2, t3, t4]) = figure3();
        assert_eq!(l.client_value(t1).unwrap(), 0.0);
        assert_eq!(l.client_value(t2).unwrap(), 400.0);
        assert_eq!(l.client_value(t3).unwrap(), 600.0);
        assert_eq!(l.client_value(t4).unwrap(), 2000.0);
        let alice = l.currency("alice").unwrap();
        assert_eq!(l.active_amount(alice).unwrap(), 200);
        assert!(!l.is_active(l.currency("task1").unwrap()).unwrap());
        assert_eq!(
            l.currency_value(l.currency("task2").unwrap()).unwrap(),
            1000.0
        );
        assert_eq!(l.active_amount(BASE).unwrap(), 3000);
    }

    #[test]
    fn activation_propagates() {
        let (mut l, [t1, t2, t3, t4]) = figure3();
        // Waking thread1 activates task1, which takes 1/3 of alice.
        l.wake(t1).unwrap();
        assert_eq!(l.active_amount(l.currency("alice").unwrap()).unwrap(), 300);
        assert!((l.client_value(t1).unwrap() - 1000.0 / 3.0).abs() < 1e-9);
        assert!((l.client_value(t2).unwrap() - 800.0 / 3.0).abs() < 1e-9);
        // Blocking all of alice's threads deactivates alice in base.
        for h in [t1, t2, t3] {
            l.block(h).unwrap();
        }
        assert_eq!(l.active_amount(BASE).unwrap(), 2000);
        assert_eq!(l.client_value(t4).unwrap(), 2000.0);
        assert_eq!(l.block(t1), Err(Error::AlreadyBlocked(t1)));
    }

    #[test]
    fn cycles_refused_unchanged() {
        let (mut l, _) = figure3();
        let alice = l.currency("alice").unwrap();
        let task2 = l.currency("task2").unwrap();
        let before = l.currency_values();
        let t = l.issue(task2, 5).unwrap();
        assert!(matches!(l.fund(alice, t), Err(Error::FundingCycle { .. })));
        let own = l.issue(alice, 5).unwrap();
        assert!(matches!(
            l.fund(alice, own),
            Err(Error::FundingCycle { .. })
        ));
        assert_eq!(l.holder(t).unwrap(), Holder::Nobody);
        assert_eq!(l.currency_values(), before);
        let b = l.issue(BASE, 5).unwrap();
        assert_eq!(l.fund(BASE, b), Err(Error::BaseCurrency("funded")));
    }

    #[test]
    fn bad_input_typed() {
        let mut l = Ledger::new();
        assert_eq!(l.issue(BASE, 0), Err(Error::ZeroWeight));
        assert!(matches!(l.issue(9, 1), Err(Error::UnknownCurrency(_))));
        assert_eq!(
            l.create_currency("base"),
            Err(Error::DuplicateCurrency("base".into()))
        );
        assert_eq!(l.give(3, 0), Err(Error::UnknownClient(3)));
        assert_eq!(l.ticket_value(4), Err(Error::UnknownTicket(4)));
        assert_eq!(
            l.destroy_currency(BASE),
            Err(Error::BaseCurrency("destroyed"))
        );
        let c = l.create_currency("c").unwrap();
        let t = l.issue(c, 1).unwrap();
        assert_eq!(l.destroy_currency(c), Err(Error::CurrencyInUse("c".into())));
        let h = l.new_client();
        l.give(h, t).unwrap();
        assert_eq!(l.give(h, t), Err(Error::TicketHeld(t)));
        l.destroy_ticket(t).unwrap();
        l.destroy_currency(c).unwrap();
        assert!(l.currency("c").is_err());
    }
}
