package prior

import (
	"math"
	"testing"
)

// StdNormalQuantile is gonum's distuv.UnitNormal.Quantile, which is AS 241
// like the package's own StdNormalQuantileLog: on p = 10^e, e from −290 to
// −1.2 (below 0.075, where StdNormalQuantileLog runs its own AS 241 on
// log p), and on their complements, the two agree to agreeTol relative.
// The textbook route through the inverse error function,
// √2·erfinv(2p − 1), loses the lower tail: 2p − 1 rounds to −1 for
// p < 5.6e-17, so it gives −Inf at p = 1e-20, and 2.0e-9 relative error
// already at p = 1e-10 (against mpmath's −6.3613409024040562): the test
// checks that the distuv kinfer links is not that route.
func TestStdNormalQuantileIsAS241(t *testing.T) {
	const agreeTol = 1e-15
	n := 0
	for e := -290.0; e <= -1.2; e += 0.01 {
		p := math.Pow(10, e)
		n++
		if a, b := StdNormalQuantile(p), StdNormalQuantileLog(math.Log(p)); math.Abs(a-b) > agreeTol*math.Abs(b) {
			t.Fatalf("p = %g: gonum %v, own AS 241 on log p %v", p, a, b)
		}
		if a, b := StdNormalQuantile(1-p), -StdNormalQuantileLog(math.Log1p(-(1 - p))); math.Abs(a-b) > agreeTol*math.Abs(b) {
			t.Fatalf("p = 1 − %g: gonum %v, own AS 241 %v", p, a, b)
		}
	}
	erfinv := func(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
	if z := erfinv(1e-20); !math.IsInf(z, -1) {
		t.Errorf("√2·erfinv(2p−1) at p = 1e-20 = %v, expected −Inf (it rounds 2p − 1 to −1)", z)
	}
	if z := erfinv(1e-10); math.Abs(z/-6.3613409024040562047-1) < 1e-9 {
		t.Errorf("√2·erfinv(2p−1) at p = 1e-10 = %.17g: expected a relative error above 1e-9", z)
	}
	if z := StdNormalQuantile(1e-10); math.Abs(z/-6.3613409024040562047-1) > agreeTol {
		t.Errorf("StdNormalQuantile(1e-10) = %.17g, mpmath −6.3613409024040562047", z)
	}
	for _, p := range []float64{-0.1, 1.1, math.NaN()} {
		if !math.IsNaN(StdNormalQuantile(p)) {
			t.Errorf("StdNormalQuantile(%v) not NaN", p)
		}
	}
	if !math.IsInf(StdNormalQuantile(0), -1) || !math.IsInf(StdNormalQuantile(1), 1) {
		t.Error("StdNormalQuantile(0), (1) not ∓Inf")
	}
	t.Logf("%d probabilities agree", n)
}
