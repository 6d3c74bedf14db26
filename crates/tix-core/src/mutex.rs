//! Lottery-scheduled mutex (Waldspurger 001 §6.1, Fig. 10): each mutex has a
//! currency and one inheritance ticket in it; waiters fund the currency by
//! ticket transfers, the holder holds the inheritance ticket (own funding plus
//! every waiter's), and a release draws the next holder among the waiters.

use crate::currency::{CurrencyId, Holder, HolderId, Ledger, TicketId};
use crate::error::{Error, Result};
use crate::rng::Rng;
use crate::transfer::{Transfer, Transfers};

/// What [`LotteryMutex::acquire`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acquire {
    /// The mutex was free: the client holds it now.
    Acquired,
    /// The mutex is held: the client lent all its tickets to the mutex
    /// currency and was blocked in the ledger until a release picks it.
    Queued,
}

#[derive(Debug, Clone)]
struct Waiter {
    client: HolderId,
    /// One transfer per nonzero ticket the client held when it queued.
    lent: Vec<Transfer>,
}

/// One lottery-scheduled mutex over a shared [`Ledger`].
///
/// The mutex keeps its own [`Transfers`]: only it ever returns the tickets
/// its waiters lent. It blocks a waiter in the ledger when it queues and
/// wakes it when a release picks it; the caller's scheduler reads
/// runnability and funding from the same ledger (e.g. `CurrencyLottery::sync`).
///
/// Nested locks work through the funding graph: a holder that queues on a
/// second mutex lends the first mutex's inheritance ticket too, so the first
/// mutex's waiters fund the second one's holder. Two threads each waiting
/// for the other's mutex would close a cycle; that acquire is refused with
/// [`Error::FundingCycle`] (a deadlock) and changes nothing.
#[derive(Debug, Clone)]
pub struct LotteryMutex {
    currency: CurrencyId,
    inheritance: TicketId,
    holder: Option<HolderId>,
    /// In arrival order; the order only matters for the all-zero fallback.
    waiters: Vec<Waiter>,
    transfers: Transfers,
}

impl LotteryMutex {
    /// A free mutex with a new currency `name` (unique in the ledger) and
    /// its inheritance ticket. The ticket's amount is irrelevant — it is the
    /// only ticket issued in the currency, so it always carries all of it.
    pub fn new(ledger: &mut Ledger, name: &str) -> Result<LotteryMutex> {
        let currency = ledger.create_currency(name)?;
        let inheritance = ledger.issue(currency, 1)?;
        Ok(LotteryMutex {
            currency,
            inheritance,
            holder: None,
            waiters: Vec::new(),
            transfers: Transfers::new(),
        })
    }

    /// Destroy a free mutex (no holder, no waiters) and its currency;
    /// otherwise [`Error::CurrencyInUse`] and nothing changes.
    pub fn destroy(self, ledger: &mut Ledger) -> Result<()> {
        if self.holder.is_some() || !self.waiters.is_empty() {
            return Err(Error::CurrencyInUse(
                ledger.currency_name(self.currency)?.into(),
            ));
        }
        ledger.destroy_ticket(self.inheritance)?;
        ledger.destroy_currency(self.currency)
    }

    /// The mutex currency.
    pub fn currency(&self) -> CurrencyId {
        self.currency
    }

    /// The inheritance ticket (held by the holder, by nobody when free).
    pub fn inheritance_ticket(&self) -> TicketId {
        self.inheritance
    }

    pub fn holder(&self) -> Option<HolderId> {
        self.holder
    }

