package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The cases of a third-party plugin author's audit: a guest whose
// derivative exports fail, whose method returns impossible samples, whose
// messages hold terminal control sequences. Each asserts that the guest's
// own status and kinfer_last_error message reach the user, escaped.

// derivCase is a study of the deriv test model (wat/deriv.wat) in a mode
// with the given method table.
func derivCase(name, mode, method string, code int, want ...string) hcase {
	return hcase{name: name, code: code, want: want,
		files: modelStudy(name, "wat/deriv.wasm", `mode = "`+mode+`"`, gaussian, method)}
}

const levmar = "use = \"levmar\""

// noRawControl fails when stderr holds a control character other than
// the newlines between kinfer's own lines, or a guest line that forges
// one of kinfer's (a line starting "kinfer:" that is not the last).
func noRawControl(t *testing.T, _ string, r result) {
	for _, c := range r.stderr + r.stdout {
		if c < 0x20 && c != '\n' || c == 0x7f {
			t.Errorf("output holds the raw control character %q:\n%s", c, r.stderr)
			return
		}
	}
	if strings.Contains(r.stderr, "\n kinfer: fake line") || strings.Contains(r.stderr, "\nsecond line") {
		t.Errorf("a guest message was split into lines:\n%s", r.stderr)
	}
}

// derivFailures checks summary.json's tally of failed Jacobians or
// gradients (key) and the note naming the export and the guest's message.
func derivFailures(key, export, msg string) func(t *testing.T, dir string, r result) {
	return func(t *testing.T, dir string, r result) {
		s := summary(t, dir)
		if n, _ := s[key].(float64); n < 1 {
			t.Errorf("summary.json %s = %v, want ≥ 1", key, s[key])
		}
		note, _ := s["derivative_failures"].(string)
		if !strings.Contains(note, export) || !strings.Contains(note, msg) {
			t.Errorf("summary.json derivative_failures = %q, want %s and %q", note, export, msg)
		}
	}
}

