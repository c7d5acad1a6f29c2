package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
)

type person struct {
	name       string
	score, age int
}

// key renders the sort order as one string: higher scores first, then name, then age.
func key(p person) string {
	return fmt.Sprintf("%07d %-10s %03d", 1000000-p.score, p.name, p.age)
}

func main() {
	in := bufio.NewReader(os.Stdin)
	var n int
	fmt.Fscan(in, &n)
	people := make([]person, n)
	for i := range people {
		fmt.Fscan(in, &people[i].name, &people[i].score, &people[i].age)
	}
	sort.Slice(people, func(a, b int) bool { return key(people[a]) < key(people[b]) })
	step := n / 10
	if step < 1 {
		step = 1
	}
	fmt.Println(n)
	for i := 0; i < n; i += step {
		fmt.Println(i+1, people[i].name, people[i].score, people[i].age)
	}
	if n > 0 {
		fmt.Println(n, people[n-1].name, people[n-1].score, people[n-1].age)
	}
}
