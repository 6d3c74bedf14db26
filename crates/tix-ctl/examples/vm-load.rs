//! Workloads for the VM tests that a shell cannot make (vm/tests/60-smp.sh).
//! Not installed; built with `cargo build --release -p tix-ctl --example vm-load`.
//!
//! vm-load leader-exit       a process whose leader thread exits first: one
//!                           other thread spins until killed
//! vm-load periodic RUN_US PERIOD_US SECS [pause]
//!                           every PERIOD_US, spin RUN_US of CPU time (with
//!                           PAUSE in the loop if asked); print "met N of M"
//!                           (a period is met when its work is done before
//!                           the next period starts)
//! vm-load sleepers PROCS THREADS PERIOD_MS SECS [GO [STOP]]
//!                           PROCS processes of THREADS threads each, made
//!                           first and parked (prints "all N threads up
//!                           after MS ms"); once the file GO exists (at
//!                           once without GO), for SECS or until the file
//!                           STOP exists, every thread
//!                           wakes once per PERIOD_MS (phases spread) and
//!                           spins ~20 us; prints "woke N times"
//! vm-load burst RUN_US SLEEP_US
//!                           forever: spin RUN_US of CPU time, then sleep
//!                           SLEEP_US (a task that blocks after part of a
//!                           slice: compensation tickets, seed 001 §3.4)
//! vm-load spin THREADS       one process of THREADS threads that spin until
//!                           killed (a VM-shaped process: vCPU threads)
//! vm-load forkstorm SECS    forks children that exit at once, while a
//!                           second thread creates and joins threads; prints
//!                           "forked N, cloned M"
//! vm-load writes PAGES1 PAGES2 ROUNDS GAP_MS GO
//!                           a known write pattern (tix trace): two threads
//!                           with buffers of PAGES1 and PAGES2 pages; once
//!                           the file GO exists, ROUNDS times: each thread
//!                           writes one byte to each of its pages, then both
//!                           sleep GAP_MS. Prints "range LO HI" (both
//!                           buffers, hex) first, then "tids T1 T2", then
//!                           "done NS" (ns spent writing, both threads),
//!                           and sleeps until killed
//! vm-load writer PAGES      forever: write one byte to each of PAGES pages
//!                           (a CPU-bound writer for --policy ras)
//! vm-load rasbench N UNIT_US SEED GO
//!                           seed 002's benchmark: N processes, process i
//!                           making k_i writes (k_i in 16..8192 from SEED),
//!                           each a byte to the next of its 64 pages then
//!                           UNIT_US of CPU. Prints "pids P1 .. PN"; once
//!                           GO exists all start; prints "total S
//!                           turnaround_mean S p50 S max S" (from GO)

use std::time::{Duration, Instant};

