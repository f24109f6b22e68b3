package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kinfer/kinfer/host/manifest"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/internal/filemode"
	"github.com/kinfer/kinfer/internal/guesttext"
)

// Languages a plugin directory may be written in.
const (
	LangGo   = "go"
	LangC    = "c"
	LangRust = "rust"
	LangAS   = "assemblyscript"
)

// Langs are the languages `kinfer build` compiles, in the order errors
// list them.
var Langs = []string{LangGo, LangC, LangRust, LangAS}

// ErrNoToolchain is wrapped by errors that say the compiler a plugin needs
// (go, or clang with the wasm32-wasi target and wasi-libc) is not installed.
var ErrNoToolchain = errors.New("toolchain not available")

// Options tune a build. The zero value is the default.
type Options struct {
	// Go and Clang are the compiler commands; default "go" and "clang".
	Go, Clang string
	// Rustc is the Rust compiler (default: $KINFER_RUSTC, else the first
	// of rustc on PATH and /usr/bin/rustc that has the wasm32 standard
	// library); Asc the AssemblyScript compiler (default: see findAsc).
	Rustc, Asc string
	// Include are extra C include directories, searched before the kinfer.h
	// found by walking up from the plugin directory.
	Include []string
	// Timeout bounds the whole build (0: DefaultTimeout): a source that
	// includes a named pipe, or a compiler that never returns, would
	// otherwise hold it forever (audit 21).
	Timeout time.Duration
}

// DefaultTimeout is the default Options.Timeout: ample for a first Go
// build that downloads its modules.
const DefaultTimeout = 15 * time.Minute

// ErrTimeout is the cause of a build stopped by Options.Timeout.
var ErrTimeout = errors.New("the build took longer than its time limit (kinfer build --timeout)")

func (o Options) goCmd() string {
	if o.Go != "" {
		return o.Go
	}
	return "go"
}

func (o Options) clangCmd() string {
	if o.Clang != "" {
		return o.Clang
	}
	return "clang"
}

// Result describes one build.
type Result struct {
	Manifest  string   // the plugin.toml
	Lang      string   // LangGo, LangC, LangRust or LangAS
	Toolchain string   // as recorded in plugin.toml
	Wasm      string   // the module written
	SHA256    string   // its digest
	Size      int      // its size in bytes
	Command   []string // the compiler command line (run in the plugin directory)
	// EmbeddedSDK is set when the build used the guest SDK carried in the
	// kinfer binary (the plugin's folder has no kinfer.h / no go.mod that
	// provides github.com/kinfer/kinfer).
	EmbeddedSDK bool
	// Notes are what the build changed that the user must know, e.g. a
	// Go module's go line raised for the SDK (in the overlay only).
	Notes []string
}

// Build compiles the plugin in dir (which holds plugin.toml) into the wasm
// file the manifest names and writes the module's sha256 and the toolchain
// into plugin.toml.
func Build(dir string, opts Options) (Result, error) {
	return BuildContext(context.Background(), dir, opts)
}

