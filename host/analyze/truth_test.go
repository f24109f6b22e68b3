package analyze

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/study"
)

func writeTruth(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "truth.json")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// ReadTruth keeps the file's order and lines and refuses, naming the file
// and line, what is not an object of numbers.
func TestReadTruth(t *testing.T) {
	tv, err := ReadTruth(writeTruth(t, "{\n  \"b\": 2.5,\n  \"a\": -1e3\n}\n"))
	if err != nil || len(tv) != 2 || tv[0] != (TruthValue{"b", 2.5, 2}) || tv[1] != (TruthValue{"a", -1000, 3}) {
		t.Fatalf("%+v %v", tv, err)
	}
	for text, want := range map[string]string{
		"{\"a\": 1,\n\"a\": 2}": `:2: "a" given twice (first on line 1)`,
		"{\"a\": null}":         `"a": value null is not a number`,
		"{\"a\": [1]}":          `"a": value [1] is not a number`,
		"{\"a\": 1e999}":        "not a finite float64",
		"{\"a\": 1} {}":         "unexpected",
		"{\"a\": 1":             "invalid JSON",
		"{}":                    "no parameters",
		"":                      "invalid JSON",
		"{\n\n\"a\": 1,,}":      ":3: invalid JSON",
		"\"k\"":                 "want a JSON object",
	} {
		f := writeTruth(t, text)
		if _, err := ReadTruth(f); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), f) {
			t.Errorf("%q: %v; want an error naming the file with %q", text, err, want)
		}
	}
	if _, err := ReadTruth(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("missing file: %v", err)
	}
}

