package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
)

func main() {
	data, _ := io.ReadAll(os.Stdin)
	pos := 0
	// Unsigned integers parsed straight from the input bytes.
	next := func() int {
		for data[pos] < '0' || data[pos] > '9' {
			pos++
		}
		x := 0
		for pos < len(data) && data[pos] >= '0' && data[pos] <= '9' {
			x = x*10 + int(data[pos]-'0')
			pos++
		}
		return x
	}
	n, m := next(), next()
	from := make([]int32, m)
	to := make([]int32, m)
	weight := make([]int32, m)
	start := make([]int32, n+2)
	for i := 0; i < m; i++ {
		from[i], to[i], weight[i] = int32(next()), int32(next()), int32(next())
		start[from[i]+1]++
	}
	// Compressed sparse rows: the edges of u are adjTo/adjW[start[u]:start[u+1]], laid out
	// contiguously so relaxing a node reads one cache-friendly run.
	for u := 1; u <= n+1; u++ {
		start[u] += start[u-1]
	}
	adjTo := make([]int32, m)
	adjW := make([]int32, m)
	fill := make([]int32, n+1)
	copy(fill, start[:n+1])
	for i := 0; i < m; i++ {
		k := fill[from[i]]
		fill[from[i]]++
		adjTo[k], adjW[k] = to[i], weight[i]
	}
	const inf = int64(1) << 62
	dist := make([]int64, n+1)
	for i := range dist {
		dist[i] = inf
	}
	dist[1] = 0
	// Heap entries are one uint64, distance in the high bits and node in the low 24, so the
	// heap compares plain integers and never boxes an interface.
	const shift = 24
	heapArr := make([]uint64, 0, 1024)
	push := func(x uint64) {
		heapArr = append(heapArr, x)
		i := len(heapArr) - 1
		for i > 0 {
			p := (i - 1) / 2
			if heapArr[p] <= x {
				break
			}
			heapArr[i] = heapArr[p]
			i = p
		}
		heapArr[i] = x
	}
	pop := func() uint64 {
		top := heapArr[0]
		last := heapArr[len(heapArr)-1]
		heapArr = heapArr[:len(heapArr)-1]
		size := len(heapArr)
		i := 0
		for {
			c := 2*i + 1
			if c >= size {
				break
			}
			if c+1 < size && heapArr[c+1] < heapArr[c] {
				c++
			}
			if heapArr[c] >= last {
				break
			}
			heapArr[i] = heapArr[c]
			i = c
		}
		if size > 0 {
			heapArr[i] = last
		}
		return top
	}
	push(1)
	for len(heapArr) > 0 {
		x := pop()
		u := int(x & (1<<shift - 1))
		d := int64(x >> shift)
		if d > dist[u] {
			continue
		}
		for k := start[u]; k < start[u+1]; k++ {
			v := adjTo[k]
			if nd := d + int64(adjW[k]); nd < dist[v] {
				dist[v] = nd
				push(uint64(nd)<<shift | uint64(v))
			}
		}
	}
	reached, sum, most := 0, int64(0), int64(0)
	for v := 1; v <= n; v++ {
		if dist[v] < inf {
			reached++
			sum += dist[v]
			if dist[v] > most {
				most = dist[v]
			}
		}
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	fmt.Fprintln(out, reached, sum, most)
}
