package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// A two-stage study on the ligament pull test: stage 1 fits k with ε_r
// fixed; stage 2 fits ε_r and leaves k out, so k is fixed at stage 1's
// result and ε_r starts from stage 1's (fixed) value. Running the command
// again runs nothing again.
func TestMultiStageStudy(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// F = k·(ε − 0.03) above the toe region, with k = 5000 and ε_r = 0.02.
	// (Each stage reads its own copy, so that editing stage 1's data below
	// leaves stage 2's files as they were.)
	pull := "length_mm,force_N\n31,36.5\n32,87.5\n33,138.5\n34,189.5\n35,240.5\n"
	write("d.csv", pull)
	write("d2.csv", pull)
	common := func(data string) string {
		return "seed = 1\n[model]\nuse = \"ligament\"\nref_length_mm = 30.0\n[[data]]\nname = \"pull\"\nfile = \"" + data + "\"\n" +
			"[[likelihood]]\nuse = \"gaussian\"\nsigma = { force_N = 1.0 }\n[method]\nuse = \"levmar\"\n"
	}
	write("s1.toml", "name = \"s1\"\n"+common("d.csv")+"[prior]\nk = { uniform = [500.0, 9000.0] }\n[fixed]\neps_r = 0.0\n")
	write("s2.toml", "name = \"s2\"\n"+common("d2.csv")+"[prior]\neps_r = { uniform = [-0.2, 0.3] }\n")
	write("all.toml", "name = \"two-stage\"\nstages = [\"s1.toml\", \"s2.toml\"]\n")
	out := filepath.Join(dir, "out")
	code, stdout, stderr := kinfer(t, "run", filepath.Join(dir, "all.toml"), "-o", out, "--workers", "1")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, StagesFile))
	if err != nil {
		t.Fatal(err)
	}
	var rec []stageRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec) != 2 || rec[0].Dir != "stage1-s1" || rec[1].Dir != "stage2-s2" {
		t.Fatalf("stages %+v", rec)
	}
	k1 := rec[0].Theta["k"]
	if rec[1].Theta["k"] != k1 {
		t.Fatalf("stage 2 k = %g, want stage 1's %g (fixed)", rec[1].Theta["k"], k1)
	}
	if rec[0].Theta["eps_r"] != 0 || rec[1].Theta["eps_r"] == 0 {
		t.Fatalf("eps_r: stage 1 %g (fixed 0), stage 2 %g (free)", rec[0].Theta["eps_r"], rec[1].Theta["eps_r"])
	}
	// Stage 2 improves on stage 1.
	if !(rec[1].LogTarget >= rec[0].LogTarget) {
		t.Fatalf("log target fell: %g then %g", rec[0].LogTarget, rec[1].LogTarget)
	}
	code, stdout, _ = kinfer(t, "run", filepath.Join(dir, "all.toml"), "-o", out, "--workers", "1")
	if code != 0 || strings.Count(stdout, "not run again") != 2 {
		t.Fatalf("second run: exit %d\n%s", code, stdout)
	}
	// Another seed: the stages' results are not that seed's.
	code, _, stderr = kinfer(t, "run", filepath.Join(dir, "all.toml"), "-o", out, "--workers", "1", "--seed", "7")
	if code == 0 || !strings.Contains(stderr, "seed 1 then, 7 now") {
		t.Fatalf("--seed 7: exit %d\n%s", code, stderr)
	}
	// The stage list naming another file of the same name: its content
	// is compared, not only the file the run read.
	os.MkdirAll(filepath.Join(dir, "other"), 0o755)
	os.WriteFile(filepath.Join(dir, "other", "s1.toml"), []byte(strings.Replace(string(mustRead(t, filepath.Join(dir, "s1.toml"))), "eps_r = 0.0", "eps_r = 0.01", 1)), 0o644)
	os.WriteFile(filepath.Join(dir, "other", "d.csv"), mustRead(t, filepath.Join(dir, "d.csv")), 0o644)
	os.WriteFile(filepath.Join(dir, "all2.toml"), []byte("name = \"two-stage\"\nstages = [\"other/s1.toml\", \"s2.toml\"]\n"), 0o644)
	code, _, stderr = kinfer(t, "run", filepath.Join(dir, "all2.toml"), "-o", out, "--workers", "1")
	if code == 0 || !strings.Contains(stderr, "stage 1 (other/s1.toml)") || !strings.Contains(stderr, "the run read") {
		t.Fatalf("another s1.toml: exit %d\n%s", code, stderr)
	}
	// Stage folders of a kinfer before stage_start.json: the first stage
	// inherits nothing (nothing to check), a later one is continued with
	// a note that its inherited values are not checked.
	saved := map[string][]byte{}
	for _, s := range []string{"stage1-s1", "stage2-s2"} {
		b, err := os.ReadFile(filepath.Join(out, s, StageStartFile))
		if err != nil {
			t.Fatal(err)
		}
		saved[s] = b
		os.Remove(filepath.Join(out, s, StageStartFile))
	}
	code, stdout, stderr = kinfer(t, "run", filepath.Join(dir, "all.toml"), "-o", out, "--workers", "1")
	if code != 0 || strings.Count(stdout, "not run again") != 2 || strings.Count(stdout, "the values it inherited are not checked") != 1 {
		t.Fatalf("older stage folders: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for s, b := range saved {
		os.WriteFile(filepath.Join(out, s, StageStartFile), b, 0o644)
	}
	// --verify of stage 2 re-runs it with the values it inherited
	// (stage_start.json): stage 2 alone lacks a prior for k.
	code, stdout, stderr = kinfer(t, "run", "--verify", filepath.Join(out, "stage2-s2"))
	if code != 0 || !strings.Contains(stdout, "identical") {
		t.Fatalf("--verify of stage 2: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// A single study run into a stage's folder is not that stage: its
	// stage_start.json goes, and --verify re-runs the study as it is.
	single := filepath.Join(dir, "single")
	os.MkdirAll(single, 0o755)
	os.WriteFile(filepath.Join(single, StageStartFile), []byte(`{"previous": {"k": 5000}}`), 0o644)
	if code, stdout, stderr = kinfer(t, "run", filepath.Join(dir, "s1.toml"), "-o", single, "--workers", "1"); code != 0 {
		t.Fatalf("single run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(single, StageStartFile)); !os.IsNotExist(err) {
		t.Errorf("a single run kept a stage's %s (%v)", StageStartFile, err)
	}
	// So do analyze and report.
	if code, stdout, stderr = kinfer(t, "analyze", filepath.Join(out, "stage2-s2"), "--predictive", "10"); code != 0 {
		t.Fatalf("analyze of stage 2: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr = kinfer(t, "report", filepath.Join(out, "stage2-s2")); code != 0 || strings.Contains(stdout+stderr, "did not load again") {
		t.Fatalf("report of stage 2: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The multi-stage folder itself is not a run: each command says to
	// give a stage's folder.
	for _, args := range [][]string{{"analyze", out}, {"report", out}, {"run", "--verify", out}, {"run", "--resume", out}} {
		code, _, stderr = kinfer(t, args...)
		if code == 0 || !strings.Contains(stderr, out+" is a multi-stage study's folder: give one stage's folder, e.g. "+filepath.Join(out, "stage2-s2")) {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
	}
	// Results computed from other inputs are neither reused nor
	// overwritten. Stage 1's data edited: stage 1 is refused, naming the
	// changed file.
	write("d.csv", "length_mm,force_N\n31,60\n32,120\n33,180\n34,240\n35,300\n")
	code, _, stderr = kinfer(t, "run", filepath.Join(dir, "all.toml"), "-o", out, "--workers", "1")
	if code == 0 || !strings.Contains(stderr, "stage 1 (s1.toml)") || !strings.Contains(stderr, "d.csv (sha256") || !strings.Contains(stderr, "remove "+filepath.Join(out, "stage1-s1")) {
		t.Fatalf("edited data: exit %d\n%s", code, stderr)
	}
	// Stage 1 run again (its folder removed) on the new data ends
	// elsewhere, so stage 2's results no longer follow from it: refused
	// too, naming the inherited value that changed.
	if err := os.RemoveAll(filepath.Join(out, "stage1-s1")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = kinfer(t, "run", filepath.Join(dir, "all.toml"), "-o", out, "--workers", "1")
	if code == 0 || !strings.Contains(stderr, "stage 2 (s2.toml)") || !strings.Contains(stderr, "the stage before it ended elsewhere: k = ") {
		t.Fatalf("stage 1 re-run: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if b2, err := os.ReadFile(filepath.Join(out, StagesFile)); err != nil || string(b2) != string(b) {
		t.Fatalf("stages.json changed by a refused run (%v)", err)
	}
	// A stage start recorded for other values (a directory of another
	// multi-stage run) is refused as well; the stage runs once removed.
	if err := os.RemoveAll(filepath.Join(out, "stage2-s2")); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr = kinfer(t, "run", filepath.Join(dir, "all.toml"), "-o", out, "--workers", "1"); code != 0 || strings.Count(stdout, "not run again") != 1 {
		t.Fatalf("after removing stage 2: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// A multi-stage file holds name, seed and stages only, and a
	// non-empty list.
	write("mixed.toml", "name = \"m\"\nstages = [\"s1.toml\"]\n[method]\nuse = \"nope\"\n")
	write("empty.toml", "name = \"e\"\nstages = []\n")
	write("esc.toml", "name = \"esc\"\nstages = [\"e\\u001b[31mred.toml\"]\n")
	for _, c := range []struct{ file, want string }{
		{"esc.toml", `esc.toml:2: key "stages[0]": "e\x1b[31mred.toml" has a control character`},
		{"mixed.toml", `mixed.toml:3: key "method": a multi-stage study file holds only name, seed and stages`},
		{"empty.toml", `empty.toml:2: key "stages": the list of stage study files is empty`},
	} {
		for _, cmd := range []string{"run", "validate"} {
			code, _, stderr = kinfer(t, cmd, filepath.Join(dir, c.file))
			if code == 0 || !strings.Contains(stderr, c.want) {
				t.Errorf("%s %s: exit %d, want %q in\n%s", cmd, c.file, code, c.want, stderr)
			}
		}
	}
	// A stage study alone still needs every parameter.
	code, _, stderr = kinfer(t, "run", filepath.Join(dir, "s2.toml"), "-o", filepath.Join(dir, "alone"))
	if code == 0 || !strings.Contains(stderr, "neither a prior nor a fixed value") {
		t.Fatalf("stage alone: exit %d %s", code, stderr)
	}
}

// A stage is refused only when a value it used of the stage before
// changed: a stage with its own init file and every parameter free, or a
// TMCMC stage (whose draws are the prior's), is reused when the stage
// before it is run again and ends elsewhere; a stage that leaves a
// parameter out is refused when that parameter's value changed.
func TestStageReusedWhenItUsedNothingOfTheStageBefore(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// y = 1 + 2x exactly; stage 1 fits a with b fixed.
	write("d.csv", "x,y\n0,1\n1,3\n2,5\n3,7\n")
	write("init.csv", "a,b\n0.5,1.5\n")
	common := "[model]\nuse = \"line\"\n[[data]]\nname = \"d\"\nfile = \"d.csv\"\n[[likelihood]]\nuse = \"gaussian\"\nsigma = { y = 0.1 }\n"
	write("s1.toml", "name = \"s1\"\n"+common+"[prior]\na = { uniform = [-10.0, 10.0] }\n[fixed]\nb = 2.5\n[method]\nuse = \"levmar\"\n")
	write("own.toml", "name = \"own\"\ninit = \"init.csv\"\n"+common+"[prior]\na = { uniform = [-10.0, 10.0] }\nb = { uniform = [-10.0, 10.0] }\n[method]\nuse = \"levmar\"\n")
	write("tm.toml", "name = \"tm\"\n"+common+"[prior]\na = { uniform = [-10.0, 10.0] }\nb = { uniform = [-10.0, 10.0] }\n[method]\nuse = \"tmcmc\"\nchains = 200\n")
	write("inh.toml", "name = \"inh\"\n"+common+"[prior]\na = { uniform = [-10.0, 10.0] }\n[method]\nuse = \"levmar\"\n")
	write("all.toml", "name = \"ms\"\nstages = [\"s1.toml\", \"own.toml\", \"tm.toml\"]\n")
	write("all2.toml", "name = \"ms2\"\nstages = [\"s1.toml\", \"inh.toml\"]\n")
	out, out2 := filepath.Join(dir, "out"), filepath.Join(dir, "out2")
	for _, c := range [][2]string{{"all.toml", out}, {"all2.toml", out2}} {
		if code, stdout, stderr := kinfer(t, "run", filepath.Join(dir, c[0]), "-o", c[1], "--workers", "1", "--no-report"); code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", c[0], code, stdout, stderr)
		}
	}
	// A complete stage's best is evaluated again before the next stage
	// starts from it: one edited outside its prior is refused (audit 15:
	// carried into stage 2), the record left as it was.
	sumPath := filepath.Join(out2, "stage1-s1", "summary.json")
	orig := mustRead(t, sumPath)
	var sm map[string]any
	must(t, json.Unmarshal(orig, &sm))
	sm["best"].(map[string]any)["theta"].(map[string]any)["a"] = 20.0
	forged, _ := json.Marshal(sm)
	must(t, os.WriteFile(sumPath, forged, 0o644))
	if code, _, stderr := kinfer(t, "run", filepath.Join(dir, "all2.toml"), "-o", out2, "--workers", "1", "--no-report"); code == 0 || !strings.Contains(stderr, "stage 1 (s1.toml)") || !strings.Contains(stderr, "evaluates to out-of-support") {
		t.Fatalf("a forged best of a complete stage: exit %d\n%s", code, stderr)
	}
	// A worse in-prior point with its true values: evaluates right, but a
	// sample the stage wrote beats it (audit 16).
	sm["best"].(map[string]any)["theta"].(map[string]any)["a"] = 5.0
	forged, _ = json.Marshal(sm)
	must(t, os.WriteFile(sumPath, forged, 0o644))
	_, _, stderr := kinfer(t, "run", filepath.Join(dir, "all2.toml"), "-o", out2, "--workers", "1", "--no-report")
	m := regexp.MustCompile(`evaluates to ok, (\S+) and (\S+): not this`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no values in %s", stderr)
	}
	lp, _ := strconv.ParseFloat(m[1], 64)
	ll, _ := strconv.ParseFloat(m[2], 64)
	b := sm["best"].(map[string]any)
	b["log_prior"], b["log_likelihood"], b["log_target"] = lp, ll, lp+ll
	forged, _ = json.Marshal(sm)
	must(t, os.WriteFile(sumPath, forged, 0o644))
	if code, _, stderr := kinfer(t, "run", filepath.Join(dir, "all2.toml"), "-o", out2, "--workers", "1", "--no-report"); code == 0 || !strings.Contains(stderr, "better: not this stage's best") {
		t.Fatalf("a worse best with its true values: exit %d\n%s", code, stderr)
	}
	must(t, os.WriteFile(sumPath, orig, 0o644))
	var rec stageStart
	if err := json.Unmarshal(mustRead(t, filepath.Join(out, "stage2-own", StageStartFile)), &rec); err != nil || rec.Used == nil || len(rec.Used) != 0 || rec.Previous["b"] != 2.5 {
		t.Fatalf("stage 2's stage_start.json: %+v (%v), want all of stage 1's θ in previous and nothing used", rec, err)
	}
	// Stage 1 again with another fixed b: it ends elsewhere.
	write("s1.toml", strings.Replace(string(mustRead(t, filepath.Join(dir, "s1.toml"))), "b = 2.5", "b = 2.25", 1))
	for _, d := range []string{out, out2} {
		if err := os.RemoveAll(filepath.Join(d, "stage1-s1")); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := kinfer(t, "run", filepath.Join(dir, "all.toml"), "-o", out, "--workers", "1", "--no-report")
	if code != 0 || strings.Count(stdout, "not run again") != 2 {
		t.Fatalf("stages 2 and 3 use nothing of stage 1, so are reused: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = kinfer(t, "run", filepath.Join(dir, "all2.toml"), "-o", out2, "--workers", "1", "--no-report")
	if code == 0 || !strings.Contains(stderr, "the stage before it ended elsewhere: a = ") || !strings.Contains(stderr, "b = 2.5 then, 2.25 now") {
		t.Fatalf("inh.toml uses stage 1's b (left out) and a (its start): exit %d\n%s", code, stderr)
	}
}

// A multi-stage study whose outputs would replace one of its inputs is
// refused before any stage runs, the inputs left as they were: stage 2's
// folder holding stage 1's data under the name samples.csv, and a
// multi-stage file named stages.json in -o (audit 8: stage 2's samples
// replaced stage 1's measured data).
func TestStagesNotOverInputs(t *testing.T) {
	dir := t.TempDir()
	data := mustRead(t, "../../examples/quickstart/force_length.csv")
	study := strings.Replace(string(mustRead(t, "../../examples/quickstart/study.toml")), "samples = 5000", "samples = 50", 1)
	must(t, os.MkdirAll(filepath.Join(dir, "stage2-x"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "stage2-x", "samples.csv"), data, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "stage2-x", "s1.toml"), []byte(strings.Replace(study, "force_length.csv", "samples.csv", 1)), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "x.toml"), []byte(study), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "force_length.csv"), data, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "cal.toml"), []byte("name = \"cal\"\nstages = [\"stage2-x/s1.toml\", \"x.toml\"]\n"), 0o644))
	code, _, e := kinfer(t, "run", filepath.Join(dir, "cal.toml"), "-o", dir, "--no-report")
	if code != 1 || !strings.Contains(e, "stage 2 (x.toml): the outputs would write samples.csv over the stage 1 data") {
		t.Errorf("exit %d: %s", code, e)
	}
	if b := mustRead(t, filepath.Join(dir, "stage2-x", "samples.csv")); string(b) != string(data) {
		t.Error("stage 1's data was replaced")
	}
	// A name stage 2 removes in its folder (audit 10): refused, kept.
	for _, name := range []string{"checkpoint.abc.state", ".samples.csv.tmp-7"} {
		d := t.TempDir()
		must(t, os.MkdirAll(filepath.Join(d, "stage2-x"), 0o755))
		must(t, os.WriteFile(filepath.Join(d, "stage2-x", name), data, 0o644))
		must(t, os.WriteFile(filepath.Join(d, "s1.toml"), []byte(strings.Replace(study, "force_length.csv", "stage2-x/"+name, 1)), 0o644))
		must(t, os.WriteFile(filepath.Join(d, "x.toml"), []byte(study), 0o644))
		must(t, os.WriteFile(filepath.Join(d, "force_length.csv"), data, 0o644))
		must(t, os.WriteFile(filepath.Join(d, "cal.toml"), []byte("name = \"cal\"\nstages = [\"s1.toml\", \"x.toml\"]\n"), 0o644))
		code, _, e := kinfer(t, "run", filepath.Join(d, "cal.toml"), "-o", d, "--no-report")
		if code != 1 || !strings.Contains(e, "stage 2 (x.toml): the run removes files named") {
			t.Errorf("%s: exit %d: %s", name, code, e)
		}
		if b, err := os.ReadFile(filepath.Join(d, "stage2-x", name)); err != nil || string(b) != string(data) {
			t.Errorf("%s: stage 1's data went (%v)", name, err)
		}
	}
	d4 := t.TempDir()
	must(t, os.WriteFile(filepath.Join(d4, "s1.toml"), []byte(study), 0o644))
	must(t, os.WriteFile(filepath.Join(d4, "force_length.csv"), data, 0o644))
	must(t, os.WriteFile(filepath.Join(d4, "stages.json"), []byte("name = \"cal\"\nstages = [\"s1.toml\"]\n"), 0o644))
	if code, _, e := kinfer(t, "run", filepath.Join(d4, "stages.json"), "-o", d4, "--no-report"); code != 1 || !strings.Contains(e, "the outputs would write stages.json over the multi-stage study") {
		t.Errorf("a multi-stage file named stages.json: exit %d: %s", code, e)
	}
}

// A stage whose model lacks a parameter of the stage before does not carry
// it on (STUDY.md: a parameter the previous stage did not have starts at
// its default; audit 12: values from two stages back were carried).
func TestStageDoesNotCarryParametersItsModelLacks(t *testing.T) {
	dir := t.TempDir()
	line := "[model]\nuse = \"line\"\n[[data]]\nname = \"d\"\nfile = \"xy.csv\"\n[[likelihood]]\nuse = \"gaussian\"\nsigma = 1.0\n[prior]\na = { uniform = [0.0, 10.0] }\nb = { uniform = [-5.0, 5.0] }\n[method]\nuse = \"levmar\"\n"
	must(t, os.WriteFile(filepath.Join(dir, "xy.csv"), []byte("x,y\n1,3\n2,5\n3,7\n4,9\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "s1.toml"), []byte("name = \"s1\"\n"+line), 0o644))
	lig := strings.Replace(string(mustRead(t, "../../examples/quickstart/study.toml")), "use = \"metropolis\"", "use = \"levmar\"", 1)
	lig = regexp.MustCompile(`(?m)^(chains|burn_in|samples) = .*$`).ReplaceAllString(lig, "")
	must(t, os.WriteFile(filepath.Join(dir, "s2.toml"), []byte(lig), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "force_length.csv"), mustRead(t, "../../examples/quickstart/force_length.csv"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "ms.toml"), []byte("name = \"ms\"\nstages = [\"s1.toml\", \"s2.toml\"]\n"), 0o644))
	out := filepath.Join(dir, "out")
	if code, o, e := kinfer(t, "run", filepath.Join(dir, "ms.toml"), "-o", out, "--no-report"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, o, e)
	}
	var recs []struct{ Theta map[string]float64 }
	if err := json.Unmarshal(mustRead(t, filepath.Join(out, "stages.json")), &recs); err != nil || len(recs) != 2 {
		t.Fatalf("stages.json: %v %v", recs, err)
	}
	if _, ok := recs[1].Theta["a"]; ok || len(recs[1].Theta) != 2 {
		t.Errorf("stage 2's θ %v carries stage 1's a", recs[1].Theta)
	}
}
