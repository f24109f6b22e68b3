/*
 * ligament-c: the Blankevoort ligament, an independent C implementation of
 * kinfer's builtin model (builtin/models/ligament) with the same spec names,
 * so the two are interchangeable in a study.
 *
 * Source: Bartsoen et al. 2023, Mech. Syst. Signal Process. (docs/REFERENCES.md),
 * after Blankevoort & Huiskes 1991:
 *   Eq. 1  F = 0                    for ε < 0
 *          F = k ε² / (4 ε_l)       for 0 ≤ ε ≤ 2 ε_l
 *          F = k (ε − ε_l)          for ε > 2 ε_l,      ε_l = 0.03
 *   Eq. 2  ε = ((1 + ε_r) L − L_r) / L_r
 * Parameters (Table 2, union over bundles): k ∈ [2000, 12000] N,
 * ε_r ∈ [−0.5, 0.4]. Condition: length L [mm]. Setting: L_r [mm].
 *
 * Build (repository root):  go run ./cmd/kinfer build plugins/c/ligament
 * or by hand, in this directory:
 *   clang --target=wasm32-wasi -O2 -mexec-model=reactor -I ../../../sdk/c \
 *         -Wl,--stack-first -Wl,-z,stack-size=1048576 -o ligament.wasm ligament.c
 */
#define KINFER_MODEL
#include "kinfer.h"

const char kinfer_spec[] =
    "{\"kind\":\"model\",\"name\":\"ligament-c\",\"version\":\"1.0.0\","
    "\"doc\":\"Blankevoort ligament (Bartsoen 2023 Eq. 1-2), C implementation: force and strain from length\","
    "\"params\":["
    "{\"name\":\"k\",\"unit\":\"N\",\"lower\":2000,\"upper\":12000,\"default\":5000,"
    "\"doc\":\"linear stiffness, force per unit strain (Table 2)\"},"
    "{\"name\":\"eps_r\",\"unit\":\"1\",\"lower\":-0.5,\"upper\":0.4,\"default\":0,"
    "\"doc\":\"reference strain at the reference length (Table 2)\"}],"
    "\"conditions\":[{\"name\":\"length_mm\",\"unit\":\"mm\",\"doc\":\"current ligament length L\"}],"
    "\"outputs\":["
    "{\"name\":\"force_N\",\"unit\":\"N\",\"doc\":\"ligament force F, Eq. 1\"},"
    "{\"name\":\"strain\",\"unit\":\"1\",\"doc\":\"ligament strain, Eq. 2\"}],"
    "\"settings\":[{\"name\":\"ref_length_mm\",\"unit\":\"mm\",\"default\":0,\"required\":true,"
    "\"doc\":\"reference length L_r (length at the reference position)\"}],"
    "\"capabilities\":[\"jacobian\",\"pullback\",\"rows_independent\"]}";

/* ε_l of Eq. 1: "an experimentally fitted parameter equal to 0.03". */
#define EPS_L 0.03

static double ref_length; /* L_r [mm] */

int plugin_configure(const double *s, int n) {
  (void)n; /* n == 1: checked by kinfer.h against the spec */
  if (!(s[0] > 0)) return kinfer_error(KINFER_INVALID, "ligament-c: ref_length_mm must be > 0, got %g", s[0]);
  ref_length = s[0];
  return KINFER_OK;
}

/* Eq. 1: force at strain e and its derivative dF/dε. */
static double force(double k, double e, double *dfde) {
  if (e < 0) {
    *dfde = 0;
    return 0;
  }
  if (e <= 2 * EPS_L) {
    *dfde = 0.5 * k * e / EPS_L;
    return 0.25 * k * e * e / EPS_L;
  }
  *dfde = k;
  return k * (e - EPS_L);
}

int model_eval(const double *theta, int K, const double *x, double *y) {
  double k = theta[0], epsr = theta[1], d;
  for (int i = 0; i < K; i++) {
    double e = ((1 + epsr) * x[i] - ref_length) / ref_length; /* Eq. 2 */
    y[2 * i] = force(k, e, &d);
    y[2 * i + 1] = e;
  }
  return KINFER_OK;
}

/* Rows (F_i, ε_i), columns (k, ε_r): ∂F/∂k = F/k (F is linear in k),
 * ∂F/∂ε_r = dF/dε · L/L_r, ∂ε/∂k = 0, ∂ε/∂ε_r = L/L_r. */
int model_jacobian(const double *theta, int K, const double *x, double *y, double *jac) {
  double k = theta[0], epsr = theta[1], dfde;
  for (int i = 0; i < K; i++) {
    double dedr = x[i] / ref_length;
    double e = ((1 + epsr) * x[i] - ref_length) / ref_length;
    double f = force(k, e, &dfde);
    y[2 * i] = f;
    y[2 * i + 1] = e;
    double *r = jac + 4 * i;
    r[0] = f / k;
    r[1] = dfde * dedr;
    r[2] = 0;
    r[3] = dedr;
  }
  return KINFER_OK;
}

/* Capability pullback (ABI.md §6.1): the forward pass keeps, per row,
 * ∂F/∂k = F/k, ∂F/∂ε_r = dF/dε · L/L_r and ∂ε/∂ε_r = L/L_r (the Jacobian's
 * nonzero entries, as model_jacobian computes them); the backward pass sums
 * g = vᵀ·∂y/∂θ over the rows from that tape alone. The tape buffer grows
 * with K and is reused: it stays valid until the next call (kinfer.h). */
static double *tape_buf;
static int tape_cap;

int model_forward(const double *theta, int K, const double *x, double *y, const double **tape, int *n) {
  if (3 * K > tape_cap) {
    double *t = realloc(tape_buf, 3 * (size_t)K * sizeof *t);
    if (!t) return kinfer_error(KINFER_FAILED, "ligament-c: no memory for a tape of %d rows", K);
    tape_buf = t;
    tape_cap = 3 * K;
  }
  double k = theta[0], epsr = theta[1], dfde;
  for (int i = 0; i < K; i++) {
    double dedr = x[i] / ref_length;
    double e = ((1 + epsr) * x[i] - ref_length) / ref_length; /* Eq. 2 */
    double f = force(k, e, &dfde);
    y[2 * i] = f;
    y[2 * i + 1] = e;
    tape_buf[3 * i] = f / k;
    tape_buf[3 * i + 1] = dfde * dedr;
    tape_buf[3 * i + 2] = dedr;
  }
  *tape = tape_buf;
  *n = 3 * K;
  return KINFER_OK;
}

int model_pullback(const double *theta, int K, const double *x, const double *tape, int n, const double *v, double *g) {
  (void)theta;
  (void)x;
  if (n != 3 * K) return kinfer_error(KINFER_INVALID, "ligament-c: a tape of %d values for %d rows", n, K);
  double gk = 0, ge = 0;
  for (int i = 0; i < K; i++) {
    const double *t = tape + 3 * i;
    gk += v[2 * i] * t[0];
    ge += v[2 * i] * t[1] + v[2 * i + 1] * t[2];
  }
  g[0] = gk;
  g[1] = ge;
  return KINFER_OK;
}
