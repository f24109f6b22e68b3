// Package twobardirect is the builtin model "twobar-direct": the direct
// temporal identification of Gouveia, Lemosse, Pagnacco & Souza de Cursi
// ("Temporal identification in a flexible multibody system: application to
// biomechanics", Sec. 4, Eq. 11–13) on their two-bar system (Sec. 6, Fig. 1;
// package builtin/flexmb/twobar).
//
// Parameters: the spring constants p = [k1, kt1, k3, kt3]. Conditions: the
// kinematics of one instant, x1 … th5, vx1 … vth5, ax1 … ath5 (the nodal
// positions, velocities and accelerations of nodes 1–5). Outputs: the
// equation-of-motion residual r = M(q)q̈ + Ṁq̇ − ∂T/∂q + f_int(p, q) − g on
// the 12 free coordinates, r_x2 … r_th5 [N, N m]; a dataset observes them
// as 0 (equilibrium), so least squares on the gaussian residuals minimises
// Gouveia's J = Σ zᵀz (Eq. 12). The fixed node's three equations are
// absorbed by its Lagrange multipliers (λ of Eq. 11 chosen by least
// squares), so they are left out.
//
// r is affine in p; the model gives the exact Jacobian ∂r/∂p (capability
// jacobian), which the tests compare with finite differences. Rows are
// independent.
package twobardirect
