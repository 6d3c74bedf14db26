//! The lock itself (Waldspurger 001 §6.1): a holder, a table of waiters each
//! sleeping on its own futex word, and a release that draws the next holder
//! among them by funding (`tix_core::mutex::draw_funded`) and hands the lock
//! to it directly, as the seed moves the inheritance ticket to the winner.

use crate::lending::Lending;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};
use tix_core::mutex::draw_funded;
use tix_core::rng::SplitMix64;

/// Waiters that queue for the draw at once; more spin on sched_yield until
/// a slot frees (they take part in no draw meanwhile).
pub const MAX_WAITERS: usize = 32;

// A slot's state, also its futex word.
const FREE: u32 = 0;
const WAITING: u32 = 1;
const GRANTED: u32 = 2;

#[repr(C)]
pub(crate) struct Slot {
    pub(crate) state: AtomicU32,
    tid: AtomicU32,
    pub(crate) tgid: AtomicU32,
    pub(crate) funding: AtomicU32,
    /// 1 while the waiter or a new holder talks to the daemon for this slot.
    fund_busy: AtomicU32,
    /// The process this slot's funding went to (0: none yet).
    pub(crate) lent_to: AtomicU32,
    /// The daemon's id of that loan (0: no loan, e.g. same process or refused).
    pub(crate) loan: AtomicU64,
}

impl Slot {
    const fn new() -> Slot {
        Slot {
            state: AtomicU32::new(FREE),
            tid: AtomicU32::new(0),
            tgid: AtomicU32::new(0),
            funding: AtomicU32::new(0),
            fund_busy: AtomicU32::new(0),
            lent_to: AtomicU32::new(0),
            loan: AtomicU64::new(0),
        }
    }

    /// Run `f` as the one party managing this slot's loan.
    fn with_fund(&self, f: impl FnOnce()) {
        while self
            .fund_busy
            .compare_exchange(0, 1, Acquire, Relaxed)
            .is_err()
        {
            yield_now();
        }
        f();
        self.fund_busy.store(0, Release);
    }
}

/// A lottery-scheduled mutex. All-zero memory is a free lock (seed 0), so
/// a zeroed `MAP_SHARED` page or a static works without [`LotteryLock::new`].
///
/// Accepted limits, as with a plain futex mutex: a holder that dies keeps
/// the lock held (no robust-list recovery), and a thread killed inside the
/// few instructions of the table's guard wedges the lock.
#[repr(C)]
pub struct LotteryLock {
    /// Spin guard over the table and the holder fields (a few instructions).
    guard: AtomicU32,
    holder: AtomicU32,
    holder_tgid: AtomicU32,
    waiting: AtomicU32,
    /// The draws' SplitMix64 counter.
    rng: AtomicU64,
    acquisitions: AtomicU64,
    handoffs: AtomicU64,
    slots: [Slot; MAX_WAITERS],
}

/// The size C callers reserve (`TIX_LOCK_SIZE` in tix_lock.h).
pub const LOCK_SIZE: usize = 1064;
const _: () = assert!(std::mem::size_of::<LotteryLock>() == LOCK_SIZE);
const _: () = assert!(std::mem::align_of::<LotteryLock>() == 8);

/// A release's draw: who won, and what was in the lottery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Handoff {
    /// The new holder's thread id.
    pub tid: u32,
    /// Its funding.
    pub funding: u32,
    /// All waiters' funding, the winner's included.
    pub total: u64,
    /// Waiters in the draw, the winner included.
    pub waiters: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockError {
    /// unlock by a thread that does not hold the lock: nothing changed.
    NotHolder { holder: u32, caller: u32 },
    /// lock by the thread that holds it (it would wait for itself forever).
    Relock { tid: u32 },
    /// Funding above the tickets any process can hold.
    Funding { funding: u64 },
}

impl std::fmt::Display for LockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockError::NotHolder { holder, caller } => write!(
                f,
                "unlock by thread {caller}, which does not hold the lock (holder: {})",
                if *holder == 0 {
                    "none".to_string()
                } else {
                    format!("thread {holder}")
                }
            ),
            LockError::Relock { tid } => write!(f, "thread {tid} already holds the lock"),
            LockError::Funding { funding } => write!(
                f,
                "funding must be 0..={} tickets (got {funding})",
                tix_ctl::MAX_TICKETS
            ),
        }
    }
}

