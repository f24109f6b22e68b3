/*
 * nist-c: the 27 NIST StRD nonlinear regression models, an independent C
 * implementation of kinfer's builtin model "nist" (builtin/models/nist) with
 * the same spec names, so the two are interchangeable in a study; each with
 * its analytic Jacobian.
 *
 * Source: NIST Statistical Reference Datasets, nonlinear regression
 * (https://www.itl.nist.gov/div898/strd/nls/nls_main.shtml, public domain):
 * the "Model:" line of each dataset's file (builtin/models/nist/testdata).
 * Parameters b1..b9 (ENSO has nine; a problem with fewer ignores the rest),
 * conditions x and x2 (Nelson's second predictor), output y (Nelson: log y).
 * The derivatives are those of builtin/models/nist/problems.go, written
 * again here; the plugin's test compares the two.
 *
 * Build (repository root):  go run ./cmd/kinfer build plugins/c/nist
 */
#define KINFER_MODEL
#include "kinfer.h"
#include <math.h>

const char kinfer_spec[] =
    "{\"kind\":\"model\",\"name\":\"nist-c\",\"version\":\"1.0.0\","
    "\"doc\":\"the 27 NIST StRD nonlinear regression models, one chosen by the setting problem, C implementation with analytic Jacobian\","
    "\"params\":[{\"name\":\"b1\",\"lower\":-1e9,\"upper\":1e9,\"default\":0,\"doc\":\"parameter b1 of the chosen problem (unused when it has fewer; fix it)\"},{\"name\":\"b2\",\"lower\":-1e9,\"upper\":1e9,\"default\":0,\"doc\":\"parameter b2 of the chosen problem (unused when it has fewer; fix it)\"},{\"name\":\"b3\",\"lower\":-1e9,\"upper\":1e9,\"default\":0,\"doc\":\"parameter b3 of the chosen problem (unused when it has fewer; fix it)\"},{\"name\":\"b4\",\"lower\":-1e9,\"upper\":1e9,\"default\":0,\"doc\":\"parameter b4 of the chosen problem (unused when it has fewer; fix it)\"},{\"name\":\"b5\",\"lower\":-1e9,\"upper\":1e9,\"default\":0,\"doc\":\"parameter b5 of the chosen problem (unused when it has fewer; fix it)\"},{\"name\":\"b6\",\"lower\":-1e9,\"upper\":1e9,\"default\":0,\"doc\":\"parameter b6 of the chosen problem (unused when it has fewer; fix it)\"},{\"name\":\"b7\",\"lower\":-1e9,\"upper\":1e9,\"default\":0,\"doc\":\"parameter b7 of the chosen problem (unused when it has fewer; fix it)\"},{\"name\":\"b8\",\"lower\":-1e9,\"upper\":1e9,\"default\":0,\"doc\":\"parameter b8 of the chosen problem (unused when it has fewer; fix it)\"},{\"name\":\"b9\",\"lower\":-1e9,\"upper\":1e9,\"default\":0,\"doc\":\"parameter b9 of the chosen problem (unused when it has fewer; fix it)\"}],"
    "\"conditions\":[{\"name\":\"x\",\"doc\":\"the predictor x (Nelson: x1)\"},{\"name\":\"x2\",\"doc\":\"Nelson's second predictor x2; ignored by the other 26 problems (give 0)\"}],"
    "\"outputs\":[{\"name\":\"y\",\"doc\":\"the response y (Nelson: log y)\"}],"
    "\"settings\":[{\"name\":\"problem\",\"default\":0,\"choices\":[\"Misra1a\",\"Chwirut2\",\"Chwirut1\",\"Lanczos3\",\"Gauss1\",\"Gauss2\",\"DanWood\",\"Misra1b\",\"Kirby2\",\"Hahn1\",\"Nelson\",\"MGH17\",\"Lanczos1\",\"Lanczos2\",\"Gauss3\",\"Misra1c\",\"Misra1d\",\"Roszman1\",\"ENSO\",\"MGH09\",\"Thurber\",\"BoxBOD\",\"Rat42\",\"MGH10\",\"Eckerle4\",\"Rat43\",\"Bennett5\"],\"doc\":\"which StRD problem (NIST's names)\"}],"
    "\"capabilities\":[\"jacobian\",\"rows_independent\"]}";

#define D 9
#define PI 3.14159265358979323846

static int problem; /* index into NIST's order, the spec's choices */

