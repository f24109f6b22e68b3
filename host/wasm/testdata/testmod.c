// Test modules for host/wasm: one source, many variants (see build.sh).
// These are deliberately small and sometimes deliberately wrong; real
// plugins use the SDKs under sdk/.
//
// Variant macros:
//   KIND_LIK, KIND_METHOD   build a likelihood / method instead of a model
//   WASI                    wasm32-wasi reactor with sandbox probes
//   ABI_VERSION=n           kinfer_abi_version result (default 1)
//   BAD_IMPORT              imports env.foo
//   DESCRIBE_VARIANT=n      1 unknown key, 2 wrong-case key, 3 trailing data,
//                           4 out-of-bounds span, 5 empty span with a
//                           kinfer_last_error message
//   NOCAPS                  model spec lists no capabilities (exports stay)
//   NO_VJP_EXPORT           lists "vjp" but does not export kinfer_model_vjp
//   BAD_SIG                 kinfer_model_eval with a wrong signature
//   PULLBACK                lists "pullback" (with "jacobian", "vjp") and
//                           exports kinfer_model_forward/_pullback; a =
//                           901 leaves the tape span unwritten, 902 gives
//                           an out-of-bounds tape, 903 a tape too long,
//                           904 a pullback that does not write g
//   PULLBACK_ONLY           PULLBACK, listing only "pullback" (the host's
//                           VJP is forward then pullback)
//   PULLBACK_LIE=1          PULLBACK whose g[1] is 1.5 times the VJP's
//   PULLBACK_LIE=2          PULLBACK whose forward y[0] differs from eval's
//   PULLBACK_LIE=3          PULLBACK reading the last forward's θ kept in the instance
//   RES_LIE                 (with KIND_LIK) residuals twice the true ones
//   GY_NAN                  (with KIND_LIK) gy of a missing observation not 0
//   NO_SKIP1                (with KIND_LIK) a missing observation of output 1
//                           (not 0) reads as 0
//   LIK_POSITIVE            (with KIND_LIK) an observation ≤ 0 is invalid (a
//                           log-normal's domain)
//   NO_SKIP                 (with KIND_LIK) a missing observation (NaN) is
//                           not skipped: logL is NaN
//   ROWS_LIE                lists rows_independent, but y depends on K
//   JAC_ROWS_TRAP           lists jacobian and rows_independent; the Jacobian
//                           traps for the row x = 3 evaluated alone
//   JAC_ROWS_LIE            lists jacobian and rows_independent; y is right,
//                           but ∂y/∂b depends on the call's first condition
//   BLOCK_LIE               lists rows_independent, but y differs in calls
//                           of exactly 256 rows (the host's blocks)
//   NOCOND                  no conditions; lists rows_independent, but row
//                           k uses x = k + 1 (its index in the call)
//   OFFSET_LIE              ∂y1/∂b of the wrong sign in the Jacobian, with
//                           y2 offset by 1e6; lists only jacobian
//   VJP_LIE                 a model whose VJP has the wrong sign on g[1]
//                           (kinfer_model_jacobian right)
//   BATCH_NOWRITE           in a call of more than one point, point 1
//                           leaves its y[1] unwritten (alone, it is right)

#include <stdint.h>

#ifdef WASI
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wasi/api.h>
extern char **environ;
#endif

#define EXPORT(name) __attribute__((export_name(#name)))

#ifndef ABI_VERSION
#define ABI_VERSION 1
#endif

__attribute__((import_module("kinfer_v1"), import_name("log"))) void klog(const char *p, int n);
__attribute__((import_module("wasi_snapshot_preview1"), import_name("proc_exit"))) void wasi_exit(int code);
#ifdef BAD_IMPORT
__attribute__((import_module("env"), import_name("foo"))) int env_foo(void);
#endif

static int slen(const char *s) { int n = 0; while (s[n]) n++; return n; }
static int64_t span(const void *p, int n) { return ((int64_t)n << 32) | (int64_t)(uint32_t)(uintptr_t)p; }

