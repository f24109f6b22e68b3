package build

import (
	"context"
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"go/version"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/kinfer/kinfer"
)

// kinferModule is the module path Go guests import the SDK from.
const kinferModule = "github.com/kinfer/kinfer"

// sdkDirName is where the embedded Go SDK appears, through the build's
// overlay only, under the root of the module being built; the replace
// directive names it relative (./_kinfer_sdk) so that the module's build
// info, and so its bytes, do not depend on a temporary path.
const sdkDirName = "_kinfer_sdk"

// tempModulePath is the module path of a Go plugin that has no go.mod.
// It has a dot so that it cannot collide with a standard-library package.
const tempModulePath = "kinfer.local/plugin"

// goVersion is the go directive of kinfer's own go.mod (the language
// version the embedded SDK is written for).
func goVersion() (string, error) {
	b, err := fs.ReadFile(kinfer.SDK, "go.mod")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "go" {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("embedded go.mod has no go directive")
}

// writeHeader writes the embedded kinfer.h into dir.
func writeHeader(dir string) error {
	b, err := fs.ReadFile(kinfer.SDK, "sdk/c/kinfer.h")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "kinfer.h"), b, 0o644)
}

// needsHeader reports that a C plugin in dir finds no kinfer.h of its own:
// none next to its sources, in an Options.Include directory, or in an
// sdk/c found by walking up (a clone of the repository). The carried one is
// then on its include path (harmless when unused); whether the build says
// it used it is includesHeader's.
func needsHeader(dir string, opts Options) bool {
	for _, d := range append([]string{dir}, opts.Include...) {
		if _, err := os.Stat(filepath.Join(d, "kinfer.h")); err == nil {
			return false
		}
	}
	return findSDK(dir) == ""
}

// includesHeader reports that a source of dir includes kinfer.h: a plugin
// written against the ABI alone is not told it used the carried header
// (audit 21). An include this does not see (from a subfolder's header,
// through a macro) still finds the header; only the note is left out.
func includesHeader(dir string) bool {
	return mentions(dir, []string{"*.c", "*.h"}, includesKinferH)
}

// mentionRead bounds what mentions reads of each file.
const mentionRead = 4 << 20

// includesKinferH is an #include of kinfer.h (a comment naming it is not).
var includesKinferH = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*[<"]kinfer\.h[>"]`)

// mentions reports whether a file of dir matching one of the patterns
// matches re in its first mentionRead bytes.
func mentions(dir string, patterns []string, re *regexp.Regexp) bool {
	for _, pat := range patterns {
		files, _ := globIn(dir, pat)
		for _, p := range files {
			f, err := os.Open(p)
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(io.LimitReader(f, mentionRead))
			f.Close()
			if re.Match(b) {
				return true
			}
		}
	}
	return false
}

// goMod is the part of `go mod edit -json` that matters here.
type goMod struct {
	Module  struct{ Path string }
	Go      string
	Require []struct{ Path, Version string }
	Replace []struct {
		Old struct{ Path, Version string }
		New struct{ Path, Version string }
	}
}

// goOverlay decides whether a Go plugin in dir needs the SDK carried in
// the binary, and if so writes, under tmp, the files of a `go build
// -overlay` that provides it without touching the plugin's folder: the
// embedded abi/ and sdk/go/ packages with a go.mod of module
// github.com/kinfer/kinfer, seen as <module root>/_kinfer_sdk, and a go.mod
// for the plugin's module that requires and replaces github.com/kinfer/kinfer
// with it. It returns the overlay file, or "" when the plugin builds as it
// is:
//   - inside a go.work workspace that uses the plugin's module (the
//     workspace decides);
//   - in kinfer's own module (the repository's plugins);
//   - in a module whose go.mod replaces github.com/kinfer/kinfer with a
//     directory holding a go.mod, or with another module version.
//
// Otherwise — no go.mod at all (a temporary module kinfer.local/plugin is
// made), or a go.mod without a usable replace — the embedded SDK is used
// (sdk is true), except that a folder without a go.mod none of whose
// files imports the SDK gets the temporary go.mod alone.
//
// A module none of whose packages imports github.com/kinfer/kinfer (a
// plugin written from ABI.md alone) is built exactly as `go build` would
// build it — no overlay, the same language version, the same bytes as the
// hand recipe. When the overlay must raise the module's go line to the
// SDK's (the go command refuses a main module older than a dependency),
// note says so: the language version changes semantics (per-iteration
// loop variables since Go 1.22).
//
// A go.work above a folder whose module it does not use (a plugin made by
// kinfer new inside someone's workspace) would fail the build with "current
// directory outside modules listed in go.work": such a plugin is built
// with GOWORK=off (workOff), which note says.
func goOverlay(ctx context.Context, dir, tmp string, opts Options) (overlay, note string, sdk, workOff bool, err error) {
	genv := goEnv()
	ge, err := goModWork(ctx, dir, genv, opts)
	if err != nil {
		return "", "", false, false, err
	}
	if ge.GOWORK != "" && ge.GOWORK != "off" {
		in, err := inWorkspace(ctx, dir, ge.GOMOD, ge.GOWORK, genv, opts)
		if err != nil || in {
			return "", "", false, false, err
		}
		workOff = true
		genv = append(genv, "GOWORK=off")
		how := "add its module with go work use"
		if ge.GOMOD == "" || ge.GOMOD == os.DevNull {
			how = "give it a go.mod and add it with go work use"
		}
		note = fmt.Sprintf("%s is inside the Go workspace %s, which does not use its module: built with GOWORK=off (%s to build it in the workspace)", dir, ge.GOWORK, how)
		if ge, err = goModWork(ctx, dir, genv, opts); err != nil {
			return "", "", false, false, err
		}
	}
	overlay, more, sdk, err := goOverlayModule(ctx, dir, tmp, ge.GOMOD, genv, opts)
	if more != "" {
		note = strings.TrimPrefix(note+"; "+more, "; ")
	}
	return overlay, note, sdk, workOff, err
}

