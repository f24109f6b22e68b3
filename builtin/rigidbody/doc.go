// Package rigidbody is spatial-vector rigid-body dynamics for kinematic
// trees of revolute joints, after R. Featherstone, "Rigid Body Dynamics
// Algorithms", Springer 2008 (RBDA below): forward kinematics, the
// recursive Newton–Euler algorithm (RNEA, inverse dynamics, RBDA Table 5.1),
// the composite-rigid-body algorithm (CRBA, joint-space inertia matrix,
// RBDA Table 6.2) and the articulated-body algorithm (ABA, forward
// dynamics, RBDA Table 7.1), with uniform gravity; and the inverse-dynamics
// regressor, τ = Y(q, q̇, q̈)·φ in the standard inertial parameters φ
// (Khalil and Dombre, "Modeling, Identification and Control of Robots",
// §9.3), from which the identifiable base parameters are found. It is the skeleton of the
// Diff-MSM arm (Zhou et al., docs/REFERENCES.md, Eq. 3:
// q̈ = f_ABA(q, q̇, τ, π_b)), whose bone parameters π_b are exactly the
// per-body mass, centre of mass and inertia about the centre of mass that
// Body holds.
//
// Conventions (RBDA ch. 2). Spatial vectors are [angular; linear]: a motion
// vector is (ω, v_O), a force vector is (n_O, f), both about the origin O
// of the frame they are expressed in. A Plücker transform X = plx(E, r)
// maps motion vectors from frame A to frame B, where E is the 3×3
// coordinate rotation (B coordinates = E·A coordinates) and r the position
// of B's origin in A coordinates (RBDA Eq. 2.24 and Table 2.5). Body i's
// frame is its joint's successor frame; X_i = X_J(q_i)·X_T(i) maps its
// parent's frame λ(i) to it, X_T(i) being the fixed joint placement and
// X_J the joint rotation. Bodies are numbered so that λ(i) < i; λ(i) = −1 is
// the fixed world frame, in which Gravity is given. Gravity enters as the
// acceleration of the base, a_0 = −a_g (RBDA §5.3).
//
// Known answers. Tests reproduce RBDL's forward-dynamics tests listed in
// docs/REFERENCES.md ("Rigid-body dynamics (ABA) — known answers") to
// 1e-12, cross-check ABA against a CRBA solve M q̈ = τ − C and against RNEA
// on random trees, and check power balance against finite differences of
// the energy.
//
// Speed. The algorithms run on structured kernels rather than dense 6×6
// matrices: Inertia6 keeps a symmetric spatial inertia as its 21 distinct
// entries, Transform.Congruence carries it across a joint by rotation and
// translation blocks (≈ 190 multiplications instead of 864), the root of
// a tree needs only U = I^A S (its children add X_jᵀ I^a_j X_j S), and the
// transforms, spatial cross products and bilinear forms are written out in
// scalars. What depends on the bodies only (spatial inertias, the joint
// rotation factors a×E_T and a×a×E_T) is cached in the Workspace and
// rebuilt when a body changes; Workspace.Hold skips even the check while
// the bodies are fixed (an identification evaluates many rows at one θ).
// Workspace.Save and Load keep and restore, per evaluation, what the
// Adjoint reads, so a reverse pass can run long after the forward pass
// (the arm's fused value-and-gradient). RATIONALE.md, "Why hand-written
// spatial kernels", records the measurements.
//
// Structure for automatic differentiation. The algorithms are written as
// short passes over small value types (Vec3, Mat3, Vec6, Mat6, Transform)
// and free functions on them (CrossMotion, CrossForce, SpatialInertia,
// Transform.Apply…), without hidden state or branches on values except the
// ABA division by D_i. A forward-mode (dual number) version replaces
// float64 in these types and functions one to one; a reverse-mode pass can
// run the three ABA passes backwards over the same per-body quantities,
// which Workspace keeps. The package is stdlib-only.
package rigidbody
