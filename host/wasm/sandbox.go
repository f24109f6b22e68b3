package wasm

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/kinfer/kinfer/internal/guesttext"
	"github.com/kinfer/kinfer/sdk/go/guest"
)

// The sandbox of ABI.md §8. wazero's defaults are already sandboxed, but not
// in the way the ABI states, so everything is set explicitly here (checked
// against wazero v1.12.0, config.go and internal/sys/sys.go):
//
//   - wazero's default walltime and nanotime are fake clocks that *advance by
//     1 ms on every reading* (internal/platform/time.go), so a plugin could
//     observe how often it has been called. ABI v1 promises a fixed instant,
//     so both clocks are frozen.
//   - The frozen monotonic clock must not read 0: the Go runtime (wasip1)
//     aborts at start-up with "nanotime returning zero". It reads 1 s.
//   - wazero's default random source is math/rand seeded with 42, shared by
//     nothing but also not documented as stable across wazero versions. Each
//     instance gets its own ChaCha8 stream with a fixed key that restarts at
//     every call (callRand), so what a call reads depends on the call alone,
//     never on the instance or on earlier calls.
//   - No FS config, no args, no env: wazero gives none by default; stdin
//     reads EOF; stdout and stderr go to the plugin log.
//   - nanosleep (poll_oneoff on a clock) and sched_yield return at once
//     (wazero's default, made explicit), and the clocks do not advance: a
//     plugin that sleeps goes on at once, one that waits for time to pass
//     spins until its fuel runs out (ABI.md §8).

// fixedWalltime is 2022-01-01T00:00:00Z (the epoch of wazero's fake clock).
const fixedWalltime = 1640995200

// fixedNanotime is the frozen monotonic clock reading (non-zero, see above).
const fixedNanotime = 1_000_000_000

// randKey is the fixed key of every instance's random_get stream.
var randKey = [32]byte([]byte("kinfer ABI v1 fixed random_get.."))

func frozenWalltime() (int64, int32) { return fixedWalltime, 0 }
func frozenNanotime() int64          { return fixedNanotime }
func noSleep(int64)                  {}
func noYield()                       {}

// eofReader is an empty stdin.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// callRand is an instance's random_get source: a ChaCha8 stream with a
// fixed key that restarts at every call into the instance (ABI.md §8), so
// that what a call reads depends on nothing but the call. It also notes
// whether a call read it.
type callRand struct {
	c    *rand.ChaCha8
	used bool // read since the last restart
}

func newCallRand() *callRand { return &callRand{c: rand.NewChaCha8(randKey)} }

func (r *callRand) Read(p []byte) (int, error) {
	r.used = true
	return r.c.Read(p)
}

// restart rewinds the stream to its start if it was read.
func (r *callRand) restart() {
	if r.used {
		r.c.Seed(randKey)
		r.used = false
	}
}

// sandboxConfig is the wazero module configuration of one instance.
func sandboxConfig(name string, out io.Writer, rnd io.Reader, initialize bool) wazero.ModuleConfig {
	cfg := wazero.NewModuleConfig().
		WithName(name).
		WithStdin(eofReader{}).
		WithStdout(out).
		WithStderr(out).
		WithWalltime(frozenWalltime, sys.ClockResolution(1000)).
		WithNanotime(frozenNanotime, sys.ClockResolution(1000)).
		WithNanosleep(noSleep).
		WithOsyield(noYield).
		WithRandSource(rnd)
	if initialize {
		return cfg.WithStartFunctions("_initialize")
	}
	return cfg.WithStartFunctions() // never _start (ABI.md §1)
}

// maxLogLine is the longest plugin log line kept, in bytes (ABI.md §7).
const maxLogLine = 4096

// logMux serialises whole lines from all plugins to one writer.
type logMux struct {
	mu sync.Mutex
	w  io.Writer
}

// pluginLog writes lines prefixed by a plugin's name.
type pluginLog struct {
	name string
	mux  *logMux // nil: discard
	buf  sync.Pool
	// written counts the bytes shown; past maxLogBytes the plugin's
	// further lines are dropped, with one notice.
	written atomic.Int64
}

