// Set intersections: each set a bitset of u64 words; a query is a word-wise AND and popcount.
use std::io::{self, Read};

fn main() {
    let mut input = Vec::new();
    io::stdin().read_to_end(&mut input).unwrap();
    let mut p = 0;
    let len = input.len();
    let mut next = || -> Option<usize> {
        while p < len && !input[p].is_ascii_digit() {
            p += 1;
        }
        if p == len {
            return None;
        }
        let mut v = 0usize;
        while p < len && input[p].is_ascii_digit() {
            v = v * 10 + (input[p] - b'0') as usize;
            p += 1;
        }
        Some(v)
    };
    let universe = match next() {
        Some(u) => u,
        None => return,
    };
    let n_sets = next().unwrap();
    let q = next().unwrap();
    let words = (universe + 63) / 64;
    // All sets in one flat array: set s occupies words [s * words, (s + 1) * words).
    let mut bits = vec![0u64; n_sets * words];
    for s in 0..n_sets {
        let k = next().unwrap();
        let row = &mut bits[s * words..(s + 1) * words];
        for _ in 0..k {
            let e = next().unwrap();
            row[e / 64] |= 1u64 << (e % 64);
        }
    }
    let (mut total, mut largest, mut empty) = (0u64, 0u64, 0u64);
    for _ in 0..q {
        let (a, b) = (next().unwrap(), next().unwrap());
        let ra = &bits[a * words..(a + 1) * words];
        let rb = &bits[b * words..(b + 1) * words];
        let common: u64 = ra.iter().zip(rb).map(|(x, y)| (x & y).count_ones() as u64).sum();
        total += common;
        largest = largest.max(common);
        if common == 0 {
            empty += 1;
        }
    }
    println!("{} {} {}", total, largest, empty);
}
