// Package muscle is MuJoCo's muscle model, the Hill-type muscle that
// MyoSuite's MyoArm uses and that the Diff-MSM paper (Zhou et al., docs/REFERENCES.md,
// Sec. III-A, Eq. 1) identifies: an active
// force–length–velocity–activation term plus a passive force–length term,
// with an inelastic tendon and no pennation (the paper's footnote 1).
//
// Sources. The formulas are those written in docs/REFERENCES.md
// ("Muscles"), which transcribes MuJoCo's engine_util_misc.c:
// mju_muscleGainLength (FL), mju_muscleGain (L0, L, V, FV, gain),
// mju_muscleBias (passive force) and mju_muscleDynamics (activation, after
// Millard et al. 2013). Each function below names the one it mirrors;
// guards against division by zero use MuJoCo's mjMINVAL = 1e-15 exactly as
// the C code does.
//
// Sign convention. MuJoCo's actuator force is negative in tension (gain and
// bias are returned negated, and the joint torque is momentᵀ·force with
// moment = ∂len/∂q). This package works with the tension T ≥ 0 — the
// muscle's pulling force, the F_m of the paper's Eq. 1 as a magnitude — and
// offers Gain, Bias and ActuatorForce with MuJoCo's sign for comparison
// with MuJoCo data. TorqueFromTension turns tensions into joint torques with
// the sign fixed: τ = −Jᵀ T, J = ∂len/∂q (MuJoCo's actuator_moment), which
// is the paper's Eq. 2 (τ = J_mᵀ F_m) with F_m = −T.
//
// Identification parameters. Diff-MSM identifies per muscle (Sec. III-A)
// π_mi = [l_o^M, F_o^M, v_max^M]. MuJoCo has no attribute for the optimal
// fibre length; it derives L0 = (LR1 − LR0)/(range1 − range0). The mapping
// used here, documented in Ident:
//
//	l_o^M   = L0 [m]                  (optimal fibre length)
//	F_o^M   = force [N]               (MuJoCo prm[2], peak active force)
//	v_max^M = vmax [L0/s]             (MuJoCo prm[6]; V = vel/(L0·vmax))
//
// and, since the tendon is inelastic, MuJoCo's normalised length
// L = range0 + (len − LR0)/L0 is the rigid-tendon Hill form
// L = (len − l_s)/L0 with tendon slack length l_s = LR0 − range0·L0
// (Zajac 1989, cited by the paper as [37]). When L0 is identified, l_s and
// the geometric lengthrange are held fixed and range0, range1 move
// (WithIdent); the result is again an exact MuJoCo muscle.
//
// Not covered: MuJoCo's automatic force scaling (force < 0 ⇒ scale/acc0,
// which needs the model's mass matrix), the optional smooth switching of
// the activation time constant (dynprm[2] > 0; MyoSuite leaves it 0), and
// elastic tendons/pennation, which MuJoCo does not model either.
//
// Muscle.Prepare computes what TensionPartials needs from the parameters
// alone (reciprocals, curve breakpoints) once, for evaluating many states
// of one muscle; Prepared.TensionPartials multiplies where
// Muscle.TensionPartials divides and agrees with it to rounding (1e-13,
// tested on every piece of FL, FV and FP).
//
// The package is stdlib-only so that the same code can be compiled into a
// WebAssembly plugin.
package muscle
