// 0/1 knapsack: one row updated from high capacity to low, bounded by the weight seen so far.
use std::io::{self, Read};

fn main() {
    let mut input = Vec::new();
    io::stdin().read_to_end(&mut input).unwrap();
    let mut nums = input
        .split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
        .map(|t| t.iter().fold(0u64, |acc, &d| acc * 10 + (d - b'0') as u64));
    let n = match nums.next() {
        Some(n) => n as usize,
        None => return,
    };
    let cap = nums.next().unwrap() as usize;
    let mut best = vec![0u64; cap + 1];
    // best[c] = largest value of weight <= c. Above the total weight seen so far (`reach`)
    // every entry equals best[reach], so the loop never needs to look beyond it.
    let mut reach = 0usize;
    for _ in 0..n {
        let w = nums.next().unwrap() as usize;
        let v = nums.next().unwrap();
        if w > cap {
            continue;
        }
        let grown = (reach + w).min(cap);
        let top = best[reach];
        best[reach + 1..=grown].fill(top);
        reach = grown;
        // Descending capacities read only values from before this item: each item used once.
        for c in (w..=reach).rev() {
            let take = best[c - w] + v;
            if take > best[c] {
                best[c] = take;
            }
        }
    }
    println!("{}", best[reach]);
}
