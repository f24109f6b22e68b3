package study

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/tomlx"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// Transform kinds of the study's [transform] table.
const (
	TransformMultiplier = "multiplier" // θ = π0·10^(2σ(x)−1) (Zhou et al. Eq. 8)
	TransformLog        = "log"        // θ = exp(x)
	TransformSquare     = "square"     // θ = x² + b (squared mass, Sec. III-D)
	TransformInertia    = "inertia"    // six inertia entries from a Cholesky factor (Eq. 5–7)
)

// DefaultInertiaBias is the bias c of Σ_C = L·Lᵀ + c·I (Eq. 6) when the
// study gives none. Zhou et al. call it "a small non-learnable positive
// bias" without a value; 1e-6 is in the model's units (kg·m² for the arm,
// whose smallest moment is 1e-3).
const DefaultInertiaBias = 1e-6

// inertiaSuffixes is the order of a [[transform.inertia]] group's params:
// the three moments, then the three products, as Eq. 7 numbers L's entries
// (L_Σ1..L_Σ3 the diagonal, L_Σ4 = L21, L_Σ5 = L31, L_Σ6 = L32).
var inertiaSuffixes = [6]string{"Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz"}

// Transform is one reparameterisation θ = T(x) of some free parameters.
// Idx are indices into Study.Free (one, or six for an inertia group, in the
// order Ixx, Iyy, Izz, Ixy, Ixz, Iyz).
type Transform struct {
	Kind string
	Idx  []int
	// C is π0 for a multiplier, the bias b for square, the bias c for an
	// inertia group; unused for log.
	C float64
	// S is an inertia group's scale s: the Cholesky entries are L = s·x
	// (1 if not given). Unused by the other kinds.
	S float64
}

// scale is an inertia group's s (1 when unset).
func (tr Transform) scale() float64 {
	if tr.S == 0 {
		return 1
	}
	return tr.S
}

