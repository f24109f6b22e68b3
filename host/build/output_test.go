package build

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kinfer/kinfer/host/manifest"
)

// A module path that names one of the build's inputs (a slip: the
// source's name instead of the module's, or the manifest itself) is
// refused before anything is compiled, and the file is left as it was;
// so is an existing file that is not a WebAssembly module. (Before the
// fix, kinfer build replaced the C source, main.go or plugin.toml with the
// compiled module and said it succeeded: audit round 3, hostile #4.)
func TestBuildRefusesToReplaceInputs(t *testing.T) {
	const cSrc = "/* the user's source */\nint x;\n"
	const goSrc = "package main\n\nfunc main() {}\n"
	for _, c := range []struct {
		name   string
		files  map[string]string // besides plugin.toml
		wasm   string
		want   string
		victim string // the file that must be unchanged ("" = plugin.toml)
	}{
		{"C source", map[string]string{"spring.c": cSrc}, "spring.c", "input of the build", "spring.c"},
		{"C header", map[string]string{"spring.c": cSrc, "spring.h": "#define N 1\n"}, "spring.h", "input of the build", "spring.h"},
		{"Go source", map[string]string{"main.go": goSrc}, "main.go", "input of the build", "main.go"},
		{"go.mod", map[string]string{"main.go": goSrc, "go.mod": "module x\n"}, "go.mod", "input of the build", "go.mod"},
		{"manifest", map[string]string{"spring.c": cSrc}, "plugin.toml", "input of the build", ""},
		{"manifest, other case", map[string]string{"spring.c": cSrc}, "Plugin.TOML", "input of the build", ""},
		{"Rust source", map[string]string{"lib.rs": "// rust\n"}, "lib.rs", "input of the build", "lib.rs"},
		{"Cargo.toml", map[string]string{"src/lib.rs": "// rust\n", "Cargo.toml": "[package]\n"}, "Cargo.toml", "input of the build", "Cargo.toml"},
		{"AssemblyScript source", map[string]string{"m.ts": "// ts\n"}, "m.ts", "input of the build", "m.ts"},
		{"a text file", map[string]string{"spring.c": cSrc, "notes.wasm": "my notes\n"}, "notes.wasm", "is not a WebAssembly module", "notes.wasm"},
		{"a folder", map[string]string{"spring.c": cSrc, "out.wasm/keep": "x"}, "out.wasm", "is a folder", "out.wasm/keep"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for f, text := range c.files {
				p := filepath.Join(dir, filepath.FromSlash(f))
				must(t, os.MkdirAll(filepath.Dir(p), 0o755))
				must(t, os.WriteFile(p, []byte(text), 0o644))
			}
			manifest := strings.Replace(cManifest, `wasm = "twice.wasm"`, `wasm = "`+c.wasm+`"`, 1)
			must(t, os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte(manifest), 0o644))
			victim := "plugin.toml"
			if c.victim != "" {
				victim = c.victim
			}
			before := string(mustReadFile(t, filepath.Join(dir, victim)))
			_, err := Build(dir, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "plugin.toml") {
				t.Errorf("wasm = %q: error %v, want one with %q naming plugin.toml", c.wasm, err, c.want)
			}
			if after := string(mustReadFile(t, filepath.Join(dir, victim))); after != before {
				t.Errorf("wasm = %q: %s was changed", c.wasm, victim)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(m) > 0 {
				t.Errorf("wasm = %q: left %v", c.wasm, m)
			}
		})
	}
}

// What checkOutput lets a build replace: nothing, an empty file, a
// previous module, a symbolic link (replaced, not written through).
func TestCheckOutputAllowsModules(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "old.wasm"), []byte("\x00asm\x01\x00\x00\x00"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "empty.wasm"), nil, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "src.txt"), []byte("text"), 0o644))
	must(t, os.Symlink("src.txt", filepath.Join(dir, "link.wasm")))
	for _, f := range []string{"new.wasm", "old.wasm", "empty.wasm", "link.wasm", "module"} {
		m := manifestIn(dir, f)
		if err := checkOutput(m, m.WasmPath()); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range []string{"src.txt", "x.go", "X.C", "go.sum", "package.json"} {
		m := manifestIn(dir, f)
		if err := checkOutput(m, m.WasmPath()); err == nil {
			t.Errorf("%s accepted as the module path", f)
		}
	}
}

