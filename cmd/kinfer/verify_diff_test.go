package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// firstDifference gives the line of the first differing byte, counted as
// a line-by-line comparison would (the block compare replaced one that
// read whole lines, unbounded), and refuses what is not a regular file.
func TestFirstDifference(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("1234567,", 20000) + "\n" // lines across blocks
	cases := []struct {
		a, b string
		want int
	}{
		{"x\ny\n", "x\ny\n", 0},
		{"x\ny\n", "x\nz\n", 2},
		{"x\ny\n", "x\ny\nz\n", 3}, // a ends first: the line after its last
		{"x\ny", "x\nyz\n", 2},
		{"", "x\n", 1},
		{long + long + "a\n", long + long + "b\n", 3},
		{long + long, long + long + "c", 3},
		{long + "q" + long, long + "r" + long, 2},
	}
	for i, c := range cases {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		os.WriteFile(a, []byte(c.a), 0o644)
		os.WriteFile(b, []byte(c.b), 0o644)
		for _, swap := range []bool{false, true} {
			x, y := a, b
			if swap {
				x, y = b, a
			}
			got, err := firstDifference(x, y)
			if err != nil || got != c.want {
				t.Errorf("case %d (swapped %v): line %d, %v; want %d", i, swap, got, err, c.want)
			}
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err == nil {
		if _, err := firstDifference(fifo, filepath.Join(dir, "a")); err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("a named pipe: %v", err)
		}
	}
	if _, err := firstDifference("/dev/zero", filepath.Join(dir, "a")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("/dev/zero: %v", err)
	}
}

// A plugin reference recorded relative in the run and absolute in the
// re-run is the same reference; another built-in method is not (review
// 19: a false "differs" on every relative plugin run).
func TestDifferentResultsPluginRefs(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	os.WriteFile(a, []byte(`{"model": "../../plugins/go/ligament/plugin.toml", "method": "builtin:metropolis", "likelihoods": ["builtin:gaussian"], "params": []}`), 0o644)
	os.WriteFile(b, []byte(`{"model": "/home/u/kinfer/plugins/go/ligament/plugin.toml", "method": "builtin:metropolis", "likelihoods": ["builtin:gaussian"], "params": []}`), 0o644)
	if k := differentResults(a, b); k != "" {
		t.Errorf("relative and absolute plugin references differ in %q", k)
	}
	os.WriteFile(b, []byte(`{"model": "/home/u/kinfer/plugins/go/ligament/plugin.toml", "method": "builtin:tmcmc", "likelihoods": ["builtin:gaussian"], "params": []}`), 0o644)
	if k := differentResults(a, b); k != "method" {
		t.Errorf("another method: %q, want method", k)
	}
}

// A relative reference matches an absolute one that ends with it (a run
// from the study's folder; author 22), and nothing else: swapped plugins
// of two likelihoods differ (review 23: by file name alone they matched).
func TestSameRefs(t *testing.T) {
	for _, c := range []struct {
		a, b any
		same bool
	}{
		{"plugin.toml", "/home/u/demo/plugin.toml", true},
		{"../../plugins/c/ligament/plugin.toml", "/work/plugins/c/ligament/plugin.toml", true},
		{"lik/plugin.toml", "/home/u/other/plugin.toml", false},
		{"builtin:ligament", "builtin:ligament", true},
		{"builtin:ligament", "/x/ligament", false},
		{[]any{"a/plugin.toml on d1", "b/plugin.toml on d2"}, []any{"/x/a/plugin.toml on d1", "/x/b/plugin.toml on d2"}, true},
		{[]any{"a/plugin.toml on d1", "b/plugin.toml on d2"}, []any{"/x/b/plugin.toml on d1", "/x/a/plugin.toml on d2"}, false},
		{[]any{"builtin:gaussian on a on b"}, []any{"builtin:gaussian on a on b"}, true},
	} {
		if got := sameRefs(c.a, c.b); got != c.same {
			t.Errorf("sameRefs(%v, %v) = %v", c.a, c.b, got)
		}
	}
}
