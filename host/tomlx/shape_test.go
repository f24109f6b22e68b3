package tomlx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShapeBounds(t *testing.T) {
	many := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(f(i))
		}
		return b.String()
	}
	cases := []struct{ name, text, want string }{
		{"deep array", "a = 1\nb = " + strings.Repeat("[", 9) + strings.Repeat("]", 9) + "\n", "s.toml:2: arrays and inline tables nested more than 8 deep"},
		{"deep inline table", "x = " + strings.Repeat("{b=", 100000) + "1" + strings.Repeat("}", 100000) + "\n", "s.toml:1: arrays and inline tables nested more than 8 deep"},
		{"deep mixed", "x = [{a = [{b = [{c = [{d = [1]}]}]}]}]\n", "nested more than 8 deep"},
		{"dotted key", "a.b.c.d.e.f.g.h.i.j.k = 1\n", "s.toml:1: key path with more than 10 parts"},
		{"dotted key in inline table", "x = { a.b.c.d.e.f.g.h.i.j = 1 }\n", "key path with more than 10 parts"},
		{"inline tables and dotted keys", "[a.b]\nc.d = { e.f = { g.h = { i.j.k = 1 } } }\n", "s.toml:2: key path with more than 10 parts"},
		{"array of inline tables", "[a.b.c.d]\ne.f.g = [{ h.i = [{ j = 1, k.l = 2 }] }]\n", "s.toml:2: key path with more than 10 parts"},
		{"long dotted key", "a" + strings.Repeat(".a", 100000) + " = 1\n", "key path with more than 10 parts"},
		{"header", "[a.b.c.d.e.f.g.h.i.j.k]\n", "s.toml:1: table header with 11 parts"},
		{"array header", "\n[[a.b.c.d.e.f.g.h.i.j.k]]\n", "s.toml:2: table header with 11 parts"},
		{"keys", many(MaxKeys+1, func(i int) string { return fmt.Sprintf("k%d = 1\n", i) }), fmt.Sprintf("s.toml:%d: more than 10000 keys", MaxKeys+1)},
		{"tables", many(MaxKeys+1, func(i int) string { return fmt.Sprintf("[t%d]\n", i) }), "more than 10000 keys and tables"},
		{"values", "a = [" + strings.Repeat("1,", MaxValues) + "1]\n", "more than 200000 values"},
		{"size", "a = \"" + strings.Repeat("x", MaxBytes) + "\"\n", "at most 1048576 accepted"},
	}
	for _, c := range cases {
		var v map[string]any
		_, err := Decode("s.toml", c.text, &v)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want %q, got %.200v", c.name, c.want, err)
		}
	}
}

// Brackets, braces, dots and equals signs inside strings and comments do
// not count; the limits themselves are accepted.
func TestShapeIgnoresStringsAndComments(t *testing.T) {
	deep := strings.Repeat("[", 20)
	text := strings.Join([]string{
		`a = "` + deep + `.a.b.c.d.e.f.g.h.i = {{{{{{{{{"  # ` + deep,
		`b = '` + deep + `\'`,
		`c = """` + deep + "\n" + `a.b.c.d.e.f.g.h.i = 1 \"""` + deep + `"""`,
		`d = '''` + deep + "\n" + `''' `,
		`e = """x""""`,
		`# [a.b.c.d.e.f.g.h.i]`,
		`f = ` + strings.Repeat("[", 8) + `"]]]]]]]]]]"` + strings.Repeat("]", 8),
		`"g.h.i.j.k.l.m.n.o.p.q.r" = 1.5e3`,
		`h = 1.2.3`, // a syntax error the decoder reports, not a dotted key
		`[x."a.b.c.d.e.f.g.h.i.j.k.l"]`,
		`y = { a = 1, b = [1, 2.5], c = { d = "}}}}" } }`,
	}, "\n") + "\n"
	if err := checkShape("s.toml", text); err != nil {
		t.Fatal(err)
	}
	limits := "a.b.c.d.e.f.g.h.i.j = " + strings.Repeat("[", 8) + strings.Repeat("]", 8) + "\n" +
		"[a.b.c.d.e.f.g.h.i.j]\n" +
		"[a.b.c]\nd.e = { f = { g.h = [{ i.j = 1 }] } }\n"
	if err := checkShape("s.toml", limits); err != nil {
		t.Fatalf("the limits themselves: %v", err)
	}
}

// Every TOML file of the repository (studies, manifests) is well inside
// the bounds.
func TestShapeOfRepositoryFiles(t *testing.T) {
	n := 0
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".toml") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		return checkShape(p, string(b))
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 5 {
		t.Fatalf("only %d TOML files found", n)
	}
}

func TestDecodeFileBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, []byte("a = 1\n"+strings.Repeat("# padding\n", MaxBytes/10+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if _, err := DecodeFile(big, &v); err == nil || !strings.Contains(err.Error(), "big.toml: too large: at most 1 MiB accepted") {
		t.Fatalf("got %v", err)
	}
	if _, err := DecodeFile("/dev/zero", &v); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("got %v", err)
	}
}

func TestTypeMessages(t *testing.T) {
	var c struct {
		N int64   `toml:"n"`
		F float64 `toml:"f"`
		S string  `toml:"s"`
	}
	for text, want := range map[string]string{
		"n = 1e9\n":     `s.toml:1: key "n": want an integer, got a float (write an integer`,
		"\nn = \"3\"\n": `s.toml:2: key "n": want an integer, got a string`,
		"s = 3\n":       `s.toml:1: key "s": want a string, got an integer`,
		"f = [1]\n":     `s.toml:1: key "f": want a number, got an array`,
	} {
		_, err := Decode("s.toml", text, &c)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: want %q, got %v", text, want, err)
		}
	}
}
