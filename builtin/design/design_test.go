package design

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sobolRef are points of scipy.stats.qmc.Sobol(21201, scramble=False) (SciPy
// 1.10.1, which uses the same new-joe-kuo-6.21201 table), computed with
//
//	s = qmc.Sobol(21201, scramble=False).random(1024); s[r, c]
//
// for rows r and 0-based columns c = 1, 2, 999, 4999, 21200.
var sobolRef = []struct {
	row  uint64
	vals [5]float64
}{
	{1, [5]float64{0.5, 0.5, 0.5, 0.5, 0.5}},
	{2, [5]float64{0.25, 0.25, 0.75, 0.75, 0.75}},
	{3, [5]float64{0.75, 0.75, 0.25, 0.25, 0.25}},
	{5, [5]float64{0.875, 0.125, 0.625, 0.625, 0.125}},
	{100, [5]float64{0.2578125, 0.7734375, 0.9140625, 0.2421875, 0.5703125}},
	{1000, [5]float64{0.0966796875, 0.5185546875, 0.2001953125, 0.1416015625, 0.0830078125}},
	{1023, [5]float64{0.7529296875, 0.6123046875, 0.8564453125, 0.7978515625, 0.2392578125}},
}

func TestSobolFirstPoints3D(t *testing.T) {
	// scipy.stats.qmc.Sobol(3, scramble=False).random(8) (SciPy 1.10.1);
	// the same as Joe & Kuo's own generator's output for d = 3.
	want := [][]float64{
		{0, 0, 0}, {0.5, 0.5, 0.5}, {0.75, 0.25, 0.25}, {0.25, 0.75, 0.75},
		{0.375, 0.375, 0.625}, {0.875, 0.875, 0.125}, {0.625, 0.125, 0.875}, {0.125, 0.625, 0.375},
	}
	s, err := NewSobol(3, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Points(0, 8)
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] { // dyadic rationals: exact
				t.Errorf("point %d coord %d = %v, want %v", i, j, got[i][j], want[i][j])
			}
		}
	}
}