// BuildContext is Build stopped by ctx: when ctx is done, the compiler in
// progress is killed with every process it started (its process group, on
// Unix), its temporary files are removed, and the module and plugin.toml
// are left as they were.
func BuildContext(ctx context.Context, dir string, opts Options) (_ Result, err error) {
	ctx, cancel := bounded(ctx, opts)
	defer cancel()
	defer interrupted(ctx, dir, &err)
	if err := noOptionNames(dir); err != nil {
		return Result{}, err
	}
	m, lang, err := load(dir)
	if err != nil {
		return Result{}, err
	}
	out := m.WasmPath()
	if fi, err := os.Stat(filepath.Dir(out)); err != nil || !fi.IsDir() {
		return Result{}, fmt.Errorf("%s: wasm = %q: the folder %s does not exist (kinfer build does not create it); create it or name a module in an existing folder", m.Path, m.Wasm, filepath.Dir(out))
	}
	// The module's folder, its links resolved, must be the plugin's or
	// inside it (ABI.md §9), as the host requires when it loads the
	// manifest: a folder link leading out made the build replace a module
	// outside, then the host refused the manifest it had pinned (audit 8).
	if _, err := safefile.Inside(m.Dir, filepath.Dir(filepath.FromSlash(m.Wasm))); err != nil {
		return Result{}, fmt.Errorf("%s: wasm = %q: %w; kinfer build writes the module only inside the plugin's folder", m.Path, m.Wasm, err)
	}
	if err := checkOutput(m, out); err != nil {
		return Result{}, err
	}
	tc, err := toolchainFor(ctx, lang, m.Dir, opts)
	if err != nil {
		return Result{}, err
	}
	// A temporary name of this process's: two builds of one folder at
	// once (make -j) shared out + ".tmp" and one renamed it from under
	// the other (audit 4).
	tmp := fmt.Sprintf("%s.%d.tmp", out, os.Getpid())
	res, err := compile(ctx, m, lang, tmp, opts)
	if err != nil {
		os.Remove(tmp)
		return Result{}, err
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return Result{}, err
	}
	res.Wasm, res.Toolchain = out, tc
	for i, a := range res.Command { // show the command as if it wrote out directly
		res.Command[i] = strings.ReplaceAll(a, tmp, out)
	}
	if err := UpdateManifest(m.Path, res.SHA256, lang, tc); err != nil {
		return res, err
	}
	return res, nil
}

// inputExts and inputNames are the files a plugin's build reads (its
// sources, its manifest, the files of its module or crate), compared in
// lower case: never the module a build writes.
var (
	inputExts  = map[string]bool{".go": true, ".c": true, ".h": true, ".rs": true, ".ts": true, ".toml": true, ".mod": true, ".sum": true}
	inputNames = map[string]bool{"plugin.toml": true, "go.mod": true, "go.sum": true, "go.work": true, "go.work.sum": true,
		"cargo.toml": true, "cargo.lock": true, "package.json": true, "package-lock.json": true, "asconfig.json": true, "tsconfig.json": true}
)

// checkOutput refuses a module path out (the manifest's wasm, resolved)
// whose replacement would destroy a file of the user's: one that is an
// input of the build (a slip such as wasm = "spring.c" or wasm =
// "plugin.toml"), or an existing file that is not a WebAssembly module (no
// \0asm magic). An empty file is replaced; so is a symbolic link (the
// build renames the module over the link, it never writes through it).
func checkOutput(m *manifest.Manifest, out string) error {
	base := strings.ToLower(filepath.Base(out))
	if inputNames[base] || inputExts[filepath.Ext(base)] {
		return fmt.Errorf("%s: wasm = %q names %s, which is an input of the build (the manifest, a source file or a module/crate file), not the module it writes; "+
			"name the module, e.g. wasm = %q", m.Path, m.Wasm, out, m.Name+".wasm")
	}
	fi, err := os.Lstat(out)
	switch {
	case err != nil || fi.Mode()&os.ModeSymlink != 0:
		return nil // nothing to keep (an unreadable path fails at the rename)
	case fi.IsDir():
		return fmt.Errorf("%s: wasm = %q: %s is a folder, not a module file", m.Path, m.Wasm, out)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s: wasm = %q: %s is not a regular file; kinfer build replaces only a WebAssembly module", m.Path, m.Wasm, out)
	case fi.Size() == 0:
		return nil
	}
	f, err := os.Open(out)
	if err != nil {
		return fmt.Errorf("%s: wasm = %q: %w", m.Path, m.Wasm, err)
	}
	defer f.Close()
	magic := make([]byte, 4)
	if n, _ := io.ReadFull(f, magic); n < 4 || string(magic) != "\x00asm" {
		return fmt.Errorf("%s: wasm = %q: %s exists and is not a WebAssembly module (it does not begin with \\0asm); "+
			"kinfer build replaces only a module: move the file away or name another module file", m.Path, m.Wasm, out)
	}
	return nil
}