impl std::error::Error for LockError {}

/// Holds the lock until dropped; stays on its thread, the holder.
pub struct Guard<'a> {
    lock: &'a LotteryLock,
    _not_send: PhantomData<*const ()>,
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        // Cannot fail: this thread holds the lock.
        let _ = self.lock.unlock();
    }
}

fn tid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}

fn yield_now() {
    // SAFETY: sched_yield has no preconditions.
    unsafe {
        libc::sched_yield();
    }
}

/// Shared (not FUTEX_PRIVATE) futex calls, so a lock in a MAP_SHARED
/// mapping works between processes.
fn futex_wait(word: &AtomicU32, expected: u32) {
    // SAFETY: the word lives as long as the lock; a spurious return
    // (EINTR, EAGAIN) is handled by the caller's loop.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

fn futex_wake(word: &AtomicU32) {
    // SAFETY: as futex_wait.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, 1);
    }
}

impl Default for LotteryLock {
    fn default() -> Self {
        LotteryLock::new(0)
    }
}

impl LotteryLock {
    /// A free lock whose draws start from `seed`.
    pub const fn new(seed: u64) -> LotteryLock {
        LotteryLock {
            guard: AtomicU32::new(0),
            holder: AtomicU32::new(0),
            holder_tgid: AtomicU32::new(0),
            waiting: AtomicU32::new(0),
            rng: AtomicU64::new(seed),
            acquisitions: AtomicU64::new(0),
            handoffs: AtomicU64::new(0),
            slots: [const { Slot::new() }; MAX_WAITERS],
        }
    }

