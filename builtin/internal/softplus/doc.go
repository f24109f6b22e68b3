// Package softplus evaluates the softplus activation a(z) = ln(1 + eᶻ) of
// Bartsoen et al.'s (2023, Eq. 5) network and its derivative, the logistic
// sigmoid a′(z) = 1/(1 + e⁻ᶻ), over slices, for builtin/surrogate/nn.
//
// Formulation: a(z) = max(z, 0) + ln(1 + t), a′(z) = n/(1 + t), with t =
// e^−|z| ∈ [0, 1] and n = 1 (z ≥ 0) or t (z < 0), which neither overflows
// nor cancels. The exponential: Cody & Waite's (1980, Software Manual for
// the Elementary Functions) reduction x = k·ln 2 + r, |r| ≤ ln2/2, by two
// fused multiply-adds with ln 2 split in two, the Taylor polynomial of e^r
// to degree 13 (truncation < 5e-18 relative) by Horner's rule, and p·2ᵏ
// rounded once. The logarithm: fdlibm's log1p (Sun Microsystems 1993,
// e_log1p.c, as Go's math.Log1p) for 0 ≤ t ≤ 1: u = 1 + t with its exact
// rounding error c, u = 2ᵏm, k ∈ {0, 1}, f = m − 1, s = f/(2 + f), ln m =
// f − f²/2 + s·(f²/2 + R(s²)) with fdlibm's minimax R, plus c/u.
//
// Accuracy (tested over [−750, 750], dense on [−40, 40], and special
// values): within 4 units in the last place of math.Log1p(math.Exp(z))
// and of 1/(1 + math.Exp(−z)) (measured worst 2 ulp for both); below the
// normal range, within 2⁻¹⁰²²·4ε absolute. NaN gives NaN, ±∞ the limits.
//
// Kernels: AVX-512 assembly, eight values a step (softplus_amd64.s), where
// the CPU has it (golang.org/x/sys/cpu), and its portable twin in Go
// (math.FMA; build tag purego, other CPUs, and the last len mod 8 values).
// Both perform the same IEEE operations in the same order, so they give
// the same bits (tested value by value), and each value is computed alone:
// results do not depend on how a slice is split over goroutines.
package softplus
