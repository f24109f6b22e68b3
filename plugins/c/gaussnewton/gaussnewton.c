/*
 * Gauss–Newton least squares as a kinfer method plugin, written against
 * abi/ABI.md alone (§1–§6.3 and the least-squares extension §6.4), without
 * kinfer.h: it shows what a third party implements.
 *
 * The method minimises ½‖r(θ)‖², the study's residuals, from each of the
 * problem's starting points (§6.4 kinfer_method_problem):
 *
 *   θ_{n+1} = θ_n − α·J⁺·r          (Gouveia et al., "Identification of
 *                                     flexible multibody systems", Eq. 13)
 *
 * with J = ∂r/∂θ from the host, J⁺ the Moore–Penrose pseudo-inverse (so a
 * singular or rank-deficient Jacobian gives the minimum-norm step instead
 * of a failure) and α = 1, ½, ¼, … halved until ½‖r‖² decreases (step
 * halving). The pseudo-inverse is computed on the column-scaled Jacobian
 * J·D⁻¹ (D = column norms) by a Householder QR, J·D⁻¹ = Q·R, and a one-sided
 * Jacobi SVD of the small triangle R = U·Σ·Vᵀ (Hestenes 1958; Golub & Van
 * Loan, Matrix Computations, 4th ed., Sec. 5.2 and 8.6.3): δ = −D⁻¹·V·Σ⁺·Uᵀ·
 * (Qᵀr)_{1..k}, singular values below rcond·σ_max treated as zero.
 *
 * Bounds: a parameter on a bound whose step points outwards is held there
 * (removed from the step, which is then recomputed on the others), and a
 * trial point is projected onto the box.
 *
 * Stops a start when the step is below xtol in every coordinate
 * (|δ_j| ≤ xtol·(|θ_j| + xtol)), the residuals are exactly zero, three
 * full steps in a row change ½‖r‖² only by rounding (they are taken: near
 * the solution a step is accurate while its decrease is invisible), no
 * decrease is found within max_halvings halvings, or after max_iter
 * iterations. Reports the best
 * start's solution as its only sample.
 *
 * Build (repository root): go run ./cmd/kinfer build plugins/c/gaussnewton
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT(name) __attribute__((export_name(name)))

/* ---- §3: the exports every plugin has ---------------------------------- */

static const char spec[] =
    "{\"kind\":\"method\",\"name\":\"gaussnewton-c\",\"version\":\"1.0.0\","
    "\"doc\":\"Gauss-Newton least squares (Gouveia Eq. 13): pseudo-inverse step on the column-scaled Jacobian, "
    "step halving, bounds by projection; from each start, reports the best\","
    "\"settings\":["
    "{\"name\":\"max_iter\",\"default\":200,\"doc\":\"iterations per start\"},"
    "{\"name\":\"xtol\",\"default\":1e-12,\"doc\":\"stop when every |step_j| <= xtol*(|theta_j| + xtol)\"},"
    "{\"name\":\"max_halvings\",\"default\":40,\"doc\":\"halvings of a step before the start stops\"},"
    "{\"name\":\"rcond\",\"default\":0,\"doc\":\"singular values below rcond*max are dropped; 0: max(R, d)*eps\"}"
    "],"
    "\"capabilities\":[\"least_squares\"]}";

static char errbuf[1024];

static int fail(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(errbuf, sizeof errbuf, fmt, ap);
  va_end(ap);
  return code;
}

/* A packed span (§2): length in the high 32 bits, pointer in the low. */
static int64_t span(const void *p, size_t n) {
  return (int64_t)(((uint64_t)n << 32) | (uint32_t)(uintptr_t)p);
}

EXPORT("kinfer_abi_version") int32_t kinfer_abi_version(void) { return 1; }
EXPORT("kinfer_describe") int64_t kinfer_describe(void) { return span(spec, sizeof spec - 1); }
EXPORT("kinfer_alloc") int32_t kinfer_alloc(int32_t n) { return (int32_t)(uintptr_t)malloc(n > 0 ? (size_t)n : 1); }
EXPORT("kinfer_free") void kinfer_free(int32_t p, int32_t n) { (void)n; free((void *)(uintptr_t)p); }
EXPORT("kinfer_last_error") int64_t kinfer_last_error(void) { return span(errbuf, strlen(errbuf)); }