// Describe is the transform's entry in summary.json.
func (tr Transform) Describe(free []abi.Param) map[string]any {
	names := make([]string, len(tr.Idx))
	for i, j := range tr.Idx {
		names[i] = free[j].Name
	}
	m := map[string]any{"kind": tr.Kind, "params": names}
	switch tr.Kind {
	case TransformMultiplier:
		m["pi0"] = tr.C
		m["map"] = "theta = pi0 * 10^(2*sigmoid(x) - 1)"
	case TransformLog:
		m["map"] = "theta = exp(x)"
	case TransformSquare:
		m["bias"] = tr.C
		m["map"] = "theta = x^2 + bias"
	case TransformInertia:
		m["bias"] = tr.C
		m["scale"] = tr.scale()
		m["map"] = "L entries (Eq. 7) = scale * x; Sigma = L L^T + bias I; I_C = Tr(Sigma) I - Sigma"
	}
	return m
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// forward writes θ for the transform's x values.
func (tr Transform) forward(x, th []float64) {
	switch tr.Kind {
	case TransformMultiplier:
		j := tr.Idx[0]
		th[j] = tr.C * math.Pow(10, 2*sigmoid(x[j])-1)
	case TransformLog:
		j := tr.Idx[0]
		th[j] = math.Exp(x[j])
	case TransformSquare:
		j := tr.Idx[0]
		th[j] = x[j]*x[j] + tr.C
	case TransformInertia:
		var l [6]float64
		for k, j := range tr.Idx {
			l[k] = tr.scale() * x[j]
		}
		out := InertiaFromCholesky(l, tr.C)
		for k, j := range tr.Idx {
			th[j] = out[k]
		}
	}
}

// vjp adds (∂θ/∂x)ᵀ·g of the transform's entries into gx.
func (tr Transform) vjp(x, g, gx []float64) {
	switch tr.Kind {
	case TransformMultiplier:
		j := tr.Idx[0]
		s := sigmoid(x[j])
		th := tr.C * math.Pow(10, 2*s-1)
		gx[j] = g[j] * th * math.Ln10 * 2 * s * (1 - s)
	case TransformLog:
		j := tr.Idx[0]
		gx[j] = g[j] * math.Exp(x[j])
	case TransformSquare:
		j := tr.Idx[0]
		gx[j] = g[j] * 2 * x[j]
	case TransformInertia:
		var l, gt [6]float64
		for k, j := range tr.Idx {
			l[k], gt[k] = tr.scale()*x[j], g[j]
		}
		gl := InertiaVJP(l, gt)
		for k, j := range tr.Idx {
			gx[j] = tr.scale() * gl[k]
		}
	}
}

// inverse writes x for the transform's θ values, or fails where θ is not
// in the image of T.
func (tr Transform) inverse(th, x []float64, free []abi.Param) error {
	switch tr.Kind {
	case TransformMultiplier:
		j := tr.Idx[0]
		r := th[j] / tr.C
		if !(r > 0.1 && r < 10) {
			return fmt.Errorf("%s = %g is outside the multiplier's open range (π0/10, 10·π0) with π0 = %g", free[j].Name, th[j], tr.C)
		}
		u := (math.Log10(r) + 1) / 2
		x[j] = math.Log(u / (1 - u))
	case TransformLog:
		j := tr.Idx[0]
		if !(th[j] > 0) || math.IsInf(th[j], 1) {
			return fmt.Errorf("%s = %g: a log transform needs θ > 0", free[j].Name, th[j])
		}
		x[j] = math.Log(th[j])
	case TransformSquare:
		j := tr.Idx[0]
		if !(th[j] >= tr.C) || math.IsInf(th[j], 1) {
			return fmt.Errorf("%s = %g: a square transform with bias %g needs θ ≥ %g", free[j].Name, th[j], tr.C, tr.C)
		}
		x[j] = math.Sqrt(th[j] - tr.C)
	case TransformInertia:
		var in [6]float64
		for k, j := range tr.Idx {
			in[k] = th[j]
		}
		l, ok := CholeskyFromInertia(in, tr.C)
		if !ok {
			return fmt.Errorf("inertia (%s) = %g has no Cholesky factor with bias %g: Σ_C − c·I = ½Tr(I_C)·I − I_C − c·I is not positive definite (the inertia violates positive definiteness or the triangle inequality by a margin of 2c)", strings.Join(tr.names(free), ", "), in, tr.C)
		}
		for k, j := range tr.Idx {
			x[j] = l[k] / tr.scale()
		}
	}
	return nil
}

func (tr Transform) names(free []abi.Param) []string {
	n := make([]string, len(tr.Idx))
	for i, j := range tr.Idx {
		n[i] = free[j].Name
	}
	return n
}

// InertiaFromCholesky is Eq. 5–7: with l = (L_Σ1..L_Σ6) and
// L = [[l1,0,0],[l4,l2,0],[l5,l6,l3]], Σ_C = L·Lᵀ + c·I and
// I_C = Tr(Σ_C)·I − Σ_C. It returns (I_xx, I_yy, I_zz, I_xy, I_xz, I_yz),
// the entries of the inertia tensor about the COM as the arm model reads
// them (I_xy is the tensor's (x, y) entry, −∫ρ·x·y).
func InertiaFromCholesky(l [6]float64, c float64) [6]float64 {
	s00 := l[0]*l[0] + c
	s11 := l[3]*l[3] + l[1]*l[1] + c
	s22 := l[4]*l[4] + l[5]*l[5] + l[2]*l[2] + c
	s10 := l[3] * l[0]
	s20 := l[4] * l[0]
	s21 := l[4]*l[3] + l[5]*l[1]
	return [6]float64{s11 + s22, s00 + s22, s00 + s11, -s10, -s20, -s21}
}

// InertiaVJP is (∂I/∂l)ᵀ·g for InertiaFromCholesky (g over I_xx..I_yz).
func InertiaVJP(l, g [6]float64) [6]float64 {
	g00 := g[1] + g[2] // ∂/∂Σ00: I_yy and I_zz contain Σ00
	g11 := g[0] + g[2]
	g22 := g[0] + g[1]
	g10, g20, g21 := -g[3], -g[4], -g[5]
	return [6]float64{
		2*l[0]*g00 + l[3]*g10 + l[4]*g20,
		2*l[1]*g11 + l[5]*g21,
		2 * l[2] * g22,
		2*l[3]*g11 + l[0]*g10 + l[4]*g21,
		2*l[4]*g22 + l[0]*g20 + l[3]*g21,
		2*l[5]*g22 + l[1]*g21,
	}
}

// CholeskyFromInertia inverts InertiaFromCholesky: Σ_C = ½Tr(I_C)·I − I_C,
// then the Cholesky factor (positive diagonal) of Σ_C − c·I by gonum's
// lapack64.Potrf. It fails when that matrix is not positive definite.
func CholeskyFromInertia(in [6]float64, c float64) ([6]float64, bool) {
	h := (in[0] + in[1] + in[2]) / 2
	// The lower triangle of Σ_C − c·I, row-major.
	a := []float64{
		h - in[0] - c, 0, 0,
		-in[3], h - in[1] - c, 0,
		-in[4], -in[5], h - in[2] - c,
	}
	var l [6]float64
	if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Lower, N: 3, Stride: 3, Data: a}); !ok {
		return l, false
	}
	l = [6]float64{a[0], a[4], a[8], a[3], a[6], a[7]}
	for _, v := range l[:3] {
		if !(v > 0) || math.IsInf(v, 1) {
			return [6]float64{}, false
		}
	}
	return l, true
}

