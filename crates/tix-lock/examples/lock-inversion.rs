//! Priority inversion and its cure on the real kernel (seed 001 §6.1,
//! Fig. 10): a process L holding few tickets takes a lottery lock shared
//! with a process H (in a MAP_SHARED page) and computes WORK_MS of CPU time
//! while holding it; H, holding many tickets, waits for the lock. Without
//! lending L crawls beside the machine's other work; with it H's tickets
//! fund L while H waits.
//!
//! usage: lock-inversion WORK_MS L_TICKETS H_TICKETS FUNDING lend|nolend
//! prints: "holder: cpu C ms in W ms wall: share S" and "lent N refused M"

use std::time::{Duration, Instant};
use tix_ctl::{Request, DEFAULT_SOCKET};
use tix_lock::{Lending, LotteryLock};

fn num(a: &[String], i: usize) -> u64 {
    a.get(i).and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        eprintln!("usage: lock-inversion WORK_MS L_TICKETS H_TICKETS FUNDING lend|nolend");
        std::process::exit(2)
    })
}

fn set_tickets(tickets: u64) {
    let req = Request::SetTickets {
        pid: std::process::id(),
        tickets,
    };
    if let Err(e) = tix_ctl::request(DEFAULT_SOCKET.as_ref(), &req) {
        eprintln!("lock-inversion: setting {tickets} tickets: {e}");
        std::process::exit(1);
    }
}

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (work, lt, ht, funding) = (num(&a, 1), num(&a, 2), num(&a, 3), num(&a, 4));
    let lend = match a.get(5).map(String::as_str) {
        Some("lend") => true,
        Some("nolend") => false,
        _ => {
            eprintln!("lock-inversion: the fifth argument is lend or nolend");
            std::process::exit(2)
        }
    };
    // SAFETY: a fresh shared anonymous mapping; zeroed memory is a free lock.
    let lock = unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            std::mem::size_of::<LotteryLock>(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        assert!(p != libc::MAP_FAILED, "mmap failed");
        &*(p as *const LotteryLock)
    };
    set_tickets(ht);
    // SAFETY: single-threaded here; the child only uses the lock and libc.
    let child = unsafe { libc::fork() };
    if child == 0 {
        set_tickets(lt);
        let g = lock.lock(0).unwrap();
        // H queues (and lends) before the work starts.
        while lock.waiters() == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(300));
        let (c0, t0) = (thread_cpu(), Instant::now());
        while thread_cpu() - c0 < Duration::from_millis(work) {
            std::hint::spin_loop();
        }
        let (cpu, wall) = (
            (thread_cpu() - c0).as_secs_f64(),
            t0.elapsed().as_secs_f64(),
        );
        println!(
            "holder: cpu {:.0} ms in {:.0} ms wall: share {:.4}",
            cpu * 1e3,
            wall * 1e3,
            cpu / wall
        );
        drop(g);
        std::process::exit(0);
    }
    while lock.holder() == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let lending = Lending::system();
    let g = if lend {
        lock.lock_lending(funding as u32, &lending)
    } else {
        lock.lock(funding as u32)
    };
    drop(g.unwrap());
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(child, &mut status, 0) };
    let (lent, refused) = lending.counts();
    println!("lent {lent} refused {refused}");
    if let Some(r) = lending.last_refusal() {
        println!("last refusal: {r}");
    }
}
