package study

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/host/wasm"
)

const csv = "length_mm,force_N\n29,10\n30,50\n31,120\n"

const base = `name = "t"
seed = 3

[model]
use = "ligament"
ref_length_mm = 30.0

[[data]]
name = "pull"
file = "d.csv"

[[likelihood]]
use = "gaussian"
data = "pull"
sigma = { force_N = 5.0 }

[prior]
k = { uniform = [2000.0, 9000.0] }
eps_r = { normal = [0.0, 0.1] }

[method]
use = "metropolis"
chains = 2
`

func load(t *testing.T, text string) (*Study, error) {
	t.Helper()
	return loadOpts(t, text, Options{Workers: 1})
}

// loadOpts is load with options.
func loadOpts(t *testing.T, text string, o Options) (*Study, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "d.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "study.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(context.Background(), p, o)
}

func TestLoadResolves(t *testing.T) {
	s, err := load(t, base)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Seed != 3 || len(s.Free) != 2 || s.Free[0].Name != "k" || s.Data[0].K != 3 || len(s.Terms) != 1 {
		t.Fatalf("resolved %+v", s)
	}
	// The normal prior on eps_r is truncated to the model's bounds [-0.5, 0.4].
	if s.Free[1].Lower != -0.5 || s.Free[1].Upper != 0.4 {
		t.Fatalf("eps_r bounds %g %g", s.Free[1].Lower, s.Free[1].Upper)
	}
	if s.Terms[0].Sigma[2] != 5 || s.Terms[0].Obs[1] != 50 || s.Terms[0].OutIdx[0] != 0 {
		t.Fatalf("term %+v data %+v", s.Terms[0], s.Data[0])
	}
}

// Each case replaces one line of base and expects an error naming the
// study file, the line and the key.
func TestErrorsNameFileLineKey(t *testing.T) {
	cases := []struct{ from, to, want string }{
		{"chains = 2", "chians = 2", `study.toml:23: key "method.chians"`},
		{"seed = 3", "sede = 3", `study.toml:2: key "sede"`},
		{`file = "d.csv"`, `flie = "d.csv"`, `study.toml:10: key "data.flie"`},
		{"ref_length_mm = 30.0", "ref_length = 30.0", `study.toml:6: key "model.ref_length"`},
		{"eps_r = { normal = [0.0, 0.1] }", "eps_q = { normal = [0.0, 0.1] }", `study.toml:19: key "prior.eps_q"`},
		{"k = { uniform = [2000.0, 9000.0] }", "k = { uniform = [9000.0, 2000.0] }", `study.toml:18: key "prior.k"`},
		// A value of the wrong kind is named as the study writes it.
		{"chains = 2", "chains = { n = 2 }", `key "method.chains": setting "chains" takes a number, got a table`},
		{"chains = 2", "chains = [2]", `setting "chains" takes a number, got a list`},
		// An output named twice counted each observation twice.
		{`data = "pull"`, "data = \"pull\"\noutputs = [\"force_N\", \"force_N\"]", `study.toml:15: key "likelihood[0].outputs": output "force_N" is named twice`},
		// The name is one folder name: out/<name> stays inside out/.
		{`name = "t"`, `name = "../../x"`, `study.toml:1: key "name": name "../../x" has a path separator`},
		{`name = "t"`, `name = ".."`, `study.toml:1: key "name": name ".." is not a folder name`},
		{`name = "t"`, `name = " "`, `study.toml:1: key "name": name " " starts or ends with a space`},
		// A long name is quoted in part (audit 21: 100 000 characters echoed).
		{`name = "t"`, `name = "` + strings.Repeat("a", 100000) + `"`, `study.toml:1: key "name": name "` + strings.Repeat("a", 60) + `" is longer than 200 bytes`},
		// A lognormal given the mean and sd of k rather than of log k.
		{"k = { uniform = [2000.0, 9000.0] }", "k = { lognormal = [5200.0, 500.0] }", `study.toml:18: key "prior.k": prior lognormal(5200, 500) has less than 1e-09 of its probability in [2000, 12000] (lognormal's arguments are the mean and sd of log x), the model's bounds`},
		{`use = "metropolis"`, `use = "metropolise"`, `study.toml:22: key "method.use": no built-in method "metropolise"`},
		{"seed = 3", `seed = "three"`, `study.toml:2: key "seed"`},
		{"sigma = { force_N = 5.0 }", "sigma = { force = 5.0 }", `study.toml:15: key "likelihood[0].sigma"`},
		{`data = "pull"`, `data = "pul"`, `study.toml:14: key "likelihood[0].data"`},
		// A setting the builtin refuses is located at its own line.
		{"chains = 2", "\nchains = 0", `study.toml:24: key "method.chains": metropolis: setting chains`},
		{"ref_length_mm = 30.0", "\nref_length_mm = -1", `study.toml:7: key "model.ref_length_mm": ligament: ref_length_mm must be > 0`},
	}
	for _, c := range cases {
		if !strings.Contains(base, c.from) {
			t.Fatalf("bad case %q", c.from)
		}
		_, err := load(t, strings.Replace(base, c.from, c.to, 1))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → want %q, got %v", c.to, c.want, err)
		}
	}
}