// checkTruth: free parameters with a truth are checked, those without are
// skipped, a truth of a fixed parameter is listed with the fixed value, an
// unknown name is an error naming it.
func TestCheckTruthParams(t *testing.T) {
	all := []abi.Param{{Name: "a"}, {Name: "fix"}, {Name: "b"}, {Name: "c"}}
	free := []abi.Param{all[0], all[2], all[3]}
	base := []float64{0, 7, 0, 0}
	samples := [][]float64{{1, 10, 0}, {2, 20, 0}, {3, 30, 0}, {4, 40, 0}, {5, 50, 0}}
	tv := []TruthValue{{"b", 60, 1}, {"fix", 7.5, 2}, {"a", 3, 3}}
	r, err := checkTruth("t.json", tv, free, all, base, samples, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Checked != 2 || r.Inside != 1 || len(r.Params) != 2 || r.Params[0].Name != "a" || !r.Params[0].Inside || r.Params[0].Percentile != 0.5 ||
		r.Params[1].Inside || r.Params[1].Percentile != 1 || len(r.Skipped) != 1 || r.Skipped[0] != "c" ||
		len(r.Fixed) != 1 || r.Fixed[0] != (FixedTruth{"fix", 7.5, 7}) {
		t.Fatalf("%+v", r)
	}
	var b strings.Builder
	r.text(&b)
	for _, want := range []string{"1 of 2 inside", "NO (above)", "skipped (no truth given): c", "fix, truth 7.5, fixed at 7"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	// The log target at the truth says the fixed parameters stayed at the
	// study's values, also when the truth is not checked (audit 18).
	r.AtTruth = &AtTruth{Status: "ok", LogTarget: -1}
	r.Basis = "none"
	b.Reset()
	r.text(&b)
	for _, want := range []string{"log target at the truth: -1", "with the study's fixed values: 1 of the truths given for fixed parameters differ", "fix, truth 7.5, fixed at 7"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("unchecked truth's text lacks %q:\n%s", want, b.String())
		}
	}
	// Weights: all the weight on the sample 5 moves the band onto it.
	r, _ = checkTruth("t.json", tv[2:], free, all, base, samples, []float64{0, 0, 0, 0, 1}, nil, "")
	if !r.Weighted || r.Params[0].P05 != 5 || r.Params[0].Inside || r.Params[0].Percentile != 0 {
		t.Fatalf("weighted %+v", r.Params[0])
	}
	if _, err := checkTruth("t.json", []TruthValue{{"zz", 1, 4}}, free, all, base, samples, nil, nil, ""); err == nil || !strings.Contains(err.Error(), `t.json:4: "zz" is not a parameter`) {
		t.Errorf("unknown key: %v", err)
	}
}

// A least-squares run: the band is the estimate ± z₀.₉₅·SE and the
// percentile Φ((truth − estimate)/SE) (scipy.stats.norm.cdf(1) =
// 0.8413447460685429, norm.ppf(0.95) = 1.6448536269514722), whatever the
// samples (the starts' end points, here all equal); a parameter without a
// standard error is skipped; an optimiser without any checks nothing
// (audit 4: a truth 1.2 SE from a fit was "NO (below)", percentile 0).
func TestCheckTruthLeastSquares(t *testing.T) {
	const tol = 1e-12
	all := []abi.Param{{Name: "a"}, {Name: "b"}}
	samples := [][]float64{{3, 1}, {3, 1}, {3, 1}}
	tv := []TruthValue{{"a", 4, 1}, {"b", 2, 2}}
	est := map[string]Estimate{"a": {Value: 3, SE: 1}, "b": {Value: 1, SE: math.NaN()}}
	r, err := checkTruth("t.json", tv, all, all, []float64{0, 0}, samples, nil, est, "")
	if err != nil {
		t.Fatal(err)
	}
	// b has a truth but no band: not checked, and not "no truth given";
	// every parameter has a truth, so the log target at the truth is
	// computed (audit 6).
	if r.Basis != "standard errors" || r.Checked != 1 || r.Inside != 1 || len(r.Skipped) != 0 ||
		!reflect.DeepEqual(r.Unchecked, []string{"b (no usable standard error)"}) || !reflect.DeepEqual(r.theta, []float64{4, 2}) {
		t.Fatalf("%+v", r)
	}
	est["b"] = Estimate{Value: 1, SE: 0.1, AtBound: true}
	if r, _ := checkTruth("t.json", tv, all, all, []float64{0, 0}, samples, nil, est, ""); !reflect.DeepEqual(r.Unchecked, []string{"b (its estimate is on a bound, where the standard error does not hold)"}) {
		t.Errorf("on a bound: %+v", r)
	}
	if r, _ := checkTruth("t.json", tv[:1], all, all, []float64{0, 0}, samples, nil, est, ""); !reflect.DeepEqual(r.Skipped, []string{"b"}) || r.theta != nil {
		t.Errorf("b without a truth: %+v", r)
	}
	p := r.Params[0]
	if math.Abs(p.Percentile-0.8413447460685429) > tol || math.Abs(p.P05-(3-1.6448536269514722)) > tol || math.Abs(p.P95-(3+1.6448536269514722)) > tol {
		t.Errorf("a: %+v", p)
	}
	var b strings.Builder
	r.text(&b)
	if !strings.Contains(b.String(), "1 of 1 inside") || !strings.Contains(b.String(), "standard errors") {
		t.Errorf("text:\n%s", b.String())
	}
	r, _ = checkTruth("t.json", tv, all, all, []float64{0, 0}, samples, nil, nil, "builtin:adam is an optimiser")
	b.Reset()
	r.text(&b)
	if r.Basis != "none" || r.Checked != 0 || !strings.Contains(b.String(), "not checked: builtin:adam is an optimiser") || len(r.Skipped) != 0 || r.theta == nil {
		t.Errorf("no band: %+v\n%s", r, b.String())
	}
}

// A truth whose evaluation failed has log target −∞: written as null.
func TestAtTruthJSONNonFinite(t *testing.T) {
	b, err := json.Marshal(TruthReport{AtTruth: &AtTruth{Status: "failed", LogPrior: -3, LogLikelihood: math.Inf(-1), LogTarget: math.Inf(-1), SamplesBelow: 0, SamplesMax: -7}})
	if err != nil || !strings.Contains(string(b), `"log_likelihood":null`) || !strings.Contains(string(b), `"log_prior":-3`) || !strings.Contains(string(b), `"status":"failed"`) {
		t.Fatalf("%s %v", b, err)
	}
}

// A truth file from elsewhere: a named pipe, a file over the cap, a list
// of a million objects as a value, and 50 000 keys on their own lines
// (their line numbers were counted from the start each time: quadratic).
func TestReadTruthHostile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "truth.json")
	if err := syscall.Mkfifo(p, 0o644); err == nil {
		if _, err := ReadTruth(p); err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("a named pipe: %v", err)
		}
		os.Remove(p)
	}
	os.WriteFile(p, []byte(`{"k": [`+strings.Repeat("{},", 300_000)+`{}]}`), 0o644)
	if _, err := ReadTruth(p); err == nil || !strings.Contains(err.Error(), "truth.json:1") || !strings.Contains(err.Error(), "is not a number") || len(err.Error()) > 300 {
		t.Errorf("a list as a value: %.300v", err)
	}
	os.WriteFile(p, []byte(`{"k": 1, "x": "`+strings.Repeat("a", MaxTruthBytes)+`"}`), 0o644)
	if _, err := ReadTruth(p); err == nil || !strings.Contains(err.Error(), "1 MiB") {
		t.Errorf("over the cap: %.300v", err)
	}
	var b strings.Builder
	b.WriteString("{\n")
	for i := range 50_000 {
		fmt.Fprintf(&b, "%q: %d,\n", fmt.Sprintf("p%d", i), i)
	}
	b.WriteString("\"last\": x}\n")
	os.WriteFile(p, []byte(b.String()), 0o644)
	start := time.Now()
	_, err := ReadTruth(p)
	if err == nil || !strings.Contains(err.Error(), "truth.json:50002") {
		t.Errorf("a syntax error after 50 000 keys: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("50 000 keys took %v", d)
	}
}

