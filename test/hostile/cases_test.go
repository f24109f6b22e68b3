package hostile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hcase is one attack: the files of its folder, the kinfer command, and
// the outcome it must have besides healthy (no hang, crash or memory
// runaway).
type hcase struct {
	name  string
	files map[string]string              // path → content; "@wat/x.wasm" copies testdata
	setup func(t *testing.T, dir string) // more preparation (special files)
	args  []string                       // default: run study.toml -o out --workers 2
	code  int                            // the exit code
	want  []string                       // in stderr (or stdout when code is 0); "a|b": either
	check func(t *testing.T, dir string, r result)
	// sig is sent after delay (a user stopping the run).
	sig   syscall.Signal
	delay time.Duration
}

// limits are the [limits] of a case's plugin: small, so that a case
// stopped by its limits is fast.
const limits = "memory_mib = 16\ntimeout_ms = 300\nfuel = 10_000_000"

// manifest is a plugin.toml.
func manifest(name, kind, wasm, limits string) string {
	return fmt.Sprintf("name = %q\nversion = \"1.0.0\"\nkind = %q\nabi = 1\nwasm = %q\n\n[limits]\n%s\n", name, kind, wasm, limits)
}

// plugin is the files of a plugin folder sub: the module src (a testdata
// path) and a manifest naming it.
func plugin(sub, name, kind, src, limits string) map[string]string {
	base := filepath.Base(src)
	return map[string]string{sub + "/plugin.toml": manifest(name, kind, base, limits), sub + "/" + base: "@" + src}
}

// data is a small dataset for the test model (condition x, output y).
const data = "x,y\n1,0.5\n2,1.0\n3,1.4\n"

// Component tables of the default study.
const (
	okModel  = "plugin = \"model/plugin.toml\"\nmode = \"ok\""
	gaussian = "use = \"gaussian\"\nsigma = 1.0"
	mh       = "use = \"metropolis\"\nchains = 2\nburn_in = 20\nsamples = 20"
	adam     = "use = \"adam\"\niterations = 20"
)

// study is a study of the test model with the given component tables.
func study(model, likelihood, method string) string {
	return fmt.Sprintf(`name = "hostile"
seed = 1

[model]
%s

[[data]]
name = "d"
file = "d.csv"

[[likelihood]]
%s

[prior]
a = { uniform = [0.0, 1.0] }

[method]
%s
`, model, likelihood, method)
}

// join merges file maps.
func join(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// modelStudy is a study whose model is plugin name (module src) with
// settings, and the given likelihood and method tables.
func modelStudy(name, src, settings, likelihood, method string) map[string]string {
	m := "plugin = \"model/plugin.toml\""
	if settings != "" {
		m += "\n" + settings
	}
	return join(plugin("model", name, "model", src, limits),
		map[string]string{"study.toml": study(m, likelihood, method), "d.csv": data})
}

// modeCase is a case of the test model in a mode.
func modeCase(name, mode string, code int, want ...string) hcase {
	return hcase{name: name, files: modelStudy(name, "wat/model.wasm", `mode = "`+mode+`"`, gaussian, mh), code: code, want: want}
}

// likCase is a case of the test likelihood in a mode, on the test model.
func likCase(name, mode, method string, code int, want ...string) hcase {
	return hcase{name: name, code: code, want: want, files: join(
		plugin("model", "model", "model", "wat/model.wasm", limits),
		plugin("lik", name, "likelihood", "wat/likelihood.wasm", limits),
		map[string]string{"d.csv": data, "study.toml": study(okModel, "plugin = \"lik/plugin.toml\"\nmode = \""+mode+"\"", method)})}
}

// methodCase is a case of the test method in a mode, on the test model.
func methodCase(name, mode string, code int, want ...string) hcase {
	return hcase{name: name, code: code, want: want, files: methodFiles(name, mode, limits)}
}

func methodFiles(name, mode, lim string) map[string]string {
	return join(
		plugin("model", "model", "model", "wat/model.wasm", limits),
		plugin("method", name, "method", "wat/method.wasm", lim),
		map[string]string{"d.csv": data, "study.toml": study(okModel, gaussian, "plugin = \"method/plugin.toml\"\nmode = \""+mode+"\"")})
}

// moduleCase is a case of a module that attacks while it loads.
func moduleCase(name, src string, code int, want ...string) hcase {
	settings := ""
	if b, err := os.ReadFile(filepath.Join("testdata", strings.TrimSuffix(src, ".wasm")+".wat")); err == nil && strings.Contains(string(b), `\"settings\"`) {
		settings = "s = 2.0"
	}
	return hcase{name: name, files: modelStudy(name, src, settings, gaussian, mh), code: code, want: want}
}

// timeout is what a call stopped by its limits says: the plugin, the
// export, and which limit.
func timeout(plugin, export string) []string {
	return []string{"plugin " + plugin, export, "fuel|timeout_ms"}
}

// manifestCase is a study whose model manifest has the given text (a
// module wat/model.wasm sits beside it as model.wasm).
func manifestCase(name, text string, want ...string) hcase {
	return hcase{name: name, code: 1, want: want, files: map[string]string{
		"model/plugin.toml": text, "model/model.wasm": "@wat/model.wasm",
		"d.csv": data, "study.toml": study(okModel, gaussian, mh)}}
}

// wasmCase is a manifest whose wasm key is wasm, with setup preparing the
// folder.
func wasmCase(name, wasm string, setup func(t *testing.T, dir string), want ...string) hcase {
	c := manifestCase(name, manifest(name, "model", wasm, limits), want...)
	c.setup = setup
	return c
}

// dataCase is a study of the built-in ligament model on the file data.
func dataCase(name, csv string, code int, want ...string) hcase {
	return hcase{name: name, code: code, want: want, files: map[string]string{"d.csv": csv, "study.toml": ligamentStudy("d.csv", "")}}
}

func ligamentStudy(file, method string) string {
	if method == "" {
		method = mh
	}
	return fmt.Sprintf(`name = "ligament"
seed = 1

[model]
use = "ligament"
ref_length_mm = 30.0

[[data]]
name = "pull"
file = %q

[[likelihood]]
use = "gaussian"
sigma = { force_N = 10.0 }

[prior]
k = { uniform = [2000.0, 9000.0] }
eps_r = { uniform = [-0.2, 0.3] }

[method]
%s
`, file, method)
}

// pullTest is a small pull test for the ligament model.
const pullTest = "length_mm,force_N\n29,10\n30,50\n31,120\n32,230\n"

// studyCase is a study file with the given text (beside d.csv, the pull
// test).
func studyCase(name, text string, code int, want ...string) hcase {
	return hcase{name: name, code: code, want: want, files: map[string]string{"d.csv": pullTest, "study.toml": text}}
}

func mkfifo(name string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
			t.Skip("no named pipes:", err)
		}
	}
}

