//! Ticket transfers (seed 001 §3.3, §5.3's client/server, Fig. 7): a process
//! lends tickets to another for the duration of a call and gets them back
//! when the call ends (`tix return`), when the loan's time runs out, or
//! when either process exits.
//!
//! A loan moves tickets between two holders of the same currency, so the
//! currency's total is conserved and nobody outside it is diluted; the
//! lender keeps at least one ticket (you lend only what you hold). Across
//! currencies a loan would need a process funded by two currencies at once,
//! which the kernel's one-holding-per-process tables cannot express yet:
//! such a loan is refused, not approximated.

use crate::daemon::{Backend, Caller, Daemon, ProcId};
use crate::{ErrorKind, LoanRow, Response, MAX_TICKETS, MIN_TICKETS};
use serde::{Deserialize, Serialize};

/// Loans in all, and per lending uid.
pub const MAX_LOANS: usize = 4096;
pub const MAX_LOANS_PER_UID: usize = 256;
/// Longest loan, seconds (a call that outlives this is not a call).
pub const MAX_LOAN_SECS: u64 = 86_400;

/// One outstanding loan, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Loan {
    pub id: u64,
    pub from: ProcId,
    pub to: ProcId,
    pub amount: u64,
    pub currency: u32,
    /// Lender's uid (who may return it early besides CAP_SYS_NICE).
    pub uid: u32,
    /// CLOCK_MONOTONIC ns at which it returns by itself (None: on return
    /// or exit only).
    pub until_ns: Option<u64>,
}

fn refuse(kind: ErrorKind, msg: String) -> Response {
    Response::error(kind, msg)
}

impl<B: Backend> Daemon<B> {
    fn loan_row(&self, l: &Loan, now_ns: u64) -> LoanRow {
        LoanRow {
            id: l.id,
            from: l.from.tgid,
            to: l.to.tgid,
            amount: l.amount,
            currency: if l.currency == 0 {
                "user".into()
            } else {
                self.saved
                    .currencies
                    .iter()
                    .find(|c| c.id == l.currency)
                    .map_or_else(|| format!("#{}", l.currency), |c| c.name.clone())
            },
            secs_left: l.until_ns.map(|u| u.saturating_sub(now_ns) / 1_000_000_000),
        }
    }

    /// Move `amount` tickets from `from` to `to` (negative: back), both
    /// recorded; on any failure neither entry changes.
    fn shift(&mut self, from: ProcId, to: ProcId, amount: i64) -> Result<(), String> {
        let (bf, bt) = (self.backend.entry(from.tgid), self.backend.entry(to.tgid));
        let r = self
            .add_tickets(from, -amount)
            .and_then(|_| self.add_tickets(to, amount));
        if r.is_err() {
            let _ = self.backend.put_entry(from.tgid, bf);
            let _ = self.backend.put_entry(to.tgid, bt);
        }
        r
    }

    /// `tix lend FROM TO AMOUNT [--for SECS]`.
    pub(crate) fn lend(
        &mut self,
        caller: &Caller,
        from: u32,
        to: u32,
        amount: u64,
        secs: Option<u64>,
    ) -> Response {
        let now_ns = self.backend.now_ns();
        if !(MIN_TICKETS..=MAX_TICKETS).contains(&amount) {
            return refuse(
                ErrorKind::OutOfRange,
                format!("a loan must be {MIN_TICKETS}..{MAX_TICKETS} tickets (got {amount})"),
            );
        }
        if secs.is_some_and(|s| s == 0 || s > MAX_LOAN_SECS) {
            return refuse(
                ErrorKind::OutOfRange,
                format!("a loan lasts 1..{MAX_LOAN_SECS} seconds"),
            );
        }
        let Some((pf, ff)) = self.backend.pin(from) else {
            return refuse(ErrorKind::NoSuchProcess, format!("no such process: {from}"));
        };
        let Some((pt, ft)) = self.backend.pin(to) else {
            return refuse(ErrorKind::NoSuchProcess, format!("no such process: {to}"));
        };
        if ff.id == ft.id {
            return refuse(
                ErrorKind::BadRequest,
                "a process cannot lend to itself".into(),
            );
        }
        if !(caller.privileged || caller.uid == ff.uid) {
            return refuse(
                ErrorKind::NotPermitted,
                format!(
                    "not permitted: process {from} belongs to uid {} (you lend only what you hold)",
                    ff.uid
                ),
            );
        }
        let (hf, ht) = (self.holding(ff.id), self.holding(ft.id));
        // Same currency: the user's own only between one owner's processes.
        if hf.currency != ht.currency || (hf.currency == 0 && ff.uid != ft.uid) {
            return refuse(
                ErrorKind::BadRequest,
                format!(
                    "process {to} holds its tickets in another currency than {from}'s; loans move tickets within one currency"
                ),
            );
        }
        if amount >= hf.tickets {
            return refuse(
                ErrorKind::OutOfRange,
                format!(
                    "process {from} holds {} tickets: it can lend at most {}",
                    hf.tickets,
                    hf.tickets - 1
                ),
            );
        }
        if ht.tickets + amount > MAX_TICKETS {
            return refuse(
                ErrorKind::OutOfRange,
                format!(
                    "process {to} holds {}: {amount} more would pass {MAX_TICKETS}",
                    ht.tickets
                ),
            );
        }
        let loans = &self.saved.loans;
        if loans.len() >= MAX_LOANS
            || loans.iter().filter(|l| l.uid == caller.uid).count() >= MAX_LOANS_PER_UID
        {
            return refuse(
                ErrorKind::OutOfRange,
                format!(
                    "too many loans (at most {MAX_LOANS_PER_UID} per user, {MAX_LOANS} in all)"
                ),
            );
        }
        let loan = Loan {
            id: self.saved.loans.iter().map(|l| l.id).max().unwrap_or(0) + 1,
            from: ff.id,
            to: ft.id,
            amount,
            currency: hf.currency,
            uid: ff.uid,
            until_ns: secs.map(|s| now_ns.saturating_add(s * 1_000_000_000)),
        };
        let before = self.saved.clone();
        if let Err(e) = self.shift(ff.id, ft.id, amount as i64) {
            return refuse(ErrorKind::Internal, format!("ticket table: {e}"));
        }
        let mut next = self.saved.clone();
        let mut procs = next.proc_map();
        procs.insert(ff.id, self.holding(ff.id));
        procs.insert(ft.id, self.holding(ft.id));
        next.set_procs(&procs);
        next.loans.push(loan.clone());
        let both_alive =
            self.backend.recheck(&pf) == Some(ff) && self.backend.recheck(&pt) == Some(ft);
        let saved = both_alive && self.backend.save(&next).is_ok();
        if !saved {
            let _ = self.shift(ff.id, ft.id, -(amount as i64));
            self.saved = before;
            return refuse(
                ErrorKind::Internal,
                "a process exited or changed owner, or the record failed; nothing changed".into(),
            );
        }
        self.saved = next;
        Response::Loan(self.loan_row(&loan, now_ns))
    }