/* Settings, in spec order. */
static int max_iter = 200, max_halvings = 40;
static double xtol = 1e-12, rcond = 0;

EXPORT("kinfer_configure") int32_t kinfer_configure(const double *v, int32_t n) {
  if (n != 4) return fail(1, "gaussnewton-c: %d settings, want 4", n);
  if (!(v[0] >= 1 && v[0] <= 1e6 && v[0] == floor(v[0]))) return fail(1, "max_iter must be an integer in [1, 1e6], got %g", v[0]);
  if (!(v[1] >= 0 && v[1] < 1)) return fail(1, "xtol must be in [0, 1), got %g", v[1]);
  if (!(v[2] >= 1 && v[2] <= 60 && v[2] == floor(v[2]))) return fail(1, "max_halvings must be an integer in [1, 60], got %g", v[2]);
  if (!(v[3] >= 0 && v[3] < 1)) return fail(1, "rcond must be in [0, 1), got %g", v[3]);
  max_iter = (int)v[0];
  xtol = v[1];
  max_halvings = (int)v[2];
  rcond = v[3];
  return 0;
}

/* ---- the method's state ------------------------------------------------ */

enum { PH_NONE, PH_START, PH_TRIAL, PH_JAC, PH_DONE };

static int d = -1, R, S;              /* parameters, residuals, starts */
static double *lo, *hi, *starts;      /* bounds, S×d starts */
static char **names;                  /* d names, for the report */
static int phase = PH_NONE, start;    /* current start */
static double *x, *r, *J;             /* iterate, its residuals and Jacobian (R×d) */
static double cost, lp, ll;           /* ½‖r‖², log prior and likelihood at x */
static double *step, *trial, alpha;   /* the Gauss–Newton step, the point tried, its fraction */
static int iter, halvings, evals, rank, flat;
static double *work, *qtb;            /* R×d column-major copy, Qᵀ·(−r) */
static double *tri, *V;               /* d×d triangle (columns), right singular vectors */
static double *colscale, *sigma, *ysv; /* column norms, singular values, Σ⁺Uᵀb */
static int *freecol, *idx;
static const char *reason;

/* Best over the starts, and per start. */
static double *best;
static double best_cost = INFINITY, best_lp, best_ll;
static int best_start = -1;
typedef struct {
  double cost;
  int iter, evals;
  const char *reason;
} start_result;
static start_result *results;

static void *alloc0(size_t n, size_t size) { return calloc(n ? n : 1, size); }

EXPORT("kinfer_method_init") int32_t kinfer_method_init(int32_t nd, int64_t seed, const double *lower, const double *upper) {
  (void)seed; /* deterministic: no randomness */
  if (nd < 1) return fail(1, "init with d = %d", nd);
  if (d != -1) return fail(1, "init called twice");
  d = nd;
  lo = alloc0(d, sizeof *lo);
  hi = alloc0(d, sizeof *hi);
  if (!lo || !hi) return fail(1, "out of memory for %d bounds", d);
  for (int j = 0; j < d; j++) {
    lo[j] = lower[j];
    hi[j] = upper[j];
    if (!(lo[j] < hi[j])) return fail(1, "parameter %d has bounds [%g, %g]", j, lo[j], hi[j]);
  }
  return 0;
}