// xBounds writes the transform's x-bounds into xp: the image of the
// θ-bounds under T⁻¹ where T is monotone, a box containing the preimage of
// the θ-box for an inertia group.
func (tr Transform) xBounds(free, xp []abi.Param) error {
	j := tr.Idx[0]
	lo, hi := free[j].Lower, free[j].Upper
	switch tr.Kind {
	case TransformMultiplier:
		rlo, rhi := lo/tr.C, hi/tr.C
		if tr.C < 0 {
			rlo, rhi = rhi, rlo
		}
		if !(rhi > 0.1 && rlo < 10) {
			return fmt.Errorf("its bounds [%g, %g] do not meet the multiplier's range (π0/10, 10·π0) with π0 = %g", lo, hi, tr.C)
		}
		toX := func(r float64) float64 {
			u := (math.Log10(r) + 1) / 2
			return math.Log(u / (1 - u))
		}
		xlo, xhi := math.Inf(-1), math.Inf(1)
		if rlo > 0.1 {
			xlo = toX(rlo)
		}
		if rhi < 10 {
			xhi = toX(rhi)
		}
		xp[j].Lower, xp[j].Upper = xlo, xhi
	case TransformLog:
		if !(hi > 0) {
			return fmt.Errorf("its bounds [%g, %g] hold no positive value", lo, hi)
		}
		xp[j].Lower, xp[j].Upper = math.Log(math.Max(lo, 0)), math.Log(hi)
	case TransformSquare:
		if !(hi > tr.C) {
			return fmt.Errorf("its bounds [%g, %g] hold no value above the bias %g", lo, hi, tr.C)
		}
		xp[j].Lower, xp[j].Upper = math.Sqrt(math.Max(lo-tr.C, 0)), math.Sqrt(hi-tr.C)
	case TransformInertia:
		// Row i of L has |row|² = Σ_ii − c = ½(I_jj + I_kk − I_ii) − c, so
		// every entry of row i is bounded by the square root of that
		// quantity's largest value over the θ-box.
		var dlo, dhi [3]float64
		for k := 0; k < 3; k++ {
			dlo[k], dhi[k] = free[tr.Idx[k]].Lower, free[tr.Idx[k]].Upper
		}
		var rowB [3]float64
		for i := 0; i < 3; i++ {
			s := -dlo[i] - 2*tr.C
			for k := 0; k < 3; k++ {
				if k != i {
					s += dhi[k]
				}
			}
			if !(s > 0) {
				return fmt.Errorf("no inertia inside its bounds has a Cholesky factor with bias %g (½(I_jj + I_kk − I_ii) − c ≤ 0 for row %d)", tr.C, i+1)
			}
			rowB[i] = math.Sqrt(s/2) / tr.scale()
		}
		// Entries (Eq. 7 order) and their rows: l1 row 1; l2, l4 row 2;
		// l3, l5, l6 row 3.
		rows := [6]int{0, 1, 2, 1, 2, 2}
		for k, jj := range tr.Idx {
			xp[jj].Lower, xp[jj].Upper = -rowB[rows[k]], rowB[rows[k]]
		}
	}
	return nil
}