type goModWorkEnv struct{ GOMOD, GOWORK string }

// goModWork is `go env GOMOD GOWORK` in dir.
func goModWork(ctx context.Context, dir string, genv []string, opts Options) (goModWorkEnv, error) {
	var ge goModWorkEnv
	env, err := run(ctx, dir, genv, opts.goCmd(), "env", "-json", "GOMOD", "GOWORK")
	if err != nil {
		return ge, fmt.Errorf("%s env: %v\n%s", opts.goCmd(), err, env)
	}
	if err := json.Unmarshal([]byte(env), &ge); err != nil {
		return ge, fmt.Errorf("%s env -json: %v", opts.goCmd(), err)
	}
	return ge, nil
}

// inWorkspace reports whether the go.work at work uses the module of dir
// (gomod's folder; none when gomod is empty or os.DevNull).
func inWorkspace(ctx context.Context, dir, gomod, work string, genv []string, opts Options) (bool, error) {
	if gomod == "" || gomod == os.DevNull {
		return false, nil
	}
	out, err := run(ctx, dir, genv, opts.goCmd(), "work", "edit", "-json", work)
	if err != nil {
		return false, fmt.Errorf("%s: %v\n%s", work, err, out)
	}
	var gw struct{ Use []struct{ DiskPath string } }
	if err := json.Unmarshal([]byte(out), &gw); err != nil {
		return false, fmt.Errorf("%s: go work edit -json: %v", work, err)
	}
	root := filepath.Dir(gomod)
	for _, u := range gw.Use {
		p := u.DiskPath
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(work), p)
		}
		if same(p, root) {
			return true, nil
		}
	}
	return false, nil
}