/* §6.4: names, defaults, R and the starts, right after init. */
EXPORT("kinfer_method_problem")
int32_t kinfer_method_problem(int32_t nd, int32_t nr, const double *defaults, int32_t ns, const double *st,
                              const char *nm, int32_t nmlen) {
  (void)defaults; /* the host's starts already fall back to them */
  if (d < 1 || nd != d) return fail(1, "problem with d = %d after init with %d", nd, d);
  if (nr < 1 || ns < 1) return fail(1, "problem with R = %d, S = %d", nr, ns);
  if (phase != PH_NONE) return fail(1, "problem called twice");
  R = nr;
  S = ns;
  size_t rd = (size_t)R * (size_t)d;
  if (rd / (size_t)d != (size_t)R || rd > SIZE_MAX / 8 / 2) return fail(1, "R×d = %d×%d too large", R, d);
  starts = alloc0((size_t)S * d, sizeof *starts);
  names = alloc0(d, sizeof *names);
  x = alloc0(d, sizeof *x);
  step = alloc0(d, sizeof *step);
  trial = alloc0(d, sizeof *trial);
  best = alloc0(d, sizeof *best);
  colscale = alloc0(d, sizeof *colscale);
  sigma = alloc0(d, sizeof *sigma);
  ysv = alloc0(d, sizeof *ysv);
  freecol = alloc0(d, sizeof *freecol);
  idx = alloc0(d, sizeof *idx);
  tri = alloc0((size_t)d * d, sizeof *tri);
  V = alloc0((size_t)d * d, sizeof *V);
  r = alloc0(R, sizeof *r);
  qtb = alloc0(R, sizeof *qtb);
  J = alloc0(rd, sizeof *J);
  work = alloc0(rd, sizeof *work);
  results = alloc0(S, sizeof *results);
  if (!starts || !names || !x || !step || !trial || !best || !colscale || !sigma || !ysv || !freecol || !idx || !tri ||
      !V || !r || !qtb || !J || !work || !results)
    return fail(1, "out of memory for %d residuals × %d parameters (raise memory_mib)", R, d);
  memcpy(starts, st, (size_t)S * d * sizeof *starts);
  for (int i = 0; i < S * d; i++) {
    int j = i % d;
    if (!(starts[i] >= lo[j] && starts[i] <= hi[j])) return fail(1, "start %d is outside the bounds at parameter %d", i / d, j);
  }
  /* d names, each followed by a NUL byte. */
  int k = 0;
  for (int32_t i = 0, from = 0; i < nmlen; i++) {
    if (nm[i] != 0) continue;
    if (k == d) return fail(1, "more than %d names", d);
    names[k] = alloc0((size_t)(i - from) + 1, 1);
    if (!names[k]) return fail(1, "out of memory for names");
    memcpy(names[k++], nm + from, (size_t)(i - from));
    from = i + 1;
  }
  if (k != d || (nmlen > 0 && nm[nmlen - 1] != 0)) return fail(1, "%d NUL-terminated names, want %d", k, d);
  for (int i = 0; i < S; i++) results[i] = (start_result){INFINITY, 0, 0, "not run"};
  phase = PH_START;
  start = 0;
  return 0;
}

/* ---- linear algebra: the pseudo-inverse step ---------------------------- */

/* One-sided Jacobi SVD of the k×k matrix B (columns B[j*k..]): on return
 * the columns of B are U·Σ (mutually orthogonal) and V (k×k, columns) the
 * right singular vectors. */
static void jacobi_svd(double *B, double *Vm, int k) {
  for (int i = 0; i < k * k; i++) Vm[i] = 0;
  for (int j = 0; j < k; j++) Vm[j * k + j] = 1;
  for (int sweep = 0; sweep < 80; sweep++) {
    int rotated = 0;
    for (int p = 0; p < k - 1; p++) {
      for (int q = p + 1; q < k; q++) {
        double *bp = B + p * k, *bq = B + q * k;
        double a = 0, b = 0, g = 0;
        for (int i = 0; i < k; i++) {
          a += bp[i] * bp[i];
          b += bq[i] * bq[i];
          g += bp[i] * bq[i];
        }
        if (g == 0 || fabs(g) <= DBL_EPSILON * sqrt(a * b)) continue;
        rotated = 1;
        double zeta = (b - a) / (2 * g);
        double t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1 + zeta * zeta));
        double c = 1 / sqrt(1 + t * t), s = c * t;
        for (int i = 0; i < k; i++) {
          double u = bp[i], w = bq[i];
          bp[i] = c * u - s * w;
          bq[i] = s * u + c * w;
        }
        double *vp = Vm + p * k, *vq = Vm + q * k;
        for (int i = 0; i < k; i++) {
          double u = vp[i], w = vq[i];
          vp[i] = c * u - s * w;
          vq[i] = s * u + c * w;
        }
      }
    }
    if (!rotated) break;
  }
}

/* solve sets step[] to the minimum-norm least-squares solution of
 * J_F·δ_F = −r over the columns F with freecol[j] (others 0), through the
 * column-scaled QR and the SVD of its triangle. Returns the numerical rank. */
