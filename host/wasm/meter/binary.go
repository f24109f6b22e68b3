package meter

import (
	"errors"
	"fmt"
)

// errTruncated is the error of a read past the end of a section or body.
var errTruncated = errors.New("unexpected end")

// reader reads the WebAssembly binary format.
type reader struct {
	b   []byte
	off int
}

func (r *reader) done() bool { return r.off >= len(r.b) }

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errTruncated
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) peek() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errTruncated
	}
	return r.b[r.off], nil
}

// uleb reads an unsigned LEB128 of at most bits bits.
func (r *reader) uleb(bits uint) (uint64, error) {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if shift >= bits {
			return 0, errors.New("LEB128 integer too long")
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			if bits < 64 && v>>bits != 0 {
				return 0, fmt.Errorf("LEB128 integer overflows %d bits", bits)
			}
			return v, nil
		}
	}
}

func (r *reader) u32() (uint32, error) {
	v, err := r.uleb(32)
	return uint32(v), err
}

// sleb reads a signed LEB128 of at most bits bits and returns its value.
func (r *reader) sleb(bits uint) (int64, error) {
	var v int64
	var shift uint
	for {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if shift >= bits {
			return 0, errors.New("LEB128 integer too long")
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, nil
		}
	}
}

func (r *reader) bytes(n uint64) ([]byte, error) {
	if n > uint64(len(r.b)-r.off) {
		return nil, errTruncated
	}
	b := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return b, nil
}

func (r *reader) skip(n int) error {
	_, err := r.bytes(uint64(n))
	return err
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(uint64(n))
	return string(b), err
}

// count reads a vector length and checks that at least min bytes per
// element remain, so that a lying count cannot make the caller allocate.
func (r *reader) count(minBytes int) (int, error) {
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	if uint64(n)*uint64(minBytes) > uint64(len(r.b)-r.off) {
		return 0, fmt.Errorf("vector of %d elements longer than its %d remaining bytes", n, len(r.b)-r.off)
	}
	return int(n), nil
}

// limits reads table or memory limits (flag bit 0: has max; bit 1:
// shared; bit 2: 64-bit).
func (r *reader) limits() (flags byte, min, max uint64, err error) {
	if flags, err = r.byte(); err != nil {
		return
	}
	if flags > 7 {
		return 0, 0, 0, fmt.Errorf("bad limits flags 0x%02x", flags)
	}
	if min, err = r.uleb(64); err != nil {
		return
	}
	if flags&1 != 0 {
		max, err = r.uleb(64)
	}
	return
}

// Appenders of the binary format.

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			c |= 0x80
		}
		b = append(b, c)
		if v == 0 {
			return b
		}
	}
}

func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendName(b []byte, s string) []byte {
	b = appendULEB(b, uint64(len(s)))
	return append(b, s...)
}

// appendSection appends a section with its id and size.
func appendSection(b []byte, id byte, body []byte) []byte {
	b = append(b, id)
	b = appendULEB(b, uint64(len(body)))
	return append(b, body...)
}

// Value types of WebAssembly 2.0.
const (
	tI32       = 0x7f
	tI64       = 0x7e
	tF32       = 0x7d
	tF64       = 0x7c
	tV128      = 0x7b
	tFuncref   = 0x70
	tExternref = 0x6f
)

func isValType(b byte) bool {
	switch b {
	case tI32, tI64, tF32, tF64, tV128, tFuncref, tExternref:
		return true
	}
	return false
}

func isRefType(b byte) bool { return b == tFuncref || b == tExternref }