    /// Give a loan's tickets back: from the borrower to the lender, or to
    /// whichever of them is still alive.
    fn settle(&mut self, l: &Loan) {
        let (fa, ta) = (self.backend.alive(l.from), self.backend.alive(l.to));
        if fa && ta {
            let _ = self.shift(l.from, l.to, -(l.amount as i64));
        } else if fa || ta {
            // One side is gone: the other alone is put right (the lender
            // gets the tickets back, or the borrower's extra goes).
            let (id, delta) = if fa {
                (l.from, l.amount as i64)
            } else {
                (l.to, -(l.amount as i64))
            };
            let _ = self.add_tickets(id, delta);
        }
    }

    /// `tix return ID`: the lender (or CAP_SYS_NICE) ends a loan early.
    pub(crate) fn give_back(&mut self, caller: &Caller, id: u64) -> Response {
        let now_ns = self.backend.now_ns();
        let Some(l) = self.saved.loans.iter().find(|l| l.id == id).cloned() else {
            return refuse(ErrorKind::BadRequest, format!("no such loan: {id}"));
        };
        if !(caller.privileged || caller.uid == l.uid) {
            return refuse(
                ErrorKind::NotPermitted,
                format!("not permitted: loan {id} is uid {}'s", l.uid),
            );
        }
        let row = self.loan_row(&l, now_ns);
        self.close(&[l]);
        Response::Loan(row)
    }

    fn close(&mut self, done: &[Loan]) {
        for l in done {
            self.settle(l);
        }
        let mut next = self.saved.clone();
        next.loans.retain(|l| !done.iter().any(|d| d.id == l.id));
        let mut procs = next.proc_map();
        for l in done {
            for id in [l.from, l.to] {
                if self.backend.alive(id) {
                    procs.insert(id, self.holding(id));
                } else {
                    procs.remove(&id);
                }
            }
        }
        next.set_procs(&procs);
        // The tables already hold the returned tickets; a failed record is
        // retried by the next sync of the table.
        let _ = self.backend.save(&next);
        self.saved = next;
    }

    /// Called by the daemon's loop: loans whose time ran out or whose
    /// lender or borrower exited are returned. Returns how many.
    pub fn expire_loans(&mut self) -> usize {
        let now_ns = self.backend.now_ns();
        let done: Vec<Loan> = self
            .saved
            .loans
            .iter()
            .filter(|l| {
                l.until_ns.is_some_and(|u| u <= now_ns)
                    || !self.backend.alive(l.from)
                    || !self.backend.alive(l.to)
            })
            .cloned()
            .collect();
        if !done.is_empty() {
            self.close(&done);
        }
        done.len()
    }

