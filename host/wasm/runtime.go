package wasm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/tetratelabs/wazero/experimental"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kinfer/kinfer/host/wasm/meter"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Options configure a Runtime.
type Options struct {
	// CacheDir is the directory of wazero's compilation cache: "" is
	// os.UserCacheDir()/kinfer/wazero (an in-memory cache when there is no
	// user cache directory), "-" disables the disk cache (an in-memory
	// cache is still shared by the runtime's plugins).
	CacheDir string
	// Log receives plugin log lines (kinfer_v1.log, WASI stdout and
	// stderr), each prefixed by the plugin's name. nil discards them.
	Log io.Writer

	// unmetered loads modules without the meter (package meter): no
	// budget, no timeout, no interruption. Only this package's benchmarks
	// set it, to measure what the protection costs.
	unmetered bool
}

// HostModule is the name of the kinfer host-import module (ABI.md §7).
const HostModule = "kinfer_v1"

// WASIModule is the only other module a plugin may import (ABI.md §1).
const WASIModule = "wasi_snapshot_preview1"

// Runtime loads and runs plugins. It is safe for concurrent use.
//
// wazero enforces a memory limit per wazero runtime (RuntimeConfig.
// WithMemoryLimitPages), while ABI.md §8 limits each plugin to its own
// memory_mib. A Runtime therefore keeps one wazero runtime per distinct
// memory_mib, all sharing one compilation cache (compiled code does not
// depend on the limit: wazero applies it when it decodes a module, clamping
// the module's declared maximum, and memory.grow beyond it returns −1 inside
// the guest).
type Runtime struct {
	cache     wazero.CompilationCache
	cacheDir  string  // the disk cache's folder of this wazero version; "" if none
	log       *logMux // nil: discard
	seq       atomic.Uint64
	unmetered bool
	closedF   atomic.Bool // set by Close; stops calls in progress (meter)

	mu     sync.Mutex
	byMem  map[runtimeKey]wazero.Runtime
	closed bool
}

// NewRuntime creates a Runtime. The wazero runtimes (one per memory limit,
// with WASI and kinfer_v1) are created by Load when first needed, so ctx is
// not used yet; it is in the signature for symmetry with wazero.
func NewRuntime(ctx context.Context, o Options) (*Runtime, error) {
	_ = ctx
	cache, cacheDir, err := newCache(o.CacheDir)
	if err != nil {
		return nil, err
	}
	r := &Runtime{cache: cache, cacheDir: cacheDir, byMem: map[runtimeKey]wazero.Runtime{}, unmetered: o.unmetered}
	if o.Log != nil {
		r.log = &logMux{w: o.Log}
	}
	return r, nil
}

// newCache opens the compilation cache o.CacheDir names and returns, for
// a disk cache, the folder wazero keeps this version's entries in (see
// cacheEntriesDir).
func newCache(dir string) (wazero.CompilationCache, string, error) {
	switch dir {
	case "-":
		return wazero.NewCompilationCache(), "", nil
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return wazero.NewCompilationCache(), "", nil
		}
		dir = filepath.Join(base, "kinfer", "wazero")
		c, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			// The disk cache only saves compile time; run without it.
			return wazero.NewCompilationCache(), "", nil
		}
		return c, cacheEntriesDir(dir), nil
	}
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return nil, "", fmt.Errorf("wasm: compilation cache: %w", err)
	}
	return c, cacheEntriesDir(dir), nil
}

// cacheEntriesDir is the folder in which wazero's disk cache at dir keeps
// its entries, one file per compiled module: dir/wazero-VERSION-ARCH-OS,
// VERSION found as wazero finds it (internal/version.GetWazeroVersion,
// v1.12.0): the version of the module dependency named
// github.com/tetratelabs/wazero in the build info, else "dev". The same
// process asks the same build info, so both agree; TestDamagedCacheEntry
// checks the folder exists.
func cacheEntriesDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	v := ""
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if strings.Contains(d.Path, "github.com/tetratelabs/wazero") {
				v = d.Version
			}
		}
		if v == "" || v == "(devel)" {
			v = info.Main.Version
		}
	}
	if v == "" || v == "(devel)" {
		v = "dev"
	}
	return filepath.Join(dir, "wazero-"+v+"-"+goruntime.GOARCH+"-"+goruntime.GOOS)
}