func TestMissingPriorNamed(t *testing.T) {
	_, err := load(t, strings.Replace(base, "eps_r = { normal = [0.0, 0.1] }", "", 1))
	if err == nil || !strings.Contains(err.Error(), "eps_r") || !strings.Contains(err.Error(), "neither a prior nor a fixed value") {
		t.Fatalf("got %v", err)
	}
	s, err := load(t, strings.Replace(base, "eps_r = { normal = [0.0, 0.1] }", "[fixed]\neps_r = 0.05", 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Free) != 1 || s.Base[1] != 0.05 {
		t.Fatalf("free %v base %v", s.Free, s.Base)
	}
}

func TestMissingSigma(t *testing.T) {
	_, err := load(t, strings.Replace(base, "sigma = { force_N = 5.0 }", "", 1))
	if err == nil || !strings.Contains(err.Error(), `no σ for output "force_N"`) {
		t.Fatalf("got %v", err)
	}
}

// A term may see model outputs the dataset does not observe (a constraint
// on predictions, like Bartsoen's strain band): their observations are NaN
// and they need no σ.
func TestTermOutputsWithoutObservations(t *testing.T) {
	text := strings.Replace(base, `data = "pull"`, "data = \"pull\"\noutputs = [\"force_N\", \"strain\"]", 1)
	s, err := load(t, text)
	if err != nil {
		t.Fatal(err)
	}
	tm := s.Terms[0]
	if len(tm.Outputs) != 2 || tm.OutIdx[1] != 1 || tm.Obs[0] != 10 || !math.IsNaN(tm.Obs[1]) || !math.IsNaN(tm.Sigma[1]) {
		t.Fatalf("term %+v", tm)
	}
	_, err = load(t, strings.Replace(base, `data = "pull"`, "data = \"pull\"\noutputs = [\"torque\"]", 1))
	if err == nil || !strings.Contains(err.Error(), `model "ligament" has no output "torque"`) {
		t.Fatalf("got %v", err)
	}
}

// A dataset that lists its observed outputs: a term naming another output
// whose column the file has is refused, naming both ways out (audit 9: the
// column was read as observations although the dataset left it out);
// without the dataset's list, or without the column, the term reads the
// column or NaN as before.
func TestTermOutputOutsideDatasetOutputs(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte("length_mm,force_N,strain\n29,10,0.01\n30,50,0.02\n31,120,0.03\n"), 0o644)
	p := filepath.Join(dir, "study.toml")
	term := "data = \"pull\"\noutputs = [\"force_N\", \"strain\"]\nsigma = { force_N = 5.0, strain = 0.01 }"
	withTerm := strings.Replace(strings.Replace(base, "data = \"pull\"\nsigma = { force_N = 5.0 }", term, 1), "file = \"d.csv\"", "file = \"d.csv\"\noutputs = [\"force_N\"]", 1)
	os.WriteFile(p, []byte(withTerm), 0o644)
	_, err := Load(context.Background(), p, Options{Workers: 1})
	if err == nil || !strings.Contains(err.Error(), `key "likelihood[0].outputs": output "strain" is not among dataset "pull"'s observed outputs (force_N), but its file `) || !strings.Contains(err.Error(), `d.csv has a "strain" column: add "strain" to the dataset's outputs`) {
		t.Fatalf("got %v", err)
	}
	// Without the dataset's list: the term's own outputs are read.
	os.WriteFile(p, []byte(strings.Replace(withTerm, "file = \"d.csv\"\noutputs = [\"force_N\"]", "file = \"d.csv\"", 1)), 0o644)
	s, err := Load(context.Background(), p, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if tm := s.Terms[0]; tm.Obs[1] != 0.01 {
		t.Errorf("strain observations %v", tm.Obs)
	}
	s.Close()
	// With the list and no such column: NaN, an unobserved output.
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte(csv), 0o644)
	os.WriteFile(p, []byte(withTerm), 0o644)
	if s, err = Load(context.Background(), p, Options{Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if tm := s.Terms[0]; !math.IsNaN(tm.Obs[1]) {
		t.Errorf("strain observations %v, want NaN", tm.Obs)
	}
	s.Close()
}

// A likelihood without data = in a study of two datasets is refused,
// naming the tables (the message once quoted a data = "" never written).
func TestTermWithoutDataNamed(t *testing.T) {
	text := strings.Replace(base, "[[likelihood]]", "[[data]]\nname = \"pull2\"\nfile = \"d.csv\"\n\n[[likelihood]]", 1)
	text = strings.Replace(text, "data = \"pull\"\n", "", 1)
	_, err := load(t, text)
	if err == nil || !strings.Contains(err.Error(), `key "likelihood[0]": the study has 2 [[data]] tables (pull, pull2): name the one this term compares with`) {
		t.Fatalf("got %v", err)
	}
}

// A method that needs genuine prior draws (TMCMC: its stage 0 and its
// evidence estimate; a propagation) refuses an init file, whose rows it
// would not use; metropolis takes it.
func TestInitRefusedForPriorDrawMethods(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte(csv), 0o644)
	os.WriteFile(filepath.Join(dir, "starts.csv"), []byte("k,eps_r\n5000,0.01\n"), 0o644)
	p := filepath.Join(dir, "study.toml")
	withInit := strings.Replace(base, "seed = 3\n", "seed = 3\ninit = \"starts.csv\"\n", 1)
	os.WriteFile(p, []byte(withInit), 0o644)
	s, err := Load(context.Background(), p, Options{Workers: 1})
	if err != nil {
		t.Fatalf("metropolis with init: %v", err)
	}
	s.Close()
	os.WriteFile(p, []byte(strings.Replace(withInit, "use = \"metropolis\"\nchains = 2", "use = \"tmcmc\"", 1)), 0o644)
	_, err = Load(context.Background(), p, Options{Workers: 1})
	if err == nil || !strings.Contains(err.Error(), `study.toml:3: key "init": method "tmcmc" draws its points from the prior`) {
		t.Fatalf("tmcmc with init: %v", err)
	}
}

// σ columns are checked: a misspelt one (sigma_Force_N) and a non-positive
// value are errors naming the file, the line and the column; so is an
// infinite observation.
func TestSigmaColumnsChecked(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "study.toml")
	os.WriteFile(p, []byte(base), 0o644)
	for _, c := range []struct{ csv, want string }{
		{"length_mm,force_N,sigma_Force_N\n29,10,1\n30,50,1\n", `d.csv:1: column "sigma_Force_N": model "ligament" has no output "Force_N"`},
		{"length_mm,force_N,sigma_force_N\n29,10,1\n30,50,-0.1\n", `d.csv:3: column "sigma_force_N": σ must be a positive number, got -0.1`},
		// Observations: finite or missing, and at least one.
		{"length_mm,force_N\n29,inf\n30,50\n", `d.csv:2: column "force_N": observation +Inf is not finite; leave the cell empty or write nan`},
		{"length_mm,force_N,sigma_force_N\n29,1e300,1e-10\n30,50,1\n", `row 1, output force_N: observation 1e+300 over σ 1e-10 is beyond 1e150`},
	} {
		os.WriteFile(filepath.Join(dir, "d.csv"), []byte(c.csv), 0o644)
		_, err := Load(context.Background(), p, Options{Workers: 1})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
}

// A plugin's manifest cannot turn off or stretch its timeout or fuel
// unless the study trusts it.
func TestUntrustedPluginLimitsRefused(t *testing.T) {
	for limits, want := range map[string]string{
		"timeout_ms = 0":             "asks for timeout_ms = 0 (no timeout) in",
		"timeout_ms = 9000000000000": "asks for timeout_ms = 9000000000000 (above 3600000, one hour) in",
		"fuel = 0":                   "asks for fuel = 0 (unlimited) in",
		"fuel = 2_000_000_000_000_000\ntimeout_ms = 0": "asks for timeout_ms = 0 (no timeout) and fuel = 2000000000000000 (above 1000000000000000) in",
	} {
		dir := t.TempDir()
		man := "name = \"fast\"\nversion = \"1\"\nkind = \"model\"\nabi = 1\nwasm = \"x.wasm\"\n[limits]\n" + limits + "\n"
		os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte(man), 0o644)
		text := strings.Replace(base, `use = "ligament"`, `plugin = "plugin.toml"`, 1)
		os.WriteFile(filepath.Join(dir, "d.csv"), []byte(csv), 0o644)
		p := filepath.Join(dir, "study.toml")
		os.WriteFile(p, []byte(text), 0o644)
		_, err := Load(context.Background(), p, Options{Workers: 1})
		if err == nil || !strings.Contains(err.Error(), `study.toml:5: key "model.plugin": plugin fast `+want) || !strings.Contains(err.Error(), "trusted = true") {
			t.Errorf("%s: got %v", limits, err)
		}
		// Trusted, the limits pass this check (and the load goes on to the
		// missing runtime).
		os.WriteFile(p, []byte(strings.Replace(text, `plugin = "plugin.toml"`, "plugin = \"plugin.toml\"\ntrusted = true", 1)), 0o644)
		_, err = Load(context.Background(), p, Options{Workers: 1})
		if err == nil || !strings.Contains(err.Error(), "plugins need a WebAssembly runtime") {
			t.Errorf("%s, trusted: got %v", limits, err)
		}
	}
}

