package surrogate

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/surrogate/kriging"
	"github.com/kinfer/kinfer/builtin/surrogate/nn"
)

// Settings of the surrogate model (the study's [model] keys other than use
// and file).
var Settings = []abi.Setting{
	{Name: "outside", Choices: []string{"invalid", "extrapolate"}, Default: 0,
		Doc: "a data row whose conditions lie outside the range seen in training: invalid (the evaluation's status) or extrapolate (predict anyway)"},
	{Name: "weights", Choices: []string{"float64", "float32"}, Default: 0,
		Doc: "a network's weights when predicting: float64 (as trained; a network trained with float32 weights, kinfer train's default, is read in float32 with the same bits) or rounded to float32 with float64 sums (faster for small batches, within about 1e-6 of the output's spread; the gradient stays the float64 network's); Kriging: float64 only"},
}

// Model is a trained ensemble, or a set of Kriging predictors (one per
// output), as an abi.Model. It is read-only and safe for concurrent use.
type Model struct {
	e           *nn.Ensemble
	fz          *nn.Frozen       // e's weights packed once (float64; float32 by the weights setting or when they are float32 values)
	km          []*kriging.Model // instead of e
	inLo, inHi  []float64        // training box of the inputs (nil: none)
	prov        nn.Provenance
	spec        abi.Spec
	d, c, m     int
	extrapolate bool
	pool        sync.Pool // *buffers
}

type buffers struct {
	ws    nn.Workspace
	in    []float64
	y, gx []float64
}

// SpecOf builds the spec of the surrogate from the ensemble and its
// provenance, or says why the file cannot be a model (no input or output
// names, counts that do not match the network, missing parameter box).
func SpecOf(e *nn.Ensemble, p nn.Provenance) (abi.Spec, error) {
	src := p.Model
	if src == "" {
		src = "an unnamed model"
	}
	return spec(e.In(), e.Out(), p, fmt.Sprintf("neural-network ensemble (%d networks) trained on %s (%s; %d samples)", len(e.Nets), src, p.Design, p.TrainingSamples))
}

// SpecOfKriging is SpecOf for Kriging predictors read by kriging.Read.
func SpecOfKriging(ms []*kriging.Model, p nn.Provenance) (abi.Spec, error) {
	if len(ms) == 0 {
		return abi.Spec{}, fmt.Errorf("surrogate: no Kriging predictor")
	}
	src := p.Model
	if src == "" {
		src = "an unnamed model"
	}
	return spec(ms[0].Dim(), len(ms), p, fmt.Sprintf("Kriging (%d predictors, regression order %d, %v correlation) fitted to %s (%s; %d samples)",
		len(ms), ms[0].Order(), ms[0].Correlation(), src, p.Design, p.TrainingSamples))
}

func spec(nIn, nOut int, p nn.Provenance, doc string) (abi.Spec, error) {
	if len(p.InputNames) != nIn {
		return abi.Spec{}, fmt.Errorf("surrogate: the file names %d inputs, the network has %d (a surrogate of a kinfer model is written by `kinfer train`)", len(p.InputNames), nIn)
	}
	if len(p.OutputNames) != nOut {
		return abi.Spec{}, fmt.Errorf("surrogate: the file names %d outputs, the network has %d", len(p.OutputNames), nOut)
	}
	d := nIn - p.Conditions
	if p.Conditions < 0 || d < 1 {
		return abi.Spec{}, fmt.Errorf("surrogate: %d conditions among %d inputs leave no parameter", p.Conditions, nIn)
	}
	if len(p.ParamLower) != d || len(p.ParamUpper) != d {
		return abi.Spec{}, fmt.Errorf("surrogate: the file gives the training box of %d and %d parameters, want %d", len(p.ParamLower), len(p.ParamUpper), d)
	}
	if p.InputUnits != nil && len(p.InputUnits) != nIn || p.OutputUnits != nil && len(p.OutputUnits) != nOut {
		return abi.Spec{}, fmt.Errorf("surrogate: %d input and %d output units for %d inputs and %d outputs", len(p.InputUnits), len(p.OutputUnits), nIn, nOut)
	}
	unit := func(u []string, i int) string {
		if u == nil {
			return ""
		}
		return u[i]
	}
	s := abi.Spec{
		Kind: abi.KindModel, Name: "surrogate", Version: "1.0.0",
		Doc:          doc,
		Settings:     Settings,
		Capabilities: []abi.Capability{abi.CapJacobian, abi.CapVJP},
	}
	for j := 0; j < d; j++ {
		lo, hi := p.ParamLower[j], p.ParamUpper[j]
		s.Params = append(s.Params, abi.Param{Name: p.InputNames[j], Unit: unit(p.InputUnits, j), Lower: lo, Upper: hi,
			Default: 0.5 * (lo + hi), Doc: "input of the surrogate; bounds: the training design's box"})
	}
	for j := d; j < nIn; j++ {
		s.Conditions = append(s.Conditions, abi.Column{Name: p.InputNames[j], Unit: unit(p.InputUnits, j)})
	}
	for j := 0; j < nOut; j++ {
		s.Outputs = append(s.Outputs, abi.Column{Name: p.OutputNames[j], Unit: unit(p.OutputUnits, j)})
	}
	if err := s.Validate(); err != nil {
		return abi.Spec{}, fmt.Errorf("surrogate: %w", err)
	}
	return s, nil
}

