package floatcode

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
)

// Encode is v's bits, 8 little-endian bytes per value, in base64.
func Encode(v []float64) string {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// Decode reads exactly n finite values from s; errors start with what.
func Decode(s string, n int, what string) ([]float64, error) {
	if len(s) != base64.StdEncoding.EncodedLen(8*n) {
		return nil, fmt.Errorf("%s: %d base64 characters, want %d for %d values", what, len(s), base64.StdEncoding.EncodedLen(8*n), n)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	if len(b) != 8*n {
		return nil, fmt.Errorf("%s: %d bytes, want %d", what, len(b), 8*n)
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		if math.IsNaN(v[i]) || math.IsInf(v[i], 0) {
			return nil, fmt.Errorf("%s: value %d is %v", what, i+1, v[i])
		}
	}
	return v, nil
}
