package guesttext

import (
	"strings"
	"testing"
)

// TestEscape checks the audit's hostile message (ESC colour codes, a
// newline, invalid UTF-8, a CR forging a kinfer line) and that clean text,
// including non-ASCII, is unchanged.
func TestEscape(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain message", "plain message"},
		{"σ must be > 0 — ok", "σ must be > 0 — ok"},
		{"bad \xff\xfe utf8 \x1b[31mred\x1b[0m\nsecond line", "bad \uFFFD\uFFFD utf8 \\x1b[31mred\\x1b[0m\\nsecond line"},
		{"configured \r kinfer: fake line", "configured \\r kinfer: fake line"},
		{"tab\there\x00\x7f", "tab\\there\\x00\\x7f"},
		{"c1 \u009b31m", "c1 \\u009b31m"},
		// Bidi overrides reorder what a terminal shows ("evil" read "live").
		{"ok \u202Eevil\u202C done", "ok \\u202eevil\\u202c done"},
		{"isolate \u2066x\u2069 mark \u200f", "isolate \\u2066x\\u2069 mark \\u200f"},
		{"", ""},
	} {
		if got := Escape(c.in); got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func BenchmarkEscapeClean(b *testing.B) {
	s := "plugin model: kinfer_model_eval returned 1 for a batch of 8 points: configure first"
	for i := 0; i < b.N; i++ {
		_ = Escape(s)
	}
}

// EscapeLines keeps a message's line breaks and escapes the rest (audit 10).
func TestEscapeLines(t *testing.T) {
	for in, want := range map[string]string{
		"plain\ntwo lines":                   "plain\ntwo lines",
		"stat i\x1b]0;pwned\a.csv\n  next\r": `stat i\x1b]0;pwned\x07.csv` + "\n" + `  next\r`,
		"a\u202Eb":                           `a\u202eb`,
	} {
		if got := EscapeLines(in); got != want {
			t.Errorf("EscapeLines(%q) = %q, want %q", in, got, want)
		}
	}
}

// Writer escapes C0 controls but line feed and tab, DEL, C1 controls,
// bidirectional controls and invalid UTF-8 (audit 12); UTF-8 passes.
func TestWriter(t *testing.T) {
	var b strings.Builder
	w := Writer{W: &b}
	for _, s := range []string{"plain ünïcode\tcol\n", "run\x1b]0;pwned\a dir\rx\r\n", "\x7f", "c1\u009b31m bidi\u202e raw\x9b"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if want := "plain ünïcode\tcol\n" + `run\x1b]0;pwned\x07 dir\rx` + "\r\n" + `\x7f` + `c1\u009b31m bidi\u202e raw\x9b`; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