// bounded is ctx limited to the build's time (Options.Timeout, else
// DefaultTimeout), with ErrTimeout as its cause; Build and Check both
// compile under it (review 22).
func bounded(ctx context.Context, opts Options) (context.Context, context.CancelFunc) {
	limit := opts.Timeout
	if limit <= 0 {
		limit = DefaultTimeout
	}
	return context.WithTimeoutCause(ctx, limit, fmt.Errorf("%w, %v", ErrTimeout, limit))
}

// interrupted replaces an error of a build that ctx stopped (a killed
// compiler's "signal: killed", a toolchain probe that "failed") by one that
// says so.
func interrupted(ctx context.Context, dir string, err *error) {
	if *err != nil && ctx.Err() != nil {
		*err = fmt.Errorf("build of %s stopped: %w; the compiler was stopped and its temporary files removed", dir, context.Cause(ctx))
	}
}

// CheckResult is the outcome of Check.
type CheckResult struct {
	Result
	// Recorded is the toolchain plugin.toml records ("" if none).
	Recorded string
	// ToolchainDiffers is set when the local toolchain is not the recorded
	// one; nothing was built and Match is false.
	ToolchainDiffers bool
	// Committed is the sha256 of the committed module, Pinned the one
	// plugin.toml pins ("" if none).
	Committed, Pinned string
	// Match reports that the rebuild is byte-identical to the committed
	// module.
	Match bool
}

// Check rebuilds the plugin in dir into a temporary directory and compares
// the result with the committed module; plugin.toml and the module are not
// touched. When the local toolchain differs from the one plugin.toml
// records, it returns with ToolchainDiffers set and builds nothing.
func Check(dir string, opts Options) (CheckResult, error) {
	return CheckContext(context.Background(), dir, opts)
}

// CheckContext is Check stopped by ctx (see BuildContext).
func CheckContext(ctx context.Context, dir string, opts Options) (_ CheckResult, err error) {
	ctx, cancel := bounded(ctx, opts)
	defer cancel()
	defer interrupted(ctx, dir, &err)
	var cr CheckResult
	if err := noOptionNames(dir); err != nil {
		return cr, err
	}
	m, lang, err := load(dir)
	if err != nil {
		return cr, err
	}
	cr.Manifest, cr.Lang, cr.Pinned = m.Path, lang, m.SHA256
	if m.Build != nil {
		cr.Recorded = m.Build.Toolchain
	}
	committed, err := os.ReadFile(m.WasmPath())
	if err != nil {
		return cr, fmt.Errorf("plugin %s: %w", m.Name, err)
	}
	cr.Committed = manifest.SHA256(committed)
	tc, err := toolchainFor(ctx, lang, m.Dir, opts)
	if err != nil {
		return cr, err
	}
	cr.Toolchain = tc
	if cr.Recorded != tc {
		cr.ToolchainDiffers = true
		return cr, nil
	}
	tmpDir, err := os.MkdirTemp("", "kinfer-build-")
	if err != nil {
		return cr, err
	}
	defer os.RemoveAll(tmpDir)
	res, err := compile(ctx, m, lang, filepath.Join(tmpDir, filepath.Base(m.WasmPath())), opts)
	if err != nil {
		return cr, err
	}
	res.Toolchain = tc
	cr.Result = res
	cr.Match = res.SHA256 == cr.Committed
	return cr, nil
}

