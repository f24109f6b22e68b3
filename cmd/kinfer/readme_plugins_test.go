package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/host/build"
)

// readmeBlock returns the first fenced block of the given language that
// follows the heading in README.md.
func readmeBlock(t *testing.T, heading, lang string) string {
	t.Helper()
	readme := string(mustRead(t, "../../README.md"))
	h := strings.Index(readme, "\n"+heading+"\n")
	if h < 0 {
		t.Fatalf("README.md has no heading %q", heading)
	}
	rest := readme[h:]
	i := strings.Index(rest, "```"+lang+"\n")
	if i < 0 {
		t.Fatalf("README.md has no ```%s block after %q", lang, heading)
	}
	rest = rest[i+len(lang)+4:]
	return rest[:strings.Index(rest, "```")]
}

// outsideClone fails the test unless nothing kinfer's sources offer is
// within reach of dir: no kinfer.h, sdk/c/kinfer.h, go.mod or go.work in
// dir or any directory above it. A test that put the header or a module
// there itself (as this recipe's test once did, copying kinfer.h next to
// the source) would not test what a new user gets.
func outsideClone(t *testing.T, dir string) {
	t.Helper()
	for d := dir; ; d = filepath.Dir(d) {
		for _, f := range []string{"kinfer.h", "sdk/c/kinfer.h", "go.mod", "go.work"} {
			if _, err := os.Stat(filepath.Join(d, f)); err == nil {
				t.Fatalf("%s exists: the plugin folder is not outside a clone", filepath.Join(d, f))
			}
		}
		if filepath.Dir(d) == d {
			return
		}
	}
}

// The README's Go, C, Rust and AssemblyScript plugin recipes, followed as a new user would in a
// folder of their own outside the clone with nothing but the kinfer
// binary: the source and plugin.toml copied from README.md, `kinfer build
// .`, a study that recovers the spring constant. The Go build runs with
// GOPROXY=off, so it cannot fetch github.com/kinfer/kinfer: the SDK must
// come from the binary; the folder must hold no go.mod or kinfer.h before
// or after (the user's files are not touched beyond plugin.toml and the
// module).
func TestReadmePluginsOutsideClone(t *testing.T) {
	manifest := readmeBlock(t, "## Writing a plugin in Go", "toml")
	for _, c := range []struct{ lang, heading, block, file string }{
		{build.LangGo, "## Writing a plugin in Go", "go", "spring.go"},
		{build.LangC, "## Writing a plugin in C", "c", "spring.c"},
		{build.LangRust, "## Writing a plugin in Rust", "rust", "lib.rs"},
		{build.LangAS, "## Writing a plugin in AssemblyScript", "ts", "spring.ts"},
	} {
		t.Run(c.lang, func(t *testing.T) {
			t.Parallel()
			lang := c.lang
			if _, err := build.Toolchain(lang, build.Options{}); err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("CI installs every toolchain (.ci/run), but: %v", err)
				}
				t.Skipf("no %s toolchain (C needs Debian's clang lld wasi-libc libclang-rt-14-dev-wasm32; Rust rustc libstd-rust-dev-wasm32; "+
					"AssemblyScript nodejs npm and %s): %v", c.lang, build.AscInstall(), err)
			}
			dir := filepath.Join(t.TempDir(), "spring")
			must(t, os.Mkdir(dir, 0o755))
			must(t, os.WriteFile(filepath.Join(dir, c.file), []byte(readmeBlock(t, c.heading, c.block)), 0o644))
			must(t, os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte(manifest), 0o644))
			outsideClone(t, dir)

			cmd := exec.Command(kinferBin, "build", ".")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GOPROXY=off")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("kinfer build .: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "guest SDK carried in kinfer") {
				t.Errorf("build output does not say the embedded SDK was used:\n%s", out)
			}
			var names []string
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if want := []string{c.file, "plugin.toml", "spring.wasm"}; !slices.Equal(names, slices.Sorted(slices.Values(want))) {
				t.Errorf("after the build the folder holds %v, want %v", names, want)
			}
			if !strings.Contains(string(mustRead(t, filepath.Join(dir, "plugin.toml"))), "sha256 = ") {
				t.Fatal("build did not pin sha256")
			}
			// Data from k = 42 N/m exactly; σ = 0.1 N.
			must(t, os.WriteFile(filepath.Join(dir, "d.csv"), []byte("x_m,force_N\n0.1,4.2\n0.2,8.4\n0.3,12.6\n0.4,16.8\n"), 0o644))
			study := "name = \"spring\"\n[model]\nplugin = \"plugin.toml\"\n[[data]]\nname = \"d\"\nfile = \"d.csv\"\n[[likelihood]]\nuse = \"gaussian\"\nsigma = 0.1\n[prior]\nk = { uniform = [1.0, 100.0] }\n[method]\nuse = \"metropolis\"\nburn_in = 1000\nsamples = 1000\n"
			must(t, os.WriteFile(filepath.Join(dir, "study.toml"), []byte(study), 0o644))
			cmd = exec.Command(kinferBin, "run", "study.toml", "-o", "out")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("kinfer run: %v\n%s", err, out)
			}
			s := readSummary(t, filepath.Join(dir, "out"))
			// Posterior of k: Gaussian with sd σ/‖x‖ = 0.1/√0.30 = 0.183
			// around 42 (flat prior, linear model).
			if p := s.Params[0]; !s.Complete || math.Abs(p.Mean-42) > 0.1 || math.Abs(p.SD-0.1/math.Sqrt(0.30)) > 0.05 {
				t.Fatalf("k: mean %g sd %g complete %v; want 42 ± 0.1 and sd 0.183 ± 0.05", p.Mean, p.SD, s.Complete)
			}
		})
	}
}

