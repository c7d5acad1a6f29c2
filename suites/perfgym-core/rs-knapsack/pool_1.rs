// 0/1 knapsack: bottom-up table with one row per item, (N+1) x (W+1) entries.
use std::io::{self, Read};

fn main() {
    let mut input = String::new();
    io::stdin().read_to_string(&mut input).unwrap();
    let nums: Vec<u64> = input.split_whitespace().map(|t| t.parse().unwrap()).collect();
    if nums.is_empty() {
        return;
    }
    let n = nums[0] as usize;
    let cap = nums[1] as usize;
    let mut table = vec![vec![0u64; cap + 1]; n + 1];
    for i in 1..=n {
        let w = nums[2 * i] as usize;
        let v = nums[2 * i + 1];
        for c in 0..=cap {
            table[i][c] = table[i - 1][c];
            if w <= c && table[i - 1][c - w] + v > table[i][c] {
                table[i][c] = table[i - 1][c - w] + v;
            }
        }
    }
    println!("{}", table[n][cap]);
}