func authorCases() []hcase {
	return []hcase{
		// F1: a model Jacobian / VJP that returns status 1 with a message.
		// The method's error says the Jacobian (gradient) failed, not
		// "status ok … check the prior", and the host adds the export, its
		// status and the guest's message.
		func() hcase {
			c := derivCase("jacobian-fails", "jacfail", levmar, 1,
				"no starting point with a Jacobian", "kinfer_model_jacobian returned 1 (failed)", "jacobian failed on purpose")
			c.check = derivFailures("jacobian_failures", "kinfer_model_jacobian", "jacobian failed on purpose")
			return c
		}(),
		func() hcase {
			c := derivCase("vjp-fails", "vjpfail", adam, 1,
				"no starting point with a gradient", "kinfer_model_vjp returned 1 (failed)", "vjp failed on purpose")
			c.check = derivFailures("gradient_failures", "kinfer_model_vjp", "vjp failed on purpose")
			return c
		}(),
		// F1: an illegal status and a failed kinfer_alloc carry the
		// guest's kinfer_last_error message (ABI.md §3).
		derivCase("jacobian-status-7", "jac7", levmar, 1, "plugin jacobian-status-7", "kinfer_model_jacobian returned status 7", "status seven on purpose"),
		derivCase("alloc-returns-0", "alloc0", levmar, 1, "plugin alloc-returns-0", "kinfer_alloc returned 0", "alloc refused on purpose"),
		// F9: kinfer_method_samples rows no evaluated point can have are
		// refused when read, naming the export and the row, and are not
		// written to samples.csv.
		samplesCase("samples-nan-theta", "samplesnan", "", "plugin samples-nan-theta", "kinfer_method_samples", "sample row 1", "θ[0] = NaN"),
		samplesCase("samples-theta-outside", "samplesout", "", "plugin samples-theta-outside", "kinfer_method_samples", "sample row 1", "θ[0] = 5, outside [0, 1]"),
		samplesCase("samples-inf-log-prior", "samplesinf", "", "plugin samples-inf-log-prior", "kinfer_method_samples", "sample row 1", "log prior +Inf"),
		// With a transform the bounds are the method's coordinates: a =
		// exp(x) with a in [0, 1] is x in [−∞, 0]; x = 5 is outside, and
		// the method's own (finite, negative) rows pass.
		samplesCase("samples-outside-transformed", "samplesout", logTransform, "plugin samples-outside-transformed", "kinfer_method_samples", "θ[0] = 5, outside [-Inf, 0]"),
		func() hcase {
			c := samplesCase("samples-transformed-ok", "ok", logTransform, "hostile: done")
			c.code, c.check = 0, nil
			return c
		}(),
		// F3: a likelihood whose kinfer_likelihood_eval_batch disagrees
		// (deterministically) with kinfer_likelihood_eval is named as such,
		// with ABI.md §6.2, not called non-deterministic; one that agrees
		// is certified.
		{name: "certify-batch-disagrees", code: 1,
			files: plugin("lik", "batchlik", "likelihood", "wat/batchlik.wasm", limits),
			args:  []string{"inspect", "--certify", "--set", "mode=batchdiff", "lik/plugin.toml"},
			want:  []string{"kinfer_likelihood_eval and kinfer_likelihood_eval_batch give different results at point 0", "ABI.md §6.2"},
			check: func(t *testing.T, _ string, r result) {
				if strings.Contains(r.stderr, "not deterministic") {
					t.Errorf("a deterministic plugin called non-deterministic:\n%s", r.stderr)
				}
				// Wrong on complete data: not sent to its NaN handling
				// (audit 21).
				if strings.Contains(r.stderr, "missing (NaN)") {
					t.Errorf("a batch wrong on complete data reported as a missing observation's mismatch:\n%s", r.stderr)
				}
			}},
		// Wrong only in batches of 3: batches of 5 agree with eval, which
		// once certified it.
		{name: "certify-batch3-disagrees", code: 1,
			files: plugin("lik", "batchlik", "likelihood", "wat/batchlik.wasm", limits),
			args:  []string{"inspect", "--certify", "--set", "mode=batch3", "lik/plugin.toml"},
			want:  []string{"kinfer_likelihood_eval_batch", "in batches of 5 on the second instance", "in batches of 3 on the first"}},
		// Identical failures certify nothing (audit 4): a model failing
		// at every point, and a listed VJP failing wherever the model
		// succeeds, are refused with the export and the plugin's message.
		{name: "certify-eval-fails-everywhere", code: 1,
			files: plugin("model", "model", "model", "wat/model.wasm", limits),
			args:  []string{"inspect", "--certify", "--set", "mode=failall", "model/plugin.toml"},
			want:  []string{"kinfer_model_eval failed at all 12 points", "nothing could be certified", "model failed on purpose"}},
		{name: "certify-vjp-fails-everywhere", code: 1,
			files: plugin("model", "model", "model", "wat/model.wasm", limits),
			args:  []string{"inspect", "--certify", "--set", "mode=failvjp", "model/plugin.toml"},
			want:  []string{"kinfer_model_vjp failed at all 12 points", "serve the derivative, or do not list its capability"}},
		// The batch export, which a run uses, must skip a missing
		// observation too (audit 15: one reading NaN as 0 was
		// certified, the check calling kinfer_likelihood_eval only).
		{name: "certify-batch-reads-nan", code: 1,
			files: plugin("lik", "batchlik", "likelihood", "wat/batchlik.wasm", limits),
			args:  []string{"inspect", "--certify", "--set", "mode=batchnan", "lik/plugin.toml"},
			want:  []string{"kinfer_likelihood_eval and kinfer_likelihood_eval_batch give different results", "observation 0 (row 0, output 0) missing (NaN)", "ABI.md §6.2"}},
		// A trap of the batch export names the call's size (audit 15:
		// "wasm error: unreachable" alone).
		{name: "certify-batch-trap-named", code: 1,
			files: plugin("lik", "batchlik", "likelihood", "wat/batchlik.wasm", limits),
			args:  []string{"inspect", "--certify", "--set", "mode=batchtrap", "lik/plugin.toml"},
			want:  []string{"kinfer_likelihood_eval_batch", "unreachable", "a batch of b = "}},
		// A method whose load drops its samples is not certified (audit
		// 15: the check at batch 1, before any sample, passed it, and a
		// resumed run silently returned fewer samples). The refusal names
		// the save/load contract, not nondeterminism.
		{name: "certify-method-load-drops-samples", code: 1,
			files: methodFiles("m", "loaddropsamples", limits),
			args:  []string{"inspect", "--certify", "--set", "mode=loaddropsamples", "method/plugin.toml"},
			want:  []string{"kinfer_method_load does not restore the method", "the state must hold the samples", "ABI.md §6.3"},
			check: func(t *testing.T, _ string, r result) {
				if strings.Contains(r.stderr, "not deterministic") {
					t.Errorf("a save/load fault called non-determinism:\n%s", r.stderr)
				}
			}},
		{name: "certify-batch-agrees", code: 0,
			files: plugin("lik", "batchlik", "likelihood", "wat/batchlik.wasm", limits),
			args:  []string{"inspect", "--certify", "lik/plugin.toml"},
			want:  []string{"certified:", "kinfer_likelihood_eval_batch: 12 points", "kinfer_likelihood_eval and kinfer_likelihood_eval_batch: a missing observation (NaN) is skipped; σ NaN (sigma_free) is not used"}},
		// F5: inspect shows the fuel limit (and what needs trusted = true);
		// kinfer build into a folder that does not exist says so before
		// compiling (no raw linker error); build --help names every
		// language it builds.
		{name: "inspect-shows-fuel", code: 0,
			files: plugin("lik", "batchlik", "likelihood", "wat/batchlik.wasm", "memory_mib = 16\ntimeout_ms = 0\nfuel = 12345"),
			args:  []string{"inspect", "lik/plugin.toml"},
			want:  []string{"fuel 12345 per call", "no timeout (timeout_ms = 0)", "trusted = true"}},
		{name: "build-into-missing-folder", code: 1,
			files: map[string]string{"p/plugin.toml": manifest("p", "model", "build/out.wasm", limits), "p/p.c": "int x;\n"},
			args:  []string{"build", "p"},
			want:  []string{"p/plugin.toml", `wasm = "build/out.wasm"`, "does not exist"}},
		{name: "build-help-languages", code: 0,
			args: []string{"build", "--help"},
			want: []string{"Go, C, Rust or AssemblyScript"}},
		// F10: a spec name holding an ESC sequence (quoted raw by errors)
		// is refused at load, shown escaped.
		func() hcase {
			c := hcase{name: "spec-name-escape", code: 1,
				files: plugin("lik", "ctrlname", "likelihood", "wat/ctrlname.wasm", limits),
				args:  []string{"inspect", "lik/plugin.toml"},
				want:  []string{"kinfer_describe", "spec name", "control character"}}
			c.check = noRawControl
			return c
		}(),
		// F10: a guest message with ESC, CR and newline is shown escaped,
		// on one line.
		func() hcase {
			c := derivCase("last-error-escapes", "escfail", mh, 1, `bad \x1b[31mred\x1b[0m\nsecond line\r kinfer: fake line`)
			c.check = noRawControl
			return c
		}(),
	}
}

// logTransform makes the test method explore x = log a.
const logTransform = "\n[transform]\na = \"log\"\n"

// samplesCase is a case of the test method in a mode whose samples the
// host must refuse: the run fails and samples.csv has no row.
func samplesCase(name, mode, more string, want ...string) hcase {
	c := methodCase(name, mode, 1, want...)
	c.files["study.toml"] += more
	c.check = func(t *testing.T, dir string, r result) {
		b, err := os.ReadFile(filepath.Join(dir, "out", "samples.csv"))
		if err != nil {
			return // nothing written at all is fine too
		}
		if lines := strings.Count(strings.TrimSpace(string(b)), "\n"); lines > 0 || strings.Contains(string(b), "NaN") {
			t.Errorf("samples.csv holds %d rows:\n%s", lines, b)
		}
	}
	return c
}