    /// Waiting clients in arrival order.
    pub fn waiters(&self) -> impl Iterator<Item = HolderId> + '_ {
        self.waiters.iter().map(|w| w.client)
    }

    pub fn is_waiting(&self, client: HolderId) -> bool {
        self.waiters.iter().any(|w| w.client == client)
    }

    /// The holder's effective funding in base units — its own tickets plus
    /// the inheritance ticket, i.e. own + Σ waiters' — or None when free.
    pub fn holder_funding(&self, ledger: &Ledger) -> Result<Option<f64>> {
        self.holder.map(|h| ledger.client_value(h)).transpose()
    }

    /// What a waiter currently lends the mutex, in base units. It is worth
    /// something only while the mutex currency is active, i.e. while the
    /// holder is runnable: a blocked holder passes nothing on (§4.4).
    pub fn waiter_funding(&self, ledger: &Ledger, client: HolderId) -> Result<f64> {
        let w = self
            .waiters
            .iter()
            .find(|w| w.client == client)
            .ok_or(Error::UnknownClient(client))?;
        self.lent_value(ledger, w)
    }

    fn lent_value(&self, ledger: &Ledger, w: &Waiter) -> Result<f64> {
        let mut v = 0.0;
        for &t in &w.lent {
            v += ledger.ticket_value(self.transfers.record(t)?.lent)?;
        }
        Ok(v)
    }

    /// `client` asks for the mutex. Free: it takes the inheritance ticket
    /// ([`Acquire::Acquired`]). Held: every nonzero ticket it holds is lent
    /// whole to the mutex currency and it is blocked ([`Acquire::Queued`]).
    ///
    /// Errors, nothing changed: unknown client; a blocked client (it cannot
    /// be running to ask); the holder or a waiter asking again
    /// ([`Error::AlreadyAcquired`]); a lend that would close a funding cycle
    /// (deadlock, [`Error::FundingCycle`]).
    pub fn acquire(&mut self, ledger: &mut Ledger, client: HolderId) -> Result<Acquire> {
        if !ledger.is_runnable(client)? {
            return Err(Error::Blocked(client));
        }
        if self.holder == Some(client) || self.is_waiting(client) {
            return Err(Error::AlreadyAcquired(client));
        }
        if self.holder.is_none() {
            ledger.give(client, self.inheritance)?;
            self.holder = Some(client);
            return Ok(Acquire::Acquired);
        }
        let held: Vec<TicketId> = ledger.held(client)?.to_vec();
        let mut lent = Vec::with_capacity(held.len());
        for t in held {
            let amount = ledger.ticket_amount(t)?;
            if amount == 0 {
                // Already lent elsewhere in full; nothing left to fund with.
                continue;
            }
            match self
                .transfers
                .transfer(ledger, t, amount, Holder::Currency(self.currency))
            {
                Ok(x) => lent.push(x),
                Err(e) => {
                    for x in lent.into_iter().rev() {
                        self.transfers.undo(ledger, x)?;
                    }
                    return Err(e);
                }
            }
        }
        ledger.block(client)?;
        self.waiters.push(Waiter { client, lent });
        Ok(Acquire::Queued)
    }

    /// `client` releases the mutex. With waiters, a lottery among them —
    /// each weighted by what it lends, in base units — picks the next
    /// holder: its tickets come back, it is woken and takes the inheritance
    /// ticket, so it inherits the remaining waiters' funding. Returns the new
    /// holder (None when nobody waits). The paper's releaser then yields the
    /// processor; that is the caller's scheduler's business.
    ///
    /// If every waiter lends 0 (all hold zero tickets) the earliest waiter
    /// wins, so the mutex never stalls. Approximation: the draw is over f64
    /// base-unit values with a 53-bit uniform, as `Ledger` values are f64.
    ///
    /// Errors, nothing changed: unknown client; a client other than the
    /// holder ([`Error::NotMutexHolder`]); a blocked holder
    /// ([`Error::Blocked`] — its waiters' funding is inactive then, and a
    /// blocked thread cannot run to release).
    pub fn release<R: Rng + ?Sized>(
        &mut self,
        ledger: &mut Ledger,
        client: HolderId,
        rng: &mut R,
    ) -> Result<Option<HolderId>> {
        let runnable = ledger.is_runnable(client)?;
        if self.holder != Some(client) {
            return Err(Error::NotMutexHolder(client));
        }
        if !runnable {
            return Err(Error::Blocked(client));
        }
        if self.waiters.is_empty() {
            ledger.release(self.inheritance)?;
            self.holder = None;
            return Ok(None);
        }
        let weights = self
            .waiters
            .iter()
            .map(|w| self.lent_value(ledger, w))
            .collect::<Result<Vec<f64>>>()?;
        let i = draw(&weights, rng);
        let w = self.waiters.remove(i);
        ledger.release(self.inheritance)?;
        for x in w.lent {
            self.transfers.undo(ledger, x)?;
        }
        if !ledger.is_runnable(w.client)? {
            ledger.wake(w.client)?;
        }
        ledger.give(w.client, self.inheritance)?;
        self.holder = Some(w.client);
        Ok(Some(w.client))
    }

    /// A waiter gives up (a timed-out lock, an exiting thread): its tickets
    /// come back and it is woken. Call this before removing a waiting client
    /// from the ledger. Errors: [`Error::UnknownClient`] if not waiting.
    pub fn cancel(&mut self, ledger: &mut Ledger, client: HolderId) -> Result<()> {
        let i = self
            .waiters
            .iter()
            .position(|w| w.client == client)
            .ok_or(Error::UnknownClient(client))?;
        let w = self.waiters.remove(i);
        for x in w.lent {
            self.transfers.undo(ledger, x)?;
        }
        if !ledger.is_runnable(client)? {
            ledger.wake(client)?;
        }
        Ok(())
    }
}

