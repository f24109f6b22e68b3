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

// B64 is a vector stored as Encode stores it. It decodes straight from the
// JSON text into its values, without the string and byte copies of
// decoding a string field and then Decode; Check then validates it.
type B64 []float64

// MarshalJSON writes Encode(v) as a JSON string.
func (v B64) MarshalJSON() ([]byte, error) {
	s := Encode(v)
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
}

// chunk is the base64 text decoded at a time: 4096 characters are 3072
// bytes, 384 whole values.
const chunk = 4096

// UnmarshalJSON decodes a JSON string of base64 (no escapes) whose bytes
// are whole 8-byte values; null gives nil.
func (v *B64) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*v = nil
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("want a base64 string of float64 values")
	}
	s := b[1 : len(b)-1]
	if len(s)%4 != 0 {
		return fmt.Errorf("%d base64 characters, not a multiple of 4", len(s))
	}
	n := len(s) / 4 * 3
	if len(s) > 0 && s[len(s)-1] == '=' {
		n--
		if s[len(s)-2] == '=' {
			n--
		}
	}
	if n%8 != 0 {
		return fmt.Errorf("%d bytes of base64, not whole 8-byte values", n)
	}
	out := make([]float64, n/8)
	var buf [chunk / 4 * 3]byte
	k := 0
	for i := 0; i < len(s); i += chunk {
		m, err := base64.StdEncoding.Decode(buf[:], s[i:min(i+chunk, len(s))])
		if err != nil {
			return fmt.Errorf("base64: %v", err)
		}
		if m%8 != 0 || k+m/8 > len(out) {
			return fmt.Errorf("base64: %d bytes in a block, want whole values", m)
		}
		for j := 0; j < m; j += 8 {
			out[k] = math.Float64frombits(binary.LittleEndian.Uint64(buf[j:]))
			k++
		}
	}
	if k != len(out) {
		return fmt.Errorf("base64: padding inside the text")
	}
	*v = out
	return nil
}

// Check says whether v holds exactly n finite values; errors start with
// what.
func Check(v []float64, n int, what string) error {
	if len(v) != n {
		return fmt.Errorf("%s: %d values, want %d", what, len(v), n)
	}
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s: value %d is %v", what, i+1, x)
		}
	}
	return nil
}
