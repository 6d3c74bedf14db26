//! One virtual time shared by N CPUs: the rule by which the kernel scheduler
//! (rules.h, mirrored here bit for bit) keeps lottery (001 §2.2, as an
//! exponential race, `race.rs`) and stride (001 §6 / `stride.rs`)
//! proportional across CPUs.
//!
//! A task's next key is its own last key plus what its run cost (`pending`:
//! `E·f/value` for the lottery, `used/value` for stride) — not the current
//! virtual time plus that cost (`next_key`, `next_pass`). On one CPU the two agree (the last winner's
//! key *is* the virtual time). On N CPUs a task that ran on CPU a while
//! CPU b advanced the virtual time would otherwise lose the difference at
//! every slice: each CPU's lottery then runs over the tasks it can see, and
//! the heavy tasks, absent while running, drift toward equal shares. With
//! its own key, each task's wins form a Poisson process of rate `value` in
//! the shared virtual time (stride: a deterministic one), so wins, and time,
//! follow value across CPUs; any decision among tasks at equal keys is still
//! a `value/Σ` lottery.
//!
//! The own key may lag the virtual time by at most `lag` (LAG_SLICES of the
//! task's own mean slices). A task whose weight is infeasible (more than one
//! CPU's worth, which water-filling caps at one CPU) then keeps its CPU: it
//! loses a lottery only when E > LAG_SLICES. A lottery task exactly at the
//! one-CPU boundary does a random walk against the others, zero-drift while
//! behind and pulled back when ahead; the bank of `lag` absorbs that walk,
//! and its loss shrinks as the bank grows (host model, 2 CPUs,
//! 100:100:100:300, 2,500 slices: 5-6% short at 8 slices, 2-5% at 16,
//! 1-3% at 32). The price is that a task owed that much service catches up
//! in a burst of at most LAG_SLICES of its own slices.
//!
//! A task whose slice ends with nothing waiting that could run on its CPU
//! may lag by one run only (the kernel's `uncontested_key`): it lost no
//! decision, so it is owed nothing. With the whole bank, tasks that each
//! keep a CPU drift apart by their draws (E's random walk) though they get
//! the same time, and a task woken beside the one left behind loses to it
//! until it catches up.
//!
//! A waking task may lag by `wake_lag`: one of its own slices per slice
//! it slept (`wake_rate` of them under the lottery), up to WAKE_SLICES by
//! default (0 is the seeds' rule: sleeping earns no credit), and never more
//! than the frame's time gains in WAKE_FRAME_SLICES slices. See `wake_lag`,
//! `wake_rate` and `wake_cap`.

/// How many of its own mean slices a runnable task may lag the virtual time.
pub const LAG_SLICES: u64 = 32;

/// The lag bound of a task whose one run costs `one_run` in keys: a full
/// slice, or its mean run (`run_avg`) when that is longer.
///
/// Why runs and not slices: the walk the bank absorbs moves once per
/// decision, by one run's cost. When a CPU's ticks come late (a vCPU not
/// scheduled by its host: single-threaded TCG with 4 vCPUs ran ~16 ms per
/// 3.5 ms slice) every run lasts several slices, and a bank of 32 slices
/// held only 8 runs: the 300 task of 100:100:100:300 on 2 CPUs fell to
/// .471 of the machine against .500 (host model,
/// `runs_of_many_slices_keep_the_shares`).
pub fn lag_bound(one_run: u64) -> u64 {
    one_run.saturating_mul(LAG_SLICES)
}

/// Most slices of wake lag (`scx_tix --wake-lag` accepts 0..=64).
pub const WAKE_SLICES_MAX: u64 = 64;

/// Default of how many of its own slices a waking task may lag the virtual
/// time (`scx_tix --wake-lag`). 4, not 2: beside 4 hogs on 2 vCPUs the
/// waiting hogs' lottery keys spread below the time by more than 2 of a
/// periodic task's slices, and a pinned 1 ms-every-10 ms task met .957 of
/// its deadlines (default scheduler .995); with 4 and WAKE_FRAME_SLICES
/// 16, .993 (one guest, 2,000 periods each; README).
pub const WAKE_SLICES: u64 = 4;

