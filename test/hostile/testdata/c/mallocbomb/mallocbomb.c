/*
 * mallocbomb: a model that mallocs 1 MiB blocks (touching every page) until
 * malloc fails (its memory_mib bounds the memory), frees them, then
 * evaluates y = a·x. The host's own memory must not follow the guest's.
 */
#define KINFER_MODEL
#include "kinfer.h"

const char kinfer_spec[] =
    "{\"kind\":\"model\",\"name\":\"mallocbomb\",\"version\":\"1.0.0\","
    "\"params\":[{\"name\":\"a\",\"lower\":0,\"upper\":1,\"default\":0.5}],"
    "\"conditions\":[{\"name\":\"x\"}],\"outputs\":[{\"name\":\"y\"}]}";

int model_eval(const double *theta, int K, const double *x, double *y) {
  static void *blocks[1 << 12];
  int n = 0;
  while (n < (int)(sizeof blocks / sizeof blocks[0]) && (blocks[n] = malloc(1 << 20)) != NULL) {
    for (int i = 0; i < 1 << 20; i += 4096) ((volatile char *)blocks[n])[i] = 1; /* commit every page */
    n++;
  }
  while (n > 0) free(blocks[--n]);
  for (int k = 0; k < K; k++) y[k] = theta[0] * x[k];
  return KINFER_OK;
}