// samples.csv's weight column is a method's, after log_likelihood: a
// parameter named weight (θ's columns come first) or montecarlo's quantity
// of interest named after a model output "weight" is not one.
func TestWeightColumnIsTheMethods(t *testing.T) {
	s := &study.Study{}
	s.ModelInfo.Spec.Outputs = []abi.Column{{Name: "y"}}
	for _, c := range []struct {
		cols []string
		want int
	}{
		{[]string{"a", "weight", "log_prior", "log_likelihood"}, -1},
		{[]string{"a", "b", "log_prior", "log_likelihood", "weight"}, 4},
		{[]string{"a", "b", "log_prior", "log_likelihood"}, -1},
	} {
		if got := weightIndex(c.cols, s); got != c.want {
			t.Errorf("%v: %d, want %d", c.cols, got, c.want)
		}
	}
	s.ModelInfo.Spec.Outputs = []abi.Column{{Name: "weight"}}
	if got := weightIndex([]string{"a", "log_prior", "log_likelihood", "weight"}, s); got != -1 {
		t.Errorf("a model output named weight (montecarlo's quantity column): %d, want -1", got)
	}
}

// The tables print a narrow band beside a large value with the digits that
// resolve it (audit 8: analyze printed truth, p05 and p95 of a posterior
// 100000.23 ± 0.16 all as "1e+05").
func TestTextNarrowBand(t *testing.T) {
	r := &TruthReport{File: "t.json", Checked: 1, Inside: 1,
		Params: []TruthParam{{Name: "a", Truth: 100000.3, P05: 99999.962, P95: 100000.484, Percentile: 0.672, Inside: true}}}
	var b strings.Builder
	r.text(&b)
	if !regexp.MustCompile(`(?m)^a +100000\.3 +99999\.96 +100000\.48 +67\.2%  yes$`).MatchString(b.String()) {
		t.Errorf("truth table:\n%s", b.String())
	}
	a := &Analysis{Study: "s", Samples: 2000, Params: []Spread{{Name: "a", P05: 99999.962, P95: 100000.484, Spread: 0.522}}}
	if !regexp.MustCompile(`(?m)^a +99999\.96 +100000\.48 +0\.522 `).MatchString(a.Text()) {
		t.Errorf("spread table:\n%s", a.Text())
	}
}
