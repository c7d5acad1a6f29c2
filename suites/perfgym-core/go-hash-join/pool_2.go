package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
)

type product struct {
	category string
	price    int
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
	n, m := num(), num()
	// Hash join: build a map on the small side, probe it with every order line.
	products := make(map[int]product, n)
	for i := 0; i < n; i++ {
		id := num()
		category := word()
		products[id] = product{category, num()}
	}
	units := map[string]int{}
	revenue := map[string]int{}
	matched := 0
	for j := 0; j < m; j++ {
		num()
		pid, qty := num(), num()
		if p, ok := products[pid]; ok {
			units[p.category] += qty
			revenue[p.category] += qty * p.price
			matched++
		}
	}
	fmt.Println(matched, m-matched)
	names := make([]string, 0, len(units))
	for c := range units {
		names = append(names, c)
	}
	sort.Strings(names)
	for _, c := range names {
		fmt.Println(c, units[c], revenue[c])
	}
}
