// Package mcmc holds what kinfer's builtin Markov chain samplers
// (builtin/methods/metropolis and builtin/methods/tmcmc) have in common: the
// plumbing around a random-walk Metropolis–Hastings step, not the
// algorithms themselves.
//
//   - Random streams: SplitMix64 and Stream, one PCG stream per index
//     derived from the study seed (Steele, Lea & Flood 2014, "Fast
//     splittable pseudorandom number generators", OOPSLA; O'Neill 2014's
//     PCG, math/rand/v2's DXSM variant).
//   - Settings and bounds: WholeSetting, Bounds (the box of abi.Problem's
//     parameters), Usable and Finite (which results may become a chain
//     state).
//   - The proposal: Cholesky (L·Lᵀ = Σ by gonum's lapack64.Potrf, LAPACK's
//     dpotf2; Golub & Van Loan 2013, Matrix Computations, 4th ed., Alg.
//     4.2.1) and RandomWalk (y = x + s·L·z, z ~ N(0, I_d); gonum's
//     floats.Dot per row).
//   - Checkpoints and reports: Header (the format, settings, dimension and
//     seed a checkpoint is for, checked on load) and JSONNum/JSONList (JSON
//     has no NaN or ±∞).
//
// Every function consumes randomness exactly as the code it replaced did.
// Rounding changed once, when Cholesky moved from a hand-written
// Cholesky–Banachiewicz loop to lapack64.Potrf (issue 17): for d ≥ 2 the
// factor's entries may differ in the last bits (within 1e-13 relative up
// to d = 50), so a run's samples are not bit-identical to those of a kinfer
// from before that change.
//
// The package uses the standard library, abi and gonum (pure Go, no cgo):
// the metropolis method is also compiled to WebAssembly with GOOS=wasip1.
package mcmc
