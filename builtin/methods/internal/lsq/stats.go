package lsq

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Stats are the statistics of a least-squares solution: with n observed
// residuals, p parameters and cost ½‖r‖²,
//
//	s² = 2·cost/(n − p) = RSS/(n − p),   Cov = s²·(JᵀJ)⁻¹,
//
// standard errors √diag(Cov) and correlations Cov_ij/(se_i·se_j) — the
// asymptotic covariance of the least-squares estimate under independent
// errors of equal variance (Seber & Wild 1989, Nonlinear Regression,
// Sec. 2.1.2, Eq. 2.21; the definition NIST's certified standard
// deviations use). (JᵀJ)⁻¹ is computed from the SVD of R with its
// columns scaled to unit norm, J = Q·A·E with E = diag(‖J_j‖), so
// (JᵀJ)⁻¹ = E⁻¹·V·S⁻²·Vᵀ·E⁻¹ (Golub & Van Loan 2013, Sec. 5.3.7; the
// equilibration keeps badly scaled columns from costing digits).
//
// When the scaled J has rank r < p (singular values ≤ rcond·s₁), the
// parameters are not identifiable: Covariance, StandardErrors and
// Correlation are nil, and NullSpace holds the p − r unidentifiable
// directions in θ (unit vectors E⁻¹·v_i, normalised). When n ≤ p there are
// no residual degrees of freedom and no s². An exact fit (RSS = 0) has
// s² = 0 and a zero covariance, which Note says.
//
// n counts the observations only (Observations): a missing observation's
// residual is always 0 and a soft constraint is no observation, so neither
// adds a degree of freedom (counting them would shrink s² and the standard
// errors). An active soft constraint's residuals are part of the RSS.
type Stats struct {
	// N residuals, Observations of them observed, P parameters, DOF =
	// Observations − Rank (− P at full rank).
	N, Observations, P, DOF int
	Cost, RSS               float64
	ResidualVariance        float64 // s²; NaN when DOF ≤ 0
	Rank                    int
	SingularValues          []float64 // of J (unscaled), descending
	ConditionNumber         float64   // s₁/s_p of J; +Inf when singular
	ConditionNumberEquil    float64   // the same of J·E⁻¹ (unit columns)
	Covariance, Correlation [][]float64
	StandardErrors          []float64
	NullSpace               [][]float64
	Note                    string
}

