package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kinfer/kinfer"
)

// Rust and AssemblyScript plugins (see doc.go).

const (
	// RustTarget is the target Rust plugins are compiled for: the standard
	// library without WASI, so that a module imports nothing but kinfer_v1.
	RustTarget = "wasm32-unknown-unknown"
	// AscVersion is the AssemblyScript compiler kinfer's plugins are built
	// and tested with (npm package assemblyscript).
	AscVersion = "0.27.37"
)

// RustInstall and AscInstall are the commands an error about a missing
// toolchain names.
const (
	RustInstall = "apt-get install rustc libstd-rust-dev-wasm32 (Debian), or rustup target add " + RustTarget
)

// AscInstall is the command that installs the AssemblyScript compiler where
// kinfer build finds it without configuration.
func AscInstall() string {
	return "npm install --prefix " + ascCacheDirShown() + " assemblyscript@" + AscVersion + " (needs node and npm: apt-get install nodejs npm)"
}

// rustCandidates are the rustc commands tried in order: Options.Rustc,
// $KINFER_RUSTC, rustc on PATH, Debian's /usr/bin/rustc (a rustup rustc
// earlier on PATH often lacks the wasm32 standard library).
func rustCandidates(opts Options) []string {
	if opts.Rustc != "" {
		return []string{opts.Rustc}
	}
	if v := os.Getenv("KINFER_RUSTC"); v != "" {
		return []string{v}
	}
	return []string{"rustc", "/usr/bin/rustc"}
}

// rustc finds a rustc with the wasm32-unknown-unknown standard library and
// returns its command and that library's directory.
func findRustc(ctx context.Context, opts Options) (cmd, libdir string, err error) {
	var tried []string
	seen := map[string]bool{}
	for _, c := range rustCandidates(opts) {
		p, lerr := exec.LookPath(c)
		if lerr != nil {
			tried = append(tried, fmt.Sprintf("%s: not found", c))
			continue
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		out, rerr := run(ctx, "", nil, p, "--print", "target-libdir", "--target", RustTarget)
		dir := strings.TrimSpace(out)
		if rerr != nil {
			tried = append(tried, fmt.Sprintf("%s: %v", p, rerr))
			continue
		}
		if m, _ := globIn(dir, "libstd-*.rlib"); len(m) == 0 {
			tried = append(tried, fmt.Sprintf("%s: no %s standard library in %s", p, RustTarget, dir))
			continue
		}
		return p, dir, nil
	}
	return "", "", fmt.Errorf("%w: no rustc with the %s standard library (%s); install it: %s",
		ErrNoToolchain, RustTarget, strings.Join(tried, "; "), RustInstall)
}

// rustToolchain is `rustc --version` plus a digest of the target's
// standard library (Debian's libstd-rust-dev-wasm32 and rustup's
// rust-std differ for the same compiler version).
func rustToolchain(ctx context.Context, opts Options) (string, error) {
	rc, libdir, err := findRustc(ctx, opts)
	if err != nil {
		return "", err
	}
	out, err := run(ctx, "", nil, rc, "--version")
	if err != nil {
		return "", fmt.Errorf("%w: %s --version: %v", ErrNoToolchain, rc, err)
	}
	rlibs, _ := globIn(libdir, "*.rlib")
	sort.Strings(rlibs)
	h := sha256.New()
	for _, f := range rlibs {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrNoToolchain, err)
		}
		h.Write([]byte(filepath.Base(f)))
		h.Write(b)
	}
	return fmt.Sprintf("%s; %s std %s", strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]), RustTarget, hex.EncodeToString(h.Sum(nil))[:12]), nil
}

