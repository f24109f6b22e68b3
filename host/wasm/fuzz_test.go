package wasm

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kinfer/kinfer/abi"
)

// A description nested 100 000 deep, under the 1 MiB limit, is refused by
// its depth at once (it once made the strict key check allocate tens of
// gigabytes: its path strings grow with the depth).
func TestDeepDescriptionRefused(t *testing.T) {
	deep := `{"kind":"model","name":"x","doc":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}`
	start := time.Now()
	_, err := decodeSpec([]byte(deep))
	if err == nil || !strings.Contains(err.Error(), "nested deeper than 64") {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("took %v", el)
	}
	// Brackets inside strings do not count.
	ok := `{"kind":"model","name":"x","doc":"` + strings.Repeat("[{", 1000) + `","params":[{"name":"a","lower":0,"upper":1}],"outputs":[{"name":"y"}]}`
	if _, err := decodeSpec([]byte(ok)); err != nil {
		t.Errorf("brackets in a string: %v", err)
	}
}

// A number beyond float64 is named with its key, not as Go's "cannot
// unmarshal number 1e999 into Go value of type float64" (audit 21).
func TestDescriptionNumberOutOfRange(t *testing.T) {
	_, err := decodeSpec([]byte(`{"kind":"model","name":"x","params":[{"name":"a","lower":0,"upper":1e999}],"outputs":[{"name":"y"}]}`))
	if err == nil || !strings.Contains(err.Error(), `number 1e999 at "params.upper" is beyond the range of a 64-bit float`) {
		t.Fatalf("err = %v", err)
	}
}

// A description cut short says so, not "EOF" (author 22: a C spec string
// missing its last brace).
func TestDescriptionCutShort(t *testing.T) {
	_, err := decodeSpec([]byte(`{"kind":"model","name":"x","params":[{"name":"a","lower":0,"upper":1}],"outputs":[{"name":"y"}]`))
	if err == nil || !strings.Contains(err.Error(), "the text ends before its value does") {
		t.Fatalf("err = %v", err)
	}
}

// FuzzDecodeSpec: any description, valid or not, decodes or is refused
// without a panic; a decoded one validates without a panic.
func FuzzDecodeSpec(f *testing.F) {
	f.Add([]byte(`{"kind":"model","name":"quad","params":[{"name":"a","lower":-1,"upper":1}],"outputs":[{"name":"y"}],"capabilities":["jacobian"]}`))
	f.Add([]byte(`{"kind":"likelihood","name":"l","settings":[{"name":"nu","default":3,"choices":["a","b"]}]}`))
	f.Add([]byte(`{"kind":"method","name":"m","settings":[{"name":"n","default":1e308}],"capabilities":["checkpoint","batch"]}`))
	f.Add([]byte(`{"kind":"model","name":"x","name":"y"}`))
	f.Add([]byte(`[[[[[[[[[[[[]]]]]]]]]]]]`))
	f.Add([]byte(`{"kind":"model","Name":"x"} trailing`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSpec(b)
		if err == nil {
			_ = s.Validate()
		}
	})
}

// FuzzParseBatch: a method's batch header and points, anywhere in a guest
// memory, decode into a batch of the declared size or are refused; never a
// panic, never more than the limits.
func FuzzParseBatch(f *testing.F) {
	mem := make([]byte, 256)
	binary.LittleEndian.PutUint32(mem[0:], 3)   // n
	binary.LittleEndian.PutUint32(mem[4:], 0)   // mode: points
	binary.LittleEndian.PutUint32(mem[8:], 1)   // want
	binary.LittleEndian.PutUint32(mem[12:], 16) // points
	for i := 0; i < 6; i++ {
		binary.LittleEndian.PutUint64(mem[16+8*i:], math.Float64bits(float64(i)))
	}
	f.Add(mem, uint32(0), uint8(2), int32(-1))
	f.Add(mem, uint32(250), uint8(2), int32(-1))
	f.Add(mem[:20], uint32(0), uint8(0), int32(-1))
	lsq := append([]byte(nil), mem...)
	binary.LittleEndian.PutUint32(lsq[8:], 9) // want: log target, Jacobian
	f.Add(lsq, uint32(0), uint8(2), int32(40))
	f.Add(lsq, uint32(0), uint8(2), int32(-1))
	f.Fuzz(func(t *testing.T, mem []byte, ptr uint32, d8 uint8, r int32) {
		d, R := int(d8), int(r)
		if R < 0 {
			R = -1
		}
		read := func(what string, p uint32, n uint64) ([]byte, error) {
			if uint64(p)+n > uint64(len(mem)) {
				return nil, errors.New("out of range")
			}
			return mem[p : uint64(p)+n], nil
		}
		b, err := parseBatch(read, ptr, d, R, R)
		if err != nil {
			return
		}
		if n := b.Len(); n < 1 || n > MaxBatch {
			t.Fatalf("batch of %d points accepted", n)
		}
		for _, p := range b.Points {
			if len(p) != d {
				t.Fatalf("point of %d values, d = %d", len(p), d)
			}
		}
		if R < 0 && b.Want&^(abi.WantLogTarget|abi.WantGradient) != 0 {
			t.Fatalf("want %v without least squares", b.Want)
		}
		if b.Want&^15 != 0 || b.Want&abi.WantJacobian != 0 && b.Want&abi.WantResiduals == 0 {
			t.Fatalf("want %v", b.Want)
		}
		if b.Want&abi.WantJacobian != 0 && uint64(b.Len())*uint64(R)*uint64(d+1) > maxLSQValues {
			t.Fatalf("%d points × %d residuals × %d parameters accepted", b.Len(), R, d)
		}
	})
}

// FuzzJSONDepth: checkDepth never panics and accepts every JSON whose
// nesting is within the limit.
func FuzzJSONDepth(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"[[[\"]"}]}`))
	f.Add([]byte(strings.Repeat("[", 70)))
	f.Fuzz(func(t *testing.T, b []byte) { _ = checkDepth(b, 8) })
}
