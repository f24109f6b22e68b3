package study

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/models/arm"
)

// withTransform is the base study with a [transform] table.
func withTransform(tbl string) string { return base + "\n[transform]\n" + tbl }

// Each per-parameter transform: θ = T(T⁻¹(θ)) and x = T⁻¹(T(x)) to
// rounding, over points spread across the range.
func TestTransformRoundTrips(t *testing.T) {
	free := []abi.Param{{Name: "a", Lower: -1e9, Upper: 1e9}}
	cases := []struct {
		tr     Transform
		thetas []float64
		xs     []float64
	}{
		{Transform{Kind: TransformMultiplier, C: 5000}, []float64{501, 2000, 5000, 9000, 49000}, []float64{-8, -1, 0, 0.3, 5}},
		{Transform{Kind: TransformMultiplier, C: -0.127}, []float64{-0.0128, -0.1, -1.2}, []float64{-3, 0, 2}},
		{Transform{Kind: TransformLog}, []float64{1e-8, 0.04, 1, 5200}, []float64{-10, 0, 3}},
		{Transform{Kind: TransformSquare}, []float64{0, 0.25, 2}, []float64{0, 0.5, 3}},
		{Transform{Kind: TransformSquare, C: 0.01}, []float64{0.01, 2}, []float64{0, 1.2}},
	}
	for _, c := range cases {
		c.tr.Idx = []int{0}
		for _, th := range c.thetas {
			x := []float64{0}
			if err := c.tr.inverse([]float64{th}, x, free); err != nil {
				t.Fatalf("%s %g: %v", c.tr.Kind, th, err)
			}
			back := []float64{0}
			c.tr.forward(x, back)
			if math.Abs(back[0]-th) > 1e-12*math.Abs(th)+1e-300 {
				t.Errorf("%s: θ %g → x %g → θ %g", c.tr.Kind, th, x[0], back[0])
			}
		}
		for _, x := range c.xs {
			th := []float64{0}
			c.tr.forward([]float64{x}, th)
			back := []float64{0}
			if err := c.tr.inverse(th, back, free); err != nil {
				t.Fatalf("%s x %g: %v", c.tr.Kind, x, err)
			}
			if math.Abs(back[0]-x) > 1e-9*math.Max(1, math.Abs(x)) {
				t.Errorf("%s: x %g → θ %g → x %g", c.tr.Kind, x, th[0], back[0])
			}
		}
	}
}

// Eq. 8: x = 0 is π0, the image of ℝ is the open interval (π0/10, 10·π0),
// and θ outside it has no preimage.
func TestMultiplierRange(t *testing.T) {
	tr := Transform{Kind: TransformMultiplier, C: 5000, Idx: []int{0}}
	th := []float64{0}
	tr.forward([]float64{0}, th)
	if th[0] != 5000 {
		t.Fatalf("x = 0 gives %g, want π0 = 5000", th[0])
	}
	prev := 0.0
	for x := -40.0; x <= 40; x += 0.5 {
		tr.forward([]float64{x}, th)
		if !(th[0] >= 500 && th[0] <= 50000) || th[0] < prev {
			t.Fatalf("x = %g gives %g: outside [π0/10, 10·π0] or not increasing", x, th[0])
		}
		prev = th[0]
	}
	tr.forward([]float64{-40}, th)
	if math.Abs(th[0]-500) > 1e-9 {
		t.Errorf("x → −∞ gives %g, want 500", th[0])
	}
	tr.forward([]float64{40}, th)
	if math.Abs(th[0]-50000) > 1e-9 {
		t.Errorf("x → +∞ gives %g, want 50000", th[0])
	}
	free := []abi.Param{{Name: "k"}}
	for _, bad := range []float64{500, 50000, -1, 0} {
		if err := tr.inverse([]float64{bad}, []float64{0}, free); err == nil {
			t.Errorf("θ = %g has a preimage, want an error", bad)
		}
	}
}

