//! SRR against a literal model of GR3 §3's description (Guo's Smoothed
//! Round Robin), sharing no code with `tix_core::srr`: the weight matrix
//! holds each client's share in binary, one column per bit; the weight
//! spread sequence WSS^1 = 1, WSS^i = WSS^(i−1), i, WSS^(i−1) is scanned
//! term by term, term i serving once each client whose column 2^(k−i) is
//! set, k being the bit length of the largest share. The sequence is built
//! here as a list, as the definition reads. Clients within a column are
//! served in join order (the library's documented choice; §3 names none).
//! Scope: static sets, all clients joined before the first pick.

mod literal;

use proptest::prelude::*;
use tix_core::ClientId;

/// WSS^k as a list.
fn wss(k: u32) -> Vec<u32> {
    if k == 1 {
        return vec![1];
    }
    let prev = wss(k - 1);
    let mut s = prev.clone();
    s.push(k);
    s.extend(prev);
    s
}

fn srr_paper(shares: &[u64], n: usize) -> Vec<ClientId> {
    let k = 64 - shares.iter().max().unwrap().leading_zeros();
    let seq = wss(k);
    let mut out = Vec::with_capacity(n);
    'outer: loop {
        for &i in &seq {
            let bit = 1u64 << (k - i);
            for (a, &s) in shares.iter().enumerate() {
                if s & bit != 0 {
                    out.push(a);
                    if out.len() == n {
                        break 'outer;
                    }
                }
            }
        }
    }
    out
}

fn library(shares: &[u64], n: usize) -> Vec<ClientId> {
    literal::library("srr", shares, n, 1_000)
}

proptest! {
    #![proptest_config(literal::config())]

    /// Two passes over WSS^k (2·Σ shares quanta), at most 4,000 picks.
    #[test]
    fn srr_follows_the_paper(shares in literal::shares(10, 8, 300)) {
        let n = literal::two_cycles(&shares);
        prop_assert_eq!(library(&shares, n), srr_paper(&shares, n), "shares {:?}", shares);
    }
}

#[test]
fn weight_spread_sequence_is_the_papers() {
    assert_eq!(wss(3), [1, 2, 1, 3, 1, 2, 1]);
    // Shares 3 (011), 2 (010), 1 (001), k = 2: WSS^2 = 1, 2, 1; term 1 is
    // column 2^1 (A, B), term 2 column 2^0 (A, C).
    assert_eq!(srr_paper(&[3, 2, 1], 6), [0, 1, 0, 2, 0, 1]);
}
