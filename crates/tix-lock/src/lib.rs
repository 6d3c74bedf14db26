//! Lottery-scheduled mutex for real programs (Waldspurger 001 §6.1, Fig. 10
//! and 11): waiters sleep on futexes, a release draws the next holder among
//! them by their funding, and with lending on each waiter lends its tickets
//! to the holder's process through the tix daemon while it waits.
//!
//! [`LotteryLock`] is plain `repr(C)` memory: put it in a `MAP_SHARED`
//! mapping and processes share it, as `PTHREAD_PROCESS_SHARED` mutexes are
//! shared. C programs use `include/tix_lock.h` and the static or shared
//! library this crate builds.

mod ffi;
mod lending;
mod lock;

pub use lending::Lending;
pub use lock::{Guard, Handoff, LockError, LotteryLock, MAX_WAITERS};
