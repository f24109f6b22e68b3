/*
 * kinfer.h — single-header C SDK for kinfer plugins, ABI version 1.
 *
 * The normative contract is abi/ABI.md in the kinfer repository; this header
 * implements the plumbing of it so that a plugin is a JSON spec string plus
 * one function. Target: clang --target=wasm32-wasi with wasi-libc.
 *
 * ---------------------------------------------------------------------------
 * A MODEL (ABI.md §6.1)
 * ---------------------------------------------------------------------------
 *
 *     #define KINFER_MODEL
 *     #include "kinfer.h"
 *
 *     const char kinfer_spec[] =
 *         "{\"kind\":\"model\",\"name\":\"spring\",\"version\":\"1.0.0\","
 *         "\"params\":[{\"name\":\"k\",\"lower\":1,\"upper\":10,\"default\":2}],"
 *         "\"conditions\":[{\"name\":\"x\"}],"
 *         "\"outputs\":[{\"name\":\"force\"}]}";
 *
 *     // One θ (d values) at all K conditions: x is K×c, y is K×m, row-major.
 *     // Returns KINFER_OK, KINFER_FAILED (no solution) or KINFER_INVALID
 *     // (θ or x outside the domain).
 *     int model_eval(const double *theta, int K, const double *x, double *y) {
 *         for (int i = 0; i < K; i++) y[i] = theta[0] * x[i];
 *         return KINFER_OK;
 *     }
 *
 * The header exports kinfer_abi_version, kinfer_describe, kinfer_alloc,
 * kinfer_free, kinfer_configure, kinfer_last_error and the model exports.
 * kinfer_model_eval loops over the batch of b parameter vectors and calls
 * model_eval once per θ; the dimensions d, c and m (and the number of
 * settings) are read from kinfer_spec itself, so they cannot disagree with
 * what the host is told.
 *
 * Optional functions, defined by the author when the spec lists the
 * capability (the header checks both directions when the plugin loads):
 *
 *     // capability "jacobian": y (K×m) and jac, the (K·m)×d matrix ∂y/∂θ.
 *     int model_jacobian(const double *theta, int K, const double *x,
 *                        double *y, double *jac);
 *     // capability "vjp": y (K×m) and g = vᵀ·∂y/∂θ (d), v has K·m values.
 *     int model_vjp(const double *theta, int K, const double *x,
 *                   const double *v, double *y, double *g);
 *     // capability "pullback" (ABI.md §6.1), both functions: a forward pass
 *     // that writes y exactly as model_eval does and points *tape at *n
 *     // doubles of its own (what the backward pass needs; they must stay
 *     // valid until the next call, e.g. a buffer it reuses), and the
 *     // backward pass, which gets the same θ and x, a copy of that tape
 *     // and v, and writes g = vᵀ·∂y/∂θ (the g model_vjp would give). The
 *     // two may run on different instances: keep no other state.
 *     int model_forward(const double *theta, int K, const double *x,
 *                       double *y, const double **tape, int *n);
 *     int model_pullback(const double *theta, int K, const double *x,
 *                        const double *tape, int n, const double *v,
 *                        double *g);
 *
 * ---------------------------------------------------------------------------
 * A LIKELIHOOD (ABI.md §6.2)
 * ---------------------------------------------------------------------------
 *
 *     #define KINFER_LIKELIHOOD
 *     #include "kinfer.h"
 *     const char kinfer_spec[] = "{\"kind\":\"likelihood\",\"name\":\"laplace\"}";
 *     // y, obs, sigma are K×m; writes the log-likelihood to *out.
 *     int likelihood_eval(int K, int m, const double *y, const double *obs,
 *                         const double *sigma, double *out);
 *     // optional, capability "grad_y": also gy = ∂logL/∂y (K×m)
 *     int likelihood_grad(int K, int m, const double *y, const double *obs,
 *                         const double *sigma, double *out, double *gy);
 *     // optional, capability "residuals": r (K·m), logL = const − ½‖r‖²
 *     int likelihood_residuals(int K, int m, const double *y, const double *obs,
 *                              const double *sigma, double *r);
 *
 * List capability "batch" in the spec to let the host evaluate a chunk of
 * points in one call (kinfer_likelihood_eval_batch, ABI.md §6.2): the header
 * implements it by calling likelihood_eval once per point inside the module,
 * so a cheap likelihood crosses the sandbox boundary once per chunk instead
 * of once per point. Nothing else to write.
 *
 * ---------------------------------------------------------------------------
 * SETTINGS, ERRORS, LOGGING
 * ---------------------------------------------------------------------------
 *
 * If the spec lists settings, define
 *
 *     int plugin_configure(const double *settings, int n);
 *
 * It receives the n values in the order of the spec's "settings" (a setting
 * with "choices" arrives as the index of the chosen string) and returns 0, or
 * non-zero to refuse the configuration. Keep what it needs in static
 * variables: each instance of a module has its own memory. Without
 * settings a plugin may still define it for its set-up: it is then called
 * once with (NULL, 0) before the first call of the plugin's role.
 *
 * kinfer_error(status, fmt, ...) records a printf-formatted message that the
 * host reads through kinfer_last_error and returns status, so a refusal is
 * one line:  return kinfer_error(KINFER_INVALID, "L_r must be > 0, got %g", v);
 * kinfer_log(fmt, ...) writes a line to the plugin log (host import
 * kinfer_v1.log, shown with --verbose). kinfer_log is static inline: a
 * plugin that does not call it imports nothing from kinfer_v1 (only
 * wasi_snapshot_preview1, which wasi-libc needs).
 *
 * Statuses: return only KINFER_OK (0), KINFER_FAILED (1) or KINFER_INVALID
 * (2) from model and likelihood functions; any other value is reported to
 * the host as KINFER_FAILED.
 *
 * ---------------------------------------------------------------------------
 * BUILD
 * ---------------------------------------------------------------------------
 *
 *     clang --target=wasm32-wasi -O2 -mexec-model=reactor -I path/to/sdk/c \
 *           -Wl,--stack-first -Wl,-z,stack-size=1048576 -o plugin.wasm plugin.c
 *
 * or `kinfer build DIR`, which uses these flags and pins the sha256 in
 * plugin.toml. -mexec-model=reactor makes the module export _initialize
 * (which runs C constructors) instead of _start; the host calls it first.
 * The stack (1 MiB) comes first in memory: a stack overflow then traps,
 * where wasm-ld's default (64 KiB above the static data) let a deep
 * recursion or a large local array overwrite the plugin's globals.
 *
 * Include this header in exactly one .c file of a plugin; other files of the
 * same plugin may include it after  #define KINFER_NO_EXPORTS  to get the
 * declarations only.
 *
 * Memory: kinfer_alloc is malloc (wasi-libc aligns to 16 bytes, ABI.md asks
 * for 8), kinfer_free is free. The spec, the last error and everything the
 * header returns to the host live in static storage.
 *
 * Checks made when the plugin loads (first describe, configure or call):
 * the spec's "kind" matches KINFER_MODEL/KINFER_LIKELIHOOD, a model has at
 * least one param and one output, each listed capability has its function
 * and each defined optional function has its capability, and
 * plugin_configure exists when settings are listed. (Defined in a plugin
 * whose spec lists no settings, plugin_configure(NULL, 0) is called once,
 * before the first role call: the host configures only plugins with
 * settings.) A failed check makes
 * kinfer_describe return the empty span and every other call fail, with the
 * reason in kinfer_last_error. The header does not validate the rest of the
 * JSON: the host does (unknown keys, bounds, names).
 */
