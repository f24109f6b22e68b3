package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/kinfer/kinfer/builtin/models/arm"
	rb "github.com/kinfer/kinfer/builtin/rigidbody"
)

// Fig. 6 of the paper: the 30 bone parameters are redundant (many values
// give the same motion), but a minimal set of linear combinations of them,
// the base (dynamic) coefficients, is identifiable (paper Sec. IV-E, refs.
// [45], [46]). They are computed numerically after M. Gautier, "Numerical
// calculation of the base inertial parameters of robots", J. Robotic
// Systems 8(4), 1991: the inverse dynamics τ = W(q, q̇, q̈)·φ is linear in
// the standard parameters φ (rigidbody.Standard: m, m·c, I about the body
// origin, per bone); stacking W over random states and taking its QR
// decomposition, the columns whose |R_jj| is negligible depend linearly on
// the columns before them. The others, φ_b, are kept and the dependent
// ones, φ_d, regrouped onto them: W φ = W_b β with
//
//	β = φ_b + K φ_d,   W_b K = W_d,
//
// so β (Base.Coefficients) determines the bones' dynamics and a φ that
// moves the bones like the truth has the truth's β. The columns are
// ordered humerus, ulna, radius (each in Bone order), so a child's
// parameters are regrouped onto its parent's, as in the classical
// symbolic regrouping (Khalil and Dombre, §9.5). Only the bones' inertial
// dynamics enter: muscle forces and damping do not depend on φ.

// Base is the map from the arm's bone parameters to its base coefficients.
type Base struct {
	Kept  []int      // columns of φ kept (0…29, bone-major)
	Dep   []int      // the dependent columns
	K     *mat.Dense // len(Kept) × len(Dep): W_d = W_b K
	RDiag []float64  // |R_jj| of the stacked regressor, for the record
}

var stdNames = [rb.StandardParams]string{"m", "mcx", "mcy", "mcz", "Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz"}

// baseStates and baseSeed: the random states of the stacked regressor.
// q is uniform over the model's joint ranges, q̇ over ±3 rad/s, q̈ over
// ±30 rad/s² (wider than the data's, which only helps the conditioning).
const (
	baseStates = 200
	baseSeed   = 6
)

// NewBase stacks the arm's regressor at baseStates random states and
// finds the base coefficients. A column is dependent if its |R_jj| is
// below 1e-9 times the largest (the gap in the arm is 12 orders of
// magnitude: the dependent columns have |R_jj| ≤ 1.5e-11, the kept ones
// ≥ 0.04 of the largest, 6e2).
func NewBase() (*Base, error) {
	sk := arm.Skeleton()
	w := rb.NewWorkspace(&sk)
	const first = 2 // the humerus: bodies 0 and 1 are the massless shoulder frames
	nb := len(sk.Bodies)
	cols := nb * rb.StandardParams
	nc := arm.NBones * rb.StandardParams
	W := mat.NewDense(baseStates*nb, nc, nil)
	y := make([]float64, nb*cols)
	r := rand.New(rand.NewPCG(baseSeed, 0))
	q, qd, qdd := make([]float64, nb), make([]float64, nb), make([]float64, nb)
	for s := 0; s < baseStates; s++ {
		for j := 0; j < nb; j++ {
			q[j] = arm.Range[j][0] + (arm.Range[j][1]-arm.Range[j][0])*r.Float64()
			qd[j] = 3 * (2*r.Float64() - 1)
			qdd[j] = 30 * (2*r.Float64() - 1)
		}
		w.Regressor(q, qd, qdd, y)
		for j := 0; j < nb; j++ {
			for c := 0; c < nc; c++ {
				W.Set(s*nb+j, c, y[j*cols+first*rb.StandardParams+c])
			}
		}
	}
	var qr mat.QR
	qr.Factorize(W)
	var R mat.Dense
	qr.RTo(&R)
	b := &Base{}
	largest := 0.0
	for j := 0; j < nc; j++ {
		b.RDiag = append(b.RDiag, math.Abs(R.At(j, j)))
		largest = math.Max(largest, b.RDiag[j])
	}
	for j, d := range b.RDiag {
		if d > 1e-9*largest {
			b.Kept = append(b.Kept, j)
		} else {
			b.Dep = append(b.Dep, j)
		}
	}
	Wb := columns(W, b.Kept)
	b.K = mat.NewDense(len(b.Kept), max(len(b.Dep), 1), nil)
	if len(b.Dep) > 0 {
		var K mat.Dense
		if err := K.Solve(Wb, columns(W, b.Dep)); err != nil {
			return nil, fmt.Errorf("base coefficients: %v", err)
		}
		// Entries that are rounding noise (the exact K of a tree of
		// revolute joints has entries built from the joint placements).
		kr, kc := K.Dims()
		for i := 0; i < kr; i++ {
			for j := 0; j < kc; j++ {
				if math.Abs(K.At(i, j)) < 1e-9 {
					K.Set(i, j, 0)
				}
			}
		}
		b.K = &K
	}
	return b, nil
}