func sparse(name string, size int64, head string) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.WriteString(head)
		if err := f.Truncate(size); err != nil {
			t.Skip("no sparse files:", err)
		}
	}
}

// summary reads out/summary.json.
func summary(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "out", "summary.json"))
	if err != nil {
		t.Fatalf("no summary.json: %v", err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// stopped checks that the run wrote partial results marked incomplete.
func stopped(t *testing.T, dir string, r result) {
	if s := summary(t, dir); s["complete"] != false {
		t.Errorf("summary.json complete = %v, want false", s["complete"])
	}
}

var failedRE = regexp.MustCompile(`evaluations \((\d+) failed\)`)

func cases() []hcase {
	deepNest := strings.Repeat("{b=", 100000) + "1" + strings.Repeat("}", 100000)
	return []hcase{
		// Calls that never return: every export, _initialize and the
		// wasm start function. The plugin, the export and the limit are
		// named.
		moduleCase("init-loop", "wat/init-loop.wasm", 1, timeout("init-loop", "_initialize")...),
		moduleCase("start-loop", "wat/start-loop.wasm", 1, timeout("start-loop", "instantiation|start")...),
		moduleCase("version-loop", "wat/version-loop.wasm", 1, timeout("version-loop", "kinfer_abi_version")...),
		moduleCase("describe-loop", "wat/describe-loop.wasm", 1, timeout("describe-loop", "kinfer_describe")...),
		moduleCase("alloc-loop", "wat/alloc-loop.wasm", 1, timeout("alloc-loop", "kinfer_alloc")...),
		moduleCase("configure-loop", "wat/configure-loop.wasm", 1, timeout("configure-loop", "kinfer_configure")...),
		modeCase("eval-loop", "loop", 1, timeout("eval-loop", "kinfer_model_eval")...),
		{name: "vjp-loop", code: 1, want: timeout("vjp-loop", "kinfer_model_vjp"),
			files: modelStudy("vjp-loop", "wat/model.wasm", `mode = "loopvjp"`, gaussian, adam)},
		likCase("likelihood-loop", "loop", mh, 1, timeout("likelihood-loop", "kinfer_likelihood_eval")...),
		likCase("likelihood-grad-loop", "loopgrad", adam, 1, timeout("likelihood-grad-loop", "kinfer_likelihood_grad")...),
		methodCase("method-init-loop", "loopinit", 1, timeout("method-init-loop", "kinfer_method_init")...),
		func() hcase {
			// The fault is told once, not again as the report's (review of
			// audit 5's fixes: a faulted method's Report returns it again).
			c := methodCase("method-ask-loop", "loopask", 1, timeout("method-ask-loop", "kinfer_method_ask")...)
			c.check = func(t *testing.T, dir string, r result) {
				if strings.Contains(r.stderr, "report:") {
					t.Errorf("the fault is told twice:\n%s", r.stderr)
				}
			}
			return c
		}(),
		methodCase("method-tell-loop", "looptell", 1, timeout("method-tell-loop", "kinfer_method_tell")...),
		methodCase("method-done-loop", "loopdone", 1, timeout("method-done-loop", "kinfer_method_done")...),
		methodCase("method-samples-loop", "loopsamples", 1, timeout("method-samples-loop", "kinfer_method_samples")...),
		methodCase("method-report-loop", "loopreport", 1, timeout("method-report-loop", "kinfer_method_report")...),
		func() hcase {
			c := methodCase("method-save-loop", "loopsave", 1, timeout("method-save-loop", "kinfer_method_save")...)
			c.args = []string{"run", "study.toml", "-o", "out", "--workers", "2", "--checkpoint-every", "1ns"}
			return c
		}(),
		// Exponential recursion has no loop for the wall-clock checks to
		// interrupt; only fuel counted per call stops it.
		{name: "eval-fib", code: 1, want: timeout("eval-fib", "kinfer_model_eval"),
			files: modelStudy("eval-fib", "wat/model.wasm", `mode = "fib"`, gaussian, mh)},
		{name: "c-clock-spin", code: 1, want: timeout("c-clock-spin", "kinfer_model_eval"),
			files: modelStudy("c-clock-spin", "c/clockspin/clockspin.wasm", "", gaussian, mh)},
		{name: "c-sleep", code: 0, want: []string{"hostile: done"},
			files: modelStudy("c-sleep", "c/sleep/sleep.wasm", "", gaussian, mh)},

		// Memory.
		{name: "eval-stack-overflow", code: 1, want: []string{"plugin eval-stack-overflow", "kinfer_model_eval", "stack overflow"},
			// time for the stack to fill on a busy machine
			files: join(modelStudy("eval-stack-overflow", "wat/model.wasm", `mode = "deep"`, gaussian, mh),
				plugin("model", "eval-stack-overflow", "model", "wat/model.wasm", "memory_mib = 16\ntimeout_ms = 5000\nfuel = 1_000_000_000"))},
		modeCase("eval-grow-to-limit", "grow", 0, "hostile: done"),
		{name: "c-malloc-bomb", code: 0, want: []string{"hostile: done"},
			files: modelStudy("c-malloc-bomb", "c/mallocbomb/mallocbomb.wasm", "", gaussian, mh)},
		moduleCase("min-memory-over-limit", "wat/bigmin.wasm", 1, "plugin min-memory-over-limit", "minimum memory of 1000 pages", "memory_mib=16"),
		moduleCase("alloc-out-of-range", "wat/alloc-huge.wasm", 1, "plugin alloc-out-of-range", "kinfer_alloc", "outside memory"),
		moduleCase("alloc-misaligned", "wat/alloc-misaligned.wasm", 1, "plugin alloc-misaligned", "kinfer_alloc", "not 8-byte aligned"),
		moduleCase("alloc-fails", "wat/alloc-zero.wasm", 1, "plugin alloc-fails", "kinfer_alloc returned 0"),
		{name: "method-save-60mib", code: 0, want: []string{"hostile: done"},
			args:  []string{"run", "study.toml", "-o", "out", "--workers", "2", "--checkpoint-every", "1ns"},
			files: methodFiles("method-save-60mib", "savereal", "memory_mib = 100\ntimeout_ms = 5000\nfuel = 10_000_000_000")},
		{name: "method-samples-64mib", code: 0, want: []string{"hostile: done", "2796202 samples"},
			files: methodFiles("method-samples-64mib", "samplesbig", "memory_mib = 100\ntimeout_ms = 5000\nfuel = 10_000_000_000")},

		// Spans out of range, and oversized returns.
		moduleCase("describe-out-of-range", "wat/describe-oob.wasm", 1, "plugin describe-out-of-range", "kinfer_describe", "outside memory"),
		moduleCase("last-error-out-of-range", "wat/lasterror-oob.wasm", 1, "plugin last-error-out-of-range", "kinfer_configure returned 1"),
		methodCase("ask-header-out-of-range", "headeroob", 1, "plugin ask-header-out-of-range", "kinfer_method_ask", "batch header", "outside memory"),
		methodCase("ask-points-out-of-range", "pointsoob", 1, "plugin ask-points-out-of-range", "kinfer_method_ask", "points", "outside memory"),
		// A header whose points were never set (C's NULL) read zeros at
		// address 0: every point out of support, the run "done" (audit 21).
		methodCase("ask-points-null", "pointsnull", 1, "plugin ask-points-null", "kinfer_method_ask", "points pointer 0 (NULL)"),
		methodCase("samples-out-of-range", "samplesoob", 1, "plugin samples-out-of-range", "kinfer_method_samples", "outside memory"),
		methodCase("report-out-of-range", "reportoob", 1, "plugin report-out-of-range", "kinfer_method_report", "outside memory"),
		// A report cut short: said so, not "unexpected EOF" (audit 21).
		methodCase("report-truncated", "reporttrunc", 1, "plugin report-truncated", "kinfer_method_report", "its 8 bytes of JSON end before the value does"),
		func() hcase {
			c := methodCase("save-out-of-range", "saveoob", 1, "plugin save-out-of-range", "kinfer_method_save", "outside memory")
			c.args = []string{"run", "study.toml", "-o", "out", "--workers", "2", "--checkpoint-every", "1ns"}
			return c
		}(),
		methodCase("report-300mb", "reporthuge", 1, "plugin report-300mb", "kinfer_method_report", "300000000 bytes", "at most 16777216"),
		methodCase("batch-2e25-points", "points2e25", 1, "plugin batch-2e25-points", "kinfer_method_ask", "n=33554432"),
		moduleCase("describe-2mib", "wat/describe-2mb.wasm", 1, "plugin describe-2mib", "kinfer_describe", "2097152 bytes", "at most 1048576"),
		{name: "describe-nested-100000", code: 1, want: []string{"plugin describe-nested-100000", "kinfer_describe", "deep|depth|nest"},
			files: modelStudy("describe-nested-100000", "wat/describe-deep.wasm", "", gaussian, mh)},
		methodCase("report-nested-100000", "reportdeep", 1, "plugin report-nested-100000", "kinfer_method_report", "deep|depth|nest"),
		// 15 MB, within the 16 MiB bound, of 5 M empty objects: it decoded
		// past 1 GB and wrote a summary.json kinfer then refused (audit 6).
		{name: "report-5m-values", code: 1, want: []string{"plugin report-5m-values", "kinfer_method_report", "cannot keep in summary.json", "more than 1048576 values"},
			files: methodFiles("report-5m-values", "reportbomb", "memory_mib = 100\ntimeout_ms = 5000\nfuel = 10_000_000_000")},

		// Traps and malformed results.
		// The method's notes on a partial result ("run longer") are held
		// back when a trap stopped the run (author 22).
		func() hcase {
			c := modeCase("eval-unreachable", "unreachable", 1, "plugin eval-unreachable", "kinfer_model_eval", "unreachable")
			c.check = func(t *testing.T, dir string, r result) {
				if strings.Contains(r.stdout, "WARNING (method") || !strings.Contains(r.stdout, "the run stopped on the error below") {
					t.Errorf("method notes after a trap:\n%s", r.stdout)
				}
			}
			return c
		}(),
		// A loop on one WASI call whose host work is large (a 1 MiB
		// random_get or write) or whose guest side is tiny (a clock read):
		// the host charges the call to the guest's fuel, so the fuel stops
		// it, deterministically (it was never stopped: audit 4, hostile #2).
		{name: "wasi-random-loop", code: 1, want: []string{"plugin wasi-random-loop", "kinfer_model_eval", "exceeded its fuel budget"},
			files: modelStudy("wasi-random-loop", "wat/wasi-loop.wasm", "s = 1.0", gaussian, mh)},
		{name: "wasi-write-loop", code: 1, want: []string{"plugin wasi-write-loop", "kinfer_model_eval", "exceeded its fuel budget"},
			files: modelStudy("wasi-write-loop", "wat/wasi-loop.wasm", "s = 2.0", gaussian, mh)},
		{name: "wasi-clock-loop", code: 1, want: []string{"plugin wasi-clock-loop", "kinfer_model_eval", "exceeded its fuel budget"},
			files: modelStudy("wasi-clock-loop", "wat/wasi-loop.wasm", "s = 3.0", gaussian, mh)},
		// A C model with a 512 KiB local array and a 2 000-frame
		// recursion: the 1 MiB stack that kinfer build puts first holds
		// it, and nothing overwrites the plugin's globals (audit 4).
		{name: "c-big-stack", code: 0, want: []string{"done"},
			files: modelStudy("c-big-stack", "c/bigstack/bigstack.wasm", "", gaussian, mh)},
		moduleCase("eval-log-then-trap", "wat/logtrap.wasm", 1, "plugin eval-log-then-trap", "kinfer_model_eval", "unreachable", `its last output: "abort: index 3 out of range at model.ts:12:7"`),
		modeCase("eval-divide-by-zero", "div0", 1, "plugin eval-divide-by-zero", "kinfer_model_eval", "integer divide by zero"),
		modeCase("eval-proc-exit", "exit", 1, "plugin eval-proc-exit", "kinfer_model_eval", "proc_exit(3)"),
		{name: "c-exit", code: 1, want: []string{"plugin c-exit", "kinfer_model_eval", "proc_exit(3)", `its last output: "fatal: \x1b[31mgiving up\x1b[0m"`},
			files: modelStudy("c-exit", "c/exit/exit.wasm", "", gaussian, mh)},
		func() hcase {
			c := modeCase("eval-nan", "nan", 0, "hostile: done")
			c.check = func(t *testing.T, dir string, r result) {
				if m := failedRE.FindStringSubmatch(r.stdout); m == nil || m[1] == "0" {
					t.Errorf("NaN outputs (a > 0.5) were not counted as failed evaluations: %q", r.stdout)
				}
				if !regexp.MustCompile(`non-finite values \(NaN or \+Inf\): \d+ from model\n`).MatchString(r.stdout) {
					t.Errorf("the model is not named as the source of the NaN:\n%s", r.stdout)
				}
				// summary.json names the export, the row, the output and
				// the value (audit 4: only "status non-finite").
				b, _ := os.ReadFile(filepath.Join(dir, "out", "summary.json"))
				// … under the manifest's name (eval-nan), not the spec's (model).
				if !strings.Contains(string(b), "model eval-nan: kinfer_model_eval returned status 0 with non-finite outputs") || !strings.Contains(string(b), "output y = NaN in row 0") {
					t.Errorf("summary.json does not describe the non-finite outputs:\n%s", b)
				}
			}
			return c
		}(),
		modeCase("eval-status-7", "status7", 1, "plugin eval-status-7", "kinfer_model_eval", "status 7"),
		modeCase("eval-no-status", "nostatus", 1, "plugin eval-no-status", "kinfer_model_eval", "without writing"),
		func() hcase {
			c := modeCase("eval-no-output", "noy", 1, "plugin eval-no-output", "kinfer_model_eval", "without writing")
			return c
		}(),
		modeCase("eval-returns-failure", "retfail", 1, "plugin eval-returns-failure", "kinfer_model_eval", "model failed on purpose"),
		func() hcase {
			c := likCase("likelihood-no-output", "noout", mh, 1, "plugin likelihood-no-output", "kinfer_likelihood_eval", "without writing")
			return c
		}(),
		// −∞ or NaN with status 0 is a non-finite result (status 3) of the
		// point, not a fault; with every point so, the sampler finds no
		// start and says why.
		likCase("likelihood-minus-infinity", "neginf", mh, 1, "no starting point with a finite log target"),
		// … and the run names the likelihood that gave the NaN (audit 15:
		// its advice pointed at the model and the prior).
		func() hcase {
			c := likCase("likelihood-nan", "nan", mh, 1, "no starting point with a finite log target")
			c.check = func(t *testing.T, dir string, r result) {
				if !regexp.MustCompile(`non-finite values \(NaN or \+Inf\): \d+ from likelihood \S+ \(likelihood-nan\)`).MatchString(r.stdout) {
					t.Errorf("the likelihood is not named as the source of the NaN:\n%s", r.stdout)
				}
				// The error itself names it too, after the method's advice
				// (author 22: that advice alone named the prior and model).
				if !regexp.MustCompile(`the non-finite values came from: \d+ from likelihood \S+ \(likelihood-nan\)`).MatchString(r.stderr) {
					t.Errorf("the error does not name the source of the NaN:\n%s", r.stderr)
				}
			}
			return c
		}(),
		likCase("likelihood-status-9", "status9", mh, 1, "plugin likelihood-status-9", "kinfer_likelihood_eval", "status 9"),

		// Imports and lies about the ABI.
		moduleCase("import-unknown-module", "wat/import-env.wasm", 1, "plugin import-unknown-module", "env.get_secret"),
		moduleCase("import-missing-host-function", "wat/import-kinfer.wasm", 1, "plugin import-missing-host-function", "kinfer_v1.sleep"),
		moduleCase("import-wasi-wrong-signature", "wat/import-wasi-sig.wasm", 1, "plugin import-wasi-wrong-signature", "fd_write", "signature"),
		moduleCase("import-memory", "wat/import-memory.wasm", 1, "plugin import-memory", "imports its memory"),
		moduleCase("export-signature-lie", "wat/sig-lie.wasm", 1, "plugin export-signature-lie", "kinfer_model_eval", "signature"),
		moduleCase("abi-version-2", "wat/version2.wasm", 1, "plugin abi-version-2", "ABI version 2"),
		moduleCase("capability-without-export", "wat/caps-lie.wasm", 1, "plugin capability-without-export", `"jacobian"`, "kinfer_model_jacobian"),
		moduleCase("kind-lie", "wat/kind-lie.wasm", 1, "plugin kind-lie", "describes itself as a likelihood", `kind = "model"`),
		moduleCase("memory-not-exported", "wat/no-memory.wasm", 1, "plugin memory-not-exported", "memory"),
		// A description built from random_get and the clocks is the same
		// in every instance: the sandbox gives every instance the same.
		moduleCase("describe-from-random-and-clocks", "wat/describe-rand.wasm", 0, "hostile: done"),
		{name: "c-random-get-workers", code: 0, want: []string{"hostile: done"},
			files: modelStudy("c-random-get-workers", "c/random/random.wasm", "", gaussian, "use = \"metropolis\"\nchains = 64\nburn_in = 20\nsamples = 20"),
			check: func(t *testing.T, dir string, r result) {
				// The same study on one worker gives the same samples.
				r1 := kinfer(t, dir, []string{"run", "study.toml", "-o", "out1", "--workers", "1"}, 0, 0)
				healthy(t, r1)
				a, _ := os.ReadFile(filepath.Join(dir, "out", "samples.csv"))
				b, _ := os.ReadFile(filepath.Join(dir, "out1", "samples.csv"))
				if len(a) == 0 || string(a) != string(b) {
					t.Errorf("samples.csv differs between --workers 2 and --workers 1 (%d and %d bytes): random_get must restart at every call", len(a), len(b))
				}
			}},

		// Methods asking too much, too little or forever.
		methodCase("draw-1e9-points", "draw1e9", 1, "plugin draw-1e9-points", "kinfer_method_ask", "n=1000000000"),
		methodCase("draw-2e24-points", "draw16m", 1, "plugin draw-2e24-points", "kinfer_method_ask", "n=16777216", "want 1..1048576"),
		// Within the batch bound, but its tell cannot fit the 16 MiB guest:
		// refused at the ask, before 2^20 evaluations (audit 11).
		methodCase("draw-1m-over-memory", "draw1m", 1, "plugin draw-1m-over-memory", "kinfer_method_ask", "1048576 points whose tell would pass", "memory_mib = 16"),
		// Within memory_mib, but beyond what the guest's allocator has
		// left: refused at the ask, with no evaluation (audit 12).
		{name: "draw-10k-beyond-alloc", code: 1, files: methodFiles("draw-10k-beyond-alloc", "draw10k", limits),
			want: []string{"plugin draw-10k-beyond-alloc", "kinfer_method_ask", "10000 points whose tell needs a 280000-byte buffer", "refused before the batch is evaluated"},
			check: func(t *testing.T, dir string, r result) {
				if !strings.Contains(r.stdout, " 0 evaluations (0 failed)") {
					t.Errorf("the batch was evaluated before its refusal:\n%s", r.stdout)
				}
			}},
		methodCase("empty-batch", "empty", 1, "plugin empty-batch", "kinfer_method_ask", "n=0"),
		methodCase("bad-want-bits", "wantbits", 1, "plugin bad-want-bits", "kinfer_method_ask", "want=0x5"),
		// done returning 7 (C's "true") is a fault of done, named so, not of
		// the report that returns it again (audit 6).
		methodCase("done-returns-7", "done7", 1, "method done-returns-7: done: plugin done-returns-7: kinfer_method_done returned 7 (want 0 or 1)"),
		methodCase("bad-batch-mode", "badmode", 1, "plugin bad-batch-mode", "kinfer_method_ask", "mode 5"),
		methodCase("tell-returns-error", "tellerr", 1, "plugin tell-returns-error", "kinfer_method_tell returned 5", "tell refused on purpose"),
		func() hcase {
			c := methodCase("save-300mb", "savehuge", 1, "plugin save-300mb", "kinfer_method_save", "300000000 bytes", "at most 67108864")
			c.args = []string{"run", "study.toml", "-o", "out", "--workers", "2", "--checkpoint-every", "1ns"}
			return c
		}(),
		// A state over 64 MiB inside the guest's memory fails the
		// checkpoint, not the method: its samples so far are still
		// written (audit 15: "0 samples" after 2.2 million).
		{name: "save-65mib-keeps-samples", code: 1, args: []string{"run", "study.toml", "-o", "out", "--workers", "2", "--checkpoint-every", "1ns"},
			files: methodFiles("save-65mib-keeps-samples", "save65m", "memory_mib = 80\ntimeout_ms = 300\nfuel = 10_000_000"),
			want:  []string{"kinfer_method_save returned a state of 67108872 bytes, more than the 67108864 a checkpoint takes"},
			check: func(t *testing.T, dir string, r result) {
				if strings.Contains(r.stdout, " 0 samples") || !strings.Contains(r.stdout, "STOPPED (partial results)") {
					t.Errorf("the method's samples were not written:\n%s", r.stdout)
				}
			}},
		// A state that outgrows 64 MiB after a checkpoint succeeded: the
		// earlier checkpoint stands, the hint says the resume will fail
		// again at a later checkpoint, and a resume without
		// --checkpoint-every completes (audit 21: the hint was the plain
		// one, and ABI.md said no resume was possible).
		{name: "save-65mib-after-a-checkpoint", code: 1, args: []string{"run", "study.toml", "-o", "out", "--workers", "1", "--checkpoint-every", "1ns"},
			files: methodFiles("save-65mib-after-a-checkpoint", "save65msecond", "memory_mib = 80\ntimeout_ms = 300\nfuel = 10_000_000"),
			want:  []string{"more than the 67108864 a checkpoint takes", "the run can continue from its last checkpoint, before the failed save", "resume with a --checkpoint-every longer than what remains of the run; the default is 30s"},
			check: func(t *testing.T, dir string, r result) {
				r2 := kinfer(t, dir, []string{"run", "--resume", "out", "--checkpoint-every", "1h"}, 0, 0)
				if r2.code != 0 || !strings.Contains(r2.stdout, "done") {
					t.Errorf("--resume --checkpoint-every 1h: %v", r2)
				}
			}},
		// Stopped by a signal, its final checkpoint failing: the terminal
		// says no checkpoint was written and why, and --resume says so
		// on one line (audit 15: only summary.json said it, and the
		// resume's message split the error over two lines).
		{name: "sigterm-save-fails", code: 1, sig: syscall.SIGTERM, delay: 1500 * time.Millisecond,
			files: methodFiles("sigterm-save-fails", "neverdonesave65m", "memory_mib = 80\ntimeout_ms = 300\nfuel = 10_000_000"),
			want:  []string{"interrupted", "partial results written to out; no checkpoint was written: method sigterm-save-fails: save state:", "more than the 67108864 a checkpoint takes"},
			check: func(t *testing.T, dir string, r result) {
				stopped(t, dir, r)
				r2 := kinfer(t, dir, []string{"run", "--resume", "out"}, 0, 0)
				if r2.code != 1 || !strings.Contains(r2.stderr, "no checkpoint was written since its method could not save its state; run it again") ||
					strings.Count(strings.TrimSpace(r2.stderr), "\n") != 0 {
					t.Errorf("--resume after a failed save: %v", r2)
				}
			}},
		func() hcase {
			// A method that is never done runs until the user stops it;
			// then partial results are written.
			c := methodCase("never-done-sigterm", "neverdone", 1, "interrupted")
			c.sig, c.delay = syscall.SIGTERM, 1500*time.Millisecond
			c.check = stopped
			return c
		}(),

		func() hcase {
			// Never done, and its samples never return: after SIGINT the
			// samples call gets StopGrace (500 ms), not its fuel scaled
			// by the points told nor its timeout_ms of a minute (audit 5:
			// 82 s, and the fault not recorded).
			c := hcase{name: "samples-loop-after-sigint", code: 1, want: []string{"interrupted by SIGINT"},
				files: methodFiles("samples-loop-after-sigint", "neverdoneloopsamples", "memory_mib = 16\ntimeout_ms = 60000")}
			c.sig, c.delay = syscall.SIGINT, 1500*time.Millisecond
			c.check = func(t *testing.T, dir string, r result) {
				stopped(t, dir, r)
				if r.elapsed > c.delay+3*time.Second {
					t.Errorf("stopped %v after the start, signal at %v", r.elapsed, c.delay)
				}
				if e, _ := summary(t, dir)["error"].(string); !strings.Contains(e, "kinfer_method_samples did not finish within 500 ms of the run's stop") {
					t.Errorf("summary.json error %q", e)
				}
			}
			return c
		}(),

		// Manifests and module paths.
		wasmCase("wasm-dev-zero", "/dev/zero", nil, "plugin.toml:5", `key "wasm"`, "wasm-dev-zero", "absolute path"),
		wasmCase("wasm-fifo", "fifo.wasm", func(t *testing.T, dir string) { mkfifo("model/fifo.wasm")(t, dir) }, "plugin wasm-fifo", "fifo.wasm", "named pipe"),
		wasmCase("wasm-sparse-2gib", "big.wasm", func(t *testing.T, dir string) { sparse("model/big.wasm", 2<<30, "\x00asm\x01\x00\x00\x00")(t, dir) }, "plugin wasm-sparse-2gib", "big.wasm", "2 GiB", "256 MiB"),
		wasmCase("wasm-dot-dot", "../model/model.wasm", nil, `key "wasm"`, "wasm-dot-dot", "leaves the folder"),
		wasmCase("wasm-absolute", "@ABS@", nil, `key "wasm"`, "wasm-absolute", "absolute path"),
		wasmCase("wasm-symlink-escape", "link.wasm", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "outside.wasm"), []byte("\x00asm\x01\x00\x00\x00"), 0o644)
			if err := os.Symlink("../outside.wasm", filepath.Join(dir, "model", "link.wasm")); err != nil {
				t.Skip("no symlinks:", err)
			}
		}, "plugin wasm-symlink-escape", "link.wasm", "outside the folder"),
		wasmCase("wasm-not-wasm", "plugin.toml", nil, "plugin wasm-not-wasm", "not a WebAssembly binary"),
		manifestCase("sha256-mismatch", strings.Replace(manifest("sha256-mismatch", "model", "model.wasm", limits), "wasm = ", "sha256 = \""+strings.Repeat("0", 64)+"\"\nwasm = ", 1),
			"plugin sha256-mismatch", "sha256 mismatch", strings.Repeat("0", 64)),
		manifestCase("timeout-9e12", manifest("timeout-9e12", "model", "model.wasm", "timeout_ms = 9000000000000"), "plugin timeout-9e12", "timeout_ms = 9000000000000", "trusted = true"),
		manifestCase("timeout-negative", manifest("timeout-negative", "model", "model.wasm", "timeout_ms = -1"), "plugin.toml:8", `key "limits.timeout_ms"`, "must be ≥ 0"),
		manifestCase("timeout-overflow", manifest("timeout-overflow", "model", "model.wasm", "timeout_ms = 9223372036855"), "plugin.toml:8", `key "limits.timeout_ms"`, "beyond the largest timeout"),
		manifestCase("timeout-out-of-int64", manifest("timeout-out-of-int64", "model", "model.wasm", "timeout_ms = 99999999999999999999"), "plugin.toml:8", "limits.timeout_ms"),
		manifestCase("fuel-float", manifest("fuel-float", "model", "model.wasm", "fuel = 1e15"), "plugin.toml:8", `key "limits.fuel"`, "want an integer"),
		manifestCase("fuel-unlimited-untrusted", manifest("fuel-unlimited-untrusted", "model", "model.wasm", "fuel = 0"), "plugin fuel-unlimited-untrusted", "fuel = 0", "trusted = true"),
		// The run's study trusts the plugin; a command reading the run
		// directory afterwards does not take that from the study it names
		// (the directory may come from elsewhere: audit 21, a forged one
		// made report and analyze spin forever) unless --trust-study.
		{name: "fuel-unlimited-trusted", code: 0, want: []string{"hostile: done"}, files: map[string]string{
			"model/plugin.toml": manifest("fuel-unlimited-trusted", "model", "model.wasm", "fuel = 0\ntimeout_ms = 2000"), "model/model.wasm": "@wat/model.wasm",
			"d.csv": data, "study.toml": study(okModel+"\ntrusted = true", gaussian, mh)},
			check: func(t *testing.T, dir string, r result) {
				if r := kinfer(t, dir, []string{"analyze", "out"}, 0, 0); r.code != 1 || !strings.Contains(r.stderr, "trusted = true is not honoured here: kinfer analyze reads a run directory") || !strings.Contains(r.stderr, "--trust-study") {
					t.Errorf("analyze without --trust-study: %v", r)
				}
				if r := kinfer(t, dir, []string{"analyze", "--trust-study", "out"}, 0, 0); r.code != 0 {
					t.Errorf("analyze --trust-study: %v", r)
				}
				if r := kinfer(t, dir, []string{"run", "--verify", "out"}, 0, 0); r.code != 1 || !strings.Contains(r.stderr, "kinfer run --verify reads a run directory") ||
					!strings.Contains(r.stderr, "failed before it wrote anything") {
					t.Errorf("run --verify without --trust-study: %v", r)
				}
				if r := kinfer(t, dir, []string{"run", "--verify", "out", "--trust-study"}, 0, 0); r.code != 0 || !strings.Contains(r.stdout, "identical") {
					t.Errorf("run --verify --trust-study: %v", r)
				}
				if r := kinfer(t, dir, []string{"run", "study.toml", "--trust-study"}, 0, 0); r.code != 2 || !strings.Contains(r.stderr, "--trust-study is for --resume and --verify") {
					t.Errorf("run STUDY --trust-study: %v", r)
				}
			}},
		manifestCase("manifest-nested-100000", manifest("manifest-nested-100000", "model", "model.wasm", limits)+"[build]\nx = "+deepNest+"\n", "plugin.toml:12", "nested more than 8 deep"),
		{name: "plugin-dev-zero", code: 1, want: []string{"study.toml:5", `key "model.plugin"`, "/dev/zero", "not a regular file"},
			files: map[string]string{"d.csv": data, "study.toml": study("plugin = \"/dev/zero\"", gaussian, mh)}},
		// kinfer validate reads a file whole to tell a manifest from a study.
		{name: "validate-fifo", code: 1, want: []string{"plugin.toml", "named pipe"}, args: []string{"validate", "plugin.toml"},
			setup: mkfifo("plugin.toml")},
		{name: "validate-dev-zero", code: 1, want: []string{"/dev/zero", "not a regular file"}, args: []string{"validate", "/dev/zero"}},

		// Studies and data.
		dataCase("data-byte-order-mark", "\xEF\xBB\xBF"+strings.ReplaceAll(pullTest, "\n", "\r\n"), 0, "ligament: done"),
		dataCase("data-2mib-line", "length_mm,force_N\n"+strings.Repeat("1", 2<<20)+"\n", 1, "d.csv:2", "a line longer than 1 MiB"),
		dataCase("data-ragged", "length_mm,force_N\n29,10\n30\n", 1, "d.csv:3", "1 fields, but the header has 2 columns"),
		dataCase("data-tab-separated", strings.ReplaceAll(pullTest, ",", "\t"), 1, "d.csv:1", "a comma-separated file is expected", "tabs"),
		dataCase("data-semicolons", strings.ReplaceAll(strings.ReplaceAll(pullTest, ",", ";"), ".", ","), 1, "d.csv:1", "semicolons"),
		dataCase("data-utf16", "\xFF\xFEl\x00e\x00", 1, "d.csv", "UTF-16"),
		{name: "data-dev-zero", code: 1, want: []string{"study.toml:10", `key "data[0].file"`, "/dev/zero", "character device"},
			files: map[string]string{"study.toml": ligamentStudy("/dev/zero", "")}},
		{name: "data-fifo", code: 1, want: []string{`key "data[0].file"`, "fifo.csv", "named pipe"}, setup: mkfifo("fifo.csv"),
			files: map[string]string{"study.toml": ligamentStudy("fifo.csv", "")}},
		{name: "data-sparse-2gib", code: 1, want: []string{`key "data[0].file"`, "big.csv", "more than the 1 GiB accepted"}, setup: sparse("big.csv", 2<<30, "length_mm,force_N\n"),
			files: map[string]string{"study.toml": ligamentStudy("big.csv", "")}},
		studyCase("study-nan-bound", strings.Replace(ligamentStudy("d.csv", ""), "uniform = [2000.0, 9000.0]", "uniform = [nan, 9000.0]", 1), 1, "study.toml:17", `key "prior.k"`),
		studyCase("study-nested-100000", ligamentStudy("d.csv", "")+"x = "+deepNest+"\n", 1, "study.toml:25", "nested more than 8 deep"),
		studyCase("study-dotted-key", "name = \"x\"\n"+"a"+strings.Repeat(".a", 300000)+" = 1\n", 1, "study.toml:2", "key path with more than 10 parts"),
		studyCase("study-2mib", ligamentStudy("d.csv", "")+strings.Repeat("# padding\n", 210000), 1, "study.toml", "too large"),
		studyCase("study-typo", strings.Replace(ligamentStudy("d.csv", ""), "chains = 2", "chians = 2", 1), 1, "study.toml:22", `key "method.chians"`),
		// memory_mib = 4096 is allowed without trust, but 2 workers' instances
		// of it took ≈ 23 GB of host memory: charged against the budget.
		// The workers share as many instances as half the budget holds (one
		// at least); one that alone exceeds the budget is refused.
		func() hcase {
			c := manifestCase("plugin-memory-over-budget", manifest("plugin-memory-over-budget", "model", "model.wasm", "memory_mib = 4096\ntimeout_ms = 300\nfuel = 10_000_000"),
				"plugin plugin-memory-over-budget: memory_mib 4096 × 1 instances", "more than the memory budget of 4 GiB")
			c.args = []string{"run", "study.toml", "-o", "out", "--workers", "2", "--memory-budget", "4GiB"}
			return c
		}(),
		// A built-in evaluation of an hour (line's cost_ms): the first
		// SIGTERM once waited for it; now the run stops 3 s later without
		// it, with its partial results.
		{name: "sigterm-long-builtin-eval", code: 1, want: []string{"interrupted by SIGTERM", "partial results written"}, sig: syscall.SIGTERM, delay: time.Second,
			args: []string{"run", "study.toml", "-o", "out", "--workers", "2"},
			files: map[string]string{"d.csv": "x,y\n1,3\n2,5\n", "study.toml": "name = \"slow\"\n[model]\nuse = \"line\"\ncost_ms = 3600000\nwait = \"sleep\"\n[[data]]\nname = \"d\"\nfile = \"d.csv\"\n" +
				"[[likelihood]]\nuse = \"gaussian\"\nsigma = 0.1\n[prior]\na = { uniform = [-1.0, 1.0] }\nb = { uniform = [0.0, 3.0] }\n[method]\nuse = \"metropolis\"\nchains = 2\n"},
			check: func(t *testing.T, dir string, r result) {
				if _, err := os.Stat(filepath.Join(dir, "out", "summary.json")); err != nil {
					t.Errorf("no partial summary.json: %v", err)
				}
				if r.elapsed > 10*time.Second {
					t.Errorf("stopped %v after start; want about 1 s + 3 s", r.elapsed)
				}
			}},
		// A billion workers allocated their buffers (8 GB) before any work.
		{name: "workers-1e9", code: 2, want: []string{"--workers must be in [1, 1024], got 1000000000"},
			args: []string{"run", "study.toml", "--workers", "1000000000"}, files: map[string]string{"d.csv": pullTest, "study.toml": ligamentStudy("d.csv", "")}},
		// The name makes the default output folder: ".." once wrote the run
		// next to the study, "../../x" two folders up.
		{name: "study-name-dotdot", code: 1, want: []string{"study.toml:1", `key "name"`, "is not a folder name"},
			args: []string{"run", "study.toml"}, files: map[string]string{"d.csv": pullTest, "study.toml": strings.Replace(ligamentStudy("d.csv", ""), `name = "ligament"`, `name = ".."`, 1)}},
		// int(1e300) is math.MinInt64: it once passed the range checks and
		// crashed the host indexing the outputs.
		studyCase("montecarlo-condition-1e300", ligamentStudy("d.csv", "use = \"montecarlo\"\nquantity = \"force_N\"\ncondition = 1e300"), 1, "montecarlo", "condition", "whole number"),
		studyCase("montecarlo-batch-1e19", ligamentStudy("d.csv", "use = \"montecarlo\"\nquantity = \"force_N\"\nbatch = 1e19"), 1, "montecarlo", "batch", "whole number"),
		func() hcase {
			c := studyCase("metropolis-1e13-samples", ligamentStudy("d.csv", "use = \"metropolis\"\nchains = 100000\nsamples = 100000000"), 1, "memory")
			return c
		}(),

		// Stopping a run and resuming it gives the samples of a run that
		// was not stopped. 4 × 250 000 samples take about 2.5 s of CPU: long
		// enough to be stopped after 1 s. The resume and the straight run do
		// real work, so they get workDeadline: with the hang deadline
		// they failed when other processes loaded the 2 cores.
		{name: "sigterm-then-resume", code: 1, want: []string{"interrupted"}, sig: syscall.SIGTERM, delay: time.Second,
			args:  []string{"run", "study.toml", "-o", "out", "--workers", "2", "--checkpoint-every", "100ms"},
			files: map[string]string{"d.csv": pullTest, "study.toml": ligamentStudy("d.csv", "use = \"metropolis\"\nchains = 4\nburn_in = 2000\nsamples = 250000")},
			check: func(t *testing.T, dir string, r result) {
				stopped(t, dir, r)
				res := kinferWithin(t, dir, []string{"run", "--resume", "out", "--workers", "1"}, 0, 0, workDeadline)
				healthy(t, res)
				if res.code != 0 {
					t.Fatalf("resume failed\n%v", res)
				}
				full := kinferWithin(t, dir, []string{"run", "study.toml", "-o", "full", "--workers", "2"}, 0, 0, workDeadline)
				healthy(t, full)
				a, _ := os.ReadFile(filepath.Join(dir, "out", "samples.csv"))
				b, _ := os.ReadFile(filepath.Join(dir, "full", "samples.csv"))
				if len(a) == 0 || string(a) != string(b) {
					t.Errorf("stopped and resumed run's samples.csv (%d bytes) differs from a straight run's (%d bytes)", len(a), len(b))
				}
			}},
	}
}