// rustRoot is the crate root of a Rust plugin: lib.rs, or src/lib.rs (a
// cargo layout); "" if neither exists.
func rustRoot(dir string) string {
	for _, p := range []string{"lib.rs", filepath.Join("src", "lib.rs")} {
		if st, err := os.Stat(filepath.Join(dir, p)); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// tsEntries are the AssemblyScript entry files of a plugin: the *.ts files
// in its folder (not *.d.ts), sorted.
func tsEntries(dir string) []string {
	m, _ := globIn(dir, "*.ts")
	var out []string
	for _, f := range m {
		if !strings.HasSuffix(f, ".d.ts") {
			out = append(out, filepath.Base(f))
		}
	}
	sort.Strings(out)
	return out
}

// crateName is a valid Rust crate name from a plugin name ([a-z0-9-]).
func crateName(name string) string {
	s := strings.ReplaceAll(name, "-", "_")
	switch s {
	case "kinfer", "std", "core", "alloc", "proc_macro", "test":
		// The SDK's crate, or one of Rust's own: the same name made the
		// plugin's crate indistinguishable from its dependency (E0519).
		return "plugin_" + s
	}
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		s = "plugin_" + s
	}
	return s
}

// findUp walks up from dir to the first directory holding rel and returns
// that directory joined with the first element of rel's parent ("" if none).
func findUp(dir, rel string) string {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, rel)); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// writeEmbedded copies the embedded files under prefix (a directory of
// kinfer.SDK) into dst, keeping their paths below prefix.
func writeEmbedded(prefix, dst string) error {
	return fs.WalkDir(kinfer.SDK, prefix, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(kinfer.SDK, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, filepath.FromSlash(strings.TrimPrefix(p, prefix+"/")))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
}

// rustCommands are the two rustc command lines of a Rust plugin build (run
// in dir): the SDK crate as an rlib in tmp, then the plugin as a cdylib.
// sdk is the directory holding the SDK's src/lib.rs. Paths are remapped
// (the plugin's folder to ".", the SDK to sdk/rust, tmp to "kinfer-sdk") so
// that panic locations in the module hold no path of this machine and the
// same sources give the same bytes in any folder.
func rustCommands(rc, name, root, dir, sdk, tmp, out string) (rlib, cdylib []string) {
	common := []string{"--edition", "2021", "--target", RustTarget, "-C", "opt-level=3", "-C", "codegen-units=1",
		"--remap-path-prefix", dir + "=.", "--remap-path-prefix", sdk + "=sdk/rust", "--remap-path-prefix", tmp + "=kinfer-sdk"}
	lib := filepath.Join(tmp, "libkinfer.rlib")
	rlib = append([]string{rc, "--crate-name", "kinfer", "--crate-type", "rlib"}, common...)
	rlib = append(rlib, "-o", lib, filepath.Join(sdk, "src", "lib.rs"))
	cdylib = append([]string{rc, "--crate-name", crateName(name), "--crate-type", "cdylib"}, common...)
	cdylib = append(cdylib, "-C", "strip=debuginfo", "--extern", "kinfer="+lib, "-o", out, root)
	return rlib, cdylib
}

// rustSDK is the directory of the Rust SDK a plugin in dir builds with:
// sdk/rust found by walking up (a clone), or the embedded copy written to
// tmp/sdk-rust; embedded reports the latter.
func rustSDK(dir, tmp string) (sdk string, embedded bool, err error) {
	if d := findUp(dir, filepath.Join("sdk", "rust", "src", "lib.rs")); d != "" {
		return filepath.Join(d, "sdk", "rust"), false, nil
	}
	sdk = filepath.Join(tmp, "sdk-rust")
	return sdk, true, writeEmbedded("sdk/rust", sdk)
}

// Asc: the AssemblyScript compiler. It is a node script; where it is
// looked for, in order: Options.Asc, $KINFER_ASC, asc on PATH, and the
// folder AscInstall installs into (kinfer/assemblyscript in the user cache
// directory, $XDG_CACHE_HOME or ~/.cache on Linux); never in a
// node_modules of the plugin's folder or above it.
func findAsc(dir string, opts Options) (string, error) {
	var cands []string
	switch {
	case opts.Asc != "":
		cands = []string{opts.Asc}
	case os.Getenv("KINFER_ASC") != "":
		cands = []string{os.Getenv("KINFER_ASC")}
	default:
		// Never a node_modules/.bin/asc of the plugin's folder or above
		// it: a plugin folder (or the repository it came in) could ship
		// its own "compiler", which kinfer build would run outside the
		// sandbox (audit 21). A project's own install is named by
		// KINFER_ASC.
		cands = append(cands, "asc")
		if c := ascCacheDir(); c != "" {
			cands = append(cands, filepath.Join(c, "node_modules", ".bin", "asc"))
		}
	}
	for _, c := range cands {
		if p, err := exec.LookPath(c); err == nil {
			if _, err := exec.LookPath("node"); err != nil {
				return "", fmt.Errorf("%w: %s needs node, which is not installed (apt-get install nodejs npm)", ErrNoToolchain, p)
			}
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: the AssemblyScript compiler asc was not found (looked for %s); install it: %s",
		ErrNoToolchain, strings.Join(cands, ", "), AscInstall())
}

func ascCacheDir() string {
	c, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(c, "kinfer", "assemblyscript")
}

func ascCacheDirShown() string {
	if c := ascCacheDir(); c != "" {
		return c
	}
	return "~/.cache/kinfer/assemblyscript"
}

// ascToolchain is "AssemblyScript <version>" from `asc --version`.
func ascToolchain(ctx context.Context, dir string, opts Options) (string, error) {
	asc, err := findAsc(dir, opts)
	if err != nil {
		return "", err
	}
	out, err := run(ctx, "", nil, asc, "--version")
	if err != nil {
		return "", fmt.Errorf("%w: %s --version: %v\n%s", ErrNoToolchain, asc, err, out)
	}
	v := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out), "Version"))
	return "AssemblyScript " + v, nil
}

// ascSDK writes the AssemblyScript SDK as package "kinfer" under tmp/as
// (asc's --path): sdk/assemblyscript found by walking up (a clone), or the
// embedded copy.
func ascSDK(dir, tmp string) (path string, embedded bool, err error) {
	path = filepath.Join(tmp, "as")
	dst := filepath.Join(path, "kinfer")
	if d := findUp(dir, filepath.Join("sdk", "assemblyscript", "index.ts")); d != "" {
		src := filepath.Join(d, "sdk", "assemblyscript")
		files, _ := globIn(src, "*")
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return "", false, err
		}
		for _, f := range files {
			if st, err := os.Stat(f); err != nil || !st.Mode().IsRegular() {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return "", false, err
			}
			if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), b, 0o644); err != nil {
				return "", false, err
			}
		}
		return path, false, nil
	}
	return path, true, writeEmbedded("sdk/assemblyscript", dst)
}

// ascCommand is the asc command line (run in the plugin's folder), with
// conf as its configuration file (never the folder's asconfig.json).
func ascCommand(asc string, entries []string, path, conf, out string) []string {
	cmd := append([]string{asc}, entries...)
	return append(cmd, "--config", conf, "--path", path, "-O3", "--noAssert", "--runtime", "incremental",
		"--exportStart", "_initialize", "--use", "abort=~lib/kinfer/index/kinferAbort", "-o", out)
}
