// Package arm is the 5-DoF musculoskeletal arm of Diff-MSM (Zhou et al.,
// Zhou (Diff-MSM), docs/REFERENCES.md, Sec. III): MyoSuite's MyoArm with
// the wrist and fingers locked, three moving bones (humerus, ulna, radius)
// and eight MuJoCo Hill muscles (DELT1, DELT3, TRIlong, TRIlat, BIClong,
// BICshort, BRA, BRD). Given the joint state and the muscle activations of
// each row, it returns the joint accelerations, the paper's f_FD (Eq. 1–3):
//
//	T_i = muscle tension of builtin/muscle at (len_i(q), v_i, a_i),  v = −R q̇
//	τ   = Rᵀ T − b·q̇ + τ_limit(q, q̇),  R = −∂len/∂q  (Eq. 2, τ = J_mᵀ F_m)
//	q̈   = ABA(q, q̇, τ; bones)  (Eq. 3, builtin/rigidbody)
//
// # Parameters θ (54, Eq. 4)
//
// Per bone, in the order humerus, ulna, radius, the ten physical
// parameters of Sec. III-B: mass, COM (x, y, z) in the body frame, and the
// six entries I_xx, I_yy, I_zz, I_xy, I_xz, I_yz of the inertia tensor
// about the COM (names humerus_mass, humerus_com_x, …, humerus_Iyz). θ
// holds the physical values; the Cholesky inertia of Eq. 5–7, the squared
// mass and the bounded multiplier of Eq. 8 are reparameterisations meant
// to be applied at the study level. Then per muscle, in MyoArm order, the
// three of Sec. III-A: L0 (optimal fibre length l_o^M [m]), F0 (maximum
// isometric force F_o^M [N]) and vmax (maximum contraction velocity
// v_max^M [L0/s]), mapped to MuJoCo's muscle by builtin/muscle.WithIdent
// (the tendon slack length and the lengthrange are held fixed).
//
// Ground truth (GroundTruth): MyoArm's masses, principal moments and muscle
// parameters from docs/REFERENCES.md and builtin/muscle.MyoArm. Chosen
// here, because REFERENCES.md does not give them:
//   - principal axes = body axes, the smallest moment about the bone's long
//     axis y (humerus I_yy = 0.00239265, ulna I_yy = 0.001); the products
//     of inertia are therefore 0 at the truth (so a relative error of them,
//     as in the paper's C3, is undefined);
//   - centres of mass ≈ 43 % down the shaft (Dempster's ratios), with small
//     offsets so that no component is 0: humerus (0.006, −0.127, −0.004),
//     ulna (0.005, −0.110, 0.012), radius (0.010, −0.105, −0.006) m.
//
// Bounds: mass, principal moments, L0, F0 and vmax ±50 % of the truth;
// COM components truth ± (50 % of |c| + 1 cm); products of inertia
// ±0.2 × the bone's smallest principal moment (which keeps I_C positive
// definite by Gershgorin's theorem for any point in the box). Eval returns
// abi.Invalid for a θ with a non-positive mass, an inertia that is not
// positive definite, or a non-positive muscle parameter; the triangle
// inequality of the principal moments is not required.
//
// # Skeleton
//
// World = thorax frame with OpenSim's axes (x anterior, y up, z lateral,
// right arm), gravity (0, −9.81, 0), origin at the glenohumeral centre.
// Five revolute joints in a chain (builtin/rigidbody):
//
//	elv_angle      about world y (vertical): the elevation plane, 0 =
//	               abduction in the frontal plane, π/2 = flexion
//	shoulder_elv   about −x of the rotated plane: elevation, 0 = hanging
//	shoulder_rot   about the humerus's long axis y: positive = internal
//	elbow_flexion  about ElbowAxis (≈ z, a few degrees of carrying angle)
//	               at MyoArm's ulna position (0.0061, −0.2904, −0.0123) m
//	               in the humerus frame
//	pro_sup        about ProSupAxis (the ulna's long axis tilted ≈ 7°
//	               laterally) at RadiusPos (0.0004, −0.0115, 0.02) m in the
//	               ulna frame (chosen); positive = supination
//
// The first two shoulder joints move massless bodies (MuJoCo puts three
// hinges in the humerus body), so the mass matrix is singular where the
// elevation-plane axis meets the humeral axis (elevation 0 or π); the
// shoulder_elv Range [0.25, 2.5] rad keeps away from that. Range gives
// every joint's operating range; beyond it a soft limit acts (LimitTorque:
// a C¹ spring, quadratic over the first 0.05 rad, plus a damper that fades
// in over the same margin), part of the model and not identified.
//
// Joint damping: the setting damping, default 0.5 N·m·s/rad on every joint
// (REFERENCES.md gives 0.5–1 for MyoArm; the low end keeps the forearm
// rotation, whose inertia is only ≈ 0.001 kg·m², well inside the stability
// region of an explicit step of 0.002 s: b·h/I ≈ 1).
//
// # Muscle geometry
//
// Not MyoArm's via-point paths (which need the full OpenSim/MyoSuite
// geometry): each muscle–tendon length is a smooth function of the joint
// angles it crosses, a sum of cubics, so that each moment arm
// r_ij = −∂len_i/∂q_j is a quadratic in q_j alone. For each crossed joint
// the design gives r at the low end, middle and high end of the joint's
// Range (the table design in geometry.go, with the anatomical roles: the
// deltoids elevate, DELT1 flexes horizontally and rotates internally,
// DELT3 extends horizontally and rotates externally; TRIlong extends
// shoulder and elbow; the biceps flex shoulder and elbow and supinate;
// BRA flexes the elbow; BRD flexes the elbow and returns the forearm to
// neutral). All of a muscle's arms are then scaled by one factor (0.74–1.34)
// so that its length over the Range box spans exactly its MyoArm
// lengthrange [LR0, LR1], and offset so that the minimum is LR0 — MuJoCo's
// definition of the lengthrange — so the normalised fibre length covers
// MyoArm's [range0, range1]. The resulting arms at mid-range are 1–5 cm
// at shoulder and elbow and ≤ 5 mm for forearm rotation.
//
// # Concurrency and speed
//
// Model.Eval, VJP and EvalPullback are safe for concurrent use: each call
// takes an Evaluator (rigid-body model copy, workspace, adjoint scratch
// and prepared muscles) from a sync.Pool. SetTheta does what depends on θ
// alone once per call (the bones' spatial inertias, held in the
// workspace by rigidbody.Workspace.Hold; the muscles' constants by
// muscle.Prepare); each row then runs the paths, eight tensions and the
// ABA on the structured kernels of builtin/rigidbody. The rows do not
// interact, which the model declares (abi.RowsIndependent), so the host
// may split one θ's rows across its workers in fixed blocks.
//
// # Exact gradients (CapVJP)
//
// Model.VJP returns y as Eval (bit for bit) and g = vᵀ·∂y/∂θ for a
// cotangent v (K×5), the capability host/target chains a likelihood's
// ∂logL/∂y through. Per row the equations of motion are
// M(q;θ_b) q̈ + C(q, q̇;θ_b) = τ(q, q̇, a;θ_m), i.e. RNEA(q, q̇, q̈;θ_b) = τ;
// differentiating at fixed (q, q̇, a) with ∂RNEA/∂q̈ = M gives
// ∂q̈/∂θ = M⁻¹(∂τ/∂θ − ∂RNEA/∂θ|_q̈), so with w = M⁻¹v (M symmetric):
//
//	vᵀ∂q̈/∂θ_m = (Σ_j R_mj w_j)·∂T_m/∂(L0, F0, vmax)   (muscle.TensionPartials)
//	vᵀ∂q̈/∂θ_b = −∂(wᵀ RNEA(q, q̇, q̈;θ_b))/∂θ_b
//
// The moment arms, the damping and the soft limits do not depend on θ.
// w comes from the ABA's own factorisation (rigidbody.Adjoint.SolveMass:
// passes 2–3 of the ABA with τ = v, q̇ = 0, no gravity; O(n) 6-vector
// operations, cheaper than a CRBA + 5×5 Cholesky and consistent with the
// q̈ it differentiates). The RNEA body force f_b = I_b a_b + v_b ×* I_b v_b
// is linear in the spatial inertia and wᵀRNEA = Σ_b λ_bᵀ f_b, λ_b the body
// velocity for joint rates w (the accelerations of SolveMass's pass 3,
// which AddSolvedInertiaVJP reuses), so the bone gradient is that of
// λ_bᵀI_b a_b − (v_b ×m λ_b)ᵀ I_b v_b, evaluated through
// xᵀI y = x_ωᵀ I_C y_ω + m (x_v + x_ω×c)·(y_v + y_ω×c)
// (rigidbody.Adjoint.AddInertiaVJP, at the velocities and accelerations,
// gravity included, that the row's ABA left). The six θ inertia entries
// map to the symmetric I_C (∂/∂I_xy = ∂/∂I_C[0][1] + ∂/∂I_C[1][0]). Rows
// with a zero cotangent cost an Eval only. A non-finite v, an invalid θ
// or mismatched lengths give abi.Invalid; a row whose q̈ or M⁻¹v is not
// finite gives abi.Failed (as Eval); g is then all zero. Tested against
// central differences of vᵀ·Eval over all 54 parameters on 300 rows of
// examples/arm/train.csv (vjp_test.go), and through the host's chain rule
// (host/target/arm_gradient_test.go).
//
// One forward pass for value and gradient (abi.Pullbacker). The host needs
// y before it knows v (the likelihood's ∂logL/∂y depends on all of y), so
// with VJP alone it runs the forward pass twice: Eval, then VJP. Model.
// EvalPullback writes y as Eval does and keeps, per row, what AddVJP reads
// (Evaluator.Save: per body sin q, cos q, D, U, V and A of the ABA, the 19
// nonzero moment arms and the tensions' 24 parameter partials, 148 values
// or 1184 bytes); Pull then runs only the backward pass on the restored
// rows (Evaluator.Load rebuilds the transforms from sin q and cos q exactly
// as the forward pass built them), so its g equals VJP's bit for bit
// (pullback_test.go). Costs, CPU time on this machine for 10 000 rows:
// Eval 16 ms, VJP 22 ms, EvalPullback + Pull 25 ms (against Eval + VJP,
// 38 ms, on the unfused path); docs/PERFORMANCE.md has the commands.
//
// RATIONALE: why an adjoint through the equations of motion, not a
// general-purpose AD package. The model is one small implicit function,
// M q̈ = τ − C, whose adjoint is known in closed form: one extra O(n)
// pass over the ABA's factorisation for w = M⁻¹v, one velocity-like pass
// for λ, and per body a bilinear form in the ten inertial parameters —
// the same cost order as one more RNEA plus a 5×5 solve per row, with no
// tape, no allocation and no 54-fold forward-mode sweep (forward mode
// would carry 54 tangents through every ABA operation, ≈ 54× an Eval;
// vector dual numbers cut the passes but not the flops). A reverse-mode
// tape over the ABA would differentiate the algorithm rather than the
// dynamics (the articulated inertias, U Uᵀ/D and their divisions), record
// thousands of scalar operations per row and, in Go, need either a code
// generator or an interface-typed float that defeats inlining; the Go AD
// libraries are tensor-graph frameworks made for large array operations,
// not for 5-body loops over 6-vectors, and a dependency would break the
// stdlib-only rule of builtin/rigidbody. The adjoint is exact (no
// truncation; rounding only), keeps q̈ bit-identical to Eval, and is short
// enough to check against finite differences term by term
// (rigidbody/adjoint_test.go checks SolveMass against the CRBA and
// AddInertiaVJP against differences of the RNEA). Extending it: a new θ
// that enters τ only (e.g. identified damping b: wᵀ∂τ/∂b = −Σ_j w_j q̇_j;
// tendon slack length or moment-arm scales: through TensionPartials'
// DLength and R) needs only its ∂τ/∂θ dotted with w; a θ that enters the
// skeleton's kinematics (joint placements or axes) would add the
// derivative of the transforms X_i to the RNEA adjoint (a reverse pass
// over the velocity and acceleration recursions, still O(n)); gradients
// with respect to q or q̇ (not needed for identification) would need the
// full RNEA reverse pass, and the Jacobian (CapJacobian) is VJP with five
// unit cotangents per row.
package arm