/// The lag a waking task may keep: one of its own full slices
/// (`one_slice`, E at its mean) per slice it slept (`slept_ns` over
/// `slice_ns`), up to `slices` (at most `WAKE_SLICES_MAX`) of them. The
/// fraction slept is taken in Q16 first (`rules.h` has no 128-bit
/// division to spare).
///
/// Why any: a task that sleeps between short runs is below its share, yet
/// with no credit it woke exactly at the virtual time, level with the
/// runners' keys, and lost the first decision after its slice ran out
/// about as often as it won — then waited a whole runner's slice. A task
/// needing 1 ms every 10 ms beside 4 hogs on 2 vCPUs (TCG, where the
/// guest's clocks run while a vCPU is not emulated, so that 1 ms filled a
/// 3.5 ms slice) met .57 (lottery) / .53 (stride) of its deadlines with no
/// credit and .74/.83 with two slices; beside 2 hogs, .64/.76 and
/// .83/1.00. The default scheduler, whose placement keeps a sleeper's
/// lag up to about two of its slices, met .97 and .99. Why bounded: the
/// key is still `own` when that is later, so a task gets credit only
/// while it is behind, and never more than `slices` slices ahead of what
/// it is owed; a task that sleeps briefly after every run (its own key far
/// ahead) gains nothing. Why earned by sleeping: with the whole credit at
/// every wake-up, tasks that block for microseconds (pipe and socket
/// workers) jumped ahead of the runners at every slice end and perf bench
/// sched messaging ran 1.11-1.20x slower than with none; earned, it runs
/// as fast as with none (1.00x lottery, 0.98x stride, one boot).
pub fn wake_lag(one_slice: u64, slices: u64, slept_ns: u64, slice_ns: u64) -> u64 {
    if slice_ns == 0 || slices == 0 {
        return 0;
    }
    let full = slice_ns as u128 * slices.min(WAKE_SLICES_MAX) as u128;
    let slept = (slept_ns as u128).min(full) as u64;
    let frac = if slept >> 48 != 0 {
        u64::MAX / slice_ns
    } else {
        (slept << 16) / slice_ns
    };
    u64::try_from((one_slice as u128 * frac as u128) >> 16).unwrap_or(u64::MAX)
}

/// The most `scx_tix --wake-rate` takes (own slices of credit per slice
/// slept).
pub const WAKE_RATE_MAX: u64 = 16;

/// Own slices of wake credit the lottery earns per slice slept unless told
/// otherwise. More than 1: a short sleeper's woken key is its last start
/// plus E · run / value, so under the lottery a large draw E keys it
/// behind the runners unless its credit covers it. Beside 4 hogs on 2
/// vCPUs a 1 ms-every-10 ms task slept 1.9 slices and ran 0.65: at rate 1
/// it missed 2-3x the default scheduler's periods, at 2 fewer than the
/// default. 4, not 2: cyclictest (1 ms period) sleeps well under a slice,
/// and at 2 its unpinned p99 was 1.94x the default's over a boot, at 4
/// 1.55x, pinned 1.44x and 0.91x, with fewer periods missed and
/// messaging level (vm/bench, docs/kernel-results.md, "The lottery's wake
/// rate"). The cap (`WAKE_SLICES`) is the same, and a woken key is never
/// ahead of the task's own (its service), so no task gets further ahead
/// than it is owed; it gets there sooner.
pub const WAKE_RATE_LOTTERY: u64 = 4;

/// Stride's: its woken key has no draw in it (a pass is deterministic), so
/// rate 1 already met every deadline there, and rate 2 raised its pinned
/// p99 (one boot, 0.92x to 1.10x of the default).
pub const WAKE_RATE_STRIDE: u64 = 1;

/// The wake rate in force: `chosen` (`--wake-rate`, at most
/// `WAKE_RATE_MAX`) or, when 0 (not given), the policy's own; it follows
/// the policy when `tix policy` switches it.
pub fn wake_rate(stride: bool, chosen: u64) -> u64 {
    match chosen {
        0 if stride => WAKE_RATE_STRIDE,
        0 => WAKE_RATE_LOTTERY,
        r => r.min(WAKE_RATE_MAX),
    }
}

/// Sleeps of `1 << RATED_SLEEP_SHIFT` ns or more count as forever in
/// `rated_sleep` (rules.h's `TIX_RATED_SLEEP_SHIFT`).
pub const RATED_SLEEP_SHIFT: u32 = 59;