/// Index drawn with probability weights[i] / Σ weights (list lottery,
/// §4.2); the first index when all weights are 0. A draw that f64 rounding
/// lets run past the end goes to the last positive weight.
/// The release's lottery over integer funding, as a lock for real threads
/// keeps it (tix-lock): waiter `i` wins with probability
/// `funding[i] / Σ funding`, exactly (one uniform integer below the sum);
/// when every waiter brings 0 the first, earliest one wins, as in
/// [`LotteryMutex::release`].
pub fn draw_funded<R: Rng + ?Sized>(funding: &[u64], rng: &mut R) -> usize {
    let total = funding.iter().fold(0u64, |s, &f| s.saturating_add(f));
    if total == 0 {
        return 0;
    }
    let mut r = rng.below(total);
    for (i, &f) in funding.iter().enumerate() {
        if r < f {
            return i;
        }
        r -= f;
    }
    // Only reachable when the sum saturated; the last funded waiter.
    funding.iter().rposition(|&f| f > 0).unwrap_or(0)
}

fn draw<R: Rng + ?Sized>(weights: &[f64], rng: &mut R) -> usize {
    let total: f64 = weights.iter().sum();
    if total <= 0.0 {
        return 0;
    }
    let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    let r = u * total;
    let mut sum = 0.0;
    let mut last = 0;
    for (i, &w) in weights.iter().enumerate() {
        if w > 0.0 {
            sum += w;
            last = i;
            if r < sum {
                return i;
            }
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Xoshiro256;

    #[test]
    fn draw_skips_zero_weights() {
        let mut g = Xoshiro256::new(1);
        for _ in 0..1000 {
            assert_eq!(draw(&[0.0, 3.0, 0.0], &mut g), 1);
        }
        assert_eq!(draw(&[0.0, 0.0], &mut g), 0);
    }

    #[test]
    fn draw_funded_follows_the_funding() {
        let mut g = Xoshiro256::new(7);
        assert_eq!(draw_funded(&[0, 0, 0], &mut g), 0);
        assert_eq!(draw_funded(&[], &mut g), 0);
        for _ in 0..1000 {
            assert_eq!(draw_funded(&[0, 5, 0], &mut g), 1);
        }
        // 200:100:100 over n draws: the first wins Binomial(n, 1/2) times;
        // sd = sqrt(n/4) = 100 for n = 40000; bound 4 sd.
        let n = 40_000;
        let mut wins = [0u64; 3];
        for _ in 0..n {
            wins[draw_funded(&[200, 100, 100], &mut g)] += 1;
        }
        assert!((wins[0] as f64 - 20_000.0).abs() < 400.0, "{wins:?}");
        // Each 100 waiter: Binomial(n, 1/4), sd = sqrt(n*3/16) = 86.6.
        for w in &wins[1..] {
            assert!((*w as f64 - 10_000.0).abs() < 4.0 * 86.6, "{wins:?}");
        }
    }
}
