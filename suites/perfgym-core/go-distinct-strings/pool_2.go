package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
)

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sc.Split(bufio.ScanWords)
	sc.Scan()
	n, _ := strconv.Atoi(sc.Text())
	counts := map[string]int{}
	for i := 0; i < n && sc.Scan(); i++ {
		// Indexing a map with string(bytes) does not allocate; only new keys are copied.
		b := sc.Bytes()
		if c, ok := counts[string(b)]; ok {
			counts[string(b)] = c + 1
		} else {
			counts[string(b)] = 1
		}
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
