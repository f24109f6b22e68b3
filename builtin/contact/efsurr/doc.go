// Package efsurr builds Kriging surrogates of the elastic-foundation knee
// contact model (builtin/contact/efound) as Lin et al. (2010, "Surrogate
// articular contact models for computationally efficient multibody
// dynamic simulations", Med. Eng. Phys. 32:584–594) do, one per side:
//
//   - sample points mix loads and poses: (x, F_y, z, T_α, β, γ), the
//     sensitive directions y and α (Sec. 2.3.1; efound.Knee.Sensitivity)
//     replaced by the net loads F_y and T_α (Sec. 2.2.2), scattered by a
//     design in a box (Box);
//   - each point gets a static analysis (efound.Knee.Static: y, α
//     equilibrate the applied loads within 0.1 %, else the point is
//     discarded, Sec. 2.2.3), then a reasonable-design-space bound (each
//     side carries at least MinSide newtons; Sec. 2.2.4 reduced to this
//     one bound, without the coarse-surrogate screening);
//   - per side, nine DACE Kriging models (builtin/surrogate/kriging) in
//     the structure of Eq. 2: F_y and T_α as functions of the pose
//     (x, y, z, α, β, γ), and F_x, F_z, T_β, T_γ and the three
//     centre-of-pressure coordinates (Sec. 2.3.5) as functions of
//     (x, F_y, z, T_α, β, γ) with that side's F_y and T_α;
//   - in use (Predict), a pose goes in, each side's F_y and T_α are
//     predicted first and the rest from them (Sec. 2.2.5, Fig. 2h).
//
// Angles are in degrees in the surrogates' inputs (efound.Pose uses
// radians). Analyse is deterministic whatever the number of workers (each
// point's analysis depends on that point alone, results are stored by
// index); Fit is deterministic (the Kriging search draws no random
// numbers).
package efsurr
