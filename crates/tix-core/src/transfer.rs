//! Ticket transfers (Waldspurger 001 §3.1, §4.6): a client blocked on a
//! dependency (an RPC reply, a lock) lends tickets to the one it waits on;
//! the returned [`Transfer`] handle gives them back, as Mach destroys the
//! transfer ticket on reply.

use crate::currency::{Holder, Ledger, TicketId};
use crate::error::{Error, Result};

/// A handle to lent tickets. Returning it twice is refused with
/// [`Error::TransferReturned`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Transfer(pub u64);

/// What a live transfer moved: `amount` split off `from` into `lent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransferRecord {
    pub from: TicketId,
    pub lent: TicketId,
    pub amount: u64,
}

/// The transfers of one ledger. Kept beside the ledger so the currency
/// model stays free of transfer state.
#[derive(Debug, Clone, Default)]
pub struct Transfers {
    records: Vec<Option<TransferRecord>>,
}

impl Transfers {
    pub fn new() -> Transfers {
        Transfers::default()
    }

    /// Lend `amount` of ticket `from` to `to` (a client, or a currency to
    /// fund — Mach funds the server's currency with a ticket in the
    /// client's currency). A new ticket of `amount` in `from`'s currency is
    /// handed to `to`, and `from` shrinks by `amount` (possibly to 0); a
    /// client may divide its tickets over several transfers.
    ///
    /// Errors, with nothing changed: unknown ticket; `amount` 0
    /// ([`Error::ZeroWeight`]); more than `from` holds
    /// ([`Error::InsufficientTickets`]); `to` unknown, or a currency that
    /// `from`'s currency depends on ([`Error::FundingCycle`]).
    pub fn transfer(
        &mut self,
        ledger: &mut Ledger,
        from: TicketId,
        amount: u64,
        to: Holder,
    ) -> Result<Transfer> {
        let held = ledger.ticket_amount(from)?;
        if amount == 0 {
            return Err(Error::ZeroWeight);
        }
        if amount > held {
            return Err(Error::InsufficientTickets {
                wanted: amount,
                held,
            });
        }
        let currency = ledger.ticket_currency(from)?;
        match to {
            Holder::Nobody => {
                return Err(Error::Invalid("a transfer needs a recipient".into()));
            }
            Holder::Client(h) => {
                ledger.cli(h)?;
            }
            Holder::Currency(c) => {
                // Same checks as funding with a fresh ticket of `currency`.
                if c == crate::currency::BASE {
                    return Err(Error::BaseCurrency("funded"));
                }
                ledger.cur(c)?;
                if ledger.depends_on(currency, c) {
                    return Err(Error::FundingCycle {
                        from: ledger.currency_name(c)?.into(),
                        to: ledger.currency_name(currency)?.into(),
                    });
                }
            }
        }
        // Shrink first, then attach: a lender that is also the recipient's
        // only active funding must not see its currency flicker to zero and
        // back (the order only matters for who is momentarily active).
        ledger.set_amount_unchecked(from, held - amount);
        let lent = ledger.issue_unchecked(currency, amount);
        ledger.attach(lent, to);
        let id = self.records.len() as u64;
        self.records
            .push(Some(TransferRecord { from, lent, amount }));
        Ok(Transfer(id))
    }

    /// Give lent tickets back: the transfer ticket is destroyed and its
    /// amount returns to the ticket it came from. Returns the amount.
    pub fn undo(&mut self, ledger: &mut Ledger, t: Transfer) -> Result<u64> {
        let rec = match self.records.get(t.0 as usize) {
            None => return Err(Error::Invalid(format!("unknown transfer {}", t.0))),
            Some(None) => return Err(Error::TransferReturned(t.0)),
            Some(Some(r)) => *r,
        };
        let from_amount = ledger.ticket_amount(rec.from)?;
        ledger.ticket_amount(rec.lent)?;
        ledger.destroy_ticket(rec.lent)?;
        ledger.set_amount_unchecked(rec.from, from_amount + rec.amount);
        self.records[t.0 as usize] = None;
        Ok(rec.amount)
    }

