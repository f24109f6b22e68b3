package guest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"
	"unsafe"

	"github.com/kinfer/kinfer/abi"
)

// Component is what a role package registers: the self-description that
// kinfer_describe returns and the function kinfer_configure calls with the
// study's setting values (in spec order).
type Component struct {
	Spec abi.Spec
	// Configure builds the component from its settings. It is called once
	// per instance by kinfer_configure, or by Ready with no values when the
	// spec lists no settings (the host then never calls kinfer_configure).
	Configure func(settings []float64) error
}

var (
	comp       *Component
	specJSON   []byte // kept alive: kinfer_describe hands out a pointer into it
	configured bool
	lastErr    []byte // kept alive: kinfer_last_error hands out a pointer into it
)

// Register installs the plugin's component. A plugin has exactly one; a
// second registration, an invalid spec or a spec that does not marshal to
// JSON panics, which makes the module trap in _initialize with the message
// on standard error (the plugin log).
func Register(c Component) {
	if comp != nil {
		panic(fmt.Sprintf("kinfer sdk: %s %q registered after %s %q: a plugin serves exactly one component",
			c.Spec.Kind, c.Spec.Name, comp.Spec.Kind, comp.Spec.Name))
	}
	if err := c.Spec.Validate(); err != nil {
		panic("kinfer sdk: " + err.Error())
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "<", ">" and "&" readable in docs
	if err := enc.Encode(c.Spec); err != nil {
		panic(fmt.Sprintf("kinfer sdk: spec of %q does not marshal to JSON: %v", c.Spec.Name, err))
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if c.Configure == nil {
		c.Configure = func([]float64) error { return nil }
	}
	comp, specJSON, configured = &c, b, false
}

// Spec returns the registered spec (the zero Spec before Register).
func Spec() abi.Spec {
	if comp == nil {
		return abi.Spec{}
	}
	return comp.Spec
}

// Describe returns the JSON self-description, or an error if nothing was
// registered (the plugin forgot to call Serve from init).
func Describe() ([]byte, error) {
	if comp == nil {
		return nil, fmt.Errorf("kinfer sdk: no component registered; call model.Serve, likelihood.Serve or method.Serve from an init function")
	}
	return specJSON, nil
}

// Configure passes the setting values to the registered component. It
// returns 0, or 1 with the reason left for kinfer_last_error.
func Configure(values []float64) int32 {
	if comp == nil {
		_, err := Describe()
		return Fail(err)
	}
	if want := len(comp.Spec.Settings); len(values) != want {
		return Failf("%s: configure got %d setting values, the spec lists %d", comp.Spec.Name, len(values), want)
	}
	err := Protect(comp.Spec.Name+": configure", func() error {
		return comp.Configure(append([]float64(nil), values...))
	})
	if err != nil {
		configured = false
		return Fail(err)
	}
	configured = true
	return 0
}

// Ready reports whether the component may serve role calls: it has been
// configured, or it has no settings (then it is configured here, once).
func Ready() error {
	if configured {
		return nil
	}
	if comp == nil {
		_, err := Describe()
		return err
	}
	if len(comp.Spec.Settings) > 0 {
		return fmt.Errorf("%s: kinfer_configure must be called before any role call (the spec lists %d settings)",
			comp.Spec.Name, len(comp.Spec.Settings))
	}
	if Configure(nil) != 0 {
		return fmt.Errorf("%s", lastErr)
	}
	return nil
}

// Fail records err for kinfer_last_error and returns 1.
func Fail(err error) int32 {
	SetError(err.Error())
	return 1
}

// Failf is Fail with a formatted message.
func Failf(format string, args ...any) int32 {
	SetError(fmt.Sprintf(format, args...))
	return 1
}

// SetError records the message kinfer_last_error returns.
func SetError(msg string) { lastErr = []byte(msg) }

// LastError is the last recorded error message (nil if none).
func LastError() []byte { return lastErr }

// Protect runs f and turns a panic into an error prefixed by what, naming
// the plugin's own frame where it panicked (author 22: the file and line
// were lost); the whole stack goes to the plugin log (kinfer run
// --verbose).
func Protect(what string, f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			stack := debug.Stack()
			for _, line := range strings.Split(strings.TrimRight(string(stack), "\n"), "\n") {
				Log(line) // a line each, as a trap's traceback (review 23)
			}
			err = fmt.Errorf("%s: panic: %v%s", what, r, PanicFrame(stack))
		}
	}()
	return f()
}

// PanicFrame is " in FUNC (FILE:LINE)" for the first frame of a
// debug.Stack() taken in a deferred recover that is the plugin's
// (OwnFrame), or "" if none is.
func PanicFrame(stack []byte) string {
	var r FrameReader
	for _, line := range strings.Split(string(stack), "\n") {
		if r.Line(line) {
			return " in " + r.Frame
		}
	}
	return ""
}