// loadTransforms reads the [transform] table. It runs after loadParams.
func (s *Study) loadTransforms(f *File, d *tomlx.Decoded) error {
	s.XParams = append([]abi.Param(nil), s.Free...)
	if len(f.Transform) == 0 {
		return nil
	}
	used := map[int]string{} // free index → key that transforms it
	freeIndex := func(key, name string) (int, error) {
		for j, p := range s.Free {
			if p.Name == name {
				if prev, ok := used[j]; ok {
					return -1, d.Errorf(key, "parameter %q is already transformed by %s", name, prev)
				}
				used[j] = key
				return j, nil
			}
		}
		if s.ModelInfo.Spec.ParamIndex(name) >= 0 {
			return -1, d.Errorf(key, "parameter %q has no prior (it is fixed): only free parameters can be transformed", name)
		}
		return -1, d.Errorf(key, "model %q has no parameter %q (parameters: %s)", s.ModelInfo.Spec.Name, name, paramNames(s.ModelInfo.Spec))
	}
	keys := make([]string, 0, len(f.Transform))
	for k := range f.Transform {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		li, lj := d.Line("transform."+keys[i]), d.Line("transform."+keys[j])
		if li != lj {
			return li < lj
		}
		return keys[i] < keys[j]
	})
	for _, name := range keys {
		key := "transform." + name
		v := f.Transform[name]
		if groups, ok := v.([]map[string]any); ok && name == TransformInertia {
			for g, raw := range groups {
				if err := s.loadInertiaGroup(d, fmt.Sprintf("%s[%d]", key, g), raw, freeIndex); err != nil {
					return err
				}
			}
			continue
		}
		tr := Transform{}
		switch x := v.(type) {
		case string:
			switch x {
			case TransformLog, TransformSquare:
				tr.Kind = x
			default:
				return d.Errorf(key, "unknown transform %q: give \"log\", \"square\", { multiplier = π0 } or { square = bias }", x)
			}
		case map[string]any:
			if _, group := x["params"]; group && name == TransformInertia {
				return d.Errorf(key, "an inertia group is an array of tables: write [[transform.inertia]], one per body")
			}
			if len(x) != 1 {
				return d.Errorf(key, "give one transform, e.g. %s = { multiplier = π0 }", name)
			}
			for kind, arg := range x {
				c := toFloat(arg)
				if math.IsNaN(c) || math.IsInf(c, 0) {
					return d.Errorf(key, "%s takes a finite number", kind)
				}
				switch kind {
				case TransformMultiplier:
					if c == 0 {
						return d.Errorf(key, "multiplier π0 must be non-zero")
					}
				case TransformSquare:
					if c < 0 {
						return d.Errorf(key, "square's bias must be ≥ 0")
					}
				default:
					return d.Errorf(key, "unknown transform %q: give \"log\", \"square\", { multiplier = π0 } or { square = bias }", kind)
				}
				tr.Kind, tr.C = kind, c
			}
		default:
			return d.Errorf(key, "a transform is \"log\", \"square\", { multiplier = π0 } or { square = bias }; an inertia group is a [[transform.inertia]] table")
		}
		j, err := freeIndex(key, name)
		if err != nil {
			return err
		}
		tr.Idx = []int{j}
		if err := tr.xBounds(s.Free, s.XParams); err != nil {
			return d.Errorf(key, "cannot transform %s: %v", name, err)
		}
		if tr.Kind == TransformMultiplier {
			// The method reaches θ in (π0/10, 10·π0) only: a prior reaching
			// beyond (of the other sign, say) is cut without a word.
			lo, hi := math.Min(tr.C/10, 10*tr.C), math.Max(tr.C/10, 10*tr.C)
			if p := s.Free[j]; p.Lower < lo || p.Upper > hi {
				s.TransformWarnings = append(s.TransformWarnings, fmt.Sprintf("%s: the multiplier π0 = %g reaches only (%g, %g) of the prior's support [%g, %g]; an optimum outside is out of reach", name, tr.C, lo, hi, p.Lower, p.Upper))
			}
		}
		s.Transforms = append(s.Transforms, tr)
	}
	s.finishXParams()
	return nil
}

