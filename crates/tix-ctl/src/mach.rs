//! The Mach command set (seed 001 §4.5: mkcur, rmcur, fund, unfund, mktkt,
//! rmtkt, lscur, lstkt) as the daemon's rules: currencies users create, each
//! funded from one currency of its owner's, a tree down to the owner's own
//! currency, which the owner's base funds (Zepp 000 §3.2). The kernel values
//! a process holding tickets in a currency through that tree (main.bpf.c).
//!
//! One funding ticket per currency keeps the graph a tree per owner: the
//! kernel walks it at each draw with no cycle to fear, and inflation stays
//! inside the currency inflated (001 §3.3). A currency funded by several
//! (Fig. 3's shape allows it) is not offered.

use crate::daemon::{Backend, Caller, Daemon, SavedCurrency};
use crate::{CurrencyRow, ErrorKind, HoldingRow, Response, MAX_TICKETS};

/// Currencies in all, and per unprivileged owner (the kernel's table
/// holds 4096).
pub const MAX_CURRENCIES: usize = 4096;
pub const MAX_PER_OWNER: usize = 64;
/// Currencies a chain may hold below a user's own (the kernel walks 8).
pub const MAX_DEPTH: usize = 8;
pub const MAX_NAME: usize = 32;

fn bad(msg: String) -> Response {
    Response::error(ErrorKind::BadRequest, msg)
}

/// A currency name: 1..=32 of `A-Z a-z 0-9 _ -`, not starting with `-`
/// (the CLI's `AMOUNT.CURRENCY` notation needs no `.` in names).
pub fn check_name(name: &str) -> Result<(), Response> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with('-')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(bad(format!(
            "bad currency name {name:?}: 1..{MAX_NAME} of A-Z a-z 0-9 _ -, not starting with -"
        )))
    }
}

/// Currency `id`, the one funding it, and so on up to one funded by its
/// owner's base; an id naming no currency ends the walk as `Err(id)`. At
/// most MAX_DEPTH + 1 steps, so even a cycle read from a file ends.
fn ancestors(cs: &[SavedCurrency], id: u32) -> impl Iterator<Item = Result<&SavedCurrency, u32>> {
    let mut at = id;
    std::iter::from_fn(move || {
        if at == 0 {
            return None;
        }
        let step = cs.iter().find(|c| c.id == at).ok_or(at);
        at = step.map_or(0, |c| c.parent);
        Some(step)
    })
    .take(MAX_DEPTH + 1)
}

/// A state file's currencies: unique ids and names, amounts in range,
/// parents that exist with the same owner, no cycle, no chain too deep.
pub(crate) fn check_saved(cs: &[SavedCurrency]) -> Result<(), String> {
    if cs.len() > MAX_CURRENCIES {
        return Err(format!(
            "{} currencies (at most {MAX_CURRENCIES})",
            cs.len()
        ));
    }
    for (i, c) in cs.iter().enumerate() {
        check_name(&c.name).map_err(|_| format!("bad currency name {:?}", c.name))?;
        if c.id == 0 || cs[..i].iter().any(|d| d.id == c.id || d.name == c.name) {
            return Err(format!(
                "currency {:?}: id 0 or a duplicate id or name",
                c.name
            ));
        }
        if c.amount > MAX_TICKETS {
            return Err(format!(
                "currency {:?}: amount {} out of range",
                c.name, c.amount
            ));
        }
    }
    for c in cs {
        for (n, p) in ancestors(cs, c.parent).enumerate() {
            let p =
                p.map_err(|at| format!("currency {:?} is funded by unknown id {at}", c.name))?;
            if p.owner != c.owner {
                return Err(format!(
                    "currency {:?} is funded by another owner's",
                    c.name
                ));
            }
            // c and the n + 1 currencies above it so far
            if p.id == c.id || n + 2 > MAX_DEPTH {
                return Err(format!(
                    "currency {:?}: a cycle or a chain deeper than {MAX_DEPTH}",
                    c.name
                ));
            }
        }
    }
    Ok(())
}

impl<B: Backend> Daemon<B> {
    fn currency(&self, name: &str) -> Result<SavedCurrency, Response> {
        self.saved
            .currencies
            .iter()
            .find(|c| c.name == name)
            .cloned()
            .ok_or_else(|| {
                Response::error(
                    ErrorKind::NoSuchCurrency,
                    format!("no such currency: {name}"),
                )
            })
    }

