package wasm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/manifest"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/host/wasm/meter"
	"github.com/kinfer/kinfer/internal/guesttext"
)

// Plugin is a loaded, checked plugin module. Instances are created from it
// by Model, Likelihood and Method.
type Plugin struct {
	Manifest *manifest.Manifest
	// Spec is the module's self-description (kinfer_describe).
	Spec abi.Spec
	// Exports are the module's exported function names, sorted.
	Exports []string
	// Imports are the module's imports as "module.name", sorted.
	Imports []string

	rt       *Runtime
	wrt      wazero.Runtime
	compiled wazero.CompiledModule
	describe []byte        // the JSON, compared with every new instance's
	initFn   bool          // exports _initialize
	timeout  time.Duration // wall-clock backstop per call (per point of a batch); 0 = none
	fuel     int64         // fuel per call (per point of a batch); 0 = unlimited
	log      *pluginLog
	exported [numExports]bool
	// Notes are what a plugin author should know and the host ignores: a
	// capability unknown to ABI v1 (a misspelling), with the nearest
	// known one. kinfer inspect and validate print them.
	Notes []string
	deriv failTally // failed derivative calls (derivfail.go)
	evals failTally // points of an eval export with status 1 or 2

	mu    sync.Mutex
	spare *instance // the instance Load checked, unconfigured, for the first user
}

// pagesPerMiB is the number of 64 KiB wasm pages in a MiB.
const pagesPerMiB = 16

// Bounds of a plugin's code (Load): a Go plugin has about 2 MB of code in 2 000 functions, and compiling takes about 55 bytes per byte of code.
const (
	MaxCodeBytes = 12 << 20
	MaxFunctions = 200_000
)