// load reads dir/plugin.toml and detects the plugin's language.
func load(dir string) (*manifest.Manifest, string, error) {
	m, err := manifest.Load(filepath.Join(dir, "plugin.toml"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("%s has no plugin.toml: write one next to the sources (abi/ABI.md §9), or start from kinfer new model|likelihood|method NAME", dir)
	}
	if err != nil {
		return nil, "", err
	}
	lang, err := Detect(dir)
	if err != nil {
		return nil, "", fmt.Errorf("plugin %s: %w", m.Name, err)
	}
	if m.Build != nil && m.Build.Lang != "" && m.Build.Lang != lang {
		return nil, "", fmt.Errorf("%s: [build] lang = %q but %s holds a %s plugin (ported to %s? delete the [build] table: kinfer build writes it again)", m.Path, m.Build.Lang, dir, lang, lang)
	}
	return m, lang, nil
}

// noOptionNames refuses a plugin folder holding a source file whose name
// begins with "-" or "@": the C and AssemblyScript compilers are given the
// sources by name, and would read such a name as an option (audit 8: a
// file named "-Bz.c" made clang run a program shipped in the folder,
// outside the sandbox) or, with "@", as a response file of options, which
// LLVM expands before any "--" (audit 21: "@@x.c" made clang read "-Bz"
// from the file "@x.c").
func noOptionNames(dir string) error {
	for _, pat := range []string{"-*.c", "-*.ts", "-*.go", "-*.rs", "@*.c", "@*.ts", "@*.go", "@*.rs"} {
		m, _ := globIn(dir, pat)
		if len(m) > 0 {
			return fmt.Errorf("%s: a source file named %q: a name beginning with \"-\" or \"@\" would be read by the compiler as an option or a file of options; rename it", guesttext.Escape(dir), filepath.Base(m[0]))
		}
	}
	// Every file a compiler (or kinfer, to detect the language) may read
	// is a regular file: a named pipe among the sources hung the build
	// with no message (audit 14), also in a subfolder a Rust module or a
	// C header is read from (audit 20). The whole tree is checked (links
	// followed to what they name, folders not entered through links), up
	// to maxSourceEntries entries.
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: the compiler says so
		}
		if n++; n > maxSourceEntries {
			return fmt.Errorf("%s holds more than %d files and folders: not a plugin's sources", guesttext.Escape(dir), maxSourceEntries)
		}
		if d.IsDir() {
			return nil
		}
		st, err := os.Stat(path)
		if err != nil || st.Mode().IsRegular() || st.IsDir() {
			return nil
		}
		return fmt.Errorf("%s is %s, not a regular file: a plugin's folder may hold none (a compiler would wait on it, or read a device); remove it", guesttext.Escape(path), filemode.Kind(st.Mode()))
	})
	return err
}

// maxSourceEntries bounds the files and folders noOptionNames walks.
const maxSourceEntries = 100_000

// Detect says which language the plugin in dir is written in: Go
// (non-test .go files of package main), C (.c files), Rust (lib.rs or
// src/lib.rs) or AssemblyScript (.ts files). A folder with sources of more
// than one is refused.
func Detect(dir string) (string, error) {
	goFiles, err := globIn(dir, "*.go")
	if err != nil {
		return "", err
	}
	cFiles, err := globIn(dir, "*.c")
	if err != nil {
		return "", err
	}
	var mainFiles int
	for _, f := range goFiles {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		pf, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.PackageClauseOnly)
		if err != nil {
			return "", err
		}
		if pf.Name.Name != "main" {
			return "", fmt.Errorf("%s is package %s; a Go plugin is package main", f, pf.Name.Name)
		}
		mainFiles++
	}
	var found []string
	if mainFiles > 0 {
		found = append(found, LangGo)
	}
	if len(cFiles) > 0 {
		found = append(found, LangC)
	}
	if rustRoot(dir) != "" {
		found = append(found, LangRust)
	}
	if len(tsEntries(dir)) > 0 {
		found = append(found, LangAS)
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("%s holds no plugin sources: Go (package main *.go), C (*.c), Rust (lib.rs or src/lib.rs) or AssemblyScript (*.ts)", dir)
	}
	return "", fmt.Errorf("%s holds sources of %s; a plugin is written in one language", dir, strings.Join(found, " and "))
}

// Toolchain is the string recorded in plugin.toml for lang on this machine;
// an error wrapping ErrNoToolchain if the compiler is missing. For
// AssemblyScript it is the compiler findAsc finds (never one of a plugin's
// folder).
func Toolchain(lang string, opts Options) (string, error) {
	return toolchainFor(context.Background(), lang, "", opts)
}