int plugin_configure(const double *s, int n) {
  (void)n;
  if (!(s[0] >= 0 && s[0] < 27) || s[0] != (double)(int)s[0])
    return kinfer_error(KINFER_INVALID, "nist-c: problem must be an index 0 to 26, got %g", s[0]);
  problem = (int)s[0];
  return KINFER_OK;
}

/* Each f returns y at (x1, x2) and, when g is not NULL, writes dy/db into
 * g[0..P-1]; g[P..8] are left as the caller set them (zero). */

static double misra1a(const double *b, double x, double x2, double *g) { /* also BoxBOD */
  double e = exp(-b[1] * x);
  (void)x2;
  if (g) { g[0] = 1 - e; g[1] = b[0] * x * e; }
  return b[0] * (1 - e);
}

static double chwirut(const double *b, double x, double x2, double *g) {
  double e = exp(-b[0] * x), u = b[1] + b[2] * x;
  (void)x2;
  if (g) { g[0] = -x * e / u; g[1] = -e / (u * u); g[2] = -x * e / (u * u); }
  return e / u;
}

static double lanczos(const double *b, double x, double x2, double *g) {
  double y = 0;
  (void)x2;
  for (int i = 0; i < 6; i += 2) {
    double e = exp(-b[i + 1] * x);
    y += b[i] * e;
    if (g) { g[i] = e; g[i + 1] = -x * b[i] * e; }
  }
  return y;
}

static double gauss(const double *b, double x, double x2, double *g) {
  double e1 = exp(-b[1] * x), y = b[0] * e1;
  (void)x2;
  if (g) { g[0] = e1; g[1] = -x * b[0] * e1; }
  for (int k = 2; k <= 5; k += 3) {
    double a = b[k], c = b[k + 1], w = b[k + 2], d = x - c;
    double e = exp(-d * d / (w * w));
    y += a * e;
    if (g) { g[k] = e; g[k + 1] = a * e * 2 * d / (w * w); g[k + 2] = a * e * 2 * d * d / (w * w * w); }
  }
  return y;
}

static double danwood(const double *b, double x, double x2, double *g) {
  double p = pow(x, b[1]);
  (void)x2;
  if (g) { g[0] = p; g[1] = b[0] * p * log(x); }
  return b[0] * p;
}

static double misra1b(const double *b, double x, double x2, double *g) {
  double u = 1 + b[1] * x / 2;
  (void)x2;
  if (g) { g[0] = 1 - 1 / (u * u); g[1] = b[0] * x / (u * u * u); }
  return b[0] * (1 - 1 / (u * u));
}

static double kirby2(const double *b, double x, double x2, double *g) {
  double n = b[0] + x * (b[1] + x * b[2]), d = 1 + x * (b[3] + x * b[4]);
  (void)x2;
  if (g) { g[0] = 1 / d; g[1] = x / d; g[2] = x * x / d; g[3] = -n * x / (d * d); g[4] = -n * x * x / (d * d); }
  return n / d;
}

static double rational33(const double *b, double x, double x2, double *g) { /* Hahn1, Thurber */
  double n = b[0] + x * (b[1] + x * (b[2] + x * b[3])), d = 1 + x * (b[4] + x * (b[5] + x * b[6]));
  (void)x2;
  if (g) {
    double xk = 1;
    for (int k = 0; k < 4; k++) {
      g[k] = xk / d;
      if (k > 0) g[3 + k] = -n * xk / (d * d);
      xk *= x;
    }
  }
  return n / d;
}

static double nelson(const double *b, double x1, double x2, double *g) {
  double e = exp(-b[2] * x2);
  if (g) { g[0] = 1; g[1] = -x1 * e; g[2] = b[1] * x1 * x2 * e; }
  return b[0] - b[1] * x1 * e;
}

static double mgh17(const double *b, double x, double x2, double *g) {
  double e4 = exp(-x * b[3]), e5 = exp(-x * b[4]);
  (void)x2;
  if (g) { g[0] = 1; g[1] = e4; g[2] = e5; g[3] = -x * b[1] * e4; g[4] = -x * b[2] * e5; }
  return b[0] + b[1] * e4 + b[2] * e5;
}

static double misra1c(const double *b, double x, double x2, double *g) {
  double u = 1 + 2 * b[1] * x, s = 1 / sqrt(u);
  (void)x2;
  if (g) { g[0] = 1 - s; g[1] = b[0] * x * s / u; }
  return b[0] * (1 - s);
}

static double misra1d(const double *b, double x, double x2, double *g) {
  double u = 1 + b[1] * x;
  (void)x2;
  if (g) { g[0] = b[1] * x / u; g[1] = b[0] * x / (u * u); }
  return b[0] * b[1] * x / u;
}