// Eq. 5–7: for arbitrary x (including negative diagonals and large
// off-diagonals) the inertia is symmetric positive definite and its
// principal moments satisfy the (strict) triangle inequality; and for an x
// with a positive diagonal the Cholesky inverse gives x back.
func TestInertiaGroupIsPhysical(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const c = 1e-6
	for n := 0; n < 2000; n++ {
		var l [6]float64
		for k := range l {
			l[k] = rng.NormFloat64() * math.Pow(10, -3+2*rng.Float64())
		}
		in := InertiaFromCholesky(l, c)
		ev := symEig3(in)
		for i := 0; i < 3; i++ {
			if !(ev[i] > 0) {
				t.Fatalf("x %v: inertia %v has eigenvalue %g", l, in, ev[i])
			}
			j, k := (i+1)%3, (i+2)%3
			if !(ev[j]+ev[k] >= ev[i]*(1-1e-12)) {
				t.Fatalf("x %v: moments %v violate the triangle inequality", l, ev)
			}
		}
		// The round trip, for a factor whose diagonal is not tiny beside
		// its off-diagonal (the inverse of an ill-conditioned Σ_C loses
		// digits in proportion to its condition number).
		scale := math.Pow(10, -3+2*rng.Float64())
		for k := range l {
			l[k] = 0.5 * scale * rng.NormFloat64()
			if k < 3 {
				l[k] = scale * (0.2 + math.Abs(rng.NormFloat64()))
			}
		}
		in = InertiaFromCholesky(l, c)
		back, ok := CholeskyFromInertia(in, c)
		if !ok {
			t.Fatalf("x %v: inertia %v has no Cholesky factor", l, in)
		}
		for k := range l {
			if math.Abs(back[k]-l[k]) > 1e-9*scale {
				t.Fatalf("x %v → inertia → %v", l, back)
			}
		}
	}
	// The arm's humerus at the truth (principal axes = body axes) round-trips.
	in := [6]float64{0.0128576, 0.00239265, 0.0121576, 0, 0, 0}
	l, ok := CholeskyFromInertia(in, c)
	if !ok {
		t.Fatal("humerus truth has no Cholesky factor")
	}
	if got := InertiaFromCholesky(l, c); !close6(got, in, 1e-15) {
		t.Fatalf("humerus: %v → %v → %v", in, l, got)
	}
	// An inertia violating the triangle inequality has none.
	if _, ok := CholeskyFromInertia([6]float64{1, 1, 3, 0, 0, 0}, c); ok {
		t.Fatal("I = diag(1, 1, 3) violates the triangle inequality but was inverted")
	}
}

// The inertia VJP is the transpose of the finite-difference Jacobian.
func TestInertiaVJPMatchesFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 50; n++ {
		var l, g [6]float64
		for k := range l {
			l[k], g[k] = rng.NormFloat64(), rng.NormFloat64()
		}
		got := InertiaVJP(l, g)
		for k := range l {
			h := 1e-6
			lp, lm := l, l
			lp[k] += h
			lm[k] -= h
			ip, im := InertiaFromCholesky(lp, 0.1), InertiaFromCholesky(lm, 0.1)
			fd := 0.0
			for i := range g {
				fd += g[i] * (ip[i] - im[i]) / (2 * h)
			}
			if math.Abs(fd-got[k]) > 1e-8*(1+math.Abs(fd)) {
				t.Fatalf("l %v: ∂/∂l%d analytic %g, finite difference %g", l, k+1, got[k], fd)
			}
		}
	}
}