func toolchainFor(ctx context.Context, lang, dir string, opts Options) (string, error) {
	switch lang {
	case LangRust:
		return rustToolchain(ctx, opts)
	case LangAS:
		if dir != "" {
			if abs, err := filepath.Abs(dir); err == nil {
				dir = abs
			}
		}
		return ascToolchain(ctx, dir, opts)
	case LangGo:
		out, err := run(ctx, "", goEnv(), opts.goCmd(), "env", "GOVERSION")
		if err != nil {
			return "", fmt.Errorf("%w: %s: %v (install Go 1.26 or later: https://go.dev/dl, or apt-get install golang-go where it is recent enough)", ErrNoToolchain, opts.goCmd(), err)
		}
		return strings.TrimSpace(out), nil
	case LangC:
		out, err := run(ctx, "", nil, opts.clangCmd(), "--version")
		if err != nil {
			return "", fmt.Errorf("%w: %s: %v (install it: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32)", ErrNoToolchain, opts.clangCmd(), err)
		}
		version := strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
		h := sha256.New()
		for _, arg := range []string{"-print-file-name=libc.a", "-print-file-name=crt1-reactor.o", "-print-libgcc-file-name"} {
			p, err := run(ctx, "", nil, opts.clangCmd(), "--target=wasm32-wasi", arg)
			p = strings.TrimSpace(p)
			if err != nil || !filepath.IsAbs(p) {
				return "", fmt.Errorf("%w: %s has no wasm32-wasi sysroot (%s gives %q; install wasi-libc and libclang-rt-dev-wasm32)",
					ErrNoToolchain, opts.clangCmd(), arg, p)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return "", fmt.Errorf("%w: %v", ErrNoToolchain, err)
			}
			h.Write(b)
		}
		tc := fmt.Sprintf("%s; wasi-sysroot %s", version, hex.EncodeToString(h.Sum(nil))[:12])
		// clang runs binaryen's wasm-opt over an optimised wasm link when
		// it finds one on PATH, which changes the module's bytes: recorded,
		// so that a module is compared only with builds of the same chain.
		if p, err := exec.LookPath("wasm-opt"); err == nil {
			v, _ := run(ctx, "", nil, p, "--version")
			tc += "; " + strings.TrimSpace(strings.SplitN(v, "\n", 2)[0])
		}
		return tc, nil
	}
	return "", fmt.Errorf("unknown plugin language %q", lang)
}

// goEnv is the environment of the Go compiler: the caller's, with every
// variable that could change the bytes of the output pinned.
func goEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "GOOS", "GOARCH", "GOFLAGS", "GOWASM", "GOEXPERIMENT", "CGO_ENABLED", "GOTOOLCHAIN", "GO111MODULE":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOFLAGS=", "GOWASM=", "GOEXPERIMENT=", "GOTOOLCHAIN=local", "GO111MODULE=on")
}

