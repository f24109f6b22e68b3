package wasm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The test modules in testdata/ are committed so that the tests need no C
// compiler, but they must stay the modules testmod.c builds: a module
// built from an older testmod.c tests an older behaviour. This rebuilds
// them all with testdata/build.sh in a temporary folder and compares the
// bytes (clang 14 is what CI installs; another clang writes other bytes,
// so the test skips there).
func TestTestdataModulesMatchBuildScript(t *testing.T) {
	if testing.Short() {
		t.Skip("rebuilds every test module with clang")
	}
	out, err := exec.Command("clang", "--version").Output()
	if err != nil {
		t.Skipf("no clang to rebuild testdata/*.wasm: %v", err)
	}
	if first, _, _ := strings.Cut(string(out), "\n"); !strings.Contains(first, "clang version 14.") {
		t.Skipf("testdata/*.wasm were built with clang 14; this machine has %q", first)
	}
	dir := t.TempDir()
	for _, f := range []string{"build.sh", "testmod.c"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "build.sh")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("testdata/build.sh: %v\n%s", err, out)
	}
	built, err := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := filepath.Glob(filepath.Join("testdata", "*.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != len(committed) {
		t.Errorf("build.sh writes %d modules, testdata holds %d: add or remove modules and the build.sh lines together", len(built), len(committed))
	}
	for _, p := range built {
		name := filepath.Base(p)
		want, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Errorf("build.sh writes %s, which testdata does not hold: %v", name, err)
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("testdata/%s differs from a rebuild from testmod.c: run `cd host/wasm/testdata && sh build.sh` and commit the modules", name)
		}
	}
}