    fn currency_name(&self, id: u32) -> String {
        self.saved
            .currencies
            .iter()
            .find(|c| c.id == id)
            .map_or_else(|| format!("#{id}"), |c| c.name.clone())
    }

    /// Currencies from `id` down to the owner's own: 1 for one funded by it.
    fn depth(&self, id: u32) -> usize {
        ancestors(&self.saved.currencies, id).count()
    }

    /// The longest chain of currencies funded from `id`, itself included.
    fn height(&self, id: u32) -> usize {
        1 + self
            .saved
            .currencies
            .iter()
            .filter(|c| c.parent == id && c.id != id)
            .map(|c| self.height(c.id))
            .max()
            .unwrap_or(0)
    }

    fn may_manage(caller: &Caller, c: &SavedCurrency) -> Result<(), Response> {
        if caller.privileged || caller.uid == c.owner {
            Ok(())
        } else {
            Err(Response::error(
                ErrorKind::NotPermitted,
                format!(
                    "not permitted: currency {} belongs to uid {} (only its owner or CAP_SYS_NICE)",
                    c.name, c.owner
                ),
            ))
        }
    }

    fn row(&self, c: &SavedCurrency) -> CurrencyRow {
        CurrencyRow {
            id: c.id,
            name: c.name.clone(),
            owner: c.owner,
            funded_by: if c.parent == 0 {
                format!("user:{}", c.owner)
            } else {
                self.currency_name(c.parent)
            },
            amount: c.amount,
            // Processes still holding the entry recorded for them (an
            // exited process's entry is gone from the kernel's table at
            // once; the record follows at the next sync).
            holders: self
                .saved
                .procs
                .iter()
                .filter(|p| {
                    p.currency == c.id
                        && self
                            .backend
                            .entry(p.tgid)
                            .is_some_and(|e| e.start == p.start && e.currency == c.id)
                })
                .count() as u64,
            funds: self
                .saved
                .currencies
                .iter()
                .filter(|d| d.parent == c.id)
                .count() as u64,
        }
    }

    /// Record `next`, then write `def` for currency `id`; undo the record if
    /// the kernel's table refuses.
    fn commit_currency(
        &mut self,
        next: crate::daemon::Saved,
        id: u32,
        def: Option<(u32, u64, u32)>,
    ) -> Result<(), Response> {
        if let Err(e) = self.backend.save(&next) {
            return Err(Response::error(
                ErrorKind::Internal,
                format!("recording the setting: {e}; nothing changed"),
            ));
        }
        if let Err(e) = self.backend.put_currency(id, def) {
            let _ = self.backend.save(&self.saved);
            return Err(Response::error(
                ErrorKind::Internal,
                format!("currency table: {e}"),
            ));
        }
        self.saved = next;
        Ok(())
    }

    pub(crate) fn mkcur(&mut self, caller: &Caller, name: &str) -> Response {
        let mut run = || -> Result<Response, Response> {
            check_name(name)?;
            if self.currency(name).is_ok() {
                return Err(bad(format!("currency {name} exists")));
            }
            let cs = &self.saved.currencies;
            let mine = cs.iter().filter(|c| c.owner == caller.uid).count();
            // CAP_SYS_NICE (the administrator's graph) is bounded by the
            // table alone.
            if cs.len() >= MAX_CURRENCIES || (!caller.privileged && mine >= MAX_PER_OWNER) {
                return Err(Response::error(
                    ErrorKind::OutOfRange,
                    format!(
                        "too many currencies (at most {MAX_PER_OWNER} per user, {MAX_CURRENCIES} in all)"
                    ),
                ));
            }
            let id = cs.iter().map(|c| c.id).max().unwrap_or(0) + 1;
            let c = SavedCurrency {
                id,
                name: name.to_string(),
                owner: caller.uid,
                parent: 0,
                amount: 0,
            };
            let mut next = self.saved.clone();
            next.currencies.push(c.clone());
            self.commit_currency(next, id, Some((0, 0, caller.uid)))?;
            Ok(Response::Currency(self.row(&c)))
        };
        run().unwrap_or_else(|e| e)
    }