fn num(a: Option<&String>) -> u64 {
    a.and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        eprintln!("vm-load: expected a number");
        std::process::exit(2)
    })
}

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out-pointer for clock_gettime.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("leader-exit") => {
            std::thread::spawn(|| loop {
                std::hint::spin_loop();
            });
            // The raw exit system call ends only the calling (leader)
            // thread, with no unwinding (pthread_exit's forced unwind would
            // abort the process at Rust's frames); the process lives on in
            // the spinning thread.
            // SAFETY: nothing of this thread is used afterwards.
            unsafe { libc::syscall(libc::SYS_exit, 0) };
            unreachable!("exit(2) returned")
        }
        Some("periodic") => {
            let run = Duration::from_micros(num(args.get(1)));
            let period = Duration::from_micros(num(args.get(2)));
            let secs = num(args.get(3));
            let pause = match args.get(4).map(String::as_str) {
                None => false,
                Some("pause") => true,
                Some(other) => {
                    eprintln!(
                        "vm-load: periodic takes 'pause' or nothing after SECS, got '{other}'"
                    );
                    std::process::exit(2)
                }
            };
            let start = Instant::now();
            let (mut met, mut total) = (0u64, 0u64);
            let mut next = start;
            while start.elapsed() < Duration::from_secs(secs) {
                let c0 = thread_cpu();
                // No PAUSE (spin_loop) unless asked: under single-threaded
                // TCG it ends the vCPU's turn, the guest clock runs on
                // through the other vCPU's turn and bills it to this task,
                // so many 1 ms bursts were billed a whole tick and cut at
                // it (docs/kernel-results.md, "PAUSE and the deadline task").
                while thread_cpu() - c0 < run {
                    if pause {
                        std::hint::spin_loop();
                    }
                }
                next += period;
                total += 1;
                let now = Instant::now();
                if now <= next {
                    met += 1;
                    std::thread::sleep(next - now);
                } else {
                    // Missed: the next period starts now.
                    next = now;
                }
            }
            println!("met {met} of {total}");
        }
        Some("sleepers") => sleepers(
            num(args.get(1)),
            num(args.get(2)),
            num(args.get(3)),
            num(args.get(4)),
            args.get(5),
            args.get(6),
        ),
        Some("burst") => {
            let run = Duration::from_micros(num(args.get(1)));
            let sleep = Duration::from_micros(num(args.get(2)));
            loop {
                let c0 = thread_cpu();
                while thread_cpu() - c0 < run {
                    std::hint::spin_loop();
                }
                std::thread::sleep(sleep);
            }
        }
        Some("forkstorm") => forkstorm(num(args.get(1))),
        Some("writes") => writes(
            num(args.get(1)) as usize,
            num(args.get(2)) as usize,
            num(args.get(3)),
            num(args.get(4)),
            args.get(5).cloned().unwrap_or_default(),
        ),
        Some("rasbench") => rasbench(
            num(args.get(1)),
            num(args.get(2)),
            num(args.get(3)),
            args.get(4).cloned().unwrap_or_default(),
        ),
        Some("writer") => {
            let mut b = Pages::new(num(args.get(1)).max(1) as usize);
            let mut v = 0u8;
            loop {
                v = v.wrapping_add(1);
                b.touch(v);
            }
        }
        Some("spin") => {
            let n = num(args.get(1)).max(1);
            for _ in 1..n {
                std::thread::spawn(|| loop {
                    std::hint::spin_loop();
                });
            }
            loop {
                std::hint::spin_loop();
            }
        }
        _ => {
            eprintln!(
                "usage: vm-load leader-exit | periodic RUN_US PERIOD_US SECS | \
                 sleepers PROCS THREADS PERIOD_MS SECS [GO [STOP]] | burst RUN_US SLEEP_US | \
                 forkstorm SECS | writes PAGES1 PAGES2 ROUNDS GAP_MS GO | writer PAGES | rasbench N UNIT_US SEED GO"
            );
            std::process::exit(2)
        }
    }
}

fn sleepers(
    procs: u64,
    threads: u64,
    period_ms: u64,
    secs: u64,
    go: Option<&String>,
    stop: Option<&String>,
) {
    // Three pipes. Each child writes a byte to `ready` once all its
    // threads exist; the parent closes `go` once every child has (and the
    // file GO exists), then `stop` after SECS or once the file STOP
    // exists; a child reads EOF on each at once. Until go the threads wait
    // on a condition variable: a slow host creates 10^4 threads over
    // minutes, and threads that woke meanwhile made the first processes
    // end before the last began (vm/tests/70-scale.sh counted 9,127 alive
    // at once).
    let mut ready = [0i32; 2];
    let mut gop = [0i32; 2];
    let mut stopp = [0i32; 2];
    for fds in [&mut ready, &mut gop, &mut stopp] {
        // SAFETY: a valid out-array of two descriptors.
        if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
            eprintln!("vm-load: pipe: {}", std::io::Error::last_os_error());
            std::process::exit(1);
        }
    }
    let t0 = Instant::now();
    let mut kids = Vec::new();
    for p in 0..procs {
        // SAFETY: fork in a single-threaded parent; the child only spawns
        // threads, counts and exits.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            eprintln!("vm-load: fork failed after {p} processes");
            std::process::exit(1);
        }
        if pid == 0 {
            // SAFETY: this child's copies of the ends only the parent uses.
            unsafe {
                libc::close(ready[0]);
                libc::close(gop[1]);
                libc::close(stopp[1]);
            }
            sleeper_child(p, procs, threads, period_ms, ready[1], gop[0], stopp[0]);
        }
        kids.push(pid);
    }
    // SAFETY: closing descriptors this process owns and no longer uses.
    unsafe {
        libc::close(ready[1]);
        libc::close(gop[0]);
        libc::close(stopp[0]);
    }
    let mut up = 0;
    while up < procs {
        let mut b = [0u8; 64];
        // SAFETY: reading into a local buffer of its length.
        let n = unsafe { libc::read(ready[0], b.as_mut_ptr().cast(), b.len()) };
        if n == 0 {
            eprintln!("vm-load: {up} of {procs} processes made their threads");
            break;
        }
        if n > 0 {
            up += n as u64;
        }
    }
    let exists = |f: Option<&String>| f.is_some_and(|f| std::path::Path::new(f).exists());
    let all_up = up >= procs;
    if all_up {
        println!(
            "all {} threads up after {} ms",
            procs * threads,
            t0.elapsed().as_millis()
        );
        while go.is_some() && !exists(go) {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    // SAFETY: as above; every child now reads EOF on go (after a failed
    // start too: the children then end at once).
    unsafe { libc::close(gop[1]) };
    let end = Instant::now() + Duration::from_secs(secs);
    while all_up && Instant::now() < end && !exists(stop) {
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: as above.
    unsafe { libc::close(stopp[1]) };
    let mut failed = 0;
    for pid in kids {
        let mut st = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut st, 0) };
        if !libc::WIFEXITED(st) || libc::WEXITSTATUS(st) != 0 {
            failed += 1;
        }
    }
    println!("{procs} processes of {threads} threads done, {failed} failed");
    if failed > 0 || up < procs {
        std::process::exit(1);
    }
}

