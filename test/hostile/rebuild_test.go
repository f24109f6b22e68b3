package hostile

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/host/build"
)

// TestRebuild checks that every committed module matches its source: the
// WebAssembly text files rebuilt with wat2wasm, the C plugins with `kinfer
// build`'s compiler command (host/build.Check). Without the tools it skips,
// and the suite runs on the committed modules.
func TestRebuild(t *testing.T) {
	wats, err := filepath.Glob("testdata/wat/*.wat")
	if err != nil || len(wats) < 20 {
		t.Fatalf("%d .wat files (%v)", len(wats), err)
	}
	t.Run("wat", func(t *testing.T) {
		tool, err := exec.LookPath("wat2wasm")
		if err != nil {
			t.Skip("wat2wasm (Debian package wabt) is not installed: the committed modules are used as they are")
		}
		tmp := t.TempDir()
		for _, src := range wats {
			name := strings.TrimSuffix(filepath.Base(src), ".wat")
			out := filepath.Join(tmp, name+".wasm")
			if msg, err := exec.Command(tool, src, "-o", out).CombinedOutput(); err != nil {
				t.Errorf("wat2wasm %s: %v\n%s", src, err, msg)
				continue
			}
			got, _ := os.ReadFile(out)
			committed, err := os.ReadFile(strings.TrimSuffix(src, ".wat") + ".wasm")
			if err != nil || !bytes.Equal(got, committed) {
				t.Errorf("%s.wasm does not match a rebuild from %s (%v): run testdata/build.sh and commit the module", name, src, err)
			}
		}
	})
	dirs, _ := filepath.Glob("testdata/c/*/plugin.toml")
	if len(dirs) < 4 {
		t.Fatalf("%d C plugins", len(dirs))
	}
	for _, mp := range dirs {
		dir := filepath.Dir(mp)
		t.Run(dir, func(t *testing.T) {
			r, err := build.Check(dir, build.Options{})
			if errors.Is(err, build.ErrNoToolchain) {
				t.Skipf("cannot rebuild %s: %v", dir, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Pinned != r.Committed {
				t.Errorf("%s pins sha256 %s but the committed module has %s; run testdata/build.sh", mp, r.Pinned, r.Committed)
			}
			if r.ToolchainDiffers {
				t.Skipf("%s was built with %q; this machine has %q, so the bytes cannot be compared", dir, r.Recorded, r.Toolchain)
			}
			if !r.Match {
				t.Errorf("the committed module of %s does not match a rebuild (%s): run testdata/build.sh and commit it", dir, strings.Join(r.Command, " "))
			}
		})
	}
}
