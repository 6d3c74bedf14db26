//! The Race-Averse Scheduler's slice rule (seed 002 §2.2): weighted round
//! robin whose slice falls as a task's share of the traced writes rises —
//! race_prob = ⌊10 · wcounts / Σ wcounts⌋ (eq. 2-1), slice = 100 ms − 10 ms ·
//! race_prob (eq. 2-2), recomputed whenever a slice expires.
//!
//! Σ runs over the tasks on the run queue, the current one included. The
//! report's special cases give the longest slice: a task alone on the queue,
//! no writes counted at all, or a task that is the only writer. Integer
//! division as in the report's code, so a task under a tenth of the writes
//! gets race_prob 0 (and RAS is RR with 100 ms slices among many equal
//! writers; the report's own reading of its small-N results).

/// Longest slice (race_prob 0), ns.
pub const MAX_SLICE_NS: u64 = 100_000_000;
/// Shortest slice (race_prob 9), ns.
pub const MIN_SLICE_NS: u64 = 10_000_000;
/// Largest race probability: eq. 2-1 is below 10 unless the task is the only
/// writer, which is a special case.
pub const MAX_RACE_PROB: u64 = 9;

/// Eq. 2-1 with the report's special cases: `wcounts` of this task, `sum`
/// over the runnable tasks (this one included), `nr_running` of them.
pub fn race_prob(wcounts: u64, sum: u64, nr_running: u64) -> u64 {
    if nr_running <= 1 || sum == 0 || wcounts >= sum {
        // Alone, nothing counted, or the only writer (the report's
        // sum == wcounts; ≥ also covers a sum read before this task's last
        // writes were added to it).
        return 0;
    }
    ((wcounts as u128 * 10 / sum as u128) as u64).min(MAX_RACE_PROB)
}

/// Eq. 2-2: (max − min)/(0 − 9) · race_prob + max.
pub fn slice_ns(race_prob: u64) -> u64 {
    let step = (MAX_SLICE_NS - MIN_SLICE_NS) / MAX_RACE_PROB;
    MAX_SLICE_NS - step * race_prob.min(MAX_RACE_PROB)
}

/// A task's next slice from its writes and the queue's.
pub fn next_slice_ns(wcounts: u64, sum: u64, nr_running: u64) -> u64 {
    slice_ns(race_prob(wcounts, sum, nr_running))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq_2_2_is_the_reports_table() {
        let table = [100, 90, 80, 70, 60, 50, 40, 30, 20, 10];
        for (p, ms) in table.iter().enumerate() {
            assert_eq!(slice_ns(p as u64), ms * 1_000_000, "race_prob {p}");
        }
        assert_eq!(slice_ns(42), MIN_SLICE_NS);
    }

    #[test]
    fn eq_2_1_truncates_as_the_reports_code() {
        // Pairs legible in the report's multi-task log (Fig. 2-6).
        assert_eq!(race_prob(404, 955, 5), 4);
        assert_eq!(race_prob(757, 2166, 5), 3);
        assert_eq!(race_prob(282, 2044, 5), 1);
        assert_eq!(race_prob(496, 1976, 5), 2);
        assert_eq!(race_prob(250, 1205, 5), 2);
        assert_eq!(next_slice_ns(404, 955, 5), 60_000_000);
        // Under a tenth of the writes: 0.
        assert_eq!(race_prob(99, 1000, 3), 0);
        assert_eq!(race_prob(999, 1000, 3), 9);
    }

    #[test]
    fn special_cases_get_the_longest_slice() {
        assert_eq!(next_slice_ns(500, 1000, 1), MAX_SLICE_NS); // alone
        assert_eq!(next_slice_ns(0, 0, 4), MAX_SLICE_NS); // nothing traced
        assert_eq!(next_slice_ns(700, 700, 4), MAX_SLICE_NS); // only writer
        assert_eq!(next_slice_ns(701, 700, 4), MAX_SLICE_NS); // stale sum
        assert_eq!(next_slice_ns(0, 700, 4), MAX_SLICE_NS); // not a writer
    }

    #[test]
    fn huge_counts_do_not_overflow() {
        assert_eq!(race_prob(u64::MAX - 1, u64::MAX, 2), 9);
        assert_eq!(race_prob(u64::MAX / 2, u64::MAX, 2), 4);
    }
}
