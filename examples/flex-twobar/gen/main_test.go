package main

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tolRegen: the committed data were written on amd64; another
// architecture may fuse multiply-adds and differ in the last bits, which
// the HHT iteration keeps at the level of its tolerance.
const tolRegen = 1e-8

// The committed data are what the generator writes.
func TestCommittedDataIsGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("4 simulations of 3 s")
	}
	dir := t.TempDir()
	if err := write(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range Files {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("..", "data", f))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) == string(want) {
			continue
		}
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		if len(gl) != len(wl) {
			t.Errorf("%s: %d lines, committed %d: run go run ./examples/flex-twobar/gen examples/flex-twobar/data", f, len(gl), len(wl))
			continue
		}
		for i := range gl {
			if gl[i] == wl[i] {
				continue
			}
			gf, wf := strings.Split(gl[i], ","), strings.Split(wl[i], ",")
			if len(gf) != len(wf) || strings.HasPrefix(gl[i], "#") {
				t.Fatalf("%s line %d differs", f, i+1)
			}
			for j := range gf {
				a, err1 := strconv.ParseFloat(gf[j], 64)
				b, err2 := strconv.ParseFloat(wf[j], 64)
				if err1 != nil || err2 != nil || math.Abs(a-b) > tolRegen*(1+math.Abs(b)) {
					t.Fatalf("%s line %d column %d: %s, committed %s", f, i+1, j+1, gf[j], wf[j])
				}
			}
		}
	}
}
