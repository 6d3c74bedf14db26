//! Write tracing's user-space half (seed 002 §1 done by the kernel alone;
//! the counting is src/bpf/ras.bpf.h): once per period a thread writes 4 to
//! each traced process's /proc/PID/clear_refs, which clears the pages'
//! soft-dirty bits and write-protects them, so the next write to each page
//! faults and is counted.
//!
//! Why soft-dirty: it needs nothing of the traced program (userfaultfd's
//! write-protection must be registered from inside the process), works on
//! any process the daemon may open, and the fault it causes passes through
//! the page-fault tracepoint with the writing thread current. Costs, named:
//! each period walks the process's page tables (O(mapped pages)), and every
//! first write to a page in a period takes a minor fault, inside the traced
//! range or not (clear_refs acts on the whole process); a process that also
//! uses soft-dirty itself (CRIU's pre-dump) sees its bits cleared.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Each traced process's clear_refs, opened once while the process was
/// pinned: a /proc file stays bound to its process, so a write after it
/// exits fails (ESRCH) instead of reaching a process that reused its pid.
#[derive(Default)]
pub struct Protector {
    files: Mutex<BTreeMap<u32, File>>,
    /// Signalled when a trace starts: with nothing traced the thread
    /// parks instead of waking every period (a 100 Hz waker beside the
    /// tasks measurably took from light tasks' shares in 60-smp.sh).
    wake: Condvar,
}

/// Clear soft-dirty (and write-protect) every page of the process.
fn protect(f: &mut File) -> std::io::Result<()> {
    f.write_all(b"4")
}

impl Protector {
    /// Start protecting `tgid` (its pages are protected now, then each
    /// period). The file must be the process's clear_refs, opened write-only.
    pub fn add(&self, tgid: u32, mut f: File) -> std::io::Result<()> {
        protect(&mut f)?;
        self.files.lock().unwrap().insert(tgid, f);
        self.wake.notify_all();
        Ok(())
    }

    pub fn remove(&self, tgid: u32) {
        self.files.lock().unwrap().remove(&tgid);
    }

    /// One period's protection of every traced process; those that have
    /// exited are dropped (the daemon's prune forgets their traces).
    pub fn protect_all(&self) {
        self.files.lock().unwrap().retain(|_, f| protect(f).is_ok());
    }

    /// The protecting thread, until `stop`.
    pub fn spawn(self: &Arc<Self>, period: Duration, stop: Arc<AtomicBool>) {
        let me = Arc::clone(self);
        std::thread::Builder::new()
            .name("tix-trace".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    {
                        let files = me.files.lock().unwrap();
                        if files.is_empty() {
                            // Parked; the timeout only rechecks `stop`.
                            let _ = me.wake.wait_timeout(files, Duration::from_secs(1));
                            continue;
                        }
                    }
                    std::thread::sleep(period);
                    me.protect_all();
                }
            })
            .expect("spawning the tracing thread");
    }
}

/// Does this kernel keep soft-dirty bits (CONFIG_MEM_SOFT_DIRTY)? Without
/// them clear_refs' 4 is accepted and does nothing, and tracing would count
/// nothing without a word: probed once on this process (a page written, its
/// bit cleared, written again) so that tix trace can refuse instead. Also
/// run by vm/tests/78-trace-ras.sh through a real trace.
pub fn soft_dirty_works() -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let dirty = |a: usize| -> Option<bool> {
        let mut pm = File::open("/proc/self/pagemap").ok()?;
        pm.seek(SeekFrom::Start((a / 4096 * 8) as u64)).ok()?;
        let mut b = [0u8; 8];
        pm.read_exact(&mut b).ok()?;
        Some(u64::from_ne_bytes(b) >> 55 & 1 == 1)
    };
    let page = vec![0u8; 3 * 4096];
    let a = page.as_ptr() as usize + 4096;
    let a = a - a % 4096;
    let touch = |v: u8| {
        // SAFETY: a lies inside `page` (one whole page past its start,
        // rounded down), one byte written.
        unsafe { std::ptr::write_volatile(a as *mut u8, v) }
    };
    let Ok(mut f) = std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/self/clear_refs")
    else {
        return false;
    };
    touch(1);
    let before = dirty(a);
    if protect(&mut f).is_err() {
        return false;
    }
    let cleared = dirty(a);
    touch(2);
    let again = dirty(a);
    drop(page);
    before == Some(true) && cleared == Some(false) && again == Some(true)
}