/// The sleep `wake_lag` is given at wake rate `rate`: `slept_ns` counted
/// `rate` times over (the credit reaches its cap `rate` times sooner;
/// `wake_lag` clamps the sleep to the cap's span). A rate of 0, which
/// `wake_rate` never gives, counts as 1. A sleep of 2^59 ns (18 years) or
/// more counts as forever (`u64::MAX`): then the product of any other fits,
/// and the BPF side needs no overflow test (clang makes one a 128-bit
/// multiply BPF cannot call); every such sleep reaches the cap anyway.
pub fn rated_sleep(slept_ns: u64, rate: u64) -> u64 {
    if slept_ns >> RATED_SLEEP_SHIFT != 0 {
        return u64::MAX;
    }
    slept_ns * rate.clamp(1, WAKE_RATE_MAX)
}

/// Slices of the frame's own time that a waking task's credit may span
/// (`wake_cap`). 16: at 4 the cap held that periodic task to 1.6 of its
/// slices (.961 with `--wake-lag 8`).
pub const WAKE_FRAME_SLICES: u64 = 16;

/// The most wake lag a task may keep in its frame: what the frame's
/// virtual time gains in `WAKE_FRAME_SLICES` slices (`lead_cap` over that
/// span, the same `vsum` and `serving`). The wake lag is `wake_lag`
/// capped by this.
///
/// Why: `wake_lag` counts a task's own slices, so each waking task may
/// stand up to `WAKE_SLICES` of its own slices of service ahead of a task
/// at the virtual time, and N of them together up to `N·WAKE_SLICES`
/// slices: 10,000 threads that sleep between 20 µs runs held a runner
/// keyed at the virtual time back for as long as that service took, and
/// the time itself stood still meanwhile (it moves when a decision starts
/// a key above it), so under overload the runner waited past the
/// watchdog (host model, `many_wakers_do_not_hold_back_a_runner`). Capped
/// here, a task keyed `cap` below the time needs `cap·value` of service
/// to reach it, and the tasks queued below it together at most
/// `cap·vsum`, which is `WAKE_FRAME_SLICES` slices on each serving CPU
/// (lottery: at E's mean). A task worth at least `1/(4·serving)` of the
/// runnable value keeps its whole `WAKE_SLICES` (at the defaults, 4 of 16),
/// so the few-task cases the credit is for (a periodic task beside four
/// hogs on two CPUs) are unchanged.
pub fn wake_cap(stride: bool, slice_ns: u64, vsum: u64, serving: u64) -> u64 {
    lead_cap(
        stride,
        slice_ns.saturating_mul(WAKE_FRAME_SLICES),
        slice_ns,
        vsum,
        serving,
    )
}

/// The wake level (`scx_tix --wake-level`): how far a frame's virtual
/// time stands ahead of `least`, the least key its runners started at
/// or the head of the woken task's queue holds. A
/// woken task may lag the time by that much as well as by its own
/// `wake_lag` (up to `wake_cap`), so it stands level with the runner
/// furthest behind, not behind it: runners that keep a CPU while others'
/// draws move the time on lag it by several of their runs, and a task
/// woken near the time then lost their slice ends one after another.
pub fn level_lag(vtime: u64, least: u64) -> u64 {
    vtime.saturating_sub(least)
}

/// A task's smoothed run length in ns: each charged run moves it an eighth
/// of the way to `used`. An eighth: one long run (a stalled CPU) moves the
/// bank little, a lasting change of run length moves it within ~16 runs.
pub fn run_avg(avg: u64, used: u64) -> u64 {
    avg - avg / 8 + used / 8
}

/// A lottery task's next key: its own last key, held no further than `lag`
/// behind `vtime`, plus the cost of its last run (`E·f/value`). The random
/// cost comes after the floor so that a task starting from `vtime` draws a
/// fresh exponential there, as the race needs. Saturates.
pub fn next_key(own: u64, vtime: u64, lag: u64, pending: u64) -> u64 {
    own.max(vtime.saturating_sub(lag)).saturating_add(pending)
}

/// A stride task's next pass: its pass (own key plus the cost of its last
/// run), held no further than `lag` behind `vtime`. With `lag = 0` this is
/// `stride.rs`'s wake rule, `max(pass, global pass)`. Saturates.
pub fn next_pass(own: u64, vtime: u64, lag: u64, pending: u64) -> u64 {
    own.saturating_add(pending).max(vtime.saturating_sub(lag))
}

