//! tix-sim: runs tix-core's policies on simulated workloads (GR3 §5,
//! Waldspurger §5–6, Zepp §5.2–5.3, Samih Ch. 2–4, RAS Ch. 3).
