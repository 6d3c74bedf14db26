//! The lock with real threads: exclusion, misuse, and the release's draw
//! (seed 001 §6.1, Fig. 11's 2:1 groups).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tix_lock::{LockError, LotteryLock};

#[test]
fn one_holder_at_a_time() {
    let lock = Arc::new(LotteryLock::new(1));
    // A torn read-modify-write shows up as a lost increment.
    let count = Arc::new(AtomicU64::new(0));
    let inside = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let (lock, count, inside) = (lock.clone(), count.clone(), inside.clone());
            std::thread::spawn(move || {
                for _ in 0..2000 {
                    let _g = lock.lock(1 + i).unwrap();
                    assert!(!inside.swap(true, SeqCst), "two holders at once");
                    let v = count.load(Relaxed);
                    std::hint::spin_loop();
                    count.store(v + 1, Relaxed);
                    inside.store(false, SeqCst);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(count.load(SeqCst), 8 * 2000);
    assert_eq!(lock.holder(), 0);
    assert_eq!(lock.waiters(), 0);
    assert_eq!(lock.counts().0, 8 * 2000);
}

#[test]
fn misuse_is_refused_and_changes_nothing() {
    let lock = Arc::new(LotteryLock::new(2));
    let e = lock.unlock().unwrap_err();
    assert!(matches!(e, LockError::NotHolder { holder: 0, .. }), "{e}");
    assert!(e.to_string().contains("does not hold the lock"));
    assert!(matches!(
        lock.lock(10_001).err(),
        Some(LockError::Funding { funding: 10_001 })
    ));
    let g = lock.lock(5).unwrap();
    let holder = lock.holder();
    assert!(matches!(lock.lock(5).err(), Some(LockError::Relock { .. })));
    let l2 = lock.clone();
    let other = std::thread::spawn(move || l2.unlock().unwrap_err())
        .join()
        .unwrap();
    assert!(matches!(other, LockError::NotHolder { holder: h, .. } if h == holder));
    assert_eq!(lock.holder(), holder);
    assert!(lock.try_lock().is_none());
    drop(g);
    assert_eq!(lock.holder(), 0);
    assert!(lock.try_lock().is_some());
}

/// Fig. 11's shape: 8 threads, groups A and B funded 2:1, each taking the
/// lock, holding it, releasing and working. Every release with waiters is
/// a draw; with the waiters of each group known at each draw, the number of
/// draws A wins is a sum of independent Bernoulli trials: mean Σp, variance
/// Σp(1-p). The scheduler's timing decides who waits, not who wins.
#[test]
fn releases_hand_the_lock_over_by_funding() {
    const A: u32 = 200;
    const B: u32 = 100;
    let lock = Arc::new(LotteryLock::new(11));
    let stop = Arc::new(AtomicBool::new(false));
    let stats = Arc::new(std::sync::Mutex::new((0u64, 0f64, 0f64, [0u64; 2])));
    let threads: Vec<_> = (0..8u32)
        .map(|i| {
            let (lock, stop, stats) = (lock.clone(), stop.clone(), stats.clone());
            std::thread::spawn(move || {
                let funding = if i < 4 { A } else { B };
                while !stop.load(Relaxed) {
                    let g = lock.lock(funding).unwrap();
                    stats.lock().unwrap().3[(i >= 4) as usize] += 1;
                    spin(Duration::from_micros(200));
                    std::mem::forget(g);
                    if let Some(h) = lock.unlock().unwrap() {
                        // total = 200·a + 100·b with a + b = waiters.
                        let a = (h.total - B as u64 * h.waiters as u64) / (A - B) as u64;
                        let p = (A as u64 * a) as f64 / h.total as f64;
                        let mut s = stats.lock().unwrap();
                        s.0 += (h.funding == A) as u64;
                        s.1 += p;
                        s.2 += p * (1.0 - p);
                    }
                    spin(Duration::from_micros(200));
                }
            })
        })
        .collect();
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(3)
        && stats.lock().unwrap().3.iter().sum::<u64>() < 20_000
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let (won, mean, var, acq) = *stats.lock().unwrap();
    let sd = var.sqrt();
    eprintln!(
        "draws won by A: {won}, expected {mean:.1} (sd {sd:.1}); acquisitions A {} B {}",
        acq[0], acq[1]
    );
    assert!(var > 25.0, "too few contended releases to test ({var:.1})");
    assert!(
        (won as f64 - mean).abs() < 4.0 * sd,
        "A won {won} draws, expected {mean:.1} +- 4 x {sd:.1}"
    );
}

fn spin(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d {
        std::hint::spin_loop();
    }
}
