package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/tomlx"
)

// Default limits, used when [limits] omits a field.
const (
	DefaultMemoryMiB = 256
	DefaultTimeoutMS = 10000
	// DefaultFuel is the deterministic budget of one call (per point of a
	// model's batch), in meter units of about one wasm instruction: some
	// seconds of guest code.
	DefaultFuel = 20_000_000_000
)

// Limits are the per-instance sandbox limits of a plugin.
type Limits struct {
	MemoryMiB int `toml:"memory_mib"`
	// TimeoutMS bounds every call into the plugin; 0 disables the bound and
	// the interruption checks that enforce it (trusted plugins only).
	TimeoutMS int `toml:"timeout_ms"`
	// Fuel is the deterministic budget of one call (per point of a model's
	// batch); 0 = unlimited (trusted plugins only).
	Fuel int64 `toml:"fuel"`
}

// Interruptible reports whether calls into the plugin can be stopped (by
// its timeout or a cancelled run).
func (l Limits) Interruptible() bool { return l.TimeoutMS > 0 }

// Build records how the committed wasm was produced, so that a rebuild can be
// checked against it (see host/build). Optional.
type Build struct {
	Lang      string `toml:"lang"`      // "go" or "c"
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
}

var (
	nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	hexRE  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Load reads and validates the manifest at path.
func Load(path string) (*Manifest, error) {
	var m Manifest
	d, err := tomlx.DecodeFile(path, &m)
	if err != nil {
		return nil, err
	}
	m.Path = path
	m.Dir = filepath.Dir(path)
	for _, k := range []string{"name", "version", "kind", "abi", "wasm"} {
		if !d.Has(k) {
			return nil, &tomlx.Error{File: path, Key: k, Msg: "missing required field"}
		}
	}
	switch {
	case !nameRE.MatchString(m.Name):
		return nil, d.Errorf("name", "plugin name %q must match [a-z0-9][a-z0-9-]*", m.Name)
	case m.Kind != abi.KindModel && m.Kind != abi.KindLikelihood && m.Kind != abi.KindMethod:
		return nil, d.Errorf("kind", "kind %q: want model, likelihood or method", m.Kind)
	case m.ABI != abi.Version:
		return nil, d.Errorf("abi", "plugin %s declares ABI %d; this kinfer supports ABI %d", m.Name, m.ABI, abi.Version)
	case m.SHA256 != "" && !hexRE.MatchString(m.SHA256):
		return nil, d.Errorf("sha256", "plugin %s: sha256 must be 64 lowercase hex digits", m.Name)
	case m.Limits.MemoryMiB < 0 || m.Limits.MemoryMiB > 4096:
		return nil, d.Errorf("limits.memory_mib", "plugin %s: memory_mib %d outside [1, 4096]", m.Name, m.Limits.MemoryMiB)
	case m.Limits.TimeoutMS < 0:
		return nil, d.Errorf("limits.timeout_ms", "plugin %s: timeout_ms %d must be ≥ 0 (0: no timeout, trusted plugins only)", m.Name, m.Limits.TimeoutMS)
	}
	if m.Limits.MemoryMiB == 0 {
		m.Limits.MemoryMiB = DefaultMemoryMiB
	}
	// timeout_ms = 0 written out means "no timeout" (a trusted plugin runs
	// without the interruption checks, see ABI.md §9); absent means the
	// default.
	if !d.Has("limits.timeout_ms") {
		m.Limits.TimeoutMS = DefaultTimeoutMS
	}
	if !d.Has("limits.fuel") {
		m.Limits.Fuel = DefaultFuel
	}
	return &m, nil
}

// WasmPath is the module's path, resolved relative to the manifest.
func (m *Manifest) WasmPath() string {
	if filepath.IsAbs(m.Wasm) {
		return m.Wasm
	}
	return filepath.Join(m.Dir, m.Wasm)
}

// ReadWasm reads the module and, when the manifest pins a sha256, verifies
// it, naming the plugin and both digests on a mismatch.
func (m *Manifest) ReadWasm() ([]byte, error) {
	b, err := os.ReadFile(m.WasmPath())
	if err != nil {
		return nil, fmt.Errorf("plugin %s (%s): %w", m.Name, m.Path, err)
	}
	if m.SHA256 != "" {
		if got := SHA256(b); got != m.SHA256 {
			return nil, fmt.Errorf("plugin %s (%s): sha256 mismatch for %s: manifest pins %s, file has %s",
				m.Name, m.Path, m.Wasm, m.SHA256, got)
		}
	}
	return b, nil
}

// SHA256 is the lowercase hex digest of b.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