/// Blocks until the write end of a pipe is closed everywhere (EOF), or
/// the read fails other than by a signal's interruption.
fn await_eof(fd: i32) {
    let mut b = [0u8; 1];
    loop {
        // SAFETY: reads into a local buffer of its length.
        let n = unsafe { libc::read(fd, b.as_mut_ptr().cast(), 1) };
        if n == 0
            || (n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted)
        {
            return;
        }
    }
}

/// Child `p` of `sleepers`: its threads, parked until go, waking until stop.
fn sleeper_child(
    p: u64,
    procs: u64,
    threads: u64,
    period_ms: u64,
    ready: i32,
    go: i32,
    stop: i32,
) -> ! {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::{Arc, Condvar, Mutex};
    let woke = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let start = Arc::new((Mutex::new(false), Condvar::new()));
    let mut hs = Vec::new();
    for t in 0..threads {
        let (woke, done, start) = (woke.clone(), done.clone(), start.clone());
        let phase =
            Duration::from_millis(period_ms) * (p * threads + t) as u32 / (procs * threads) as u32;
        let b = std::thread::Builder::new().stack_size(64 << 10);
        match b.spawn(move || {
            {
                let (m, cv) = &*start;
                let mut g = m.lock().unwrap();
                while !*g {
                    g = cv.wait(g).unwrap();
                }
            }
            std::thread::sleep(phase);
            while !done.load(Ordering::Relaxed) {
                let c0 = thread_cpu();
                while thread_cpu() - c0 < Duration::from_micros(20) {
                    std::hint::spin_loop();
                }
                woke.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(period_ms));
            }
        }) {
            Ok(h) => hs.push(h),
            Err(e) => {
                eprintln!("vm-load: thread {t} of process {p}: {e}");
                // SAFETY: ends the child without running the parent's state.
                unsafe { libc::_exit(1) };
            }
        }
    }
    // SAFETY: one byte from a static buffer to a descriptor this child owns.
    unsafe {
        libc::write(ready, b"r".as_ptr().cast(), 1);
        libc::close(ready);
    }
    await_eof(go);
    {
        let (m, cv) = &*start;
        *m.lock().unwrap() = true;
        cv.notify_all();
    }
    await_eof(stop);
    done.store(true, Ordering::Relaxed);
    for h in hs {
        let _ = h.join();
    }
    let n = woke.load(Ordering::Relaxed);
    // stdout is shared with the parent: one line per child.
    println!("child {p} woke {n} times");
    // SAFETY: as above.
    unsafe { libc::_exit(0) }
}

fn forkstorm(secs: u64) {
    let end = Instant::now() + Duration::from_secs(secs);
    let cloner = std::thread::spawn(move || {
        let mut n = 0u64;
        while Instant::now() < end {
            let hs: Vec<_> = (0..16).map(|_| std::thread::spawn(|| ())).collect();
            for h in hs {
                let _ = h.join();
            }
            n += 16;
        }
        n
    });
    let mut forked = 0u64;
    while Instant::now() < end {
        // SAFETY: the child calls only _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: async-signal-safe exit of the child.
            unsafe { libc::_exit(0) };
        }
        if pid > 0 {
            let mut st = 0;
            // SAFETY: waiting for our own child.
            unsafe { libc::waitpid(pid, &mut st, 0) };
            forked += 1;
        }
    }
    let cloned = cloner.join().unwrap_or(0);
    println!("forked {forked}, cloned {cloned}");
}

const PAGE: usize = 4096;

/// A page-aligned buffer, each page written once per touch.
struct Pages {
    mem: Vec<u8>,
    first: usize,
    n: usize,
}

impl Pages {
    fn new(n: usize) -> Pages {
        let mut mem = vec![0u8; (n + 1) * PAGE];
        let first = (PAGE - mem.as_ptr() as usize % PAGE) % PAGE;
        // Touched once now: the pages exist before any tracing starts, so
        // later faults are write-protection faults only.
        for i in 0..n {
            mem[first + i * PAGE] = 1;
        }
        Pages { mem, first, n }
    }

