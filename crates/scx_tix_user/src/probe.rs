//! Whether a task sleeps, read from /proc/PID/stat by a helper thread so
//! that the scheduling loop never enters the kernel for it. The loop is
//! every task's only way to a CPU: a read that waits on another task
//! waits forever. Measured in the VM (vm/tests/79-shuttle.sh's stir: an
//! exec'ing task and a concurrent /proc lookup, both runnable and waiting
//! for this loop), a SCHED_FIFO sampler of /proc/PID/stack found the loop
//! in D state in `do_task_stat` (beside a task in `begin_new_exec`) and in
//! `d_alloc_parallel` until the kernel's 5 s watchdog ejected the
//! scheduler, 7 runs of 8. The helper may block the same way; the loop
//! goes on and runs whoever holds the lock, and the helper resumes.
//!
//! The loop posts a pid on a ring the helper drains (woken by unpark: a
//! futex wake, which never waits) and reads the answer the helper last
//! gave for it (at least one ask old; a reused pid may read its
//! predecessor's once); a pid not answered yet, or posted on a
//! full ring, is unknown. The helper allocates nothing (the allocator's
//! lock is the loop's too), sleeps while nothing is asked, and the two
//! share only atomics.
//!
//! Each answer also carries the task's CPU time (utime + stime, in clock
//! ticks, 28 bits: it wraps after 31 days at 100 Hz), which the balancer
//! reads to tell a task that ran most of a period from one that only
//! waited in this scheduler's queue (both read 'R').

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::Thread;

/// Answers, by pid modulo: a pid sharing a slot with another asked at
/// about the same time is unknown until asked again.
const SLOTS: usize = 4096;

/// Asks in flight (one producer, the loop; one consumer, the helper).
const RING: usize = 1024;

const ASLEEP: u64 = 1 << 61;
const ANSWERED: u64 = 1 << 60;
const PID_MASK: u64 = (1 << 32) - 1;
const TICKS_SHIFT: u32 = 32;
const TICKS_MASK: u64 = (1 << 28) - 1;

struct Table {
    /// pid | ticks << TICKS_SHIFT | ANSWERED [| ASLEEP], or 0.
    answer: Vec<AtomicU64>,
    ring: Vec<AtomicU64>,
    /// Next ring index the loop writes / the helper reads (both only grow).
    head: AtomicUsize,
    tail: AtomicUsize,
    stop: AtomicBool,
    /// The helper's own thread id: asked about itself it would always be
    /// running (it is reading), and counted as a CPU-bound task of weight
    /// 100 it moved a hog (Fig. 4.1 in vm/tests/79-shuttle.sh).
    helper_tid: AtomicI32,
}

pub struct Probe {
    table: Arc<Table>,
    helper: Thread,
    /// Asks posted since the helper was last woken.
    posted: AtomicBool,
    asks: AtomicU64,
    unknown: AtomicU64,
    /// Clock ticks a second (USER_HZ).
    hz: u64,
}

impl Probe {
    /// Starts the helper thread. Call before the memory is locked and mmap
    /// refused (its stack is mapped now).
    pub fn start() -> std::io::Result<Arc<Probe>> {
        let table = Arc::new(Table {
            answer: (0..SLOTS).map(|_| AtomicU64::new(0)).collect(),
            ring: (0..RING).map(|_| AtomicU64::new(0)).collect(),
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            helper_tid: AtomicI32::new(0),
        });
        let t = Arc::clone(&table);
        let handle = std::thread::Builder::new()
            .name("tix-probe".into())
            .stack_size(64 * 1024)
            .spawn(move || helper(&t))?;
        Ok(Arc::new(Probe {
            table,
            helper: handle.thread().clone(),
            posted: AtomicBool::new(false),
            asks: AtomicU64::new(0),
            unknown: AtomicU64::new(0),
            // SAFETY: sysconf has no preconditions.
            hz: match unsafe { libc::sysconf(libc::_SC_CLK_TCK) } {
                n if n > 0 => n as u64,
                _ => 100,
            },
        }))
    }

    /// The answer to the last time `pid` was asked (None: not answered
    /// yet), and `pid` posted again. Never blocks; `wake` sends the posts.
    pub fn asleep(&self, pid: i32) -> Option<bool> {
        self.ask(pid).map(|(asleep, _)| asleep)
    }

    /// The CPU time (ms, wrapping with the ticks' 28 bits) `pid` had when
    /// last answered (None: not answered yet), and `pid` posted again.
    pub fn cpu_ms(&self, pid: i32) -> Option<u64> {
        self.ask(pid).map(|(_, ticks)| ticks * 1000 / self.hz)
    }

