package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/study"
)

var small = Options{Runs: 2, Iterations: 6, Rows: 20, Seed: 1}

func generate(t *testing.T, o Options) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Generate(dir, root, o); err != nil {
		t.Fatal(err)
	}
	return dir
}

// load loads a generated study.
func load(t *testing.T, path string) *study.Study {
	t.Helper()
	s, err := study.Load(context.Background(), path, study.Options{})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// copyRows takes rows ⌊i·n/rows⌋ of the n data rows: the first and the
// last taken are the ones of that formula for sizes that do and do not
// divide n, all rows for rows ≥ n; comment lines are dropped.
func TestCopyRows(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.csv")
	var b strings.Builder
	b.WriteString("# comment\nt,v\n")
	const n = 10
	for i := range n {
		fmt.Fprintf(&b, "%d,%d\n", i, 10*i)
	}
	os.WriteFile(src, []byte(b.String()), 0o644)
	for _, c := range []struct {
		rows int
		want string
	}{
		{5, "0 2 4 6 8"},
		{3, "0 3 6"},
		{6, "0 1 3 5 6 8"},
		{10, "0 1 2 3 4 5 6 7 8 9"},
	} {
		dst := filepath.Join(dir, "dst.csv")
		got, err := copyRows(src, dst, c.rows)
		if err != nil || got != n {
			t.Fatalf("rows %d: %d, %v", c.rows, got, err)
		}
		out, _ := os.ReadFile(dst)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		var ts []string
		for _, ln := range lines[1:] {
			ts = append(ts, strings.Split(ln, ",")[0])
		}
		if lines[0] != "t,v" || strings.Join(ts, " ") != c.want {
			t.Errorf("rows %d: header %q, rows %v, want %s", c.rows, lines[0], ts, c.want)
		}
	}
	if got, _ := copyRows(src, filepath.Join(dir, "x.csv"), 11); got != n {
		t.Errorf("rows 11 of 10: %d", got)
	}
}

// Every generated study validates; its free parameters are the method's
// (24 muscle or all 36 learnable), its one start is π0 and is x = 0 under
// the multiplier transforms, and every x-bound is finite (annealing needs
// a finite box).
func TestStudiesValidate(t *testing.T) {
	dir := generate(t, small)
	for k := 1; k <= small.Runs; k++ {
		pi0 := InitialGuess(small.Seed, k)
		for _, m := range Methods {
			path := filepath.Join(dir, RunDir(k), m.Name+".toml")
			s := load(t, path)
			want := 24
			if m.All {
				want = 36
			}
			if len(s.Free) != want || len(s.Transforms) != want {
				t.Errorf("%s: %d free parameters and %d transforms, want %d", path, len(s.Free), len(s.Transforms), want)
			}
			wantMethod := "builtin:adam"
			if m.Anneal {
				wantMethod = "builtin:anneal"
			}
			if s.MethodInfo.Ref != wantMethod {
				t.Errorf("%s: method %s, want %s", path, s.MethodInfo.Ref, wantMethod)
			}
			if len(s.Starts) != 1 {
				t.Fatalf("%s: %d starts, want 1", path, len(s.Starts))
			}
			for j, p := range s.Free {
				i := s.FreeIdx[j]
				if !m.free(i) {
					t.Errorf("%s: %s is free", path, p.Name)
				}
				if s.Starts[0][j] != pi0[i] {
					t.Errorf("%s: start of %s is %v, want π0 = %v", path, p.Name, s.Starts[0][j], pi0[i])
				}
				if xp := s.XParams[j]; math.IsInf(xp.Lower, 0) || math.IsInf(xp.Upper, 0) || !(xp.Lower < 0 && xp.Upper > 0) {
					t.Errorf("%s: %s has x-bounds [%g, %g], want finite around 0", path, p.Name, xp.Lower, xp.Upper)
				}
			}
			x, err := s.Inverse(s.Starts[0])
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			for j, v := range x {
				if v != 0 {
					t.Errorf("%s: the start of %s is x = %g, want 0", path, s.Free[j].Name, v)
				}
			}
			for i, v := range s.Base {
				if !m.free(i) && v != pi0[i] {
					t.Errorf("%s: %s fixed at %v, want %v", path, params[i].Name, v, pi0[i])
				}
			}
			s.Close()
		}
	}
}

// M4I (-methods M4I): all 54 parameters free; the 36 start at run k's π0
// of M1–M5 (x = 0), the inertia at InitialGuessInertia's physically
// consistent draw (an x exists: the Cholesky inverse), the 36 through
// multipliers and the three inertia groups through Cholesky transforms.
// Over 300 runs the 9 principal moments deviate with mean ≈ 0 and
// SD ≈ 0.1 (Eq. 10; the redraws for the triangle inequality reject few).
func TestM4IStudies(t *testing.T) {
	o := small
	o.Methods = "M4I"
	dir := generate(t, o)
	for k := 1; k <= o.Runs; k++ {
		if _, err := os.Stat(filepath.Join(dir, RunDir(k), "M4.toml")); err == nil {
			t.Errorf("-methods M4I wrote M4.toml")
		}
		path := filepath.Join(dir, RunDir(k), "M4I.toml")
		s := load(t, path)
		pi0, pi0i := InitialGuess(o.Seed, k), InitialGuessInertia(o.Seed, k)
		if len(s.Free) != 54 || len(s.Transforms) != 36+3 || len(s.Starts) != 1 {
			t.Fatalf("%s: %d free, %d transforms, %d starts", path, len(s.Free), len(s.Transforms), len(s.Starts))
		}
		x, err := s.Inverse(s.Starts[0])
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for j, p := range s.Free {
			i := s.FreeIdx[j]
			if s.Starts[0][j] != pi0i[i] || isLearnable(i) && (pi0i[i] != pi0[i] || x[j] != 0) {
				t.Errorf("%s: start of %s is %v (x %v), want %v (π0 of M4: %v)", path, p.Name, s.Starts[0][j], x[j], pi0i[i], pi0[i])
			}
		}
		s.Close()
	}
	var sum, sum2 float64
	n := 0
	for k := 1; k <= 300; k++ {
		pi := InitialGuessInertia(1, k)
		for i, v := range pi {
			if f := i % 10; !isMuscle(i) && f >= 4 {
				if f >= 7 {
					if v != 0 {
						t.Fatalf("run %d: product %s = %v", k, params[i].Name, v)
					}
					continue
				}
				r := (v - truth[i]) / truth[i]
				sum, sum2, n = sum+r, sum2+r*r, n+1
			}
		}
	}
	mean := sum / float64(n)
	sd := math.Sqrt(sum2/float64(n) - mean*mean)
	if math.Abs(mean) > 0.01 || math.Abs(sd-0.1) > 0.01 {
		t.Errorf("%d relative deviations of the principal moments: mean %.4f, SD %.4f; want ≈ 0 and 0.1", n, mean, sd)
	}
}

// The initial guesses are deterministic: the same flags give the same
// files, run k's guess does not depend on -runs, runs differ, and the
// guesses are Eq. 10's N(π_gt, 0.1·|π_gt|) inside the model's bounds with
// the inertia entries at the truth.
func TestStartsDeterministic(t *testing.T) {
	a, b := generate(t, small), generate(t, Options{Runs: 1, Iterations: small.Iterations, Rows: small.Rows, Seed: small.Seed})
	for _, f := range []string{"starts.csv", "starts-muscle.csv", "M1.toml", "M2.toml", "M3.toml", "M4.toml", "M5.toml"} {
		fa, err := os.ReadFile(filepath.Join(a, "run01", f))
		if err != nil {
			t.Fatal(err)
		}
		fb, _ := os.ReadFile(filepath.Join(b, "run01", f))
		// The header comment names the flags, which differ in -runs.
		fa = bytes.Replace(fa, []byte("-runs 2"), []byte("-runs 1"), 1)
		if !bytes.Equal(fa, fb) {
			t.Errorf("run01/%s differs between -runs 2 and -runs 1", f)
		}
	}
	c := generate(t, small)
	for k := 1; k <= small.Runs; k++ {
		for _, f := range []string{"starts.csv", "starts-muscle.csv"} {
			fa, _ := os.ReadFile(filepath.Join(a, RunDir(k), f))
			fc, _ := os.ReadFile(filepath.Join(c, RunDir(k), f))
			if !bytes.Equal(fa, fc) {
				t.Errorf("%s/%s differs between two identical generations", RunDir(k), f)
			}
		}
	}
	if s1, s2 := StartsCSV(Methods[1], InitialGuess(1, 1)), StartsCSV(Methods[1], InitialGuess(1, 2)); s1 == s2 {
		t.Error("runs 1 and 2 have the same initial guess")
	}
	if StartsCSV(Methods[1], InitialGuess(1, 1)) == StartsCSV(Methods[1], InitialGuess(2, 1)) {
		t.Error("seeds 1 and 2 give the same initial guess")
	}
	// Eq. 10: relative deviations with SD 0.1 (200 runs × 36 values).
	var sum, sum2 float64
	var n int
	for k := 1; k <= 200; k++ {
		pi0 := InitialGuess(1, k)
		for i, v := range pi0 {
			if !(v >= params[i].Lower && v <= params[i].Upper) {
				t.Fatalf("run %d: %s = %v outside the bounds [%v, %v]", k, params[i].Name, v, params[i].Lower, params[i].Upper)
			}
			if !isLearnable(i) {
				if v != truth[i] {
					t.Fatalf("run %d: %s = %v, want the truth %v", k, params[i].Name, v, truth[i])
				}
				continue
			}
			r := (v - truth[i]) / math.Abs(truth[i])
			sum, sum2, n = sum+r, sum2+r*r, n+1
		}
	}
	mean := sum / float64(n)
	sd := math.Sqrt(sum2/float64(n) - mean*mean)
	if n != 200*36 || math.Abs(mean) > 0.005 || math.Abs(sd-0.1) > 0.005 {
		t.Errorf("%d relative deviations: mean %.4f, sd %.4f; want 7200, 0 and 0.1", n, mean, sd)
	}
}

// summaryJSON is a hand-made summary.json: free (best θ) and fixed values.
func summaryJSON(loglik any, free, fixed map[string]float64) []byte {
	b, _ := json.Marshal(map[string]any{
		"best":     map[string]any{"theta": free, "log_likelihood": loglik, "log_target": 0},
		"fixed":    fixed,
		"complete": true,
	})
	return b
}

// The criteria of hand-made estimates, worked by hand.
func TestCriteriaByHand(t *testing.T) {
	gt := map[string]float64{}
	for i, p := range params {
		gt[p.Name] = truth[i]
	}
	// Everything at the truth: C2 = C3 = C3m = 0.
	free, fixed := map[string]float64{}, map[string]float64{}
	for i, p := range params {
		if isMuscle(i) {
			free[p.Name] = truth[i]
		} else {
			fixed[p.Name] = truth[i]
		}
	}
	r, err := FromSummary(summaryJSON(-1e-9, free, fixed))
	if err != nil {
		t.Fatal(err)
	}
	if r.C1 != 1e-9 || r.C2 != 0 || r.C3 != 0 || r.C3m != 0 {
		t.Errorf("at the truth: %+v, want C1 1e-9 and zeros", r.Criteria)
	}

	// DELT1_F0 10 % high (a free muscle parameter), humerus_mass 20 % low
	// (fixed, as M1's perturbed bones), an inertia entry 50 % off (not
	// learnable, so not counted).
	free["DELT1_F0"] = 1.1 * gt["DELT1_F0"]
	fixed["humerus_mass"] = 0.8 * gt["humerus_mass"]
	fixed["humerus_Ixx"] = 1.5 * gt["humerus_Ixx"]
	r, err = FromSummary(summaryJSON(-2.5, free, fixed))
	if err != nil {
		t.Fatal(err)
	}
	// ‖π_gt‖ over the 36 learnable parameters: the sum of squares by name.
	var norm2 float64
	for _, bone := range []string{"humerus", "ulna", "radius"} {
		for _, f := range []string{"mass", "com_x", "com_y", "com_z"} {
			norm2 += gt[bone+"_"+f] * gt[bone+"_"+f]
		}
	}
	for _, mu := range []string{"DELT1", "DELT3", "TRIlong", "TRIlat", "BIClong", "BICshort", "BRA", "BRD"} {
		for _, f := range []string{"L0", "F0", "vmax"} {
			norm2 += gt[mu+"_"+f] * gt[mu+"_"+f]
		}
	}
	dF, dm := 0.1*gt["DELT1_F0"], 0.2*gt["humerus_mass"]
	want := Criteria{
		C1:  2.5,
		C2:  100 * math.Sqrt(dF*dF+dm*dm) / math.Sqrt(norm2),
		C3:  100 * (0.1 + 0.2) / 36,
		C3m: 100 * 0.1 / 24,
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"C1", r.C1, want.C1}, {"C2", r.C2, want.C2}, {"C3", r.C3, want.C3}, {"C3m", r.C3m, want.C3m}} {
		if math.Abs(c.got-c.want) > 1e-12*math.Abs(c.want) {
			t.Errorf("%s = %.15g, want %.15g", c.name, c.got, c.want)
		}
	}
	// C2 by the numbers: √(105.185² + 0.399²) = 105.186 against
	// ‖π_gt‖ = 1933.8 (the eight F0 dominate), 5.439 %.
	if math.Abs(r.C2-5.439) > 0.001 {
		t.Errorf("C2 = %g %%, want ≈ 5.439 %%", r.C2)
	}

	// A parameter in neither best.theta nor fixed, and a run without a
	// usable best point, are errors.
	delete(fixed, "ulna_com_x")
	if _, err := FromSummary(summaryJSON(-1, free, fixed)); err == nil || !strings.Contains(err.Error(), "ulna_com_x") {
		t.Errorf("missing parameter: %v", err)
	}
	if _, err := FromSummary(summaryJSON(nil, free, fixed)); err == nil {
		t.Error("a null log likelihood gave no error")
	}

	if q := []float64{4, 1, 3, 2}; Quantile(q, 0.5) != 2.5 || Quantile(q, 0.25) != 1.75 || Quantile(q, 0.75) != 3.25 || Quantile(q, 1) != 4 {
		t.Errorf("quartiles of 1..4: %v %v %v", Quantile(q, 0.25), Quantile(q, 0.5), Quantile(q, 0.75))
	}
}