// A CSV saved by Excel with a byte-order mark loads (its first column was
// once read as "\ufefflength_mm").
func TestDataWithByteOrderMark(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte("\xEF\xBB\xBF"+strings.ReplaceAll(csv, "\n", "\r\n")), 0o644)
	p := filepath.Join(dir, "study.toml")
	os.WriteFile(p, []byte(base), 0o644)
	s, err := Load(context.Background(), p, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Data[0].K != 3 || s.Data[0].X[2] != 31 {
		t.Fatalf("data %+v", s.Data[0])
	}
}

// The study's data share one memory budget: tables, conditions, and each
// term's observations and σ.
func TestDataBudget(t *testing.T) {
	defer func(b int64) { maxDataBytes = b }(maxDataBytes)
	// d.csv: 3 rows of 2 columns (3·(16+32) bytes), X 3·8 bytes, each
	// term 2·3·8 bytes.
	table, x, term := int64(3*(16+32)), int64(3*8), int64(2*3*8)
	text := base + "\n[[likelihood]]\nuse = \"gaussian\"\ndata = \"pull\"\nsigma = 5.0\n"
	maxDataBytes = table + x + 2*term
	if s, err := load(t, text); err != nil {
		t.Fatalf("at the budget: %v", err)
	} else {
		s.Close()
	}
	maxDataBytes--
	_, err := load(t, text)
	if err == nil || !strings.Contains(err.Error(), `study.toml:25: key "likelihood[1]": likelihood term 2's observations and σ would take 48 bytes in memory, and the study's data may take at most`) {
		t.Fatalf("over the budget: %v", err)
	}
	maxDataBytes = table - 1
	_, err = load(t, text)
	if err == nil || !strings.Contains(err.Error(), `key "data[0].file"`) || !strings.Contains(err.Error(), "d.csv:4: more rows than kinfer holds in memory: 3 rows of 2 columns would take 144 bytes, more than the 143 bytes accepted") {
		t.Fatalf("table over the budget: %v", err)
	}
}