/// Most CPUs a lead cap counts as serving a frame (see `lead_cap`).
pub const LEAD_SERVING_MAX: u64 = 8;

/// How far ahead of the virtual time a key may be drawn: what the virtual
/// time gains in about `starve_ns` when the runnable value sums to `vsum`
/// and `serving` CPUs run the frame's tasks (stride: `starve_ns·2^16/vsum`
/// per CPU; lottery: `starve_ns/slice_ns` draws of mean `2^36/vsum`, which
/// is `2^16` slices of `2^20`-scaled `race.rs` cost). A task whose fair wait
/// would exceed that (a share below `slice/starve` of what the frame's
/// CPUs give) waits about `starve_ns` instead, so no runnable task waits
/// long enough for the kernel's watchdog.
///
/// Why `serving`: the time gains `serving` CPUs' worth of cost, so a cap
/// sized for one CPU clipped ordinary draws wherever several CPUs share a
/// frame. It mattered once runs grew longer than a slice (a late tick: on
/// 4 vCPUs under TCG runs were ~4 slices): a 100-ticket task's long draws
/// were clipped and it got 5-12% over its share (host model,
/// `runs_of_many_slices_keep_the_shares`). The count is clamped to
/// `1..=LEAD_SERVING_MAX`: if the frame's CPUs are taken away after a
/// draw (pinned or real-time work), the wait stretches to at most
/// `LEAD_SERVING_MAX·starve_ns` (4 s at the default 500 ms, under the 10 s
/// watchdog); beyond 8 CPUs per frame a light task's longest draws are
/// clipped again (named approximation).
pub fn lead_cap(stride: bool, starve_ns: u64, slice_ns: u64, vsum: u64, serving: u64) -> u64 {
    let v = vsum.max(1);
    let one = if stride {
        starve_ns.saturating_mul(1 << 16) / v
    } else {
        (starve_ns / slice_ns.max(1)).saturating_mul(1 << 36) / v
    };
    one.saturating_mul(serving.clamp(1, LEAD_SERVING_MAX))
}

/// `key` held to at most `cap` ahead of `reference` (the frame's "now").
/// A key behind `reference` is never moved: the cap only pulls keys down to
/// the present, never below it.
pub fn cap_lead(key: u64, reference: u64, cap: u64) -> u64 {
    if key > reference && key - reference > cap {
        reference.saturating_add(cap)
    } else {
        key
    }
}

/// A woken kernel thread's key: just ahead of the smallest key waiting where
/// it may run (`head`, None when nothing waits), or its own if that is
/// smaller. The kernel's work (the sched_ext watchdog's own kworker, RCU,
/// softirqs) must not wait for a herd: 10^4 threads woken at once, each
/// keyed up to its wake cap below the time, held a kworker keyed at the
/// time behind all of them past the kernel's 10 s check-in. The jump is
/// a wake credit: it orders the queue, and preempts no runner.
pub fn kernel_wake_key(key: u64, head: Option<u64>) -> u64 {
    match head {
        Some(h) if key >= h => h.saturating_sub(1),
        _ => key,
    }
}

/// Own slices a woken task that only one CPU may run leads the shared
/// tasks by at that CPU's decisions unless told otherwise (`scx_tix
/// --pinned-lead`).
/// A shared task passed over there is still served in its key's turn, by
/// this CPU's next decision or any other CPU's; the pinned task has only
/// this CPU. With keys alone, a pinned waker (cyclictest as it runs by
/// default) lost CPU 0 to an unpinned hog keyed a hair before it 1 time in
/// 9-17 and waited the hog's whole slice (docs/kernel-results.md).
pub const PINNED_LEAD: u64 = 1;

/// The most `scx_tix --pinned-lead` takes.
pub const PINNED_LEAD_MAX: u64 = 4;

