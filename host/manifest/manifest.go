package manifest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"regexp"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/host/tomlx"
)

// Default and maximum limits (ABI.md §9). A value outside [1, Max…] — 0
// meaning "no limit" included — is allowed only when the study marks the
// plugin trusted (Limits.NeedsTrust); a timeout that does not fit a
// time.Duration is refused always.
const (
	DefaultMemoryMiB = 256
	MaxMemoryMiB     = 4096 // the 4 GiB of a wasm32 memory

	// DefaultTimeoutMS is the wall-clock backstop of every call into a
	// plugin, in milliseconds, when [limits] does not give timeout_ms.
	DefaultTimeoutMS = 60_000
	// MaxTimeoutMS is the longest timeout an untrusted plugin may ask for
	// (one hour).
	MaxTimeoutMS = 3_600_000
	// MaxDurationMS is the largest timeout_ms a time.Duration holds
	// (math.MaxInt64 ns); anything larger is refused, trusted or not.
	MaxDurationMS = math.MaxInt64 / 1_000_000

	// DefaultFuel is the per-call budget of executed wasm instructions
	// (counted per loop iteration and per call; per point of the batch for
	// kinfer_model_eval) when [limits] does not give fuel: about 10 s of
	// guest code.
	DefaultFuel = 20_000_000_000
	// MaxFuel is the largest fuel an untrusted plugin may ask for.
	MaxFuel = 1_000_000_000_000_000

	// MaxModuleBytes bounds a plugin's module file. The largest plugin of
	// the repository (the Go arm model) is about 3 MB.
	MaxModuleBytes = 256 << 20
)

// Limits are the per-instance sandbox limits of a plugin.
type Limits struct {
	MemoryMiB int `toml:"memory_mib"`
	// TimeoutMS is the wall-clock backstop of every call into the plugin,
	// in milliseconds (per point of a batch); 0 disables it (trusted
	// plugins only). Calls stay interruptible either way: every module is
	// metered.
	TimeoutMS int `toml:"timeout_ms"`
	// Fuel is the deterministic per-call budget, in about one wasm
	// instruction executed per unit (counted per loop iteration and per
	// call; for kinfer_model_eval per point of the batch); 0 is unlimited
	// (trusted plugins only).
	Fuel int64 `toml:"fuel"`
}

// NeedsTrust lists the limits that only a study's trusted = true may grant
// (no timeout, a timeout above MaxTimeoutMS, unlimited fuel, fuel above
// MaxFuel), each as "key = value (why)"; nil when there are none.
func (l Limits) NeedsTrust() []string {
	var why []string
	switch {
	case l.TimeoutMS == 0:
		why = append(why, "timeout_ms = 0 (no timeout)")
	case l.TimeoutMS > MaxTimeoutMS:
		why = append(why, fmt.Sprintf("timeout_ms = %d (above %d, one hour)", l.TimeoutMS, MaxTimeoutMS))
	}
	switch {
	case l.Fuel == 0:
		why = append(why, "fuel = 0 (unlimited)")
	case l.Fuel > MaxFuel:
		why = append(why, fmt.Sprintf("fuel = %d (above %d)", l.Fuel, int64(MaxFuel)))
	}
	return why
}

// Build records how the committed wasm was produced, so that a rebuild can be
// checked against it (see host/build). Optional.
type Build struct {
	Lang      string `toml:"lang"`      // "go", "c", "rust" or "assemblyscript"
	Toolchain string `toml:"toolchain"` // e.g. "go1.26.8", "clang 14.0.6"
}

// Manifest is a decoded plugin.toml.
type Manifest struct {
	Name    string   `toml:"name"`
	Version string   `toml:"version"`
	Kind    abi.Kind `toml:"kind"`
	ABI     int      `toml:"abi"`
	Wasm    string   `toml:"wasm"`
	SHA256  string   `toml:"sha256"`
	Limits  Limits   `toml:"limits"`
	Build   *Build   `toml:"build"`

	// Path is the manifest file; Dir its directory.
	Path string `toml:"-"`
	Dir  string `toml:"-"`
	// Bare: a module loaded without a plugin.toml (kinfer inspect
	// FILE.wasm); Path is then the module's path as given, and messages
	// name the file alone, not a manifest key.
	Bare bool `toml:"-"`
}