// Stats computes the statistics of the point f describes, of which obs
// residuals are observations (0 or more than f.N: all).
func (f *Factor) Stats(rcond float64, obs int) Stats {
	p, n := f.P, f.N
	if obs <= 0 || obs > n {
		obs = n
	}
	st := Stats{N: n, Observations: obs, P: p, DOF: obs - p, RSS: f.RNorm * f.RNorm, ResidualVariance: math.NaN()}
	st.Cost = 0.5 * st.RSS
	// R (of the unscaled J) and its column norms E.
	ru := mat.NewDense(p, p, nil)
	e := make([]float64, p)
	for i := range p {
		for j := i; j < p; j++ {
			v := f.R[i*p+j]
			ru.Set(i, j, v)
			e[j] += v * v
		}
	}
	for j := range e {
		e[j] = math.Sqrt(e[j])
	}
	var svd mat.SVD
	if !svd.Factorize(ru, mat.SVDNone) {
		st.Note = "the SVD of the Jacobian did not converge; no statistics"
		return st
	}
	st.SingularValues = svd.Values(nil)
	st.ConditionNumber = cond(st.SingularValues)
	a := mat.NewDense(p, p, nil)
	for i := range p {
		for j := i; j < p; j++ {
			if e[j] > 0 {
				a.Set(i, j, ru.At(i, j)/e[j])
			}
		}
	}
	if !svd.Factorize(a, mat.SVDFull) {
		st.Note = "the SVD of the Jacobian did not converge; no statistics"
		return st
	}
	s := svd.Values(nil)
	var v mat.Dense
	svd.VTo(&v)
	st.ConditionNumberEquil = cond(s)
	cut := rcond * s[0]
	for _, si := range s {
		if si > cut && si > 0 {
			st.Rank++
		}
	}
	// A rank-deficient J fits only Rank combinations of the parameters:
	// the residuals keep Observations − Rank degrees of freedom.
	st.DOF = obs - st.Rank
	if st.DOF > 0 {
		st.ResidualVariance = st.RSS / float64(st.DOF)
	}
	if st.Rank < p {
		for i := st.Rank; i < p; i++ {
			d := make([]float64, p)
			nrm := 0.0
			for j := range p {
				if e[j] > 0 {
					d[j] = v.At(j, i) / e[j]
				} else {
					d[j] = v.At(j, i)
				}
				nrm += d[j] * d[j]
			}
			nrm = math.Sqrt(nrm)
			// Sign convention: the first component of at least half the
			// largest magnitude is positive.
			big, lead := 0.0, 0
			for j := range d {
				big = math.Max(big, math.Abs(d[j]))
			}
			for j := range d {
				if math.Abs(d[j]) >= 0.5*big {
					lead = j
					break
				}
			}
			if d[lead] < 0 {
				nrm = -nrm
			}
			for j := range d {
				d[j] /= nrm
			}
			st.NullSpace = append(st.NullSpace, d)
		}
		st.Note = fmt.Sprintf("the Jacobian has rank %d < %d parameters (singular values of the equilibrated Jacobian at most %g of the largest): the parameters are not identifiable and have no covariance; null_space lists the unidentifiable directions", st.Rank, p, rcond)
		return st
	}
	if st.DOF <= 0 {
		st.Note = fmt.Sprintf("n = %d residuals for p = %d parameters: no residual degrees of freedom, so no residual variance and no covariance", n, p)
		return st
	}
	// Cov = s²·E⁻¹·V·S⁻²·Vᵀ·E⁻¹.
	st.Covariance = make([][]float64, p)
	st.StandardErrors = make([]float64, p)
	for i := range p {
		st.Covariance[i] = make([]float64, p)
		for j := range p {
			c := 0.0
			for k := range p {
				c += v.At(i, k) * v.At(j, k) / (s[k] * s[k])
			}
			st.Covariance[i][j] = st.ResidualVariance * c / (e[i] * e[j])
		}
		st.StandardErrors[i] = math.Sqrt(st.Covariance[i][i])
	}
	if st.RSS == 0 {
		st.Note = "exact fit: the residuals are all zero, so the residual variance s² and the covariance s²(JᵀJ)⁻¹ are zero; standard errors of 0 say the data are fitted exactly, not that the parameters are known exactly"
		return st
	}
	st.Correlation = make([][]float64, p)
	for i := range p {
		st.Correlation[i] = make([]float64, p)
		for j := range p {
			st.Correlation[i][j] = st.Covariance[i][j] / (st.StandardErrors[i] * st.StandardErrors[j])
		}
		st.Correlation[i][i] = 1
	}
	return st
}

func cond(s []float64) float64 {
	if len(s) == 0 || s[len(s)-1] == 0 {
		return math.Inf(1)
	}
	return s[0] / s[len(s)-1]
}

// num is x, or nil when x is not finite (JSON has no NaN or ±∞).
func num(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

// JSON returns the statistics as a method report block, with the parameter
// names.
func (st Stats) JSON(names []string) map[string]any {
	out := map[string]any{
		"params":                        names,
		"n_residuals":                   st.N,
		"n_observations":                st.Observations,
		"n_params":                      st.P,
		"dof":                           st.DOF,
		"cost":                          num(st.Cost),
		"residual_sum_of_squares":       num(st.RSS),
		"residual_variance":             num(st.ResidualVariance),
		"rank":                          st.Rank,
		"singular_values":               st.SingularValues,
		"condition_number":              num(st.ConditionNumber),
		"condition_number_equilibrated": num(st.ConditionNumberEquil),
		"covariance":                    nilIfEmpty(st.Covariance),
		"standard_errors":               nilIfEmpty(st.StandardErrors),
		"correlation":                   nilIfEmpty(st.Correlation),
	}
	if st.NullSpace != nil {
		out["null_space"] = st.NullSpace
	}
	if st.Note != "" {
		out["note"] = st.Note
	}
	return out
}

// nilIfEmpty makes a nil slice an untyped nil, so that a report reader
// testing for "no value" sees nil whatever the slice type.
func nilIfEmpty[T any](v []T) any {
	if v == nil {
		return nil
	}
	return v
}
