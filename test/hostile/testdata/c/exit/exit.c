/*
 * exit: a model that calls exit(3) (WASI proc_exit) in its evaluation. The
 * host reports a trap naming the plugin and kinfer_model_eval.
 */
#define KINFER_MODEL
#include "kinfer.h"

const char kinfer_spec[] =
    "{\"kind\":\"model\",\"name\":\"exit\",\"version\":\"1.0.0\","
    "\"params\":[{\"name\":\"a\",\"lower\":0,\"upper\":1,\"default\":0.5}],"
    "\"conditions\":[{\"name\":\"x\"}],\"outputs\":[{\"name\":\"y\"}]}";

int model_eval(const double *theta, int K, const double *x, double *y) {
  (void)theta, (void)K, (void)x, (void)y;
  exit(3);
}
