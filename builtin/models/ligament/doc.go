// Package ligament is the Blankevoort ligament: a tension-only spring with a
// quadratic toe region, as written in Bartsoen et al. 2023 (docs/REFERENCES.md),
// Eq. 1–3, after Blankevoort &
// Huiskes 1991.
//
// Parameters: linear stiffness k [N] (force per unit strain) and reference
// strain ε_r (strain at the reference position). Condition: the ligament
// length L [mm]. Setting: the reference length L_r [mm] (the length at the
// reference position, full extension in the paper). Outputs: the force F [N]
// and the strain ε.
//
// The parameter bounds are the union of the paper's Table 2 ranges over all
// bundles: k ∈ [2000, 12000] N, ε_r ∈ [−0.5, 0.4].
//
// The package is stdlib-only so the same code compiles into the Go plugin
// (plugins/go/ligament) and the builtin and WASM twins can be compared.
package ligament
