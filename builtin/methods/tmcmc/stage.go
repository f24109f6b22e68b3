package tmcmc

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/kinfer/kinfer/builtin/methods/internal/mcmc"
)

// weightStats summarises the plausibility weights of one stage.
type weightStats struct {
	// LogS is log Ŝ_j, Ŝ_j = Σ_k W̄_k·L_k^Δq with W̄ the normalised incoming
	// weights (Eq. 14 when they are equal).
	LogS float64
	// CoV is the coefficient of variation of the N combined weights
	// W̄_k·L_k^Δq, √(N·Σŵ² − 1) (Eq. 12's CV_j for equal W̄).
	CoV float64
	// ESS is Kish's effective sample size 1/Σŵ².
	ESS float64
	// OK is false when every weight is 0.
	OK bool
}

// stageWeights writes into out the normalised weights ŵ_k ∝ W̄_k·L_k^dq of
// a population with log likelihoods logL and incoming log weights logW (nil:
// equal weights) and returns their statistics. Everything is computed from
// logarithms, shifted by the largest, so that no weight under- or
// overflows (log-sum-exp).
func stageWeights(out, logW, logL []float64, dq float64) weightStats {
	n := len(logL)
	var lseW float64
	if logW == nil {
		lseW = math.Log(float64(n))
	} else {
		lseW = logSumExp(logW)
	}
	logWbar := func(k int) float64 {
		if logW == nil {
			return -lseW
		}
		return logW[k] - lseW
	}
	mx := math.Inf(-1)
	for k := range n {
		out[k] = logWbar(k) + logWeight(dq, logL[k])
		if math.IsNaN(out[k]) {
			out[k] = math.Inf(-1)
		}
		mx = math.Max(mx, out[k])
	}
	if math.IsInf(mx, -1) || math.IsNaN(mx) {
		for k := range out[:n] {
			out[k] = 0
		}
		return weightStats{LogS: math.Inf(-1), CoV: math.Inf(1), OK: false}
	}
	sum := 0.0
	for k := range n {
		sum += math.Exp(out[k] - mx)
	}
	r := weightStats{LogS: mx + math.Log(sum), OK: true}
	sum2 := 0.0
	for k := range n {
		out[k] = math.Exp(out[k] - r.LogS) // ŵ_k, Σŵ = 1
		sum2 += out[k] * out[k]
	}
	r.ESS = 1 / sum2
	r.CoV = math.Sqrt(math.Max(0, float64(n)*sum2-1))
	return r
}

// logSumExp is log Σ exp(x_k), −∞ for an empty or all −∞ slice.
func logSumExp(x []float64) float64 {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = math.Max(mx, v)
	}
	if math.IsInf(mx, -1) || math.IsNaN(mx) {
		return mx
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - mx)
	}
	return mx + math.Log(s)
}

// nextExponent solves Eq. 12 for Δq = q_{j+1} − q_j ∈ (0, room]: the step
// whose weights W̄_k·L_k^Δq have coefficient of variation target. The CoV
// grows with Δq (log E[L^t] is convex in t), so bisection finds the
// crossing; when even Δq = room stays at or below the target it returns
// room (the last stage). When the CoV exceeds the target however small Δq
// is (more than N/(1+target²) of the points have L = 0), it returns the
// smallest step tried, room·2⁻⁶⁴, so that the stage only removes those
// points. buf (length N) is scratch.
func nextExponent(buf, logW, logL []float64, room, target float64) float64 {
	cov := func(dq float64) float64 { return stageWeights(buf, logW, logL, dq).CoV }
	if cov(room) <= target {
		return room
	}
	lo, hi := 0.0, room
	for range bisectSteps {
		mid := lo + 0.5*(hi-lo)
		if mid <= lo || mid >= hi {
			break
		}
		if cov(mid) > target {
			hi = mid
		} else {
			lo = mid
		}
	}
	if lo > 0 {
		return lo
	}
	return hi
}

// weightedCov is Eq. 15–16 without β²: C = Σ_k ŵ_k(θ_k − θ̄)(θ_k − θ̄)ᵀ,
// θ̄ = Σ_k ŵ_k θ_k, for the normalised weights w (Σw = 1) of the N×d
// row-major population x. Points of weight 0 do not enter (their states may
// be anything).
func weightedCov(x, w []float64, n, d int) []float64 {
	mean := make([]float64, d)
	for k := range n {
		if w[k] == 0 {
			continue
		}
		for i := range d {
			mean[i] += w[k] * x[k*d+i]
		}
	}
	c := make([]float64, d*d)
	dev := make([]float64, d)
	for k := range n {
		if w[k] == 0 {
			continue
		}
		for i := range d {
			dev[i] = x[k*d+i] - mean[i]
		}
		for i := range d {
			wi := w[k] * dev[i]
			for j := 0; j <= i; j++ {
				c[i*d+j] += wi * dev[j]
			}
		}
	}
	for i := range d {
		for j := 0; j < i; j++ {
			c[j*d+i] = c[i*d+j]
		}
	}
	return c
}