func (s *Study) loadInertiaGroup(d *tomlx.Decoded, tbl string, raw map[string]any, freeIndex func(key, name string) (int, error)) error {
	tr := Transform{Kind: TransformInertia, C: DefaultInertiaBias}
	for k := range raw {
		if k != "params" && k != "bias" && k != "scale" {
			return d.Errorf(tbl+"."+k, "unknown key %q in [[transform.inertia]] (keys: params, bias, scale)", k)
		}
	}
	list, ok := raw["params"].([]any)
	var names []string
	for _, x := range list {
		if n, isStr := x.(string); isStr {
			names = append(names, n)
		}
	}
	if !ok || len(names) != 6 || len(list) != 6 {
		return d.Errorf(tbl+".params", "an inertia group needs params = six parameter names, in the order Ixx, Iyy, Izz, Ixy, Ixz, Iyz of one body")
	}
	// Names that carry the suffixes must list them in Eq. 7's order.
	suffixed := 0
	for _, n := range names {
		for _, sfx := range inertiaSuffixes {
			if strings.HasSuffix(n, sfx) {
				suffixed++
				break
			}
		}
	}
	if suffixed == 6 {
		for k, n := range names {
			if !strings.HasSuffix(n, inertiaSuffixes[k]) {
				return d.Errorf(tbl+".params", "list the inertia entries in the order %s (got %s)", strings.Join(inertiaSuffixes[:], ", "), strings.Join(names, ", "))
			}
		}
	}
	if b, has := raw["bias"]; has {
		tr.C = toFloat(b)
		if !(tr.C > 0) || math.IsInf(tr.C, 1) {
			return d.Errorf(tbl+".bias", "bias must be a finite number > 0")
		}
	}
	if v, has := raw["scale"]; has {
		tr.S = toFloat(v)
		if !(tr.S > 0) || math.IsInf(tr.S, 1) {
			return d.Errorf(tbl+".scale", "scale must be a finite number > 0")
		}
	}
	for _, n := range names {
		j, err := freeIndex(tbl+".params", n)
		if err != nil {
			return err
		}
		tr.Idx = append(tr.Idx, j)
	}
	if err := tr.xBounds(s.Free, s.XParams); err != nil {
		return d.Errorf(tbl, "cannot transform %s: %v", strings.Join(names, ", "), err)
	}
	s.Transforms = append(s.Transforms, tr)
	return nil
}

// finishXParams sets the transformed x-parameters' units, docs and
// defaults (T⁻¹ of the model's defaults where that exists, else 0, clamped
// to the x-bounds). Names stay the θ names.
func (s *Study) finishXParams() {
	th := make([]float64, len(s.Free))
	for j, p := range s.Free {
		th[j] = p.Default
	}
	x := append([]float64(nil), th...)
	for _, tr := range s.Transforms {
		if tr.inverse(th, x, s.Free) != nil {
			for _, j := range tr.Idx {
				x[j] = 0
			}
		}
		for _, j := range tr.Idx {
			p := &s.XParams[j]
			p.Unit = ""
			p.Doc = fmt.Sprintf("x of %s under the %s transform", s.Free[j].Name, tr.Kind)
			p.Default = math.Min(math.Max(x[j], p.Lower), p.Upper)
		}
	}
}

// Transformed reports whether the study reparameterises any parameter.
func (s *Study) Transformed() bool { return len(s.Transforms) > 0 }

// Forward is θ = T(x) (a copy; x itself without transforms). For the
// one-coordinate transforms, whose x-bounds are exactly T⁻¹ of the
// θ-bounds, an x inside its bounds gives a θ clamped to the θ-bounds: T
// and T⁻¹ in floating point can put T(x) an ulp outside for x on its bound
// (where a projected optimiser puts it), which would otherwise be an
// out-of-support point.
func (s *Study) Forward(x []float64) []float64 {
	th := append([]float64(nil), x...)
	for _, tr := range s.Transforms {
		tr.forward(x, th)
		if tr.Kind == TransformInertia {
			continue // its x-box holds more than the preimage of the θ-box
		}
		j := tr.Idx[0]
		if xp, p := s.XParams[j], s.Free[j]; x[j] >= xp.Lower && x[j] <= xp.Upper {
			th[j] = math.Min(math.Max(th[j], p.Lower), p.Upper)
		}
	}
	return th
}

// Inverse is x = T⁻¹(θ), or an error naming the parameter whose θ is not
// in the image of its transform.
func (s *Study) Inverse(th []float64) ([]float64, error) {
	x := append([]float64(nil), th...)
	for _, tr := range s.Transforms {
		if err := tr.inverse(th, x, s.Free); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// InverseOf is T⁻¹ of one transform only, writing into x; the prior draws
// use it to redraw a transform's parameters whose θ has no preimage.
func (s *Study) InverseOf(k int, th, x []float64) error {
	return s.Transforms[k].inverse(th, x, s.Free)
}

// PullBack is the gradient in x, (∂θ/∂x)ᵀ·gθ, for the gradient gθ in θ at
// θ = T(x).
func (s *Study) PullBack(x, gTheta []float64) []float64 {
	gx := append([]float64(nil), gTheta...)
	for _, tr := range s.Transforms {
		tr.vjp(x, gTheta, gx)
	}
	return gx
}