static int solve(void) {
  int k = 0;
  for (int j = 0; j < d; j++) {
    step[j] = 0;
    if (!freecol[j]) continue;
    double s = 0;
    for (int i = 0; i < R; i++) s += J[(size_t)i * d + j] * J[(size_t)i * d + j];
    colscale[j] = sqrt(s);
    if (colscale[j] > 0) idx[k++] = j; /* a zero column: no step there */
  }
  if (k == 0) return 0;
  /* work: the k scaled columns, column-major; qtb = −r. */
  for (int c = 0; c < k; c++)
    for (int i = 0; i < R; i++) work[(size_t)c * R + i] = J[(size_t)i * d + idx[c]] / colscale[idx[c]];
  for (int i = 0; i < R; i++) qtb[i] = -r[i];
  /* Householder QR: column c is reduced below its diagonal; the reflector
   * is applied to the later columns and to qtb. */
  int m = k < R ? k : R;
  for (int c = 0; c < m; c++) {
    double *col = work + (size_t)c * R;
    double norm = 0;
    for (int i = c; i < R; i++) norm += col[i] * col[i];
    norm = sqrt(norm);
    if (norm == 0) continue;
    double alpha_h = col[c] > 0 ? -norm : norm;
    double v0 = col[c] - alpha_h;      /* v = (v0, col[c+1..]) */
    double vv = v0 * v0 + norm * norm - col[c] * col[c];
    col[c] = v0;
    for (int c2 = c + 1; c2 < k; c2++) {
      double *o = work + (size_t)c2 * R, dot = 0;
      for (int i = c; i < R; i++) dot += col[i] * o[i];
      double f = 2 * dot / vv;
      for (int i = c; i < R; i++) o[i] -= f * col[i];
    }
    double dot = 0;
    for (int i = c; i < R; i++) dot += col[i] * qtb[i];
    double f = 2 * dot / vv;
    for (int i = c; i < R; i++) qtb[i] -= f * col[i];
    col[c] = alpha_h; /* the diagonal of the triangle */
  }
  /* The triangle (k×k when R ≥ k; rows beyond R are zero), by columns. */
  for (int c = 0; c < k; c++)
    for (int i = 0; i < k; i++) tri[c * k + i] = (i <= c && i < R) ? work[(size_t)c * R + i] : 0;
  jacobi_svd(tri, V, k);
  double smax = 0;
  for (int c = 0; c < k; c++) {
    double s = 0;
    for (int i = 0; i < k; i++) s += tri[c * k + i] * tri[c * k + i];
    sigma[c] = sqrt(s);
    if (sigma[c] > smax) smax = sigma[c];
  }
  double tol = (rcond > 0 ? rcond : (double)(R > d ? R : d) * DBL_EPSILON) * smax;
  double *y = ysv;
  int rk = 0;
  for (int c = 0; c < k; c++) {
    y[c] = 0;
    if (!(sigma[c] > tol)) continue;
    rk++;
    double dot = 0; /* U_cᵀ·(Qᵀb)_{1..k}, U_c = column c / σ_c */
    for (int i = 0; i < k && i < R; i++) dot += tri[c * k + i] * qtb[i];
    y[c] = dot / (sigma[c] * sigma[c]);
  }
  for (int c = 0; c < k; c++) {
    double s = 0;
    for (int e = 0; e < k; e++) s += V[e * k + c] * y[e];
    step[idx[c]] = s / colscale[idx[c]];
  }
  return rk;
}

/* gn_step computes the Gauss–Newton step at x, holding at its bound every
 * parameter whose step points out of the box. */
static void gn_step(void) {
  for (int j = 0; j < d; j++) freecol[j] = 1;
  for (int pass = 0; pass <= d; pass++) {
    rank = solve();
    int held = 0;
    for (int j = 0; j < d; j++) {
      if (freecol[j] && ((x[j] <= lo[j] && step[j] < 0) || (x[j] >= hi[j] && step[j] > 0))) {
        freecol[j] = 0;
        held = 1;
      }
    }
    if (!held) break;
  }
}

static double half_sq(const double *v) {
  double s = 0;
  for (int i = 0; i < R; i++) s += v[i] * v[i];
  return s / 2;
}

static int all_finite(const double *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}

/* ---- the state machine -------------------------------------------------- */