func TestHostile(t *testing.T) {
	all := append(append(append(append(append(cases(), surrogateCases()...), rundirCases()...), authorCases()...), outputCases()...), report3Cases()...)
	if len(all) < 45 {
		t.Fatalf("only %d cases", len(all))
	}
	seen := map[string]bool{}
	for _, c := range all {
		if seen[c.name] {
			t.Fatalf("two cases named %s", c.name)
		}
		seen[c.name] = true
	}
	for _, c := range all {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, content := range c.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if src, ok := strings.CutPrefix(content, "@"); ok {
					b, err := os.ReadFile(filepath.Join(testdata, src))
					if err != nil {
						t.Fatal(err)
					}
					content = string(b)
				}
				content = strings.ReplaceAll(content, "@ABS@", filepath.Join(dir, "model", "model.wasm"))
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c.setup != nil {
				c.setup(t, dir)
			}
			args := c.args
			if args == nil {
				args = []string{"run", "study.toml", "-o", "out", "--workers", "2"}
			}
			r := kinfer(t, dir, args, c.sig, c.delay)
			msg, _, _ := strings.Cut(strings.TrimSpace(r.stderr), "\n")
			t.Logf("exit %d in %v, peak %d MB: %s", r.code, r.elapsed.Round(time.Millisecond), r.rss>>20, msg)
			p := problems(r)
			if r.code != c.code {
				p = append(p, fmt.Sprintf("exit code %d, want %d", r.code, c.code))
			}
			text := r.stderr
			if c.code == 0 {
				text = r.stdout + r.stderr
			}
			if missing := mentions(text, c.want); len(missing) > 0 {
				p = append(p, fmt.Sprintf("the output does not mention %q", missing))
			}
			if len(p) > 0 {
				t.Errorf("%s\n%v", strings.Join(p, "; "), r)
			}
			if c.check != nil && !t.Failed() {
				c.check(t, dir, r)
			}
		})
	}
}