    pub(crate) fn list_loans(&self) -> Response {
        let now_ns = self.backend.now_ns();
        Response::Loans {
            loans: self
                .saved
                .loans
                .iter()
                .map(|l| self.loan_row(l, now_ns))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::daemon::memory::{user, MemBackend, ALICE, BOB};
    use crate::daemon::{Caller, Daemon};
    use crate::{ErrorKind, Request, Response};
    use std::collections::BTreeMap;

    const A: Caller = user(ALICE);
    const B: Caller = user(BOB);

    /// alice's client 10 (400 tickets) and server 30 (100), bob's 20.
    fn daemon() -> Daemon<MemBackend> {
        let b = MemBackend::default()
            .with_proc(10, 10, 500, ALICE)
            .with_proc(30, 30, 700, ALICE)
            .with_proc(20, 20, 600, BOB);
        let mut d = Daemon::new(b, BTreeMap::new());
        let r = d.handle(
            &A,
            &Request::SetTickets {
                pid: 10,
                tickets: 400,
            },
        );
        assert!(matches!(r, Some(Response::Tickets { .. })));
        d
    }

    fn lend(
        d: &mut Daemon<MemBackend>,
        c: &Caller,
        from: u32,
        to: u32,
        n: u64,
        secs: Option<u64>,
    ) -> Response {
        d.handle(
            c,
            &Request::Lend {
                from,
                to,
                amount: n,
                secs,
            },
        )
        .unwrap()
    }

    fn tickets(d: &Daemon<MemBackend>, tgid: u32) -> u64 {
        d.backend.entries.get(&tgid).map_or(100, |e| e.tickets)
    }

    #[test]
    fn a_loan_moves_tickets_and_they_come_back_on_time_return_or_exit() {
        let mut d = daemon();
        d.backend.now = 1_000;
        let r = lend(&mut d, &A, 10, 30, 300, Some(5));
        let Response::Loan(l) = r else {
            panic!("{r:?}")
        };
        assert_eq!((tickets(&d, 10), tickets(&d, 30)), (100, 400));
        assert_eq!(d.backend.disk.as_ref().unwrap().loans.len(), 1);
        assert_eq!(l.secs_left, Some(5));
        d.backend.now += 4_000_000_000;
        assert_eq!(d.expire_loans(), 0);
        d.backend.now += 1_000_000_000;
        assert_eq!(d.expire_loans(), 1);
        assert_eq!((tickets(&d, 10), tickets(&d, 30)), (400, 100));
        assert!(d.saved.loans.is_empty());

        // Returned early by the lender; a stranger may not.
        let Response::Loan(l) = lend(&mut d, &A, 10, 30, 50, None) else {
            panic!()
        };
        let r = d.handle(&B, &Request::Return { id: l.id }).unwrap();
        assert!(matches!(
            r,
            Response::Error {
                kind: ErrorKind::NotPermitted,
                ..
            }
        ));
        assert_eq!(tickets(&d, 30), 150);
        d.handle(&A, &Request::Return { id: l.id }).unwrap();
        assert_eq!((tickets(&d, 10), tickets(&d, 30)), (400, 100));

        // The borrower exits: the lender gets its tickets back.
        lend(&mut d, &A, 10, 30, 200, None);
        d.backend.procs.remove(&30);
        assert_eq!(d.expire_loans(), 1);
        assert_eq!(tickets(&d, 10), 400);
        // The lender exits: the borrower's extra goes.
        let mut d = daemon();
        lend(&mut d, &A, 10, 30, 200, None);
        d.backend.procs.remove(&10);
        assert_eq!(d.expire_loans(), 1);
        assert_eq!(tickets(&d, 30), 100);
    }

    #[test]
    fn bad_loans_change_nothing() {
        let mut d = daemon();
        let before = (d.backend.entries.clone(), d.saved.clone());
        for (c, from, to, n, secs, kind) in [
            (A, 10, 30, 400, None, ErrorKind::OutOfRange), // all it holds
            (A, 10, 30, 0, None, ErrorKind::OutOfRange),
            (A, 10, 30, 10_001, None, ErrorKind::OutOfRange),
            (A, 10, 30, 5, Some(0), ErrorKind::OutOfRange),
            (A, 10, 10, 5, None, ErrorKind::BadRequest),
            (A, 10, 99, 5, None, ErrorKind::NoSuchProcess),
            (A, 10, 20, 5, None, ErrorKind::BadRequest), // bob's currency
            (B, 10, 30, 5, None, ErrorKind::NotPermitted), // not bob's to lend
        ] {
            let r = lend(&mut d, &c, from, to, n, secs);
            assert!(
                matches!(r, Response::Error { kind: k, .. } if k == kind),
                "{from}->{to} {n}: {r:?}"
            );
            assert_eq!((d.backend.entries.clone(), d.saved.clone()), before);
        }
        // A failing disk: nothing moves.
        d.backend.disk_fails = true;
        let r = lend(&mut d, &A, 10, 30, 5, None);
        assert!(matches!(r, Response::Error { .. }));
        assert_eq!((tickets(&d, 10), tickets(&d, 30)), (400, 100));
        let r = d.handle(&A, &Request::Return { id: 77 }).unwrap();
        assert!(matches!(
            r,
            Response::Error {
                kind: ErrorKind::BadRequest,
                ..
            }
        ));
    }
}
