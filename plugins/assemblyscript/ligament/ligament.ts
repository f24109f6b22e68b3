// ligament-as: the Blankevoort ligament, an independent AssemblyScript
// implementation of kinfer's builtin model (builtin/models/ligament) with
// the same spec names, so the two are interchangeable in a study.
//
// Source: Bartsoen et al. 2023, Mech. Syst. Signal Process. (docs/REFERENCES.md),
// after Blankevoort & Huiskes 1991:
//   Eq. 1  F = 0                    for ε < 0
//          F = k ε² / (4 ε_l)       for 0 ≤ ε ≤ 2 ε_l
//          F = k (ε − ε_l)          for ε > 2 ε_l,      ε_l = 0.03
//   Eq. 2  ε = ((1 + ε_r) L − L_r) / L_r
// Parameters (Table 2, union over bundles): k ∈ [2000, 12000] N,
// ε_r ∈ [−0.5, 0.4]. Condition: length L [mm]. Setting: L_r [mm].
//
// Build (repository root):  go run ./cmd/kinfer build plugins/assemblyscript/ligament
// (AssemblyScript 0.27 from npm; see sdk/assemblyscript).
import { Column, F64s, Model, Param, Setting, Spec, Status, serveModel } from "kinfer";
export * from "kinfer/model";

// ε_l of Eq. 1: "an experimentally fitted parameter equal to 0.03".
const EPS_L: f64 = 0.03;

// Eq. 1: the force at strain e; dFde receives dF/dε.
let dFde: f64 = 0;
// @ts-ignore: decorator
@inline
function force(k: f64, e: f64): f64 {
  if (e < 0) {
    dFde = 0;
    return 0;
  }
  if (e <= 2 * EPS_L) {
    dFde = 0.5 * k * e / EPS_L;
    return 0.25 * k * e * e / EPS_L;
  }
  dFde = k;
  return k * (e - EPS_L);
}

class Ligament extends Model {
  refLength: f64 = 0; // L_r [mm]

  configure(s: F64s): string | null {
    if (!(s[0] > 0)) return "ligament-as: ref_length_mm must be > 0, got " + s[0].toString();
    this.refLength = s[0];
    return null;
  }

  eval(theta: F64s, x: F64s, y: F64s): Status {
    const k = theta[0], epsr = theta[1], lr = this.refLength;
    // y has 2·K values (K = x.length, m = 2): the indices are in range, so
    // the hot loop skips the checks (unchecked, see F64s).
    for (let i = 0; i < x.length; i++) {
      const e = ((1 + epsr) * unchecked(x[i]) - lr) / lr; // Eq. 2
      unchecked(y[2 * i] = force(k, e));
      unchecked(y[2 * i + 1] = e);
    }
    return Status.Ok;
  }

  // Rows (F_i, ε_i), columns (k, ε_r): ∂F/∂k = F/k (F is linear in k),
  // ∂F/∂ε_r = dF/dε · L/L_r, ∂ε/∂k = 0, ∂ε/∂ε_r = L/L_r.
  jacobian(theta: F64s, x: F64s, y: F64s, jac: F64s): Status {
    const k = theta[0], epsr = theta[1], lr = this.refLength;
    for (let i = 0; i < x.length; i++) {
      const l = unchecked(x[i]);
      const dedr = l / lr;
      const e = ((1 + epsr) * l - lr) / lr;
      const f = force(k, e);
      unchecked(y[2 * i] = f);
      unchecked(y[2 * i + 1] = e);
      unchecked(jac[4 * i] = f / k); // jac has (K·2)×2 values
      unchecked(jac[4 * i + 1] = dFde * dedr);
      unchecked(jac[4 * i + 2] = 0);
      unchecked(jac[4 * i + 3] = dedr);
    }
    return Status.Ok;
  }
}

serveModel(new Ligament(), new Spec("model", "ligament-as")
  .withVersion("1.0.0")
  .withDoc("Blankevoort ligament (Bartsoen 2023 Eq. 1-2), AssemblyScript implementation: force and strain from length")
  .param(new Param("k", 2000, 12000, 5000).withUnit("N").withDoc("linear stiffness, force per unit strain (Table 2)"))
  .param(new Param("eps_r", -0.5, 0.4, 0).withUnit("1").withDoc("reference strain at the reference length (Table 2)"))
  .condition(new Column("length_mm").withUnit("mm").withDoc("current ligament length L"))
  .output(new Column("force_N").withUnit("N").withDoc("ligament force F, Eq. 1"))
  .output(new Column("strain").withUnit("1").withDoc("ligament strain, Eq. 2"))
  .setting(new Setting("ref_length_mm").isRequired().withUnit("mm").withDoc("reference length L_r (length at the reference position)"))
  .capability("jacobian")
  .capability("rows_independent"));