// ---- allocation ---------------------------------------------------------
#ifdef WASI
EXPORT(kinfer_alloc) void *kinfer_alloc(int n) { return aligned_alloc(8, (n + 7) & ~7); }
EXPORT(kinfer_free) void kinfer_free(void *p, int n) { (void)n; free(p); }
#else
extern unsigned char __heap_base;
static uintptr_t heap_top, heap_end;
EXPORT(kinfer_alloc) void *kinfer_alloc(int n) {
	if (!heap_top) { heap_top = (uintptr_t)&__heap_base; heap_end = __builtin_wasm_memory_size(0) * 65536; }
	uintptr_t p = (heap_top + 7) & ~(uintptr_t)7;
	if (n < 0) return 0;
	if (p + (uintptr_t)n > heap_end || heap_end < p) {
		uintptr_t cur = __builtin_wasm_memory_size(0) * 65536;
		if (cur < p + (uintptr_t)n) {
			uintptr_t need = (p + n - cur + 65535) / 65536;
			if (__builtin_wasm_memory_grow(0, need) == (uintptr_t)-1) return 0;
		}
		heap_end = __builtin_wasm_memory_size(0) * 65536;
	}
	heap_top = p + n;
	return (void *)p;
}
// A bump allocator frees only its last block (the host frees its buffer
// before asking for a larger one).
EXPORT(kinfer_free) void kinfer_free(void *p, int n) {
	if ((uintptr_t)p + (uintptr_t)n == heap_top) heap_top = (uintptr_t)p;
}
#endif

static char errbuf[5120];
static int errlen;
static void set_err(const char *s) {
	errlen = 0;
	while (s[errlen] && errlen < 255) { errbuf[errlen] = s[errlen]; errlen++; }
}
// set_long_err sets a message longer than the host keeps (4096 bytes):
// "x" then "é" (2 bytes) repeated, so that byte 4096 falls inside a rune.
static void set_long_err(void) {
	errbuf[0] = 'x';
	errlen = 1;
	while (errlen + 2 <= (int)sizeof errbuf) { errbuf[errlen++] = (char)0xc3; errbuf[errlen++] = (char)0xa9; }
}
EXPORT(kinfer_last_error) int64_t kinfer_last_error(void) { return span(errbuf, errlen); }

EXPORT(kinfer_abi_version) int kinfer_abi_version(void) {
#ifdef BAD_IMPORT
	if (errlen == 12345) return env_foo();
#endif
	return ABI_VERSION;
}

// ---- description --------------------------------------------------------
#if defined(KIND_LIK) && defined(LIK_BATCH)
static const char spec[] = "{\"kind\":\"likelihood\",\"name\":\"wgauss\",\"version\":\"1.0.0\","
	"\"doc\":\"Gaussian with column weights j+1\",\"capabilities\":[\"grad_y\",\"residuals\",\"batch\"]}";
#elif defined(KIND_LIK)
static const char spec[] = "{\"kind\":\"likelihood\",\"name\":\"wgauss\",\"version\":\"1.0.0\","
	"\"doc\":\"Gaussian with column weights j+1\",\"capabilities\":[\"grad_y\",\"residuals\"]}";
#elif defined(KIND_METHOD)
static const char spec[] = "{\"kind\":\"method\",\"name\":\"grid\",\"version\":\"1.0.0\","
	"\"settings\":[{\"name\":\"batch\",\"default\":4},{\"name\":\"rounds\",\"default\":3},"
	"{\"name\":\"bad_span\",\"default\":0}],\"capabilities\":[\"checkpoint\"]}";
