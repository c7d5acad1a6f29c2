// Motif counting: motifs packed into 2-bit integers and grouped by length; one rolling window
// per distinct length, looked up in a HashMap.
use std::collections::HashMap;
use std::io::{self, Read};

fn code(b: u8) -> u64 {
    match b {
        b'a' => 0,
        b'c' => 1,
        b'g' => 2,
        _ => 3,
    }
}

fn main() {
    let mut input = String::new();
    io::stdin().read_to_string(&mut input).unwrap();
    let mut words = input.split_whitespace();
    let text = match words.next() {
        Some(t) => t.as_bytes(),
        None => return,
    };
    let q: usize = words.next().unwrap().parse().unwrap();
    let motifs: Vec<&[u8]> = (0..q).map(|_| words.next().unwrap().as_bytes()).collect();
    // length -> (packed motif -> occurrences in the text)
    let mut by_len: HashMap<usize, HashMap<u64, u64>> = HashMap::new();
    for m in &motifs {
        let key = m.iter().fold(0u64, |acc, &b| acc << 2 | code(b));
        by_len.entry(m.len()).or_default().insert(key, 0);
    }
    for (&len, table) in by_len.iter_mut() {
        if len > text.len() {
            continue;
        }
        let mask = if len == 32 { u64::MAX } else { (1u64 << (2 * len)) - 1 };
        let mut window = 0u64;
        for (i, &b) in text.iter().enumerate() {
            window = (window << 2 | code(b)) & mask;
            if i + 1 >= len {
                if let Some(c) = table.get_mut(&window) {
                    *c += 1;
                }
            }
        }
    }
    let mut total = 0u64;
    let mut absent = 0;
    let mut best = (0u64, 0usize);
    for (i, m) in motifs.iter().enumerate() {
        let key = m.iter().fold(0u64, |acc, &b| acc << 2 | code(b));
        let count = by_len[&m.len()][&key];
        total += count;
        if count == 0 {
            absent += 1;
        }
        if count > best.0 {
            best = (count, i);
        }
    }
    println!("{} {} {} {}", total, absent, best.1, best.0);
}