// kinfer build --print-header prints the header the binary carries: the
// repository's sdk/c/kinfer.h.
func TestBuildPrintHeader(t *testing.T) {
	code, out, errs := kinfer(t, "build", "--print-header")
	if code != 0 || out != string(mustRead(t, "../../sdk/c/kinfer.h")) {
		t.Fatalf("exit %d, %d bytes, stderr %s; want sdk/c/kinfer.h", code, len(out), errs)
	}
	if code, _, _ := kinfer(t, "build", "--print-header", "dir"); code != 2 {
		t.Errorf("--print-header with a directory: exit %d, want 2", code)
	}
	if code, _, _ := kinfer(t, "build"); code != 2 {
		t.Errorf("build without a directory: exit %d, want 2", code)
	}
}

// kinfer build --print-sdk LANG prints each of the SDK's files (tests
// left out) after a line naming it, as in the repository (audit 6: the
// Rust and AssemblyScript APIs were not readable from the binary).
func TestBuildPrintSDK(t *testing.T) {
	for lang, files := range map[string][]string{
		"rust":           {"sdk/rust/Cargo.toml", "sdk/rust/src/lib.rs"},
		"assemblyscript": {"sdk/assemblyscript/common.ts", "sdk/assemblyscript/index.ts", "sdk/assemblyscript/likelihood.ts", "sdk/assemblyscript/method.ts", "sdk/assemblyscript/model.ts", "sdk/assemblyscript/package.json"},
		"c":              {"sdk/c/kinfer.h"},
	} {
		code, out, errs := kinfer(t, "build", "--print-sdk", lang)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", lang, code, errs)
		}
		want := ""
		for _, f := range files {
			c := "//"
			if strings.HasSuffix(f, ".toml") || strings.HasSuffix(f, ".json") {
				c = "#"
			}
			want += c + " ==== kinfer sdk file: " + f + " ====\n" + string(mustRead(t, "../../"+f))
		}
		if out != want {
			t.Errorf("%s: %d bytes, want the %d files' %d", lang, len(out), len(files), len(want))
		}
	}
	code, out, _ := kinfer(t, "build", "--print-sdk", "go")
	if code != 0 || !strings.Contains(out, "// ==== kinfer sdk file: sdk/go/model/model.go ====\n") || !strings.Contains(out, "// ==== kinfer sdk file: abi/contracts.go ====\n") || strings.Contains(out, "_test.go") {
		t.Errorf("go: exit %d, or model.go or the abi package missing, or a test file printed", code)
	}
	if code, _, errs := kinfer(t, "build", "--print-sdk", "fortran"); code != 2 || !strings.Contains(errs, "want c, go, rust or assemblyscript") {
		t.Errorf("an unknown language: exit %d, %s", code, errs)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
