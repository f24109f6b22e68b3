package designrun

import (
	"bytes"
	"context"
	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/dataset"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/builtin/prior"
	"github.com/kinfer/kinfer/host/study"
)

func load(t *testing.T, workers int) *study.Study {
	t.Helper()
	s, err := study.Load(context.Background(), filepath.Join("..", "..", "examples", "quickstart", "study.toml"), study.Options{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestDesignFile: one row per (point, condition), the inputs inside the
// box, the outputs the model's, independent of the number of workers.
func TestDesignFile(t *testing.T) {
	const n = 300 // two chunks
	var files [][]byte
	for _, w := range []int{1, 2} {
		s := load(t, w)
		dir := t.TempDir()
		rec, err := Run(context.Background(), s, dir, Options{Kind: "sobol-owen", N: n, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Complete || rec.Done != n || rec.ByStatus["ok"] != n {
			t.Fatalf("record %+v", rec)
		}
		b, err := os.ReadFile(filepath.Join(dir, "design.csv"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if want := 1 + n*s.Data[0].K; len(lines) != want {
			t.Fatalf("%d lines, want %d", len(lines), want)
		}
		if lines[0] != "point,status,k,eps_r,dataset,length_mm,force_N,strain" {
			t.Errorf("header %q", lines[0])
		}
		files = append(files, b)
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Error("design.csv differs between 1 and 2 workers")
	}
}

// TestResume: a run stopped after its first chunk and resumed writes the
// same file as an uninterrupted one; a resume with other settings is
// refused.
func TestResume(t *testing.T) {
	const n = 600
	s := load(t, 2)
	full := t.TempDir()
	if _, err := Run(context.Background(), s, full, Options{Kind: "lhs-maximin", N: n, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	part := t.TempDir()
	rec, err := Run(context.Background(), s, part, Options{Kind: "lhs-maximin", N: n, Workers: 2, Stop: func(int) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Complete || rec.Done != ChunkPoints {
		t.Fatalf("stopped run: done %d complete %v", rec.Done, rec.Complete)
	}
	// Garbage after the recorded length (a crash mid-chunk) is cut off.
	f, _ := os.OpenFile(filepath.Join(part, "design.csv"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("999,ok,half a line")
	f.Close()
	if _, err := Run(context.Background(), s, part, Options{Kind: "lhs", N: n, Workers: 2, Resume: true}); err == nil {
		t.Error("resume with another design accepted")
	}
	if _, err := Run(context.Background(), s, part, Options{Kind: "lhs-maximin", N: n, Workers: 1, Resume: true}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(full, "design.csv"))
	b, _ := os.ReadFile(filepath.Join(part, "design.csv"))
	if !bytes.Equal(a, b) {
		t.Error("resumed design.csv differs from the uninterrupted one")
	}
	if _, err := Run(context.Background(), s, full, Options{Kind: "lhs-maximin", N: n}); err == nil {
		t.Error("a second run into a used directory accepted")
	}
}

func TestBadOptions(t *testing.T) {
	s := load(t, 1)
	for _, o := range []Options{{Kind: "grid", N: 5}, {Kind: "sobol", N: 0}, {Kind: "sobol", N: 5, Space: "cube"},
		// Refused before the design is made: 10^12 points once crashed
		// the host out of memory, and lhs-maximin's O(n²) search ran
		// for hours, deaf to Ctrl-C.
		{Kind: "sobol", N: -3}, {Kind: "sobol", N: 1_000_000_000_000}, {Kind: "sobol", N: MaxPoints + 1},
		{Kind: "lhs-maximin", N: MaxMaximinPoints + 1}} {
		if _, err := Run(context.Background(), s, t.TempDir(), o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// TestPriorSpace: with space "prior" the design follows the prior's
// quantiles (the quickstart's priors are uniform, so the box again, but
// never at the ends).
func TestPriorSpace(t *testing.T) {
	s := load(t, 1)
	dir := t.TempDir()
	if _, err := Run(context.Background(), s, dir, Options{Kind: "sobol", N: 16, Space: "prior"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "design.csv"))
	if strings.Contains(string(b), ",2000,-0.2,") {
		t.Error("prior-space design has a point on the support's corner")
	}
}

// A prior crossing a model bound is mapped through its truncated quantile
// function: k ~ normal(2000, 1000) on k's bounds [2000, 12000] puts every
// point inside the bounds (the untruncated quantile put half of them below
// 2000, out of support). Sobol's first point is 0, clipped to 0.5/16:
// scipy.stats.truncnorm.ppf(0.03125, 0, 10, loc=2000, scale=1000) =
// 2039.1760855030975, and the second, 0.5, gives 2674.489750196082.
func TestPriorSpaceTruncated(t *testing.T) {
	const tol = 1e-9 // relative
	s := load(t, 1)
	for j, p := range s.Free {
		if p.Name == "k" {
			d, err := prior.NewNormal(2000, 1000)
			if err != nil {
				t.Fatal(err)
			}
			s.Priors[j] = d
		}
	}
	dir := t.TempDir()
	rec, err := Run(context.Background(), s, dir, Options{Kind: "sobol", N: 16, Space: "prior"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.ByStatus["out-of-support"] != 0 {
		t.Errorf("statuses %v", rec.ByStatus)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "design.csv"))
	lines := strings.Split(string(b), "\n")
	k := strings.Index(","+lines[0]+",", ",k,")
	col := strings.Count(lines[0][:k], ",")
	seen := map[int]float64{}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) <= col {
			continue
		}
		pt, _ := strconv.Atoi(f[0])
		v, _ := strconv.ParseFloat(f[col], 64)
		if !(v >= 2000 && v <= 12000) {
			t.Fatalf("point %d: k = %g outside [2000, 12000]", pt, v)
		}
		seen[pt] = v
	}
	for pt, want := range map[int]float64{0: 2039.1760855030975, 1: 2674.489750196082} {
		if math.Abs(seen[pt]-want) > tol*want {
			t.Errorf("point %d: k = %.17g, scipy truncnorm %.17g", pt, seen[pt], want)
		}
	}
	// The recorded box (a surrogate's training box) is the range sampled,
	// the quantiles at 0.5/16 and 1 − 0.5/16, not the model's bounds:
	// scipy.stats.truncnorm.ppf(1 - 0.03125, 0, 10, loc=2000, scale=1000)
	// = 4153.8746940614565 (the lower end is the first point's value above).
	var box abi.Param
	for _, p := range rec.Params {
		if p.Name == "k" {
			box = p
		}
	}
	if math.Abs(box.Lower-2039.1760855030975) > tol*2039 || math.Abs(box.Upper-4153.8746940614565) > tol*4154 {
		t.Errorf("recorded box of k [%v, %v], want the sampled range [2039.18, 4153.9]", box.Lower, box.Upper)
	}
	for pt, v := range seen {
		if v < box.Lower || v > box.Upper {
			t.Errorf("point %d: k = %v outside the recorded box", pt, v)
		}
	}
}

// Names with a comma, a quote or a line break are quoted in design.csv and
// read back as themselves (a name "y,z" shifted every column after it;
// audit 4).
func TestDesignCSVQuotesNames(t *testing.T) {
	for name, want := range map[string]string{"y": "y", "y,z": `"y,z"`, `a"b`: `"a""b"`, "l\nm": "\"l\nm\""} {
		if got := string(appendField(nil, name)); got != want {
			t.Errorf("%q: %s, want %s", name, got, want)
		}
		tb, err := dataset.Parse("d.csv", strings.NewReader("point,"+want+"\n0,1\n"))
		if err != nil || len(tb.Columns) != 2 || tb.Columns[1] != name {
			t.Errorf("%q read back as %q (%v)", name, tb.Columns, err)
		}
	}
}