#else
#if DESCRIBE_VARIANT == 1
#define PARAMS "\"paramz\""
#else
#define PARAMS "\"params\""
#endif
#if DESCRIBE_VARIANT == 2
#define KINDKEY "\"Kind\""
#else
#define KINDKEY "\"kind\""
#endif
#if DESCRIBE_VARIANT == 3
#define TRAILER "}"
#else
#define TRAILER ""
#endif
#if defined(NOCAPS)
#define CAPS "[]"
#elif defined(ROWS_LIE) || defined(NOCOND) || defined(BLOCK_LIE)
#define CAPS "[\"rows_independent\"]"
#elif defined(JAC_ROWS_LIE) || defined(JAC_ROWS_TRAP)
#define CAPS "[\"jacobian\",\"rows_independent\"]"
#elif defined(OFFSET_LIE)
#define CAPS "[\"jacobian\"]"
#elif defined(PULLBACK_ONLY)
#define CAPS "[\"pullback\"]"
#elif defined(PULLBACK)
#define CAPS "[\"jacobian\",\"vjp\",\"pullback\"]"
#else
#define CAPS "[\"jacobian\",\"vjp\"]"
#endif
#ifdef NOCOND
#define CONDS "[]"
#else
#define CONDS "[{\"name\":\"x\"}]"
#endif
static const char spec[] = "{" KINDKEY ":\"model\",\"name\":\"quad\",\"version\":\"1.0.0\","
	PARAMS ":[{\"name\":\"a\",\"lower\":-1000,\"upper\":1000,\"default\":1},"
	"{\"name\":\"b\",\"lower\":-10,\"upper\":10,\"default\":0}],"
	"\"conditions\":" CONDS ",\"outputs\":[{\"name\":\"y1\"},{\"name\":\"y2\"}],"
	"\"settings\":[{\"name\":\"scale\",\"default\":1}],"
	"\"capabilities\":" CAPS "}" TRAILER;
#endif

EXPORT(kinfer_describe) int64_t kinfer_describe(void) {
#if DESCRIBE_VARIANT == 4
	return span((void *)0xfffff000, 100000);
#elif DESCRIBE_VARIANT == 5
	set_err("describe: out of memory (test)");
	return 0;
#endif
	return span(spec, sizeof spec - 1);
}

#if !defined(KIND_LIK) && !defined(KIND_METHOD)
// ---- model "quad": y1 = s(a x + b), y2 = s a x² ---------------------------
static double scale = 1;

EXPORT(kinfer_configure) int kinfer_configure(const double *v, int n) {
	if (n != 1) { set_err("want 1 setting"); return 1; }
	if (!(v[0] > 0)) { set_err("scale must be > 0"); return 2; }
	if (v[0] == 13) __builtin_trap();
	scale = v[0];
	return 0;
}

static int special(double a, double b) {
	if (a == 666) __builtin_trap();
	if (a == 777) { volatile int z = 0; for (;;) z++; }
	if (a == 333) wasi_exit(3);
	if (a == 555) {
		klog("hello from guest\nsecond line", 28);
#ifdef WASI
		printf("hello stdout\n");
		fprintf(stderr, "hello stderr\n");
		printf("partial");
		fflush(stdout);
		/* No flush: stdout is a terminal to the guest, so line buffered
		 * (sandbox.go, fdFdstatGet), and this line is logged now. */
		printf("\nafter flush\n");
#endif
	}
	if (a == 556) klog((const char *)0xfffffff0, 100);
	return 0;
}