    /// A live transfer's record.
    pub fn record(&self, t: Transfer) -> Result<TransferRecord> {
        match self.records.get(t.0 as usize) {
            None => Err(Error::Invalid(format!("unknown transfer {}", t.0))),
            Some(None) => Err(Error::TransferReturned(t.0)),
            Some(Some(r)) => Ok(*r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::currency::BASE;

    #[test]
    fn rpc_lend_and_return() {
        // A client worth 300 blocks on an RPC and lends 200 to a server.
        let mut l = Ledger::new();
        let client = l.new_client();
        let server = l.new_client();
        let tc = l.issue(BASE, 300).unwrap();
        let ts = l.issue(BASE, 100).unwrap();
        l.give(client, tc).unwrap();
        l.give(server, ts).unwrap();
        let mut x = Transfers::new();
        let h = x.transfer(&mut l, tc, 200, Holder::Client(server)).unwrap();
        l.block(client).unwrap();
        assert_eq!(l.client_value(server).unwrap(), 300.0);
        assert_eq!(l.client_value(client).unwrap(), 0.0);
        assert_eq!(x.undo(&mut l, h), Ok(200));
        l.wake(client).unwrap();
        assert_eq!(l.client_value(client).unwrap(), 300.0);
        assert_eq!(l.client_value(server).unwrap(), 100.0);
        assert_eq!(x.undo(&mut l, h), Err(Error::TransferReturned(h.0)));
    }

    #[test]
    fn more_than_held_refused() {
        let mut l = Ledger::new();
        let c = l.new_client();
        let t = l.issue(BASE, 10).unwrap();
        l.give(c, t).unwrap();
        let mut x = Transfers::new();
        assert_eq!(
            x.transfer(&mut l, t, 11, Holder::Client(c)),
            Err(Error::InsufficientTickets {
                wanted: 11,
                held: 10
            })
        );
        assert_eq!(
            x.transfer(&mut l, t, 0, Holder::Client(c)),
            Err(Error::ZeroWeight)
        );
        assert_eq!(l.ticket_amount(t), Ok(10));
        // Split over two servers, then all of it returns.
        let a = x.transfer(&mut l, t, 4, Holder::Client(c)).unwrap();
        let b = x.transfer(&mut l, t, 6, Holder::Client(c)).unwrap();
        assert_eq!(l.ticket_amount(t), Ok(0));
        assert_eq!(
            x.transfer(&mut l, t, 1, Holder::Client(c)),
            Err(Error::InsufficientTickets { wanted: 1, held: 0 })
        );
        x.undo(&mut l, b).unwrap();
        x.undo(&mut l, a).unwrap();
        assert_eq!(l.ticket_amount(t), Ok(10));
        assert_eq!(l.client_value(c), Ok(10.0));
    }

    #[test]
    fn funding_a_server_currency() {
        // Mach style: a ticket in the client's currency funds the server's.
        let mut l = Ledger::new();
        let cc = l.create_currency("client").unwrap();
        let sc = l.create_currency("server").unwrap();
        let fund = l.issue(BASE, 500).unwrap();
        l.fund(cc, fund).unwrap();
        let thread = l.new_client();
        let t = l.issue(cc, 100).unwrap();
        l.give(thread, t).unwrap();
        let sthread = l.new_client();
        let st = l.issue(sc, 1).unwrap();
        l.give(sthread, st).unwrap();
        let mut x = Transfers::new();
        let h = x.transfer(&mut l, t, 100, Holder::Currency(sc)).unwrap();
        assert_eq!(l.client_value(sthread), Ok(500.0));
        // The server's currency may not fund back into the client's.
        let back = l.issue(sc, 1).unwrap();
        assert!(matches!(l.fund(cc, back), Err(Error::FundingCycle { .. })));
        assert!(matches!(
            x.transfer(&mut l, st, 1, Holder::Currency(cc)),
            Err(Error::FundingCycle { .. })
        ));
        x.undo(&mut l, h).unwrap();
        assert_eq!(l.client_value(sthread), Ok(0.0));
        assert_eq!(l.client_value(thread), Ok(500.0));
    }
}
