// Numeric sort: hand-rolled byte parser and an LSD radix sort (four 16-bit passes) on keys
// whose sign bit is flipped so unsigned order equals signed order.
use std::io::{self, Read};

fn radix_sort(keys: &mut Vec<u64>) {
    let mut buf = vec![0u64; keys.len()];
    let mut counts = vec![0usize; 1 << 16];
    for pass in 0..4 {
        let shift = pass * 16;
        counts.iter_mut().for_each(|c| *c = 0);
        for &k in keys.iter() {
            counts[((k >> shift) & 0xffff) as usize] += 1;
        }
        // A pass where every key has the same digit would only copy; skip it.
        if counts.iter().any(|&c| c == keys.len()) {
            continue;
        }
        let mut sum = 0;
        for c in counts.iter_mut() {
            let here = *c;
            *c = sum;
            sum += here;
        }
        for &k in keys.iter() {
            let d = ((k >> shift) & 0xffff) as usize;
            buf[counts[d]] = k;
            counts[d] += 1;
        }
        std::mem::swap(keys, &mut buf);
    }
}

fn main() {
    let mut input = Vec::new();
    io::stdin().read_to_end(&mut input).unwrap();
    let mut p = 0;
    let len = input.len();
    let mut next = || -> Option<i64> {
        while p < len && input[p] != b'-' && !input[p].is_ascii_digit() {
            p += 1;
        }
        if p == len {
            return None;
        }
        let neg = input[p] == b'-';
        if neg {
            p += 1;
        }
        let mut v: u64 = 0;
        while p < len && input[p].is_ascii_digit() {
            v = v * 10 + (input[p] - b'0') as u64;
            p += 1;
        }
        // Negate in unsigned arithmetic so -2^63 parses without overflow.
        Some(if neg { v.wrapping_neg() as i64 } else { v as i64 })
    };
    let n = match next() {
        Some(n) => n as usize,
        None => return,
    };
    let mut keys: Vec<u64> = Vec::with_capacity(n);
    for _ in 0..n {
        keys.push(next().unwrap() as u64 ^ (1 << 63));
    }
    if keys.is_empty() {
        println!("0 0 0 0 0 0");
        return;
    }
    radix_sort(&mut keys);
    let value = |k: u64| (k ^ (1 << 63)) as i64;
    let mut checksum: u64 = 0;
    let mut distinct = 0;
    for (i, &k) in keys.iter().enumerate() {
        checksum = checksum.wrapping_add((i as u64 + 1).wrapping_mul(value(k) as u64));
        if i == 0 || keys[i - 1] != k {
            distinct += 1;
        }
    }
    println!(
        "{} {} {} {} {} {}",
        n,
        distinct,
        value(keys[0]),
        value(keys[n - 1]),
        value(keys[(n - 1) / 2]),
        checksum
    );
}
