package hostile

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The bounds every case is held to.
const (
	// deadline is the wall time a kinfer command may take; on expiry it is
	// killed and the case fails as a hang. The cases run in parallel, and
	// the decode bombs (60 MB documents) take 2–6 s alone: at 20 s four of
	// them were killed as hangs when other work loaded the 2 cores
	// (audit 4), so the margin is three times that.
	deadline = 60 * time.Second
	// workDeadline bounds a command that does real work (a resumed run and
	// the straight run it is compared with, a few CPU-seconds each): only a
	// hang should fail it, not the suite's other packages sharing the cores.
	workDeadline = 120 * time.Second
	// maxRSS is the peak resident memory the host may reach, in bytes.
	maxRSS = 1_000_000_000
	// killRSS stops a process whose memory runs away (a case over maxRSS
	// fails anyway; this keeps the shared machine alive).
	killRSS = 1 << 30
)

var (
	kinferBin string // the kinfer binary built by TestMain
	cacheDir  string // XDG_CACHE_HOME of every run: one wazero compilation cache
	testdata  string // absolute path of testdata/
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "kinfer-hostile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	kinferBin = filepath.Join(tmp, "kinfer")
	cacheDir = filepath.Join(tmp, "cache")
	if testdata, err = filepath.Abs("testdata"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	build := exec.Command("go", "build", "-o", kinferBin, "github.com/kinfer/kinfer/cmd/kinfer")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "hostile: building kinfer: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// result is the outcome of one kinfer command.
type result struct {
	args           []string
	code           int // exit code; -1 when killed by a signal
	signal         syscall.Signal
	stdout, stderr string
	rss            int64 // peak resident memory, bytes (getrusage)
	elapsed        time.Duration
	hung           bool   // killed at the deadline
	runaway        string // killed for memory: what was seen
}

func (r result) String() string {
	return fmt.Sprintf("kinfer %s: exit %d after %v, peak %d MB\nstderr:\n%s\nstdout:\n%s",
		strings.Join(r.args, " "), r.code, r.elapsed.Round(time.Millisecond), r.rss>>20, clip(r.stderr), clip(r.stdout))
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}

// kinfer runs the kinfer binary in dir with args. Before the deadline,
// signal (when not 0) is sent after delay: a user stopping the run.
func kinfer(t *testing.T, dir string, args []string, sig syscall.Signal, delay time.Duration) result {
	t.Helper()
	return kinferWithin(t, dir, args, sig, delay, deadline)
}

// kinferWithin is kinfer with its own wall deadline.
func kinferWithin(t *testing.T, dir string, args []string, sig syscall.Signal, delay, limit time.Duration) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, kinferBin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheDir, "GOTRACEBACK=all")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := result{args: args}
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() { // the memory watchdog, and the user's signal
		defer close(watched)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var sent bool
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if rss := residentBytes(cmd.Process.Pid); rss > killRSS {
				r.runaway = fmt.Sprintf("resident memory %d MB after %v", rss>>20, time.Since(start).Round(time.Millisecond))
				_ = cmd.Process.Kill()
				return
			}
			if sig != 0 && !sent && time.Since(start) >= delay {
				_ = cmd.Process.Signal(sig)
				sent = true
			}
		}
	}()
	err := cmd.Wait()
	close(stop)
	<-watched
	r.elapsed = time.Since(start)
	r.stdout, r.stderr = out.String(), errb.String()
	r.hung = ctx.Err() != nil
	r.code = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.signal = ws.Signal()
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		// Kilobytes on Linux. The figure includes the forked copy of this
		// test process before exec (Linux keeps the high-water mark across
		// exec), so it is an upper bound, never an underestimate.
		r.rss = int64(ru.Maxrss) * 1024
		if runtime.GOOS == "darwin" {
			r.rss = int64(ru.Maxrss)
		}
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("kinfer %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// residentBytes is the current resident memory of pid (Linux), 0 if unknown.
func residentBytes(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// problems lists what every case must satisfy and r does not: no hang, no
// crash, bounded memory. A signal the case sent itself is not a crash if
// kinfer handled it (it then exits with a code).
func problems(r result) []string {
	var p []string
	switch {
	case r.runaway != "":
		p = append(p, "memory ran away ("+r.runaway+"); killed")
	case r.hung:
		p = append(p, fmt.Sprintf("hung: killed at its deadline, after %v", r.elapsed.Round(time.Second)))
	case r.signal != 0:
		p = append(p, fmt.Sprintf("died of signal %v", r.signal))
	}
	for _, bad := range []string{"panic:", "fatal error:", "goroutine ", "[signal ", "runtime error:"} {
		if strings.Contains(r.stderr, bad) {
			p = append(p, fmt.Sprintf("the host crashed (%q in stderr)", bad))
			break
		}
	}
	if r.rss > maxRSS {
		p = append(p, fmt.Sprintf("peak memory %d MB, over %d MB", r.rss>>20, maxRSS/1_000_000))
	}
	return p
}

// healthy fails t with r's problems.
func healthy(t *testing.T, r result) {
	t.Helper()
	if p := problems(r); len(p) > 0 {
		t.Errorf("%s\n%v", strings.Join(p, "; "), r)
	}
}

// mentions checks that text has every wanted part; a part "a|b" wants one
// of a and b.
func mentions(text string, want []string) []string {
	var missing []string
	for _, w := range want {
		found := false
		for _, alt := range strings.Split(w, "|") {
			if strings.Contains(text, alt) {
				found = true
			}
		}
		if !found {
			missing = append(missing, w)
		}
	}
	return missing
}
