package hostile

import (
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
		// F10: a guest message with ESC, CR and newline is shown escaped,
		// on one line.
		func() hcase {
			c := derivCase("last-error-escapes", "escfail", mh, 1, `bad \x1b[31mred\x1b[0m\nsecond line\r kinfer: fake line`)
			c.check = noRawControl
			return c
		}(),
	}
}
