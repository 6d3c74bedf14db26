//! Balancing per-CPU run queues as Samih Ch. 4 models Linux CFS (Eqs.
//! 4.1–4.3: load = Σ weights, move while the imbalance covers half a
//! task's weight), and his shuttle process (§4.4): when CFS sees no
//! imbalance worth a move but the heavy queue has two tasks more than the
//! light one, its lightest task spends one period on the light CPU and the
//! next at home, and so on.
//!
//! Choices the thesis leaves open: a new shuttle is chosen at each period
//! it is at home (so the lightest task of the heavy queue then); ties go
//! to the lowest CPU and the lowest task; heavy and light are recomputed
//! every period; on more than two CPUs the rule acts between the heaviest
//! and the lightest queue only.

/// Which balancing runs at each period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// CFS's load balancing as the thesis models it.
    Cfs,
    /// CFS's, then the shuttle process when CFS moves nothing.
    Shuttle,
}

/// One CPU's run queue as the balancer sees it.
#[derive(Debug, Clone, Default)]
pub struct Queue<T> {
    /// Σ weights of its runnable tasks (Eq. 4.1).
    pub load: u64,
    /// Its runnable tasks.
    pub nr: usize,
    /// The tasks that may move now, with their weights (any order).
    pub movable: Vec<(T, u64)>,
}

/// The balancer's state between periods: where the shuttle lives.
#[derive(Debug, Clone)]
pub struct Balancer<T> {
    pub rule: Rule,
    shuttle: Option<(T, usize)>,
}

impl<T: Copy + Ord> Balancer<T> {
    pub fn new(rule: Rule) -> Self {
        Balancer {
            rule,
            shuttle: None,
        }
    }

    /// The shuttle process and its home CPU, once there is one.
    pub fn shuttle(&self) -> Option<(T, usize)> {
        self.shuttle
    }