    fn range(&self) -> (usize, usize) {
        let lo = self.mem.as_ptr() as usize + self.first;
        (lo, lo + self.n * PAGE)
    }

    fn touch(&mut self, v: u8) {
        for i in 0..self.n {
            // SAFETY: inside mem; volatile so every page is really written.
            unsafe {
                std::ptr::write_volatile(self.mem.as_mut_ptr().add(self.first + i * PAGE), v)
            };
        }
    }
}

fn gettid() -> u64 {
    // SAFETY: a plain system call without arguments.
    unsafe { libc::syscall(libc::SYS_gettid) as u64 }
}

fn writes(p1: usize, p2: usize, rounds: u64, gap_ms: u64, go: String) {
    use std::sync::{Arc, Barrier};
    // One allocation for both threads' pages, so one range covers them.
    let mut all = Pages::new(p1 + p2);
    let (lo, hi) = all.range();
    println!("range {lo:#x} {hi:#x}");
    let base = all.mem.as_mut_ptr() as usize + all.first;
    let bar = Arc::new(Barrier::new(2));
    let gap = Duration::from_millis(gap_ms);
    let run = move |off: usize, n: usize, bar: Arc<Barrier>| -> Duration {
        let mut spent = Duration::ZERO;
        for r in 0..rounds {
            bar.wait();
            let t = Instant::now();
            for i in 0..n {
                // SAFETY: pages off..off+n of the shared buffer, each
                // thread its own.
                unsafe { std::ptr::write_volatile((base + (off + i) * PAGE) as *mut u8, r as u8) };
            }
            spent += t.elapsed();
            std::thread::sleep(gap);
        }
        spent
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let b2 = bar.clone();
    let second = std::thread::spawn(move || {
        tx.send(gettid()).unwrap();
        run(p1, p2, b2)
    });
    let t2 = rx.recv().unwrap();
    println!("tids {} {t2}", gettid());
    use std::io::Write;
    std::io::stdout().flush().unwrap();
    while !std::path::Path::new(&go).exists() {
        std::thread::sleep(Duration::from_millis(10));
    }
    let spent = run(0, p1, bar) + second.join().unwrap();
    println!("done {}", spent.as_nanos());
    std::io::stdout().flush().unwrap();
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

fn rasbench(n: u64, unit_us: u64, seed: u64, go: String) {
    use std::io::Write;
    let unit = Duration::from_micros(unit_us);
    // The same k_i for the same SEED under every policy.
    use tix_core::rng::{Rng, SplitMix64};
    let mut rng = SplitMix64::new(seed);
    let mut next = || rng.next_u64();
    let ks: Vec<u64> = (0..n).map(|_| 16 + next() % (8192 - 16)).collect();
    let mut pids = Vec::new();
    for &k in &ks {
        // SAFETY: fork in a single-threaded parent; the child only writes,
        // spins and exits.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            eprintln!("vm-load: fork failed");
            std::process::exit(1);
        }
        if pid == 0 {
            let mut b = Pages::new(64);
            while !std::path::Path::new(&go).exists() {
                std::thread::sleep(Duration::from_millis(5));
            }
            for j in 0..k {
                let i = (j % 64) as usize;
                // SAFETY: page i of the buffer.
                unsafe {
                    std::ptr::write_volatile(b.mem.as_mut_ptr().add(b.first + i * PAGE), j as u8)
                };
                let c0 = thread_cpu();
                while thread_cpu() - c0 < unit {
                    std::hint::spin_loop();
                }
            }
            // SAFETY: leaving the child without the parent's atexit work.
            unsafe { libc::_exit(0) };
        }
        pids.push(pid);
    }
    let list: Vec<String> = pids.iter().map(|p| p.to_string()).collect();
    println!("pids {}", list.join(" "));
    std::io::stdout().flush().unwrap();
    while !std::path::Path::new(&go).exists() {
        std::thread::sleep(Duration::from_millis(5));
    }
    let t0 = Instant::now();
    let mut turn = Vec::new();
    for _ in 0..n {
        let mut st = 0;
        // SAFETY: waiting for any child, status into st.
        if unsafe { libc::wait(&mut st) } < 0 {
            break;
        }
        turn.push(t0.elapsed().as_secs_f64());
    }
    turn.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mean = turn.iter().sum::<f64>() / turn.len().max(1) as f64;
    let p50 = turn.get(turn.len() / 2).copied().unwrap_or(0.0);
    let max = turn.last().copied().unwrap_or(0.0);
    println!(
        "total {max:.3} turnaround_mean {mean:.3} p50 {p50:.3} max {max:.3} writes {}",
        ks.iter().sum::<u64>()
    );
}
