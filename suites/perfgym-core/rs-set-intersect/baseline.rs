// Set intersections: each set a HashSet<u32>; each query iterates one set probing the other.
use std::collections::HashSet;
use std::io::{self, Read};

fn main() {
    let mut input = String::new();
    io::stdin().read_to_string(&mut input).unwrap();
    let mut nums = input.split_whitespace().map(|t| t.parse::<usize>().unwrap());
    let _universe = match nums.next() {
        Some(u) => u,
        None => return,
    };
    let n_sets = nums.next().unwrap();
    let q = nums.next().unwrap();
    let mut sets: Vec<HashSet<u32>> = Vec::new();
    for _ in 0..n_sets {
        let k = nums.next().unwrap();
        let set: HashSet<u32> = (0..k).map(|_| nums.next().unwrap() as u32).collect();
        sets.push(set);
    }
    let (mut total, mut largest, mut empty) = (0u64, 0u64, 0u64);
    for _ in 0..q {
        let a = nums.next().unwrap();
        let b = nums.next().unwrap();
        let common = sets[a].intersection(&sets[b]).count() as u64;
        total += common;
        largest = largest.max(common);
        if common == 0 {
            empty += 1;
        }
    }
    println!("{} {} {}", total, largest, empty);
}