// Close closes every wazero runtime (and so every plugin instance) and the
// compilation cache.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	r.closedF.Store(true)
	var errs []error
	for _, w := range r.byMem {
		errs = append(errs, w.Close(ctx))
	}
	r.byMem = nil
	errs = append(errs, r.cache.Close(ctx))
	return errors.Join(errs...)
}

func (r *Runtime) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed
}

// runtimeKey tells the wazero runtimes apart: the memory limit (pages).
// Interruption does not need a runtime of its own: it is compiled into the
// module by the meter (package meter) instead of wazero's
// WithCloseOnContextDone, whose check on every loop iteration costs a
// round trip out of compiled code (RATIONALE.md, "Why is every plugin
// metered by rewriting its module?").
type runtimeKey struct {
	pages uint32
}

// wazeroFor returns the wazero runtime for a memory limit in pages,
// creating it (with WASI, kinfer_v1 and the meter's kinfer_meter) on first
// use.
func (r *Runtime) wazeroFor(ctx context.Context, pages uint32) (wazero.Runtime, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("wasm: runtime is closed")
	}
	key := runtimeKey{pages}
	if w, ok := r.byMem[key]; ok {
		return w, nil
	}
	cfg := wazero.NewRuntimeConfigCompiler().
		WithCompilationCache(r.cache).
		WithMemoryLimitPages(pages)
	w := wazero.NewRuntimeWithConfig(ctx, cfg)
	// Host functions charge the calling guest's meter (hostcharge.go).
	hctx := experimental.WithFunctionListenerFactory(ctx, hostCharge{})
	wasi := w.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(wasi)
	wasi.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(fdFdstatGet), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).
		WithParameterNames("fd", "result.stat").
		Export("fd_fdstat_get")
	if _, err := wasi.Instantiate(hctx); err != nil {
		_ = w.Close(ctx)
		return nil, fmt.Errorf("wasm: instantiate WASI: %w", err)
	}
	_, err := w.NewHostModuleBuilder(HostModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostLog), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, nil).
		WithParameterNames("ptr", "nbytes").
		Export("log").
		Instantiate(hctx)
	if err != nil {
		_ = w.Close(ctx)
		return nil, fmt.Errorf("wasm: instantiate %s: %w", HostModule, err)
	}
	_, err = w.NewHostModuleBuilder(meter.ImportModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostRefill), []api.ValueType{api.ValueTypeI64}, []api.ValueType{api.ValueTypeI64}).
		WithParameterNames("counter").
		Export(meter.ImportName).
		Instantiate(ctx)
	if err != nil {
		_ = w.Close(ctx)
		return nil, fmt.Errorf("wasm: instantiate %s: %w", meter.ImportModule, err)
	}
	r.byMem[key] = w
	return w, nil
}

// hostLog is kinfer_v1.log(ptr, nbytes): one diagnostic line. An
// out-of-bounds span traps the guest (ABI.md §2).
func hostLog(ctx context.Context, mod api.Module, stack []uint64) {
	ptr, n := uint32(stack[0]), uint32(stack[1])
	mem := mod.Memory()
	if mem == nil {
		panic(errors.New("kinfer_v1.log: the module has no memory"))
	}
	b, ok := mem.Read(ptr, n)
	if !ok {
		panic(fmt.Errorf("kinfer_v1.log: span [%d, +%d) outside memory of %d bytes", ptr, n, mem.Size()))
	}
	// One diagnostic line (ABI.md §7): an embedded newline is shown
	// escaped, never as a second line a guest could dress as kinfer's.
	line := bytes.TrimRight(b, "\r\n")
	logFrom(ctx).line(line)
	// Kept with the call's stdout and stderr: a guest that logs its
	// reason and then traps (the AssemblyScript SDK's abort) is quoted in
	// the trap's message without --verbose.
	if w, _ := ctx.Value(tailKey{}).(*lineWriter); w != nil {
		w.keep(line)
	}
}
