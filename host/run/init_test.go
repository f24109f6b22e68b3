package run

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
)

// A study's initial points (init = "starts.csv") answer the method's first
// prior-draw requests, in order, before the prior's stream is used; the
// stream then continues where it would have started.
func TestInitialPointsServedFirst(t *testing.T) {
	dir := t.TempDir()
	src := read(t, "../../examples/quickstart/study.toml")
	text := strings.Replace(string(src), "seed = 1\n", "seed = 1\ninit = \"starts.csv\"\n", 1)
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(text), 0o644)
	os.WriteFile(filepath.Join(dir, "force_length.csv"), read(t, "../../examples/quickstart/force_length.csv"), 0o644)
	os.WriteFile(filepath.Join(dir, "starts.csv"), []byte("eps_r,k\n0.01,3000\n0.02,4000\n0.03,5000\n"), 0o644)
	s, err := study.Load(context.Background(), filepath.Join(dir, "study.toml"), study.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	tg := target.New(s, 1)
	rng := rand.New(rand.NewPCG(1, priorStream))
	pts, used, err := draw(s, tg, rng, 2, 0)
	if err != nil || used != 2 || pts[0][0] != 3000 || pts[0][1] != 0.01 || pts[1][0] != 4000 {
		t.Fatalf("first batch %v used %d err %v", pts, used, err)
	}
	pts, used, err = draw(s, tg, rng, 3, used)
	if err != nil || used != 3 || pts[0][0] != 5000 {
		t.Fatalf("second batch %v used %d err %v", pts, used, err)
	}
	// After the starts, the prior's stream from its beginning.
	want, _ := tg.DrawPrior(rand.New(rand.NewPCG(1, priorStream)), 2)
	if pts[1][0] != want[0][0] || pts[2][1] != want[1][1] {
		t.Fatalf("prior draws after the starts %v, want %v", pts[1:], want)
	}
}

func TestInitialPointsChecked(t *testing.T) {
	for _, c := range []struct{ csv, want, epsPrior string }{
		{"k,eps_r,extra\n3000,0.01,1\n", `starts.csv:1: column "extra": not a free parameter`, ""},
		{"k\n3000\n", "every free parameter needs a column", ""},
		{"k,eps_r\n3000,0.01\n9500,0.01\n", `starts.csv:3: column "k": start 9500 is outside the prior's support [2000, 9000]` + "\n", ""},
		// A prior far wider than the model's bounds: the interval quoted
		// is the bounds', and the message says so.
		{"k,eps_r\n3000,5\n", `start 5 is outside the prior's support [-0.5, 0.4] (the prior uniform(-1e+09, 1e+09) cut to the model's bounds)`, "[-1e9, 1e9]"},
	} {
		dir := t.TempDir()
		src := read(t, "../../examples/quickstart/study.toml")
		text := strings.Replace(string(src), "seed = 1\n", "seed = 1\ninit = \"starts.csv\"\n", 1)
		if c.epsPrior != "" {
			text = strings.Replace(text, "eps_r = { uniform = [-0.2, 0.3] }", "eps_r = { uniform = "+c.epsPrior+" }", 1)
		}
		os.WriteFile(filepath.Join(dir, "study.toml"), []byte(text), 0o644)
		os.WriteFile(filepath.Join(dir, "force_length.csv"), read(t, "../../examples/quickstart/force_length.csv"), 0o644)
		os.WriteFile(filepath.Join(dir, "starts.csv"), []byte(c.csv), 0o644)
		_, err := study.Load(context.Background(), filepath.Join(dir, "study.toml"), study.Options{Workers: 1})
		if err == nil || !strings.Contains(err.Error()+"\n", c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
}