#ifdef BAD_SIG
EXPORT(kinfer_model_eval) int kinfer_model_eval(int b, const double *theta, int K, const double *x, double *y) { return 0; }
#else
EXPORT(kinfer_model_eval) int kinfer_model_eval(int b, const double *theta, int K, const double *x, double *y, int *status) {
	for (int i = 0; i < b; i++) {
		double a = theta[2 * i], bb = theta[2 * i + 1];
		double *yi = y + (long)i * K * 2;
		special(a, bb);
		if (a == 111) { set_err("batch refused (test)"); return 1; }
		if (a == 112) { set_long_err(); return 1; }
		if (a == 888) { status[i] = 9; continue; }
		if (a == 889) continue;
#ifdef WASI
		if (a == 557) { /* y = two reads of random_get */
			uint64_t v[2];
			getentropy(v, sizeof v);
			for (int k = 0; k < 2 * K; k++) yi[k] = (double)(v[k % 2] >> 11);
			status[i] = 0;
			continue;
		}
		if (a == 558) { /* y = monotonic clock advance over sleep(5) */
			struct timespec t0, t1;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			sleep(5);
			clock_gettime(CLOCK_MONOTONIC, &t1);
			for (int k = 0; k < 2 * K; k++) yi[k] = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
			status[i] = 0;
			continue;
		}
#endif
		if (a == 890) { status[i] = 0; continue; } /* ok without writing y */
		if (a == 891) { status[i] = 0; yi[0] = 1; continue; } /* writes only y[0] */
		if (a == 444) {
			int r = __builtin_wasm_memory_grow(0, (int)bb);
			for (int k = 0; k < 2 * K; k++) yi[k] = r;
			status[i] = r < 0 ? 1 : 0;
			continue;
		}
		if (a < -500) { status[i] = 2; continue; }
		if (bb > 9) { set_err("b above 9 (test)"); status[i] = 1; continue; }
		for (int k = 0; k < K; k++) {
#ifdef NOCOND
			double xk = k + 1; /* the lie: depends on the row's place in the call */
#else
			double xk = x[k];
#endif
			yi[2 * k] = scale * (a * xk + bb);
#ifdef BATCH_NOWRITE
			/* the batch path's bug: point 1 of a batch leaves y[1] unwritten */
			if (b > 1 && i == 1 && k == 0) continue;
#endif
			yi[2 * k + 1] = scale * a * xk * xk;
#ifdef OFFSET_LIE
			yi[2 * k + 1] += 1e6; /* a large output beside the lie */
#endif
		}
		if (a == 999) yi[0] = __builtin_nan("");
#ifdef ROWS_LIE
		/* claims rows_independent, but every row depends on K */
		for (int k = 0; k < 2 * K; k++) yi[k] += 1e-3 * K;
#endif
#ifdef BLOCK_LIE
		/* claims rows_independent, but lies in calls of 256 rows only */
		if (K == 256) yi[0] += 1;
#endif
#ifdef STATEFUL
		/* depends on call history: what kinfer inspect --certify catches */
		static int calls;
		yi[0] += calls++ % 2;
#endif
		status[i] = 0;
	}
	return 0;
}
#endif

EXPORT(kinfer_model_jacobian) int kinfer_model_jacobian(const double *theta, int K, const double *x, double *y, double *jac) {
	double a = theta[0], b = theta[1];
	special(a, b);
	if (a < -500) return 2;
#ifdef JAC_ROWS_TRAP
	if (K == 1 && x[0] == 3) __builtin_trap();
#endif
	for (int k = 0; k < K; k++) {
		y[2 * k] = scale * (a * x[k] + b);
		y[2 * k + 1] = scale * a * x[k] * x[k];
#ifdef OFFSET_LIE
		y[2 * k + 1] += 1e6;
#endif
		double *r = jac + 4 * k;
		r[0] = scale * x[k]; r[1] = scale;
#ifdef OFFSET_LIE
		r[1] = -scale; /* the wrong sign, hidden by nothing */
#endif
		r[2] = scale * x[k] * x[k]; r[3] = 0;
#ifdef JAC_ROWS_LIE
		r[1] += x[0]; /* depends on the call's first row */
#endif
	}
	if (a == 999) jac[0] = 1.0 / 0.0;
	return 0;
}

#ifndef NO_VJP_EXPORT
EXPORT(kinfer_model_vjp) int kinfer_model_vjp(const double *theta, int K, const double *x, const double *v, double *y, double *g) {
	double a = theta[0], b = theta[1];
	special(a, b);
	g[0] = g[1] = 0;
	for (int k = 0; k < K; k++) {
		y[2 * k] = scale * (a * x[k] + b);
		y[2 * k + 1] = scale * a * x[k] * x[k];
		g[0] += v[2 * k] * scale * x[k] + v[2 * k + 1] * scale * x[k] * x[k];
		g[1] += v[2 * k] * scale;
	}
#ifdef VJP_LIE
	g[1] = -g[1];
#endif
	return 0;
}
#endif