    pub(crate) fn rmcur(&mut self, caller: &Caller, name: &str) -> Response {
        let mut run = || -> Result<Response, Response> {
            let c = self.currency(name)?;
            Self::may_manage(caller, &c)?;
            let row = self.row(&c);
            if row.funds > 0 || row.holders > 0 {
                return Err(bad(format!(
                    "currency {name} funds {} currencies and backs {} process(es); unfund and move those first",
                    row.funds, row.holders
                )));
            }
            let mut next = self.saved.clone();
            next.currencies.retain(|d| d.id != c.id);
            self.commit_currency(next, c.id, None)?;
            Ok(Response::Currency(row))
        };
        run().unwrap_or_else(|e| e)
    }

    /// fund (amount >= 1) or unfund (amount 0: worth nothing, its parent kept).
    pub(crate) fn fund(
        &mut self,
        caller: &Caller,
        name: &str,
        amount: u64,
        from: Option<&str>,
    ) -> Response {
        let mut run = || -> Result<Response, Response> {
            if amount > MAX_TICKETS {
                return Err(Response::error(
                    ErrorKind::OutOfRange,
                    format!("funding must be 1..{MAX_TICKETS} tickets (got {amount})"),
                ));
            }
            let c = self.currency(name)?;
            Self::may_manage(caller, &c)?;
            let parent = match from {
                None if amount == 0 => c.parent,
                None => 0,
                Some(f) => {
                    let p = self.currency(f)?;
                    if p.owner != c.owner {
                        return Err(Response::error(
                            ErrorKind::NotPermitted,
                            format!(
                                "not permitted: {name} (uid {}) can be funded only from its owner's currencies; {f} is uid {}'s",
                                c.owner, p.owner
                            ),
                        ));
                    }
                    if ancestors(&self.saved.currencies, p.id)
                        .any(|a| a.is_ok_and(|a| a.id == c.id))
                    {
                        return Err(bad(format!(
                            "funding {name} from {f} would make a cycle ({f} is funded by {name})"
                        )));
                    }
                    if self.depth(p.id) + self.height(c.id) > MAX_DEPTH {
                        return Err(bad(format!(
                            "funding {name} from {f} makes a chain deeper than {MAX_DEPTH} currencies"
                        )));
                    }
                    p.id
                }
            };
            let mut next = self.saved.clone();
            let e = next.currencies.iter_mut().find(|d| d.id == c.id).unwrap();
            e.parent = parent;
            e.amount = amount;
            let now = e.clone();
            self.commit_currency(next, c.id, Some((parent, amount, c.owner)))?;
            Ok(Response::Currency(self.row(&now)))
        };
        run().unwrap_or_else(|e| e)
    }

    /// mktkt / rmtkt / fundx: a process's tickets in a currency the caller
    /// owns (None: the process owner's own).
    pub(crate) fn hold(
        &mut self,
        caller: &Caller,
        pid: u32,
        tickets: u64,
        currency: Option<&str>,
    ) -> Response {
        let id = match currency {
            None => 0,
            Some(name) => match self.currency(name) {
                Err(e) => return e,
                Ok(c) => {
                    if let Err(e) = Self::may_manage(caller, &c) {
                        return e;
                    }
                    c.id
                }
            },
        };
        self.put_holding(caller, pid, tickets, Some(id))
    }

    /// Everyone sees their own currencies; CAP_SYS_NICE sees all.
    pub(crate) fn lscur(&self, caller: &Caller) -> Response {
        let currencies = self
            .saved
            .currencies
            .iter()
            .filter(|c| caller.privileged || c.owner == caller.uid)
            .map(|c| self.row(c))
            .collect();
        Response::Currencies { currencies }
    }

    /// Every process holding tickets other than the default (anyone reads,
    /// as `ltix` does).
    pub(crate) fn lstkt(&self) -> Response {
        let holdings = self
            .saved
            .procs
            .iter()
            .map(|p| HoldingRow {
                tgid: p.tgid,
                tickets: p.tickets,
                currency: if p.currency == 0 {
                    "user".into()
                } else {
                    self.currency_name(p.currency)
                },
            })
            .collect();
        Response::Holdings { holdings }
    }
}

#[cfg(test)]
mod tests {
    use crate::daemon::memory::{user, MemBackend, ALICE, BOB, ROOT};
    use crate::daemon::{Caller, Daemon, Saved};
    use crate::{ErrorKind, Request, Response};
    use std::collections::BTreeMap;

    const A: Caller = user(ALICE);
    const B: Caller = user(BOB);