#ifndef KINFER_H
#define KINFER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KINFER_ABI_VERSION 1

enum { KINFER_OK = 0, KINFER_FAILED = 1, KINFER_INVALID = 2 };

#if !defined(KINFER_NO_EXPORTS) && defined(KINFER_MODEL) + defined(KINFER_LIKELIHOOD) != 1
#error "kinfer.h: define exactly one of KINFER_MODEL or KINFER_LIKELIHOOD before including it"
#endif

/* ---- what the plugin author defines ------------------------------------ */

/* The JSON self-description (ABI.md §4), a NUL-terminated string. */
extern const char kinfer_spec[];

/* Required when the spec lists settings. */
int plugin_configure(const double *settings, int n) __attribute__((weak));

#ifdef KINFER_MODEL
/* noinline: kept out of kinfer_model_eval's loop over θ, model_eval is a
 * leaf function, which wazero's register allocator compiles without
 * spills in its loop (the C ligament's kernel: 11 % faster, RATIONALE.md). */
int model_eval(const double *theta, int K, const double *x, double *y) __attribute__((noinline));
int model_jacobian(const double *theta, int K, const double *x, double *y,
                   double *jac) __attribute__((weak));
int model_vjp(const double *theta, int K, const double *x, const double *v,
              double *y, double *g) __attribute__((weak));