// Under a memory budget the study's data may take half of it (the
// collector lets the heap grow to twice what is live): an analysis under
// 64 MiB reloaded 5.3 million rows and peaked at 1.2 GB (audit 13).
// DataBytes is what was charged: the sizes of TestDataBudget.
func TestDataWithinHalfTheBudget(t *testing.T) {
	need := int64(3*(16+32) + 3*8 + 2*2*3*8)
	text := base + "\n[[likelihood]]\nuse = \"gaussian\"\ndata = \"pull\"\nsigma = 5.0\n"
	s, err := loadOpts(t, text, Options{Workers: 1, MemoryBudget: 2 * need})
	if err != nil {
		t.Fatalf("at half the budget: %v", err)
	}
	if s.DataBytes() != need {
		t.Errorf("DataBytes %d, want %d", s.DataBytes(), need)
	}
	s.Close()
	_, err = loadOpts(t, text, Options{Workers: 1, MemoryBudget: 2*need - 2})
	if err == nil || !strings.Contains(err.Error(), `key "likelihood[1]"`) || !strings.Contains(err.Error(), "may take at most 263 bytes in all") ||
		!strings.Contains(err.Error(), "half the memory budget of 526 bytes") || !strings.Contains(err.Error(), "raise --memory-budget") {
		t.Fatalf("over half the budget: %v", err)
	}
	_, err = loadOpts(t, text, Options{Workers: 1, MemoryBudget: 200})
	if err == nil || !strings.Contains(err.Error(), `key "data[0].file"`) || !strings.Contains(err.Error(), "more rows than kinfer holds in memory") ||
		!strings.Contains(err.Error(), "half the memory budget of 200 bytes") {
		t.Fatalf("table over half the budget: %v", err)
	}
}