/* end_start records the current start's result and moves to the next. */
static void end_start(const char *why) {
  start_result *sr = &results[start];
  sr->reason = why;
  sr->iter = iter;
  sr->evals = evals;
  if (why[0] != '!') { /* "!…": the start failed, x is not a result */
    sr->cost = cost;
    if (cost < best_cost) {
      best_cost = cost;
      best_lp = lp;
      best_ll = ll;
      best_start = start;
      memcpy(best, x, (size_t)d * sizeof *x);
    }
  }
  start++;
  phase = start < S ? PH_START : PH_DONE;
}

static void make_trial(void) {
  for (int j = 0; j < d; j++) {
    double t = x[j] + alpha * step[j];
    trial[j] = t < lo[j] ? lo[j] : t > hi[j] ? hi[j] : t;
  }
}

/* next decides, at an iterate x with its r and J, whether to stop or what
 * to try. */
static void next(void) {
  if (cost == 0) {
    end_start("zero residuals");
    return;
  }
  if (iter >= max_iter) {
    end_start("max_iter");
    return;
  }
  gn_step();
  int small = 1;
  for (int j = 0; j < d; j++)
    if (fabs(step[j]) > xtol * (fabs(x[j]) + xtol)) small = 0;
  if (small) {
    end_start("xtol: step below xtol");
    return;
  }
  alpha = 1;
  halvings = 0;
  make_trial();
  if (memcmp(trial, x, (size_t)d * sizeof *x) == 0) {
    end_start("bounds: the step leaves the box everywhere");
    return;
  }
  phase = PH_TRIAL;
}

static int32_t header[4];

EXPORT("kinfer_method_ask") int32_t kinfer_method_ask(void) {
  if (phase == PH_NONE) return fail(0, "gaussnewton-c: ask before kinfer_method_problem (a host without ABI §6.4?)"), 0;
  const double *pt;
  int want = 1 | 4; /* log target, residuals */
  switch (phase) {
  case PH_START:
    iter = evals = flat = 0;
    pt = starts + (size_t)start * d;
    want |= 8;
    break;
  case PH_TRIAL:
    pt = trial;
    break;
  case PH_JAC:
    pt = x;
    want |= 8;
    break;
  default:
    return fail(0, "gaussnewton-c: ask after done"), 0;
  }
  header[0] = 1;
  header[1] = 0;
  header[2] = want;
  header[3] = (int32_t)(uintptr_t)pt;
  return (int32_t)(uintptr_t)header;
}

EXPORT("kinfer_method_tell")
int32_t kinfer_method_tell(int32_t n, const double *th, const int32_t *st, const double *lpr, const double *llk,
                           const double *g) {
  (void)n, (void)th, (void)st, (void)lpr, (void)llk, (void)g;
  return fail(1, "gaussnewton-c: kinfer_method_tell called, but every batch it asks wants residuals");
}

EXPORT("kinfer_method_tell_lsq")
int32_t kinfer_method_tell_lsq(int32_t n, const double *th, const int32_t *st, const double *lpr, const double *llk,
                               const double *g, int32_t nr, const double *res, const double *jac) {
  (void)g;
  if (n != 1) return fail(1, "tell_lsq with %d points, asked 1", n);
  if (nr != R) return fail(1, "tell_lsq with R = %d, the problem's is %d", nr, R);
  if (phase != PH_START && phase != PH_TRIAL && phase != PH_JAC) return fail(1, "tell_lsq without a pending ask");
  int wantJ = phase != PH_TRIAL;
  if (wantJ && !jac) return fail(1, "tell_lsq without the Jacobian asked for");
  evals++;
  int ok = st[0] == 0 && all_finite(res, (size_t)R);
  int okJ = ok && wantJ && all_finite(jac, (size_t)R * d);
  switch (phase) {
  case PH_START:
    if (!ok) {
      end_start("!the model or likelihood failed at the start");
      return 0;
    }
    memcpy(x, th, (size_t)d * sizeof *x);
    memcpy(r, res, (size_t)R * sizeof *r);
    cost = half_sq(r);
    lp = lpr[0];
    ll = llk[0];
    if (!okJ) {
      end_start("no Jacobian at the start");
      return 0;
    }
    memcpy(J, jac, (size_t)R * d * sizeof *J);
    next();
    return 0;
  case PH_TRIAL: {
    double c = ok ? half_sq(res) : INFINITY;
    /* A full step that leaves ½‖r‖² unchanged up to the rounding of its
     * sum (R terms) is taken too: near the solution the step is accurate
     * while the decrease it brings is below what a sum of squares can
     * show. Three such steps in a row end the start. */
    int flat_ok = ok && alpha == 1 && !(c < cost) && c <= cost + 8.0 * R * DBL_EPSILON * cost;
    if (c < cost || flat_ok) { /* accepted */
      flat = flat_ok ? flat + 1 : 0;
      memcpy(x, th, (size_t)d * sizeof *x);
      memcpy(r, res, (size_t)R * sizeof *r);
      cost = c;
      lp = lpr[0];
      ll = llk[0];
      iter++;
      if (flat >= 3) {
        end_start("rounding: full steps change the sum of squares only by rounding");
        return 0;
      }
      phase = PH_JAC;
      return 0;
    }
    if (++halvings > max_halvings) {
      end_start("halvings: no decrease along the step");
      return 0;
    }
    alpha /= 2;
    make_trial();
    if (memcmp(trial, x, (size_t)d * sizeof *x) == 0) end_start("halvings: the step vanished");
    return 0;
  }
  case PH_JAC:
    if (!okJ) {
      end_start("no Jacobian at the iterate");
      return 0;
    }
    memcpy(r, res, (size_t)R * sizeof *r);
    cost = half_sq(r);
    memcpy(J, jac, (size_t)R * d * sizeof *J);
    next();
    return 0;
  }
  return 0;
}