int model_forward(const double *theta, int K, const double *x, double *y,
                  const double **tape, int *n) __attribute__((weak));
int model_pullback(const double *theta, int K, const double *x,
                   const double *tape, int n, const double *v, double *g)
    __attribute__((weak));
#endif

#ifdef KINFER_LIKELIHOOD
int likelihood_eval(int K, int m, const double *y, const double *obs,
                    const double *sigma, double *out);
int likelihood_grad(int K, int m, const double *y, const double *obs,
                    const double *sigma, double *out, double *gy)
    __attribute__((weak));
int likelihood_residuals(int K, int m, const double *y, const double *obs,
                         const double *sigma, double *r) __attribute__((weak));
#endif

/* ---- helpers for the author --------------------------------------------- */

#define KINFER_ERROR_MAX 1024
extern char kinfer__errbuf[KINFER_ERROR_MAX];
extern int32_t kinfer__errlen;

/* Records a message for kinfer_last_error and returns status. */
static inline int kinfer_error(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline int kinfer_error(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(kinfer__errbuf, KINFER_ERROR_MAX, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if (n >= KINFER_ERROR_MAX) n = KINFER_ERROR_MAX - 1;
  kinfer__errlen = n;
  return status;
}

__attribute__((import_module("kinfer_v1"), import_name("log")))
void kinfer__host_log(const char *ptr, int32_t nbytes);

/* Writes a printf-formatted line (at most 4096 bytes) to the plugin log. */
static inline void kinfer_log(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static inline void kinfer_log(const char *fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (n >= (int)sizeof buf) n = (int)sizeof buf - 1;
  kinfer__host_log(buf, n);
}

/* ======================================================================== */
#ifndef KINFER_NO_EXPORTS

#define KINFER__EXPORT(name) __attribute__((export_name(name)))

char kinfer__errbuf[KINFER_ERROR_MAX];
int32_t kinfer__errlen;

/* Dimensions read from kinfer_spec: params, conditions, outputs, settings. */
static int kinfer__d, kinfer__c, kinfer__m, kinfer__ns;
static int kinfer__state; /* 0 unchecked, 1 ok, -1 spec error */
static char kinfer__speccheck[KINFER_ERROR_MAX];
static int kinfer__configured;

static int kinfer__ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Skips a JSON string starting at the opening quote *p; returns the pointer
 * to its closing quote, or NULL if it is unterminated. */
static const char *kinfer__skipstr(const char *p) {
  for (p++; *p && *p != '"'; p++)
    if (*p == '\\' && p[1]) p++;
  return *p ? p : NULL;
}

/* Finds the value of top-level key `key` in the JSON object s; returns a
 * pointer to its first character, or NULL if the key is absent. */
static const char *kinfer__find(const char *s, const char *key) {
  size_t klen = strlen(key);
  int depth = 0;
  for (const char *p = s; *p; p++) {
    char ch = *p;
    if (ch == '"') {
      const char *start = p + 1, *end = kinfer__skipstr(p);
      if (!end) return NULL;
      p = end;
      if (depth != 1 || (size_t)(end - start) != klen || memcmp(start, key, klen) != 0)
        continue;
      const char *q = end + 1;
      while (kinfer__ws(*q)) q++;
      if (*q != ':') continue; /* a string value, not a key */
      q++;
      while (kinfer__ws(*q)) q++;
      return q;
    } else if (ch == '{' || ch == '[') {
      depth++;
    } else if (ch == '}' || ch == ']') {
      depth--;
    }
  }
  return NULL;
}

/* Calls f(element, arg) for each element of the top-level array `key`;
 * returns the element count, 0 if the key is absent, -1 if it is not an
 * array or is malformed. */
static int kinfer__each(const char *s, const char *key,
                        int (*f)(const char *elem, const char *arg), const char *arg,
                        int *matched) {
  const char *q = kinfer__find(s, key);
  if (!q) return 0;
  if (*q != '[') return -1;
  int depth = 0, n = 0, any = 0;
  const char *elem = NULL;
  for (q++; *q; q++) {
    char ch = *q;
    if (kinfer__ws(ch)) continue;
    if (!any && depth == 0) elem = q;
    if (ch == '"') {
      q = kinfer__skipstr(q);
      if (!q) return -1;
      any = 1;
    } else if (ch == '[' || ch == '{') {
      depth++;
      any = 1;
    } else if (ch == ']' || ch == '}') {
      if (depth == 0) {
        if (any) {
          n++;
          if (f && f(elem, arg)) ++*matched;
        }
        return n;
      }
      depth--;
    } else if (ch == ',' && depth == 0) {
      n++;
      if (f && elem && f(elem, arg)) ++*matched;
      any = 0;
      elem = NULL;
    } else {
      any = 1;
    }
  }
  return -1;
}

static int kinfer__streq(const char *elem, const char *want) {
  size_t n = strlen(want);
  return elem[0] == '"' && strncmp(elem + 1, want, n) == 0 && elem[n + 1] == '"';
}

/* Whether the spec's top-level "capabilities" array lists cap. */
static int kinfer__listed(const char *cap) {
  int matched = 0;
  kinfer__each(kinfer_spec, "capabilities", kinfer__streq, cap, &matched);
  return matched > 0;
}

static int kinfer__fail_check(const char *fmt, const char *a) {
  snprintf(kinfer__speccheck, sizeof kinfer__speccheck, fmt, a);
  kinfer__state = -1;
  return 0;
}

/* Checks that capability cap is listed exactly when function fn is defined. */
static int kinfer__capfn(const char *cap, int defined, const char *fn) {
  int listed = kinfer__listed(cap);
  if (listed && !defined)
    return kinfer__fail_check("kinfer.h: the spec lists capability \"%s\" but its function is not defined", cap);
  if (!listed && defined)
    return kinfer__fail_check("kinfer.h: %s is defined but the spec does not list its capability", fn);
  return 1;
}

/* Checks the spec against the role and the defined functions once. */
static int kinfer__check(void) {
  if (kinfer__state) return kinfer__state > 0;
  int none = 0;
  kinfer__d = kinfer__each(kinfer_spec, "params", NULL, NULL, &none);
  kinfer__c = kinfer__each(kinfer_spec, "conditions", NULL, NULL, &none);
  kinfer__m = kinfer__each(kinfer_spec, "outputs", NULL, NULL, &none);
  kinfer__ns = kinfer__each(kinfer_spec, "settings", NULL, NULL, &none);
  if (kinfer__d < 0 || kinfer__c < 0 || kinfer__m < 0 || kinfer__ns < 0 ||
      kinfer__each(kinfer_spec, "capabilities", NULL, NULL, &none) < 0)
    return kinfer__fail_check("kinfer.h: kinfer_spec is malformed JSON%s", "");
  const char *kind = kinfer__find(kinfer_spec, "kind");
#ifdef KINFER_MODEL
  if (!kind || !kinfer__streq(kind, "model"))
    return kinfer__fail_check("kinfer.h: compiled with KINFER_MODEL but the spec's kind is not %s", "\"model\"");
  if (kinfer__d < 1 || kinfer__m < 1)
    return kinfer__fail_check("kinfer.h: a model spec needs at least one param and one output%s", "");
  if (!kinfer__capfn("jacobian", model_jacobian != 0, "model_jacobian")) return 0;
  if (!kinfer__capfn("vjp", model_vjp != 0, "model_vjp")) return 0;
  if ((model_forward != 0) != (model_pullback != 0))
    return kinfer__fail_check("kinfer.h: capability pullback needs both model_forward and model_pullback%s", "");
  if (!kinfer__capfn("pullback", model_forward != 0, "model_forward")) return 0;
#else
  if (!kind || !kinfer__streq(kind, "likelihood"))
    return kinfer__fail_check("kinfer.h: compiled with KINFER_LIKELIHOOD but the spec's kind is not %s", "\"likelihood\"");
  if (!kinfer__capfn("grad_y", likelihood_grad != 0, "likelihood_grad")) return 0;
  if (!kinfer__capfn("residuals", likelihood_residuals != 0, "likelihood_residuals")) return 0;
#endif
  if (kinfer__ns > 0 && !plugin_configure)
    return kinfer__fail_check("kinfer.h: the spec lists settings but plugin_configure is not defined%s", "");
  kinfer__state = 1;
  return 1;
}

/* 0 when role calls may proceed, else 1 with the reason recorded. */
static int32_t kinfer__ready(void) {
  if (!kinfer__check()) return kinfer_error(KINFER_FAILED, "%s", kinfer__speccheck);
  if (kinfer__ns > 0 && !kinfer__configured)
    return kinfer_error(KINFER_FAILED, "kinfer_configure was not called (the spec lists %d settings)", kinfer__ns);
  if (kinfer__ns == 0 && plugin_configure && !kinfer__configured) {
    /* The host configures only a plugin with settings (ABI.md §3); a
     * plugin_configure without them is its set-up, called once here with
     * no values, before the first role call. */
    kinfer__errlen = 0;
    int rc = plugin_configure(NULL, 0);
    if (rc != 0) {
      if (kinfer__errlen == 0) kinfer_error(rc, "plugin_configure failed (status %d)", rc);
      return rc;
    }
    kinfer__configured = 1;
  }
  return 0;
}

static int32_t kinfer__status(int s) {
  return (s == KINFER_OK || s == KINFER_FAILED || s == KINFER_INVALID) ? s : KINFER_FAILED;
}

static int64_t kinfer__span(const void *p, uint32_t n) {
  if (!p || !n) return 0;
  return (int64_t)(((uint64_t)n << 32) | (uint32_t)(uintptr_t)p);
}

/* ---- exports every plugin has (ABI.md §3) ------------------------------- */

KINFER__EXPORT("kinfer_abi_version")
int32_t kinfer_abi_version(void) { return KINFER_ABI_VERSION; }

KINFER__EXPORT("kinfer_describe")
int64_t kinfer_describe(void) {
  if (!kinfer__check()) {
    kinfer_error(KINFER_FAILED, "%s", kinfer__speccheck);
    return 0;
  }
  return kinfer__span(kinfer_spec, (uint32_t)strlen(kinfer_spec));
}

KINFER__EXPORT("kinfer_alloc")
void *kinfer_alloc(int32_t nbytes) {
  if (nbytes < 0) return NULL;
  return malloc(nbytes ? (size_t)nbytes : 1);
}

KINFER__EXPORT("kinfer_free")
void kinfer_free(void *ptr, int32_t nbytes) {
  (void)nbytes;
  free(ptr);
}

KINFER__EXPORT("kinfer_configure")
int32_t kinfer_configure(const double *values, int32_t n) {
  if (!kinfer__check()) return kinfer_error(KINFER_FAILED, "%s", kinfer__speccheck);
  kinfer__configured = 0;
  if (n != kinfer__ns)
    return kinfer_error(KINFER_FAILED, "configure got %d setting values, the spec lists %d", (int)n, kinfer__ns);
  if (n > 0) {
    kinfer__errlen = 0;
    int rc = plugin_configure(values, n);
    if (rc != 0) {
      if (kinfer__errlen == 0) kinfer_error(rc, "plugin_configure refused the settings (status %d)", rc);
      return rc;
    }
  }
  kinfer__configured = 1;
  return 0;
}

KINFER__EXPORT("kinfer_last_error")
int64_t kinfer_last_error(void) { return kinfer__span(kinfer__errbuf, (uint32_t)kinfer__errlen); }

/* ---- model exports (ABI.md §6.1) ---------------------------------------- */
#ifdef KINFER_MODEL

KINFER__EXPORT("kinfer_model_eval")
int32_t kinfer_model_eval(int32_t b, const double *theta, int32_t K, const double *x,
                          double *y, int32_t *status) {
  int32_t rc = kinfer__ready();
  if (rc) return rc;
  if (b < 0 || K < 0) return kinfer_error(KINFER_FAILED, "kinfer_model_eval: negative count b=%d K=%d", (int)b, (int)K);
  size_t dy = (size_t)K * (size_t)kinfer__m;
  for (int32_t i = 0; i < b; i++)
    status[i] = kinfer__status(model_eval(theta + (size_t)i * kinfer__d, K, x, y + (size_t)i * dy));
  return 0;
}

KINFER__EXPORT("kinfer_model_jacobian")
int32_t kinfer_model_jacobian(const double *theta, int32_t K, const double *x, double *y,
                              double *jac) {
  int32_t rc = kinfer__ready();
  if (rc) return rc;
  if (!model_jacobian || K < 0) return kinfer_error(KINFER_FAILED, "kinfer_model_jacobian: not available");
  return kinfer__status(model_jacobian(theta, K, x, y, jac));
}

KINFER__EXPORT("kinfer_model_vjp")
int32_t kinfer_model_vjp(const double *theta, int32_t K, const double *x, const double *v,
                         double *y, double *g) {
  int32_t rc = kinfer__ready();
  if (rc) return rc;
  if (!model_vjp || K < 0) return kinfer_error(KINFER_FAILED, "kinfer_model_vjp: not available");
  return kinfer__status(model_vjp(theta, K, x, v, y, g));
}

KINFER__EXPORT("kinfer_model_forward")
int32_t kinfer_model_forward(const double *theta, int32_t K, const double *x, double *y,
                             int64_t *tape) {
  int32_t rc = kinfer__ready();
  if (rc) return rc;
  if (!model_forward || K < 0) return kinfer_error(KINFER_FAILED, "kinfer_model_forward: not available");
  const double *t = NULL;
  int n = 0;
  int32_t st = kinfer__status(model_forward(theta, K, x, y, &t, &n));
  if (st != KINFER_OK) return st;
  if (n < 0 || (n > 0 && !t))
    return kinfer_error(KINFER_FAILED, "model_forward returned a tape of %d values at %p", n, (const void *)t);
  *tape = kinfer__span(t, (uint32_t)n);
  return KINFER_OK;
}

KINFER__EXPORT("kinfer_model_pullback")
int32_t kinfer_model_pullback(const double *theta, int32_t K, const double *x,
                              const double *tape, int32_t n, const double *v, double *g) {
  int32_t rc = kinfer__ready();
  if (rc) return rc;
  if (!model_pullback || K < 0 || n < 0) return kinfer_error(KINFER_FAILED, "kinfer_model_pullback: not available");
  return kinfer__status(model_pullback(theta, K, x, tape, n, v, g));
}

#endif /* KINFER_MODEL */

/* ---- likelihood exports (ABI.md §6.2) ----------------------------------- */
#ifdef KINFER_LIKELIHOOD

KINFER__EXPORT("kinfer_likelihood_eval")
int32_t kinfer_likelihood_eval(int32_t K, int32_t m, const double *y, const double *obs,
                               const double *sigma, double *out) {
  int32_t rc = kinfer__ready();
  if (rc) return rc;
  if (K < 0 || m < 0) return kinfer_error(KINFER_FAILED, "kinfer_likelihood_eval: negative count");
  return kinfer__status(likelihood_eval(K, m, y, obs, sigma, out));
}

KINFER__EXPORT("kinfer_likelihood_eval_batch")
int32_t kinfer_likelihood_eval_batch(int32_t b, int32_t K, int32_t m, const double *y,
                                     const double *obs, const double *sigma, double *out,
                                     int32_t *status) {
  int32_t rc = kinfer__ready();
  if (rc) return rc;
  if (b < 0 || K < 0 || m < 0) return kinfer_error(KINFER_FAILED, "kinfer_likelihood_eval_batch: negative count");
  for (int32_t i = 0; i < b; i++)
    status[i] = kinfer__status(likelihood_eval(K, m, y + (long)i * K * m, obs, sigma, out + i));
  return 0;
}

KINFER__EXPORT("kinfer_likelihood_grad")
int32_t kinfer_likelihood_grad(int32_t K, int32_t m, const double *y, const double *obs,
                               const double *sigma, double *out, double *gy) {
  int32_t rc = kinfer__ready();
  if (rc) return rc;
  if (!likelihood_grad || K < 0 || m < 0) return kinfer_error(KINFER_FAILED, "kinfer_likelihood_grad: not available");
  return kinfer__status(likelihood_grad(K, m, y, obs, sigma, out, gy));
}

KINFER__EXPORT("kinfer_likelihood_residuals")
int32_t kinfer_likelihood_residuals(int32_t K, int32_t m, const double *y, const double *obs,
                                    const double *sigma, double *r) {
  int32_t rc = kinfer__ready();
  if (rc) return rc;
  if (!likelihood_residuals || K < 0 || m < 0) return kinfer_error(KINFER_FAILED, "kinfer_likelihood_residuals: not available");
  return kinfer__status(likelihood_residuals(K, m, y, obs, sigma, r));
}

#endif /* KINFER_LIKELIHOOD */

#endif /* KINFER_NO_EXPORTS */
#endif /* KINFER_H */
