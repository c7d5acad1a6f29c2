package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
)

type stats struct {
	requests, errors, total, slowest int
}

func main() {
	pair := regexp.MustCompile(`(\w+)=(\S+)`)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	bySvc := map[string]*stats{}
	for sc.Scan() {
		fields := map[string]string{}
		for _, m := range pair.FindAllStringSubmatch(sc.Text(), -1) {
			fields[m[1]] = m[2]
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
		status, _ := strconv.Atoi(fields["status"])
		latency, _ := strconv.Atoi(fields["latency_ms"])
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