// A plugin's refusal of its settings is located in the study (file, line,
// key) as a built-in's is: here the C Gauss–Newton plugin's max_iter.
func TestPluginSettingRefusalLocated(t *testing.T) {
	plug, err := filepath.Abs(filepath.Join("..", "..", "plugins", "c", "gaussnewton", "plugin.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(base, "use = \"metropolis\"\nchains = 2", fmt.Sprintf("plugin = %q\nmax_iter = 1e300", plug), 1)
	rt, err := wasm.NewRuntime(context.Background(), wasm.Options{CacheDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "d.csv"), []byte(csv), 0o644)
	p := filepath.Join(dir, "study.toml")
	os.WriteFile(p, []byte(text), 0o644)
	_, err = Load(context.Background(), p, Options{Workers: 1, Runtime: rt})
	if err == nil || !strings.Contains(err.Error(), `study.toml:23: key "method.max_iter": plugin gaussnewton-c: kinfer_configure returned`) {
		t.Fatalf("got %v", err)
	}
}

// A data file may carry text columns the study does not use (a subject
// ID, a comment); text in a used column — a condition, an observed output,
// a sigma_<output> — is an error naming the file and line. NA (R's
// missing value) reads as missing.
func TestDataTextColumns(t *testing.T) {
	for _, c := range []struct{ csv, want string }{
		{"subject,length_mm,force_N,note\nS01,31,40,ok\nS01,32,NA,\nS02,33,140,redo\n", ""},
		{"length_mm,force_N\n31,40\n32,heavy\n", `d.csv:3: column "force_N": "heavy" is not a number`},
		{"length_mm,force_N\nthirty-one,40\n32,90\n", `d.csv:2: column "length_mm": "thirty-one" is not a number`},
		{"length_mm,force_N,sigma_force_N\n31,40,5\n32,90,five\n", `d.csv:3: column "sigma_force_N": "five" is not a number`},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "d.csv"), []byte(c.csv), 0o644)
		os.WriteFile(filepath.Join(dir, "study.toml"), []byte(base), 0o644)
		s, err := Load(context.Background(), filepath.Join(dir, "study.toml"), Options{Workers: 1})
		if c.want == "" {
			if err != nil {
				t.Errorf("%q: %v", c.csv, err)
				continue
			}
			if s.Data[0].K != 3 || !math.IsNaN(s.Terms[0].Obs[1]) || s.Terms[0].Obs[2] != 140 {
				t.Errorf("%q: obs %v", c.csv, s.Terms[0].Obs)
			}
			s.Close()
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.csv, err, c.want)
		}
	}
}

// PriorBox: a uniform prior's is its bounds; a normal prior's is the
// quantiles 5e-7 and 1 − 5e-7 of the prior cut to the bounds
// (scipy.stats.truncnorm(-5, 4, scale=0.1).ppf: −0.48016963744694785,
// 0.39962916738754894).
func TestPriorBox(t *testing.T) {
	s, err := load(t, base) // k ~ U(2000, 9000); eps_r ~ N(0, 0.1) in [−0.5, 0.4]
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	box := s.PriorBox()
	const tol = 1e-9 // relative; the package's truncated quantile against scipy
	if box[0] != [2]float64{2000, 9000} {
		t.Errorf("uniform: %v", box[0])
	}
	if lo, hi := -0.48016963744694785, 0.39962916738754894; math.Abs(box[1][0]-lo) > tol*-lo || math.Abs(box[1][1]-hi) > tol*hi {
		t.Errorf("normal(0, 0.1) in [%g, %g]: %v, want [%g, %g]", s.Free[1].Lower, s.Free[1].Upper, box[1], lo, hi)
	}
}

