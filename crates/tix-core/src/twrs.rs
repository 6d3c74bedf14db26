//! TWRS, the Thread Weight Readjustment Scheduler's weight rule (Samih 004,
//! Ch. 3 §3.4, Eq. 3.3): a thread of process j on core k weighs
//! weight(process j) × (threads on core k − threads of process j on core k).

use crate::error::{Error, Result};
use crate::sched::check_weight;

/// Eq. 3.3. `threads_on_core` is N_k (every runnable thread on the core),
/// `threads_of_process` is n_j (the process's own runnable threads there).
///
/// A process alone on its core has N_k − n_j = 0; the thesis does not say
/// what then happens, so its weight is kept unchanged (it competes with
/// nobody, any positive weight gives it the whole core).
pub fn thread_weight(
    process_weight: u64,
    threads_on_core: u64,
    threads_of_process: u64,
) -> Result<u64> {
    check_weight(process_weight)?;
    if threads_of_process == 0 || threads_of_process > threads_on_core {
        return Err(Error::Invalid(format!(
            "TWRS: process has {threads_of_process} threads on a core running {threads_on_core}; \
             expected 1..={threads_on_core}"
        )));
    }
    let others = threads_on_core - threads_of_process;
    if others == 0 {
        return Ok(process_weight);
    }
    let w = process_weight
        .checked_mul(others)
        .ok_or(Error::Overflow("TWRS thread weight"))?;
    check_weight(w)?;
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq_3_3_compresses_the_many_threaded_process() {
        // Samih's S0 group, C = 10: A, B, C with 1, 8, 10 threads, nice 0.
        let n = 19;
        let w: Vec<u64> = [1, 8, 10]
            .iter()
            .map(|&k| thread_weight(1024, n, k).unwrap())
            .collect();
        assert_eq!(w, [1024 * 18, 1024 * 11, 1024 * 9]);
        // Process shares n_j(N − n_j)/Σ: 18 : 88 : 90 of 196, i.e. the
        // digest's 9.18% / 44.90% / 45.92%.
        let agg: Vec<u64> = [1u64, 8, 10].iter().zip(&w).map(|(k, w)| k * w).collect();
        let sum: u64 = agg.iter().sum();
        let pct: Vec<f64> = agg.iter().map(|&a| a as f64 * 100.0 / sum as f64).collect();
        for (got, want) in pct.iter().zip([9.18, 44.90, 45.92]) {
            assert!((got - want).abs() < 0.005, "{got} vs {want}");
        }
    }

    #[test]
    fn lone_process_and_bad_counts() {
        assert_eq!(thread_weight(1024, 4, 4), Ok(1024));
        assert!(matches!(thread_weight(1024, 3, 4), Err(Error::Invalid(_))));
        assert!(matches!(thread_weight(1024, 3, 0), Err(Error::Invalid(_))));
        assert_eq!(thread_weight(0, 3, 1), Err(Error::ZeroWeight));
        assert!(thread_weight(1 << 31, 10, 1).is_err());
    }
}
