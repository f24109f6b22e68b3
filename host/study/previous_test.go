package study

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Options.Previous: a parameter left out is fixed at the previous value;
// the free ones start there; a previous value outside the model's bounds
// is an error naming it.
func TestPreviousStage(t *testing.T) {
	text := strings.Replace(base, "k = { uniform = [2000.0, 9000.0] }\n", "", 1)
	text = strings.Replace(text, "use = \"metropolis\"\nchains = 2", "use = \"levmar\"", 1)
	dir := t.TempDir()
	s, err := loadIn(t, dir, text, Options{Workers: 1, Previous: map[string]float64{"k": 4321, "eps_r": 0.05}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Base[0] != 4321 || len(s.Inherited) != 1 || s.Inherited[0] != "k" || len(s.Free) != 1 {
		t.Fatalf("base %v inherited %v free %v", s.Base, s.Inherited, s.Free)
	}
	if len(s.Starts) != 1 || s.Starts[0][0] != 0.05 {
		t.Fatalf("starts %v, want the previous eps_r 0.05", s.Starts)
	}
	_, err = loadIn(t, t.TempDir(), text, Options{Workers: 1, Previous: map[string]float64{"k": 1e9}})
	if err == nil || !strings.Contains(err.Error(), "previous stage's value 1e+09, which is outside the model's bounds") {
		t.Fatalf("out of bounds: %v", err)
	}
	// Without Previous the left-out parameter is an error, as always.
	if _, err = loadIn(t, t.TempDir(), text, Options{Workers: 1}); err == nil || !strings.Contains(err.Error(), "neither a prior nor a fixed value") {
		t.Fatalf("no previous: %v", err)
	}
}

func loadIn(t *testing.T, dir, text string, o Options) (*Study, error) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "d.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "study.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(context.Background(), p, o)
}
