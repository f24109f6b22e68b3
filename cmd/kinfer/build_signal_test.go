//go:build unix

package main

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

// kinfer build stopped by SIGTERM (timeout, a CI job's cancel) or SIGINT
// kills the compiler with the processes it started and removes its
// temporary SDK folder. The compiler is a fake clang on PATH whose child
// sleeps for five minutes (as clang -cc1 runs below clang). Before the
// fix, SIGTERM killed kinfer alone: the compiler ran on as an orphan and
// /tmp/kinfer-sdk-* stayed (audit round 3, hostile #5).
func TestBuildSignalStopsCompiler(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp := t.TempDir()
			bin := t.TempDir()
			pidFile := filepath.Join(t.TempDir(), "pid")
			clang := filepath.Join(bin, "clang")
			script := fmt.Sprintf(`#!/bin/sh
case "$*" in
*--version*) echo "fake clang 1.0"; exit 0;;
*-print-file-name=*|*-print-libgcc-file-name*) echo %q; exit 0;;
esac
sleep 300 &
echo $! > %q.part
mv %q.part %q
wait
`, clang, pidFile, pidFile, pidFile)
			if err := os.WriteFile(clang, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, "m.c"), "int x;\n")
			manifest := "name = \"m\"\nversion = \"0.1.0\"\nkind = \"model\"\nabi = 1\nwasm = \"m.wasm\"\n"
			mustWrite(t, filepath.Join(dir, "plugin.toml"), manifest)

			p := startKinfer(t, []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "TMPDIR=" + tmp}, "build", dir)
			var pid int
			for end := time.Now().Add(30 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
				if b, err := os.ReadFile(pidFile); err == nil {
					pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				} else if time.Now().After(end) {
					t.Fatalf("the fake compiler did not start; stderr:\n%s", p.stderr.all.String())
				}
			}
			defer syscall.Kill(pid, syscall.SIGKILL)
			if m, _ := filepath.Glob(filepath.Join(tmp, "kinfer-sdk-*")); len(m) != 1 {
				t.Fatalf("the build's temporary SDK folder: %v, want one", m)
			}
			el, code := p.signalAndWait(t, sig)
			t.Logf("exit %d %v after %s; stderr:\n%s", code, el, sig, p.stderr.all.String())
			if code != 1 {
				t.Errorf("exit code %d, want 1 (an interrupted build)", code)
			}
			if !gone(pid, 5*time.Second) {
				t.Errorf("the compiler's child (pid %d) still runs after kinfer build got %s", pid, sig)
			}
			if m, _ := filepath.Glob(filepath.Join(tmp, "kinfer-sdk-*")); len(m) != 0 {
				t.Errorf("left behind: %v", m)
			}
			if _, err := os.Stat(filepath.Join(dir, "m.wasm.tmp")); err == nil {
				t.Error("left behind: the partial module m.wasm.tmp")
			}
			if !strings.Contains(p.stderr.all.String(), "interrupted by "+signalName(sig)) {
				t.Errorf("stderr does not say the build was interrupted by %s", signalName(sig))
			}
		})
	}
}

func mustWrite(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
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
