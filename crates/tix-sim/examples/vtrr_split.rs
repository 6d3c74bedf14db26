//! VTRR's skewed maximum at the grid point where it peaks (N = 256,
//! S = 2048) under four readings of GR3 §5.1's "all of the other clients
//! were then randomly assigned shares to sum to the remaining 25 percent":
//! tix's (each small share 1 + a uniform draw's part of the spare), all
//! equal, each uniform in 1..=3 then nudged to the sum, and all 1 with the
//! spare handed out in random lumps of 1..=7. 400 sets each, seed 2003;
//! prints the average maximum and how often the 75% client holds it.
//! `cargo run --release -p tix-sim --example vtrr_split`
use tix_sim::rng::WorkRng;
use tix_sim::service_error::{error_run, share_set, ShareDist};
fn main() {
    let (n, s) = (256usize, 2048u64);
    let runs = 400;
    let big = s * 3 / 4;
    for split in ["ours", "equal", "uniform13", "geom"] {
        let mut tot_max = 0.0;
        let mut who_big = 0;
        for r in 0..runs {
            let mut rng = WorkRng::derive(2003, r);
            let shares: Vec<u64> = match split {
                "ours" => share_set(ShareDist::Skewed, n, s, &mut rng),
                "equal" => {
                    let mut v = vec![(s - big) / (n as u64 - 1); n - 1];
                    let mut left = s - big - v.iter().sum::<u64>();
                    let mut i = 0;
                    while left > 0 {
                        v[i] += 1;
                        left -= 1;
                        i += 1;
                    }
                    let at = rng.range(0, (n - 1) as u64) as usize;
                    v.insert(at, big);
                    v
                }
                "uniform13" => {
                    let mut v: Vec<u64> = (0..n - 1).map(|_| rng.range(1, 3)).collect();
                    let mut sum: i64 = v.iter().sum::<u64>() as i64 - (s - big) as i64;
                    while sum != 0 {
                        let i = rng.range(0, (n - 2) as u64) as usize;
                        if sum > 0 && v[i] > 1 {
                            v[i] -= 1;
                            sum -= 1;
                        } else if sum < 0 {
                            v[i] += 1;
                            sum += 1;
                        }
                    }
                    let at = rng.range(0, (n - 1) as u64) as usize;
                    v.insert(at, big);
                    v
                }
                _ => {
                    let mut v = vec![1u64; n - 1];
                    let mut left = s - big - (n as u64 - 1);
                    while left > 0 {
                        let i = rng.range(0, (n - 2) as u64) as usize;
                        let k = left.min(1 + rng.range(0, 7));
                        v[i] += k;
                        left -= k;
                    }
                    let at = rng.range(0, (n - 1) as u64) as usize;
                    v.insert(at, big);
                    v
                }
            };
            let e = error_run("vtrr", &shares, None, 1).unwrap();
            tot_max += e.max;
            let arg = e
                .clients
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.max.partial_cmp(&b.1.max).unwrap())
                .unwrap()
                .0;
            if shares[arg] == big {
                who_big += 1;
            }
        }
        println!(
            "{split}: mean max {:.2}, max held by the big client in {who_big}/{runs}",
            tot_max / runs as f64
        );
    }
}
