// Package strainband is the ligament strain constraint of Bartsoen et al.
// 2023 (docs/REFERENCES.md, Sec. 2.4,
// Eq. 8) as a likelihood term.
//
// Each column j of the K×m model output y (one ligament's strain at the K
// positions of a squat) is reduced to its maximal strain over the rows,
// in percent,
//
//	εⱼ = u · maxₖ yₖⱼ,   u = 100 (strain_unit "fraction") or 1 ("percent"),
//
// and scored by Eq. 8 with lower = lower_pct (−2), upper = upper_pct (6),
// a = offset (10) and b = scale (15):
//
//	ℓ(ε) = −a − b·(ε − lower)²   if ε < lower,
//	ℓ(ε) = 0                     if lower ≤ ε ≤ upper,
//	ℓ(ε) = −a − b·(ε − upper)²   if ε > upper,
//
//	log L = Σⱼ ℓ(εⱼ).
//
// The paper prints the first case as "if −2.0 % < ε", which overlaps the
// second; it must mean ε < −2 % (the quadratic is centred on −2, and the
// text says strains are kept "between −2 % and 6 %"), and that is what is
// implemented.
//
// The term is a soft uniform constraint: the paper replaces the uniform
// log-density (−∞ outside the band) by a finite penalty so that the
// sampler can still rank points outside it. ℓ is discontinuous at the band
// edges: it jumps from 0 inside to −a just outside (−10 by default), then
// falls quadratically. A sampler sees a cliff there, and a gradient method
// sees none (the gradient is 0 inside the band, and just outside it points
// back towards the band but knows nothing of the jump).
//
// Observations are not used: the term constrains model outputs and needs no
// data. obs and sigma are ignored (the host passes NaN observations of the
// same K×m shape); only y is read.
//
// Shape: y is K×m row-major, where m, the number of outputs the study's term
// lists, is passed with every call (abi.Likelihood) and K = len(y)/m.
//
// Capabilities: grad_y. The maximum is piecewise smooth: ∂log L/∂yₖⱼ is
// u·ℓ′(εⱼ) at the row k of column j's maximum (the first such row on a
// tie, a subgradient) and 0 elsewhere, with ℓ′(ε) = −2b·(ε − lower) below
// the band, 0 inside and −2b·(ε − upper) above.
//
// Statuses: a non-finite y gives abi.NonFinite; an m < 1, a y whose length
// is 0 or not a multiple of m, or a gy of the wrong length, gives
// abi.Invalid.
// The log-likelihood is then −∞.
//
// The package is stdlib-only.
package strainband