// maxLogBytes bounds what one plugin may write to the log over a run (its
// lines as shown): a plugin logging 4 KB lines in a loop wrote 29 GB in
// 60 s with --verbose, and the terminal's slowness turned its
// deterministic fuel fault into a wall-clock timeout (audit 5). Its fuel
// still pays for every line it writes.
const maxLogBytes = 16 << 20

func newPluginLog(name string, mux *logMux) *pluginLog {
	return &pluginLog{name: name, mux: mux}
}

// line writes one line (no newline inside) truncated to maxLogLine bytes.
func (l *pluginLog) line(b []byte) {
	if l == nil || l.mux == nil {
		return
	}
	if len(b) > maxLogLine {
		b = b[:maxLogLine]
	}
	b = bytes.TrimRight(b, "\r")
	bp, _ := l.buf.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	out := append((*bp)[:0], l.name...)
	out = append(out, ": "...)
	// Guest text: control characters escaped, so that a plugin cannot
	// drive the terminal or forge kinfer's lines (ABI.md §7, §8).
	out = append(out, guesttext.Escape(string(b))...)
	out = append(out, '\n')
	n := int64(len(out))
	if w := l.written.Add(n); w > maxLogBytes {
		if w-n <= maxLogBytes { // the line that crosses the bound
			out = append(out[:0], l.name...)
			out = append(out, fmt.Sprintf(": (log of %s past %d MiB: its further lines are not shown)\n", l.name, maxLogBytes>>20)...)
		} else {
			out = out[:0]
		}
	}
	if len(out) > 0 {
		l.mux.mu.Lock()
		_, _ = l.mux.w.Write(out)
		l.mux.mu.Unlock()
	}
	*bp = out
	l.buf.Put(bp)
}

// message writes a kinfer_v1.log message: at most maxLogLine bytes, one
// prefixed line per embedded newline.
func (l *pluginLog) message(b []byte) {
	if l == nil || l.mux == nil {
		return
	}
	if len(b) > maxLogLine {
		b = b[:maxLogLine]
	}
	b = bytes.TrimRight(b, "\n")
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.line(b)
			return
		}
		l.line(b[:i])
		b = b[i+1:]
	}
}

// lineWriter is one instance's WASI stdout/stderr: it cuts the byte stream
// into lines for pluginLog, keeping at most maxLogLine bytes of each.
type lineWriter struct {
	log  *pluginLog
	mu   sync.Mutex
	buf  []byte
	drop bool // the current line overflowed and was emitted; skip to '\n'
	// tail keeps the last tailLines lines of the current guest call (at
	// most tailBytes each) even when the log is off, for the message of a
	// guest that exits or traps: a Go guest's runtime writes its reason
	// ("out of memory") to stderr before proc_exit(2).
	tail [tailLines]string
	next int
	// headline is the call's first line that states why a guest dies (a
	// Go runtime's "panic: …" or "fatal error: …", before its traceback,
	// which fills the tail).
	headline string
	// frame reads the traceback after the headline for its first frame of
	// the plugin's own code (not the Go runtime's, not kinfer's SDK, not
	// a dependency's): the author's file and line, which the tail's last
	// frames (the SDK's) leave out (author 22).
	frame guest.FrameReader
}

const (
	tailLines = 3
	tailBytes = 200
)

// emit sends one line to the log and keeps it in the tail.
func (w *lineWriter) emit(b []byte) {
	if w.headline == "" && (bytes.HasPrefix(b, []byte("panic: ")) || bytes.HasPrefix(b, []byte("fatal error: "))) {
		w.headline = string(b[:min(len(b), tailBytes)])
	}
	if w.headline != "" {
		w.frame.Line(string(b[:min(len(b), tailBytes)]))
	}
	if len(bytes.TrimSpace(b)) > 0 {
		w.tail[w.next%tailLines] = string(b[:min(len(b), tailBytes)])
		w.next++
	}
	if w.log != nil && w.log.mux != nil {
		w.log.line(b)
	}
}

// tailKey is the context key of a call's instance's lineWriter, which
// also keeps the call's kinfer_v1.log lines (hostLog) for a fault's
// message.
type tailKey struct{}

// keep adds a line to the tail without writing it to the log (the caller
// did).
func (w *lineWriter) keep(b []byte) {
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	w.mu.Lock()
	w.tail[w.next%tailLines] = string(b[:min(len(b), tailBytes)])
	w.next++
	w.mu.Unlock()
}