static double roszman1(const double *b, double x, double x2, double *g) {
  double w = x - b[3], t = b[2] / w;
  (void)x2;
  if (g) {
    double c = 1 / (PI * (1 + t * t));
    g[0] = 1; g[1] = -x; g[2] = -c / w; g[3] = -c * b[2] / (w * w);
  }
  return b[0] - b[1] * x - atan(t) / PI;
}

static double enso(const double *b, double x, double x2, double *g) {
  double a = 2 * PI * x / 12, y = b[0] + b[1] * cos(a) + b[2] * sin(a);
  (void)x2;
  if (g) { g[0] = 1; g[1] = cos(a); g[2] = sin(a); }
  for (int k = 3; k <= 6; k += 3) {
    double ak = 2 * PI * x / b[k], c = cos(ak), s = sin(ak);
    y += b[k + 1] * c + b[k + 2] * s;
    if (g) { g[k] = (b[k + 1] * s - b[k + 2] * c) * ak / b[k]; g[k + 1] = c; g[k + 2] = s; }
  }
  return y;
}

static double mgh09(const double *b, double x, double x2, double *g) {
  double n = x * x + x * b[1], d = x * x + x * b[2] + b[3];
  (void)x2;
  if (g) { g[0] = n / d; g[1] = b[0] * x / d; g[2] = -b[0] * n * x / (d * d); g[3] = -b[0] * n / (d * d); }
  return b[0] * n / d;
}

static double rat42(const double *b, double x, double x2, double *g) {
  double e = exp(b[1] - b[2] * x), u = 1 + e;
  (void)x2;
  if (g) { g[0] = 1 / u; g[1] = -b[0] * e / (u * u); g[2] = b[0] * x * e / (u * u); }
  return b[0] / u;
}

static double mgh10(const double *b, double x, double x2, double *g) {
  double w = x + b[2], e = exp(b[1] / w);
  (void)x2;
  if (g) { g[0] = e; g[1] = b[0] * e / w; g[2] = -b[0] * e * b[1] / (w * w); }
  return b[0] * e;
}

static double eckerle4(const double *b, double x, double x2, double *g) {
  double z = (x - b[2]) / b[1], e = exp(-0.5 * z * z);
  (void)x2;
  if (g) { g[0] = e / b[1]; g[1] = b[0] * e * (z * z - 1) / (b[1] * b[1]); g[2] = b[0] * e * z / (b[1] * b[1]); }
  return b[0] / b[1] * e;
}

static double rat43(const double *b, double x, double x2, double *g) {
  double e = exp(b[1] - b[2] * x), u = 1 + e, p = pow(u, -1 / b[3]);
  (void)x2;
  if (g) {
    g[0] = p; g[1] = -b[0] * p * e / (b[3] * u); g[2] = b[0] * p * e * x / (b[3] * u);
    g[3] = b[0] * p * log(u) / (b[3] * b[3]);
  }
  return b[0] * p;
}

static double bennett5(const double *b, double x, double x2, double *g) {
  double u = b[1] + x, p = pow(u, -1 / b[2]);
  (void)x2;
  if (g) { g[0] = p; g[1] = -b[0] * p / (b[2] * u); g[2] = b[0] * p * log(u) / (b[2] * b[2]); }
  return b[0] * p;
}

typedef double (*model_fn)(const double *, double, double, double *);

/* NIST's order, as the spec's choices. */
static const model_fn models[27] = {
    misra1a, chwirut, chwirut, lanczos, gauss, gauss, danwood, misra1b, kirby2,
    rational33, nelson, mgh17, lanczos, lanczos, gauss, misra1c, misra1d, roszman1,
    enso, mgh09, rational33, misra1a, rat42, mgh10, eckerle4, rat43, bennett5,
};

int model_eval(const double *theta, int K, const double *x, double *y) {
  model_fn f = models[problem];
  for (int k = 0; k < K; k++) y[k] = f(theta, x[2 * k], x[2 * k + 1], 0);
  return KINFER_OK;
}

int model_jacobian(const double *theta, int K, const double *x, double *y, double *jac) {
  model_fn f = models[problem];
  for (int k = 0; k < K; k++) {
    double *row = jac + D * k;
    for (int j = 0; j < D; j++) row[j] = 0;
    y[k] = f(theta, x[2 * k], x[2 * k + 1], row);
  }
  return KINFER_OK;
}
