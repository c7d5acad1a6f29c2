package main

import (
	"bufio"
	"io"
	"os"
	"strconv"
)

// A name of at most 10 lowercase letters, read as a 10-digit base-27 number with 0 for
// "no letter", compares exactly like the string: shorter prefixes first, then by letters.
// It fits in 48 bits, leaving 8 bits for the age: one uint64 orders both tie-breaks.
func encode(name []byte) uint64 {
	var k uint64
	for i := 0; i < 10; i++ {
		k *= 27
		if i < len(name) {
			k += uint64(name[i]-'a') + 1
		}
	}
	return k
}

func decode(k uint64, buf []byte) []byte {
	var digits [10]byte
	for i := 9; i >= 0; i-- {
		digits[i] = byte(k % 27)
		k /= 27
	}
	buf = buf[:0]
	for _, d := range digits {
		if d != 0 {
			buf = append(buf, 'a'+d-1)
		}
	}
	return buf
}

func main() {
	data, _ := io.ReadAll(os.Stdin)
	pos := 0
	skip := func() {
		for pos < len(data) && data[pos] <= ' ' {
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
	n := num()
	scores := make([]int32, n)
	keys := make([]uint64, n)
	maxScore := 0
	for i := 0; i < n; i++ {
		skip()
		s := pos
		for pos < len(data) && data[pos] > ' ' {
			pos++
		}
		name := data[s:pos]
		score := num()
		scores[i] = int32(score)
		keys[i] = encode(name)<<8 | uint64(num())
		if score > maxScore {
			maxScore = score
		}
	}
	// Counting sort by score, highest first: bucket b holds score maxScore - b.
	start := make([]int, maxScore+2)
	for _, s := range scores {
		start[maxScore-int(s)+1]++
	}
	for b := 1; b < len(start); b++ {
		start[b] += start[b-1]
	}
	sorted := make([]uint64, n)
	bucketOf := make([]int32, n)
	fill := append([]int(nil), start...)
	for i, s := range scores {
		b := maxScore - int(s)
		sorted[fill[b]] = keys[i]
		fill[b]++
	}
	// Buckets are short (n / distinct scores), so insertion sort on integer keys finishes
	// each one in a handful of moves.
	for b := 0; b <= maxScore; b++ {
		lo, hi := start[b], start[b+1]
		for i := lo; i < hi; i++ {
			bucketOf[i] = int32(maxScore - b)
			x := sorted[i]
			j := i
			for j > lo && sorted[j-1] > x {
				sorted[j] = sorted[j-1]
				j--
			}
			sorted[j] = x
		}
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	name := make([]byte, 0, 10)
	line := func(i int) {
		out.WriteString(strconv.Itoa(i + 1))
		out.WriteByte(' ')
		out.Write(decode(sorted[i]>>8, name))
		out.WriteByte(' ')
		out.WriteString(strconv.Itoa(int(bucketOf[i])))
		out.WriteByte(' ')
		out.WriteString(strconv.Itoa(int(sorted[i] & 255)))
		out.WriteByte('\n')
	}
	step := n / 10
	if step < 1 {
		step = 1
	}
	out.WriteString(strconv.Itoa(n) + "\n")
	for i := 0; i < n; i += step {
		line(i)
	}
	if n > 0 {
		line(n - 1)
	}
}
