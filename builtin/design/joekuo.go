package design

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// new-joe-kuo-6.21201 (Joe & Kuo 2008), gzip-compressed; see doc.go for its
// provenance and licence.
//
//go:embed new-joe-kuo-6.21201.gz
var joeKuoGz []byte

// MaxSobolDim is the number of dimensions the embedded table covers
// (dimension 1 is the van der Corput sequence, which needs no row).
const MaxSobolDim = 21201

// joeKuoRow is one row of the table: the degree s of the primitive
// polynomial, its inner coefficients a (bits a_1 … a_{s−1}, a_1 the most
// significant) and the initial direction numbers m_1 … m_s.
type joeKuoRow struct {
	s int
	a uint32
	m []uint32
}

var (
	joeKuoOnce sync.Once
	joeKuoRows []joeKuoRow // index j−2 for dimension j ≥ 2
	joeKuoErr  error
)

func joeKuoTable() ([]joeKuoRow, error) {
	joeKuoOnce.Do(func() {
		zr, err := gzip.NewReader(bytes.NewReader(joeKuoGz))
		if err != nil {
			joeKuoErr = fmt.Errorf("design: joe-kuo table: %w", err)
			return
		}
		sc := bufio.NewScanner(zr)
		rows := make([]joeKuoRow, 0, MaxSobolDim-1)
		line := 0
		for sc.Scan() {
			line++
			if line == 1 {
				continue // header "d s a m_i"
			}
			f := strings.Fields(sc.Text())
			if len(f) < 4 {
				joeKuoErr = fmt.Errorf("design: joe-kuo table line %d: %d fields", line, len(f))
				return
			}
			var v [3]uint64
			for k := range 3 {
				if v[k], err = strconv.ParseUint(f[k], 10, 32); err != nil {
					joeKuoErr = fmt.Errorf("design: joe-kuo table line %d: %w", line, err)
					return
				}
			}
			d, s := int(v[0]), int(v[1])
			if d != len(rows)+2 || len(f) != 3+s {
				joeKuoErr = fmt.Errorf("design: joe-kuo table line %d: dimension %d degree %d with %d numbers", line, d, s, len(f)-3)
				return
			}
			r := joeKuoRow{s: s, a: uint32(v[2]), m: make([]uint32, s)}
			for k := range s {
				m, err := strconv.ParseUint(f[3+k], 10, 32)
				if err != nil || m%2 == 0 || m >= 1<<(k+1) {
					joeKuoErr = fmt.Errorf("design: joe-kuo table line %d: bad m_%d %q", line, k+1, f[3+k])
					return
				}
				r.m[k] = uint32(m)
			}
			rows = append(rows, r)
		}
		if err := sc.Err(); err != nil {
			joeKuoErr = fmt.Errorf("design: joe-kuo table: %w", err)
			return
		}
		if len(rows) != MaxSobolDim-1 {
			joeKuoErr = fmt.Errorf("design: joe-kuo table has %d rows, want %d", len(rows), MaxSobolDim-1)
			return
		}
		joeKuoRows = rows
	})
	return joeKuoRows, joeKuoErr
}