// lastLines returns the kept tail, oldest first, escaped and quoted
// ("" when the guest wrote nothing).
func (w *lineWriter) lastLines() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 && !w.drop {
		w.emitLocked()
	}
	// Everything here is the guest's text, so all of it is quoted, its
	// own quotes escaped (hostile 25: a plugin printed a "panic:" line and
	// a frame whose text read as kinfer's advice, outside the quotes).
	quote := func(s string) string { return `"` + strings.ReplaceAll(guesttext.Escape(s), `"`, `\"`) + `"` }
	var parts []string
	if w.headline != "" {
		h := quote(w.headline)
		if w.frame.Frame != "" {
			h += " in " + quote(w.frame.Frame)
		}
		parts = append(parts, h+" …")
	}
	for k := max(0, w.next-tailLines); k < w.next; k++ {
		parts = append(parts, quote(w.tail[k%tailLines]))
	}
	return strings.Join(parts, " | ")
}

// resetTail forgets the kept lines (at the start of a guest call).
func (w *lineWriter) resetTail() {
	w.mu.Lock()
	w.next, w.headline, w.frame = 0, "", guest.FrameReader{}
	w.mu.Unlock()
}

// emitLocked emits the pending partial line (w.mu held).
func (w *lineWriter) emitLocked() {
	w.emit(w.buf)
	w.buf, w.drop = w.buf[:0], false
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !w.drop {
			room := maxLogLine - len(w.buf)
			if len(chunk) > room {
				w.buf = append(w.buf, chunk[:room]...)
				w.emit(w.buf)
				w.buf = w.buf[:0]
				w.drop = true
			} else {
				w.buf = append(w.buf, chunk...)
			}
		}
		if i < 0 {
			break
		}
		if !w.drop {
			w.emit(w.buf)
		}
		w.buf, w.drop = w.buf[:0], false
		p = p[i+1:]
	}
	return n, nil
}

// flush emits a pending partial line.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 && !w.drop {
		w.emit(w.buf)
	}
	w.buf, w.drop = w.buf[:0], false
}

// logKey carries a *pluginLog in the context of every guest call, for the
// kinfer_v1.log host function.
type logKey struct{}

func withLog(ctx context.Context, l *pluginLog) context.Context {
	return context.WithValue(ctx, logKey{}, l)
}

func logFrom(ctx context.Context) *pluginLog {
	l, _ := ctx.Value(logKey{}).(*pluginLog)
	return l
}

// WASI errno values and rights (WASI snapshot preview 1).
const (
	wasiErrnoBadf  = 8
	wasiErrnoFault = 21

	wasiFiletypeCharDevice = 2
	wasiRightFdRead        = 1 << 1
	wasiRightFdSetFlags    = 1 << 3
	wasiRightFdWrite       = 1 << 6
)

// fdFdstatGet is WASI's fd_fdstat_get for a plugin, whose only open files
// are the standard streams (no directory is preopened, ABI.md §8): it
// reports descriptors 0–2 as character devices that cannot seek or tell,
// i.e. terminals, and any other descriptor as EBADF. wazero reports a
// stream that is not an *os.File as a block device, so C's stdio
// (wasi-libc's isatty) buffered a plugin's stdout fully: printf lines
// reached the plugin log late, in 1 KiB bursts, and the last ones (those
// just before a trap) never (audit 5). As a terminal, stdout is line
// buffered, and each printed line is one log line when it is printed.
func fdFdstatGet(_ context.Context, mod api.Module, stack []uint64) {
	fd, ptr := uint32(stack[0]), uint32(stack[1])
	if fd > 2 {
		stack[0] = wasiErrnoBadf
		return
	}
	mem := mod.Memory()
	if mem == nil {
		stack[0] = wasiErrnoFault
		return
	}
	buf, ok := mem.Read(ptr, 24)
	if !ok {
		stack[0] = wasiErrnoFault
		return
	}
	clear(buf)
	buf[0] = wasiFiletypeCharDevice                                                              // fs_filetype; fs_flags (u16 at 2) 0
	binary.LittleEndian.PutUint64(buf[8:], wasiRightFdRead|wasiRightFdSetFlags|wasiRightFdWrite) // fs_rights_base
	stack[0] = 0
}