func TestSobolHighDimensions(t *testing.T) {
	s, err := NewSobol(MaxSobolDim, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	cols := []int{1, 2, 999, 4999, 21200}
	x := make([]float64, MaxSobolDim)
	for _, r := range sobolRef {
		s.Point(r.row, x)
		for k, c := range cols {
			if x[c] != r.vals[k] {
				t.Errorf("row %d dim %d = %v, want %v (scipy)", r.row, c+1, x[c], r.vals[k])
			}
		}
	}
	if _, err := NewSobol(MaxSobolDim+1, false, 0); err == nil {
		t.Error("dimension beyond the table accepted")
	}
}

// TestSobolNet checks the (t, m, s)-net property that makes Sobol points
// well spread: the first 2^m points put exactly one point in every interval
// [k/2^m, (k+1)/2^m) of every coordinate (here all 1 000 first dimensions),
// and, for the first two coordinates (a (0, m, 2)-net), in every elementary
// box of area 2^−m. Owen scrambling must preserve both.
func TestSobolNet(t *testing.T) {
	const m, d = 6, 1000
	n := 1 << m
	for _, scr := range []bool{false, true} {
		s, _ := NewSobol(d, scr, 42)
		pts := s.Points(0, n)
		for j := range d {
			seen := make([]bool, n)
			for _, p := range pts {
				k := int(p[j] * float64(n))
				if seen[k] {
					t.Fatalf("scramble=%v dim %d: two points in interval %d", scr, j+1, k)
				}
				seen[k] = true
			}
		}
		for a := 0; a <= m; a++ {
			na, nb := 1<<a, 1<<(m-a)
			seen := make(map[[2]int]bool)
			for _, p := range pts {
				key := [2]int{int(p[0] * float64(na)), int(p[1] * float64(nb))}
				if seen[key] {
					t.Fatalf("scramble=%v: elementary box %dx%d %v holds two points", scr, na, nb, key)
				}
				seen[key] = true
			}
		}
	}
}

func TestSobolScrambleSeed(t *testing.T) {
	a, _ := NewSobol(5, true, 1)
	b, _ := NewSobol(5, true, 1)
	c, _ := NewSobol(5, true, 2)
	pa, pb, pc := a.Points(0, 16), b.Points(0, 16), c.Points(0, 16)
	same, diff := true, false
	for i := range pa {
		for j := range pa[i] {
			same = same && pa[i][j] == pb[i][j]
			diff = diff || pa[i][j] != pc[i][j]
			if pa[i][j] < 0 || pa[i][j] >= 1 {
				t.Fatalf("scrambled coordinate %v outside [0,1)", pa[i][j])
			}
		}
	}
	if !same || !diff {
		t.Errorf("same seed equal: %v, other seed different: %v", same, diff)
	}
	// Owen scrambling makes each point uniform on the cube: the mean of a
	// coordinate of point 0 over many seeds tends to ½.
	var sum float64
	const reps = 4000
	x := make([]float64, 1)
	for r := range reps {
		s, _ := NewSobol(1, true, uint64(r))
		s.Point(0, x)
		sum += x[0]
	}
	if m := sum / reps; math.Abs(m-0.5) > 4*math.Sqrt(1.0/12/reps) {
		t.Errorf("mean of scrambled point 0 over %d seeds = %v, want ½ ± 4 SE", reps, m)
	}
}

func TestHaltonHammersley(t *testing.T) {
	// scipy.stats.qmc.Halton(3, scramble=False).random(6) (SciPy 1.10.1).
	want := [][]float64{
		{0, 0, 0}, {0.5, 1.0 / 3, 0.2}, {0.25, 2.0 / 3, 0.4}, {0.75, 1.0 / 9, 0.6},
		{0.125, 4.0 / 9, 0.8}, {0.625, 7.0 / 9, 0.04},
	}
	const tol = 1e-15
	h, _ := NewHalton(3)
	got := h.Points(0, 6)
	for i := range want {
		for j := range want[i] {
			if math.Abs(got[i][j]-want[i][j]) > tol {
				t.Errorf("halton point %d coord %d = %v, want %v", i, j, got[i][j], want[i][j])
			}
		}
	}
	// Hammersley (1960): first coordinate i/n, then radical inverses in
	// bases 2, 3.
	hm, _ := Hammersley(4, 3)
	wantH := [][]float64{{0, 0, 0}, {0.25, 0.5, 1.0 / 3}, {0.5, 0.25, 2.0 / 3}, {0.75, 0.75, 1.0 / 9}}
	for i := range wantH {
		for j := range wantH[i] {
			if math.Abs(hm[i][j]-wantH[i][j]) > tol {
				t.Errorf("hammersley point %d coord %d = %v, want %v", i, j, hm[i][j], wantH[i][j])
			}
		}
	}
	if p := Primes(10); p[9] != 29 {
		t.Errorf("10th prime %d", p[9])
	}
}

func TestCenteredL2AgainstScipy(t *testing.T) {
	// scipy.stats.qmc.discrepancy(qmc.Sobol(3, scramble=False).random(64),
	// method="CD") and the same for Halton (SciPy 1.10.1).
	const tol = 1e-14
	s, _ := NewSobol(3, false, 0)
	h, _ := NewHalton(3)
	if got, want := CenteredL2(s.Points(0, 64)), 0.0005947820123695102; math.Abs(got-want) > tol {
		t.Errorf("sobol CD² = %v, want %v", got, want)
	}
	if got, want := CenteredL2(h.Points(0, 64)), 0.002229986746246082; math.Abs(got-want) > tol {
		t.Errorf("halton CD² = %v, want %v", got, want)
	}
}

// TestDiscrepancyBeatsRandom: every design is more uniform than independent
// uniform points; the low-discrepancy sets by a wide margin. The random
// reference is the median CD² of 21 random sets of the same size.
func TestDiscrepancyBeatsRandom(t *testing.T) {
	const n, d = 256, 5
	rng := rand.New(rand.NewPCG(7, 7))
	var rs []float64
	for range 21 {
		pts := make([][]float64, n)
		for i := range pts {
			pts[i] = make([]float64, d)
			for j := range pts[i] {
				pts[i][j] = rng.Float64()
			}
		}
		rs = append(rs, CenteredL2(pts))
	}
	for i := range rs { // median by selection
		for j := i + 1; j < len(rs); j++ {
			if rs[j] < rs[i] {
				rs[i], rs[j] = rs[j], rs[i]
			}
		}
	}
	random := rs[len(rs)/2]
	so, _ := NewSobol(d, false, 0)
	ss, _ := NewSobol(d, true, 3)
	ha, _ := NewHalton(d)
	hm, _ := Hammersley(n, d)
	lhs, _ := LatinHypercube(n, d, 3, LHSOptions{})
	cases := []struct {
		name   string
		pts    [][]float64
		factor float64 // must be below random/factor
	}{
		{"sobol", so.Points(0, n), 5},
		{"sobol-owen", ss.Points(0, n), 5},
		{"halton", ha.Points(0, n), 5},
		{"hammersley", hm, 5},
		{"lhs", lhs, 1.5},
	}
	for _, c := range cases {
		cd := CenteredL2(c.pts)
		t.Logf("%-11s CD² = %.3g (random median %.3g)", c.name, cd, random)
		if cd > random/c.factor {
			t.Errorf("%s: CD² %.3g not below random %.3g / %g", c.name, cd, random, c.factor)
		}
	}
}

func TestLatinHypercube(t *testing.T) {
	const n, d = 50, 4
	for _, opt := range []LHSOptions{{}, {Centred: true}, {Maximin: true}} {
		pts, err := LatinHypercube(n, d, 11, opt)
		if err != nil {
			t.Fatal(err)
		}
		for j := range d {
			count := make([]int, n)
			for _, p := range pts {
				count[int(p[j]*n)]++
				if opt.Centred && math.Abs(p[j]*n-math.Floor(p[j]*n)-0.5) > 1e-12 {
					t.Fatalf("centred LHS point %v not at a cell centre", p[j])
				}
			}
			for k, c := range count {
				if c != 1 {
					t.Fatalf("opt %+v: column %d interval %d holds %d points", opt, j, k, c)
				}
			}
		}
		again, _ := LatinHypercube(n, d, 11, opt)
		for i := range pts {
			for j := range pts[i] {
				if pts[i][j] != again[i][j] {
					t.Fatal("same seed gave a different design")
				}
			}
		}
	}
	plain, _ := LatinHypercube(n, d, 11, LHSOptions{})
	mm, _ := LatinHypercube(n, d, 11, LHSOptions{Maximin: true})
	a, b := MinDistance(plain), MinDistance(mm)
	t.Logf("min distance: plain %.4f, maximin %.4f", a, b)
	if b < 1.5*a {
		t.Errorf("maximin min distance %.4f not ≥ 1.5 × plain %.4f", b, a)
	}
	if _, err := LatinHypercube(0, 2, 1, LHSOptions{}); err == nil {
		t.Error("n = 0 accepted")
	}
}

func TestScale(t *testing.T) {
	pts := [][]float64{{0, 0.5}, {0.25, 1}}
	if err := Scale(pts, []float64{-1, 10}, []float64{1, 20}); err != nil {
		t.Fatal(err)
	}
	if pts[0][0] != -1 || pts[0][1] != 15 || pts[1][0] != -0.5 || pts[1][1] != 20 {
		t.Errorf("scaled %v", pts)
	}
	if err := Scale(pts, []float64{1, 0}, []float64{0, 1}); err == nil {
		t.Error("lo > hi accepted")
	}
}

func BenchmarkSobolPoint1000D(b *testing.B) {
	s, _ := NewSobol(1000, false, 0)
	x := make([]float64, 1000)
	for i := 0; b.Loop(); i++ {
		s.Point(uint64(i), x)
	}
}

func BenchmarkSobolOwenPoint10D(b *testing.B) {
	s, _ := NewSobol(10, true, 1)
	x := make([]float64, 10)
	for i := 0; b.Loop(); i++ {
		s.Point(uint64(i), x)
	}
}