// New makes the model from a loaded ensemble, its provenance and the
// setting values (in the order of Settings).
func New(e *nn.Ensemble, p nn.Provenance, settings []float64) (*Model, error) {
	if len(settings) != len(Settings) {
		return nil, fmt.Errorf("surrogate: %d settings, want %d", len(settings), len(Settings))
	}
	s, err := SpecOf(e, p)
	if err != nil {
		return nil, err
	}
	if settings[1] == 1 {
		if why := e.Float32Overflow(); why != "" {
			return nil, fmt.Errorf("surrogate: weights = %q would round %s to infinity; keep float64", Settings[1].Choices[1], why)
		}
	}
	md := &Model{e: e, fz: e.Freeze(settings[1] == 1), prov: p, spec: s, d: len(s.Params), c: len(s.Conditions), m: len(s.Outputs), extrapolate: settings[0] == 1,
		inLo: e.InputLo, inHi: e.InputHi}
	md.pool.New = func() any { return &buffers{} }
	return md, nil
}

// NewKriging makes the model from Kriging predictors (one per output, as
// kriging.Read returns them), their provenance and the setting values.
// The training box of the conditions is the box of the sites.
func NewKriging(ms []*kriging.Model, p nn.Provenance, settings []float64) (*Model, error) {
	if len(settings) != len(Settings) {
		return nil, fmt.Errorf("surrogate: %d settings, want %d", len(settings), len(Settings))
	}
	if settings[1] != 0 {
		return nil, fmt.Errorf("surrogate: weights = %q is for a network; Kriging predicts in float64 only", Settings[1].Choices[1])
	}
	s, err := SpecOfKriging(ms, p)
	if err != nil {
		return nil, err
	}
	lo, hi := ms[0].Box()
	md := &Model{km: ms, prov: p, spec: s, d: len(s.Params), c: len(s.Conditions), m: len(s.Outputs), extrapolate: settings[0] == 1,
		inLo: lo, inHi: hi}
	md.pool.New = func() any { return &buffers{} }
	return md, nil
}

// Kriging is the Kriging predictors (nil for an ensemble).
func (md *Model) Kriging() []*kriging.Model { return md.km }

// Spec implements abi.Model.
func (md *Model) Spec() abi.Spec { return md.spec }

// Provenance is the file's provenance.
func (md *Model) Provenance() nn.Provenance { return md.prov }

// Ensemble is the network ensemble (nil for Kriging).
func (md *Model) Ensemble() *nn.Ensemble { return md.e }

// inputs builds the K network input rows [θ, x_k] and checks the
// conditions against the training range.
func (md *Model) inputs(b *buffers, theta, x []float64) (int, abi.Status) {
	n := md.d + md.c
	if len(theta) != md.d || md.c == 0 && len(x) != 0 || md.c > 0 && len(x)%md.c != 0 {
		return 0, abi.Invalid
	}
	K := 1
	if md.c > 0 {
		K = len(x) / md.c
	}
	if cap(b.in) < K*n {
		b.in = make([]float64, K*n)
	}
	b.in = b.in[:K*n]
	for _, v := range theta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, abi.Invalid
		}
	}
	for k := 0; k < K; k++ {
		row := b.in[k*n : (k+1)*n]
		copy(row, theta)
		copy(row[md.d:], x[k*md.c:(k+1)*md.c])
		for j := md.d; j < n; j++ {
			v := row[j]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return 0, abi.Invalid
			}
			if !md.extrapolate && md.inLo != nil && (v < md.inLo[j] || v > md.inHi[j]) {
				return 0, abi.Invalid
			}
		}
	}
	return K, abi.OK
}

// Extrapolates reports whether the model predicts at conditions outside
// the training range (setting outside = "extrapolate") rather than making
// such an evaluation Invalid.
func (md *Model) Extrapolates() bool { return md.extrapolate }

// ConditionRange describes the training range of the conditions, e.g.
// "flexion_deg in [0, 90]".
func (md *Model) ConditionRange() string {
	if md.c == 0 || md.inLo == nil {
		return "none"
	}
	parts := make([]string, md.c)
	for j := range md.c {
		parts[j] = fmt.Sprintf("%s in [%g, %g]", md.spec.Conditions[j].Name, md.inLo[md.d+j], md.inHi[md.d+j])
	}
	return strings.Join(parts, ", ")
}

