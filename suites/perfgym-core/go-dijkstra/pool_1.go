package main

import (
	"bufio"
	"container/heap"
	"fmt"
	"os"
)

type edge struct {
	to, w int
}

type item struct {
	d int64
	v int
}

type queue []item

func (q queue) Len() int            { return len(q) }
func (q queue) Less(i, j int) bool  { return q[i].d < q[j].d }
func (q queue) Swap(i, j int)       { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x interface{}) { *q = append(*q, x.(item)) }
func (q *queue) Pop() interface{} {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

func main() {
	in := bufio.NewReader(os.Stdin)
	var n, m int
	fmt.Fscan(in, &n, &m)
	adj := make([][]edge, n+1)
	for i := 0; i < m; i++ {
		var u, v, w int
		fmt.Fscan(in, &u, &v, &w)
		adj[u] = append(adj[u], edge{v, w})
	}
	const inf = int64(1) << 62
	dist := make([]int64, n+1)
	for i := range dist {
		dist[i] = inf
	}
	dist[1] = 0
	// Binary heap with lazy deletion: stale entries are skipped when popped.
	q := &queue{{0, 1}}
	for q.Len() > 0 {
		it := heap.Pop(q).(item)
		if it.d > dist[it.v] {
			continue
		}
		for _, e := range adj[it.v] {
			if d := it.d + int64(e.w); d < dist[e.to] {
				dist[e.to] = d
				heap.Push(q, item{d, e.to})
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
	fmt.Println(reached, sum, most)
}
