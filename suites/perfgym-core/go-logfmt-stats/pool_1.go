package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
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
		// Split on spaces and '=' by hand instead of running a regular expression.
		fields := map[string]string{}
		for _, f := range strings.Fields(sc.Text()) {
			if k, v, ok := strings.Cut(f, "="); ok {
				fields[k] = v
			}
		}
		svc, ok := fields["svc"]
		if !ok {
			continue
		}
		st := bySvc[svc]
		if st == nil {
			st = &stats{}
			bySvc[svc] = st
		}
		var status, latency int
		fmt.Sscan(fields["status"], &status)
		fmt.Sscan(fields["latency_ms"], &latency)
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
