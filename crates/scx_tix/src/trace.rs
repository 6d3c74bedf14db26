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
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Each traced process's clear_refs, opened once while the process was
/// pinned: a /proc file stays bound to its process, so a write after it
/// exits fails (ESRCH) instead of reaching a process that reused its pid.
///
/// The fault counter (ras.bpf.h's tp_btf program) is attached only while
/// something is traced: attached for good it ran on every user page fault
/// of the machine, 0.7 µs each under TCG (vm/bench/run.sh). It is attached
/// before the first process's pages are protected, so no counted fault is
/// missed, and detached once the last trace ends.
#[derive(Default)]
pub struct Protector {
    files: Mutex<BTreeMap<u32, File>>,
    /// The counting program (loaded, not attached); None in host tests.
    counter: Option<OwnedFd>,
    /// Its attachment while something is traced.
    link: Mutex<Option<OwnedFd>>,
    /// Signalled when a trace starts: with nothing traced the thread
    /// parks instead of waking every period (a 100 Hz waker beside the
    /// tasks measurably took from light tasks' shares in 60-smp.sh).
    wake: Condvar,
}

/// Clear soft-dirty (and write-protect) every page of the process.
fn protect(f: &mut File) -> std::io::Result<()> {
    f.write_all(b"4")
}

/// Attach a loaded tp_btf program (BPF_RAW_TRACEPOINT_OPEN with no name:
/// the tracepoint is the one the program was loaded for). The returned fd
/// holds the attachment; closing it detaches.
fn attach_tp_btf(prog: &OwnedFd) -> std::io::Result<OwnedFd> {
    #[repr(C)]
    struct RawTpOpen {
        name: u64,
        prog_fd: u32,
        _pad: u32,
        cookie: u64,
    }
    const BPF_RAW_TRACEPOINT_OPEN: libc::c_long = 17;
    let attr = RawTpOpen {
        name: 0,
        prog_fd: prog.as_raw_fd() as u32,
        _pad: 0,
        cookie: 0,
    };
    // SAFETY: attr is a valid bpf_attr prefix for this command, its size
    // passed alongside; the kernel reads it and returns a new fd or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_RAW_TRACEPOINT_OPEN,
            &attr as *const RawTpOpen,
            std::mem::size_of::<RawTpOpen>() as u32,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel returned a new fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

impl Protector {
    /// A protector that attaches `counter` (the loaded fault-counting
    /// program) while it protects anything.
    pub fn new(counter: OwnedFd) -> Self {
        Protector {
            counter: Some(counter),
            ..Default::default()
        }
    }

    /// The counter attached if something is traced, detached if not.
    fn counter_for(&self, traced: bool) -> std::io::Result<()> {
        let Some(prog) = &self.counter else {
            return Ok(());
        };
        let mut link = self.link.lock().unwrap();
        match (traced, link.is_some()) {
            (true, false) => *link = Some(attach_tp_btf(prog)?),
            (false, true) => *link = None,
            _ => {}
        }
        Ok(())
    }

    /// Start protecting `tgid` (its pages are protected now, then each
    /// period). The file must be the process's clear_refs, opened write-only.
    pub fn add(&self, tgid: u32, mut f: File) -> std::io::Result<()> {
        let mut files = self.files.lock().unwrap();
        self.counter_for(true)?;
        if let Err(e) = protect(&mut f) {
            let _ = self.counter_for(!files.is_empty());
            return Err(e);
        }
        files.insert(tgid, f);
        self.wake.notify_all();
        Ok(())
    }

    pub fn remove(&self, tgid: u32) {
        let mut files = self.files.lock().unwrap();
        files.remove(&tgid);
        let _ = self.counter_for(!files.is_empty());
    }

    /// One period's protection of every traced process; those that have
    /// exited are dropped (the daemon's prune forgets their traces).
    pub fn protect_all(&self) {
        let mut files = self.files.lock().unwrap();
        files.retain(|_, f| protect(f).is_ok());
        let _ = self.counter_for(!files.is_empty());
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