// compile builds the plugin into out and fills Lang, Wasm, SHA256, Size and
// Command.
func compile(ctx context.Context, m *manifest.Manifest, lang, out string, opts Options) (Result, error) {
	dir, err := filepath.Abs(m.Dir)
	if err != nil {
		return Result{}, err
	}
	if out, err = filepath.Abs(out); err != nil {
		return Result{}, err
	}
	tmp, err := os.MkdirTemp("", "kinfer-sdk-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(tmp)
	// The compilers' own temporary files (clang's objects, go's work
	// folder) go below tmp too: a compiler killed by an interrupted build
	// leaves them behind, and they go with tmp.
	work := filepath.Join(tmp, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		return Result{}, err
	}
	env := append(os.Environ(), "TMPDIR="+work)
	var cmd, notes []string
	embedded := false
	switch lang {
	case LangGo:
		env = append(goEnv(), "TMPDIR="+work, "GOTMPDIR="+work)
		overlay, note, sdk, workOff, err := goOverlay(ctx, dir, tmp, opts)
		if note != "" {
			notes = append(notes, note)
		}
		if err != nil {
			return Result{}, fmt.Errorf("plugin %s: %w", m.Name, err)
		}
		if workOff {
			env = append(env, "GOWORK=off")
		}
		cmd = []string{opts.goCmd(), "build", "-buildmode=c-shared", "-trimpath", "-buildvcs=false"}
		if overlay != "" {
			cmd = append(cmd, "-overlay="+overlay)
		}
		embedded = sdk
		cmd = append(cmd, "-o", out, ".")
	case LangC:
		srcs, _ := globIn(dir, "*.c")
		sort.Strings(srcs)
		cmd = []string{opts.clangCmd(), "--target=wasm32-wasi", "-O2", "-mexec-model=reactor", "-Wall"}
		for _, inc := range opts.Include {
			cmd = append(cmd, "-I", inc)
		}
		if needsHeader(dir, opts) {
			if err := writeHeader(tmp); err != nil {
				return Result{}, err
			}
			cmd = append(cmd, "-I", tmp, "-ffile-prefix-map="+tmp+"=sdk/c")
			embedded = includesHeader(dir)
		} else if sdk := findSDK(dir); sdk != "" {
			cmd = append(cmd, "-I", sdk, "-ffile-prefix-map="+sdk+"=sdk/c")
		}
		// The stack first, 1 MiB of it (as Rust's wasm32 target): by
		// default wasm-ld puts a 64 KiB stack above the data, so a deep
		// recursion or a large local array silently overwrote the
		// plugin's globals (audit 4); first, an overflow traps.
		cmd = append(cmd, "-ffile-prefix-map="+dir+"=.", "-Wl,--strip-debug", "-Wl,--stack-first", "-Wl,-z,stack-size=1048576", "-o", out)
		for _, s := range srcs {
			cmd = append(cmd, filepath.Base(s))
		}
	case LangRust:
		rc, _, err := findRustc(ctx, opts)
		if err != nil {
			return Result{}, err
		}
		sdk, emb, err := rustSDK(dir, tmp)
		if err != nil {
			return Result{}, err
		}
		embedded = emb
		rlib, cdylib := rustCommands(rc, m.Name, rustRoot(dir), dir, sdk, tmp, out)
		if msg, err := run(ctx, dir, env, rlib[0], rlib[1:]...); err != nil {
			return Result{}, fmt.Errorf("plugin %s: building the Rust SDK failed: %s: %v\n%s", m.Name, strings.Join(rlib, " "), err, msg)
		}
		cmd = cdylib
	case LangAS:
		asc, err := findAsc(dir, opts)
		if err != nil {
			return Result{}, err
		}
		path, emb, err := ascSDK(dir, tmp)
		if err != nil {
			return Result{}, err
		}
		embedded = emb
		// asc reads asconfig.json from its working directory (the
		// plugin's folder), whose "transform" loads JavaScript that node
		// runs with the user's rights (hostile 22): an empty config of
		// ours is named instead, so the folder's is never read.
		conf := filepath.Join(tmp, "asconfig.json")
		if err := os.WriteFile(conf, []byte("{}\n"), 0o644); err != nil {
			return Result{}, err
		}
		cmd = ascCommand(asc, tsEntries(dir), path, conf, out)
	default:
		return Result{}, fmt.Errorf("unknown plugin language %q", lang)
	}
	if msg, err := run(ctx, dir, env, cmd[0], cmd[1:]...); err != nil {
		return Result{}, fmt.Errorf("plugin %s: build failed: %s: %v\n%s", m.Name, strings.Join(cmd, " "), err, msg)
	}
	if _, err := os.Lstat(out); errors.Is(err, fs.ErrNotExist) {
		// Audit 21: "open …wasm.PID.tmp: no such file or directory".
		return Result{}, fmt.Errorf("plugin %s: the compiler exited 0 but wrote no module: %s", m.Name, strings.Join(cmd, " "))
	}
	// Within the size the host loads, checked before reading (hostile 22:
	// a module of 1.5 GiB was read whole, pinned in plugin.toml, then
	// refused by the load check).
	f, err := safefile.Open(out, manifest.MaxModuleBytes)
	if err != nil {
		return Result{}, fmt.Errorf("plugin %s: the module the compiler wrote: %w", m.Name, err)
	}
	b, err := safefile.ReadAll(safefile.Limit(f, out, manifest.MaxModuleBytes), nil, safefile.Size(f))
	f.Close()
	if err != nil {
		return Result{}, fmt.Errorf("plugin %s: the module the compiler wrote: %w", m.Name, err)
	}
	if err := checkModule(b, m.Kind); err != nil {
		return Result{}, fmt.Errorf("plugin %s: %s: %v", m.Name, out, err)
	}
	return Result{Manifest: m.Path, Lang: lang, Wasm: out, SHA256: manifest.SHA256(b), Size: len(b), Command: cmd, EmbeddedSDK: embedded, Notes: notes}, nil
}

// findSDK walks up from dir to the directory holding sdk/c/kinfer.h.
func findSDK(dir string) string {
	for d := dir; ; {
		p := filepath.Join(d, "sdk", "c")
		if _, err := os.Stat(filepath.Join(p, "kinfer.h")); err == nil {
			return p
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// run runs a command in dir and returns its combined output; env nil means
// the caller's environment. When ctx is done the command is killed with
// the processes it started (killTree), and the error says it was
// interrupted.
func run(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	if err := context.Cause(ctx); err != nil {
		return "", fmt.Errorf("interrupted: %w", err)
	}
	c := exec.CommandContext(ctx, name, args...)
	c.Dir, c.Env = dir, env
	killTree(c)
	// A process that outlives the kill and holds the output pipe open
	// must not keep Wait (and so kinfer) waiting.
	c.WaitDelay = 5 * time.Second
	// The output is kept in part: a 1.6 KB source whose macros expand to
	// 500 000 warnings took kinfer itself to 1.15 GB (audit 21).
	var buf headTail
	c.Stdout, c.Stderr = &buf, &buf
	err := c.Run()
	if err != nil && ctx.Err() != nil {
		return buf.String(), fmt.Errorf("interrupted (%s stopped): %w", filepath.Base(name), context.Cause(ctx))
	}
	return buf.String(), err
}

// outputKept is how much of a compiler's output headTail keeps, at each
// end.
const outputKept = 64 << 10

// headTail keeps the first and last outputKept bytes written to it and
// counts the rest. exec.Cmd writes to it from one goroutine at a time
// (Stdout and Stderr are the same writer).
type headTail struct {
	head, tail []byte
	dropped    int64
}

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	if k := min(outputKept-len(h.head), len(p)); k > 0 {
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	h.tail = append(h.tail, p...)
	if over := len(h.tail) - outputKept; over > 0 {
		h.dropped += int64(over)
		h.tail = append(h.tail[:0], h.tail[over:]...)
	}
	return n, nil
}

// String is the output kept, with a line saying how much was left out.
func (h *headTail) String() string {
	if h.dropped == 0 {
		return string(h.head) + string(h.tail)
	}
	return fmt.Sprintf("%s\n[… %d bytes of compiler output left out …]\n%s", h.head, h.dropped, h.tail)
}

// globIn is filepath.Glob of pattern in the folder dir, without reading
// dir's own path as a pattern: a plugin folder named p[12] was built from
// the sources of its sibling p1, and one named b[x failed with "syntax
// error in pattern" (audit 18). The names are sorted, as Glob's are.
func globIn(dir, pattern string) ([]string, error) {
	// A pattern of ours may name a subfolder (src/*.rs): its folder part
	// is a plain path.
	if sub, base := filepath.Split(pattern); sub != "" {
		dir, pattern = filepath.Join(dir, sub), base
	}
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil // Glob's answer for a folder that does not exist
		}
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if ok, _ := filepath.Match(pattern, e.Name()); ok {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}