    fn enter(&self) {
        let mut spins = 0u32;
        while self
            .guard
            .compare_exchange_weak(0, 1, Acquire, Relaxed)
            .is_err()
        {
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                // The guard's holder may be preempted: let it run.
                yield_now();
            }
        }
    }

    fn leave(&self) {
        self.guard.store(0, Release);
    }

    /// The holder's thread id, 0 when free.
    pub fn holder(&self) -> u32 {
        self.holder.load(Acquire)
    }

    /// Threads queued for the next draw.
    pub fn waiters(&self) -> u32 {
        self.waiting.load(Acquire)
    }

    /// Times the lock was taken, and of those, handed over by a draw.
    pub fn counts(&self) -> (u64, u64) {
        (self.acquisitions.load(Relaxed), self.handoffs.load(Relaxed))
    }

    /// Take the lock if it is free.
    pub fn try_lock(&self) -> Option<Guard<'_>> {
        self.take_if_free(tid()).then(|| self.guard_of())
    }

    fn guard_of(&self) -> Guard<'_> {
        Guard {
            lock: self,
            _not_send: PhantomData,
        }
    }

    fn take_if_free(&self, me: u32) -> bool {
        self.enter();
        let free = self.holder.load(Relaxed) == 0;
        if free {
            self.holder.store(me, Release);
            self.holder_tgid.store(std::process::id(), Release);
            self.acquisitions.fetch_add(1, Relaxed);
        }
        self.leave();
        free
    }

    /// Take the lock, waiting with `funding` tickets in the release's draw.
    pub fn lock(&self, funding: u32) -> Result<Guard<'_>, LockError> {
        self.acquire(funding, None)?;
        Ok(self.guard_of())
    }

    /// As [`lock`](Self::lock), and while waiting lend `funding` tickets of
    /// this process to the holder's process through the daemon (seed
    /// Fig. 10: the holder runs on its own funding plus its waiters').
    pub fn lock_lending(&self, funding: u32, lending: &Lending) -> Result<Guard<'_>, LockError> {
        self.acquire(funding, Some(lending))?;
        Ok(self.guard_of())
    }

    pub(crate) fn acquire(&self, funding: u32, lending: Option<&Lending>) -> Result<(), LockError> {
        if funding as u64 > tix_ctl::MAX_TICKETS {
            return Err(LockError::Funding {
                funding: funding as u64,
            });
        }
        let me = tid();
        if self.holder.load(Acquire) == me {
            return Err(LockError::Relock { tid: me });
        }
        loop {
            self.enter();
            if self.holder.load(Relaxed) == 0 {
                self.holder.store(me, Release);
                self.holder_tgid.store(std::process::id(), Release);
                self.acquisitions.fetch_add(1, Relaxed);
                self.leave();
                return Ok(());
            }
            let Some(slot) = self.slots.iter().find(|s| s.state.load(Relaxed) == FREE) else {
                self.leave();
                yield_now();
                continue;
            };
            slot.tid.store(me, Relaxed);
            slot.tgid.store(std::process::id(), Relaxed);
            slot.funding.store(funding, Relaxed);
            slot.state.store(WAITING, Release);
            self.waiting.fetch_add(1, Relaxed);
            self.leave();
            if let Some(l) = lending {
                // The holder may have changed since: fund whoever holds now.
                slot.with_fund(|| {
                    let h = self.holder_tgid.load(Acquire);
                    if slot.lent_to.load(Relaxed) != h {
                        lend_slot(slot, h, l);
                    }
                });
            }
            while slot.state.load(Acquire) == WAITING {
                futex_wait(&slot.state, WAITING);
            }
            // GRANTED: the releaser made this thread the holder.
            if let Some(l) = lending {
                slot.with_fund(|| lend_slot(slot, 0, l));
                self.fund_from_waiters(l);
            }
            slot.state.store(FREE, Release);
            return Ok(());
        }
    }

    /// A new holder points every waiter's loan at its own process. The
    /// previous holder keeps them from its release until here: an accepted
    /// lag of one daemon round trip per waiter.
    fn fund_from_waiters(&self, lending: &Lending) {
        let me = std::process::id();
        for slot in &self.slots {
            if slot.state.load(Acquire) != WAITING {
                continue;
            }
            slot.with_fund(|| {
                if slot.state.load(Acquire) == WAITING && slot.lent_to.load(Relaxed) != me {
                    lend_slot(slot, me, lending);
                }
            });
        }
    }

    /// Release the lock: to a waiter drawn by funding, or free.
    pub fn unlock(&self) -> Result<Option<Handoff>, LockError> {
        let me = tid();
        self.enter();
        let holder = self.holder.load(Relaxed);
        if holder != me {
            self.leave();
            return Err(LockError::NotHolder { holder, caller: me });
        }
        let mut idx = [0usize; MAX_WAITERS];
        let mut funding = [0u64; MAX_WAITERS];
        let mut n = 0;
        for (i, s) in self.slots.iter().enumerate() {
            if s.state.load(Relaxed) == WAITING {
                idx[n] = i;
                funding[n] = s.funding.load(Relaxed) as u64;
                n += 1;
            }
        }
        if n == 0 {
            self.holder.store(0, Release);
            self.holder_tgid.store(0, Release);
            self.leave();
            return Ok(None);
        }
        let mut g = SplitMix64::new(self.rng.load(Relaxed));
        let w = draw_funded(&funding[..n], &mut g);
        self.rng.store(g.state(), Relaxed);
        let slot = &self.slots[idx[w]];
        let handoff = Handoff {
            tid: slot.tid.load(Relaxed),
            funding: funding[w] as u32,
            total: funding[..n].iter().sum(),
            waiters: n as u32,
        };
        self.holder.store(handoff.tid, Release);
        self.holder_tgid.store(slot.tgid.load(Relaxed), Release);
        self.waiting.fetch_sub(1, Relaxed);
        self.acquisitions.fetch_add(1, Relaxed);
        self.handoffs.fetch_add(1, Relaxed);
        slot.state.store(GRANTED, Release);
        self.leave();
        futex_wake(&slot.state);
        Ok(Some(handoff))
    }
}

/// Return the slot's loan, then lend its funding to process `to` (0: none).
/// A loan to its own process or one the daemon refuses is recorded as made
/// with no id, so it is not asked for again.
fn lend_slot(slot: &Slot, to: u32, lending: &Lending) {
    let old = slot.loan.swap(0, AcqRel);
    if old != 0 {
        lending.give_back(old);
    }
    let from = slot.tgid.load(Relaxed);
    let amount = slot.funding.load(Relaxed);
    if to != 0 && to != from && amount > 0 {
        slot.loan.store(lending.lend(from, to, amount), Release);
    }
    slot.lent_to.store(to, Release);
}