    fn ask(&self, pid: i32) -> Option<(bool, u64)> {
        if pid <= 0 {
            return None;
        }
        if self.is_helper(pid) {
            // Mostly asleep, waiting for asks; never load. (The loop
            // dispatches it at once, so no shell should ask.)
            return Some((true, 0));
        }
        let t = &self.table;
        self.asks.fetch_add(1, Ordering::Relaxed);
        let s = &t.answer[pid as usize % SLOTS];
        let v = s.load(Ordering::Acquire);
        let answer = (v & PID_MASK == pid as u64 && v & ANSWERED != 0)
            .then_some((v & ASLEEP != 0, (v >> TICKS_SHIFT) & TICKS_MASK));
        let head = t.head.load(Ordering::Relaxed);
        if head - t.tail.load(Ordering::Acquire) < RING {
            t.ring[head % RING].store(pid as u64, Ordering::Relaxed);
            t.head.store(head + 1, Ordering::Release);
            self.posted.store(true, Ordering::Relaxed);
        }
        if answer.is_none() {
            self.unknown.fetch_add(1, Ordering::Relaxed);
        }
        answer
    }

    /// Whether `pid` is the helper thread (the loop dispatches it at once).
    pub fn is_helper(&self, pid: i32) -> bool {
        pid > 0 && pid == self.table.helper_tid.load(Ordering::Relaxed)
    }

    /// Wakes the helper if anything was posted since the last call: once
    /// a round of the loop, not once an ask.
    pub fn wake(&self) {
        if self.posted.swap(false, Ordering::Relaxed) {
            self.helper.unpark();
        }
    }

    /// Asks and answers unknown so far (stats).
    pub fn counts(&self) -> (u64, u64) {
        (
            self.asks.load(Ordering::Relaxed),
            self.unknown.load(Ordering::Relaxed),
        )
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.table.stop.store(true, Ordering::Relaxed);
        self.helper.unpark();
    }
}

fn helper(t: &Table) {
    // SAFETY: gettid has no preconditions.
    t.helper_tid
        .store(unsafe { libc::gettid() }, Ordering::Relaxed);
    while !t.stop.load(Ordering::Relaxed) {
        let head = t.head.load(Ordering::Acquire);
        let mut tail = t.tail.load(Ordering::Relaxed);
        if tail == head {
            std::thread::park();
            continue;
        }
        while tail != head {
            let pid = t.ring[tail % RING].load(Ordering::Relaxed) as u32;
            tail += 1;
            t.tail.store(tail, Ordering::Release);
            let (a, ticks) = stat_in_proc(pid);
            t.answer[pid as usize % SLOTS].store(
                pid as u64
                    | (ticks & TICKS_MASK) << TICKS_SHIFT
                    | ANSWERED
                    | if a { ASLEEP } else { 0 },
                Ordering::Release,
            );
        }
    }
}

/// /proc/PID/stat's state and utime + stime: "pid (comm) S ppid ... utime
/// stime ..." (fields 3, 14 and 15); comm may hold spaces or ')'. A task
/// gone counts as asleep, with no time. No allocation: the path and the
/// text live on the stack.
fn stat_in_proc(pid: u32) -> (bool, u64) {
    let mut path = *b"/proc/\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0";
    let mut digits = [0u8; 10];
    let (mut n, mut p) = (0, pid);
    loop {
        digits[n] = b'0' + (p % 10) as u8;
        n += 1;
        p /= 10;
        if p == 0 {
            break;
        }
    }
    let mut at = 6;
    for i in (0..n).rev() {
        path[at] = digits[i];
        at += 1;
    }
    path[at..at + 5].copy_from_slice(b"/stat");
    let mut buf = [0u8; 512];
    // SAFETY: path is NUL-terminated (zeroed past the suffix); buf is ours.
    let len = unsafe {
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return (true, 0);
        }
        let len = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        len
    };
    if len <= 0 {
        return (true, 0);
    }
    parse_stat(&buf[..len as usize])
}

