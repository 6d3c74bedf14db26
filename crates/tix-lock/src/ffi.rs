//! The C interface (include/tix_lock.h): the same lock, errno-style returns.

use crate::lending::Lending;
use crate::lock::{Handoff, LockError, LotteryLock};
use std::ffi::{c_char, c_int, CStr};
use std::sync::OnceLock;

/// Lending for every lock this process takes through tix_lock_lock, once
/// tix_lock_lending turned it on.
static LENDING: OnceLock<Lending> = OnceLock::new();

fn code(e: &LockError) -> c_int {
    match e {
        LockError::NotHolder { .. } => libc::EPERM,
        LockError::Relock { .. } => libc::EDEADLK,
        LockError::Funding { .. } => libc::EINVAL,
    }
}

/// Make `*lock` a free lock whose draws start from `seed`.
///
/// # Safety
/// `lock` points to TIX_LOCK_SIZE writable bytes aligned to 8 that no
/// thread uses meanwhile.
#[no_mangle]
pub unsafe extern "C" fn tix_lock_init(lock: *mut LotteryLock, seed: u64) -> c_int {
    if lock.is_null() {
        return libc::EINVAL;
    }
    lock.write(LotteryLock::new(seed));
    0
}

/// # Safety
/// `lock` was initialised (or zeroed) and stays mapped.
#[no_mangle]
pub unsafe extern "C" fn tix_lock_lock(lock: *const LotteryLock, funding: u32) -> c_int {
    let Some(l) = lock.as_ref() else {
        return libc::EINVAL;
    };
    match l.acquire(funding, LENDING.get()) {
        Ok(()) => 0,
        Err(e) => code(&e),
    }
}

/// # Safety
/// As tix_lock_lock.
#[no_mangle]
pub unsafe extern "C" fn tix_lock_trylock(lock: *const LotteryLock) -> c_int {
    let Some(l) = lock.as_ref() else {
        return libc::EINVAL;
    };
    match l.try_lock() {
        Some(g) => {
            // The C caller unlocks explicitly.
            std::mem::forget(g);
            0
        }
        None => libc::EBUSY,
    }
}

/// # Safety
/// As tix_lock_lock; `out` is NULL or points to a writable tix_handoff.
#[no_mangle]
pub unsafe extern "C" fn tix_lock_unlock(lock: *const LotteryLock, out: *mut Handoff) -> c_int {
    let Some(l) = lock.as_ref() else {
        return libc::EINVAL;
    };
    match l.unlock() {
        Ok(h) => {
            if !out.is_null() {
                out.write(h.unwrap_or(Handoff {
                    tid: 0,
                    funding: 0,
                    total: 0,
                    waiters: 0,
                }));
            }
            0
        }
        Err(e) => code(&e),
    }
}

/// # Safety
/// As tix_lock_lock.
#[no_mangle]
pub unsafe extern "C" fn tix_lock_waiters(lock: *const LotteryLock) -> u32 {
    lock.as_ref().map_or(0, |l| l.waiters())
}

/// Turn lending on for this process (once): `socket` NULL for the daemon's
/// default. 0, or EALREADY.
///
/// # Safety
/// `socket` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn tix_lock_lending(socket: *const c_char) -> c_int {
    let l = if socket.is_null() {
        Lending::system()
    } else {
        Lending::new(CStr::from_ptr(socket).to_string_lossy().as_ref())
    };
    match LENDING.set(l) {
        Ok(()) => 0,
        Err(_) => libc::EALREADY,
    }
}

/// Loans this process's waiters made and had refused (lending on).
///
/// # Safety
/// `lent` and `refused` are NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn tix_lock_lending_counts(lent: *mut u64, refused: *mut u64) {
    let (l, r) = LENDING.get().map_or((0, 0), |x| x.counts());
    if !lent.is_null() {
        lent.write(l);
    }
    if !refused.is_null() {
        refused.write(r);
    }
}
