// Set intersections: each set a sorted Vec<u32>; each query merges the two sorted lists.
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
    let mut sets: Vec<Vec<u32>> = Vec::new();
    for _ in 0..n_sets {
        let k = nums.next().unwrap();
        let mut set: Vec<u32> = (0..k).map(|_| nums.next().unwrap() as u32).collect();
        set.sort_unstable();
        sets.push(set);
    }
    let (mut total, mut largest, mut empty) = (0u64, 0u64, 0u64);
    for _ in 0..q {
        let (a, b) = (&sets[nums.next().unwrap()], &sets[nums.next().unwrap()]);
        let (mut i, mut j, mut common) = (0, 0, 0u64);
        while i < a.len() && j < b.len() {
            if a[i] < b[j] {
                i += 1;
            } else if a[i] > b[j] {
                j += 1;
            } else {
                common += 1;
                i += 1;
                j += 1;
            }
        }
        total += common;
        largest = largest.max(common);
        if common == 0 {
            empty += 1;
        }
    }
    println!("{} {} {}", total, largest, empty);
}
