package run

import (
	"os"
	"path/filepath"
	"testing"
)

// readLimit reads a cgroup limit: bytes, or none for "max" and v1's
// page-rounded 2^63 − 4096.
func TestReadCgroupLimit(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]int64{"4294967296\n": 4 << 30, "max\n": 0, "9223372036854771712\n": 0, "": 0, "-1": 0} {
		p := filepath.Join(dir, "memory.max")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := readLimit(p); got != want {
			t.Errorf("%q: %d, want %d", text, got, want)
		}
	}
	if readLimit(filepath.Join(dir, "none")) != 0 {
		t.Error("a missing file gave a limit")
	}
}
