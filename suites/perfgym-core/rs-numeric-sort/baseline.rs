// Numeric sort: keeps the numbers as strings and parses both sides inside every comparison.
use std::io::{self, Read};

fn main() {
    let mut input = String::new();
    io::stdin().read_to_string(&mut input).unwrap();
    let mut tokens = input.split_whitespace();
    let n: usize = match tokens.next() {
        Some(t) => t.parse().unwrap(),
        None => return,
    };
    let mut values: Vec<String> = tokens.take(n).map(|t| t.to_string()).collect();
    values.sort_by(|a, b| a.parse::<i64>().unwrap().cmp(&b.parse::<i64>().unwrap()));
    if values.is_empty() {
        println!("0 0 0 0 0 0");
        return;
    }
    let nums: Vec<i64> = values.iter().map(|v| v.parse().unwrap()).collect();
    let mut checksum: u64 = 0;
    let mut distinct = 0;
    for (i, &x) in nums.iter().enumerate() {
        checksum = checksum.wrapping_add((i as u64 + 1).wrapping_mul(x as u64));
        if i == 0 || nums[i - 1] != x {
            distinct += 1;
        }
    }
    println!(
        "{} {} {} {} {} {}",
        n,
        distinct,
        nums[0],
        nums[n - 1],
        nums[(n - 1) / 2],
        checksum
    );
}
