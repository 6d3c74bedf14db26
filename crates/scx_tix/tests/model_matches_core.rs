//! Event sequences: the host model of one scx_tix domain (src/bpf/model_host.c,
//! built on rules.h as the BPF program is) against tix-core. Stride must pick
//! the same task and reach the same pass at every step as tix_core::stride;
//! the lottery model must win in proportion to value (with and without
//! compensation, seed 001 §3.4), within binomial bounds stated per test.

use tix_core::stride::Stride;
use tix_core::{PolicyOptions, Scheduler};

extern "C" {
    fn tix_m_reset(stride: i32, slice_ns: u64, compensate: i32);
    fn tix_m_set_value(i: i32, v: u64);
    fn tix_m_enqueue(i: i32, rnd: u32);
    fn tix_m_dispatch() -> i32;
    fn tix_m_charge(i: i32, used: u64);
    fn tix_m_pass(i: i32) -> u64;
    fn tix_m_vt() -> u64;
}

struct Mix(u64);
impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

const SLICE: u64 = 4_000_000;

/// The model is one global C object: tests using it must not interleave.
static MODEL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn stride_model_follows_tix_core_step_by_step() {
    let _g = MODEL.lock().unwrap();
    for seed in 1..=20u64 {
        let mut m = Mix(seed);
        let n = 2 + (m.next() % 7) as usize;
        let mut core = Stride::new(&PolicyOptions {
            quantum_ns: SLICE,
            seed,
        });
        // SAFETY: the C model is plain integer code over a static object,
        // guarded by MODEL.
        unsafe { tix_m_reset(1, SLICE, 0) };
        for i in 0..n {
            let w = 1 + m.next() % 10_000;
            assert_eq!(core.join(w).unwrap(), i);
            unsafe {
                tix_m_set_value(i as i32, w);
                tix_m_enqueue(i as i32, 0);
            }
        }
        let mut blocked = vec![false; n];
        for step in 0..2_000 {
            let a = core.pick();
            let b = unsafe { tix_m_dispatch() };
            assert_eq!(
                a.map(|x| x as i32).unwrap_or(-1),
                b,
                "seed {seed} step {step}"
            );
            if let Some(id) = a {
                // Mostly full slices, often partial (a blocking or yielding task).
                let used = if m.next().is_multiple_of(3) {
                    1 + m.next() % SLICE
                } else {
                    SLICE
                };
                core.charge(id, used).unwrap();
                unsafe { tix_m_charge(id as i32, used) };
                assert_eq!(core.pass(id).unwrap(), unsafe { tix_m_pass(id as i32) });
                if m.next().is_multiple_of(5) && blocked.iter().filter(|x| !**x).count() > 1 {
                    core.block(id).unwrap();
                    blocked[id] = true;
                } else {
                    unsafe { tix_m_enqueue(id as i32, 0) };
                }
            }
            // Wake at most one sleeper, and only when no queued task sits at
            // the virtual time: a woken task then has a key nobody shares.
            // (Equal keys leave a vtime DSQ in insertion order but tix-core
            // in join order; both are valid stride, so ties are avoided
            // rather than compared.)
            let vt = core.global_pass();
            let tie = (0..n).any(|i| !blocked[i] && core.pass(i).unwrap() == vt);
            if !tie && m.next().is_multiple_of(2) {
                if let Some(i) = (0..n).find(|&i| blocked[i] && m.next().is_multiple_of(2)) {
                    core.wake(i).unwrap();
                    blocked[i] = false;
                    unsafe { tix_m_enqueue(i as i32, 0) };
                }
            }
            assert_eq!(
                core.global_pass(),
                unsafe { tix_m_vt() },
                "seed {seed} step {step}"
            );
        }
    }
}

/// Run the lottery model with two always-runnable tasks; returns A's wins.
fn lottery_wins(va: u64, vb: u64, used_b: u64, compensate: bool, rounds: u32, seed: u64) -> u32 {
    let mut m = Mix(seed);
    let mut wins = 0;
    // SAFETY: see above; callers hold MODEL.
    unsafe {
        tix_m_reset(0, SLICE, compensate as i32);
        tix_m_set_value(0, va);
        tix_m_set_value(1, vb);
        tix_m_enqueue(0, m.next() as u32);
        tix_m_enqueue(1, m.next() as u32);
        for _ in 0..rounds {
            let w = tix_m_dispatch();
            let used = if w == 0 { SLICE } else { used_b };
            wins += (w == 0) as u32;
            tix_m_charge(w, used);
            tix_m_enqueue(w, m.next() as u32);
        }
    }
    wins
}

#[test]
fn lottery_model_wins_in_proportion_to_value() {
    let _g = MODEL.lock().unwrap();
    // P(A) = 3/4; 20000 draws: sd = sqrt(.75*.25/20000) = 0.0031; bound 4 sd.
    let n = 20_000;
    let p = lottery_wins(750, 250, SLICE, true, n, 7) as f64 / n as f64;
    assert!((p - 0.75).abs() < 4.0 * 0.0031, "p = {p}");
    // Values 1:1 -> 1/2, sd 0.0035.
    let p = lottery_wins(100, 100, SLICE, true, n, 8) as f64 / n as f64;
    assert!((p - 0.5).abs() < 4.0 * 0.0036, "p = {p}");
}

#[test]
fn compensation_restores_the_odds_of_a_short_runner() {
    let _g = MODEL.lock().unwrap();
    // B (value 250) uses a quarter of its slice: with compensation it
    // competes with 250 * 4 = 1000 against A's 750, so P(A) = 750/1750 =
    // 0.4286 per draw; without, P(A) = 0.75. 20000 draws, sd <= 0.0035,
    // bounds 4 sd.
    let n = 20_000;
    let p = lottery_wins(750, 250, SLICE / 4, true, n, 9) as f64 / n as f64;
    assert!((p - 750.0 / 1750.0).abs() < 4.0 * 0.0035, "p = {p}");
    let p = lottery_wins(750, 250, SLICE / 4, false, n, 10) as f64 / n as f64;
    assert!((p - 0.75).abs() < 4.0 * 0.0031, "p = {p}");
}