    /// One balancing period over `queues` (index = CPU). `at(t)` says
    /// where task t is now and whether it may move (None: it is gone).
    /// Returns the moves to make: (task, from, to).
    pub fn period(
        &mut self,
        queues: &[Queue<T>],
        at: impl Fn(T) -> Option<(usize, bool)>,
    ) -> Vec<(T, usize, usize)> {
        let p = queues.len();
        if p < 2 {
            return Vec::new();
        }
        if self.rule == Rule::Shuttle {
            if let Some((t, home)) = self.shuttle {
                match at(t) {
                    // It spent a period on the light CPU: back home. (One
                    // that cannot move now stays a period longer, and the
                    // queues are balanced as usual meanwhile.)
                    Some((cpu, true)) if cpu != home => return vec![(t, cpu, home)],
                    None => self.shuttle = None,
                    _ => {}
                }
            }
        }
        let heavy = (0..p)
            .max_by_key(|&i| (queues[i].load, std::cmp::Reverse(i)))
            .unwrap_or(0);
        let light = (0..p).min_by_key(|&i| (queues[i].load, i)).unwrap_or(0);
        if heavy == light {
            return Vec::new();
        }
        let (h, l) = (&queues[heavy], &queues[light]);
        let avg = queues.iter().map(|q| q.load).sum::<u64>() / p as u64;
        // Eq. 4.2, in the form the Linux code has (the thesis prints
        // min(Load_busiest, Load_avg) for the first term; its example
        // gives the same 158 either way).
        let mut imbal = h.load.saturating_sub(avg).min(avg.saturating_sub(l.load));
        let mut cands: Vec<(T, u64)> = h.movable.clone();
        cands.sort_by_key(|&(t, w)| (w, t));
        let min_w = cands.first().map_or(0, |c| c.1);
        // An idle CPU pulls a task whatever its weight (CFS's idle balance).
        let idle_pull = l.nr == 0 && h.nr >= 2;
        let mut moves = Vec::new();
        // Eq. 4.3: worth moving only if it covers half the lightest weight.
        if (imbal > 0 && imbal * 2 >= min_w && h.nr >= 2) || idle_pull {
            for (t, w) in cands {
                if w <= imbal * 2 || (idle_pull && moves.is_empty()) {
                    moves.push((t, heavy, light));
                    imbal = imbal.saturating_sub(w);
                    if imbal == 0 {
                        break;
                    }
                }
            }
            return moves;
        }
        if self.rule == Rule::Shuttle && h.nr >= l.nr + 2 {
            if let Some(&(t, _)) = cands.first() {
                self.shuttle = Some((t, heavy));
                moves.push((t, heavy, light));
            }
        }
        moves
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Tasks (id → (weight, cpu)) as per-CPU queues, all movable.
    fn queues(tasks: &HashMap<u32, (u64, usize)>, p: usize) -> Vec<Queue<u32>> {
        let mut q = vec![Queue::default(); p];
        for (&t, &(w, c)) in tasks {
            q[c].load += w;
            q[c].nr += 1;
            q[c].movable.push((t, w));
        }
        q
    }

    fn apply(tasks: &mut HashMap<u32, (u64, usize)>, moves: &[(u32, usize, usize)]) {
        for &(t, from, to) in moves {
            let e = tasks.get_mut(&t).unwrap();
            assert_eq!(e.1, from);
            e.1 = to;
        }
    }

    /// Fig. 4.1: T1 (1024) alone on CPU 0, T2–T5 (335) on CPU 1. Loads
    /// 1024 and 1340: the imbalance (158) is under half a weight (167.5),
    /// so CFS moves nothing, ever.
    fn fig41() -> HashMap<u32, (u64, usize)> {
        let mut t = HashMap::from([(1, (1024, 0))]);
        for k in 2..=5 {
            t.insert(k, (335, 1));
        }
        t
    }

    #[test]
    fn cfs_leaves_fig_4_1_alone() {
        let tasks = fig41();
        let mut b = Balancer::new(Rule::Cfs);
        for _ in 0..10 {
            let m = b.period(&queues(&tasks, 2), |t| tasks.get(&t).map(|e| (e.1, true)));
            assert!(m.is_empty(), "{m:?}");
        }
        assert_eq!(b.shuttle(), None);
    }

    #[test]
    fn the_shuttle_alternates_between_the_cpus() {
        let mut tasks = fig41();
        let mut b = Balancer::new(Rule::Shuttle);
        let mut away = 0;
        for period in 0..10 {
            let m = b.period(&queues(&tasks, 2), |t| tasks.get(&t).map(|e| (e.1, true)));
            // Every period moves exactly the shuttle, the lightest task of
            // the heavy CPU (2: ties go to the lowest id), out then home.
            assert_eq!(m.len(), 1, "period {period}: {m:?}");
            assert_eq!(m[0].0, 2);
            let out = period % 2 == 0;
            assert_eq!((m[0].1, m[0].2), if out { (1, 0) } else { (0, 1) });
            apply(&mut tasks, &m);
            away += usize::from(tasks[&2].1 == 0);
        }
        assert_eq!(away, 5);
        assert_eq!(b.shuttle(), Some((2, 1)));
    }

    #[test]
    fn cfs_moves_a_real_imbalance_and_an_idle_cpu_pulls() {
        // 4 equal tasks on CPU 0, none on 1: the idle CPU pulls, then the
        // imbalance (1024 of 2048 average) moves whole tasks until even.
        let mut tasks: HashMap<u32, (u64, usize)> = (1..=4).map(|k| (k, (1024, 0))).collect();
        let mut b = Balancer::new(Rule::Cfs);
        let m = b.period(&queues(&tasks, 2), |t| tasks.get(&t).map(|e| (e.1, true)));
        apply(&mut tasks, &m);
        let on1 = tasks.values().filter(|e| e.1 == 1).count();
        assert_eq!(on1, 2, "{m:?}");
        let m = b.period(&queues(&tasks, 2), |t| tasks.get(&t).map(|e| (e.1, true)));
        assert!(m.is_empty());
    }

    #[test]
    fn a_shuttle_that_cannot_move_waits_and_one_gone_is_forgotten() {
        let mut tasks = fig41();
        let mut b = Balancer::new(Rule::Shuttle);
        let m = b.period(&queues(&tasks, 2), |t| tasks.get(&t).map(|e| (e.1, true)));
        apply(&mut tasks, &m);
        // Running (not movable) on the light CPU: it stays, and the
        // queues (1359 : 1005) are balanced as usual: nothing to move.
        let mut q = queues(&tasks, 2);
        q[0].movable.retain(|&(t, _)| t != 2);
        let m = b.period(&q, |t| tasks.get(&t).map(|e| (e.1, t != 2)));
        assert!(m.is_empty(), "{m:?}");
        assert_eq!(b.shuttle(), Some((2, 1)));
        // Gone while away: forgotten; T1 (1024) now outweighs 3 × 335, so
        // nothing moves.
        tasks.remove(&2);
        let m = b.period(&queues(&tasks, 2), |t| tasks.get(&t).map(|e| (e.1, true)));
        assert!(m.is_empty(), "{m:?}");
        assert_eq!(b.shuttle(), None);
        // A fourth light task arrives at CPU 1: a new shuttle, the lightest.
        tasks.insert(6, (335, 1));
        let m = b.period(&queues(&tasks, 2), |t| tasks.get(&t).map(|e| (e.1, true)));
        assert_eq!(m, vec![(3, 1, 0)]);
        assert_eq!(b.shuttle(), Some((3, 1)));
    }
}