func manifestIn(dir, wasm string) *manifest.Manifest {
	return &manifest.Manifest{Name: "twice", Wasm: wasm, Path: filepath.Join(dir, "plugin.toml"), Dir: dir}
}

// A module whose folder is a symbolic link leading out of the plugin's
// folder is refused before anything is compiled, and the module outside
// is left as it was (audit 8: the build replaced it, then the host
// refused the manifest it had pinned).
func TestBuildRefusesFolderLinkOut(t *testing.T) {
	root := t.TempDir()
	dir, outside := filepath.Join(root, "plugin"), filepath.Join(root, "outside")
	must(t, os.MkdirAll(dir, 0o755))
	must(t, os.MkdirAll(outside, 0o755))
	victim := filepath.Join(outside, "v.wasm")
	must(t, os.WriteFile(victim, []byte("\x00asm\x01\x00\x00\x00"), 0o644))
	must(t, os.Symlink("../outside", filepath.Join(dir, "sub")))
	must(t, os.WriteFile(filepath.Join(dir, "twice.c"), []byte("int x;\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte(strings.Replace(cManifest, `wasm = "twice.wasm"`, `wasm = "sub/v.wasm"`, 1)), 0o644))
	_, err := Build(dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "through a symbolic link") || !strings.Contains(err.Error(), "only inside the plugin's folder") {
		t.Errorf("error %v", err)
	}
	if b := mustReadFile(t, victim); string(b) != "\x00asm\x01\x00\x00\x00" {
		t.Error("the module outside the plugin's folder was replaced")
	}
}

// A source file named like an option is refused before any compiler runs
// (audit 8: "-Bz.c" made clang run a program shipped in the folder), and
// one named like a response file (audit 21: "@@x.c" made clang read "-Bz"
// from the file "@x.c").
func TestBuildRefusesOptionNames(t *testing.T) {
	for _, f := range []string{"-Bz.c", "--config=cfg.ts", "@@x.c", "@opts.ts"} {
		dir := t.TempDir()
		must(t, os.WriteFile(filepath.Join(dir, "twice.c"), []byte("int x;\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, f), []byte("int y;\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte(cManifest), 0o644))
		if _, err := Build(dir, Options{}); err == nil || !strings.Contains(err.Error(), "would be read by the compiler as an option") {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// An asc shipped in the plugin's folder (node_modules/.bin/asc) is never
// the compiler kinfer build runs (audit 21: it ran, outside the sandbox).
func TestAscNotFromThePluginsFolder(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "node_modules", ".bin")
	must(t, os.MkdirAll(bin, 0o755))
	must(t, os.WriteFile(filepath.Join(bin, "asc"), []byte("#!/bin/sh\ntouch \"$0.ran\"\n"), 0o755))
	t.Setenv("KINFER_ASC", "")
	t.Setenv("PATH", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	p, err := findAsc(filepath.Join(dir, "sub"), Options{})
	if err == nil || strings.HasPrefix(p, dir) {
		t.Errorf("findAsc = %q, %v: want no compiler (none on PATH or in the cache)", p, err)
	}
	if p, err = findAsc(dir, Options{}); err == nil || strings.HasPrefix(p, dir) {
		t.Errorf("findAsc = %q, %v", p, err)
	}
}

// A compiler's output is kept at both ends, the middle counted: 500 000
// warnings took kinfer to 1.15 GB (audit 21).
func TestCompilerOutputBounded(t *testing.T) {
	var h headTail
	line := []byte(strings.Repeat("w", 99) + "\n")
	for range 20000 { // 2 MB
		h.Write(line)
	}
	s := h.String()
	if len(s) > 2*outputKept+100 || !strings.Contains(s, "[… 1868928 bytes of compiler output left out …]") {
		t.Errorf("kept %d bytes: %q…", len(s), s[outputKept-10:outputKept+60])
	}
	var small headTail
	small.Write([]byte("one\n"))
	if small.String() != "one\n" {
		t.Errorf("short output %q", small.String())
	}
}

// A compiler that never returns is stopped at the build's time limit, and
// named (audit 21: a source including a named pipe hung the build).
func TestBuildTimeLimit(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "twice.c"), []byte("int x;\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte(cManifest), 0o644))
	slow := filepath.Join(t.TempDir(), "clang")
	// Answers the toolchain checks at once (a sysroot file: itself), then
	// sleeps in the compile.
	must(t, os.WriteFile(slow, []byte("#!/bin/sh\ncase \"$1 $2\" in --version*) echo 'clang version 14.0.6'; exit 0;; *-print-*) echo \"$0\"; exit 0;; esac\nexec sleep 60\n"), 0o755))
	start := time.Now()
	_, err := Build(dir, Options{Clang: slow, Timeout: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "took longer than its time limit") || !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("stopped after %v", el)
	}
}

// The carried kinfer.h is written, and said to be used, only for a plugin
// whose sources include it (audit 21: a plugin written against the ABI
// alone, naming kinfer.h in a comment, was told it used it).
func TestHeaderOnlyWhenIncluded(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "m.c"), []byte("// written without kinfer.h\nint x;\n"), 0o644))
	if includesHeader(dir) {
		t.Error("a source that does not include kinfer.h is said to")
	}
	must(t, os.WriteFile(filepath.Join(dir, "m.c"), []byte("#define KINFER_MODEL\n  #  include <kinfer.h>\nint x;\n"), 0o644))
	if !includesHeader(dir) || !needsHeader(dir, Options{}) {
		t.Error("a source including kinfer.h is not said to, or gets no header")
	}
}

// An asconfig.json in an AssemblyScript plugin's folder is never read: its
// "transform" loads JavaScript that node runs with the user's rights
// (hostile 22: it ran `id` and reported a successful build).
func TestAscConfigOfTheFolderNotRead(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"ligament.ts", "plugin.toml"} {
		b := mustReadFile(t, filepath.Join("..", "..", "plugins", "assemblyscript", "ligament", f))
		must(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	marker := filepath.Join(dir, "transform-ran")
	must(t, os.WriteFile(filepath.Join(dir, "evil.js"), []byte("require('fs').writeFileSync("+strconv.Quote(marker)+", 'x');\nmodule.exports = class {};\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "asconfig.json"), []byte(`{"options": {"transform": ["./evil.js"]}}`), 0o644))
	_, err := Build(dir, Options{})
	if errors.Is(err, ErrNoToolchain) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the folder's asconfig.json transform ran")
	}
}

// A module over the size the host loads is refused before it is read, and
// neither it nor its sha256 is left behind (hostile 22: 1.5 GiB were read,
// pinned in plugin.toml, then refused by the load check).
func TestBuildModuleOverSizeRefused(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "twice.c"), []byte("int x;\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte(cManifest), 0o644))
	big := filepath.Join(t.TempDir(), "clang")
	// Answers the version check, then writes a sparse module of 300 MiB.
	must(t, os.WriteFile(big, []byte("#!/bin/sh\ncase \"$1 $2\" in --version*) echo 'clang version 14.0.6'; exit 0;; *-print-*) echo \"$0\"; exit 0;; esac\n"+
		"while [ $# -gt 0 ]; do if [ \"$1\" = -o ]; then out=$2; fi; shift; done\nprintf '\\000asm\\001\\000\\000\\000' > \"$out\"; truncate -s 300M \"$out\"\n"), 0o755))
	_, err := Build(dir, Options{Clang: big})
	if err == nil || !strings.Contains(err.Error(), "the module the compiler wrote") {
		t.Fatalf("err = %v", err)
	}
	if b := mustReadFile(t, filepath.Join(dir, "plugin.toml")); strings.Contains(string(b), "sha256") {
		t.Errorf("plugin.toml pinned the refused module:\n%s", b)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.wasm*")); len(m) > 0 {
		t.Errorf("left behind: %v", m)
	}
}

// abort("message") compiles against the AssemblyScript SDK, as
// AssemblyScript's own abort does: the SDK's handler takes the same
// optional arguments (author 22: "Expected 4 arguments").
func TestAscAbortWithMessageCompiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"ligament.ts", "plugin.toml"} {
		b := mustReadFile(t, filepath.Join("..", "..", "plugins", "assemblyscript", "ligament", f))
		must(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	must(t, os.WriteFile(filepath.Join(dir, "fail.ts"), []byte("export function failWith(x: f64): f64 {\n  if (x > 1e300) abort(\"too large\");\n  return x;\n}\n"), 0o644))
	_, err := Build(dir, Options{})
	if errors.Is(err, ErrNoToolchain) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
}
