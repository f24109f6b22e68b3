package mcmc

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
)

func TestCholesky(t *testing.T) {
	// cholTol: relative error of L·Lᵀ for a well-conditioned matrix.
	const cholTol = 1e-12
	r := rand.New(rand.NewPCG(3, 3))
	const d = 7
	b := make([]float64, d*d)
	for i := range b {
		b[i] = r.NormFloat64()
	}
	a := make([]float64, d*d) // A = B·Bᵀ + I, positive definite
	for i := range d {
		for j := range d {
			for k := range d {
				a[i*d+j] += b[i*d+k] * b[j*d+k]
			}
		}
		a[i*d+i]++
	}
	l, ok := Cholesky(a, d)
	if !ok {
		t.Fatal("Cholesky failed on a positive definite matrix")
	}
	for i := range d {
		for j := range d {
			s := 0.0
			for k := range d {
				s += l[i*d+k] * l[j*d+k]
			}
			if math.Abs(s-a[i*d+j]) > cholTol*math.Abs(a[i*d+i]) {
				t.Errorf("(L·Lᵀ)[%d,%d] = %v, want %v", i, j, s, a[i*d+j])
			}
			if j > i && l[i*d+j] != 0 {
				t.Errorf("L[%d,%d] = %v above the diagonal", i, j, l[i*d+j])
			}
		}
	}
	if _, ok := Cholesky([]float64{1, 2, 2, 1}, 2); ok {
		t.Error("Cholesky accepted an indefinite matrix")
	}
}

func TestSplitMix64(t *testing.T) {
	// Reference outputs of SplitMix64 from seed 0 (Vigna's splitmix64.c,
	// whose first call returns the mix of seed + 0x9E3779B97F4A7C15).
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	for k, w := range want {
		if got := SplitMix64(0, uint64(k+1)); got != w {
			t.Errorf("SplitMix64(0, %d) = %#x, want %#x", k+1, got, w)
		}
	}
}

func TestStream(t *testing.T) {
	for _, k := range []int{0, 3} {
		a := Stream(42, k)
		b := rand.NewPCG(SplitMix64(42, uint64(2*k+1)), SplitMix64(42, uint64(2*k+2)))
		for range 5 {
			if x, y := a.Uint64(), b.Uint64(); x != y {
				t.Fatalf("stream %d: %#x, want %#x", k, x, y)
			}
		}
	}
	if Stream(42, 0).Uint64() == Stream(42, 1).Uint64() {
		t.Error("streams 0 and 1 start alike")
	}
}

func TestWholeSetting(t *testing.T) {
	if v, err := WholeSetting("m", "n", 7, 1, 10); v != 7 || err != nil {
		t.Errorf("7 in [1, 10]: %d, %v", v, err)
	}
	for _, v := range []float64{0, 11, 2.5, math.NaN(), math.Inf(1)} {
		if _, err := WholeSetting("m", "n", v, 1, 10); err == nil || !strings.HasPrefix(err.Error(), "m: setting n") {
			t.Errorf("%v: error %v", v, err)
		}
	}
	// float64(math.MaxInt) is 2⁶³, and int(2⁶³) is math.MinInt64: such a
	// value is refused even when hi is math.MaxInt.
	for _, v := range []float64{1 << 63, 1e300, -1 << 63} {
		if got, err := WholeSetting("m", "n", v, math.MinInt, math.MaxInt); err == nil {
			t.Errorf("%g in [MinInt, MaxInt]: accepted as %d", v, got)
		}
	}
}

func TestBounds(t *testing.T) {
	p := abi.Problem{Params: []abi.Param{{Name: "a", Lower: 0, Upper: 1}, {Name: "b", Lower: math.Inf(-1), Upper: 2}}}
	b, err := NewBounds("m", p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		x  []float64
		in bool
	}{
		{[]float64{0, -1e300}, true}, {[]float64{1, 2}, true}, {[]float64{-1e-9, 0}, false},
		{[]float64{0.5, 2.1}, false}, {[]float64{math.NaN(), 0}, false},
	} {
		if b.Contains(c.x) != c.in {
			t.Errorf("Contains(%v) = %v", c.x, !c.in)
		}
	}
	for _, bad := range [][]abi.Param{nil, {{Name: "a", Lower: 1, Upper: 1}}, {{Name: "a", Lower: math.NaN(), Upper: 1}}} {
		if _, err := NewBounds("m", abi.Problem{Params: bad}); err == nil || !strings.HasPrefix(err.Error(), "m: ") {
			t.Errorf("%v: error %v", bad, err)
		}
	}
}

