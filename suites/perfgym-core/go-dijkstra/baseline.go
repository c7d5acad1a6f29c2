package main

import (
	"bufio"
	"fmt"
	"os"
)

type edge struct {
	to, w int
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
	done := make([]bool, n+1)
	dist[1] = 0
	// Textbook O(n^2) Dijkstra: each round scans every node for the closest unfinished one.
	for round := 0; round < n; round++ {
		u := -1
		for v := 1; v <= n; v++ {
			if !done[v] && (u < 0 || dist[v] < dist[u]) {
				u = v
			}
		}
		if u < 0 || dist[u] == inf {
			break
		}
		done[u] = true
		for _, e := range adj[u] {
			if d := dist[u] + int64(e.w); d < dist[e.to] {
				dist[e.to] = d
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
