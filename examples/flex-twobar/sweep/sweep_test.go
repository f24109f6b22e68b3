package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kinfer/kinfer/builtin/flexmb/twobar"
)

func dataDir(t testing.TB) string {
	d, err := filepath.Abs("../data")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Table 1's direct rows through kinfer studies: on the simulated set
// Gauss–Newton reaches the same point from every f in [0.5, 2] (the
// residual is linear in p), within 1 % of p_sol at t1; on the measured set
// not even from p_sol.
func TestDirectRows(t *testing.T) {
	ctx := context.Background()
	out := t.TempDir()
	res, _, err := RunRow(ctx, Rows[0], "t1", dataDir(t), out, "gaussnewton", 2, 15)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi, ok, _ := Range(res)
	if !ok || lo != 0.5 || hi != 2.0 {
		t.Errorf("row 1 t1: range %v–%v (ok %v), want 0.5–2.0", lo, hi, ok)
	}
	res, _, err = RunRow(ctx, Rows[2], "t1", dataDir(t), out, "gaussnewton", 2, 15)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok, others := Range(res); ok || len(others) > 0 {
		t.Errorf("row 3 t1: measured set reached p_sol")
	}
}

// One indirect identification: Eq. 15 at t1, Gauss–Newton from
// p = 1.05·p_sol, central-difference Jacobian, through a kinfer study.
func BenchmarkIndirectIdentification(b *testing.B) {
	ctx := context.Background()
	r := Rows[6]
	r.Grid = "bench"
	for b.Loop() {
		res, _, err := RunRow(ctx, r, "t1", dataDir(b), b.TempDir(), "gaussnewton", 1, 15)
		if err != nil {
			b.Fatal(err)
		}
		if res[0].RelErr > TolSolution {
			b.Fatalf("did not converge: %v", res[0])
		}
	}
	_ = twobar.PSol
}
