//! Stride against a literal model of Waldspurger & Weihl's stride
//! scheduling as tix-core's `stride.rs` cites it (the deterministic
//! relative of lottery; GR3 §3: "the CPU form" of WFQ), sharing no code
//! with the library: each client's stride is stride1/tickets, its pass
//! grows by its stride per quantum, the smallest pass runs. The stride
//! report is not among the seeds; the model follows the library's
//! documented rules where a reader could choose: every pass starts at 0
//! (the global pass when all join together), ties go to join order.
//! Passes are exact fractions n_A/t_A. The library keeps them in fixed
//! point ((used << 16)/tickets, truncated), exact when the tickets divide
//! the quantum times 2^16: the shares drawn here do at a 720,720 ns
//! quantum (odd part dividing 45,045, times a power of two).
//! Scope: static sets, all clients joined before the first pick.

mod literal;

use proptest::prelude::*;
use tix_core::ClientId;

fn stride_paper(tickets: &[u64], n: usize) -> Vec<ClientId> {
    let mut runs = vec![0u128; tickets.len()];
    (0..n)
        .map(|_| {
            let mut best = 0;
            for a in 1..tickets.len() {
                let (ta, tb) = (tickets[a] as u128, tickets[best] as u128);
                // pass_a = runs_a / t_a < pass_best, cross-multiplied.
                if runs[a] * tb < runs[best] * ta {
                    best = a;
                }
            }
            runs[best] += 1;
            best
        })
        .collect()
}

fn library(tickets: &[u64], n: usize) -> Vec<ClientId> {
    literal::library("stride", tickets, n, literal::EXACT_Q)
}

proptest! {
    #![proptest_config(literal::config())]

    #[test]
    fn stride_follows_the_model(tickets in literal::exact_shares()) {
        let n = literal::two_cycles(&tickets);
        prop_assert_eq!(library(&tickets, n), stride_paper(&tickets, n), "tickets {:?}", tickets);
    }
}

#[test]
fn three_two_one() {
    // Passes 0,0,0 → A, B, C; then A (1/3), B (1/2), A (2/3).
    assert_eq!(stride_paper(&[3, 2, 1], 6), [0, 1, 2, 0, 1, 0]);
}