func close6(a, b [6]float64, tol float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

// symEig3 is the eigenvalues of the symmetric 3×3 matrix with entries
// (xx, yy, zz, xy, xz, yz), by the trigonometric method (Smith 1961).
func symEig3(in [6]float64) [3]float64 {
	a := [3][3]float64{{in[0], in[3], in[4]}, {in[3], in[1], in[5]}, {in[4], in[5], in[2]}}
	p1 := a[0][1]*a[0][1] + a[0][2]*a[0][2] + a[1][2]*a[1][2]
	q := (a[0][0] + a[1][1] + a[2][2]) / 3
	p2 := (a[0][0]-q)*(a[0][0]-q) + (a[1][1]-q)*(a[1][1]-q) + (a[2][2]-q)*(a[2][2]-q) + 2*p1
	p := math.Sqrt(p2 / 6)
	if p == 0 {
		return [3]float64{q, q, q}
	}
	var b [3][3]float64
	for i := range b {
		for j := range b {
			b[i][j] = a[i][j] / p
			if i == j {
				b[i][j] -= q / p
			}
		}
	}
	det := b[0][0]*(b[1][1]*b[2][2]-b[1][2]*b[2][1]) - b[0][1]*(b[1][0]*b[2][2]-b[1][2]*b[2][0]) + b[0][2]*(b[1][0]*b[2][1]-b[1][1]*b[2][0])
	r := math.Max(-1, math.Min(1, det/2))
	phi := math.Acos(r) / 3
	e1 := q + 2*p*math.Cos(phi)
	e3 := q + 2*p*math.Cos(phi+2*math.Pi/3)
	return [3]float64{e1, 3*q - e1 - e3, e3}
}

// The study's [transform] table: x-bounds, names kept, and the errors.
func TestTransformTable(t *testing.T) {
	s, err := load(t, withTransform("k = { multiplier = 5000.0 }\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.Transforms) != 1 || s.XParams[0].Name != "k" || s.XParams[1] != s.Free[1] {
		t.Fatalf("transforms %+v, x params %+v", s.Transforms, s.XParams)
	}
	// θ-bounds [2000, 9000] map to x-bounds whose images are the θ-bounds.
	lo, hi := s.Forward([]float64{s.XParams[0].Lower, 0}), s.Forward([]float64{s.XParams[0].Upper, 0})
	if math.Abs(lo[0]-2000) > 1e-9 || math.Abs(hi[0]-9000) > 1e-9 {
		t.Fatalf("x-bounds [%g, %g] map to [%g, %g], want [2000, 9000]", s.XParams[0].Lower, s.XParams[0].Upper, lo[0], hi[0])
	}

	s2, err := load(t, withTransform("k = \"log\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if math.Abs(s2.XParams[0].Lower-math.Log(2000)) > 1e-15 || math.Abs(s2.XParams[0].Upper-math.Log(9000)) > 1e-15 {
		t.Fatalf("log x-bounds %+v", s2.XParams[0])
	}
	s3, err := load(t, withTransform("k = \"square\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if math.Abs(s3.XParams[0].Lower-math.Sqrt(2000)) > 1e-12 || math.Abs(s3.XParams[0].Upper-math.Sqrt(9000)) > 1e-12 {
		t.Fatalf("square x-bounds %+v", s3.XParams[0])
	}
	// A multiplier range inside the θ-bounds leaves x unbounded on that side.
	s4, err := load(t, withTransform("k = { multiplier = 20000.0 }\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer s4.Close()
	if !math.IsInf(s4.XParams[0].Lower, -1) || math.IsInf(s4.XParams[0].Upper, 0) {
		t.Fatalf("multiplier 20000 on [2000, 9000]: x-bounds %+v, want (−∞, finite]", s4.XParams[0])
	}
	if len(s4.TransformWarnings) != 0 {
		t.Errorf("multiplier 20000 covers [2000, 9000]: warnings %q", s4.TransformWarnings)
	}
	// A multiplier whose range (π0/10, 10·π0) misses part of the bounds:
	// that part is out of the method's reach, which the study says.
	s5, err := load(t, withTransform("k = { multiplier = 300.0 }\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer s5.Close()
	if len(s5.TransformWarnings) != 1 || !strings.Contains(s5.TransformWarnings[0], "k: the multiplier π0 = 300 reaches only (30, 3000) of the prior's support [2000, 9000]") {
		t.Errorf("warnings %q", s5.TransformWarnings)
	}

	for _, c := range []struct{ tbl, want string }{
		{"kk = \"log\"\n", `study.toml:26: key "transform.kk": model "ligament" has no parameter "kk"`},
		{"k = \"cube\"\n", `study.toml:26: key "transform.k": unknown transform "cube"`},
		{"k = { multiplier = 0.0 }\n", `key "transform.k": multiplier π0 must be non-zero`},
		{"k = { multiplier = 1.0, square = 1.0 }\n", `key "transform.k": give one transform`},
		{"k = { multiplier = 1.0 }\n", `cannot transform k: its bounds [2000, 9000] do not meet`},
		{"eps_r = \"log\"\n[[transform.inertia]]\nparams = [\"k\", \"eps_r\"]\n", `study.toml:28: key "transform.inertia[0].params": an inertia group needs params = six`},
		{"k = \"log\"\n[[transform.inertia]]\nparams = [\"k\", \"eps_r\", \"k\", \"k\", \"k\", \"k\"]\n", `key "transform.inertia[0].params": parameter "k" is already transformed by transform.k`},
		{"[[transform.inertia]]\nparams = [\"k\", \"eps_r\", \"k\", \"k\", \"k\", \"k\"]\nbais = 1.0\n", `key "transform.inertia[0].bais": unknown key`},
		{"[transform.inertia]\nparams = [\"k\"]\n", `key "transform.inertia": an inertia group is an array of tables: write [[transform.inertia]]`},
	} {
		_, err := load(t, withTransform(c.tbl))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.tbl, err, c.want)
		}
	}
	// A fixed parameter cannot be transformed.
	fixed := strings.Replace(base, "eps_r = { normal = [0.0, 0.1] }", "", 1) + "[fixed]\neps_r = 0.04\n[transform]\neps_r = \"log\"\n"
	if _, err := load(t, fixed); err == nil || !strings.Contains(err.Error(), `key "transform.eps_r": parameter "eps_r" has no prior (it is fixed)`) {
		t.Errorf("fixed parameter: got %v", err)
	}
}

// An arm inertia group: x-bounds from the θ-box, order of the entries, and
// a θ-box point mapping back into the x-box.
func TestInertiaGroupTable(t *testing.T) {
	names := []string{"humerus_Ixx", "humerus_Iyy", "humerus_Izz", "humerus_Ixy", "humerus_Ixz", "humerus_Iyz"}
	var b strings.Builder
	b.WriteString("name = \"arm\"\n[model]\nuse = \"arm\"\n[[data]]\nname = \"d\"\nfile = \"d.csv\"\n[[likelihood]]\nuse = \"nmse\"\n[method]\nuse = \"adam\"\n[prior]\n")
	spec := armSpecForTest(t)
	for _, p := range spec.Params {
		isFree := false
		for _, n := range names {
			isFree = isFree || n == p.Name
		}
		if isFree {
			b.WriteString(p.Name + " = { uniform = [" + ftoaT(p.Lower) + ", " + ftoaT(p.Upper) + "] }\n")
		}
	}
	b.WriteString("[fixed]\n")
	for _, p := range spec.Params {
		isFree := false
		for _, n := range names {
			isFree = isFree || n == p.Name
		}
		if !isFree {
			b.WriteString(p.Name + " = " + ftoaT(p.Default) + "\n")
		}
	}
	group := "[[transform.inertia]]\nparams = [\"" + strings.Join(names, "\", \"") + "\"]\nbias = 1e-6\n"
	s, err := loadWith(t, b.String()+group, armCSV(spec))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.Transforms) != 1 || len(s.Transforms[0].Idx) != 6 {
		t.Fatalf("transforms %+v", s.Transforms)
	}
	th := make([]float64, 6)
	for j, p := range s.Free {
		th[j] = p.Default
	}
	x, err := s.Inverse(th)
	if err != nil {
		t.Fatal(err)
	}
	for j, p := range s.XParams {
		if !(x[j] >= p.Lower && x[j] <= p.Upper) || !(p.Lower < p.Upper) {
			t.Fatalf("%s: x = %g outside its bounds [%g, %g]", p.Name, x[j], p.Lower, p.Upper)
		}
	}
	back := s.Forward(x)
	for j := range th {
		if math.Abs(back[j]-th[j]) > 1e-15 {
			t.Fatalf("θ %v → x %v → θ %v", th, x, back)
		}
	}
	// scale = s: the same θ at x/s, x-bounds divided by s, and the pulled
	// back gradient (∂θ/∂x)ᵀ·g equal to central differences of g·T(x).
	const sc = 0.03
	ss, err := loadWith(t, b.String()+strings.Replace(group, "bias = 1e-6", "bias = 1e-6\nscale = 0.03", 1), armCSV(spec))
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	xs, err := ss.Inverse(th)
	if err != nil {
		t.Fatal(err)
	}
	for j := range xs {
		if math.Abs(xs[j]*sc-x[j]) > 1e-15 || math.Abs(ss.XParams[j].Upper*sc-s.XParams[j].Upper) > 1e-15 {
			t.Fatalf("scale %g: x %v (unscaled %v), bounds %+v (unscaled %+v)", sc, xs, x, ss.XParams[j], s.XParams[j])
		}
	}
	g := []float64{0.3, -1.1, 0.7, 2, -0.4, 0.9}
	gx := ss.PullBack(xs, g)
	for j := range xs {
		const h = 1e-6
		xp, xm := append([]float64(nil), xs...), append([]float64(nil), xs...)
		xp[j] += h
		xm[j] -= h
		tp, tm := ss.Forward(xp), ss.Forward(xm)
		fd := 0.0
		for k := range g {
			fd += g[k] * (tp[k] - tm[k]) / (2 * h)
		}
		// Central differences of a quadratic map: exact up to rounding.
		if math.Abs(fd-gx[j]) > 1e-8*(math.Abs(fd)+1e-6) {
			t.Errorf("scale %g: d(g·θ)/dx_%d = %g by differences, %g pulled back", sc, j, fd, gx[j])
		}
	}
	swapped := []string{names[1], names[0], names[2], names[3], names[4], names[5]}
	_, err = loadWith(t, b.String()+"[[transform.inertia]]\nparams = [\""+strings.Join(swapped, "\", \"")+"\"]\n", armCSV(spec))
	if err == nil || !strings.Contains(err.Error(), "list the inertia entries in the order Ixx, Iyy, Izz, Ixy, Ixz, Iyz") {
		t.Fatalf("swapped group: %v", err)
	}
}

func armSpecForTest(t *testing.T) abi.Spec {
	t.Helper()
	return arm.Spec
}

func ftoaT(x float64) string { return strconv.FormatFloat(x, 'e', -1, 64) }

// armCSV is two rows of the arm's conditions and outputs.
func armCSV(spec abi.Spec) string {
	var cols []string
	for _, c := range spec.Conditions {
		cols = append(cols, c.Name)
	}
	for _, o := range spec.Outputs {
		cols = append(cols, o.Name)
	}
	row := func(v string) string { return strings.TrimSuffix(strings.Repeat(v+",", len(cols)), ",") }
	return strings.Join(cols, ",") + "\n" + row("0.1") + "\n" + row("0.2") + "\n"
}

// loadWith is load with a given d.csv.
func loadWith(t *testing.T, text, data string) (*Study, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "d.csv"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "study.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(context.Background(), p, Options{Workers: 1})
}

// x on its bound (where a projected optimiser puts it) maps to θ inside
// the θ-bounds: T(T⁻¹(b)) is an ulp above b for some π0 (counted here, so
// the test exercises the case), and Forward clamps it.
func TestForwardKeepsBoundInside(t *testing.T) {
	const lo, hi = 5.0, 15.0
	outside := 0
	for i := range 2000 {
		pi0 := 2 + float64(i)*0.0173
		free := []abi.Param{{Name: "v", Lower: lo, Upper: hi}}
		xp := append([]abi.Param(nil), free...)
		tr := Transform{Kind: TransformMultiplier, C: pi0, Idx: []int{0}}
		if err := tr.xBounds(free, xp); err != nil {
			t.Fatal(err)
		}
		raw := []float64{0}
		for _, x := range []float64{xp[0].Lower, xp[0].Upper} {
			tr.forward([]float64{x}, raw)
			if raw[0] < lo || raw[0] > hi {
				outside++
			}
		}
		s := &Study{Free: free, XParams: xp, Transforms: []Transform{tr}}
		for _, x := range []float64{xp[0].Lower, xp[0].Upper} {
			if th := s.Forward([]float64{x})[0]; th < lo || th > hi || math.Abs(th-lo)*math.Abs(th-hi) > 1e-9 {
				t.Fatalf("π0 %g: x = %v maps to %v, outside or not at [%g, %g]", pi0, x, th, lo, hi)
			}
		}
		// Outside the x-box Forward does not clamp.
		if th := s.Forward([]float64{xp[0].Upper + 1})[0]; !(th > hi) {
			t.Fatalf("π0 %g: x beyond the bound maps to %v", pi0, th)
		}
	}
	if outside == 0 {
		t.Error("no π0 put T(T⁻¹(bound)) outside the bounds; the test does not exercise the clamp")
	}
	t.Logf("%d of 4000 bound round trips left the θ-bounds before clamping", outside)
}

// Without init rows a method starts at the parameters' defaults clamped
// into their box, carried to its coordinates: T(x₀) is the clamped default
// for each kind of transform (a default outside a transform's domain
// started at x = 0 whatever the box).
func TestProblemStartsTransformedDefaults(t *testing.T) {
	for _, tr := range []string{"k = { multiplier = 5000.0 }\n", "k = \"log\"\n", "k = \"square\"\n", "k = { multiplier = 800.0 }\n"} {
		s, err := load(t, withTransform(tr))
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.ProblemStarts()
		if err != nil {
			t.Fatal(err)
		}
		p := s.Free[0]
		want := math.Min(math.Max(p.Default, p.Lower), p.Upper)
		if got := s.Forward(st[0])[0]; math.Abs(got-want) > 1e-9*want && !(st[0][0] == s.XParams[0].Lower || st[0][0] == s.XParams[0].Upper) {
			t.Errorf("%s: starts at θ = %g, want the clamped default %g", strings.TrimSpace(tr), got, want)
		}
		s.Close()
	}
	// The line model's a (default 0) under a ~ U(0.01, 5) and a log
	// transform: the start is θ = 0.01, the clamped default (x = 0, θ = 1,
	// before).
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte("x,y\n0,1\n1,3\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "s.toml"), []byte("name = \"l\"\n[model]\nuse = \"line\"\n[[data]]\nname = \"d\"\nfile = \"d.csv\"\n[[likelihood]]\nuse = \"gaussian\"\nsigma = 1.0\n[prior]\na = { uniform = [0.01, 5.0] }\nb = { uniform = [-5.0, 5.0] }\n[method]\nuse = \"levmar\"\n[transform]\na = \"log\"\n"), 0o644)
	s, err := Load(context.Background(), filepath.Join(dir, "s.toml"), Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := s.ProblemStarts()
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Forward(st[0])[0]; math.Abs(got-0.01) > 1e-12 {
		t.Errorf("line a under a log transform starts at θ = %g, want the clamped default 0.01", got)
	}
}
