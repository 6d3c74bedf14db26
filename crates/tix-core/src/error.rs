//! Typed errors for every public constructor and operation of the core.
//! Bad input from a user (weights, ids, funding graphs, transfers) is reported
//! here, never by a panic.

use crate::sched::ClientId;
use thiserror::Error;

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    #[error("weight must be at least 1 (got 0)")]
    ZeroWeight,
    #[error("weight {got} is larger than the maximum {max}")]
    WeightTooLarge { got: u64, max: u64 },
    #[error("negative weight {0}")]
    NegativeWeight(i64),
    #[error("unknown client {0}")]
    UnknownClient(ClientId),
    #[error("client {0} is blocked")]
    Blocked(ClientId),
    #[error("client {0} is already runnable")]
    AlreadyRunnable(ClientId),
    #[error("client {0} is already blocked")]
    AlreadyBlocked(ClientId),
    #[error("client {0} was not the client picked last; charge the picked client first")]
    NotInService(ClientId),
    #[error("a picked client has not been charged yet")]
    PickPending,
    #[error("quantum must be at least 1 ns")]
    ZeroQuantum,
    #[error("unknown policy '{0}'")]
    UnknownPolicy(String),
    #[error("this policy needs burst lengths: call set_burst for client {0}")]
    MissingBurst(ClientId),
    #[error("unknown currency '{0}'")]
    UnknownCurrency(String),
    #[error("currency '{0}' already exists")]
    DuplicateCurrency(String),
    #[error("unknown ticket {0}")]
    UnknownTicket(u64),
    #[error("funding '{from}' from '{to}' would close a cycle in the funding graph")]
    FundingCycle { from: String, to: String },
    #[error("cannot transfer {wanted} tickets: only {held} held")]
    InsufficientTickets { wanted: u64, held: u64 },
    #[error("transfer {0} was already returned")]
    TransferReturned(u64),
    #[error("the base currency cannot be {0}")]
    BaseCurrency(&'static str),
    #[error("currency '{0}' still has tickets or clients")]
    CurrencyInUse(String),
    #[error("arithmetic overflow: {0}")]
    Overflow(&'static str),
    #[error("invalid parameter: {0}")]
    Invalid(String),
    #[error("{what} {got} is outside the valid range {min}..={max}")]
    OutOfRange {
        what: &'static str,
        got: u64,
        min: u64,
        max: u64,
    },
    #[error("ticket {0} is already held or funds a currency")]
    TicketHeld(u64),
    #[error("client {0} does not hold the mutex")]
    NotMutexHolder(ClientId),
    #[error("client {0} already holds or waits for the mutex")]
    AlreadyAcquired(ClientId),
    #[error("an inverse lottery needs at least 2 clients (got {0})")]
    TooFewClients(usize),
    #[error("the total of {0} is zero")]
    ZeroTotal(&'static str),
}
