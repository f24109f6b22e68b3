package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestKneeSurrogatePipeline is the CI-sized examples/knee-surrogate: a
// Sobol design over the knee's prior box, a small network trained on it,
// TMCMC on the surrogate for specimen 1, and Adam on the surrogate with
// the exact gradient. The full size is examples/knee-surrogate/run.sh.
func TestKneeSurrogatePipeline(t *testing.T) {
	tmp := t.TempDir()
	ex := "../../examples/knee-surrogate/"
	for _, c := range [][]string{
		{"design", ex + "design.toml", "--design", "sobol", "--n", "48", "-o", filepath.Join(tmp, "train")},
		{"design", ex + "design.toml", "--design", "lhs", "--seed", "2", "--n", "6", "-o", filepath.Join(tmp, "val")},
	} {
		if code, out, e := kinfer(t, c...); code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", c, code, out, e)
		}
	}
	nnFile := filepath.Join(tmp, "knee-nn.json")
	code, out, e := kinfer(t, "train", filepath.Join(tmp, "train"), "--validation", filepath.Join(tmp, "val"), "-o", nnFile,
		"--hidden", "8", "--members", "2", "--epochs", "2", "--seed", "3")
	if code != 0 {
		t.Fatalf("train: exit %d\n%s\n%s", code, out, e)
	}
	if !regexp.MustCompile(`validation on \d+ samples \(\d+ points\); training on \d+ samples \(4[0-9] points\)`).MatchString(out) ||
		!strings.Contains(out, "strain_PCL [%]") || !strings.Contains(out, "IE_deg [deg]") {
		t.Errorf("train output:\n%s", out)
	}
	var rep struct {
		Outputs    []struct{ Name string }
		Provenance struct {
			Model              string `json:"model"`
			TrainingDataSHA256 string `json:"training_data_sha256"`
			Conditions         int    `json:"conditions"`
		}
	}
	b, err := os.ReadFile(filepath.Join(tmp, "knee-nn.report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Outputs) != 13 || rep.Provenance.Model != "knee" ||
		rep.Provenance.Conditions != 1 || len(rep.Provenance.TrainingDataSHA256) != 64 {
		t.Fatalf("report: %v %+v", err, rep)
	}
	if code, out, e := kinfer(t, "inspect", nnFile); code != 0 || !strings.Contains(out, `"model": "knee"`) || !strings.Contains(out, "as a model") ||
		!strings.Contains(out, "k_deepMCL      N      [2000, 9000]") || !strings.Contains(out, "weights:      float32 values") {
		t.Errorf("inspect: exit %d\n%s\n%s", code, out, e)
	}
	// kinfer score on the validation design gives the training report's
	// table; on the training design (another model's outputs refused
	// below, in host/train) the errors of the fit.
	trainTable := out[strings.Index(out, "output "):strings.Index(out, "written:")]
	if code, sout, e := kinfer(t, "score", nnFile, filepath.Join(tmp, "val")); code != 0 || !strings.Contains(sout, trainTable) {
		t.Errorf("score on the validation design: exit %d, want the table\n%s\ngot\n%s\n%s", code, trainTable, sout, e)
	}
	// score --json names the kind as the training report does (audit 8:
	// "neural-network ensemble" against the report's "nn").
	var sj struct{ Kind string }
	if code, sout, e := kinfer(t, "score", nnFile, filepath.Join(tmp, "val"), "--json"); code != 0 || json.Unmarshal([]byte(sout), &sj) != nil || sj.Kind != "nn" {
		t.Errorf("score --json: exit %d, kind %q, want \"nn\" as knee-nn.report.json has\n%s\n%s", code, sj.Kind, sout, e)
	}
	// The training design itself is refused by its digest, before it is
	// parsed (audit 10: 1.5 GB parsed first).
	if code, _, e := kinfer(t, "score", nnFile, filepath.Join(tmp, "train")); code == 0 || !strings.Contains(e, "holds the design.csv the surrogate was trained on") {
		t.Errorf("score on the training design: exit %d, %s", code, e)
	}
	if code, _, e := kinfer(t, "score", nnFile); code != 2 || !strings.Contains(e, "want a surrogate file and at least one design run") {
		t.Errorf("score without a design: exit %d, %s", code, e)
	}
	// The same ensemble trained one member at a time (one process or
	// machine each) and combined: the same file, bit for bit, and the same
	// validation table.
	var members []string
	for _, k := range []string{"2", "1"} {
		m := filepath.Join(tmp, "member"+k+".json")
		if code, out, e := kinfer(t, "train", filepath.Join(tmp, "train"), "--validation", filepath.Join(tmp, "val"), "-o", m,
			"--hidden", "8", "--members", "2", "--member", k, "--epochs", "2", "--seed", "3"); code != 0 || !strings.Contains(out, "network "+k+" of 2") {
			t.Fatalf("train --member %s: exit %d\n%s\n%s", k, code, out, e)
		}
		members = append(members, m)
	}
	joined := filepath.Join(tmp, "joined.json")
	code, cout, e := kinfer(t, append([]string{"combine", "--validation", filepath.Join(tmp, "val"), "-o", joined}, members...)...)
	if code != 0 {
		t.Fatalf("combine: exit %d\n%s\n%s", code, cout, e)
	}
	a, _ := os.ReadFile(nnFile)
	jb, _ := os.ReadFile(joined)
	if len(a) == 0 || string(a) != string(jb) {
		t.Errorf("combined members differ from the ensemble of one training (%d and %d bytes)", len(a), len(jb))
	}
	table := func(s string) string { return s[strings.Index(s, "nMAE"):strings.Index(s, "written")] }
	if !strings.Contains(cout, "nMAE") || table(cout) != table(out) {
		t.Errorf("combine's table differs from train's:\n%s\n%s", cout, out)
	}
	if code, _, e := kinfer(t, "combine", "--validation", filepath.Join(tmp, "val"), "-o", filepath.Join(tmp, "half.json"), members[0]); code == 0 || !strings.Contains(e, "member 1 is missing") {
		t.Errorf("combine with a member missing: exit %d, %s", code, e)
	}
	// Members of a training on two design runs, trained in different
	// folders (as on two machines): the provenance names the folders as
	// typed, and combine compares what they held (their sha256s). They
	// are validated on a third design run: a training run is not held
	// out (refused).
	val2 := filepath.Join(tmp, "val2")
	if code, out, e := kinfer(t, "design", ex+"design.toml", "--design", "lhs", "--seed", "4", "--n", "4", "-o", val2); code != 0 {
		t.Fatalf("design val2: exit %d\n%s\n%s", code, out, e)
	}
	if code, _, e := kinfer(t, "train", filepath.Join(tmp, "train"), filepath.Join(tmp, "val"), "--validation", filepath.Join(tmp, "val"), "-o", filepath.Join(tmp, "overlap.json"),
		"--hidden", "4", "--members", "1", "--epochs", "1"); code == 0 || !strings.Contains(e, "same design.csv") {
		t.Errorf("validated on one of its training runs: exit %d, %s", code, e)
	}
	copyDir := filepath.Join(tmp, "elsewhere")
	for _, d := range []string{"train", "val"} {
		if err := os.CopyFS(filepath.Join(copyDir, d), os.DirFS(filepath.Join(tmp, d))); err != nil {
			t.Fatal(err)
		}
	}
	members = members[:0]
	for k, dir := range []string{tmp, copyDir} {
		m := filepath.Join(tmp, fmt.Sprintf("two-member%d.json", k+1))
		if code, out, e := kinfer(t, "train", filepath.Join(dir, "train"), filepath.Join(dir, "val"), "--validation", val2, "-o", m,
			"--hidden", "4", "--members", "2", "--member", fmt.Sprint(k+1), "--epochs", "1"); code != 0 {
			t.Fatalf("train --member %d in %s: exit %d\n%s\n%s", k+1, dir, code, out, e)
		}
		members = append(members, m)
	}
	if code, out, e := kinfer(t, append([]string{"combine", "--validation", val2, "-o", filepath.Join(tmp, "two-joined.json")}, members...)...); code != 0 {
		t.Errorf("combine members trained in two folders: exit %d\n%s\n%s", code, out, e)
	}
	// Two design runs of the knee train together (a design and a
	// refinement): 48 + 6 points, minus those without equilibrium.
	code, out, e = kinfer(t, "train", filepath.Join(tmp, "train"), filepath.Join(tmp, "val"), "--holdout", "0.2", "-o", filepath.Join(tmp, "two.json"),
		"--hidden", "4", "--members", "1", "--epochs", "1")
	if m := regexp.MustCompile(`training on \d+ samples \((\d+) points\)`).FindStringSubmatch(out); code != 0 || m == nil || atoi(m[1]) < 40 || !strings.Contains(out, " + ") {
		t.Errorf("train on two designs: exit %d\n%s\n%s", code, out, e)
	}
	if b, err := os.ReadFile(filepath.Join(tmp, "two.report.json")); err != nil || !strings.Contains(string(b), "sobol n=48 seed=1 space=box [") ||
		!strings.Contains(string(b), " + lhs n=6 seed=2") {
		t.Errorf("two designs' provenance: %v\n%.600s", err, b)
	}
	// A design of another model is refused with both names.
	qs := filepath.Join(tmp, "line")
	if code, out, e := kinfer(t, "design", "../../examples/quickstart/study.toml", "--n", "4", "-o", qs); code != 0 {
		t.Fatalf("quickstart design: exit %d\n%s\n%s", code, out, e)
	}
	if code, _, e := kinfer(t, "train", filepath.Join(tmp, "train"), qs, "-o", filepath.Join(tmp, "bad.json")); code == 0 || !strings.Contains(e, "of model") {
		t.Errorf("designs of two models: exit %d, %s", code, e)
	}
	if code, out, _ := kinfer(t, "train", "--help"); code != 0 || !strings.Contains(out, "-validation DIR") {
		t.Errorf("train --help: %d %s", code, out)
	}

	src, err := os.ReadFile(ex + "specimen1-surrogate.toml")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("../../examples/knee-bpe/specimen1/kinematics.csv")
	study := strings.NewReplacer(`file = "knee-nn.json"`, `file = "`+nnFile+`"`,
		`file = "../knee-bpe/specimen1/kinematics.csv"`, `file = "`+abs+`"`,
		"chains = 1000", "chains = 64", "substeps = 25", "substeps = 2").Replace(string(src))
	sp := filepath.Join(tmp, "s1.toml")
	os.WriteFile(sp, []byte(study), 0o644)
	runDir := filepath.Join(tmp, "s1")
	if code, out, e := kinfer(t, "run", sp, "-o", runDir, "--workers", "2"); code != 0 {
		t.Fatalf("run on the surrogate: exit %d\n%s\n%s", code, out, e)
	}
	var sum struct {
		Model      string `json:"model"`
		Complete   bool   `json:"complete"`
		Provenance struct {
			Inputs []struct{ Role, SHA256 string }
		}
	}
	b, _ = os.ReadFile(filepath.Join(runDir, "summary.json"))
	if err := json.Unmarshal(b, &sum); err != nil || !sum.Complete || !strings.HasPrefix(sum.Model, "surrogate:") {
		t.Fatalf("summary: %v %+v", err, sum)
	}
	found := false
	for _, in := range sum.Provenance.Inputs {
		found = found || in.Role == "model file" && len(in.SHA256) == 64
	}
	if !found {
		t.Errorf("the surrogate file is not among the run's inputs: %+v", sum.Provenance.Inputs)
	}

	// Deterministic whatever the number of workers.
	if code, out, e := kinfer(t, "run", sp, "-o", runDir+"-w1", "--workers", "1"); code != 0 {
		t.Fatalf("run on 1 worker: exit %d\n%s\n%s", code, out, e)
	}
	if a, b := readOrNil(filepath.Join(runDir, "samples.csv")), readOrNil(filepath.Join(runDir+"-w1", "samples.csv")); a == nil || string(a) != string(b) {
		t.Error("samples.csv differs between 2 workers and 1")
	}

	// Adam on the surrogate, the Gaussian term only: the gradient is the
	// surrogate's exact one.
	i := strings.Index(study, "[[likelihood]]                 # Eq. 8")
	j := strings.Index(study, "[prior]")
	adam := study[:i] + study[j:strings.Index(study, "[method]")] + "[method]\nuse = \"adam\"\niterations = 5\nstarts = 2\nlr = 0.01\n"
	ap := filepath.Join(tmp, "adam.toml")
	os.WriteFile(ap, []byte(adam), 0o644)
	if code, out, e := kinfer(t, "run", ap, "-o", filepath.Join(tmp, "adam")); code != 0 {
		t.Fatalf("adam on the surrogate: exit %d\n%s\n%s", code, out, e)
	}
	var asum struct {
		GradientMode string `json:"gradient_mode"`
	}
	b, _ = os.ReadFile(filepath.Join(tmp, "adam", "summary.json"))
	if json.Unmarshal(b, &asum); asum.GradientMode != "analytic" {
		t.Errorf("Adam's gradient mode %q, want analytic", asum.GradientMode)
	}
}

// readOrNil returns the file's bytes, nil if it cannot be read.
func readOrNil(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return b
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }
