/*
 * clockspin: a model that busy-waits for the monotonic clock to advance by
 * a millisecond. The sandbox's clocks are frozen (ABI.md §8), so it never
 * does, and the host stops the call (fuel or timeout_ms).
 */
#define KINFER_MODEL
#include "kinfer.h"
#include <time.h>

const char kinfer_spec[] =
    "{\"kind\":\"model\",\"name\":\"clockspin\",\"version\":\"1.0.0\","
    "\"params\":[{\"name\":\"a\",\"lower\":0,\"upper\":1,\"default\":0.5}],"
    "\"conditions\":[{\"name\":\"x\"}],\"outputs\":[{\"name\":\"y\"}]}";

int model_eval(const double *theta, int K, const double *x, double *y) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do {
    clock_gettime(CLOCK_MONOTONIC, &t);
  } while ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) < 1000000);
  for (int k = 0; k < K; k++) y[k] = theta[0] * x[k];
  return KINFER_OK;
}
