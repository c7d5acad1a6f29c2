// 0/1 knapsack: top-down recursion memoised in a HashMap keyed by (item, capacity).
use std::collections::HashMap;
use std::io::{self, Read};

fn best(i: usize, cap: usize, items: &[(usize, u64)], memo: &mut HashMap<(usize, usize), u64>) -> u64 {
    if i == items.len() {
        return 0;
    }
    if let Some(&v) = memo.get(&(i, cap)) {
        return v;
    }
    let (w, v) = items[i];
    let mut result = best(i + 1, cap, items, memo);
    if w <= cap {
        result = result.max(v + best(i + 1, cap - w, items, memo));
    }
    memo.insert((i, cap), result);
    result
}

fn main() {
    let mut input = String::new();
    io::stdin().read_to_string(&mut input).unwrap();
    let nums: Vec<u64> = input.split_whitespace().map(|t| t.parse().unwrap()).collect();
    if nums.is_empty() {
        return;
    }
    let n = nums[0] as usize;
    let cap = nums[1] as usize;
    let items: Vec<(usize, u64)> = (0..n).map(|i| (nums[2 + 2 * i] as usize, nums[3 + 2 * i])).collect();
    let mut memo = HashMap::new();
    println!("{}", best(0, cap, &items, &mut memo));
}