EXPORT("kinfer_method_done") int32_t kinfer_method_done(void) { return phase == PH_DONE; }

static double sample[1 << 12];
static double *sample_buf;

EXPORT("kinfer_method_samples") int64_t kinfer_method_samples(void) {
  if (best_start < 0) return 0;
  double *row = d + 2 <= (int)(sizeof sample / sizeof *sample) ? sample : sample_buf;
  if (!row) row = sample_buf = malloc((size_t)(d + 2) * sizeof *row);
  if (!row) return fail(0, "out of memory"), 0;
  memcpy(row, best, (size_t)d * sizeof *row);
  row[d] = best_lp;
  row[d + 1] = best_ll;
  return span(row, 1);
}

/* ---- the report: a JSON object ------------------------------------------ */

static char *rep;
static size_t rep_len, rep_cap;

static void put(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (rep_len + (size_t)n + 1 > rep_cap) {
    size_t c = (rep_len + (size_t)n + 1) * 2;
    char *p = realloc(rep, c);
    if (!p) return;
    rep = p;
    rep_cap = c;
  }
  va_start(ap, fmt);
  vsnprintf(rep + rep_len, rep_cap - rep_len, fmt, ap);
  va_end(ap);
  rep_len += (size_t)n;
}

static void put_num(double v) {
  if (isfinite(v))
    put("%.17g", v);
  else
    put("null");
}

static void put_str(const char *s) {
  put("\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      put("\\%c", c);
    else if (c < 0x20)
      put("\\u%04x", c);
    else
      put("%c", c);
  }
  put("\"");
}

EXPORT("kinfer_method_report") int64_t kinfer_method_report(void) {
  rep_len = 0;
  put("{\"method\":\"gauss-newton\",\"residuals\":%d,\"starts\":%d,\"best_start\":%d,", R, S, best_start + 1);
  put("\"cost\":");
  put_num(best_cost);
  put(",\"rss\":");
  put_num(2 * best_cost);
  put(",\"rank\":%d,\"theta\":{", rank);
  for (int j = 0; best_start >= 0 && j < d; j++) {
    if (j) put(",");
    put_str(names[j] ? names[j] : "");
    put(":");
    put_num(best[j]);
  }
  put("},\"per_start\":[");
  for (int i = 0; i < S && results; i++) {
    if (i) put(",");
    put("{\"start\":%d,\"iterations\":%d,\"evaluations\":%d,\"cost\":", i + 1, results[i].iter, results[i].evals);
    put_num(results[i].cost);
    put(",\"stop\":");
    put_str(results[i].reason[0] == '!' ? results[i].reason + 1 : results[i].reason);
    put("}");
  }
  put("]}");
  if (!rep) return fail(0, "out of memory for the report"), 0;
  return span(rep, rep_len);
}
