/*
 * bigstack: y = a·x computed through a 512 KiB local array and a
 * recursion of 2 000 frames of 128 bytes. With wasm-ld's default layout
 * (a 64 KiB stack above the static data) this overwrote the plugin's and
 * kinfer.h's globals (garbage statuses and messages; audit 4); kinfer
 * build links C with the 1 MiB stack first, so the model gives y = a·x,
 * and a deeper recursion would trap instead of corrupting anything.
 */
#define KINFER_MODEL
#include "kinfer.h"

const char kinfer_spec[] =
    "{\"kind\":\"model\",\"name\":\"bigstack\",\"version\":\"1.0.0\","
    "\"params\":[{\"name\":\"a\",\"lower\":0,\"upper\":1,\"default\":0.5}],"
    "\"conditions\":[{\"name\":\"x\"}],\"outputs\":[{\"name\":\"y\"}]}";

static int calls; /* a global the old layout's overflow overwrote */

static double deep(int n, double v) {
  volatile double frame[16];
  frame[n % 16] = v;
  return n == 0 ? frame[0] : deep(n - 1, frame[n % 16]);
}

int model_eval(const double *theta, int K, const double *x, double *y) {
  volatile double big[65536]; /* 512 KiB */
  int before = calls;
  for (int i = 0; i < 65536; i++) big[i] = theta[0];
  double a = deep(2000, big[65535]);
  calls = before + 1;
  if (calls != before + 1) return kinfer_error(KINFER_FAILED, "a global changed under the stack");
  for (int k = 0; k < K; k++) y[k] = a * x[k];
  return KINFER_OK;
}