// regularisedCholesky returns the Cholesky factor of c after flooring its
// diagonal at (1e-9·scale0ᵢ)² and, if c is still not numerically positive
// definite (a population with fewer distinct points than parameters, or
// collinear ones), adding a ridge ε·diag(c) with ε = 1e-12, 1e-10, … 1.
func regularisedCholesky(c, scale0 []float64, d int) []float64 {
	for i := range d {
		floor := 1e-9 * scale0[i]
		c[i*d+i] = math.Max(c[i*d+i], floor*floor)
	}
	if l, ok := mcmc.Cholesky(c, d); ok {
		return l
	}
	a := make([]float64, d*d)
	for eps := 1e-12; ; eps *= 100 {
		copy(a, c)
		for i := range d {
			a[i*d+i] *= 1 + eps
		}
		if l, ok := mcmc.Cholesky(a, d); ok || eps >= 1 {
			if ok {
				return l
			}
			// Diagonal only: always positive definite after the floor.
			l := make([]float64, d*d)
			for i := range d {
				l[i*d+i] = math.Sqrt(c[i*d+i])
			}
			return l
		}
	}
}

// multinomial draws len(logW) indices with replacement, index l with
// probability exp(logW_l)/Σexp(logW) (Eq. 17), one uniform each in order.
// A weight of 0 is never drawn. buf (same length) is scratch.
func multinomial(rnd *rand.Rand, logW, buf []float64) []int {
	n := len(logW)
	mx := math.Inf(-1)
	for _, v := range logW {
		mx = math.Max(mx, v)
	}
	cum := buf[:n]
	total := 0.0
	for k, v := range logW {
		total += math.Exp(v - mx)
		cum[k] = total
	}
	idx := make([]int, n)
	for k := range idx {
		u := rnd.Float64() * total
		// First l with cum[l] > u: a zero weight repeats the previous
		// cumulative value, so it is skipped.
		idx[k] = sort.Search(n, func(l int) bool { return cum[l] > u })
		if idx[k] == n { // u rounded up to total
			idx[k] = n - 1
			for idx[k] > 0 && logW[idx[k]] == math.Inf(-1) {
				idx[k]--
			}
		}
	}
	return idx
}

// clusteredVar is the estimated variance of log Ŝ_j, given the normalised
// stage weights w (from stageWeights), the incoming log weights logW (nil:
// equal) and each chain's parent at the latest resampling. The
// delta-method variance of the weighted mean Ŝ = Σ_k W̄_k·w_k is
// Σ_k W̄_k²(w_k/Ŝ − 1)² = Σ_k (ŵ_k − W̄_k)² for independent points; here
// the terms are first summed over the chains of one parent, whose states
// are correlated (identical while neither copy has moved):
//
//	Var(log Ŝ_j) ≈ Σ_parents (Σ_{k of that parent} (ŵ_k − W̄_k))².
//
// With every chain its own parent it is the independent-point formula.
func clusteredVar(w, logW []float64, parent []int) float64 {
	sums := make([]float64, len(w))
	addInfluence(sums, w, logW, parent)
	v := 0.0
	for _, x := range sums {
		v += x * x
	}
	return v
}

// addInfluence adds each chain's influence on log Ŝ_j, ŵ_k − W̄_k (see
// clusteredVar), to the sum of its group, sums[group[k]]: its parent at
// the latest resampling (clusteredVar) or its ancestor in the prior
// population (the lineage sums, accumulated over the stages).
func addInfluence(sums, w, logW []float64, group []int) {
	n := len(w)
	lse := math.Log(float64(n))
	if logW != nil {
		lse = logSumExp(logW)
	}
	for k := range n {
		lwb := -lse
		if logW != nil {
			lwb = logW[k] - lse
		}
		sums[group[k]] += w[k] - math.Exp(lwb)
	}
}

// lineageVar is the lineage estimate of Var(log Ẑ) and the number of
// prior-population ancestors with descendants in the final population.
// log Ẑ = Σ_j log Ŝ_j, and to first order log Ẑ − log Z is the sum over
// stages and chains of the influences ŵ_jk − W̄_jk. Chains that share an
// ancestor are correlated within a stage and from stage to stage (a
// resampled copy carries its parent's state into the next stage), so the
// influences are summed per ancestor over all stages before squaring
// (Chan & Lai 2013, Ann. Stat. 41:2877, for sequential Monte Carlo; the
// same grouping by the initial ancestor as Lee & Whiteley 2018,
// Biometrika 105:609):
//
//	Var(log Ẑ) ≈ Σ_ancestors (Σ_{j, k descended from it} (ŵ_jk − W̄_jk))².
//
// The sum of an ancestor whose line died out still counts: its
// descendants' influence on the early stages is part of the error.
func lineageVar(eveSum []float64, eve []int) (float64, int) {
	v := 0.0
	for _, x := range eveSum {
		v += x * x
	}
	alive := map[int]bool{}
	for _, e := range eve {
		alive[e] = true
	}
	return v, len(alive)
}
