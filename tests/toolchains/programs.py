"""The same small program in every language: read n, fill an array of n 64-bit values, sum it.

It allocates about 8*n bytes and touches all of it, so a run has a known memory floor; the sum
is read back in a scattered order so the array cannot be optimised away.
"""

from perfgym.tasks.task import Language

N = 3_000_000
STRIDE = 7919  # prime, coprime with N: i -> i*STRIDE % N is a permutation
ARRAY_MB = N * 8 / (1024 * 1024)


def expected(n: int = N) -> str:
    return f"{sum(i * i % 1000003 for i in range(n))}\n"


PROGRAMS: dict[Language, str] = {
    Language.PYTHON: """\
import sys
from array import array

n = int(sys.stdin.readline())
a = array("q", (i * i % 1000003 for i in range(n)))
print(sum(a[i * 7919 % n] for i in range(n)))
""",
    Language.C: """\
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    long n;
    if (scanf("%ld", &n) != 1) return 1;
    long long *a = malloc((size_t)n * sizeof *a);
    for (long i = 0; i < n; i++) a[i] = (long long)i * i % 1000003;
    long long s = 0;
    for (long i = 0; i < n; i++) s += a[(long long)i * 7919 % n];
    printf("%lld\\n", s);
    free(a);
    return 0;
}
""",
    Language.CPP: """\
#include <iostream>
#include <vector>
int main() {
    long long n;
    std::cin >> n;
    std::vector<long long> a(n);
    for (long long i = 0; i < n; i++) a[i] = i * i % 1000003;
    long long s = 0;
    for (long long i = 0; i < n; i++) s += a[i * 7919 % n];
    std::cout << s << "\\n";
}
""",
    Language.JAVA: """\
import java.io.*;
public class Main {
    public static void main(String[] args) throws IOException {
        BufferedReader r = new BufferedReader(new InputStreamReader(System.in));
        int n = Integer.parseInt(r.readLine().trim());
        long[] a = new long[n];
        for (int i = 0; i < n; i++) a[i] = (long) i * i % 1000003;
        long s = 0;
        for (long i = 0; i < n; i++) s += a[(int) (i * 7919 % n)];
        System.out.println(s);
        System.err.println("heap_mb=" + Runtime.getRuntime().maxMemory() / 1048576);
    }
}
""",
    Language.GO: """\
package main

import "fmt"

func main() {
	var n int64
	fmt.Scan(&n)
	a := make([]int64, n)
	for i := int64(0); i < n; i++ {
		a[i] = i * i % 1000003
	}
	var s int64
	for i := int64(0); i < n; i++ {
		s += a[i*7919%n]
	}
	fmt.Println(s)
}
""",
    Language.JAVASCRIPT: """\
const n = parseInt(require("fs").readFileSync(0, "utf8"), 10);
const a = new Float64Array(n);
for (let i = 0; i < n; i++) a[i] = (i * i) % 1000003;
let s = 0;
for (let i = 0; i < n; i++) s += a[(i * 7919) % n];
console.log(String(s));
console.error("heap_mb=" + Math.floor(require("v8").getHeapStatistics().heap_size_limit / 1048576));
""",
    Language.RUST: """\
use std::io::Read;
fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).unwrap();
    let n: usize = input.trim().parse().unwrap();
    let a: Vec<i64> = (0..n as i64).map(|i| i * i % 1000003).collect();
    let s: i64 = (0..n).map(|i| a[i * 7919 % n]).sum();
    println!("{}", s);
}
""",
    Language.CUDA: """\
#include <cstdio>
__global__ void answer(int *out) { *out = 42; }
int main() {
    int *d = nullptr, h = 0;
    if (cudaMalloc(&d, sizeof(int)) != cudaSuccess) { fprintf(stderr, "cudaMalloc failed\\n"); return 1; }
    answer<<<1, 1>>>(d);
    cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    printf("%d\\n", h);
    return h == 42 ? 0 : 1;
}
""",
}

#: One source per language that its compiler (or syntax check) must reject, and a fragment of
#: the message it must give.
BROKEN: dict[Language, tuple[str, str]] = {
    Language.PYTHON: ("def f(:\n    pass\n", "SyntaxError"),
    Language.C: ("int main(void) { return 0 }\n", "error: expected"),
    Language.CPP: ("int main() { undefined_thing(); }\n", "was not declared"),
    Language.JAVA: (
        'public class Main { public static void main(String[] a) { int x = "s"; } }\n',
        "incompatible types",
    ),
    Language.GO: ("package main\nfunc main() { x := 1 }\n", "declared"),
    Language.JAVASCRIPT: ("function (\n", "SyntaxError"),
    Language.RUST: ('fn main() { let x: i32 = "s"; }\n', "mismatched types"),
    Language.CUDA: ("__global__ void k() { int x = ; }\nint main() {}\n", "expected an expression"),
}
