package manifest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const good = `name = "lig"
version = "1.0.0"
kind = "model"
abi = 1
wasm = "m.wasm"
%s
[limits]
timeout_ms = 50
`

// module is a minimal byte string with the WebAssembly header (magic
// "\0asm", binary version 1), which is all ReadWasm checks.
const module = "\x00asm\x01\x00\x00\x00rest-of-module"

func TestLoadDefaultsAndPin(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "m.wasm", module)
	pin := SHA256([]byte(module))
	p := write(t, dir, "plugin.toml", strings.Replace(good, "%s", `sha256 = "`+pin+`"`, 1))
	m, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if m.Limits.MemoryMiB != DefaultMemoryMiB || m.Limits.TimeoutMS != 50 || m.Limits.Fuel != DefaultFuel {
		t.Fatalf("limits %+v", m.Limits)
	}
	if len(m.Limits.NeedsTrust()) != 0 {
		t.Fatalf("defaults need trust: %v", m.Limits.NeedsTrust())
	}
	b, err := m.ReadWasm()
	if err != nil || string(b) != module {
		t.Fatalf("%q %v", b, err)
	}
}

func TestDefaultTimeout(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "plugin.toml", strings.Replace(strings.Replace(good, "%s", "", 1), "timeout_ms = 50\n", "", 1))
	m, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if m.Limits.TimeoutMS != DefaultTimeoutMS || m.Limits.Fuel != DefaultFuel {
		t.Fatalf("limits %+v", m.Limits)
	}
}

func TestSHA256Mismatch(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "m.wasm", module+"tampered")
	p := write(t, dir, "plugin.toml", strings.Replace(good, "%s", `sha256 = "`+strings.Repeat("ab", 32)+`"`, 1))
	m, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.ReadWasm()
	if err == nil || !strings.Contains(err.Error(), "plugin lig") || !strings.Contains(err.Error(), "sha256 mismatch") ||
		!strings.Contains(err.Error(), strings.Repeat("ab", 32)) {
		t.Fatalf("want mismatch naming plugin and digest, got %v", err)
	}
}

func TestKnownSHA256(t *testing.T) {
	// FIPS 180-2 test vector: SHA-256("abc").
	if got := SHA256([]byte("abc")); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Fatal(got)
	}
}

func TestErrors(t *testing.T) {
	base := strings.Replace(good, "%s", "", 1)
	cases := []struct{ text, want string }{
		{base + "memroy_mib = 3\n", `plugin.toml:9: key "limits.memroy_mib"`},
		{strings.Replace(base, "abi = 1", "abi = 2", 1), "plugin.toml:4: key \"abi\": plugin lig declares ABI 2"},
		{strings.Replace(base, `kind = "model"`, `kind = "modle"`, 1), `plugin.toml:3: key "kind"`},
		{strings.Replace(base, `wasm = "m.wasm"`, ``, 1), `key "wasm": missing required field`},
		{strings.Replace(base, `name = "lig"`, `name = "`+strings.Repeat("a", 65)+`"`, 1), `plugin.toml:1: key "name"`},
		{base + "memory_mib = 0\n", `plugin.toml:9: key "limits.memory_mib": plugin lig: memory_mib 0 outside [1, 4096]`},
		{base + "memory_mib = 5000\n", `plugin.toml:9: key "limits.memory_mib"`},
	}
	for _, c := range cases {
		dir := t.TempDir()
		_, err := Load(write(t, dir, "plugin.toml", c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want %q, got %v", c.want, err)
		}
	}
}

// Each [limits] value is accepted, accepted only when trusted (NeedsTrust
// names it), or refused at its file, line and key.
func TestLimits(t *testing.T) {
	cases := []struct {
		limits string
		err    string // "" when Load succeeds
		trust  string // a substring of NeedsTrust; "" when none is needed
	}{
		{"timeout_ms = 1", "", ""},
		{"timeout_ms = 3600000", "", ""},
		{"timeout_ms = 3600001", "", "timeout_ms = 3600001 (above 3600000"},
		{"timeout_ms = 0", "", "timeout_ms = 0 (no timeout)"},
		{"timeout_ms = 9000000000000", "", "timeout_ms = 9000000000000"},
		// 9223372036854 ms is the largest time.Duration (MaxInt64 ns).
		{"timeout_ms = 9223372036854", "", "timeout_ms = 9223372036854"},
		{"timeout_ms = 9223372036855", `plugin.toml:8: key "limits.timeout_ms": plugin lig: timeout_ms 9223372036855 is beyond the largest timeout`, ""},
		{"timeout_ms = 9223372036854775807", `plugin.toml:8: key "limits.timeout_ms"`, ""},
		{"timeout_ms = 99999999999999999999", `plugin.toml:8: key "limits.timeout_ms"`, ""},
		{"timeout_ms = -1", `plugin.toml:8: key "limits.timeout_ms": plugin lig: timeout_ms -1 must be ≥ 0`, ""},
		{"timeout_ms = 1.5", `plugin.toml:8: key "limits.timeout_ms": want an integer, got a float`, ""},
		{"fuel = 1", "", ""},
		{"fuel = 1_000_000_000_000_000", "", ""},
		{"fuel = 1_000_000_000_000_001", "", "fuel = 1000000000000001 (above 1000000000000000)"},
		{"fuel = 0", "", "fuel = 0 (unlimited)"},
		{"fuel = 9223372036854775807", "", "fuel = 9223372036854775807"},
		{"fuel = -5", `plugin.toml:8: key "limits.fuel": plugin lig: fuel -5 must be ≥ 0`, ""},
		{"fuel = 1e15", `plugin.toml:8: key "limits.fuel": want an integer, got a float (write an integer`, ""},
		{"fuel = 2.0e10", `plugin.toml:8: key "limits.fuel": want an integer, got a float`, ""},
		{`fuel = "10"`, `plugin.toml:8: key "limits.fuel": want an integer, got a string`, ""},
		{"fuel = inf", `plugin.toml:8: key "limits.fuel": want an integer, got a float`, ""},
		{"fuel = 99999999999999999999", `plugin.toml:8: key "limits.fuel"`, ""},
		{"fuel = 0\ntimeout_ms = 0", "", "timeout_ms = 0 (no timeout)"},
	}
	for _, c := range cases {
		text := strings.Replace(strings.Replace(good, "%s", "", 1), "timeout_ms = 50", c.limits, 1)
		m, err := Load(write(t, t.TempDir(), "plugin.toml", text))
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: want error %q, got %v", c.limits, c.err, err)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", c.limits, err)
			continue
		}
		why := strings.Join(m.Limits.NeedsTrust(), "; ")
		if (c.trust == "") != (why == "") || !strings.Contains(why, c.trust) {
			t.Errorf("%s: NeedsTrust = %q, want %q", c.limits, why, c.trust)
		}
	}
}