// FrameReader reads a Go traceback line by line for its first frame of the
// plugin's own code (OwnFrame, and a file that is not a dependency's: no
// "@version" in its path).
type FrameReader struct {
	fn string
	// Frame is "FUNC (FILE:LINE)" once found.
	Frame string
}

// Line reads one line; it reports whether Frame is found.
func (r *FrameReader) Line(line string) bool {
	if r.Frame != "" {
		return true
	}
	if file, ok := strings.CutPrefix(line, "\t"); ok {
		if r.fn != "" && !strings.Contains(file, "@") {
			if i := strings.LastIndex(file, " +0x"); i > 0 {
				file = file[:i]
			}
			r.Frame = r.fn + " (" + file + ")"
		}
		r.fn = ""
		return r.Frame != ""
	}
	r.fn, _ = OwnFrame(line)
	return false
}

// OwnFrame reads a function line of a Go traceback ("pkg.F(args)",
// "pkg.(*T).M(args)"): the function, and whether it is the plugin's own
// code, not the SDK's (github.com/kinfer/kinfer/sdk/...), the standard
// library's (an import path without a dot in its first element, but
// main), a panic or a goroutine header. own is false, fn "", for any other
// line. The host names a Go guest's panic by it too.
func OwnFrame(line string) (fn string, own bool) {
	// The function: up to its argument list, the first "(" that does not
	// open a method's receiver (".(*T).M(").
	name := ""
	for i := 0; i < len(line); i++ {
		if line[i] == '(' && (i == 0 || line[i-1] != '.') {
			name = line[:i]
			break
		}
	}
	if name == "" || strings.ContainsAny(name, " \t") || strings.HasPrefix(name, "github.com/kinfer/kinfer/sdk/") {
		return "", false
	}
	// The import path: up to the last "/", then to the first ".".
	slash := strings.LastIndex(name, "/")
	pkg, _, _ := strings.Cut(name[slash+1:], ".")
	pkg = name[:slash+1] + pkg
	first, _, _ := strings.Cut(pkg, "/")
	if !strings.Contains(first, ".") && pkg != "main" {
		return "", false // the standard library, panic(…)
	}
	return name, true
}

// blocks keeps every kinfer_alloc block reachable until kinfer_free.
var blocks = map[uintptr][]uint64{}

// Alloc returns an 8-byte aligned block of at least n bytes, kept alive
// until Free; nil if n is negative. A zero-byte request gets a distinct
// one-word block so that the host always receives a valid pointer.
func Alloc(n int) unsafe.Pointer {
	if n < 0 {
		return nil
	}
	w := (n + 7) / 8
	if w == 0 {
		w = 1
	}
	b := make([]uint64, w)
	p := unsafe.Pointer(&b[0])
	blocks[uintptr(p)] = b
	return p
}

// Free releases a block from Alloc; unknown pointers are ignored.
func Free(p unsafe.Pointer) { delete(blocks, uintptr(p)) }

// Live is the number of blocks allocated and not yet freed.
func Live() int { return len(blocks) }

// F64s views n f64 at p (nil when n is 0).
func F64s(p unsafe.Pointer, n int) []float64 {
	if n <= 0 || p == nil {
		return nil
	}
	return unsafe.Slice((*float64)(p), n)
}

// Statuses views n i32 statuses at p.
func Statuses(p unsafe.Pointer, n int) []abi.Status {
	if n <= 0 || p == nil {
		return nil
	}
	return unsafe.Slice((*abi.Status)(p), n)
}

// Bytes views n bytes at p.
func Bytes(p unsafe.Pointer, n int) []byte {
	if n <= 0 || p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// Ptr32 is the 32-bit linear-memory address of p (meaningful on wasm only).
func Ptr32(p unsafe.Pointer) uint32 { return uint32(uintptr(p)) }

// Span packs a pointer and a length as ABI.md §2 defines: (len << 32) | ptr.
// The empty span is 0.
func Span(p unsafe.Pointer, n int) int64 {
	if n == 0 || p == nil {
		return 0
	}
	return int64(uint64(uint32(n))<<32 | uint64(Ptr32(p)))
}

// SpanBytes is the span of b (length in bytes). b must stay unchanged and
// reachable until the next call into the instance.
func SpanBytes(b []byte) int64 {
	if len(b) == 0 {
		return 0
	}
	return Span(unsafe.Pointer(&b[0]), len(b))
}

// Log writes a diagnostic line to the host's plugin log (the kinfer_v1 log
// import, ABI.md §7); outside wasm it writes to standard error.
func Log(msg string) {
	if len(msg) == 0 {
		return
	}
	logLine(msg)
}

// Logf is Log with a format.
func Logf(format string, args ...any) { Log(fmt.Sprintf(format, args...)) }