// A prior the model's bounds cut for the most part is named in
// PriorWarnings with the mass kept (uniform(2000, 90000) on k's [2000,
// 12000]: 10000/88000 = 11.4 %); a vague normal centred inside the bounds
// and a prior inside them are not (audit 4).
func TestPriorMostlyOutsideBoundsWarned(t *testing.T) {
	for prior, want := range map[string]string{
		"k = { uniform = [2000.0, 90000.0] }": "k: the prior uniform(2000, 90000) has 11.4 % of its mass inside the model's bounds",
		"k = { normal = [5000.0, 1.0e7] }":    "",
		"k = { uniform = [2000.0, 9000.0] }":  "",
	} {
		s, err := load(t, strings.Replace(base, "k = { uniform = [2000.0, 9000.0] }", prior, 1))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(s.PriorWarnings, "\n")
		s.Close()
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("%s: warnings %q, want %q", prior, got, want)
		}
	}
}

// [[method]] where [method] was meant: the error says to write single
// brackets, on the table's line (it said "missing [method] table").
func TestDoubleBracketsForOneTable(t *testing.T) {
	_, err := load(t, strings.Replace(base, "[method]", "[[method]]", 1))
	if err == nil || !strings.Contains(err.Error(), "[[method]] is a list of tables: write [method], with single brackets") {
		t.Errorf("err %v", err)
	}
}

// A plugin model or likelihood gets one instance per worker, but no more
// than half the memory budget holds at PluginGrowFactor × memory_mib each
// (audit 5: 8 workers of a 256 MiB plugin took 1.7 GB under a 1 GiB
// budget); no budget, no cap.
func TestPluginInstancesCappedByBudget(t *testing.T) {
	for _, c := range []struct {
		workers int
		budget  int64
		mib     int
		want    int
	}{{8, 1 << 30, 256, 1}, {8, 4 << 30, 256, 4}, {2, 12 << 30, 256, 2}, {8, 1 << 30, 16, 8}, {8, 0, 256, 8}, {3, 1 << 20, 256, 1}} {
		if got := (Options{Workers: c.workers, MemoryBudget: c.budget}).pluginInstances(c.mib); got != c.want {
			t.Errorf("%d workers, budget %d MiB, memory_mib %d: %d instances, want %d", c.workers, c.budget>>20, c.mib, got, c.want)
		}
	}
}

// A setting with choices given as a number is refused saying the choice is
// written as a string (audit 9: choices ["1", "2"] with m = 1 said only
// "takes one of").
func TestChoiceGivenAsNumber(t *testing.T) {
	text := strings.Replace(base, "use = \"metropolis\"\nchains = 2", "use = \"anneal\"\nlocal = 1", 1)
	_, err := load(t, text)
	if err == nil || !strings.Contains(err.Error(), `setting "local" takes one of ["none" "adam"], written as a string (local = "none"), got a number`) {
		t.Fatalf("got %v", err)
	}
}

// A dataset's name and file name are printed and put in report.html:
// control characters (terminal escapes) and invalid UTF-8 are refused, the
// message quoting them escaped (audit 9).
func TestDatasetNameControlCharacters(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{`name = "pull"`, "name = \"d\\u001b]0;pwned\\u0007\\u001b[31mRED\\r\"", `key "data[0].name": "d\x1b]0;pwned\x07\x1b[31mRED\r" has a control character`},
		{`file = "d.csv"`, `file = "f\u001b[31m.csv"`, `key "data[0].file": "f\x1b[31m.csv" has a control character`},
		{`name = "pull"`, `name = "a\u202Eb"`, `has a control character, a bidirectional control or invalid UTF-8`},
	} {
		_, err := load(t, strings.Replace(base, c.from, c.to, 1))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("%s: %v", c.to, err)
		}
	}
}

// A study path with invalid UTF-8 or a control character is refused: its
// runs record and print it (audit 12: recorded with U+FFFD, the run could
// never be verified).
func TestStudyPathNotRecordable(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"s\xff.toml", "s\x1b[31m.toml"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(base), 0o644); err != nil {
			t.Skip("the file system refuses the name:", err)
		}
		if _, err := Load(context.Background(), p, Options{Workers: 1}); err == nil || !strings.Contains(err.Error(), "the study's path has a control character or invalid UTF-8") {
			t.Errorf("%q: %v", name, err)
		}
	}
}