#if defined(PULLBACK) || defined(PULLBACK_ONLY)
// Capability pullback: the tape holds, per row, scale·x and scale·x·x
// (∂y1/∂a and ∂y2/∂a), so that the pullback's arithmetic is the VJP's.
#ifndef PULLBACK_LIE
#define PULLBACK_LIE 0
#endif
static double tapebuf[2 * 4096];
static double last_a; /* PULLBACK_LIE=3: the last forward's a, read by the pullback */
EXPORT(kinfer_model_forward) int kinfer_model_forward(const double *theta, int K, const double *x, double *y, int64_t *tape) {
	double a = theta[0], b = theta[1];
	special(a, b);
	if (a < -500) return 2;
	if (K > 4096) { set_err("forward: K > 4096 (test)"); return 1; }
	for (int k = 0; k < K; k++) {
		y[2 * k] = scale * (a * x[k] + b);
		y[2 * k + 1] = scale * a * x[k] * x[k];
		tapebuf[2 * k] = scale * x[k];
		tapebuf[2 * k + 1] = scale * x[k] * x[k];
	}
	if (PULLBACK_LIE == 2 && K > 0) y[0] += 1e-9 * y[0] + 1e-300;
	last_a = a;
	if (a == 901) return 0;
	int64_t ptr = (int64_t)(uintptr_t)tapebuf, n = 2 * (int64_t)K;
	if (a == 902) ptr = 0xfffffff0;
	if (a == 903) n = (int64_t)1 << 24;
	*tape = (n << 32) | ptr;
	return 0;
}
EXPORT(kinfer_model_pullback) int kinfer_model_pullback(const double *theta, int K, const double *x, const double *tape, int n, const double *v, double *g) {
	double a = theta[0], b = theta[1];
	(void)x;
	special(a, b);
	if (a < -500) return 2;
	if (n != 2 * K) { set_err("pullback: tape of the wrong length"); return 1; }
	if (a == 904) return 0;
	g[0] = g[1] = 0;
	for (int k = 0; k < K; k++) {
		g[0] += v[2 * k] * tape[2 * k] + v[2 * k + 1] * tape[2 * k + 1];
		g[1] += v[2 * k] * scale;
	}
	if (PULLBACK_LIE == 1) g[1] *= 1.5;
	if (PULLBACK_LIE == 3) g[1] += last_a - a; /* the MUST NOT of ABI.md §6.1 */
	return 0;
}
#endif

