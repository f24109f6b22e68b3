/*
 * random: a model whose output depends on WASI random_get: y = a·x plus a
 * small term from 8 random bytes. ABI.md §8: a model must not do this; the
 * host makes random_get's stream restart at every call, so the results (and
 * samples.csv) still do not depend on --workers.
 */
#define KINFER_MODEL
#include "kinfer.h"
#include <unistd.h>

const char kinfer_spec[] =
    "{\"kind\":\"model\",\"name\":\"random\",\"version\":\"1.0.0\","
    "\"params\":[{\"name\":\"a\",\"lower\":0,\"upper\":1,\"default\":0.5}],"
    "\"conditions\":[{\"name\":\"x\"}],\"outputs\":[{\"name\":\"y\"}]}";

int model_eval(const double *theta, int K, const double *x, double *y) {
  unsigned char b[8];
  if (getentropy(b, sizeof b) != 0) return kinfer_error(KINFER_FAILED, "getentropy failed");
  double noise = 0;
  for (int i = 0; i < 8; i++) noise = noise * 256 + b[i];
  noise /= 18446744073709551616.0; /* 2^64: noise in [0, 1) */
  for (int k = 0; k < K; k++) y[k] = theta[0] * x[k] + 1e-3 * noise;
  return KINFER_OK;
}
