package main

import (
	"bufio"
	"fmt"
	"os"
)

func main() {
	in := bufio.NewReader(os.Stdin)
	var n int
	fmt.Fscan(in, &n)
	counts := map[string]int{}
	for i := 0; i < n; i++ {
		var s string
		fmt.Fscan(in, &s)
		counts[s]++
	}
	once := 0
	best, bestCount := "", 0
	for s, c := range counts {
		if c == 1 {
			once++
		}
		if c > bestCount || (c == bestCount && s < best) {
			best, bestCount = s, c
		}
	}
	fmt.Println(len(counts), once)
	if bestCount > 0 {
		fmt.Println(best, bestCount)
	}
}
