package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
)

func main() {
	data, _ := io.ReadAll(os.Stdin)
	pos := 0
	skip := func() {
		for pos < len(data) && (data[pos] == ' ' || data[pos] == '\n' || data[pos] == '\r') {
			pos++
		}
	}
	num := func() int {
		skip()
		x := 0
		for pos < len(data) && data[pos] >= '0' && data[pos] <= '9' {
			x = x*10 + int(data[pos]-'0')
			pos++
		}
		return x
	}
	word := func() []byte {
		skip()
		s := pos
		for pos < len(data) && data[pos] > ' ' {
			pos++
		}
		return data[s:pos]
	}
	n, m := num(), num()
	// Categories become small integers once, so per-line aggregation is array indexing.
	catIndex := map[string]int{}
	var catNames []string
	// Open-addressing table keyed by product id, sized to a power of two at least 2n so
	// probes stay short; slot value is 1 + product index, 0 marks empty.
	size := 1
	for size < 2*n {
		size <<= 1
	}
	mask := uint64(size - 1)
	keys := make([]int, size)
	slots := make([]int32, size)
	cat := make([]int32, n)
	price := make([]int, n)
	hash := func(k int) uint64 { return (uint64(k) * 0x9E3779B97F4A7C15) >> 20 }
	for i := 0; i < n; i++ {
		id := num()
		name := word()
		c, ok := catIndex[string(name)]
		if !ok {
			c = len(catNames)
			catNames = append(catNames, string(name))
			catIndex[string(name)] = c
		}
		cat[i], price[i] = int32(c), num()
		h := hash(id) & mask
		for slots[h] != 0 {
			h = (h + 1) & mask
		}
		keys[h], slots[h] = id, int32(i+1)
	}
	units := make([]int, len(catNames))
	revenue := make([]int, len(catNames))
	matched := 0
	for j := 0; j < m; j++ {
		num()
		pid, qty := num(), num()
		h := hash(pid) & mask
		for slots[h] != 0 {
			if keys[h] == pid {
				p := slots[h] - 1
				units[cat[p]] += qty
				revenue[cat[p]] += qty * price[p]
				matched++
				break
			}
			h = (h + 1) & mask
		}
	}
	order := make([]int, 0, len(catNames))
	for c := range catNames {
		if units[c] > 0 {
			order = append(order, c)
		}
	}
	sort.Slice(order, func(a, b int) bool { return catNames[order[a]] < catNames[order[b]] })
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	fmt.Fprintln(out, matched, m-matched)
	for _, c := range order {
		fmt.Fprintln(out, catNames[c], units[c], revenue[c])
	}
}
