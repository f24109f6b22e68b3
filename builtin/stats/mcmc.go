package stats

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// splitChains cuts every chain in two halves of ⌊n/2⌋ draws (BDA3 Sec. 11.4:
// "split each chain in half"); of an odd-length chain the middle draw is
// dropped, as in Stan's split_chains. It returns nil when the chains are not
// all of one length ≥ 4 or there are none.
func splitChains(chains [][]float64) [][]float64 {
	if len(chains) == 0 {
		return nil
	}
	n := len(chains[0])
	if n < 4 {
		return nil
	}
	half := n / 2
	out := make([][]float64, 0, 2*len(chains))
	for _, c := range chains {
		if len(c) != n {
			return nil
		}
		out = append(out, c[:half], c[n-half:])
	}
	return out
}

// within returns, for m chains of n draws each, W (the mean within-chain
// variance) and var⁺ (the pooled estimate of the posterior variance), BDA3
// Sec. 11.4:
//
//	B = n/(m−1) Σⱼ (ψ̄.ⱼ − ψ̄..)²           (between-chain variance)
//	W = (1/m) Σⱼ sⱼ²,  sⱼ² = Σᵢ (ψᵢⱼ − ψ̄.ⱼ)²/(n−1)
//	var⁺ = (n−1)/n · W + B/n               (BDA3 Eq. 11.3)
func within(chains [][]float64) (w, varPlus float64) {
	m := len(chains)
	n := len(chains[0])
	means := make([]float64, m)
	for j, c := range chains {
		means[j] = Mean(c)
		w += Var(c)
	}
	w /= float64(m)
	b := float64(n) * Var(means) // B = n · (sample variance of the chain means)
	varPlus = float64(n-1)/float64(n)*w + b/float64(n)
	return w, varPlus
}

// SplitRHat is the potential scale reduction factor R̂ of BDA3 Sec. 11.4
// (Eq. 11.4, R̂ = √(var⁺/W)) computed on split chains: every chain is cut in
// two halves so that a trend within a chain shows as disagreement between
// halves. The chains must have one common length ≥ 4 (a single chain is
// allowed: its halves are compared). Values near 1 (below about 1.01–1.1)
// indicate that the chains have mixed. NaN when the input is too short,
// ragged, or constant.
func SplitRHat(chains [][]float64) float64 {
	s := splitChains(chains)
	if s == nil {
		return math.NaN()
	}
	w, varPlus := within(s)
	if !(w > 0) {
		return math.NaN()
	}
	return math.Sqrt(varPlus / w) // BDA3 Eq. 11.4
}

// ESS is the effective sample size of BDA3 Sec. 11.5 computed on split
// chains (as for SplitRHat). With m split chains of n draws:
//
//	V_t = 1/(m(n−t)) Σⱼ Σᵢ₌ₜ₊₁ⁿ (ψᵢⱼ − ψᵢ₋ₜ,ⱼ)²      (variogram, BDA3 Sec. 11.5)
//	ρ̂_t = 1 − V_t/(2·var⁺)                            (BDA3 Eq. 11.7)
//	n_eff = mn / τ̂,  τ̂ = 1 + 2 Σ_{t≥1} ρ̂_t            (BDA3 Eq. 11.8)
//
// The sum is truncated by Geyer's initial monotone sequence estimator (Geyer
// 1992): with ρ̂₀ = 1 and the pair sums P_k = ρ̂_{2k} + ρ̂_{2k+1},
// sum while P_k > 0, each P_k clipped to be no larger than P_{k−1}; then
// τ̂ = −1 + 2 Σ_k P_k. As in Stan, τ̂ is bounded below by 1/log₁₀(mn) so
// that antithetic chains cannot report an unbounded ESS. NaN under the same
// conditions as SplitRHat.
func ESS(chains [][]float64) float64 {
	s := splitChains(chains)
	if s == nil {
		return math.NaN()
	}
	_, varPlus := within(s)
	if !(varPlus > 0) {
		return math.NaN()
	}
	m, n := len(s), len(s[0])
	vg := variograms(s)
	rho := func(t int) float64 {
		if t == 0 {
			return 1
		}
		if t >= n {
			return 0
		}
		v := vg[t] / float64(m*(n-t)) // BDA3 Sec. 11.5, variogram V_t
		return 1 - v/(2*varPlus)      // BDA3 Eq. 11.7, ρ̂_t
	}
	// Geyer 1992: initial positive, then monotone, sequence.
	sum := 0.0
	prev := math.Inf(1)
	for k := 0; 2*k+1 < n; k++ {
		p := rho(2*k) + rho(2*k+1)
		if !(p > 0) {
			break
		}
		if p > prev {
			p = prev
		}
		sum += p
		prev = p
	}
	tau := -1 + 2*sum
	if lim := 1 / math.Log10(float64(m*n)); tau < lim {
		tau = lim
	}
	return float64(m*n) / tau // BDA3 Eq. 11.8
}

// variograms returns, for every lag t < n of the m chains of n draws s,
// the sum over chains of Σᵢ₌ₜⁿ⁻¹ (ψᵢ − ψᵢ₋ₜ)², in O(m·n log n): each
// chain centred on its mean (the differences do not change), the squares
// by prefix sums and the cross terms Σ ψᵢψᵢ₋ₜ by one FFT per chain and one
// inverse FFT of the summed power spectra (Wiener–Khinchin, zero-padded
// to ≥ 2n so that the correlation is not circular). Summing lag by lag
// cost O(m·n) per lag and, for a chain that barely moves (Geyer's sum
// then runs over O(n) lags), O(m·n²): hours at 10⁵ draws (audit 4).
func variograms(s [][]float64) []float64 {
	n := len(s[0])
	size := 1
	for size < 2*n {
		size <<= 1
	}
	fft := fourier.NewFFT(size)
	buf := make([]float64, size)
	spec := make([]complex128, size/2+1)
	power := make([]complex128, size/2+1)
	sq := make([]float64, n) // Σ over chains of Σᵢ₌ₜⁿ⁻¹ ψᵢ² + Σᵢ₌₀ⁿ⁻¹⁻ᵗ ψᵢ², per t
	prefix := make([]float64, n+1)
	for _, c := range s {
		mean := 0.0
		for _, v := range c {
			mean += v
		}
		mean /= float64(n)
		clear(buf)
		for i, v := range c {
			buf[i] = v - mean
			prefix[i+1] = prefix[i] + buf[i]*buf[i]
		}
		for t := range n {
			sq[t] += (prefix[n] - prefix[t]) + prefix[n-t]
		}
		fft.Coefficients(spec, buf)
		for k, z := range spec {
			power[k] += complex(real(z)*real(z)+imag(z)*imag(z), 0)
		}
	}
	cross := fft.Sequence(buf, power) // unnormalised: size × Σⱼ Σᵢ ψᵢψᵢ₊ₜ
	out := make([]float64, n)
	for t := range n {
		out[t] = max(sq[t]-2*cross[t]/float64(size), 0)
	}
	return out
}
