package analysis

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/kinfer/kinfer/builtin/prior"
)

// PriorRange: a uniform prior's range is its support's width (Bartsoen et
// al. 2023, Table 5, unchanged); any other prior's is the width of the
// uniform with the same central 90 % interval, (q(0.95) − q(0.05)) / 0.9
// of the prior truncated to the bounds. The quantiles are computed here
// with gonum's distuv (another library) from their closed forms: the
// normal's μ ± σ·z, the lognormal's exp(μ ± σ·z), and the truncated
// normal's Φ⁻¹(Φ(a) + u·(Φ(b) − Φ(a))).
func TestPriorRange(t *testing.T) {
	const tol = 1e-9 // relative: the quantile functions agree to ~1e-15
	z := distuv.UnitNormal.Quantile
	phi := distuv.UnitNormal.CDF
	mk := func(kind string, args ...float64) prior.Dist {
		d, err := prior.FromTOML(kind, args)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	truncQ := func(mu, sd, lo, hi, u float64) float64 {
		a, b := phi((lo-mu)/sd), phi((hi-mu)/sd)
		return mu + sd*z(a+u*(b-a))
	}
	cases := []struct {
		name   string
		d      prior.Dist
		lo, hi float64
		want   float64
		def    string
	}{
		{"uniform", mk("uniform", 2000, 9000), 2000, 9000, 7000, RangeSupport},
		{"normal(0,1) in ±1e6 (the line model's bounds)", mk("normal", 0, 1), -1e6, 1e6, 2 * z(0.95) / 0.9, RangeCentral90},
		{"normal(5200,500) in [2000,12000]", mk("normal", 5200, 500), 2000, 12000, 2 * 500 * z(0.95) / 0.9, RangeCentral90},
		{"normal(0,1) cut to [0,1e6] (half-normal)", mk("normal", 0, 1), 0, 1e6, (z(0.975) - z(0.525)) / 0.9, RangeCentral90},
		{"lognormal(0,1)", mk("lognormal", 0, 1), 0, 1e9, (math.Exp(z(0.95)) - math.Exp(z(0.05))) / 0.9, RangeCentral90},
		{"truncnormal(0,1,-1,1)", mk("truncnormal", 0, 1, -1, 1), -1, 1, (truncQ(0, 1, -1, 1, 0.95) - truncQ(0, 1, -1, 1, 0.05)) / 0.9, RangeCentral90},
	}
	for _, c := range cases {
		got, def, err := PriorRange(c.d, c.lo, c.hi)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if math.Abs(got-c.want) > tol*c.want || def != c.def {
			t.Errorf("%s: range %.12g (%s), want %.12g (%s)", c.name, got, def, c.want, c.def)
		}
	}
	// A posterior equal to the prior has a relative spread of 0.9 under
	// either definition: draws of normal(0, 1) by their quantiles.
	n := 20001
	x := make([]float64, n)
	for i := range x {
		x[i] = z((float64(i) + 0.5) / float64(n))
	}
	sp, err := PercentileSpread(x, -1e6, 1e6)
	if err != nil {
		t.Fatal(err)
	}
	r, _, _ := PriorRange(mk("normal", 0, 1), -1e6, 1e6)
	if rel := sp.Absolute / r; math.Abs(rel-0.9) > 1e-3 {
		t.Errorf("prior draws: relative spread %.5f, want 0.9", rel)
	}
}
