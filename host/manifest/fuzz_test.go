package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/safefile"
)

// FuzzManifest: any text either fails to load with an error naming the
// manifest, or gives a manifest whose fields are valid.
func FuzzManifest(f *testing.F) {
	seeds, _ := filepath.Glob("../../plugins/*/*/plugin.toml")
	more, _ := filepath.Glob("../testdata/plugins/*/plugin.toml")
	for _, p := range append(seeds, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	valid := strings.Replace(good, "%s", `sha256 = "`+strings.Repeat("0", 64)+`"`, 1)
	f.Add(valid)
	for _, s := range []string{
		"", "name = ", "[limits]\ntimeout_ms = 9000000000000", "[limits]\nfuel = 1e15\n",
		strings.Replace(valid, "timeout_ms = 50", "timeout_ms = -1\nfuel = 0", 1),
		strings.Replace(valid, `wasm = "m.wasm"`, `wasm = "../../../etc/passwd"`, 1),
		strings.Replace(valid, `wasm = "m.wasm"`, `wasm = "/dev/zero"`, 1),
		strings.Replace(valid, `wasm = "m.wasm"`, `wasm = "a/./b/../../m.wasm"`, 1),
		strings.Replace(valid, `[limits]`, `[limits]`+"\nmemory_mib = 4096\nfuel = 1_000_000_000_000_000", 1),
		"x = " + strings.Repeat("[", 50) + strings.Repeat("]", 50),
		"x = " + strings.Repeat("{a=", 50) + "1" + strings.Repeat("}", 50),
		"a" + strings.Repeat(".a", 50) + " = 1",
		"name = \"\"\"\n[[[[\n\"\"\"\n",
		"[build]\nlang = 'c'\ntoolchain = '''\n]]]]'''\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		const path = "/fuzz/plugin.toml"
		m, err := Parse(path, text)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error does not name the manifest: %v", err)
			}
			return
		}
		l := m.Limits
		switch {
		case !nameRE.MatchString(m.Name) || len(m.Name) > MaxNameLen:
			t.Fatalf("name %q", m.Name)
		case m.Kind != abi.KindModel && m.Kind != abi.KindLikelihood && m.Kind != abi.KindMethod:
			t.Fatalf("kind %q", m.Kind)
		case m.ABI != abi.Version:
			t.Fatalf("abi %d", m.ABI)
		case m.SHA256 != "" && !hexRE.MatchString(m.SHA256):
			t.Fatalf("sha256 %q", m.SHA256)
		case l.MemoryMiB < 1 || l.MemoryMiB > MaxMemoryMiB:
			t.Fatalf("memory_mib %d", l.MemoryMiB)
		case l.TimeoutMS < 0 || l.TimeoutMS > MaxDurationMS:
			t.Fatalf("timeout_ms %d", l.TimeoutMS)
		case l.Fuel < 0:
			t.Fatalf("fuel %d", l.Fuel)
		case (l.TimeoutMS == 0 || l.TimeoutMS > MaxTimeoutMS || l.Fuel == 0 || l.Fuel > MaxFuel) != (len(l.NeedsTrust()) > 0):
			t.Fatalf("limits %+v, NeedsTrust %q", l, l.NeedsTrust())
		case safefile.Relative(m.Wasm) != nil:
			t.Fatalf("wasm %q", m.Wasm)
		}
		if r, err := filepath.Rel(m.Dir, m.WasmPath()); err != nil || !filepath.IsLocal(r) && r != "." {
			t.Fatalf("wasm %q resolves to %s, outside %s", m.Wasm, m.WasmPath(), m.Dir)
		}
	})
}
