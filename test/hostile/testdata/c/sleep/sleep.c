/*
 * sleep: a model that sleeps 10 s in every evaluation (libc sleep, WASI
 * poll_oneoff on a clock). The sandbox's sleep returns at once (ABI.md §8),
 * so the run must finish quickly: y = a·x.
 */
#define KINFER_MODEL
#include "kinfer.h"
#include <unistd.h>

const char kinfer_spec[] =
    "{\"kind\":\"model\",\"name\":\"sleep\",\"version\":\"1.0.0\","
    "\"params\":[{\"name\":\"a\",\"lower\":0,\"upper\":1,\"default\":0.5}],"
    "\"conditions\":[{\"name\":\"x\"}],\"outputs\":[{\"name\":\"y\"}]}";

int model_eval(const double *theta, int K, const double *x, double *y) {
  sleep(10);
  for (int k = 0; k < K; k++) y[k] = theta[0] * x[k];
  return KINFER_OK;
}
