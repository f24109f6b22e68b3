/*
 * Laplace (double-exponential) likelihood as a C plugin: a heavier-tailed
 * alternative to the Gaussian for outputs with outliers, with its
 * ∂logL/∂y and the "batch" capability (kinfer_likelihood_eval_batch, which
 * kinfer.h implements by calling likelihood_eval per point inside the
 * module).
 *
 *   log L = Σ_i −|y_i − o_i| / b_i − log(2 b_i),   b_i = σ_i / √2
 *
 * so that σ is the standard deviation of the Laplace distribution
 * (variance 2b²). Unobserved values (NaN observation) are skipped
 * (ABI.md §6.2).
 *
 * Build (repository root): go run ./cmd/kinfer build plugins/c/laplace
 */
#define KINFER_LIKELIHOOD
#include "kinfer.h"

#include <math.h>

const char kinfer_spec[] =
    "{\"kind\":\"likelihood\",\"name\":\"laplace-c\",\"version\":\"1.0.0\","
    "\"doc\":\"Laplace likelihood, scale b = sigma/sqrt(2) (sigma is the standard deviation)\","
    "\"capabilities\":[\"grad_y\",\"batch\"]}";

int likelihood_eval(int K, int m, const double *y, const double *obs, const double *sigma, double *out) {
  double ll = 0;
  for (int i = 0; i < K * m; i++) {
    if (isnan(obs[i])) continue;
    if (!(sigma[i] > 0)) return kinfer_error(KINFER_INVALID, "laplace-c: sigma[%d] = %g, want > 0", i, sigma[i]);
    double b = sigma[i] / M_SQRT2;
    ll -= fabs(y[i] - obs[i]) / b + log(2 * b);
  }
  *out = ll;
  return KINFER_OK;
}

int likelihood_grad(int K, int m, const double *y, const double *obs, const double *sigma, double *out, double *gy) {
  int st = likelihood_eval(K, m, y, obs, sigma, out);
  if (st != KINFER_OK) return st;
  for (int i = 0; i < K * m; i++) {
    if (isnan(obs[i])) {
      gy[i] = 0;
      continue;
    }
    double r = y[i] - obs[i];
    /* d/dy −|y − o|/b = −sign(y − o)/b; 0 at the kink (a subgradient). */
    gy[i] = r > 0 ? -M_SQRT2 / sigma[i] : r < 0 ? M_SQRT2 / sigma[i] : 0;
  }
  return KINFER_OK;
}