// Load reads and verifies the plugin's module (manifest.ReadWasm checks the
// sha256 pin), checks its imports and memory, compiles it, instantiates it
// once to check kinfer_abi_version and read kinfer_describe, and checks that
// every export its spec needs is present with the ABI v1 signature.
func (r *Runtime) Load(ctx context.Context, m *manifest.Manifest) (*Plugin, error) {
	if m == nil {
		return nil, errors.New("wasm: nil manifest")
	}
	name := m.Name
	bin, err := m.ReadWasm()
	if err != nil {
		return nil, err
	}
	info, err := scanModule(bin)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %s: %w", name, m.Wasm, err)
	}
	// Compiling takes about 55 bytes of host memory per byte of code (up
	// to 340 per instruction: meter.MaxInstructions bounds those), and a
	// few KB per function, before the plugin runs: bounded (audit 5: a
	// 60 MB module, within the file's bound, crashed the host compiling).
	if info.CodeBytes > MaxCodeBytes || info.Functions > MaxFunctions {
		return nil, fmt.Errorf("plugin %s: %s has %d functions in %s of code; a plugin may have at most %d functions and %d MiB of code (compiling takes about 55 bytes of host memory per byte)",
			name, m.Wasm, info.Functions, safefile.Bytes(int64(info.CodeBytes)), MaxFunctions, MaxCodeBytes>>20)
	}
	p := &Plugin{
		Manifest: m,
		rt:       r,
		timeout:  timeoutOf(m.Limits.TimeoutMS),
		fuel:     m.Limits.Fuel,
		log:      newPluginLog(name, r.log),
	}
	for _, im := range info.Imports {
		p.Imports = append(p.Imports, im.Module+"."+im.Name)
		switch {
		case im.Kind == 2:
			return nil, fmt.Errorf("plugin %s imports its memory (%s); ABI v1 requires the module to define and export it", name, im)
		case im.Module == WASIModule && im.Kind == 0:
		case im.Module == HostModule && im.Kind == 0 && im.Name == "log":
		case im.Module == HostModule:
			return nil, fmt.Errorf("plugin %s imports %s, which %s does not provide (it has only log)", name, im, HostModule)
		default:
			return nil, fmt.Errorf("plugin %s imports %s; ABI v1 allows imports only from %s and %s", name, im, WASIModule, HostModule)
		}
	}
	sort.Strings(p.Imports)

	memMiB := m.Limits.MemoryMiB
	if memMiB <= 0 {
		memMiB = manifest.DefaultMemoryMiB
	}
	limit := uint64(memMiB) * pagesPerMiB
	if limit > 65536 {
		limit = 65536
	}
	if !info.HasMemory {
		return nil, fmt.Errorf("plugin %s defines no memory; ABI v1 requires an exported memory named \"memory\"", name)
	}
	if info.MemMin > limit {
		// Named as the manifest's key, as its other limits are (audit 18).
		where := ""
		if m.Path != "" {
			where = m.Path + `: key "limits.memory_mib": `
		}
		return nil, fmt.Errorf("%splugin %s declares a minimum memory of %d pages (%.4g MiB), more than its limit memory_mib=%d: raise memory_mib to at least %d",
			where, name, info.MemMin, float64(info.MemMin)/pagesPerMiB, memMiB, (info.MemMin+pagesPerMiB-1)/pagesPerMiB)
	}

	if !r.unmetered {
		if bin, err = instrument(bin); err != nil {
			return nil, fmt.Errorf("plugin %s: %s: %w", name, m.Wasm, err)
		}
	}
	if p.wrt, err = r.wazeroFor(ctx, uint32(limit)); err != nil {
		return nil, err
	}
	if p.compiled, err = r.compile(ctx, p.wrt, bin); err != nil {
		return nil, fmt.Errorf("plugin %s: compile %s: %w", name, m.Wasm, err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = p.Close(ctx)
		}
	}()
	// Link check: every imported function exists in the host with the same
	// signature (wazero would also refuse, less clearly, at instantiation).
	for _, def := range p.compiled.ImportedFunctions() {
		mod, fn, _ := def.Import()
		var hdef api.FunctionDefinition
		if host := p.wrt.Module(mod); host != nil {
			hdef = host.ExportedFunctionDefinitions()[fn]
		}
		if hdef == nil {
			return nil, fmt.Errorf("plugin %s imports %s.%s, which this host does not provide", name, mod, fn)
		}
		if got, want := sigString(def), sigString(hdef); got != want {
			return nil, fmt.Errorf("plugin %s imports %s.%s with signature %s; the host provides %s",
				name, mod, fn, sigHuman(got), sigHuman(want))
		}
	}
	if _, has := p.compiled.ExportedMemories()["memory"]; !has {
		return nil, fmt.Errorf("plugin %s does not export its memory as \"memory\" (ABI.md §1)", name)
	}
	defs := p.compiled.ExportedFunctions()
	for n := range defs {
		p.Exports = append(p.Exports, n)
	}
	sort.Strings(p.Exports)
	if d, has := defs["_initialize"]; has {
		if s := sigString(d); s != ":" {
			return nil, fmt.Errorf("plugin %s exports _initialize with signature %s; want ()", name, sigHuman(s))
		}
		p.initFn = true
	}
	for e := export(0); e < numExports; e++ {
		d, has := defs[exportSig[e].name]
		if !has {
			continue
		}
		if got := sigString(d); got != exportSig[e].sig {
			return nil, fmt.Errorf("plugin %s exports %s with signature %s; ABI v1 wants %s",
				name, e, sigHuman(got), sigHuman(exportSig[e].sig))
		}
		p.exported[e] = true
	}
	if !p.exported[exVersion] {
		return nil, fmt.Errorf("plugin %s does not export kinfer_abi_version; is it a kinfer plugin?", name)
	}

	// One instance: the version first, then the description.
	in, err := p.instantiate(withLog(ctx, p.log))
	if err != nil {
		return nil, err
	}
	defer func() {
		if !ok {
			in.close()
		}
	}()
	v, err := in.call(exVersion)
	if err != nil {
		return nil, err
	}
	if got := i32(v); got != abi.Version {
		return nil, fmt.Errorf("plugin %s has ABI version %d; this kinfer supports ABI version %d", name, got, abi.Version)
	}
	for _, e := range []export{exDescribe, exAlloc, exFree} {
		if !p.exported[e] {
			return nil, fmt.Errorf("plugin %s does not export %s (ABI.md §3)", name, e)
		}
	}
	if p.describe, err = in.describeJSON(); err != nil {
		return nil, err
	}
	if p.Spec, err = decodeSpec(p.describe); err != nil {
		return nil, fmt.Errorf("plugin %s: kinfer_describe: %w", name, err)
	}
	// The spec's name and version are guest text that errors quote as
	// they are (ABI.md §8: plugins may be untrusted): no control
	// characters (its list names are checked by Validate).
	for _, f := range []struct{ key, v string }{{"name", p.Spec.Name}, {"version", p.Spec.Version}} {
		if !guesttext.Clean(f.v) {
			return nil, fmt.Errorf("plugin %s: kinfer_describe: spec %s %q has a control character or invalid UTF-8", name, f.key, f.v)
		}
	}
	if err := p.Spec.Validate(); err != nil {
		return nil, fmt.Errorf("plugin %s: kinfer_describe: %w", name, err)
	}
	if m.Kind == "" {
		// A bare module (kinfer inspect FILE.wasm) has no manifest to
		// disagree with: its own description says what it is.
		m.Kind = p.Spec.Kind
	}
	if p.Spec.Kind != m.Kind {
		return nil, fmt.Errorf("plugin %s describes itself as a %s but its manifest %s says kind = %q", name, p.Spec.Kind, m.Path, m.Kind)
	}
	if err := p.checkExports(); err != nil {
		return nil, err
	}
	p.spare = in
	ok = true
	return p, nil
}