// same reports whether a and b name one folder (through symbolic links).
func same(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// goOverlayModule is goOverlay outside a workspace: gomod is the folder's
// go.mod ("" or os.DevNull for none).
func goOverlayModule(ctx context.Context, dir, tmp, gomod string, genv []string, opts Options) (overlay, note string, sdk bool, err error) {
	ge := goModWorkEnv{GOMOD: gomod}
	gover, err := goVersion()
	if err != nil {
		return "", "", false, err
	}
	var root, modText string
	withSDK := true
	if ge.GOMOD == "" || ge.GOMOD == os.DevNull {
		root = dir
		if !importsSDK(dir) {
			// No go.mod, no SDK (a plugin from ABI.md alone): the go
			// command still needs a module, and nothing more.
			withSDK = false
			modText = "module " + tempModulePath + "\n\ngo " + gover + "\n"
			note = fmt.Sprintf("%s has no go.mod and does not import the SDK: built as module %s, go %s, through a temporary go.mod overlay (your folder is unchanged); write that go.mod to build the same way by hand", dir, tempModulePath, gover)
		} else {
			modText = "module " + tempModulePath + "\n\ngo " + gover + "\n\nrequire " + kinferModule + " v0.0.0\n\nreplace " + kinferModule + " => ./" + sdkDirName + "\n"
		}
	} else {
		out, err := run(ctx, dir, genv, opts.goCmd(), "mod", "edit", "-json", ge.GOMOD)
		if err != nil {
			return "", "", false, fmt.Errorf("%s: %v\n%s", ge.GOMOD, err, out)
		}
		var gm goMod
		if err := json.Unmarshal([]byte(out), &gm); err != nil {
			return "", "", false, fmt.Errorf("%s: go mod edit -json: %v", ge.GOMOD, err)
		}
		if gm.Module.Path == kinferModule {
			return "", "", false, nil
		}
		root = filepath.Dir(ge.GOMOD)
		if !importsSDK(root) {
			return "", "", false, nil
		}
		for _, r := range gm.Replace {
			if r.Old.Path != kinferModule {
				continue
			}
			if r.New.Version != "" {
				return "", "", false, nil
			}
			p := r.New.Path
			if !filepath.IsAbs(p) {
				p = filepath.Join(root, p)
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return "", "", false, nil
			}
		}
		// go mod edit drops every other replacement of the module (a
		// versioned one included) and prints the result without writing it.
		edit := []string{"mod", "edit", "-print", "-replace=" + kinferModule + "=./" + sdkDirName}
		required := false
		for _, r := range gm.Require {
			required = required || r.Path == kinferModule
		}
		if !required {
			edit = append(edit, "-require="+kinferModule+"@v0.0.0")
		}
		// The go command refuses a main module older than a dependency
		// ("updates to go.mod needed"): the SDK's code is written for
		// kinfer's go version, so the plugin's module is raised to it.
		if goLess(gm.Go, gover) {
			edit = append(edit, "-go="+gover)
			was := "no go line"
			if gm.Go != "" {
				was = "go " + gm.Go
			}
			// go 1.26 and go 1.26.0 are one language version: raising
			// one to the other changes nothing worth a note (audit 4).
			if langVersion(gm.Go) != langVersion(gover) {
				note = fmt.Sprintf("%s says %s, older than the go %s the SDK needs: the build's overlay raised it to go %s "+
					"(your file is unchanged), so the plugin was compiled with Go %s language semantics (e.g. per-iteration loop "+
					"variables since Go 1.22); set go %s in go.mod to build the same way by hand", ge.GOMOD, was, gover, gover, gover, gover)
			}
		}
		if modText, err = run(ctx, dir, genv, opts.goCmd(), append(edit, ge.GOMOD)...); err != nil {
			return "", "", false, fmt.Errorf("%s: %v\n%s", ge.GOMOD, err, modText)
		}
	}
	ov := map[string]string{}
	add := func(name string, b []byte) error {
		p := filepath.Join(tmp, "overlay", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
		ov[filepath.Join(root, filepath.FromSlash(name))] = p
		return nil
	}
	if err := add("go.mod", []byte(modText)); err != nil {
		return "", "", false, err
	}
	if withSDK {
		if err := add(sdkDirName+"/go.mod", []byte("module "+kinferModule+"\n\ngo "+gover+"\n")); err != nil {
			return "", "", false, err
		}
		err = fs.WalkDir(kinfer.SDK, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			b, err := fs.ReadFile(kinfer.SDK, p)
			if err != nil {
				return err
			}
			return add(sdkDirName+"/"+p, b)
		})
		if err != nil {
			return "", "", false, err
		}
	}
	b, err := json.Marshal(map[string]any{"Replace": ov})
	if err != nil {
		return "", "", false, err
	}
	p := filepath.Join(tmp, "overlay.json")
	return p, note, withSDK, os.WriteFile(p, b, 0o644)
}

// importsSDK reports whether a non-test Go file of the module rooted at
// root (its folders, without nested modules, vendor, testdata and folders
// whose name starts with "." or "_", which the go command ignores) imports
// a package of github.com/kinfer/kinfer. Build constraints are not
// evaluated: a file that imports it under any tag counts. A file that
// does not parse counts too, so that the go command reports it.
func importsSDK(root string) bool {
	found := false
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if found {
			return filepath.SkipAll
		}
		if err != nil {
			return nil // unreadable: the go command will say so
		}
		if d.IsDir() {
			name := d.Name()
			if p != root {
				if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor" {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			found = true
			return nil
		}
		for _, im := range f.Imports {
			path, err := strconv.Unquote(im.Path.Value)
			if err == nil && (path == kinferModule || strings.HasPrefix(path, kinferModule+"/")) {
				found = true
			}
		}
		return nil
	})
	return found
}

// goLess reports a < b for go versions such as "1.22", "1.26.0" and
// "1.26.1" in the go command's order (go/version: the language version
// "1.26" is older than its first release "1.26.0", which a dependency may
// require); an empty a, a go.mod without a go directive, counts as the
// oldest.
func goLess(a, b string) bool {
	return version.Compare("go"+a, "go"+b) < 0
}

// langVersion is a go line's language version, its first two components
// ("1.26.0" and "1.26" are both "1.26"; "" stays "").
func langVersion(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	minor := parts[1]
	if i := strings.IndexFunc(minor, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		minor = minor[:i] // 1.26rc1
	}
	return parts[0] + "." + minor
}