func columns(W *mat.Dense, idx []int) *mat.Dense {
	r, _ := W.Dims()
	out := mat.NewDense(r, len(idx), nil)
	for c, j := range idx {
		for i := 0; i < r; i++ {
			out.Set(i, c, W.At(i, j))
		}
	}
	return out
}

// standard is φ of the bones of π (all parameters, model order).
func standard(pi []float64) []float64 {
	var phi []float64
	for i := 0; i < arm.NBones; i++ {
		v := pi[i*arm.BoneParams : (i+1)*arm.BoneParams]
		body := rb.Body{Mass: v[0], COM: rb.Vec3{v[1], v[2], v[3]},
			Inertia: rb.Mat3{{v[4], v[7], v[8]}, {v[7], v[5], v[9]}, {v[8], v[9], v[6]}}}
		s := rb.Standard(&body)
		phi = append(phi, s[:]...)
	}
	return phi
}

// Coefficients is β = φ_b + K φ_d at π (all parameters, model order).
func (b *Base) Coefficients(pi []float64) []float64 {
	phi := standard(pi)
	beta := make([]float64, len(b.Kept))
	for i, j := range b.Kept {
		beta[i] = phi[j]
		for c, d := range b.Dep {
			beta[i] += b.K.At(i, c) * phi[d]
		}
	}
	return beta
}

// stdName names column j of φ, e.g. "ulna.Izz".
func stdName(j int) string {
	return arm.BoneNames[j/rb.StandardParams] + "." + stdNames[j%rb.StandardParams]
}

// Names are the coefficients' names: the kept parameter, with a "*" if
// dependent ones are regrouped onto it.
func (b *Base) Names() []string {
	var out []string
	for i, j := range b.Kept {
		name := stdName(j)
		for c := range b.Dep {
			if b.K.At(i, c) != 0 {
				name += "*"
				break
			}
		}
		out = append(out, name)
	}
	return out
}

// Expression is coefficient i written out, e.g.
// "radius.mcx +0.1437·radius.mcz" (factors to 4 digits).
func (b *Base) Expression(i int) string {
	s := []string{stdName(b.Kept[i])}
	for c, d := range b.Dep {
		if k := b.K.At(i, c); k != 0 {
			s = append(s, fmt.Sprintf("%+.4g·%s", k, stdName(d)))
		}
	}
	return strings.Join(s, " ")
}

// BaseErrors are the signed percentage errors of the coefficients at π̂
// relative to the truth's, β_gt,i; or, where |β_gt,i| is below 1 % of the
// largest |β_gt| of the same bone and unit (a coefficient that nearly
// vanishes at the truth, e.g. a product of inertia), relative to that
// largest one, as Fig. 5 does for the products of inertia.
func (b *Base) BaseErrors(pihat []float64) []float64 {
	gt := b.Coefficients(truth)
	got := b.Coefficients(pihat)
	unitMax := map[int]float64{}
	for i, j := range b.Kept {
		u := unitOf(j)
		unitMax[u] = math.Max(unitMax[u], math.Abs(gt[i]))
	}
	out := make([]float64, len(gt))
	for i, j := range b.Kept {
		scale := math.Abs(gt[i])
		if m := unitMax[unitOf(j)]; scale < 0.01*m {
			scale = m
		}
		out[i] = 100 * (got[i] - gt[i]) / scale
	}
	return out
}

// unitOf groups φ's columns by bone and unit (mass, first moment,
// inertia).
func unitOf(j int) int {
	u := 2
	switch f := j % rb.StandardParams; {
	case f == 0:
		u = 0
	case f < 4:
		u = 1
	}
	return 3*(j/rb.StandardParams) + u
}