// compile compiles bin, giving up when ctx is done: wazero's compiler does
// not watch the context, and compiling a large module takes seconds without
// the cache. An abandoned compilation finishes in the background and is
// released.
func compile(ctx context.Context, w wazero.Runtime, bin []byte) (wazero.CompiledModule, error) {
	type result struct {
		c   wazero.CompiledModule
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := w.CompileModule(context.Background(), bin)
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		return r.c, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.c != nil {
				_ = r.c.Close(context.Background())
			}
		}()
		return nil, fmt.Errorf("interrupted: %w", context.Cause(ctx))
	}
}

// compile compiles bin with w, recovering from a damaged disk cache: wazero
// fails a compilation whose cache entry it cannot read (a file truncated
// by a full disk or a crash, changed bytes: "compilationcache: checksum
// mismatch", "error reading header: EOF") or write, and would fail it
// again on every run. A cache only saves compile time, so the entries of
// this wazero version are deleted (wazero's names do not say which module
// an entry holds) and the module is compiled again. When they cannot be
// deleted, or the cache fails again, the error names the cache folder and
// KINFER_CACHE_DIR=-.
func (r *Runtime) compile(ctx context.Context, w wazero.Runtime, bin []byte) (wazero.CompiledModule, error) {
	c, err := compile(ctx, w, bin)
	if err == nil || r.cacheDir == "" || ctx.Err() != nil || !isCacheError(err) {
		return c, err
	}
	advice := fmt.Sprintf("delete the compilation cache %s, or run with KINFER_CACHE_DIR=- (no disk cache)", r.cacheDir)
	if rmErr := clearCacheDir(r.cacheDir); rmErr != nil {
		return nil, fmt.Errorf("%w; the compilation cache could not be cleared (%v): %s", err, rmErr, advice)
	}
	if c, err = compile(ctx, w, bin); err != nil && isCacheError(err) {
		return nil, fmt.Errorf("%w (after clearing the damaged compilation cache): %s", err, advice)
	}
	return c, err
}

// isCacheError tells a failure of wazero's disk cache (its messages begin
// "compilationcache:"; a file it cannot open, create or rename is an
// *fs.PathError or *os.LinkError) from the module's own compile errors.
func isCacheError(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	return strings.Contains(err.Error(), "compilationcache:") || errors.As(err, &pe) || errors.As(err, &le)
}

// clearCacheDir deletes the entries in dir, wazero's folder of this
// version's cache entries, except the *.tmp files of entries being written
// (by another kinfer sharing the cache). A missing dir is no error.
func clearCacheDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// capExport is the export behind each capability, and the kind that may
// list it (ABI.md §4).
var capExport = map[abi.Capability]struct {
	kind abi.Kind
	ex   []export
}{
	abi.CapJacobian:        {abi.KindModel, []export{exModelJacobian}},
	abi.CapVJP:             {abi.KindModel, []export{exModelVJP}},
	abi.CapGradY:           {abi.KindLikelihood, []export{exLikGrad}},
	abi.CapResiduals:       {abi.KindLikelihood, []export{exLikResiduals}},
	abi.CapSigmaFree:       {abi.KindLikelihood, nil},
	abi.CapBatch:           {abi.KindLikelihood, []export{exLikEvalBatch}},
	abi.CapRowsIndependent: {abi.KindModel, nil},
	abi.CapPullback:        {abi.KindModel, []export{exModelForward, exModelPullback}},
	abi.CapCheckpoint:      {abi.KindMethod, []export{exMethodSave, exMethodLoad}},
	abi.CapLeastSquares:    {abi.KindMethod, []export{exMethodProblem, exMethodTellLSQ}},
	abi.CapPropagation:     {abi.KindMethod, []export{exMethodOutputs, exMethodTellOutputs}},
	abi.CapPriorDraws:      {abi.KindMethod, nil},
}

