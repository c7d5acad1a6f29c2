package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
)

type product struct {
	id       int
	category string
	price    int
}

func main() {
	in := bufio.NewReader(os.Stdin)
	var n, m int
	fmt.Fscan(in, &n, &m)
	products := make([]product, n)
	for i := range products {
		fmt.Fscan(in, &products[i].id, &products[i].category, &products[i].price)
	}
	units := map[string]int{}
	revenue := map[string]int{}
	matched := 0
	for j := 0; j < m; j++ {
		var order, pid, qty int
		fmt.Fscan(in, &order, &pid, &qty)
		// Nested-loop join: look the product up by scanning the whole table.
		for _, p := range products {
			if p.id == pid {
				units[p.category] += qty
				revenue[p.category] += qty * p.price
				matched++
				break
			}
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
