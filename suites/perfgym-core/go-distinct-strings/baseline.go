package main

import (
	"bufio"
	"fmt"
	"os"
)

type entry struct {
	s     string
	count int
}

func main() {
	in := bufio.NewReader(os.Stdin)
	var n int
	fmt.Fscan(in, &n)
	var seen []entry
	for i := 0; i < n; i++ {
		var s string
		fmt.Fscan(in, &s)
		// Linear search through the distinct strings seen so far.
		found := false
		for k := range seen {
			if seen[k].s == s {
				seen[k].count++
				found = true
				break
			}
		}
		if !found {
			seen = append(seen, entry{s, 1})
		}
	}
	once := 0
	best := -1
	for k, e := range seen {
		if e.count == 1 {
			once++
		}
		if best < 0 || e.count > seen[best].count || (e.count == seen[best].count && e.s < seen[best].s) {
			best = k
		}
	}
	fmt.Println(len(seen), once)
	if best >= 0 {
		fmt.Println(seen[best].s, seen[best].count)
	}
}