/// The key a woken task only one CPU may run is weighed at against shared
/// tasks at that CPU's decisions: `slices` (at most `PINNED_LEAD_MAX`) of its own
/// full runs (`one_run`) ahead of its queue key, which stays as drawn. The
/// lead is a fixed offset in the one virtual time, not a rate: over many
/// decisions the task's keys, and so its share, are those of its draws.
/// Woken tasks only: a pinned hog led at every slice end would move its
/// CPU's time a lead past the order it won in, and the shared keys floored
/// there would follow it (scx_tix's host model, `--pinned-lead` in
/// main.bpf.c's header).
pub fn lead_key(key: u64, one_run: u64, slices: u64) -> u64 {
    key.saturating_sub(one_run.saturating_mul(slices.min(PINNED_LEAD_MAX)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_lead_is_whole_runs_and_saturates() {
        assert_eq!(lead_key(1_000, 100, 1), 900);
        assert_eq!(lead_key(1_000, 100, 0), 1_000);
        assert_eq!(lead_key(1_000, 100, 99), 600);
        assert_eq!(lead_key(50, 100, 1), 0);
        assert_eq!(lead_key(u64::MAX, u64::MAX, 4), 0);
    }

    #[test]
    fn a_woken_kernel_thread_goes_ahead_of_the_head() {
        assert_eq!(kernel_wake_key(500, Some(100)), 99);
        assert_eq!(kernel_wake_key(100, Some(100)), 99);
        // Already ahead, or nothing waiting: its own key.
        assert_eq!(kernel_wake_key(50, Some(100)), 50);
        assert_eq!(kernel_wake_key(500, None), 500);
        // A head at 0 cannot be passed: the kthread ties it (FIFO after it).
        assert_eq!(kernel_wake_key(7, Some(0)), 0);
    }

    #[test]
    fn own_key_kept_within_the_lag() {
        assert_eq!(next_key(100, 120, 50, 7), 107);
        assert_eq!(next_key(10, 120, 50, 7), 77);
        // A waking task (lag 0) starts from the virtual time.
        assert_eq!(next_key(10, 120, 0, 7), 127);
        // Ahead of the virtual time: keeps its own key.
        assert_eq!(next_key(500, 120, 50, 7), 507);
        assert_eq!(next_key(u64::MAX - 1, 0, 0, 9), u64::MAX);
        assert_eq!(next_key(0, 5, 50, 0), 0);
        assert_eq!(lag_bound(u64::MAX / 2), u64::MAX);
        assert_eq!(next_pass(100, 120, 50, 7), 107);
        assert_eq!(next_pass(10, 120, 50, 7), 70);
        assert_eq!(next_pass(10, 120, 0, 7), 120);
        assert_eq!(next_pass(u64::MAX - 1, 0, 0, 9), u64::MAX);
    }

    #[test]
    fn the_wake_rate_is_the_policys_unless_chosen() {
        assert_eq!(wake_rate(false, 0), WAKE_RATE_LOTTERY);
        assert_eq!(wake_rate(true, 0), WAKE_RATE_STRIDE);
        assert_eq!(wake_rate(true, 3), 3);
        assert_eq!(wake_rate(false, 1), 1);
        assert_eq!(wake_rate(false, 1_000), WAKE_RATE_MAX);
        assert_eq!(rated_sleep(7, 2), 14);
        assert_eq!(rated_sleep(7, 0), 7);
        assert_eq!(rated_sleep(7, 1_000), 7 * WAKE_RATE_MAX);
        assert_eq!(rated_sleep(u64::MAX / 3, 4), u64::MAX);
        let forever = 1u64 << RATED_SLEEP_SHIFT;
        assert_eq!(rated_sleep(forever - 1, 16), (forever - 1) * 16);
        assert_eq!(rated_sleep(forever, 1), u64::MAX);
        // Twice the rate, the cap reached in half the sleep.
        let s = 4_000_000;
        assert_eq!(
            wake_lag(10, 4, rated_sleep(s, 2), s),
            wake_lag(10, 4, 2 * s, s)
        );
        assert_eq!(wake_lag(10, 4, rated_sleep(2 * s, 2), s), 40);
    }

    #[test]
    fn wake_lag_is_whole_own_slices() {
        assert_eq!(wake_lag(7 << 16, 0, 1_000, 10), 0);
        assert_eq!(wake_lag(7 << 16, 2, 1_000, 10), 14 << 16);
        assert_eq!(wake_lag(7 << 16, 2, 15, 10), (7 << 16) * 3 / 2);
        assert_eq!(wake_lag(7 << 16, 2, 0, 10), 0);
        assert_eq!(wake_lag(7, 1_000, u64::MAX, 1), 7 * WAKE_SLICES_MAX);
        assert_eq!(wake_lag(u64::MAX / 2, 3, 30, 10), u64::MAX);
        assert_eq!(wake_lag(1, 2, 1, 0), 0);
        // A sleeper far behind wakes WAKE_SLICES of its slices behind the
        // virtual time after sleeping that long; one ahead keeps its key.
        let lag = wake_lag(10, WAKE_SLICES, 1 << 40, 4_000_000);
        assert_eq!(next_key(0, 1_000, lag, 5), 1_000 - 10 * WAKE_SLICES + 5);
        assert_eq!(next_key(995, 1_000, lag, 5), 1_000);
    }

    #[test]
    fn wake_cap_spares_a_task_worth_half_a_cpu() {
        use crate::compensation::Compensation;
        use crate::race::race_cost;
        use crate::stride::pass_delta;
        let slice = 3_500_000;
        // The claim in wake_cap's doc, at the defaults: a task worth
        // 1/(2·serving) of the runnable value or more keeps its whole
        // credit; one worth 1/100 of it on one CPU keeps 4/(100·2) of it.
        for serving in 1..=4u64 {
            for stride in [false, true] {
                let one = |v: u64| {
                    if stride {
                        pass_delta(slice, v)
                    } else {
                        race_cost(1 << 16, v, slice, slice, Compensation::Waldspurger)
                    }
                };
                let v = 1_000u64;
                let full = wake_lag(one(v), WAKE_SLICES, u64::MAX, slice);
                // A hair above the boundary: the cap's division truncates.
                let vsum = 2 * serving * v - 1;
                assert!(
                    full <= wake_cap(stride, slice, vsum, serving),
                    "{stride} {serving}"
                );
                let light = wake_lag(one(10), WAKE_SLICES, u64::MAX, slice);
                let cap = wake_cap(stride, slice, 1_000, 1);
                let ratio = cap as f64 / light as f64;
                let want = WAKE_FRAME_SLICES as f64 / (100 * WAKE_SLICES) as f64;
                assert!((ratio - want).abs() < 0.001, "{stride}: {ratio}");
            }
        }
        assert_eq!(
            wake_cap(true, u64::MAX, 1, 1),
            lead_cap(true, u64::MAX, u64::MAX, 1, 1)
        );
    }

    #[test]
    fn run_average_follows_runs() {
        assert_eq!(run_avg(0, 8_000), 1_000);
        assert_eq!(run_avg(8_000, 8_000), 8_000);
        // No overflow: avg - avg/8 grows with avg, and at u64::MAX both eighths cancel.
        assert_eq!(run_avg(u64::MAX, u64::MAX), u64::MAX);
        let mut a = 0;
        for _ in 0..64 {
            a = run_avg(a, 16_000_000);
        }
        assert!(a > 15_900_000 && a <= 16_000_000, "{a}");
    }

    #[test]
    fn leads_capped_at_the_reference() {
        // 500 ms at 4 ms slices: 125 lottery draws of mean 2^36/V.
        assert_eq!(
            lead_cap(false, 500_000_000, 4_000_000, 1 << 20, 1),
            125 << 16
        );
        assert_eq!(
            lead_cap(true, 500_000_000, 4_000_000, 1 << 16, 1),
            500_000_000
        );
        assert_eq!(lead_cap(true, 1, 1, 0, 1), 1 << 16);
        // Serving CPUs multiply the cap, from 1 (none counted) up to 8.
        assert_eq!(
            lead_cap(false, 500_000_000, 4_000_000, 1 << 20, 0),
            125 << 16
        );
        assert_eq!(
            lead_cap(false, 500_000_000, 4_000_000, 1 << 20, 4),
            500 << 16
        );
        assert_eq!(
            lead_cap(false, 500_000_000, 4_000_000, 1 << 20, 64),
            1000 << 16
        );
        assert_eq!(lead_cap(true, u64::MAX, 1, 1, 8), u64::MAX);
        assert_eq!(cap_lead(1_000, 100, 50), 150);
        assert_eq!(cap_lead(120, 100, 50), 120);
        // Behind the reference: untouched (never pulled further back).
        assert_eq!(cap_lead(10, 100, 50), 10);
        assert_eq!(cap_lead(u64::MAX, u64::MAX - 1, 5), u64::MAX);
    }
}
