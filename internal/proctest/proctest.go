//go:build unix

package proctest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// FakeSleepingClang writes, into a new folder, a clang that answers the
// toolchain probes (its own path as every sysroot file) and, asked to
// compile, starts a child that sleeps for five minutes, writes the child's
// process id to pidFile and waits for it: a compiler that never ends, with
// a process of its own below it (as clang -cc1 is below clang). It returns
// the script's path.
func FakeSleepingClang(t testing.TB, pidFile string) string {
	t.Helper()
	dir := t.TempDir()
	self := filepath.Join(dir, "clang")
	script := fmt.Sprintf(`#!/bin/sh
case "$*" in
*--version*) echo "fake clang 1.0"; exit 0;;
*-print-file-name=*|*-print-libgcc-file-name*) echo %q; exit 0;;
esac
sleep 300 &
echo $! > %q.part
mv %q.part %q
wait
`, self, pidFile, pidFile, pidFile)
	if err := os.WriteFile(self, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return self
}

// WaitPID waits up to timeout for pidFile and returns the process id it
// holds; it fails the test (with what) when the file does not come.
func WaitPID(t testing.TB, pidFile string, timeout time.Duration, what func() string) int {
	t.Helper()
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("%s: %q", pidFile, b)
			}
			return pid
		}
	}
	msg := ""
	if what != nil {
		msg = "; " + what()
	}
	t.Fatalf("the fake compiler did not start within %v%s", timeout, msg)
	return 0
}

// Gone reports, within timeout, whether process pid has ended (no such
// process, or a zombie nobody has reaped yet).
func Gone(pid int, timeout time.Duration) bool {
	for end := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return true
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
				return true
			}
		}
		if time.Now().After(end) {
			return false
		}
	}
}
