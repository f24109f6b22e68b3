package build

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kinfer/kinfer/host/manifest"
)

const goPlugin = `package main

import (
	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/sdk/go/model"
)

type twice struct{}

func (twice) Spec() abi.Spec {
	return abi.Spec{Kind: abi.KindModel, Name: "twice", Version: "0.1.0",
		Params:     []abi.Param{{Name: "a", Lower: 0, Upper: 1}},
		Conditions: []abi.Column{{Name: "x"}},
		Outputs:    []abi.Column{{Name: "y"}}}
}

func (twice) Eval(theta, x, y []float64) abi.Status {
	for i := range x {
		y[i] = 2 * theta[0] * x[i]
	}
	return abi.OK
}

func init() { model.Serve(twice{}) }
func main() {}
`

// goPluginDir writes the Go plugin, its plugin.toml and (if not empty) a
// go.mod into a new directory under a temporary root (outside the
// repository).
func goPluginDir(t *testing.T, gomod string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "twice")
	must(t, os.Mkdir(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(goPlugin), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte(cManifest), 0o644))
	if gomod != "" {
		must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	}
	return dir
}

// A Go plugin outside the repository builds with the SDK carried in the
// binary whether it has no go.mod, a go.mod that requires
// github.com/kinfer/kinfer (not on any proxy) or one whose replace points
// nowhere (GOPROXY=off); the bytes are those of the no-go.mod build in another folder
// (no temporary path gets into the module), and the go.mod is left as it
// was. A go.mod whose replace points at a real copy of the module is
// obeyed instead.
func TestGoPluginOutsideRepository(t *testing.T) {
	if _, err := Toolchain(LangGo, Options{}); err != nil {
		t.Skip(err)
	}
	t.Setenv("GOPROXY", "off") // nothing may be fetched
	var first string
	for _, c := range []struct{ name, gomod string }{
		{"no go.mod", ""},
		{"no go.mod, again", ""},
		{"require without replace", "module kinfer.local/plugin\n\ngo 1.26\n\nrequire github.com/kinfer/kinfer v0.0.0\n"},
		{"replace to a missing clone", "module kinfer.local/plugin\n\ngo 1.26\n\nrequire github.com/kinfer/kinfer v0.0.0\n\nreplace github.com/kinfer/kinfer => ../../nowhere/kinfer\n"},
	} {
		dir := goPluginDir(t, c.gomod)
		r, err := Build(dir, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !r.EmbeddedSDK {
			t.Errorf("%s: the embedded SDK was not used", c.name)
		}
		// The build info records the main module and the required
		// version of github.com/kinfer/kinfer, here the same as those of
		// the temporary module of a folder without go.mod.
		if first == "" {
			first = r.SHA256
		} else if r.SHA256 != first {
			t.Errorf("%s: sha256 %s, want %s as the first build's", c.name, r.SHA256, first)
		}
		if c.gomod != "" {
			if got := string(mustReadFile(t, filepath.Join(dir, "go.mod"))); got != c.gomod {
				t.Errorf("%s: go.mod changed to\n%s", c.name, got)
			}
		}
		for _, f := range []string{"go.sum", "kinfer.h", sdkDirName} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Errorf("%s: the build left %s in the plugin's folder", c.name, f)
			}
		}
		if cr, err := Check(dir, Options{}); err != nil || !cr.Match {
			t.Errorf("%s: Check after Build: match %v, %v", c.name, cr.Match, err)
		}
	}

	// A plugin in a subfolder of the user's own module (no kinfer
	// requirement) builds too; the overlay supplies the module root's
	// go.mod.
	// Its go line, older than the SDK's, is raised in the overlay.
	lab := t.TempDir()
	labMod := "module example.com/lab\n\ngo 1.22\n"
	must(t, os.WriteFile(filepath.Join(lab, "go.mod"), []byte(labMod), 0o644))
	sub := filepath.Join(lab, "plugins", "twice")
	must(t, os.MkdirAll(sub, 0o755))
	must(t, os.WriteFile(filepath.Join(sub, "main.go"), []byte(goPlugin), 0o644))
	must(t, os.WriteFile(filepath.Join(sub, "plugin.toml"), []byte(cManifest), 0o644))
	if r, err := Build(sub, Options{}); err != nil || !r.EmbeddedSDK {
		t.Errorf("plugin inside the module example.com/lab: %+v, %v", r, err)
	} else if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "says go 1.22") || !strings.Contains(r.Notes[0], "raised it to go") {
		// The raised language version changes semantics: it is said.
		t.Errorf("the raised go line is not reported: notes %q", r.Notes)
	}
	if got := string(mustReadFile(t, filepath.Join(lab, "go.mod"))); got != labMod {
		t.Errorf("the module's go.mod changed to\n%s", got)
	}

	// A replace that points at a copy of the module is the user's choice:
	// a copy without sdk/go/model must make the build fail.
	clone := filepath.Join(t.TempDir(), "kinfer")
	must(t, os.MkdirAll(filepath.Join(clone, "abi"), 0o755))
	must(t, os.WriteFile(filepath.Join(clone, "go.mod"), []byte("module github.com/kinfer/kinfer\n\ngo 1.26\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(clone, "abi", "abi.go"), []byte("package abi\n"), 0o644))
	dir := goPluginDir(t, "module kinfer.local/plugin\n\ngo 1.26\n\nrequire github.com/kinfer/kinfer v0.0.0\n\nreplace github.com/kinfer/kinfer => "+clone+"\n")
	_, err := Build(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "no required module provides package github.com/kinfer/kinfer/sdk/go/model") {
		t.Errorf("a go.mod replacing github.com/kinfer/kinfer with %s was not obeyed: %v", clone, err)
	}
}

// A C plugin with no kinfer.h in reach gets the embedded one, and a
// kinfer.h of its own wins over it.
func TestCPluginOutsideRepository(t *testing.T) {
	if _, err := Toolchain(LangC, Options{}); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "twice.c"), []byte(cPlugin), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte(cManifest), 0o644))
	if findSDK(dir) != "" {
		t.Skipf("an sdk/c/kinfer.h is above %s", dir)
	}
	r, err := Build(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.EmbeddedSDK {
		t.Error("the embedded kinfer.h was not used")
	}
	sdk, _ := filepath.Abs("../../sdk/c")
	r2, err := Build(dir, Options{Include: []string{sdk}})
	if err != nil || r2.EmbeddedSDK || r2.SHA256 != r.SHA256 {
		t.Errorf("with -I the repository's sdk/c: embedded %v sha256 %s (embedded build %s), %v", r2.EmbeddedSDK, r2.SHA256, r.SHA256, err)
	}
	// A broken kinfer.h next to the source is the one compiled.
	must(t, os.WriteFile(filepath.Join(dir, "kinfer.h"), []byte("#error own header\n"), 0o644))
	if _, err := Build(dir, Options{}); err == nil || !strings.Contains(err.Error(), "own header") {
		t.Errorf("the plugin's own kinfer.h was not used: %v", err)
	}
}

func mustReadFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGoLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{{"1.22", "1.26", true}, {"1.26", "1.26", false}, {"1.26.1", "1.26", false}, {"1.26", "1.26.1", true}, {"", "1.26", true}, {"1.100", "1.26", false},
		// The go command's order (go/version): the language version
		// precedes its releases.
		{"1.26", "1.26.0", true}, {"1.26.0", "1.26", false}, {"1.26rc1", "1.26.0", true}} {
		if got := goLess(c.a, c.b); got != c.want {
			t.Errorf("goLess(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

// rawGoPlugin is a Go plugin written from ABI.md alone: it does not import
// github.com/kinfer/kinfer. Its loop captures the loop variable, whose
// meaning depends on the go line of its go.mod (per-iteration since 1.22).
const rawGoPlugin = `package main

var fs []func() int

//go:wasmexport kinfer_abi_version
func version() int32 {
	fs = fs[:0]
	for i := 0; i < 3; i++ {
		fs = append(fs, func() int { return i })
	}
	s := 0
	for _, f := range fs {
		s += f()
	}
	return int32(s - 2) // 1 under go >= 1.22, 7 under go 1.21
}

// The rest of a model's exports (ABI.md §3, §6.1), compiled, not called.
//
//go:wasmexport kinfer_describe
func describe() int64 { return 0 }

//go:wasmexport kinfer_alloc
func alloc(n int32) int32 { return 0 }

//go:wasmexport kinfer_free
func free(p, n int32) {}

//go:wasmexport kinfer_configure
func configure(p, n int32) int32 { return 0 }

//go:wasmexport kinfer_last_error
func lastError() int64 { return 0 }

//go:wasmexport kinfer_model_eval
func eval(b, theta, k, x, y, status int32) int32 { return 0 }

func main() {}
`

// A Go plugin whose module does not import github.com/kinfer/kinfer is
// built exactly as go build builds it (no overlay): its go.mod's go line
// (here 1.21, older than the SDK's) is kept, and the module's bytes are
// those of the README's hand recipe.
func TestGoPluginWithoutSDKBuildsAsGoBuild(t *testing.T) {
	if _, err := Toolchain(LangGo, Options{}); err != nil {
		t.Skip(err)
	}
	t.Setenv("GOPROXY", "off")
	dir := filepath.Join(t.TempDir(), "raw")
	must(t, os.Mkdir(dir, 0o755))
	gomod := "module example.com/raw\n\ngo 1.21\n"
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(rawGoPlugin), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte(cManifest), 0o644))
	r, err := Build(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.EmbeddedSDK || len(r.Notes) > 0 || strings.Contains(strings.Join(r.Command, " "), "-overlay") {
		t.Errorf("a plugin without the SDK got the overlay: %+v", r)
	}
	hand := filepath.Join(t.TempDir(), "hand.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-buildvcs=false", "-o", hand, ".")
	cmd.Dir, cmd.Env = dir, goEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hand build: %v\n%s", err, out)
	}
	if got := manifest.SHA256(mustReadFile(t, hand)); got != r.SHA256 {
		t.Errorf("kinfer build sha256 %s, the hand recipe's %s", r.SHA256, got)
	}
	if got := string(mustReadFile(t, filepath.Join(dir, "go.mod"))); got != gomod {
		t.Errorf("go.mod changed to\n%s", got)
	}
}

// Without a go.mod, a plugin that does not import the SDK gets a go.mod
// of its own through the overlay and nothing else: it is not said to use
// the SDK, a note says which go.mod it was built with, and its bytes are
// those of a hand build with that go.mod written.
func TestGoPluginWithoutSDKOrGoMod(t *testing.T) {
	if _, err := Toolchain(LangGo, Options{}); err != nil {
		t.Skip(err)
	}
	t.Setenv("GOPROXY", "off")
	dir := filepath.Join(t.TempDir(), "raw")
	must(t, os.Mkdir(dir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(rawGoPlugin), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte(cManifest), 0o644))
	r, err := Build(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.EmbeddedSDK || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "does not import the SDK: built as module "+tempModulePath) {
		t.Fatalf("embedded %v, notes %q", r.EmbeddedSDK, r.Notes)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); !os.IsNotExist(err) {
		t.Fatalf("the build wrote a go.mod into the plugin's folder (%v)", err)
	}
	gover, err := goVersion()
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+tempModulePath+"\n\ngo "+gover+"\n"), 0o644))
	hand := filepath.Join(t.TempDir(), "hand.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-buildvcs=false", "-o", hand, ".")
	cmd.Dir, cmd.Env = dir, goEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hand build: %v\n%s", err, out)
	}
	if got := manifest.SHA256(mustReadFile(t, hand)); got != r.SHA256 {
		t.Errorf("kinfer build sha256 %s, a hand build with the note's go.mod %s", r.SHA256, got)
	}
}

