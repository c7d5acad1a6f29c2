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
	// Sorted by id, the product table answers each lookup by binary search.
	sort.Slice(products, func(a, b int) bool { return products[a].id < products[b].id })
	units := map[string]int{}
	revenue := map[string]int{}
	matched := 0
	for j := 0; j < m; j++ {
		var order, pid, qty int
		fmt.Fscan(in, &order, &pid, &qty)
		k := sort.Search(n, func(i int) bool { return products[i].id >= pid })
		if k < n && products[k].id == pid {
			units[products[k].category] += qty
			revenue[products[k].category] += qty * products[k].price
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
