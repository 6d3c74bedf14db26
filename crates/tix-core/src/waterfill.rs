//! The ideal share of each task on N CPUs: fluid GPS where no task can use
//! more than one CPU, the excess of an infeasible weight handed to the rest
//! (water-filling; Chandra et al.'s weight readjustment, cited by Samih 004
//! Ch. 4). This is the yardstick for the kernel scheduler on N CPUs.
//!
//! Affinity: a task may be restricted to a set of CPUs. The fluid ideal is
//! then the max-min fair allocation in weighted rates: every task's rate is
//! `λ·w` for one common level λ until the task reaches one CPU or the CPUs it
//! may use are saturated by the tasks that can use nothing else; such tasks
//! freeze and the rest keep filling. Computed by progressive filling over
//! the distinct affinity masks (at most 64 CPUs here, which covers every VM
//! and test machine tix measures on).

/// A task for the ideal: its weight and the CPUs it may run on (bit c = CPU
/// c; `u64::MAX` = everywhere).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Demand {
    pub weight: u64,
    pub cpus: u64,
}

/// CPUs each task receives (0..=1) when `weights` share `cpus` CPUs and every
/// task may run anywhere. Zero weights receive nothing.
pub fn ideal_cpus(weights: &[u64], cpus: usize) -> Vec<f64> {
    let mask = if cpus >= 64 {
        u64::MAX
    } else {
        (1u64 << cpus) - 1
    };
    let d: Vec<Demand> = weights
        .iter()
        .map(|&weight| Demand { weight, cpus: mask })
        .collect();
    ideal_cpus_affine(&d, cpus)
}

/// As [`ideal_cpus`], with each task's affinity. Masks are cut to the first
/// `cpus` CPUs (at most 64); a task with no usable CPU receives nothing.
pub fn ideal_cpus_affine(tasks: &[Demand], cpus: usize) -> Vec<f64> {
    let cpus = cpus.min(64);
    let all = if cpus == 64 {
        u64::MAX
    } else {
        (1u64 << cpus) - 1
    };
    let n = tasks.len();
    let mut rate = vec![0.0f64; n];
    let mut frozen: Vec<bool> = tasks
        .iter()
        .map(|t| t.weight == 0 || t.cpus & all == 0)
        .collect();
    // Each round raises λ until the next task hits one CPU or the next set
    // of CPUs saturates; at least one task freezes per round.
    for _ in 0..=n {
        if frozen.iter().all(|&f| f) {
            break;
        }
        // Candidate sets: unions of the active tasks' masks (closure under
        // union, capped to keep this small; distinct masks are few).
        let mut sets: Vec<u64> = Vec::new();
        for (i, t) in tasks.iter().enumerate() {
            if !frozen[i] && !sets.contains(&(t.cpus & all)) {
                sets.push(t.cpus & all);
            }
        }
        let mut k = 0;
        while k < sets.len() && sets.len() < 4096 {
            for j in 0..k {
                let u = sets[j] | sets[k];
                if !sets.contains(&u) {
                    sets.push(u);
                }
            }
            k += 1;
        }
        // Smallest step dλ (in rate per unit weight) that freezes something.
        let mut step = f64::INFINITY;
        for (i, t) in tasks.iter().enumerate() {
            if !frozen[i] {
                step = step.min((1.0 - rate[i]) / t.weight as f64);
            }
        }
        for &s in &sets {
            let (used, w) = load_of(tasks, &rate, &frozen, s, all);
            if w > 0.0 {
                step = step.min((s.count_ones() as f64 - used) / w);
            }
        }
        let step = step.max(0.0);
        for (i, t) in tasks.iter().enumerate() {
            if !frozen[i] {
                rate[i] += step * t.weight as f64;
            }
        }
        // Freeze tasks at one CPU and tasks inside a saturated set.
        const EPS: f64 = 1e-9;
        for i in 0..n {
            if !frozen[i] && rate[i] >= 1.0 - EPS {
                rate[i] = 1.0;
                frozen[i] = true;
            }
        }
        for &s in &sets {
            let (used, w) = load_of(tasks, &rate, &frozen, s, all);
            if w > 0.0 && used >= s.count_ones() as f64 - EPS {
                for (i, t) in tasks.iter().enumerate() {
                    if t.cpus & all & !s == 0 {
                        frozen[i] = true;
                    }
                }
            }
        }
    }
    rate
}

