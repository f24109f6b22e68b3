// Package wearsim is a Stanmore-type knee wear simulator: the multibody
// dynamic model of a knee replacement in a force-controlled knee
// simulator, its wear by Archard's law, and the input curves, after Lin,
// Haftka, Queipo & Fregly (2010, "Surrogate articular contact models for
// computationally efficient multibody dynamic simulations", Med. Eng.
// Phys. 32:584–594, Sec. 2.3 and Fig. 1), with either contact model —
// the elastic foundation (builtin/contact/efound) or its Kriging
// surrogates (builtin/contact/efsurr) — behind one interface (Contact).
//
// Dynamics (Lin 2010 Sec. 2.3: six DOFs; flexion γ motion controlled; AP
// x, axial y and IE β load controlled; ML z and varus–valgus α free). The
// five free coordinates are the femoral component's pose relative to the
// tibial insert (efound.Pose: x, y, z mm; α, β rad), γ(t) is prescribed,
// and each has a diagonal inertia (the tibial carriage for x, z, β; the
// femoral carriage for y, α):
//
//	m_t ẍ = F_x − k_AP·x − c_x ẋ − F_AP(t)
//	m_f ÿ = F_y − c_y ẏ − W(t)
//	m_t z̈ = F_z − c_z ż
//	I_α α̈ = T_α + e·W(t) − c_α α̇
//	I_β β̈ = T_β − k_IE·β − c_β β̇ − T_IE(t)
//
// with F, T the medial + lateral contact loads on the femur (tibial axes,
// torques about the femoral origin), W the axial force acting e medially
// of the centre, F_AP and T_IE applied to the tibia (hence the minus in
// relative coordinates), bumpers k_AP = 2 × 14.48 N/mm (Lin 2010) and a
// rotational restraint k_IE. The model neglects the gyroscopic and
// frame-rotation terms of Kane's equations that Lin et al. derived with
// Autolev: the rotations α, β stay below about 6° here. DefaultMachine documents
// the values (masses, inertias and damping are our estimates: the paper
// does not give them).
//
// Integration: BDF2 (backward Euler on the first step), implicit in the
// five coordinates, with modified Newton on a finite-difference Jacobian
// kept across steps and refreshed at the iterate when an iteration stalls
// — the structure of Matlab's ode15s that Lin et al. used. 250 steps per
// 1 s cycle give the wear of 500 steps within 0.1 % (tested). A
// simulation starts at rest in the static pose under W(0) and runs two
// cycles; the second gives the wear and the histories.
//
// Wear (Lin 2010 Sec. 2.3.5, Archard 1953): per side, per cycle,
// V = k·Σ|F|·|v_CoP|·Δt, k = 1e-7 mm³/(N·m), where v_CoP is the velocity
// in the tibial frame of the femoral point at the centre of pressure,
// v = ṫ + ω × (CoP − t) (rigid-body kinematics, the CoP treated as fixed
// in the femoral frame), extrapolated to 5 million cycles. The
// element-based wear (Options.Elements, EF only) sums k·p·A·|v(c)|·Δt over
// the loaded elements instead.
//
// Inputs (iso.go): the four ISO 14243-1 curves (flexion, axial force, AP
// force, IE torque) over a 1 s cycle, digitised from the published shapes
// — the standard's tables are not public — with its extremes (flexion
// 0 … 58°, axial 168 … 2 600 N, AP −265 … 110 N, IE −1 … 6 N·m), Akima
// splines, periodic. Variations (variation.go): two weights in [0, 1] per
// curve, component 1 an amplitude change about a reference level and
// component 2 a time shift (DefaultFamilies), standing in for the
// principal components of eight designs' measured curves that Lin et al.
// used and did not publish.
//
// Surrogates (surrogate.go): BuildSurrogate is Lin's construction in
// WearBox, a box fitted to this simulator's motions.
//
// Checks (wearsim_test.go): static equilibrium under constant loads
// against efound.Knee.Static (an independent Newton solve); the CoP
// velocity against finite differences of the femoral point's position;
// Archard's wear against a closed form with a stub contact; CoP- against
// element-based wear (within 2 %, Lin 2010 Sec. 3); step halving; the
// variation families; the digitised curves' extremes; and a CI-sized
// Table 1 (surrogate against EF).
package wearsim
