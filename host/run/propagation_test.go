package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/montecarlo"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/wasm"
)

// A propagation study: the builtin line model y = a + b·x with a and b
// uniform on [0, 1], no [[data]], no [[likelihood]], the quantity y read at
// the condition rows of [conditions] (x = 1, then x = 2).
const propagation = `name = "line-propagation"
seed = 11
[model]
use = "line"
[conditions]
x = [1.0, 2.0]
[prior]
a = { uniform = [0.0, 1.0] }
b = { uniform = [0.0, 1.0] }
[method]
use = "montecarlo"
quantity = "y"
condition = CONDITION
batch = 100
min_samples = MIN
max_samples = MAX
`

// The same propagation at x = 1 written the old way: a Gaussian term
// against an observation of 0 with σ = 1 makes the residual the output.
const oldForm = `name = "line-propagation"
seed = 11
[model]
use = "line"
[[data]]
name = "zero"
file = "zero.csv"
[[likelihood]]
use = "gaussian"
sigma = 1.0
[prior]
a = { uniform = [0.0, 1.0] }
b = { uniform = [0.0, 1.0] }
[method]
use = "montecarlo"
output = 0
batch = 100
min_samples = MIN
max_samples = MAX
`

func writeStudy(t *testing.T, dir, text string, repl ...string) string {
	t.Helper()
	text = strings.NewReplacer(repl...).Replace(text)
	p := filepath.Join(dir, "study.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "zero.csv"), []byte("x,y\n1,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func loadPath(t *testing.T, p string) *study.Study {
	t.Helper()
	s, err := study.Load(context.Background(), p, study.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mcSummary reads method_report.montecarlo of a run directory.
func mcSummary(t *testing.T, dir string) montecarlo.Summary {
	t.Helper()
	var s struct {
		Report struct {
			MC montecarlo.Summary `json:"montecarlo"`
		} `json:"method_report"`
	}
	if err := json.Unmarshal(read(t, filepath.Join(dir, "summary.json")), &s); err != nil {
		t.Fatal(err)
	}
	return s.Report.MC
}

// Known answer: y = a + b·x of independent a, b ~ U(0, 1). At x = 1 y is
// triangular on [0, 2] (F(y) = y²/2 for y ≤ 1), so its p-quantile is
// √(2p) for p ≤ 0.5 and 2 − √(2(1 − p)) above; at x = 2 it is trapezoidal
// on [0, 3] (F(y) = y²/4 for y ≤ 1, density ½ on [1, 2]), with quantile
// √(4p) for p ≤ 0.25, 2p + 0.5 on [0.25, 0.75], 3 − √(4(1 − p)) above.
// With n = 4000 draws each empirical percentile is within 4 standard
// errors, SE = √(p(1 − p)/n)/f(q) (asymptotic SE of a sample quantile),
// of the analytic one: a wrong row, output or draw distribution would be
// off by tenths.
func TestPropagationAnalyticPercentiles(t *testing.T) {
	const n = 4000
	tri := func(p float64) (q, f float64) {
		if p <= 0.5 {
			q = math.Sqrt(2 * p)
			return q, q
		}
		q = 2 - math.Sqrt(2*(1-p))
		return q, 2 - q
	}
	trap := func(p float64) (q, f float64) {
		switch {
		case p <= 0.25:
			q = math.Sqrt(4 * p)
			return q, q / 2
		case p <= 0.75:
			return 2*p + 0.5, 0.5
		}
		q = 3 - math.Sqrt(4*(1-p))
		return q, (3 - q) / 2
	}
	for cond, quant := range []func(float64) (float64, float64){tri, trap} {
		dir := t.TempDir()
		p := writeStudy(t, dir, propagation, "CONDITION", []string{"0", "1"}[cond], "MIN", "4000", "MAX", "4000")
		out := filepath.Join(dir, "out")
		sum, err := Run(context.Background(), loadPath(t, p), Options{OutDir: out, Workers: 2})
		if err != nil || !sum.Complete {
			t.Fatalf("condition %d: %v", cond, err)
		}
		if len(sum.Likelihoods) != 0 || sum.Evaluations != n {
			t.Errorf("condition %d: likelihoods %v, %d evaluations", cond, sum.Likelihoods, sum.Evaluations)
		}
		mc := mcSummary(t, out)
		if mc.N != n || mc.Failed != 0 || mc.Quantity != "y" || mc.Condition != cond {
			t.Fatalf("condition %d: n %d failed %d quantity %q condition %d", cond, mc.N, mc.Failed, mc.Quantity, mc.Condition)
		}
		// samples.csv and samples.parquet carry the quantity as a column
		// named after the output, in summary.json's values order.
		names, cols, err := ReadParquet(filepath.Join(out, ParquetFile))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(names, ",") != "a,b,log_prior,log_likelihood,y" {
			t.Fatalf("samples.parquet columns %v", names)
		}
		lines := strings.Split(strings.TrimSpace(string(read(t, filepath.Join(out, "samples.csv")))), "\n")
		if lines[0] != "a,b,log_prior,log_likelihood,y" || len(lines) != n+1 {
			t.Fatalf("samples.csv header %q, %d lines", lines[0], len(lines))
		}
		for i, v := range mc.Values {
			a, b, y := cols[0][i], cols[1][i], cols[4][i]
			if y != v || cols[3][i] != 0 || y != a+b*float64(cond+1) {
				t.Fatalf("condition %d sample %d: y %v, value %v, a + b·x %v, log likelihood %v", cond, i, y, v, a+b*float64(cond+1), cols[3][i])
			}
		}
		for _, pc := range montecarlo.Percentiles {
			pr := pc / 100
			q, f := quant(pr)
			se := math.Sqrt(pr*(1-pr)/n) / f
			if got := mc.Pct[fmt.Sprintf("p%g", pc)]; math.Abs(got-q) > 4*se {
				t.Errorf("condition %d: p%g = %.4f, analytic %.4f (4 SE = %.4f)", cond, pc, got, q, 4*se)
			}
		}
	}
}

// Old form (residual of a Gaussian term against 0 with σ 1) and new form
// (quantity, no data, no likelihood) give the same quantities bit for bit
// with the same seed; the new form gives the same samples.csv on 1 and 2
// workers, and a run killed mid-way and resumed gives the same samples.csv
// and quantities as an uninterrupted one.
func TestPropagationOldFormWorkersResume(t *testing.T) {
	repl := []string{"CONDITION", "0", "MIN", "300", "MAX", "700"}
	oldDir, newDir := t.TempDir(), t.TempDir()
	if _, err := Run(context.Background(), loadPath(t, writeStudy(t, oldDir, oldForm, repl...)), Options{OutDir: filepath.Join(oldDir, "out"), Workers: 2}); err != nil {
		t.Fatal(err)
	}
	newStudy := writeStudy(t, newDir, propagation, repl...)
	straight := filepath.Join(newDir, "w2")
	if _, err := Run(context.Background(), loadPath(t, newStudy), Options{OutDir: straight, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	oldMC, newMC := mcSummary(t, filepath.Join(oldDir, "out")), mcSummary(t, straight)
	if len(oldMC.Values) < 300 || len(oldMC.Values) != len(newMC.Values) {
		t.Fatalf("%d values the old way, %d the new", len(oldMC.Values), len(newMC.Values))
	}
	for i := range oldMC.Values {
		if oldMC.Values[i] != newMC.Values[i] {
			t.Fatalf("value %d: %v the old way, %v the new", i, oldMC.Values[i], newMC.Values[i])
		}
	}
	if oldMC.Pct["p90"] != newMC.Pct["p90"] || oldMC.Converged != newMC.Converged {
		t.Errorf("old %+v\nnew %+v", oldMC.Pct, newMC.Pct)
	}
	want := read(t, filepath.Join(straight, "samples.csv"))
	one := filepath.Join(newDir, "w1")
	if _, err := Run(context.Background(), loadPath(t, newStudy), Options{OutDir: one, Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(read(t, filepath.Join(one, "samples.csv")), want) {
		t.Error("samples.csv differs between 1 and 2 workers")
	}
	if v := mcSummary(t, one).Values; len(v) != len(newMC.Values) || v[len(v)-1] != newMC.Values[len(v)-1] {
		t.Error("quantities differ between 1 and 2 workers")
	}
	for _, stopAt := range []int64{150, 251} {
		dir := filepath.Join(newDir, "stop")
		ctx, cancel := context.WithCancel(context.Background())
		s := loadPath(t, newStudy)
		s.Model = &cancelAfter{Model: s.Model, n: stopAt, cancel: cancel}
		sum, err := Run(ctx, s, Options{OutDir: dir, Workers: 2, CheckpointEvery: -1})
		if err == nil || sum.Complete {
			t.Fatalf("stop at %d: want a cancelled run, got err %v", stopAt, err)
		}
		if _, err := Run(context.Background(), loadPath(t, newStudy), Options{OutDir: dir, Workers: 1, Resume: true}); err != nil {
			t.Fatalf("resume after %d: %v", stopAt, err)
		}
		if !bytes.Equal(read(t, filepath.Join(dir, "samples.csv")), want) {
			t.Errorf("stop at %d: resumed samples.csv differs", stopAt)
		}
		got := mcSummary(t, dir).Values
		if len(got) != len(newMC.Values) {
			t.Fatalf("stop at %d: %d quantities resumed, %d straight", stopAt, len(got), len(newMC.Values))
		}
		for i := range got {
			if got[i] != newMC.Values[i] {
				t.Fatalf("stop at %d: resumed quantities differ at %d", stopAt, i)
			}
		}
	}
}

// A method's extra sample columns may not repeat a column of samples.csv,
// and every sample needs one value per column.
func TestCheckColumns(t *testing.T) {
	dir := t.TempDir()
	s := loadPath(t, writeStudy(t, dir, propagation, "CONDITION", "0", "MIN", "10", "MAX", "10"))
	one := []abi.Sample{{Theta: []float64{0, 0}, Extra: []float64{1}}}
	for _, c := range []struct {
		cols    []string
		samples []abi.Sample
		ok      bool
	}{
		{[]string{"y"}, one, true},
		{[]string{"a"}, one, false},
		{[]string{"log_likelihood"}, one, false},
		{[]string{""}, one, false},
		{[]string{"y", "z"}, one, false},
		{nil, one, false},
	} {
		if err := checkColumns(s, c.cols, c.samples); (err == nil) != c.ok {
			t.Errorf("columns %q: error %v", c.cols, err)
		}
	}
}

// The builtin montecarlo served as a method plugin through the Go SDK
// (host/testdata/plugins/mcprop, capability propagation, ABI.md §6.5;
// quantity is the output's index there) gives the builtin's quantities
// bit for bit, certified deterministic, and resumes from its checkpoint
// to the same quantities.
func TestPropagationMethodPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a plugin")
	}
	repl := []string{"CONDITION", "1", "MIN", "300", "MAX", "500"}
	dir := t.TempDir()
	builtinOut := filepath.Join(dir, "builtin")
	if _, err := Run(context.Background(), loadPath(t, writeStudy(t, dir, propagation, repl...)), Options{OutDir: builtinOut, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	man, err := filepath.Abs("../testdata/plugins/mcprop/plugin.toml")
	if err != nil {
		t.Fatal(err)
	}
	pdir := t.TempDir()
	text := strings.Replace(strings.Replace(propagation, `use = "montecarlo"`, "plugin = \""+man+"\"\ncertify = true", 1), `quantity = "y"`, "quantity = 0", 1)
	path := writeStudy(t, pdir, text, repl...)
	rt, err := wasm.NewRuntime(context.Background(), wasm.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	loadP := func() *study.Study {
		s, err := study.Load(context.Background(), path, study.Options{Workers: 2, Runtime: rt})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	pluginOut := filepath.Join(pdir, "plugin")
	if _, err := Run(context.Background(), loadP(), Options{OutDir: pluginOut, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	want := mcSummary(t, builtinOut)
	same := func(what string, got montecarlo.Summary) {
		t.Helper()
		if len(got.Values) != len(want.Values) || got.Quantity != "y" || got.Condition != 1 || got.Pct["p90"] != want.Pct["p90"] {
			t.Fatalf("%s: %d values (builtin %d), quantity %q condition %d", what, len(got.Values), len(want.Values), got.Quantity, got.Condition)
		}
		for i := range got.Values {
			if got.Values[i] != want.Values[i] {
				t.Fatalf("%s: value %d %v, builtin %v", what, i, got.Values[i], want.Values[i])
			}
		}
	}
	same("plugin", mcSummary(t, pluginOut))
	stopped := filepath.Join(pdir, "stopped")
	ctx, cancel := context.WithCancel(context.Background())
	s := loadP()
	s.Model = &cancelAfter{Model: s.Model, n: 120, cancel: cancel}
	if sum, err := Run(ctx, s, Options{OutDir: stopped, Workers: 2, CheckpointEvery: -1}); err == nil || sum.Complete {
		t.Fatalf("want a cancelled run, got %v", err)
	}
	if _, err := Run(context.Background(), loadP(), Options{OutDir: stopped, Workers: 1, Resume: true}); err != nil {
		t.Fatal(err)
	}
	same("resumed plugin", mcSummary(t, stopped))
}

// A propagation plugin's batch whose outputs cannot fit in its memory is
// refused at its ask, before any evaluation (audit 10, author10 F13: 800
// MB of outputs for a 64 MiB guest were evaluated, then refused at tell).
// mcprop with memory_mib = 16 asks 1000 points of 4 000 rows: 32 MB.
func TestPropagationBatchOverPluginMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a plugin")
	}
	pdir := t.TempDir()
	src := "../testdata/plugins/mcprop/"
	wasmBytes, err := os.ReadFile(src + "mcprop.wasm")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pdir, "mcprop.wasm"), wasmBytes, 0o644)
	man := strings.Replace(string(read(t, src+"plugin.toml")), "memory_mib = 256", "memory_mib = 16", 1)
	os.WriteFile(filepath.Join(pdir, "plugin.toml"), []byte(man), 0o644)
	xs := make([]string, 4000)
	for i := range xs {
		xs[i] = fmt.Sprint(i + 1)
	}
	text := strings.Replace(strings.Replace(propagation, `use = "montecarlo"`, "plugin = \""+filepath.Join(pdir, "plugin.toml")+"\"", 1), `quantity = "y"`, "quantity = 0", 1)
	text = strings.Replace(strings.Replace(text, "x = [1.0, 2.0]", "x = ["+strings.Join(xs, ", ")+"]", 1), "batch = 100", "batch = 1000", 1)
	path := writeStudy(t, t.TempDir(), text, "CONDITION", "1", "MIN", "1000", "MAX", "2000")
	rt, err := wasm.NewRuntime(context.Background(), wasm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	s, err := study.Load(context.Background(), path, study.Options{Workers: 2, Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sum, err := Run(context.Background(), s, Options{OutDir: filepath.Join(pdir, "out"), Workers: 2})
	if err == nil || !strings.Contains(err.Error(), "more than the plugin's memory (memory_mib = 16)") {
		t.Fatalf("%v", err)
	}
	if sum != nil && sum.Evaluations != 0 {
		t.Errorf("%d evaluations before the refusal", sum.Evaluations)
	}
}
