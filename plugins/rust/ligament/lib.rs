//! ligament-rust: the Blankevoort ligament, an independent Rust
//! implementation of kinfer's builtin model (builtin/models/ligament) with
//! the same spec names, so the two are interchangeable in a study.
//!
//! Source: Bartsoen et al. 2023, Mech. Syst. Signal Process. (docs/REFERENCES.md),
//! after Blankevoort & Huiskes 1991:
//!   Eq. 1  F = 0                    for ε < 0
//!          F = k ε² / (4 ε_l)       for 0 ≤ ε ≤ 2 ε_l
//!          F = k (ε − ε_l)          for ε > 2 ε_l,      ε_l = 0.03
//!   Eq. 2  ε = ((1 + ε_r) L − L_r) / L_r
//! Parameters (Table 2, union over bundles): k ∈ [2000, 12000] N,
//! ε_r ∈ [−0.5, 0.4]. Condition: length L [mm]. Setting: L_r [mm].
//!
//! Build (repository root):  go run ./cmd/kinfer build plugins/rust/ligament
//! (Debian: apt-get install rustc libstd-rust-dev-wasm32).

use kinfer::{Column, Model, Param, Setting, Spec, Status};

/// ε_l of Eq. 1: "an experimentally fitted parameter equal to 0.03".
const EPS_L: f64 = 0.03;

struct Ligament {
    ref_length: f64, // L_r [mm]
}

/// Eq. 1: force at strain e and its derivative dF/dε.
#[inline]
fn force(k: f64, e: f64) -> (f64, f64) {
    if e < 0.0 {
        (0.0, 0.0)
    } else if e <= 2.0 * EPS_L {
        (0.25 * k * e * e / EPS_L, 0.5 * k * e / EPS_L)
    } else {
        (k * (e - EPS_L), k)
    }
}

impl Model for Ligament {
    const SPEC: Spec = Spec::model("ligament-rust")
        .version("1.0.0")
        .doc("Blankevoort ligament (Bartsoen 2023 Eq. 1-2), Rust implementation: force and strain from length")
        .params(&[
            Param::new("k", 2000.0, 12000.0, 5000.0).unit("N").doc("linear stiffness, force per unit strain (Table 2)"),
            Param::new("eps_r", -0.5, 0.4, 0.0).unit("1").doc("reference strain at the reference length (Table 2)"),
        ])
        .conditions(&[Column::new("length_mm").unit("mm").doc("current ligament length L")])
        .outputs(&[
            Column::new("force_N").unit("N").doc("ligament force F, Eq. 1"),
            Column::new("strain").unit("1").doc("ligament strain, Eq. 2"),
        ])
        .settings(&[Setting::required("ref_length_mm")
            .unit("mm")
            .doc("reference length L_r (length at the reference position)")])
        .capabilities(&["jacobian", "rows_independent"]);

    fn new(s: &[f64]) -> Result<Self, String> {
        if !(s[0] > 0.0) {
            return Err(format!("ligament-rust: ref_length_mm must be > 0, got {}", s[0]));
        }
        Ok(Ligament { ref_length: s[0] })
    }

    fn eval(&self, theta: &[f64], x: &[f64], y: &mut [f64]) -> Status {
        let (k, epsr, lr) = (theta[0], theta[1], self.ref_length);
        for (l, yi) in x.iter().zip(y.chunks_exact_mut(2)) {
            let e = ((1.0 + epsr) * l - lr) / lr; // Eq. 2
            yi[0] = force(k, e).0;
            yi[1] = e;
        }
        Status::Ok
    }

    /// Rows (F_i, ε_i), columns (k, ε_r): ∂F/∂k = F/k (F is linear in k),
    /// ∂F/∂ε_r = dF/dε · L/L_r, ∂ε/∂k = 0, ∂ε/∂ε_r = L/L_r.
    fn jacobian(&self, theta: &[f64], x: &[f64], y: &mut [f64], jac: &mut [f64]) -> Status {
        let (k, epsr, lr) = (theta[0], theta[1], self.ref_length);
        for (i, l) in x.iter().enumerate() {
            let dedr = l / lr;
            let e = ((1.0 + epsr) * l - lr) / lr;
            let (f, dfde) = force(k, e);
            y[2 * i] = f;
            y[2 * i + 1] = e;
            let r = &mut jac[4 * i..4 * i + 4];
            r[0] = f / k;
            r[1] = dfde * dedr;
            r[2] = 0.0;
            r[3] = dedr;
        }
        Status::Ok
    }
}

kinfer::export_model!(Ligament);