var (
	nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	hexRE  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// MaxNameLen bounds the plugin name (it prefixes log lines and names
// instances).
const MaxNameLen = 64

// Load reads and validates the manifest at path.
func Load(path string) (*Manifest, error) {
	var m Manifest
	d, err := tomlx.DecodeFile(path, &m)
	if err != nil {
		return nil, err
	}
	return validate(path, &m, d)
}

// Parse validates the manifest text as if read from path (which is not
// opened).
func Parse(path, text string) (*Manifest, error) {
	var m Manifest
	d, err := tomlx.Decode(path, text, &m)
	if err != nil {
		return nil, err
	}
	return validate(path, &m, d)
}

func validate(path string, mp *Manifest, d *tomlx.Decoded) (*Manifest, error) {
	m := *mp
	m.Path = path
	m.Dir = filepath.Dir(path)
	for _, k := range []string{"name", "version", "kind", "abi", "wasm"} {
		if !d.Has(k) {
			return nil, &tomlx.Error{File: path, Key: k, Msg: "missing required field"}
		}
	}
	l := &m.Limits
	switch {
	case !nameRE.MatchString(m.Name) || len(m.Name) > MaxNameLen:
		return nil, d.Errorf("name", "plugin name %q must match [a-z0-9][a-z0-9-]* and have at most %d characters", m.Name, MaxNameLen)
	case m.Kind != abi.KindModel && m.Kind != abi.KindLikelihood && m.Kind != abi.KindMethod:
		return nil, d.Errorf("kind", "kind %q: want model, likelihood or method", m.Kind)
	case m.ABI != abi.Version:
		return nil, d.Errorf("abi", "plugin %s declares ABI %d; this kinfer supports ABI %d", m.Name, m.ABI, abi.Version)
	case m.SHA256 != "" && !hexRE.MatchString(m.SHA256):
		return nil, d.Errorf("sha256", "plugin %s: sha256 must be 64 lowercase hex digits", m.Name)
	case d.Has("limits.memory_mib") && (l.MemoryMiB < 1 || l.MemoryMiB > MaxMemoryMiB):
		return nil, d.Errorf("limits.memory_mib", "plugin %s: memory_mib %d outside [1, %d]", m.Name, l.MemoryMiB, MaxMemoryMiB)
	case l.TimeoutMS < 0:
		return nil, d.Errorf("limits.timeout_ms", "plugin %s: timeout_ms %d must be ≥ 0 (0: no timeout, trusted plugins only)", m.Name, l.TimeoutMS)
	case l.TimeoutMS > MaxDurationMS:
		return nil, d.Errorf("limits.timeout_ms", "plugin %s: timeout_ms %d is beyond the largest timeout kinfer can time (%d ms, about 292 years); for no timeout write timeout_ms = 0 (trusted plugins only)", m.Name, l.TimeoutMS, int64(MaxDurationMS))
	case l.Fuel < 0:
		return nil, d.Errorf("limits.fuel", "plugin %s: fuel %d must be ≥ 0 (0: unlimited, trusted plugins only)", m.Name, l.Fuel)
	}
	if err := safefile.Relative(m.Wasm); err != nil {
		return nil, d.Errorf("wasm", "plugin %s: the module path must be relative to the manifest's folder and stay inside it: %v", m.Name, err)
	}
	if l.MemoryMiB == 0 {
		l.MemoryMiB = DefaultMemoryMiB
	}
	// timeout_ms = 0 or fuel = 0 written out means "no limit" (a trusted
	// plugin, see ABI.md §9); absent means the default.
	if !d.Has("limits.timeout_ms") {
		l.TimeoutMS = DefaultTimeoutMS
	}
	if !d.Has("limits.fuel") {
		l.Fuel = DefaultFuel
	}
	if !d.Has("limits.fuel") {
		m.Limits.Fuel = DefaultFuel
	}
	return &m, nil
}

// WasmPath is the module's path, resolved relative to the manifest (Load
// has checked that it stays in the manifest's folder; ReadWasm checks it
// again after resolving symbolic links).
func (m *Manifest) WasmPath() string {
	return filepath.Join(m.Dir, m.Wasm)
}

// wasmHeader is the magic number and binary version 1 that start every
// WebAssembly module.
var wasmHeader = []byte("\x00asm\x01\x00\x00\x00")

// ReadWasm reads the module and, when the manifest pins a sha256, verifies
// it, naming the plugin and both digests on a mismatch. The module must be
// a regular file inside the manifest's folder (after resolving symbolic
// links) of at most MaxModuleBytes, and must start with the WebAssembly
// header, which is checked before the rest is read.
func (m *Manifest) ReadWasm() ([]byte, error) {
	fail := func(format string, args ...any) error {
		if m.Bare {
			return fmt.Errorf("%s: %s", m.Path, fmt.Sprintf(format, args...))
		}
		return fmt.Errorf("plugin %s: %s: %s (wasm = %q in %s)", m.Name, m.Wasm, fmt.Sprintf(format, args...), m.Wasm, m.Path)
	}
	path, err := safefile.Inside(m.Dir, m.Wasm)
	if errors.Is(err, fs.ErrNotExist) {
		// The usual cause: a plugin made by kinfer new, not built yet.
		return nil, fail("the module does not exist yet: build it with kinfer build %s", m.Dir)
	}
	if err != nil {
		return nil, fail("%v", err)
	}
	f, err := safefile.Open(path, MaxModuleBytes)
	if err != nil {
		return nil, fail("%v", err)
	}
	defer f.Close()
	r := safefile.Limit(f, path, MaxModuleBytes)
	hdr := make([]byte, len(wasmHeader))
	if n, err := io.ReadFull(r, hdr); err != nil {
		return nil, fail("not a WebAssembly binary (%d bytes; a module starts with the 8 bytes %q)", n, wasmHeader)
	}
	if !bytes.Equal(hdr[:4], wasmHeader[:4]) {
		return nil, fail("not a WebAssembly binary (it starts with %q, a module with %q)", hdr[:4], wasmHeader[:4])
	}
	if !bytes.Equal(hdr[4:], wasmHeader[4:]) {
		return nil, fail("a WebAssembly binary of format version %d; kinfer reads version 1", le32(hdr[4:]))
	}
	b, err := safefile.ReadAll(r, hdr, safefile.Size(f))
	if err != nil {
		return nil, fail("%v", err)
	}
	if m.SHA256 != "" {
		if got := SHA256(b); got != m.SHA256 {
			return nil, fmt.Errorf("plugin %s (%s): sha256 mismatch for %s: manifest pins %s, file has %s (rebuilt by hand? kinfer build %s pins the new module; or the module is not the one the manifest was written for)",
				m.Name, m.Path, m.Wasm, m.SHA256, got, m.Dir)
		}
	}
	return b, nil
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// SHA256 is the lowercase hex digest of b.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