func TestUsable(t *testing.T) {
	if !Usable(abi.Result{Status: abi.OK, LogPrior: -1, LogLik: -2}) {
		t.Error("finite OK result refused")
	}
	for _, r := range []abi.Result{
		{Status: abi.OutOfSupport, LogPrior: -1, LogLik: -2},
		{Status: abi.OK, LogPrior: math.Inf(-1), LogLik: -2},
		{Status: abi.OK, LogPrior: -1, LogLik: math.NaN()},
	} {
		if Usable(r) {
			t.Errorf("%+v accepted", r)
		}
	}
}

func TestRandomWalk(t *testing.T) {
	// y = x + s·L·z with the same normals as drawn directly.
	chol := []float64{2, 0, 0, 1, 3, 0, -1, 0.5, 1}
	x := []float64{1, 2, 3}
	y := make([]float64, 3)
	var walk Walker
	walk.SetFactor(chol, 3)
	walk.Step(rand.New(rand.NewPCG(1, 2)), y, x, 0.5)
	z := walk.Z()
	r := rand.New(rand.NewPCG(1, 2))
	w := []float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
	want := []float64{
		1 + 0.5*(2*w[0]),
		2 + 0.5*(1*w[0]+3*w[1]),
		3 + 0.5*(-1*w[0]+0.5*w[1]+1*w[2]),
	}
	for i := range y {
		if math.Abs(y[i]-want[i]) > 1e-15*math.Abs(want[i]) || z[i] != w[i] {
			t.Errorf("y[%d] = %v, want %v (z %v, want %v)", i, y[i], want[i], z[i], w[i])
		}
	}
}

func TestHeader(t *testing.T) {
	type cfg struct{ A, B int }
	run := Header[cfg]{Format: 1, Config: cfg{1, 2}, D: 3, Seed: 4}
	if err := run.Check("m", run); err != nil {
		t.Error(err)
	}
	for word, h := range map[string]Header[cfg]{
		"format":   {Format: 2, Config: cfg{1, 2}, D: 3, Seed: 4},
		"settings": {Format: 1, Config: cfg{1, 3}, D: 3, Seed: 4},
		"d = 2":    {Format: 1, Config: cfg{1, 2}, D: 2, Seed: 4},
		"seed = 5": {Format: 1, Config: cfg{1, 2}, D: 3, Seed: 5},
	} {
		if err := h.Check("m", run); err == nil || !strings.Contains(err.Error(), word) || !strings.HasPrefix(err.Error(), "m: ") {
			t.Errorf("%s: error %v", word, err)
		}
	}
	// Embedded, its fields are top-level keys.
	var s struct {
		Header[cfg]
		X int `json:"x"`
	}
	s.Header, s.X = run, 9
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"format":1,"config":{"A":1,"B":2},"d":3,"seed":4,"x":9}`; got != want {
		t.Errorf("JSON %s, want %s", got, want)
	}
}

func TestJSONNum(t *testing.T) {
	got := JSONList([]float64{1.5, math.NaN(), math.Inf(-1)})
	if got[0] != 1.5 || got[1] != nil || got[2] != nil {
		t.Errorf("JSONList = %v", got)
	}
}

// BenchmarkRandomWalk: 1000 proposals at d = 50 (the normals and the
// triangular product; docs/PERFORMANCE.md, "TMCMC overhead").
func BenchmarkRandomWalk(b *testing.B) {
	const n, d = 1000, 50
	src := rand.New(rand.NewPCG(1, 1))
	chol, x, y := make([]float64, d*d), make([]float64, n*d), make([]float64, n*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			chol[i*d+j] = src.Float64()
		}
	}
	var w Walker
	w.SetFactor(chol, d)
	for range b.N {
		for k := range n {
			w.Step(src, y[k*d:(k+1)*d], x[k*d:(k+1)*d], 0.5)
		}
	}
}
