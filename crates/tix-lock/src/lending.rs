//! Waiters' funding of the holder through the tix daemon: a ticket transfer
//! (Waldspurger 001 §3.3, `tix lend`) from the waiter's process to the
//! holder's for as long as it waits (§6.1, Fig. 10).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// The daemon a lock's waiters lend through, and what came of it. The
/// daemon's rules hold: a process lends only tickets it holds (less one),
/// to a process of its own user (or in the same currency); a refused loan
/// leaves the waiter in the draw with its funding, unlent.
pub struct Lending {
    socket: PathBuf,
    lent: AtomicU64,
    refused: AtomicU64,
    last_refusal: Mutex<Option<String>>,
}

impl Lending {
    /// Lending through the daemon listening on `socket`.
    pub fn new(socket: impl AsRef<Path>) -> Lending {
        Lending {
            socket: socket.as_ref().to_path_buf(),
            lent: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            last_refusal: Mutex::new(None),
        }
    }

    /// Lending through the daemon's default socket.
    pub fn system() -> Lending {
        Lending::new(tix_ctl::DEFAULT_SOCKET)
    }

    /// Loans made, and loans the daemon refused (or could not be asked).
    pub fn counts(&self) -> (u64, u64) {
        (self.lent.load(Relaxed), self.refused.load(Relaxed))
    }

    /// The daemon's last refusal, as it worded it.
    pub fn last_refusal(&self) -> Option<String> {
        self.last_refusal.lock().ok().and_then(|g| g.clone())
    }

    /// A loan of `amount` tickets; its id, or 0 when refused.
    pub(crate) fn lend(&self, from: u32, to: u32, amount: u32) -> u64 {
        match tix_ctl::lend(&self.socket, from, to, amount as u64, None) {
            Ok(id) => {
                self.lent.fetch_add(1, Relaxed);
                id
            }
            Err(e) => {
                self.refused.fetch_add(1, Relaxed);
                if let Ok(mut g) = self.last_refusal.lock() {
                    *g = Some(e.to_string());
                }
                0
            }
        }
    }

    /// End a loan. A loan already ended (the daemon settles loans whose
    /// lender or borrower exited) is nothing to undo.
    pub(crate) fn give_back(&self, id: u64) {
        let _ = tix_ctl::give_back(&self.socket, id);
    }
}