    fn daemon() -> Daemon<MemBackend> {
        let b = MemBackend::default()
            .with_proc(10, 10, 500, ALICE)
            .with_proc(20, 20, 600, BOB);
        Daemon::new(b, BTreeMap::new())
    }

    fn ok(d: &mut Daemon<MemBackend>, c: &Caller, r: Request) -> Response {
        let a = d.handle(c, &r).unwrap();
        assert!(!matches!(a, Response::Error { .. }), "{r:?} -> {a:?}");
        a
    }

    fn mk(name: &str) -> Request {
        Request::MkCur { name: name.into() }
    }
    fn fund(name: &str, amount: u64, from: Option<&str>) -> Request {
        Request::Fund {
            name: name.into(),
            amount,
            from: from.map(str::to_string),
        }
    }

    #[test]
    fn a_tree_of_currencies_reaches_the_tables_and_the_record() {
        let mut d = daemon();
        ok(&mut d, &A, mk("work"));
        ok(&mut d, &A, mk("batch"));
        ok(&mut d, &A, fund("work", 300, None));
        ok(&mut d, &A, fund("batch", 100, Some("work")));
        let r = ok(
            &mut d,
            &A,
            Request::Hold {
                pid: 10,
                tickets: 200,
                currency: Some("batch".into()),
            },
        );
        assert!(matches!(r, Response::Tickets { tickets: 200, .. }));
        assert_eq!(d.backend.currencies[&1], (0, 300, ALICE));
        assert_eq!(d.backend.currencies[&2], (1, 100, ALICE));
        assert_eq!(d.backend.entries[&10].currency, 2);
        // lrenice keeps the currency; rmtkt (Hold with None) returns to user's.
        ok(
            &mut d,
            &A,
            Request::SetTickets {
                pid: 10,
                tickets: 50,
            },
        );
        assert_eq!(d.backend.entries[&10].currency, 2);
        let disk = d.backend.disk.clone().unwrap();
        assert_eq!(disk.currencies.len(), 2);
        assert_eq!(disk.procs[0].currency, 2);
        assert_eq!(Saved::parse(&disk.to_text()), Ok(disk));
        match ok(&mut d, &B, Request::ListCurrencies) {
            Response::Currencies { currencies } => assert!(currencies.is_empty()),
            r => panic!("{r:?}"),
        }
        match ok(&mut d, &ROOT, Request::ListCurrencies) {
            Response::Currencies { currencies } => {
                assert_eq!(currencies[1].funded_by, "work");
                assert_eq!(currencies[0].funded_by, format!("user:{ALICE}"));
                assert_eq!((currencies[1].holders, currencies[0].funds), (1, 1));
            }
            r => panic!("{r:?}"),
        }
        // Removal waits until nothing depends on it.
        assert!(matches!(
            d.handle(
                &A,
                &Request::RmCur {
                    name: "batch".into()
                }
            ),
            Some(Response::Error {
                kind: ErrorKind::BadRequest,
                ..
            })
        ));
        ok(
            &mut d,
            &A,
            Request::Hold {
                pid: 10,
                tickets: 100,
                currency: None,
            },
        );
        ok(
            &mut d,
            &A,
            Request::RmCur {
                name: "batch".into(),
            },
        );
        ok(
            &mut d,
            &A,
            Request::RmCur {
                name: "work".into(),
            },
        );
        assert!(d.backend.currencies.is_empty());
    }

