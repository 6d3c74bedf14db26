//! Workloads for the VM tests that a shell cannot make (vm/tests/60-smp.sh).
//! Not installed; built with `cargo build --release -p tix-ctl --example vm-load`.
//!
//! vm-load leader-exit       a process whose leader thread exits first: one
//!                           other thread spins until killed
//! vm-load periodic RUN_US PERIOD_US SECS
//!                           every PERIOD_US, spin RUN_US of CPU time; print
//!                           "met N of M" (a period is met when its work is
//!                           done before the next period starts)
//! vm-load sleepers PROCS THREADS PERIOD_MS SECS
//!                           PROCS processes of THREADS threads each; every
//!                           thread wakes once per PERIOD_MS (phases spread)
//!                           and spins ~20 us; prints "woke N times"
//! vm-load burst RUN_US SLEEP_US
//!                           forever: spin RUN_US of CPU time, then sleep
//!                           SLEEP_US (a task that blocks after part of a
//!                           slice: compensation tickets, seed 001 §3.4)
//! vm-load spin THREADS       one process of THREADS threads that spin until
//!                           killed (a VM-shaped process: vCPU threads)
//! vm-load forkstorm SECS    forks children that exit at once, while a
//!                           second thread creates and joins threads; prints
//!                           "forked N, cloned M"

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
            let start = Instant::now();
            let (mut met, mut total) = (0u64, 0u64);
            let mut next = start;
            while start.elapsed() < Duration::from_secs(secs) {
                let c0 = thread_cpu();
                while thread_cpu() - c0 < run {
                    std::hint::spin_loop();
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
                 sleepers PROCS THREADS PERIOD_MS SECS | burst RUN_US SLEEP_US | \
                 forkstorm SECS"
            );
            std::process::exit(2)
        }
    }
}

fn sleepers(procs: u64, threads: u64, period_ms: u64, secs: u64) {
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
            let woke = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
            let end = Instant::now() + Duration::from_secs(secs);
            let mut hs = Vec::new();
            for t in 0..threads {
                let woke = woke.clone();
                let phase = Duration::from_millis(period_ms) * (p * threads + t) as u32
                    / (procs * threads) as u32;
                let b = std::thread::Builder::new().stack_size(64 << 10);
                match b.spawn(move || {
                    std::thread::sleep(phase);
                    while Instant::now() < end {
                        let c0 = thread_cpu();
                        while thread_cpu() - c0 < Duration::from_micros(20) {
                            std::hint::spin_loop();
                        }
                        woke.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
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
            for h in hs {
                let _ = h.join();
            }
            let n = woke.load(std::sync::atomic::Ordering::Relaxed);
            // stdout is shared with the parent: one line per child.
            println!("child {p} woke {n} times");
            // SAFETY: as above.
            unsafe { libc::_exit(0) };
        }
        kids.push(pid);
    }
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
    if failed > 0 {
        std::process::exit(1);
    }
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
