package analysis

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

// MaxCondition is the largest condition number of the centred design with
// unit-norm columns that Regress accepts: above it the predictors are
// (numerically) collinear and the coefficients are not determined.
const MaxCondition = 1e12

// Fit is an ordinary least-squares fit y ≈ Σⱼ Coef[j]·xⱼ + Intercept.
type Fit struct {
	// Coef are the coefficients of the predictors, in the order given
	// (a, b, c, d of Eq. 9–10; a of Eq. 11).
	Coef []float64
	// Intercept is e of Eq. 9–10, b of Eq. 11.
	Intercept float64
	// R2 is the coefficient of determination 1 − SS_res/SS_tot; NaN when y
	// is constant (SS_tot = 0).
	R2 float64
	// N is the number of samples.
	N int
}

// Regress fits y on the predictors x (x[j] holds predictor j's values, one
// per sample, like y) by ordinary least squares with an intercept (Eq.
// 9–11). It needs at least one predictor, len(x)+1 samples, finite values,
// no constant predictor and predictors that are not collinear.
func Regress(y []float64, x ...[]float64) (Fit, error) {
	n, p := len(y), len(x)
	if p == 0 {
		return Fit{}, errors.New("analysis: regression without predictors")
	}
	if n < p+1 {
		return Fit{}, fmt.Errorf("analysis: regression on %d predictors needs at least %d samples, got %d", p, p+1, n)
	}
	if err := checkFinite("response value", y); err != nil {
		return Fit{}, err
	}
	for j, xj := range x {
		if len(xj) != n {
			return Fit{}, fmt.Errorf("analysis: predictor %d has %d values, the response %d", j, len(xj), n)
		}
		if err := checkFinite(fmt.Sprintf("predictor %d value", j), xj); err != nil {
			return Fit{}, err
		}
	}
	// Centre everything (the intercept then separates) and scale each
	// predictor to unit norm, so that the condition number measures
	// collinearity, not units.
	ym := mean(y)
	yc := mat.NewVecDense(n, nil)
	ssTot := 0.0
	for i, v := range y {
		yc.SetVec(i, v-ym)
		ssTot += (v - ym) * (v - ym)
	}
	xm, scale := make([]float64, p), make([]float64, p)
	a := mat.NewDense(n, p, nil)
	for j, xj := range x {
		xm[j] = mean(xj)
		ss := 0.0
		for _, v := range xj {
			ss += (v - xm[j]) * (v - xm[j])
		}
		scale[j] = math.Sqrt(ss)
		if !(scale[j] > 0) {
			return Fit{}, fmt.Errorf("analysis: predictor %d is constant (%g)", j, xm[j])
		}
		for i, v := range xj {
			a.Set(i, j, (v-xm[j])/scale[j])
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	if c := qr.Cond(); !(c <= MaxCondition) {
		return Fit{}, fmt.Errorf("analysis: the predictors are collinear (condition number %.3g of the scaled design)", c)
	}
	var beta mat.VecDense
	if err := qr.SolveVecTo(&beta, false, yc); err != nil {
		return Fit{}, fmt.Errorf("analysis: least squares: %w", err)
	}
	var fitted mat.VecDense
	fitted.MulVec(a, &beta)
	ssRes := 0.0
	for i := range n {
		r := yc.AtVec(i) - fitted.AtVec(i)
		ssRes += r * r
	}
	f := Fit{Coef: make([]float64, p), Intercept: ym, N: n, R2: math.NaN()}
	for j := range p {
		f.Coef[j] = beta.AtVec(j) / scale[j]
		f.Intercept -= f.Coef[j] * xm[j]
	}
	if ssTot > 0 {
		f.R2 = 1 - ssRes/ssTot
	}
	return f, nil
}

// mean is gonum's stat.Mean (the columns are never empty here).
func mean(x []float64) float64 { return stat.Mean(x, nil) }
