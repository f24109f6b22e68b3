package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTkrContactDesign: the README's command for examples/tkr-contact
// (kinfer design on a Hammersley design over the pose offsets) runs, every
// point evaluates, and the columns are the documented ones; the design's
// first point (the box's lower corner: x −5 mm, y −0.2 mm, β −10°, …) is
// deep in contact on both sides.
func TestTkrContactDesign(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	code, out, e := kinfer(t, "design", "../../examples/tkr-contact/design.toml", "-o", dir, "--n", "16", "--design", "hammersley", "--workers", "2")
	if code != 0 || !strings.Contains(out, "done — 16 of 16 hammersley points (ok 16)") {
		t.Fatalf("exit %d\n%s\n%s", code, out, e)
	}
	f, err := os.Open(filepath.Join(dir, "design.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 17 || !strings.HasPrefix(strings.Join(rows[0], ","), "point,status,x0_mm,y0_mm,z0_mm,alpha0_deg,beta0_deg,gamma0_deg,dataset,x_mm,") {
		t.Fatalf("design.csv: %d rows, header %v", len(rows), rows[0])
	}
	col := map[string]int{}
	for i, n := range rows[0] {
		col[n] = i
	}
	for _, n := range []string{"med_Fy_N", "lat_Fy_N"} {
		v, err := strconv.ParseFloat(rows[1][col[n]], 64)
		if err != nil || !(v > 1000) {
			t.Errorf("first point %s = %q", n, rows[1][col[n]])
		}
	}
}
