// Motif counting: for every motif, slide over the whole text comparing each window.
use std::io::{self, Read};

fn main() {
    let mut input = String::new();
    io::stdin().read_to_string(&mut input).unwrap();
    let mut lines = input.split_whitespace();
    let text = match lines.next() {
        Some(t) => t.as_bytes().to_vec(),
        None => return,
    };
    let q: usize = lines.next().unwrap().parse().unwrap();
    let mut total: u64 = 0;
    let mut absent = 0;
    let mut best = (0u64, 0usize);
    for i in 0..q {
        let motif = lines.next().unwrap().as_bytes().to_vec();
        let mut count = 0u64;
        if motif.len() <= text.len() {
            for start in 0..=text.len() - motif.len() {
                if text[start..start + motif.len()] == motif[..] {
                    count += 1;
                }
            }
        }
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