/// CPU time used by the tasks confined to `s`, and the weight of the active
/// ones among them.
fn load_of(tasks: &[Demand], rate: &[f64], frozen: &[bool], s: u64, all: u64) -> (f64, f64) {
    let mut used = 0.0;
    let mut w = 0.0;
    for (i, t) in tasks.iter().enumerate() {
        if t.cpus & all & !s == 0 {
            used += rate[i];
            if !frozen[i] {
                w += t.weight as f64;
            }
        }
    }
    (used, w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-9, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn feasible_weights_are_proportional() {
        close(&ideal_cpus(&[1, 1, 2], 2), &[0.5, 0.5, 1.0]);
        close(&ideal_cpus(&[1, 1, 1], 2), &[2.0 / 3.0; 3]);
        close(
            &ideal_cpus(&[100, 100, 100, 300], 2),
            &[1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 1.0],
        );
    }

    #[test]
    fn infeasible_weights_are_capped_and_the_rest_refilled() {
        // 4 CPUs, 100,100,200,200,400,400: the 400s hold one CPU each and
        // the other four share two CPUs 1:1:2:2.
        close(
            &ideal_cpus(&[100, 100, 200, 200, 400, 400], 4),
            &[1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0, 1.0, 1.0],
        );
        close(&ideal_cpus(&[100, 100, 800], 2), &[0.5, 0.5, 1.0]);
        // Fewer tasks than CPUs: everyone gets a whole CPU.
        close(&ideal_cpus(&[1, 1000], 4), &[1.0, 1.0]);
        close(&ideal_cpus(&[0, 5], 1), &[0.0, 1.0]);
    }

    #[test]
    fn affinity_confines_and_the_rest_fill() {
        let all = u64::MAX;
        // 4 CPUs, two hogs allowed {0,1}, nothing else: one CPU each.
        let t = [
            Demand {
                weight: 1,
                cpus: 0b11,
            },
            Demand {
                weight: 1,
                cpus: 0b11,
            },
        ];
        close(&ideal_cpus_affine(&t, 4), &[1.0, 1.0]);
        // Three hogs on CPU 0 and one free hog on 2 CPUs: the free one takes
        // CPU 1 whole; the pinned share CPU 0 by weight.
        let t = [
            Demand { weight: 1, cpus: 1 },
            Demand { weight: 2, cpus: 1 },
            Demand { weight: 1, cpus: 1 },
            Demand {
                weight: 1,
                cpus: all,
            },
        ];
        close(&ideal_cpus_affine(&t, 2), &[0.25, 0.5, 0.25, 1.0]);
        // Total never exceeds the CPUs and no task exceeds one.
        let t = [
            Demand {
                weight: 7,
                cpus: 0b001,
            },
            Demand {
                weight: 1,
                cpus: 0b011,
            },
            Demand {
                weight: 3,
                cpus: 0b110,
            },
            Demand {
                weight: 9,
                cpus: all,
            },
            Demand {
                weight: 2,
                cpus: all,
            },
        ];
        let r = ideal_cpus_affine(&t, 3);
        assert!(r.iter().sum::<f64>() <= 3.0 + 1e-9);
        assert!(r.iter().all(|&x| (0.0..=1.0 + 1e-9).contains(&x)));
        assert!((r.iter().sum::<f64>() - 3.0).abs() < 1e-9, "{r:?}");
    }
}