// End to end on a tiny experiment (20 rows, 6 iterations, 2 runs): every
// study runs and the criteria are written, one line per method and run,
// with C1 the loss of the best point, no worse than at π0.
func TestRunAndCriteria(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 10 small studies")
	}
	dir := generate(t, small)
	for k := 1; k <= small.Runs; k++ {
		for _, m := range Methods {
			s := load(t, filepath.Join(dir, RunDir(k), m.Name+".toml"))
			_, err := run.Run(context.Background(), s, run.Options{OutDir: filepath.Join(dir, "results", RunDir(k), m.Name), Workers: 1})
			s.Close()
			if err != nil {
				t.Fatalf("run %d %s: %v", k, m.Name, err)
			}
		}
	}
	if err := WriteCriteria(dir, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "criteria.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 1+5*small.Runs {
		t.Fatalf("criteria.csv has %d lines, want %d:\n%s", len(lines), 1+5*small.Runs, b)
	}
	for _, m := range Methods {
		for k := 1; k <= small.Runs; k++ {
			if !strings.Contains(string(b), fmt.Sprintf("\n%s,%d,", m.Name, k)) {
				t.Errorf("criteria.csv has no line for %s run %d", m.Name, k)
			}
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "criteria.md"))
	for _, m := range Methods {
		if !strings.Contains(string(md), "| "+m.Name+" | 2 |") {
			t.Errorf("criteria.md has no row for %s:\n%s", m.Name, md)
		}
	}
	// Every row is usable and no method wandered far from its initial guess
	// in 6 iterations.
	rows, _ := Collect(dir, io.Discard)
	for _, r := range rows {
		pi0 := Evaluate(InitialGuess(small.Seed, r.Run))
		if !(r.C1 > 0) || math.IsNaN(r.C2+r.C3+r.C3m) {
			t.Errorf("%s run %d: %+v", r.Method, r.Run, r.Criteria)
		}
		if r.C3 > 2*pi0.C3+1 {
			t.Errorf("%s run %d: C3 %g %%, far from the initial guess's %g %%", r.Method, r.Run, r.C3, pi0.C3)
		}
		// The trajectory (Fig. 3, 5): its first point is x = 0, i.e. π0
		// (the transform's inverse is not used, so this checks the x → θ
		// map on the traced points); annealing's last point is its best
		// (the same C1 to rounding, the same C2, C3m); Adam's last iterate
		// is no better than the best point it evaluated.
		pts, err := Trace(dir, r.Run, methodByName(r.Method))
		if err != nil {
			t.Fatalf("%s run %d: %v", r.Method, r.Run, err)
		}
		first, last := pts[0], pts[len(pts)-1]
		if first.Iter != 0 || math.Abs(first.C3m-pi0.C3m) > 1e-9 || (r.Method == "M2" || r.Method == "M4") && math.Abs(first.C2-pi0.C2) > 1e-9 {
			t.Errorf("%s run %d: trace starts at iteration %d with %+v, π0 has %+v", r.Method, r.Run, first.Iter, first.Criteria, pi0)
		}
		if last.Iter < small.Iterations-1 {
			t.Errorf("%s run %d: trace ends at iteration %d", r.Method, r.Run, last.Iter)
		}
		if methodByName(r.Method).Anneal {
			if math.Abs(last.C1-r.C1) > 1e-9*r.C1 || math.Abs(last.C2-r.C2) > 1e-12 || math.Abs(last.C3m-r.C3m) > 1e-12 {
				t.Errorf("%s run %d: last trace point %+v, best %+v", r.Method, r.Run, last.Criteria, r.Criteria)
			}
		} else {
			// Adam's last iterate is its sample, which the host reports in
			// θ (params' means, one sample): the x → θ map of Trace agrees.
			var sm struct {
				Params []struct {
					Name string  `json:"name"`
					Mean float64 `json:"mean"`
				} `json:"params"`
			}
			b, _ := os.ReadFile(filepath.Join(dir, "results", RunDir(r.Run), r.Method, "summary.json"))
			json.Unmarshal(b, &sm)
			idx := map[string]int{}
			for i, p := range params {
				idx[p.Name] = i
			}
			for _, p := range sm.Params {
				if got := last.Pihat[idx[p.Name]]; math.Abs(got-p.Mean) > 1e-12*math.Abs(p.Mean) {
					t.Errorf("%s run %d: %s = %v at the last trace point, %v in summary.json", r.Method, r.Run, p.Name, got, p.Mean)
				}
			}
			if len(sm.Params) == 0 {
				t.Errorf("%s run %d: no params in summary.json", r.Method, r.Run)
			}
		}
	}
	for _, f := range []string{"curves.csv", "curves.md", "fig5.csv", "fig3-C1.svg", "fig3-C2.svg", "fig4-C3.svg", "fig4-C3m.svg", "fig5-muscle.svg", "fig5-bone.svg", "fig6.csv", "fig6.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// curves.csv at 0 evaluations: every run is at π0, so the median of C2
	// is the median over the runs of π0's C2 (the methods with all 36 free;
	// M1 and M3 too, their bones being fixed at π0).
	var c2 []float64
	for k := 1; k <= small.Runs; k++ {
		c2 = append(c2, Evaluate(InitialGuess(small.Seed, k)).C2)
	}
	cb, _ := os.ReadFile(filepath.Join(dir, "curves.csv"))
	want := fmt.Sprintf("\nM4,0,%d,", small.Runs)
	i := strings.Index(string(cb), want)
	if i < 0 {
		t.Fatalf("curves.csv has no line %q:\n%s", want, cb)
	}
	f := strings.Split(strings.SplitN(string(cb)[i+1:], "\n", 2)[0], ",")
	if got, _ := strconv.ParseFloat(f[6], 64); math.Abs(got-Quantile(c2, 0.5)) > 1e-4*got {
		t.Errorf("curves.csv M4 at 0: C2 median %v, π0's %v", f[6], Quantile(c2, 0.5))
	}
}
