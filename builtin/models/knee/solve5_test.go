package knee

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// gonumSolve5 is J·x = b by gonum's LAPACK LU (dgetrf with partial
// pivoting, then dgetrs): the reference of TestSolve5MatchesLAPACK and
// the "lapack" row of BenchmarkSolve5.
func gonumSolve5(J [5][5]float64, b [5]float64) ([5]float64, bool) {
	a := make([]float64, 25)
	for i := range J {
		copy(a[5*i:], J[i][:])
	}
	ipiv := make([]int, 5)
	A := blas64.General{Rows: 5, Cols: 5, Stride: 5, Data: a}
	if !lapack64.Getrf(A, ipiv) {
		return b, false
	}
	lapack64.Getrs(blas.NoTrans, A, blas64.General{Rows: 5, Cols: 1, Stride: 1, Data: b[:]}, ipiv)
	return b, true
}

func randomSystem(rng *rand.Rand) ([5][5]float64, [5]float64) {
	var J [5][5]float64
	var b [5]float64
	for i := range J {
		for j := range J[i] {
			// Rows of the knee's Jacobian mix forces (N) and moments (N·m)
			// over three decades.
			J[i][j] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(4)))
		}
		b[i] = rng.NormFloat64()
	}
	return J, b
}

// solve5 gives LAPACK's solution to rounding (solveAgreeTol relative to
// ‖x‖∞) on random systems of condition up to about 1e6, and refuses a
// singular matrix as dgetrf does.
func TestSolve5MatchesLAPACK(t *testing.T) {
	const solveAgreeTol = 1e-9
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		J, b := randomSystem(rng)
		x, ok := solve5(J, b)
		y, ok2 := gonumSolve5(J, b)
		if ok != ok2 {
			continue // near-singular: solve5's threshold is relative, dgetrf's exact zero
		}
		n := 0.0
		for i := range y {
			n = math.Max(n, math.Abs(y[i]))
		}
		for i := range x {
			if math.Abs(x[i]-y[i]) > solveAgreeTol*n {
				t.Fatalf("trial %d: x[%d] = %v, LAPACK %v", trial, i, x[i], y[i])
			}
		}
	}
	var S [5][5]float64
	S[0][0], S[1][1], S[2][2], S[3][3] = 1, 1, 1, 1 // rank 4
	if _, ok := solve5(S, [5]float64{1, 1, 1, 1, 1}); ok {
		t.Error("solve5 solved a singular system")
	}
}

// BenchmarkSolve5: the knee's Newton step solve, hand-written against
// gonum's LAPACK LU (RATIONALE.md, "Why is the knee's 5×5 solve
// hand-written?").
func BenchmarkSolve5(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	J, r := randomSystem(rng)
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			solve5(J, r)
		}
	})
	b.Run("lapack", func(b *testing.B) {
		for b.Loop() {
			gonumSolve5(J, r)
		}
	})
}