// nearCapability is the known capability of a component of kind k within
// two edits of c (a misspelling: "jacobain"), or "".
func nearCapability(c string, k abi.Kind) string {
	best, bestD := "", 3
	for name, ce := range capExport {
		if ce.kind != k {
			continue
		}
		if d := editDistance(c, name); d < bestD || (d == bestD && name < best) {
			best, bestD = name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// checkExports checks the exports the spec requires: the role's, configure
// when there are settings, and one per listed capability. Unknown
// capabilities are ignored (ABI.md §10: new capabilities do not change the
// ABI version) and logged.
func (p *Plugin) checkExports() error {
	var need []export
	switch p.Spec.Kind {
	case abi.KindModel:
		need = []export{exModelEval}
	case abi.KindLikelihood:
		need = []export{exLikEval}
	case abi.KindMethod:
		need = []export{exMethodInit, exMethodAsk, exMethodTell, exMethodDone, exMethodSamples, exMethodReport}
	}
	if len(p.Spec.Settings) > 0 {
		need = append(need, exConfigure)
	}
	for _, e := range need {
		if !p.exported[e] {
			sec := "§6" // the role exports
			if e == exConfigure {
				sec = "§3" // kinfer_configure, required when the spec lists settings
			}
			return fmt.Errorf("plugin %s is a %s but does not export %s (ABI.md %s)", p.Manifest.Name, p.Spec.Kind, e, sec)
		}
	}
	for _, c := range p.Spec.Capabilities {
		ce, known := capExport[c]
		if !known {
			note := fmt.Sprintf("capability %q is unknown to ABI v1 and ignored", c)
			if m := nearCapability(c, p.Spec.Kind); m != "" {
				note += fmt.Sprintf(" (did you mean %q?)", m)
			}
			p.Notes = append(p.Notes, note)
			p.log.line([]byte("note: " + note))
			continue
		}
		if ce.kind != p.Spec.Kind {
			return fmt.Errorf("plugin %s lists capability %q, which is for a %s, not a %s", p.Manifest.Name, c, ce.kind, p.Spec.Kind)
		}
		for _, e := range ce.ex {
			if !p.exported[e] {
				return fmt.Errorf("plugin %s lists capability %q but does not export %s", p.Manifest.Name, c, e)
			}
		}
	}
	return nil
}

// Close releases the compiled module and the spare instance. Components
// already created keep their instances but cannot create new ones.
func (p *Plugin) Close(ctx context.Context) error {
	p.mu.Lock()
	spare := p.spare
	p.spare = nil
	p.mu.Unlock()
	if spare != nil {
		spare.close()
	}
	if p.compiled != nil {
		return p.compiled.Close(ctx)
	}
	return nil
}

// instantiate creates one instance (running _initialize if exported) and
// resolves its exports. ctx carries the plugin log and is the parent of
// every call made on the instance.
func (p *Plugin) instantiate(ctx context.Context) (*instance, error) {
	in := &instance{p: p, out: &lineWriter{log: p.log}, rand: newCallRand()}
	in.setContext(ctx)
	modName := fmt.Sprintf("%s#%d", p.Manifest.Name, p.rt.seq.Add(1))
	// _initialize runs under the same limits as a call. The module's fuel
	// global starts at 0, so its first refill hands out the first allowance.
	in.meter.begin(p.fuel, p.timeout)
	in.meter.granted = 0
	mod, err := p.wrt.InstantiateModule(experimental.WithMemoryAllocator(in.callCtx, memoryAllocator), p.compiled, sandboxConfig(modName, in.out, in.rand, p.initFn))
	if err != nil {
		if mod != nil {
			_ = mod.Close(context.Background())
		}
		what := "instantiation"
		if p.initFn {
			what = "_initialize"
		}
		return nil, in.classify(what, err)
	}
	if !p.rt.unmetered {
		g, ok := mod.ExportedGlobal(meter.FuelExport).(api.MutableGlobal)
		if !ok {
			_ = mod.Close(context.Background())
			return nil, fmt.Errorf("plugin %s: the metered module lacks its fuel global", p.Manifest.Name)
		}
		in.fuel = g
	}
	in.mod = mod
	in.mem = mod.ExportedMemory("memory")
	if in.mem == nil {
		_ = mod.Close(context.Background())
		return nil, fmt.Errorf("plugin %s does not export its memory as \"memory\"", p.Manifest.Name)
	}
	for e := export(0); e < numExports; e++ {
		if p.exported[e] {
			in.fn[e] = mod.ExportedFunction(exportSig[e].name)
		}
	}
	return in, nil
}

// maxDescribe bounds the kinfer_describe JSON, in bytes (ABI.md §4).
const maxDescribe = 1 << 20

// describeJSON calls kinfer_describe and copies the JSON.
func (in *instance) describeJSON() ([]byte, error) {
	span, err := in.call(exDescribe)
	if err != nil {
		return nil, err
	}
	b, err := in.spanBytes(exDescribe, span, maxDescribe)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		// ABI.md §3: a guest that cannot describe itself returns 0 and may
		// say why through kinfer_last_error.
		return nil, in.malformed(exDescribe, "returned an empty span: %s", in.lastErrorOr())
	}
	return b, nil
}

// newInstance creates a ready-to-configure instance: the spare from Load if
// there is one, else a new one that goes through the same calls (ABI.md §3:
// _initialize, kinfer_abi_version, kinfer_describe) and must describe itself
// identically.
func (p *Plugin) newInstance(ctx context.Context) (*instance, error) {
	p.mu.Lock()
	in := p.spare
	p.spare = nil
	p.mu.Unlock()
	if in != nil {
		in.setContext(ctx)
		return in, nil
	}
	in, err := p.instantiate(ctx)
	if err != nil {
		return nil, err
	}
	v, err := in.call(exVersion)
	if err == nil && i32(v) != abi.Version {
		err = in.malformed(exVersion, "returned %d in a new instance (the first returned %d)", i32(v), abi.Version)
	}
	if err == nil {
		var b []byte
		if b, err = in.describeJSON(); err == nil && !bytes.Equal(b, p.describe) {
			err = in.malformed(exDescribe, "returned a different description in a new instance (instances must be identical, ABI.md §1)")
		}
	}
	if err != nil {
		in.close()
		return nil, err
	}
	return in, nil
}

// configure passes the setting values (ABI.md §3); no call when the spec
// has no settings.
func (in *instance) configure(settings []float64) error {
	if len(in.p.Spec.Settings) == 0 {
		return nil
	}
	var l layout
	off := l.f64(len(settings))
	base, err := in.buffer(exConfigure, l.n)
	if err != nil {
		return err
	}
	if err := in.writeF64s(exConfigure, base+uint32(off), settings); err != nil {
		return err
	}
	v, err := in.call(exConfigure, uint64(base+uint32(off)), uint64(len(settings)))
	if err != nil {
		return err
	}
	if code := i32(v); code != 0 {
		return &SettingsError{in.refused(exConfigure, code)}
	}
	return nil
}

// SettingsError is a plugin's refusal of its settings (kinfer_configure
// returned an error code), for a caller that locates the refused setting
// in a study.
type SettingsError struct{ err error }

func (e *SettingsError) Error() string { return e.err.Error() }
func (e *SettingsError) Unwrap() error { return e.err }

// newConfigured is newInstance followed by configure.
func (p *Plugin) newConfigured(ctx context.Context, settings []float64) (*instance, error) {
	in, err := p.newInstance(ctx)
	if err != nil {
		return nil, err
	}
	if err := in.configure(settings); err != nil {
		in.close()
		return nil, err
	}
	return in, nil
}

// checkSettings checks the number of setting values for component kind k.
func (p *Plugin) checkSettings(k abi.Kind, settings []float64) error {
	if p.Spec.Kind != k {
		return fmt.Errorf("plugin %s is a %s, not a %s", p.Manifest.Name, p.Spec.Kind, k)
	}
	if len(settings) != len(p.Spec.Settings) {
		names := make([]string, len(p.Spec.Settings))
		for i, s := range p.Spec.Settings {
			names[i] = s.Name
		}
		return fmt.Errorf("plugin %s: %d setting values given; its spec has %d %v", p.Manifest.Name, len(settings), len(names), names)
	}
	return nil
}

// trailing returns an error when b, decoded by dec up to the end of its
// first value, has more than white space after it. It names the first
// such byte and its offset, and a NUL byte as what it most likely is: a C
// string's terminator counted in the span's length (audit 6: `sizeof
// spec` instead of `sizeof spec - 1` got "data after the object").
func trailing(b []byte, dec *json.Decoder) error {
	off := int(dec.InputOffset())
	for off < len(b) && (b[off] == ' ' || b[off] == '\t' || b[off] == '\n' || b[off] == '\r') {
		off++ // JSON's white space
	}
	if off >= len(b) {
		return nil
	}
	if b[off] == 0 {
		return fmt.Errorf("a NUL byte at offset %d, after the object (%d bytes): the span's length counts the C string's terminator; give the length without it (sizeof s - 1, or strlen(s))", off, len(b))
	}
	rest := b[off:]
	if len(rest) > 16 {
		rest = rest[:16]
	}
	return fmt.Errorf("data after the object at offset %d (of %d bytes): %q", off, len(b), rest)
}

// decodeSpec decodes the self-description strictly: unknown keys, keys
// that differ from the schema only in case (encoding/json would accept
// them), duplicate keys and trailing data are errors.
func decodeSpec(b []byte) (abi.Spec, error) {
	var s abi.Spec
	if err := checkDepth(b, maxJSONDepth); err != nil {
		return s, err
	}
	keys := json.NewDecoder(bytes.NewReader(b))
	keys.UseNumber() // numbers are Decode's to check, with their field
	if err := checkKeys(keys, reflect.TypeOf(s), ""); err != nil {
		return s, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		// A number beyond float64 (1e999) came out as Go's "cannot
		// unmarshal number 1e999 into Go value of type float64" (audit 21).
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && strings.HasPrefix(te.Value, "number") && te.Type.Kind() == reflect.Float64 {
			return s, fmt.Errorf("invalid JSON: %s at %q is beyond the range of a 64-bit float (±1.8e308): give a finite number", te.Value, te.Field)
		}
		return s, fmt.Errorf("invalid JSON: %w", err)
	}
	if err := trailing(b, dec); err != nil {
		return s, fmt.Errorf("invalid JSON: %w", err)
	}
	for _, st := range s.Settings {
		if st.Output {
			// abi.Setting.Output (a setting naming a model output) is for
			// built-in methods: ABI version 1 has no such key (ABI.md §4,
			// §6.5).
			return s, fmt.Errorf("setting %q: unknown key \"output\" (not part of ABI version 1)", st.Name)
		}
	}
	return s, nil
}

// jsonErr is a JSON syntax error of a description; one that ends early
// says so ("EOF" alone told a C author nothing of a missing brace: author
// 22).
func jsonErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("invalid JSON: the text ends before its value does (a closing brace or bracket missing, or the span's length short?)")
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// jsonKeys maps the exact JSON key of each field of struct type t to its type.
func jsonKeys(t reflect.Type) map[string]reflect.Type {
	keys := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		keys[name] = f.Type
	}
	return keys
}

// checkKeys walks one JSON value against Go type t, checking object keys.
func checkKeys(dec *json.Decoder, t reflect.Type, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return jsonErr(err)
	}
	d, isDelim := tok.(json.Delim)
	if !isDelim {
		return nil // a scalar; its type is checked by Decode
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch d {
	case '{':
		var keys map[string]reflect.Type
		if t.Kind() == reflect.Struct {
			keys = jsonKeys(t)
		}
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return jsonErr(err)
			}
			k, _ := kt.(string)
			at := path + "." + k
			if path == "" {
				at = k
			}
			if seen[k] {
				return fmt.Errorf("duplicate key %q", at)
			}
			seen[k] = true
			var ft reflect.Type = reflect.TypeOf((*any)(nil)).Elem()
			if keys != nil {
				var ok bool
				if ft, ok = keys[k]; !ok {
					known := make([]string, 0, len(keys))
					for n := range keys {
						known = append(known, n)
					}
					sort.Strings(known)
					return fmt.Errorf("unknown key %q (known: %s)", at, strings.Join(known, ", "))
				}
			}
			if err := checkKeys(dec, ft, at); err != nil {
				return err
			}
		}
		// Keys whose absence would read as 0 and pass (ABI.md §4); a missing
		// kind or name is caught by abi.Spec.Validate.
		if t == reflect.TypeOf(abi.Param{}) {
			for _, k := range []string{"lower", "upper"} {
				if !seen[k] {
					return fmt.Errorf("%s: missing key %q (a param's bounds are required)", path, k)
				}
			}
		}
	case '[':
		et := reflect.TypeOf((*any)(nil)).Elem()
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			et = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := checkKeys(dec, et, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	if _, err = dec.Token(); err != nil { // the closing delimiter
		return jsonErr(err)
	}
	return nil
}