#ifdef WASI
// ---- sandbox probes (called directly by the tests) ----------------------
EXPORT(probe_walltime) int64_t probe_walltime(void) {
	struct timespec ts;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
EXPORT(probe_monotonic) int64_t probe_monotonic(void) {
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
EXPORT(probe_random) int64_t probe_random(void) {
	int64_t v = 0;
	if (getentropy(&v, sizeof v) != 0) return -1;
	return v;
}
EXPORT(probe_env) int probe_env(void) {
	int n = 0;
	for (char **e = environ; e && *e; e++) n++;
	return n;
}
EXPORT(probe_args) int probe_args(void) {
	__wasi_size_t argc = 0, size = 0;
	if (__wasi_args_sizes_get(&argc, &size) != 0) return -1;
	return (int)argc;
}
EXPORT(probe_open) int probe_open(void) {
	int fd = open("/etc/passwd", O_RDONLY);
	if (fd >= 0) return fd;
	fd = open(".", O_RDONLY);
	if (fd >= 0) return fd;
	return -errno;
}
EXPORT(probe_stdin) int probe_stdin(void) {
	char buf[16];
	return (int)read(0, buf, sizeof buf);
}
#endif

#elif defined(KIND_LIK)
// ---- likelihood "wgauss": log L = Σ_ij −(j+1)/2 ((y−o)/σ)² ---------------
/* A missing observation (NaN) is skipped (ABI.md §6.2): its σ is not read. */
static int check(int K, int m, const double *o, const double *s) {
	for (int i = 0; i < K * m; i++) if (o[i] == o[i] && !(s[i] > 0)) return 2;
#ifdef LIK_POSITIVE
	for (int i = 0; i < K * m; i++) if (o[i] == o[i] && !(o[i] > 0)) return 2;
#endif
	return 0;
}
EXPORT(kinfer_likelihood_eval) int kinfer_likelihood_eval(int K, int m, const double *y, const double *o, const double *s, double *out) {
	if (check(K, m, o, s)) return 2;
	double ll = 0;
	for (int i = 0; i < K; i++)
		for (int j = 0; j < m; j++) {
#if defined(NO_SKIP1)
			if (o[i * m + j] != o[i * m + j] && j != 1) continue;
			double r = (y[i * m + j] - (o[i * m + j] == o[i * m + j] ? o[i * m + j] : 0)) / s[i * m + j];
#else
#ifndef NO_SKIP
			if (o[i * m + j] != o[i * m + j]) continue;
#endif
			double r = (y[i * m + j] - o[i * m + j]) / s[i * m + j];
#endif
			ll -= 0.5 * (j + 1) * r * r;
		}
	if (y[0] == 666) __builtin_trap();
	if (y[0] == 999) ll = __builtin_nan("");
	if (y[0] == 888) ll = -__builtin_inf(); /* impossible data: allowed with status 0 */
	if (y[0] == 889) ll = __builtin_inf();  /* non-finite */
	*out = ll;
	return 0;
}
EXPORT(kinfer_likelihood_grad) int kinfer_likelihood_grad(int K, int m, const double *y, const double *o, const double *s, double *out, double *gy) {
	int st = kinfer_likelihood_eval(K, m, y, o, s, out);
	if (st) return st;
	for (int i = 0; i < K; i++)
		for (int j = 0; j < m; j++) {
			double sg = s[i * m + j];
			gy[i * m + j] = o[i * m + j] != o[i * m + j] ? 0 : -(j + 1) * (y[i * m + j] - o[i * m + j]) / (sg * sg);
#ifdef GY_NAN
			if (o[i * m + j] != o[i * m + j]) gy[i * m + j] = -y[i * m + j];
#endif
		}
	return 0;
}
#ifdef LIK_BATCH
// Batched evaluation (capability "batch"): y is b×K×m, obs and σ K×m. A
// point whose y[0] is 444 fails (status 1); 555 is left unwritten (a bug
// the host must catch); 777 fails the whole call.
EXPORT(kinfer_likelihood_eval_batch) int kinfer_likelihood_eval_batch(int b, int K, int m, const double *y, const double *o, const double *s, double *out, int *status) {
	for (int p = 0; p < b; p++) {
		const double *yp = y + (long)p * K * m;
		if (yp[0] == 777) return 1;
		if (yp[0] == 444) { status[p] = 1; continue; }
		if (yp[0] == 555) { status[p] = 0; continue; }
		status[p] = kinfer_likelihood_eval(K, m, yp, o, s, out + p);
	}
	return 0;
}
#endif
EXPORT(kinfer_likelihood_residuals) int kinfer_likelihood_residuals(int K, int m, const double *y, const double *o, const double *s, double *r) {
	if (check(K, m, o, s)) return 2;
	for (int i = 0; i < K; i++)
		for (int j = 0; j < m; j++)
			r[i * m + j] = o[i * m + j] != o[i * m + j] ? 0 : __builtin_sqrt((double)(j + 1)) * (y[i * m + j] - o[i * m + j]) / s[i * m + j]
#ifdef RES_LIE
				* 2
#endif
				;
	return 0;
}

#else
// ---- method "grid": rounds of batch points, first drawn by the host -------
#define MAXD 8
#define MAXB 64
#define MAXS 4096
struct state {
	int d, round, rounds, batch, bad_span, nsamples, grads;
	int64_t seed;
	double lo[MAXD], hi[MAXD];
	double gsum;
	double samples[MAXS * (MAXD + 2)];
};
static struct state st;
static int32_t hdr[4];
static double pts[MAXB * MAXD];
static char report[256];

EXPORT(kinfer_configure) int kinfer_configure(const double *v, int n) {
	if (n != 3) { set_err("want 3 settings"); return 1; }
	if (!(v[0] >= 1 && v[0] <= MAXB)) { set_err("batch must be in [1, 64]"); return 1; }
	st.batch = (int)v[0];
	st.rounds = (int)v[1];
	st.bad_span = (int)v[2];
	return 0;
}
EXPORT(kinfer_method_init) int kinfer_method_init(int d, int64_t seed, const double *lo, const double *hi) {
	if (d < 1 || d > MAXD) { set_err("grid supports 1 <= d <= 8"); return 3; }
	st.d = d; st.seed = seed; st.round = 0; st.nsamples = 0; st.grads = 0; st.gsum = 0;
	for (int i = 0; i < d; i++) { st.lo[i] = lo[i]; st.hi[i] = hi[i]; }
	return 0;
}
EXPORT(kinfer_method_ask) int32_t *kinfer_method_ask(void) {
	if (st.round >= st.rounds) { set_err("ask after done"); return 0; }
	hdr[0] = st.batch;
	if (st.round == 0) {
		hdr[1] = 1; hdr[2] = 1; hdr[3] = 0;
		return hdr;
	}
	for (int j = 0; j < st.batch; j++)
		for (int i = 0; i < st.d; i++)
			pts[j * st.d + i] = st.lo[i] + (st.hi[i] - st.lo[i]) * (j + 1) / (st.batch + 1) / st.round;
	hdr[1] = 0;
	hdr[2] = st.round == 1 ? 3 : 1;
	hdr[3] = (int32_t)(uintptr_t)pts;
	return hdr;
}
EXPORT(kinfer_method_tell) int kinfer_method_tell(int n, const double *theta, const int *status, const double *lp, const double *ll, const double *grad) {
	int wantg = st.round == 1;
	if (wantg && !grad) { set_err("gradient missing"); return 4; }
	if (!wantg && grad) { set_err("gradient not asked for"); return 5; }
	for (int j = 0; j < n; j++) {
		if (grad) { for (int i = 0; i < st.d; i++) st.gsum += grad[j * st.d + i]; st.grads++; }
		if (status[j] != 0 || st.nsamples >= MAXS) continue;
		double *row = st.samples + st.nsamples * (st.d + 2);
		for (int i = 0; i < st.d; i++) row[i] = theta[j * st.d + i];
		row[st.d] = lp[j];
		row[st.d + 1] = ll[j];
		st.nsamples++;
	}
	st.round++;
	return 0;
}
EXPORT(kinfer_method_done) int kinfer_method_done(void) { return st.round >= st.rounds; }
EXPORT(kinfer_method_samples) int64_t kinfer_method_samples(void) { return span(st.samples, st.nsamples); }

static char *putint(char *p, int64_t v) {
	char tmp[24]; int n = 0;
	if (v < 0) { *p++ = '-'; v = -v; }
	do { tmp[n++] = '0' + v % 10; v /= 10; } while (v);
	while (n) *p++ = tmp[--n];
	return p;
}
static char *puts_(char *p, const char *s) { while (*s) *p++ = *s++; return p; }
EXPORT(kinfer_method_report) int64_t kinfer_method_report(void) {
	if (st.bad_span == 1) return span((void *)0x7ffffff0, 4096);
	char *p = report;
	p = puts_(p, "{\"rounds\":"); p = putint(p, st.round);
	p = puts_(p, ",\"samples\":"); p = putint(p, st.nsamples);
	p = puts_(p, ",\"seed\":"); p = putint(p, st.seed);
	p = puts_(p, ",\"grads\":"); p = putint(p, st.grads);
	p = puts_(p, ",\"gsum\":"); p = putint(p, (int64_t)st.gsum);
	p = puts_(p, "}");
	return span(report, (int)(p - report));
}
EXPORT(kinfer_method_save) int64_t kinfer_method_save(void) {
	if (st.bad_span == 2) { set_err("state too large (test)"); return 0; }
	return span(&st, sizeof st);
}
EXPORT(kinfer_method_load) int kinfer_method_load(const void *p, int n) {
	if (n != (int)sizeof st) { set_err("state has the wrong size"); return 6; }
	__builtin_memcpy(&st, p, sizeof st);
	if (st.bad_span == 3) st.round++; /* a lie: the pending batch is dropped */
	return 0;
}
#endif
