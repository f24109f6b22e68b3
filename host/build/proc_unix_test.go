//go:build unix

package build

import (
	"context"
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

// fakeSleepingClang writes, into a new folder, a clang that answers the
// toolchain probes (its own path as every sysroot file) and, asked to
// compile, starts a child that sleeps for five minutes, writes the child's
// process id to pidFile and waits for it: a compiler that never ends, with
// a process of its own below it (as clang -cc1 is below clang). It returns
// the script's path.
func fakeSleepingClang(t *testing.T, pidFile string) string {
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
	must(t, os.WriteFile(self, []byte(script), 0o755))
	return self
}

// waitPID waits for pidFile and returns the process id it holds.
func waitPID(t *testing.T, pidFile string, timeout time.Duration) int {
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
	t.Fatalf("the fake compiler did not start within %v", timeout)
	return 0
}

// gone reports, within timeout, whether process pid has ended (no such
// process, or a zombie nobody has reaped yet).
func gone(pid int, timeout time.Duration) bool {
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

// A build whose context is cancelled (kinfer build's SIGINT/SIGTERM)
// kills the compiler and the processes it started, removes its temporary
// SDK folder and the partial module, and says it was interrupted; the
// plugin's folder is left as it was. (Audit round 3, hostile #5: a
// killed kinfer build left clang running and /tmp/kinfer-sdk-* behind.)
func TestBuildContextKillsCompiler(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	pidFile := filepath.Join(t.TempDir(), "pid")
	clang := fakeSleepingClang(t, pidFile)
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "twice.c"), []byte(cPlugin), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "plugin.toml"), []byte(cManifest), 0o644))

	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := make(chan error, 1)
	go func() {
		_, err := BuildContext(ctx, dir, Options{Clang: clang})
		done <- err
	}()
	pid := waitPID(t, pidFile, 30*time.Second)
	defer syscall.Kill(pid, syscall.SIGKILL)
	if m, _ := filepath.Glob(filepath.Join(tmp, "kinfer-sdk-*")); len(m) != 1 {
		t.Fatalf("the build's temporary SDK folder: %v, want one (the test must see it to see it go)", m)
	}
	start := time.Now()
	cancel(errors.New("interrupted by SIGTERM"))
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("BuildContext did not return within 10 s of the cancellation")
	}
	t.Logf("returned %v after the cancellation: %v", time.Since(start), err)
	if err == nil || !strings.Contains(err.Error(), "interrupted") || !strings.Contains(err.Error(), "SIGTERM") {
		t.Errorf("error %v, want one saying the build was interrupted by SIGTERM", err)
	}
	if !gone(pid, 5*time.Second) {
		t.Errorf("the compiler's child (pid %d) still runs after the build was cancelled", pid)
	}
	if m, _ := filepath.Glob(filepath.Join(tmp, "kinfer-sdk-*")); len(m) != 0 {
		t.Errorf("left behind: %v", m)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("the plugin's folder holds %d files after the interrupted build, want its 2", len(ents))
	}
	if got := string(mustReadFile(t, filepath.Join(dir, "plugin.toml"))); got != cManifest {
		t.Errorf("plugin.toml changed:\n%s", got)
	}

	// An already cancelled context starts nothing.
	if _, err := BuildContext(ctx, dir, Options{Clang: clang}); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("a build with a cancelled context: %v", err)
	}
}