// wasmErr loads a manifest naming wasm in a fresh folder (after setup
// prepared it) and returns ReadWasm's or Load's error.
func wasmErr(t *testing.T, wasm string, setup func(dir string)) error {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "plugin")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(dir)
	}
	text := strings.Replace(strings.Replace(good, "%s", "", 1), `wasm = "m.wasm"`, `wasm = "`+wasm+`"`, 1)
	m, err := Load(write(t, dir, "plugin.toml", text))
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { _, err := m.ReadWasm(); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("wasm = %q: ReadWasm blocked", wasm)
		return nil
	}
}

func TestModulePathRules(t *testing.T) {
	sparse := func(name string, size int64, head string) func(string) {
		return func(dir string) {
			f, err := os.Create(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			f.WriteString(head)
			if err := f.Truncate(size); err != nil {
				t.Skip("no sparse files:", err)
			}
		}
	}
	cases := []struct {
		wasm  string
		setup func(dir string)
		want  string
	}{
		{"/dev/zero", nil, `plugin.toml:5: key "wasm": plugin lig: the module path must be relative to the manifest's folder and stay inside it: "/dev/zero" is an absolute path`},
		{"../m.wasm", nil, `plugin.toml:5: key "wasm"`},
		{"a/../../m.wasm", nil, `leaves the folder`},
		{"", nil, `key "wasm"`},
		{"zero", func(dir string) { os.Symlink("/dev/zero", filepath.Join(dir, "zero")) }, `outside the folder`},
		{"up.wasm", func(dir string) {
			os.WriteFile(filepath.Join(dir, "..", "outside.wasm"), []byte(module), 0o644)
			os.Symlink("../outside.wasm", filepath.Join(dir, "up.wasm"))
		}, `outside the folder`},
		{"fifo.wasm", func(dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "fifo.wasm"), 0o644); err != nil {
				t.Skip("no mkfifo:", err)
			}
		}, `is a named pipe (FIFO), not a regular file`},
		{"sub", func(dir string) { os.Mkdir(filepath.Join(dir, "sub"), 0o755) }, `is a directory, not a regular file`},
		{"big.wasm", sparse("big.wasm", 2<<30, module), `has 2 GiB, more than the 256 MiB accepted`},
		{"missing.wasm", nil, `does not exist yet: build it with kinfer build`},
		{"short.wasm", func(dir string) { os.WriteFile(filepath.Join(dir, "short.wasm"), []byte("\x00as"), 0o644) }, `not a WebAssembly binary (3 bytes`},
		{"text.wasm", func(dir string) { os.WriteFile(filepath.Join(dir, "text.wasm"), []byte("#!/bin/sh\necho hi\n"), 0o644) }, `not a WebAssembly binary (it starts with "#!/b"`},
		{"v2.wasm", func(dir string) {
			os.WriteFile(filepath.Join(dir, "v2.wasm"), []byte("\x00asm\x02\x00\x00\x00"), 0o644)
		}, `binary of format version 2`},
	}
	for _, c := range cases {
		err := wasmErr(t, c.wasm, c.setup)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("wasm = %q: want %q, got %v", c.wasm, c.want, err)
			continue
		}
		if !strings.Contains(err.Error(), "lig") || !strings.Contains(err.Error(), "plugin.toml") {
			t.Errorf("wasm = %q: error does not name the plugin and manifest: %v", c.wasm, err)
		}
	}
	// Paths inside the folder, through a link inside, are fine.
	ok := func(dir string) {
		os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
		os.WriteFile(filepath.Join(dir, "sub", "m.wasm"), []byte(module), 0o644)
		os.Symlink("sub/m.wasm", filepath.Join(dir, "link.wasm"))
	}
	for _, w := range []string{"sub/m.wasm", "./sub/../sub/m.wasm", "link.wasm"} {
		if err := wasmErr(t, w, ok); err != nil {
			t.Errorf("wasm = %q: %v", w, err)
		}
	}
}

// A module whose header is wrong is refused after its first 8 bytes: a
// 64 MiB file (under the size limit) is not read.
func TestHeaderCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "m.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("MZ\x90\x00not wasm")
	if err := f.Truncate(64 << 20); err != nil {
		t.Skip("no sparse files:", err)
	}
	f.Close()
	m, err := Load(write(t, dir, "plugin.toml", strings.Replace(good, "%s", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = m.ReadWasm()
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "not a WebAssembly binary") {
		t.Fatalf("got %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("ReadWasm allocated %d bytes for a refused module", alloc)
	}
}