// OutsideConditions returns the indices of the rows of x (K × conditions)
// whose conditions lie outside the range seen in training.
func (md *Model) OutsideConditions(x []float64) []int {
	var out []int
	if md.c == 0 || md.inLo == nil {
		return nil
	}
	for k := 0; k < len(x)/md.c; k++ {
		for j := 0; j < md.c; j++ {
			v := x[k*md.c+j]
			if v < md.inLo[md.d+j] || v > md.inHi[md.d+j] {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// Eval implements abi.Model: row k of y is the ensemble at [θ, x_k].
func (md *Model) Eval(theta, x, y []float64) abi.Status {
	b := md.pool.Get().(*buffers)
	defer md.pool.Put(b)
	K, st := md.inputs(b, theta, x)
	if st != abi.OK {
		return st
	}
	if len(y) != K*md.m {
		return abi.Invalid
	}
	if md.km != nil {
		n := md.d + md.c
		for k := 0; k < K; k++ {
			for i, km := range md.km {
				v, err := km.Mean(b.in[k*n : (k+1)*n])
				if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
					return abi.Failed
				}
				y[k*md.m+i] = v
			}
		}
		return abi.OK
	}
	md.fz.Predict(y, b.in, K, &b.ws)
	return abi.OK
}

// krigingRow writes the m outputs of input row in and their gradients
// (m × (d + c), row-major) into y and gx.
func (md *Model) krigingRow(in, y, gx []float64) abi.Status {
	n := md.d + md.c
	for i, km := range md.km {
		v, err := km.MeanGrad(in, gx[i*n:(i+1)*n])
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return abi.Failed
		}
		y[i] = v
	}
	return abi.OK
}

// Jacobian implements abi.Jacobian: jac is the (K·m) × d matrix ∂y/∂θ, the
// θ columns of the ensemble's exact input Jacobian at each row.
func (md *Model) Jacobian(theta, x, y, jac []float64) abi.Status {
	b := md.pool.Get().(*buffers)
	defer md.pool.Put(b)
	K, st := md.inputs(b, theta, x)
	if st != abi.OK {
		return st
	}
	n, d, m := md.d+md.c, md.d, md.m
	if len(y) != K*m || len(jac) != K*m*d {
		return abi.Invalid
	}
	if md.km != nil {
		if cap(b.gx) < m*n {
			b.gx = make([]float64, m*n)
		}
		gx := b.gx[:m*n]
		for k := 0; k < K; k++ {
			if st := md.krigingRow(b.in[k*n:(k+1)*n], y[k*m:(k+1)*m], gx); st != abi.OK {
				return st
			}
			for i := 0; i < m; i++ {
				copy(jac[(k*m+i)*d:(k*m+i+1)*d], gx[i*n:i*n+d])
			}
		}
		return abi.OK
	}
	for k := 0; k < K; k++ {
		yk, jk := md.e.Jacobian(b.in[k*n:(k+1)*n], &b.ws)
		copy(y[k*m:(k+1)*m], yk)
		for i := 0; i < m; i++ {
			copy(jac[(k*m+i)*d:(k*m+i+1)*d], jk[i*n:i*n+d])
		}
	}
	return abi.OK
}

// VJP implements abi.VJP: g = vᵀ·∂y/∂θ, summed over the rows, from one
// batched backward pass (nn.Ensemble.VJP).
func (md *Model) VJP(theta, x, v, y, g []float64) abi.Status {
	b := md.pool.Get().(*buffers)
	defer md.pool.Put(b)
	K, st := md.inputs(b, theta, x)
	if st != abi.OK {
		return st
	}
	n, d, m := md.d+md.c, md.d, md.m
	if len(y) != K*m || len(v) != K*m || len(g) != d {
		return abi.Invalid
	}
	for _, vi := range v {
		if math.IsNaN(vi) || math.IsInf(vi, 0) {
			return abi.Invalid
		}
	}
	if md.km != nil {
		if cap(b.gx) < m*n {
			b.gx = make([]float64, m*n)
		}
		gx := b.gx[:m*n]
		clear(g)
		for k := 0; k < K; k++ {
			if st := md.krigingRow(b.in[k*n:(k+1)*n], y[k*m:(k+1)*m], gx); st != abi.OK {
				clear(g)
				return st
			}
			for i := 0; i < m; i++ {
				for j := 0; j < d; j++ {
					g[j] += v[k*m+i] * gx[i*n+j]
				}
			}
		}
		return abi.OK
	}
	var gx []float64
	b.y, gx = md.e.VJP(b.y, b.in, K, v, b.gx, &b.ws)
	b.gx = gx
	copy(y, b.y[:K*m])
	clear(g)
	for k := 0; k < K; k++ {
		for j := 0; j < d; j++ {
			g[j] += gx[k*n+j]
		}
	}
	return abi.OK
}
