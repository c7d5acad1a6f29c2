package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

type stats struct {
	requests, errors, total, slowest int
}

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	bySvc := map[string]*stats{}
	for sc.Scan() {
		// Only three keys matter: pick them out as they come, with no per-line map.
		var svc string
		status, latency := 0, 0
		for _, f := range strings.Fields(sc.Text()) {
			k, v, ok := strings.Cut(f, "=")
			if !ok {
				continue
			}
			switch k {
			case "svc":
				svc = v
			case "status":
				status, _ = strconv.Atoi(v)
			case "latency_ms":
				latency, _ = strconv.Atoi(v)
			}
		}
		if svc == "" {
			continue
		}
		st := bySvc[svc]
		if st == nil {
			st = &stats{}
			bySvc[svc] = st
		}
		st.requests++
		if status >= 500 {
			st.errors++
		}
		st.total += latency
		if latency > st.slowest {
			st.slowest = latency
		}
	}
	names := make([]string, 0, len(bySvc))
	for s := range bySvc {
		names = append(names, s)
	}
	sort.Strings(names)
	for _, s := range names {
		st := bySvc[s]
		fmt.Println(s, st.requests, st.errors, st.total, st.slowest)
	}
}