// A Go plugin inside a go.work workspace that does not use its module
// (audit 8: kinfer new then kinfer build under any workspace failed with
// "current directory outside modules listed in go.work"): built with
// GOWORK=off, the same bytes as outside any workspace, and a note says so.
// A workspace that uses the plugin's module decides its build.
func TestGoPluginInForeignWorkspace(t *testing.T) {
	if _, err := Toolchain(LangGo, Options{}); err != nil {
		t.Skip(err)
	}
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "")
	plain, err := Build(goPluginDir(t, ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, gomod := range []string{"", "module kinfer.local/plugin\n\ngo 1.26\n"} {
		dir := goPluginDir(t, gomod)
		root := filepath.Dir(dir)
		must(t, os.MkdirAll(filepath.Join(root, "other"), 0o755))
		must(t, os.WriteFile(filepath.Join(root, "other", "go.mod"), []byte("module other\n\ngo 1.26\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.26\n\nuse ./other\n"), 0o644))
		r, err := Build(dir, Options{})
		if err != nil {
			t.Fatalf("go.mod %q: %v", gomod, err)
		}
		if r.SHA256 != plain.SHA256 {
			t.Errorf("go.mod %q: sha256 %s, want %s as outside a workspace", gomod, r.SHA256, plain.SHA256)
		}
		if !strings.Contains(strings.Join(r.Notes, "\n"), "which does not use its module: built with GOWORK=off") {
			t.Errorf("go.mod %q: notes %q", gomod, r.Notes)
		}
		if gomod == "" {
			continue
		}
		// The workspace uses the plugin: it decides (its module requires
		// no SDK, so the build fails as go build would).
		must(t, os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.26\n\nuse (\n\t./other\n\t./twice\n)\n"), 0o644))
		if _, err := Build(dir, Options{}); err == nil || strings.Contains(err.Error(), "GOWORK=off") {
			t.Errorf("a workspace using the plugin was not obeyed: %v", err)
		}
	}
}

// A named pipe among a plugin's sources is refused before anything reads
// it (audit 14: the build hung with no message, kinfer itself reading a
// .go pipe).
func TestSourceNamedPipeRefused(t *testing.T) {
	for _, name := range []string{"x.go", "x.c"} {
		dir := goPluginDir(t, "")
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
			t.Skip(err)
		}
		done := make(chan error, 1)
		go func() { _, err := Build(dir, Options{}); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "is a named pipe (FIFO), not a regular file") {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: the build hangs on a named pipe", name)
		}
	}
}
