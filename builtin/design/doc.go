// Package design holds the designs of experiments a surrogate is trained on:
// the low-discrepancy sequences of Sobol (with optional Owen scrambling) and
// Halton, the Hammersley point set, and Latin hypercubes (with an optional
// maximin improvement); plus the centred L2 discrepancy that measures their
// uniformity. Every design lives in the unit cube [0,1)^d; Scale maps a
// design onto a box of bounds. Randomised designs (scrambled Sobol, Latin
// hypercubes) are deterministic functions of a uint64 seed.
//
// Files: sobol.go (Sobol 1967 with the Joe & Kuo 2008 direction numbers,
// Owen 1995 scrambling), joekuo.go (the embedded direction-number table),
// halton.go (Halton 1960 and Hammersley 1960), lhs.go (McKay, Beckman &
// Conover 1979; Morris & Mitchell 1995), discrepancy.go (Hickernell 1998).
//
// # Sources
//
//   - I. M. Sobol' (1967), "On the distribution of points in a cube and the
//     approximate evaluation of integrals", USSR Comput. Math. Math. Phys.
//     7(4):86–112. Gray-code ordering: Antonov & Saleev (1979), USSR
//     Comput. Math. Math. Phys. 19(1):252–256.
//   - S. Joe and F. Y. Kuo (2008), "Constructing Sobol sequences with better
//     two-dimensional projections", SIAM J. Sci. Comput. 30(5):2635–2654;
//     the table new-joe-kuo-6.21201 (21 201 dimensions, primitive
//     polynomials up to degree 18, "search criterion D(6)"), published at
//     https://web.maths.unsw.edu.au/~fkuo/sobol/ under a BSD-style licence
//     (copyright 2008 Frances Y. Kuo and Stephen Joe). The embedded file
//     new-joe-kuo-6.21201.gz is that table in the published format
//     (d s a m_1 … m_s); it was transcribed from the copy SciPy ships
//     (scipy/stats/_sobol_direction_numbers.npz, SciPy 1.10.1), whose
//     first lines agree with the published file.
//   - A. B. Owen (1995), "Randomly permuted (t,m,s)-nets and
//     (t,s)-sequences", in Monte Carlo and Quasi-Monte Carlo Methods in
//     Scientific Computing, Lecture Notes in Statistics 106:299–317 (nested
//     uniform scrambling); implemented with hashed bit flips as in
//     B. Burley (2020), "Practical hash-based Owen scrambling", J. Computer
//     Graphics Techniques 9(4):1–20.
//   - J. H. Halton (1960), "On the efficiency of certain quasi-random
//     sequences of points in evaluating multi-dimensional integrals",
//     Numer. Math. 2:84–90.
//   - J. M. Hammersley (1960), "Monte Carlo methods for solving
//     multivariable problems", Ann. New York Acad. Sci. 86:844–874 — the
//     design Lin et al. (2010, "Surrogate articular contact models for
//     computationally efficient multibody dynamic simulations", Med. Eng.
//     Phys. 32:584–594, Sec. 2.2) sample their contact model on.
//   - M. D. McKay, R. J. Beckman and W. J. Conover (1979), "A comparison of
//     three methods for selecting values of input variables in the analysis
//     of output from a computer code", Technometrics 21(2):239–245.
//   - M. D. Morris and T. J. Mitchell (1995), "Exploratory designs for
//     computational experiments", J. Stat. Plan. Inference 43:381–402 (the
//     φ_p maximin criterion, Eq. 2.1).
//   - F. J. Hickernell (1998), "A generalized discrepancy and quadrature
//     error bound", Math. Comp. 67(221):299–322 (centred L2 discrepancy,
//     Eq. 5.1c).
package design
