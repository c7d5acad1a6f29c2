// Set intersections: each set an element list plus a byte map over the universe; a query
// walks the smaller list and looks each element up in the other set's map.
use std::io::{self, Read};

fn main() {
    let mut input = String::new();
    io::stdin().read_to_string(&mut input).unwrap();
    let mut nums = input.split_whitespace().map(|t| t.parse::<usize>().unwrap());
    let universe = match nums.next() {
        Some(u) => u,
        None => return,
    };
    let n_sets = nums.next().unwrap();
    let q = nums.next().unwrap();
    let mut lists: Vec<Vec<u32>> = Vec::with_capacity(n_sets);
    let mut maps: Vec<Vec<bool>> = Vec::with_capacity(n_sets);
    for _ in 0..n_sets {
        let k = nums.next().unwrap();
        let list: Vec<u32> = (0..k).map(|_| nums.next().unwrap() as u32).collect();
        let mut map = vec![false; universe];
        for &e in &list {
            map[e as usize] = true;
        }
        lists.push(list);
        maps.push(map);
    }
    let (mut total, mut largest, mut empty) = (0u64, 0u64, 0u64);
    for _ in 0..q {
        let (mut a, mut b) = (nums.next().unwrap(), nums.next().unwrap());
        if lists[a].len() > lists[b].len() {
            std::mem::swap(&mut a, &mut b);
        }
        let other = &maps[b];
        let common = lists[a].iter().filter(|&&e| other[e as usize]).count() as u64;
        total += common;
        largest = largest.max(common);
        if common == 0 {
            empty += 1;
        }
    }
    println!("{} {} {}", total, largest, empty);
}
