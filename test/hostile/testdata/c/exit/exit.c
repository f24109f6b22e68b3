/*
 * exit: a model that writes its reason to stderr and calls exit(3) (WASI
 * proc_exit) in its evaluation. The host reports a trap naming the plugin,
 * kinfer_model_eval and the guest's last output line.
 */
#define KINFER_MODEL
#include <stdio.h>
#include "kinfer.h"

const char kinfer_spec[] =
    "{\"kind\":\"model\",\"name\":\"exit\",\"version\":\"1.0.0\","
    "\"params\":[{\"name\":\"a\",\"lower\":0,\"upper\":1,\"default\":0.5}],"
    "\"conditions\":[{\"name\":\"x\"}],\"outputs\":[{\"name\":\"y\"}]}";

int model_eval(const double *theta, int K, const double *x, double *y) {
  (void)theta, (void)K, (void)x, (void)y;
  fprintf(stderr, "fatal: \x1b[31mgiving up\x1b[0m\n");
  exit(3);
}
