package build

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kinfer/kinfer/host/manifest"
)

// pluginDirs are the directories holding committed plugins, relative to this
// package.
var pluginDirs = []string{"../../plugins", "../testdata/plugins"}

// TestCommittedModulesMatchSources rebuilds every committed plugin and
// fails if its .wasm is not byte-identical to a build of its sources (or
// its plugin.toml pins another digest). It skips a plugin only when the
// local toolchain differs from the one its plugin.toml records, or when the
// compiler is absent. After editing a plugin, or anything it compiles in
// (abi/, sdk/, the builtin package it serves), run `kinfer build DIR` and
// commit the module and plugin.toml.
func TestCommittedModulesMatchSources(t *testing.T) {
	var manifests []string
	for _, root := range pluginDirs {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() == "plugin.toml" {
				manifests = append(manifests, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(manifests) < 5 {
		t.Fatalf("found %d plugins under %v, want at least 5: %v", len(manifests), pluginDirs, manifests)
	}
	for _, mp := range manifests {
		dir := filepath.Dir(mp)
		name := strings.Replace(strings.TrimPrefix(filepath.ToSlash(dir), "../../"), "../testdata/", "host/testdata/", 1)
		t.Run(name, func(t *testing.T) {
			r, err := Check(dir, Options{})
			if errors.Is(err, ErrNoToolchain) {
				t.Skipf("cannot rebuild %s: %v", name, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Recorded == "" {
				t.Fatalf("%s records no [build] toolchain; run `kinfer build %s`", mp, name)
			}
			if r.Pinned != r.Committed {
				t.Errorf("%s pins sha256 %s but the committed module has %s; run `kinfer build %s`", mp, r.Pinned, r.Committed, name)
			}
			if r.ToolchainDiffers {
				t.Skipf("%s was built with %q; this machine has %q, so the bytes cannot be compared", name, r.Recorded, r.Toolchain)
			}
			if !r.Match {
				t.Errorf("the committed module of %s (sha256 %s) does not match a rebuild from its sources (sha256 %s, %s);\n"+
					"its sources or something they compile in changed: run `kinfer build %s` and commit the module and plugin.toml",
					name, r.Committed, r.SHA256, strings.Join(r.Command, " "), name)
			}
		})
	}
}

const cPlugin = `#define KINFER_MODEL
#include "kinfer.h"
const char kinfer_spec[] = "{\"kind\":\"model\",\"name\":\"twice\",\"params\":[{\"name\":\"a\",\"lower\":0,\"upper\":1,\"default\":0}],\"conditions\":[{\"name\":\"x\"}],\"outputs\":[{\"name\":\"y\"}]}";
int model_eval(const double *theta, int K, const double *x, double *y) {
  for (int i = 0; i < K; i++) y[i] = 2 * theta[0] * x[i];
  return KINFER_OK;
}
`

const cManifest = `# a comment that must survive
name = "twice"   # trailing comment
version = "0.1.0"
kind = "model"
abi = 1
wasm = "twice.wasm"

[limits]
memory_mib = 8 # small
`

// TestBuildCPluginTwice builds a C plugin in a temporary directory twice:
// the bytes are identical, plugin.toml gets the pin and the toolchain with
// its comments kept, and Check agrees.
func TestBuildCPluginTwice(t *testing.T) {
	if _, err := Toolchain(LangC, Options{}); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "twice.c"), []byte(cPlugin), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte(cManifest), 0o644))
	sdk, _ := filepath.Abs("../../sdk/c")
	opts := Options{Include: []string{sdk}}
	r1, err := Build(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := os.ReadFile(r1.Wasm)
	r2, err := Build(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := os.ReadFile(r2.Wasm)
	if r1.SHA256 != r2.SHA256 || string(b1) != string(b2) {
		t.Fatalf("two builds differ: %s vs %s", r1.SHA256, r2.SHA256)
	}
	text, _ := os.ReadFile(filepath.Join(dir, "plugin.toml"))
	for _, want := range []string{"# a comment that must survive\n", `name = "twice"   # trailing comment`, "memory_mib = 8 # small",
		`sha256 = "` + r1.SHA256 + `"`, "[build]\nlang = \"c\"\ntoolchain = " + tomlString(r1.Toolchain)} {
		if !strings.Contains(string(text), want) {
			t.Errorf("plugin.toml lacks %q:\n%s", want, text)
		}
	}
	m, err := manifest.Load(filepath.Join(dir, "plugin.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ReadWasm(); err != nil {
		t.Fatal(err)
	}
	c, err := Check(dir, opts)
	if err != nil || !c.Match || c.ToolchainDiffers {
		t.Fatalf("Check after Build: %+v, %v", c, err)
	}
	mod, err := Inspect(b1)
	if err != nil {
		t.Fatal(err)
	}
	if !mod.Memory || !strings.Contains(strings.Join(mod.Exports, " "), "kinfer_model_eval") {
		t.Fatalf("module: %+v", mod)
	}
	// A module recorded with another toolchain is not compared.
	must(t, UpdateManifest(filepath.Join(dir, "plugin.toml"), r1.SHA256, LangC, "clang 0.0"))
	if c, err := Check(dir, opts); err != nil || !c.ToolchainDiffers || c.Match || c.Recorded != "clang 0.0" {
		t.Fatalf("Check with another recorded toolchain: %+v, %v", c, err)
	}
	must(t, UpdateManifest(filepath.Join(dir, "plugin.toml"), r1.SHA256, LangC, r1.Toolchain))
	// A changed source no longer matches the committed module.
	must(t, os.WriteFile(filepath.Join(dir, "twice.c"), []byte(strings.Replace(cPlugin, "2 *", "3 *", 1)), 0o644))
	if c, err := Check(dir, opts); err != nil || c.Match {
		t.Fatalf("Check after a source change: match=%v err=%v", c.Match, err)
	}
}

func TestEditManifest(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	cases := []struct{ name, in, want string }{
		{"insert all", "name = \"p\"\nwasm = \"p.wasm\"\n\n[limits]\nmemory_mib = 8\n",
			"name = \"p\"\nwasm = \"p.wasm\"\nsha256 = \"" + sum + "\"\n\n[limits]\nmemory_mib = 8\n\n[build]\nlang = \"go\"\ntoolchain = \"go1.2\"\n"},
		{"replace, keep comments", "# top\nwasm = 'p.wasm'\nsha256 = \"00\"  # pin\n[build] # how\nlang = \"go\" # lang\ntoolchain = \"old\" # tc\n[limits]\n",
			"# top\nwasm = 'p.wasm'\nsha256 = \"" + sum + "\"  # pin\n[build] # how\nlang = \"go\" # lang\ntoolchain = \"go1.2\" # tc\n[limits]\n"},
		{"build table without toolchain", "wasm = \"p.wasm\"\nsha256 = \"\"\n[build]\nlang = \"go\"\n[limits]\ntimeout_ms = 5\n",
			"wasm = \"p.wasm\"\nsha256 = \"" + sum + "\"\n[build]\nlang = \"go\"\ntoolchain = \"go1.2\"\n[limits]\ntimeout_ms = 5\n"},
		{"empty build table", "wasm = \"p.wasm\"\n[build]\n",
			"wasm = \"p.wasm\"\nsha256 = \"" + sum + "\"\n[build]\nlang = \"go\"\ntoolchain = \"go1.2\"\n"},
		{"crlf", "wasm = \"p.wasm\"\r\n[build]\r\ntoolchain = \"x\"\r\n",
			"wasm = \"p.wasm\"\r\nsha256 = \"" + sum + "\"\r\n[build]\r\nlang = \"go\"\r\ntoolchain = \"go1.2\"\r\n"},
	}
	for _, c := range cases {
		got, err := editManifest(c.in, sum, "go", "go1.2")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
	if _, err := editManifest("wasm = \"p.wasm\"\nbuild.toolchain = \"x\"\n", sum, "go", "go1.2"); err == nil {
		t.Error("a dotted build.toolchain key was edited silently")
	}
	if got := tomlString(`a"b\c`); got != `"a\"b\\c"` {
		t.Errorf("tomlString: %s", got)
	}
}

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	if _, err := Detect(dir); err == nil {
		t.Error("empty directory detected as a plugin")
	}
	must(t, os.WriteFile(filepath.Join(dir, "x_test.go"), []byte("package main\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "m.c"), []byte(""), 0o644))
	if lang, err := Detect(dir); lang != LangC || err != nil {
		t.Errorf("C: %q %v", lang, err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o644))
	if _, err := Detect(dir); err == nil {
		t.Error("Go and C sources accepted together")
	}
	must(t, os.Remove(filepath.Join(dir, "m.c")))
	if lang, err := Detect(dir); lang != LangGo || err != nil {
		t.Errorf("Go: %q %v", lang, err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package lib\n"), 0o644))
	if _, err := Detect(dir); err == nil || !strings.Contains(err.Error(), "package main") {
		t.Errorf("non-main Go package: %v", err)
	}
}

func TestInspectRejectsGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("\x00asm\x02\x00\x00\x00"), []byte("\x00asm\x01\x00\x00\x00\x07\x05\x01")} {
		if _, err := Inspect(b); err == nil {
			t.Errorf("Inspect(%q) accepted", b)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// CI installs the AssemblyScript compiler this package pins.
func TestCIInstallsPinnedAsc(t *testing.T) {
	b, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "ASC_VERSION="+AscVersion+"\n") {
		t.Errorf(".ci/run does not install assemblyscript@%s (AscVersion)", AscVersion)
	}
	if !strings.Contains(AscInstall(), "assemblyscript@"+AscVersion) {
		t.Errorf("AscInstall() = %q", AscInstall())
	}
}

// Detect tells the four languages apart and refuses a mixed folder.
func TestDetectLanguages(t *testing.T) {
	for _, c := range []struct {
		files []string
		want  string
	}{
		{[]string{"main.go"}, LangGo},
		{[]string{"p.c"}, LangC},
		{[]string{"lib.rs"}, LangRust},
		{[]string{"src/lib.rs", "Cargo.toml"}, LangRust},
		{[]string{"p.ts", "types.d.ts"}, LangAS},
		{[]string{"types.d.ts"}, ""},
		{[]string{"lib.rs", "p.ts"}, ""},
		{[]string{"p.c", "lib.rs"}, ""},
	} {
		dir := t.TempDir()
		for _, f := range c.files {
			p := filepath.Join(dir, f)
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, []byte("package main\n"), 0o644))
		}
		got, err := Detect(dir)
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("%v: Detect = %q, %v; want %q", c.files, got, err, c.want)
		}
	}
}

// A missing Rust or AssemblyScript compiler is an ErrNoToolchain error
// that names the install command.
func TestMissingToolchainNamesInstall(t *testing.T) {
	_, err := Toolchain(LangRust, Options{Rustc: "/nonexistent/rustc"})
	if !errors.Is(err, ErrNoToolchain) || !strings.Contains(err.Error(), "apt-get install rustc libstd-rust-dev-wasm32") {
		t.Errorf("rust: %v", err)
	}
	_, err = Toolchain(LangAS, Options{Asc: "/nonexistent/asc"})
	if !errors.Is(err, ErrNoToolchain) || !strings.Contains(err.Error(), "npm install --prefix") || !strings.Contains(err.Error(), "assemblyscript@"+AscVersion) {
		t.Errorf("assemblyscript: %v", err)
	}
}

// A plugin's Rust crate name never collides with the SDK's crate or one of
// Rust's own (a plugin named kinfer failed with E0519; audit 4).
func TestCrateName(t *testing.T) {
	for name, want := range map[string]string{"my-model": "my_model", "kinfer": "plugin_kinfer", "core": "plugin_core", "7up": "plugin_7up", "kinfer-x": "kinfer_x"} {
		if got := crateName(name); got != want {
			t.Errorf("crateName(%q) = %q, want %q", name, got, want)
		}
	}
}

// langVersion: a go line's language version (go 1.26 and 1.26.0 are one).
func TestLangVersion(t *testing.T) {
	for v, want := range map[string]string{"1.26": "1.26", "1.26.0": "1.26", "1.26rc1": "1.26", "1.22.3": "1.22", "": ""} {
		if got := langVersion(v); got != want {
			t.Errorf("langVersion(%q) = %q, want %q", v, got, want)
		}
	}
}

// A folder's own path is not a pattern: "p[12]" holds its own C source and
// its sibling "p1" another; "b[x" holds one (audit 18: the sibling's
// sources were compiled, or "syntax error in pattern").
func TestDetectFolderNamedLikeAPattern(t *testing.T) {
	root := t.TempDir()
	for name, src := range map[string]string{"p[12]": "own.c", "p1": "evil.c", "b[x": "own.c", "z[9]": "a.c"} {
		must(t, os.MkdirAll(filepath.Join(root, name), 0o755))
		must(t, os.WriteFile(filepath.Join(root, name, src), []byte("int x;\n"), 0o644))
	}
	for _, name := range []string{"p[12]", "b[x", "z[9]"} {
		if lang, err := Detect(filepath.Join(root, name)); lang != LangC || err != nil {
			t.Errorf("%s: %q %v", name, lang, err)
		}
	}
	got, err := globIn(filepath.Join(root, "p[12]"), "*.c")
	if err != nil || len(got) != 1 || filepath.Base(got[0]) != "own.c" {
		t.Errorf("globIn p[12]: %v %v", got, err)
	}
	// A pattern naming a subfolder (src/*.rs; review 19: matched nothing).
	must(t, os.MkdirAll(filepath.Join(root, "p[12]", "src"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "p[12]", "src", "lib.rs"), nil, 0o644))
	if got, err := globIn(filepath.Join(root, "p[12]"), "src/*.rs"); err != nil || len(got) != 1 || got[0] != filepath.Join(root, "p[12]", "src", "lib.rs") {
		t.Errorf("globIn src/*.rs: %v %v", got, err)
	}
}

// A named pipe anywhere in a plugin's folder, a C header in a subfolder
// too, is refused before any compiler reads it (audit 20: the build
// hung); its name is shown escaped.
func TestSpecialFileInSubfolderRefused(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "a.c"), []byte("int x;\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "inc"), 0o755))
	if err := syscall.Mkfifo(filepath.Join(dir, "inc", "x\n.h"), 0o644); err != nil {
		t.Skip("no FIFOs:", err)
	}
	err := noOptionNames(dir)
	if err == nil || !strings.Contains(err.Error(), `inc/x\n.h is a named pipe`) {
		t.Fatalf("%v", err)
	}
}
