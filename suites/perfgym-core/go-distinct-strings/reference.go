package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"strconv"
)

// slot of an open-addressing table: the string is data[off:off+length] of the input buffer,
// so no string is ever copied; the full hash is kept to skip most byte comparisons.
type slot struct {
	hash   uint64
	off    int32
	length int32
	count  int32
}

// hash mixes the string eight bytes at a time (multiply and xor-shift, as in FNV-style
// multiplicative hashing), instead of one byte per step.
func hash(b []byte) uint64 {
	h := uint64(len(b)) * 0x9E3779B97F4A7C15
	for len(b) >= 8 {
		h ^= binary.LittleEndian.Uint64(b)
		h *= 0xBF58476D1CE4E5B9
		h ^= h >> 31
		b = b[8:]
	}
	var tail uint64
	for i, c := range b {
		tail |= uint64(c) << (8 * i)
	}
	h ^= tail
	h *= 0x94D049BB133111EB
	return h ^ h>>29
}

func main() {
	data, _ := io.ReadAll(os.Stdin)
	pos := 0
	for pos < len(data) && data[pos] <= ' ' {
		pos++
	}
	n := 0
	for pos < len(data) && data[pos] >= '0' && data[pos] <= '9' {
		n = n*10 + int(data[pos]-'0')
		pos++
	}
	size := 1024
	for size < 2*n && size < 1<<26 {
		size <<= 1
	}
	table := make([]slot, size)
	mask := uint64(size - 1)
	used := 0
	for i := 0; i < n; i++ {
		for pos < len(data) && data[pos] <= ' ' {
			pos++
		}
		start := pos
		// The line end is found by the vectorised IndexByte; trailing blanks are trimmed.
		end := bytes.IndexByte(data[pos:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += pos
		}
		pos = end
		for end > start && data[end-1] <= ' ' {
			end--
		}
		word := data[start:end]
		h := hash(word)
		j := h & mask
		for {
			s := &table[j]
			if s.count == 0 {
				*s = slot{h, int32(start), int32(len(word)), 1}
				used++
				break
			}
			if s.hash == h && bytes.Equal(data[s.off:s.off+s.length], word) {
				s.count++
				break
			}
			j = (j + 1) & mask
		}
		if used*2 > size {
			// Keep the load factor at most 1/2: double and reinsert.
			old := table
			size *= 2
			mask = uint64(size - 1)
			table = make([]slot, size)
			for _, s := range old {
				if s.count != 0 {
					k := s.hash & mask
					for table[k].count != 0 {
						k = (k + 1) & mask
					}
					table[k] = s
				}
			}
		}
	}
	once := 0
	var best []byte
	bestCount := int32(0)
	for _, s := range table {
		if s.count == 0 {
			continue
		}
		if s.count == 1 {
			once++
		}
		w := data[s.off : s.off+s.length]
		if s.count > bestCount || (s.count == bestCount && bytes.Compare(w, best) < 0) {
			best, bestCount = w, s.count
		}
	}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	out.WriteString(strconv.Itoa(used) + " " + strconv.Itoa(once) + "\n")
	if bestCount > 0 {
		out.Write(best)
		out.WriteString(" " + strconv.Itoa(int(bestCount)) + "\n")
	}
}
