// Motif counting: an Aho-Corasick automaton over the 4-letter alphabet, one pass over the text.
use std::io::{self, Read};

fn code(b: u8) -> usize {
    match b {
        b'a' => 0,
        b'c' => 1,
        b'g' => 2,
        _ => 3,
    }
}

fn main() {
    let mut input = Vec::new();
    io::stdin().read_to_end(&mut input).unwrap();
    let mut words = input
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty());
    let text = match words.next() {
        Some(t) => t,
        None => return,
    };
    let q: usize = std::str::from_utf8(words.next().unwrap()).unwrap().parse().unwrap();
    // Trie with dense 4-way transitions; node 0 is the root.
    let mut next: Vec<[u32; 4]> = vec![[0; 4]];
    let mut terminal = Vec::with_capacity(q);
    for _ in 0..q {
        let mut node = 0usize;
        for &b in words.next().unwrap() {
            let c = code(b);
            if next[node][c] == 0 {
                next.push([0; 4]);
                next[node][c] = (next.len() - 1) as u32;
            }
            node = next[node][c] as usize;
        }
        terminal.push(node);
    }
    // BFS order turns the trie into a full automaton: missing edges borrow the fail state's.
    let n = next.len();
    let mut fail = vec![0u32; n];
    let mut order = Vec::with_capacity(n);
    for c in 0..4 {
        let child = next[0][c];
        if child != 0 {
            order.push(child);
        }
    }
    let mut head = 0;
    while head < order.len() {
        let u = order[head] as usize;
        head += 1;
        for c in 0..4 {
            let v = next[u][c];
            let f = next[fail[u] as usize][c];
            if v != 0 {
                fail[v as usize] = f;
                order.push(v);
            } else {
                next[u][c] = f;
            }
        }
    }
    // Count visits per state, then push counts down the fail links (deepest states first):
    // a motif occurs wherever the automaton is in a state whose fail chain reaches its node.
    let mut hits = vec![0u64; n];
    let mut state = 0usize;
    for &b in text {
        state = next[state][code(b)] as usize;
        hits[state] += 1;
    }
    for &u in order.iter().rev() {
        let f = fail[u as usize] as usize;
        hits[f] += hits[u as usize];
    }
    let mut total = 0u64;
    let mut absent = 0;
    let mut best = (0u64, 0usize);
    for (i, &node) in terminal.iter().enumerate() {
        let count = if node == 0 { 0 } else { hits[node] };
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
