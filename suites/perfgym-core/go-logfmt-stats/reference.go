package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
)

type stats struct {
	requests, errors, total, slowest int
}

func atoi(b []byte) int {
	x := 0
	for _, c := range b {
		x = x*10 + int(c-'0')
	}
	return x
}

func main() {
	// Lines are read in place from a large buffer (ReadSlice does not copy or allocate).
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	// Services are few: each gets an index the first time its name is seen; looking a name up
	// with string(bytes) as the map key does not allocate.
	index := map[string]int{}
	var names []string
	var all []stats
	for {
		line, err := in.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: fall back to a copying read for this one.
			rest, err2 := in.ReadBytes('\n')
			line = append(append([]byte(nil), line...), rest...)
			err = err2
		}
		if len(line) == 0 && err != nil {
			break
		}
		svc := -1
		status, latency := 0, 0
		pos := 0
		// One pass over the line: each field is key=value, delimited by spaces.
		for pos < len(line) {
			c := line[pos]
			if c == ' ' || c == '\n' || c == '\r' {
				pos++
				continue
			}
			ks := pos
			for pos < len(line) && line[pos] != '=' && line[pos] > ' ' {
				pos++
			}
			if pos >= len(line) || line[pos] != '=' {
				continue
			}
			key := line[ks:pos]
			pos++
			vs := pos
			for pos < len(line) && line[pos] > ' ' {
				pos++
			}
			val := line[vs:pos]
			switch string(key) {
			case "svc":
				i, ok := index[string(val)]
				if !ok {
					i = len(names)
					index[string(val)] = i
					names = append(names, string(val))
					all = append(all, stats{})
				}
				svc = i
			case "status":
				status = atoi(val)
			case "latency_ms":
				latency = atoi(val)
			}
		}
		if svc >= 0 {
			st := &all[svc]
			st.requests++
			if status >= 500 {
				st.errors++
			}
			st.total += latency
			if latency > st.slowest {
				st.slowest = latency
			}
		}
		if err == io.EOF {
			break
		}
	}
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return names[order[a]] < names[order[b]] })
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for _, i := range order {
		st := all[i]
		fmt.Fprintln(out, names[i], st.requests, st.errors, st.total, st.slowest)
	}
}
