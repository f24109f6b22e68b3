package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDesignCommand: kinfer design writes design.csv and design.json,
// refuses a second run into the same directory and answers --help.
func TestDesignCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	code, out, e := kinfer(t, "design", "../../examples/quickstart/study.toml", "-o", dir, "--n", "16", "--design", "sobol-owen")
	if code != 0 || !strings.Contains(out, "done — 16 of 16 sobol-owen points (ok 16)") {
		t.Fatalf("exit %d\n%s\n%s", code, out, e)
	}
	b, err := os.ReadFile(filepath.Join(dir, "design.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "point,status,k,eps_r,dataset,length_mm,force_N,strain\n0,ok,") {
		t.Errorf("design.csv starts %q", string(b[:80]))
	}
	if _, err := os.Stat(filepath.Join(dir, "design.json")); err != nil {
		t.Error(err)
	}
	if code, _, e := kinfer(t, "design", "../../examples/quickstart/study.toml", "-o", dir, "--n", "16"); code != 1 || !strings.Contains(e, "--resume") {
		t.Errorf("second run into %s: exit %d, %s", dir, code, e)
	}
	if code, out, _ := kinfer(t, "design", "--help"); code != 0 || !strings.Contains(out, "-design string") {
		t.Errorf("--help: %d %s", code, out)
	}
	if code, _, _ := kinfer(t, "design", "../../examples/quickstart/study.toml", "-o", dir+"2", "--design", "grid"); code != 1 {
		t.Errorf("unknown design: exit %d", code)
	}
}

// A box design over an unbounded prior spans the model's bounds: said.
func TestDesignBoxNotesUnboundedPrior(t *testing.T) {
	dir := t.TempDir()
	p := writePriorDrawStudy(t, dir, "boxnote", 20, "")
	code, out, e := kinfer(t, "design", p, "-o", filepath.Join(dir, "d"), "--n", "4")
	if code != 0 || !strings.Contains(out, "note: b's prior normal(2, 0.2) is unbounded, so the box spans the model's bounds [-1e+06, 1e+06]") {
		t.Fatalf("exit %d\n%s\n%s", code, out, e)
	}
	if strings.Contains(out, "note: a's") || strings.Contains(out, "note: a =") {
		t.Errorf("a uniform prior noted:\n%s", out)
	}
	// A lognormal's support is open at 0, the box's lower end: the first
	// Sobol point (the lower corner) is out of support, which is said.
	text := strings.Replace(string(mustRead(t, p)), "b = { normal = [2.0, 0.2] }", "b = { lognormal = [0.0, 1.0] }", 1)
	os.WriteFile(p, []byte(text), 0o644)
	code, out, e = kinfer(t, "design", p, "-o", filepath.Join(dir, "d2"), "--n", "4")
	if code != 0 || !strings.Contains(out, "note: b = 0, an end of the box, is outside the support of its prior lognormal(0, 1)") || !strings.Contains(out, "out-of-support 1") {
		t.Fatalf("lognormal: exit %d\n%s\n%s", code, out, e)
	}
}

// kinfer design refuses to write its design.csv over the study's data
// file of that name (a design into the study's own folder).
func TestDesignRefusesToOverwriteItsInputs(t *testing.T) {
	dir := t.TempDir()
	text := strings.Replace(string(mustRead(t, "../../examples/quickstart/study.toml")), `file = "force_length.csv"`, `file = "design.csv"`, 1)
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(text), 0o644)
	data := mustRead(t, "../../examples/quickstart/force_length.csv")
	os.WriteFile(filepath.Join(dir, "design.csv"), data, 0o644)
	code, _, e := kinfer(t, "design", filepath.Join(dir, "study.toml"), "-n", "8", "-o", dir)
	if code == 0 || !strings.Contains(e, "would write design.csv over the data pull-test") {
		t.Fatalf("exit %d\n%s", code, e)
	}
	if string(mustRead(t, filepath.Join(dir, "design.csv"))) != string(data) {
		t.Fatal("the data file changed")
	}
}