/// The state and utime + stime of a /proc/PID/stat text (stat_in_proc).
fn parse_stat(text: &[u8]) -> (bool, u64) {
    let Some(i) = text.iter().rposition(|&b| b == b')') else {
        return (true, 0);
    };
    let asleep = text.get(i + 2).is_none_or(|&st| st != b'R');
    // After ") ": state is the 1st field, utime the 12th, stime the 13th.
    let mut ticks = 0u64;
    for (n, f) in text[(i + 2).min(text.len())..]
        .split(|&b| b == b' ')
        .enumerate()
    {
        if n == 11 || n == 12 {
            ticks += f
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .fold(0u64, |a, &b| {
                    a.wrapping_mul(10).wrapping_add((b - b'0') as u64)
                });
        }
        if n >= 12 {
            break;
        }
    }
    (asleep, ticks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Child, Command};
    use std::time::Duration;

    fn spawn(cmd: &str) -> Child {
        Command::new("sh").args(["-c", cmd]).spawn().unwrap()
    }

    #[test]
    fn the_reading_thread_runs_and_a_gone_pid_sleeps() {
        // SAFETY: gettid has no preconditions.
        let me = unsafe { libc::gettid() } as u32;
        assert!(!stat_in_proc(me).0);
        // pid_max is at most 2^22.
        assert_eq!(stat_in_proc(4_194_305), (true, 0));
    }

    /// The first ask is unknown; the helper answers it; the next ask reads
    /// that answer: a spinning child runs, a sleeping one sleeps.
    #[test]
    fn answers_come_one_ask_later() {
        let p = Probe::start().unwrap();
        let got = spinner_and_napper(
            &p,
            2000,
            |p, s| {
                assert_eq!(p.asleep(s), None);
                p.wake();
            },
            |p, pid| p.asleep(pid),
            |g| *g == (Some(false), Some(true)),
        );
        assert_eq!(got, (Some(false), Some(true)));
        assert!(p.counts().1 >= 2);
    }

    /// Asks `ask` about a spinning child and a sleeping one every ms, up
    /// to `tries` times, until `done`; `first` runs once with the spinner.
    fn spinner_and_napper<T: Copy>(
        p: &Probe,
        tries: u32,
        first: impl Fn(&Probe, i32),
        ask: impl Fn(&Probe, i32) -> T,
        done: impl Fn(&(T, T)) -> bool,
    ) -> (T, T) {
        let mut spin = spawn("exec sh -c 'while :; do :; done'");
        let mut nap = spawn("exec sleep 5");
        let (s, n) = (spin.id() as i32, nap.id() as i32);
        first(p, s);
        let mut got = (ask(p, s), ask(p, n));
        for _ in 0..tries {
            std::thread::sleep(Duration::from_millis(1));
            p.wake();
            got = (ask(p, s), ask(p, n));
            if done(&got) {
                break;
            }
        }
        for c in [&mut spin, &mut nap] {
            let _ = c.kill();
            let _ = c.wait();
        }
        got
    }

    /// The helper knows itself once it runs; no other pid is the helper.
    #[test]
    fn the_helper_is_known_by_its_tid() {
        let p = Probe::start().unwrap();
        let mut tid = 0;
        for _ in 0..2000 {
            tid = p.table.helper_tid.load(Ordering::Relaxed);
            if tid > 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(tid > 0);
        assert!(p.is_helper(tid));
        assert!(!p.is_helper(std::process::id() as i32));
        assert!(!p.is_helper(0));
    }

    /// A comm with spaces and ')' is skipped; utime and stime are summed.
    #[test]
    fn stat_text_gives_state_and_ticks() {
        let t = b"42 (a) b (c) R 1 42 42 0 -1 4194304 100 0 0 0 1234 56 0 0 20 0 1 0 9";
        assert_eq!(parse_stat(t), (false, 1290));
        let t = b"42 (sh) S 1 42 42 0 -1 4194304 100 0 0 0 7 3 0 0 20 0 1 0 9";
        assert_eq!(parse_stat(t), (true, 10));
        assert_eq!(parse_stat(b"42 (sh"), (true, 0));
        assert_eq!(parse_stat(b"42 (sh) R"), (false, 0));
    }

    /// A spinning child's CPU time grows; a sleeping one's stays near 0
    /// (its shell's start may take a tick: tick-sampled accounting).
    #[test]
    fn cpu_time_comes_with_the_answer() {
        let p = Probe::start().unwrap();
        let got = spinner_and_napper(
            &p,
            4000,
            |_, _| {},
            |p, pid| p.cpu_ms(pid),
            |g| g.0.is_some_and(|ms| ms >= 50) && g.1.is_some(),
        );
        assert!(got.0.is_some_and(|ms| ms >= 50), "spinner: {got:?}");
        assert!(got.1.is_some_and(|ms| ms <= 30), "sleeper: {got:?}");
    }
}