    #[test]
    fn bad_requests_change_nothing() {
        let mut d = daemon();
        ok(&mut d, &A, mk("a"));
        ok(&mut d, &A, mk("b"));
        ok(&mut d, &B, mk("bobs"));
        ok(&mut d, &A, fund("b", 10, Some("a")));
        let before = (d.backend.clone().currencies, d.saved.clone());
        let cases: Vec<(Caller, Request, ErrorKind)> = vec![
            (A, mk(""), ErrorKind::BadRequest),
            (A, mk("x.y"), ErrorKind::BadRequest),
            (A, mk("-x"), ErrorKind::BadRequest),
            (A, mk(&"n".repeat(33)), ErrorKind::BadRequest),
            (A, mk("a"), ErrorKind::BadRequest),
            (A, fund("a", 10_001, None), ErrorKind::OutOfRange),
            (A, fund("nope", 5, None), ErrorKind::NoSuchCurrency),
            (A, fund("a", 5, Some("nope")), ErrorKind::NoSuchCurrency),
            (B, fund("a", 5, None), ErrorKind::NotPermitted),
            (A, fund("a", 5, Some("bobs")), ErrorKind::NotPermitted),
            (A, fund("a", 5, Some("b")), ErrorKind::BadRequest),
            (A, fund("a", 5, Some("a")), ErrorKind::BadRequest),
            (
                B,
                Request::Unfund { name: "a".into() },
                ErrorKind::NotPermitted,
            ),
            (
                B,
                Request::RmCur { name: "a".into() },
                ErrorKind::NotPermitted,
            ),
            (
                A,
                Request::RmCur { name: "a".into() },
                ErrorKind::BadRequest,
            ),
            (
                A,
                Request::RmCur { name: "zz".into() },
                ErrorKind::NoSuchCurrency,
            ),
            (
                A,
                Request::Hold {
                    pid: 10,
                    tickets: 5,
                    currency: Some("bobs".into()),
                },
                ErrorKind::NotPermitted,
            ),
            (
                B,
                Request::Hold {
                    pid: 10,
                    tickets: 5,
                    currency: None,
                },
                ErrorKind::NotPermitted,
            ),
            (
                A,
                Request::Hold {
                    pid: 10,
                    tickets: 0,
                    currency: Some("a".into()),
                },
                ErrorKind::OutOfRange,
            ),
            (
                A,
                Request::Hold {
                    pid: 99,
                    tickets: 5,
                    currency: Some("a".into()),
                },
                ErrorKind::NoSuchProcess,
            ),
        ];
        for (who, req, kind) in cases {
            let r = d.handle(&who, &req).unwrap();
            assert!(
                matches!(r, Response::Error { kind: k, .. } if k == kind),
                "{req:?} -> {r:?}"
            );
            assert_eq!(
                (d.backend.currencies.clone(), d.saved.clone()),
                before,
                "{req:?}"
            );
        }
        // A chain deeper than MAX_DEPTH.
        let mut prev = "b".to_string();
        for i in 0..super::MAX_DEPTH {
            let n = format!("c{i}");
            ok(&mut d, &A, mk(&n));
            let r = d.handle(&A, &fund(&n, 1, Some(&prev))).unwrap();
            if i + 2 >= super::MAX_DEPTH {
                assert!(
                    matches!(
                        r,
                        Response::Error {
                            kind: ErrorKind::BadRequest,
                            ..
                        }
                    ),
                    "{i}: {r:?}"
                );
                break;
            }
            prev = n;
        }
        // Too many for one owner.
        let mut n = 0;
        while let Response::Currency(_) = d.handle(&B, &mk(&format!("m{n}"))).unwrap() {
            n += 1;
        }
        assert_eq!(n + 1, super::MAX_PER_OWNER);
        // A disk that fails: nothing recorded, nothing in the table.
        d.backend.disk_fails = true;
        let r = d.handle(&A, &mk("late")).unwrap();
        assert!(matches!(
            r,
            Response::Error {
                kind: ErrorKind::Internal,
                ..
            }
        ));
        assert!(!d.saved.currencies.iter().any(|c| c.name == "late"));
    }

    #[test]
    fn malformed_currencies_in_a_state_file_are_refused() {
        for bad in [
            r#"{"currencies":[{"id":1,"name":"a","owner":1,"parent":1,"amount":5}]}"#,
            r#"{"currencies":[{"id":1,"name":"a","owner":1,"parent":2,"amount":5},{"id":2,"name":"b","owner":1,"parent":1,"amount":5}]}"#,
            r#"{"currencies":[{"id":1,"name":"a","owner":1,"parent":9,"amount":5}]}"#,
            r#"{"currencies":[{"id":1,"name":"a","owner":1,"parent":0,"amount":5},{"id":2,"name":"b","owner":2,"parent":1,"amount":5}]}"#,
            r#"{"currencies":[{"id":1,"name":"a","owner":1,"parent":0,"amount":10001}]}"#,
            r#"{"currencies":[{"id":1,"name":"a.b","owner":1,"parent":0,"amount":1}]}"#,
            r#"{"currencies":[{"id":1,"name":"a","owner":1,"parent":0,"amount":1},{"id":1,"name":"b","owner":1,"parent":0,"amount":1}]}"#,
            r#"{"procs":[{"tgid":1,"start":2,"tickets":5,"currency":3}]}"#,
        ] {
            assert!(Saved::parse(bad).is_err(), "{bad}");
        }
    }
}
