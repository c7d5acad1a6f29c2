package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
)

type person struct {
	name       string
	score, age int
}

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	sc.Split(bufio.ScanWords)
	word := func() string {
		sc.Scan()
		return sc.Text()
	}
	num := func() int {
		x, _ := strconv.Atoi(word())
		return x
	}
	n := num()
	people := make([]person, n)
	for i := range people {
		people[i].name = word()
		people[i].score = num()
		people[i].age = num()
	}
	// Compare fields directly instead of formatting a key on every comparison.
	sort.Slice(people, func(a, b int) bool {
		p, q := people[a], people[b]
		if p.score != q.score {
			return p.score > q.score
		}
		if p.name != q.name {
			return p.name < q.name
		}
		return p.age < q.age
	})
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
