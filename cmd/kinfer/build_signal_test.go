//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kinfer/kinfer/internal/proctest"
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
			pidFile := filepath.Join(t.TempDir(), "pid")
			clang := proctest.FakeSleepingClang(t, pidFile)
			dir := t.TempDir()
			mustWrite(t, filepath.Join(dir, "m.c"), "int x;\n")
			manifest := "name = \"m\"\nversion = \"0.1.0\"\nkind = \"model\"\nabi = 1\nwasm = \"m.wasm\"\n"
			mustWrite(t, filepath.Join(dir, "plugin.toml"), manifest)

			p := startKinfer(t, []string{"PATH=" + filepath.Dir(clang) + ":" + os.Getenv("PATH"), "TMPDIR=" + tmp}, "build", dir)
			pid := proctest.WaitPID(t, pidFile, 30*time.Second, func() string { return "stderr:\n" + p.stderr.all.String() })
			defer syscall.Kill(pid, syscall.SIGKILL)
			if m, _ := filepath.Glob(filepath.Join(tmp, "kinfer-sdk-*")); len(m) != 1 {
				t.Fatalf("the build's temporary SDK folder: %v, want one", m)
			}
			el, code := p.signalAndWait(t, sig)
			t.Logf("exit %d %v after %s; stderr:\n%s", code, el, sig, p.stderr.all.String())
			if code != 1 {
				t.Errorf("exit code %d, want 1 (an interrupted build)", code)
			}
			if !proctest.Gone(pid, 5*time.Second) {
				t.Errorf("the compiler's child (pid %d) still runs after kinfer build got %s", pid, sig)
			}
			if m, _ := filepath.Glob(filepath.Join(tmp, "kinfer-sdk-*")); len(m) != 0 {
				t.Errorf("left behind: %v", m)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "m.wasm*.tmp")); len(m) != 0 {
				t.Errorf("left behind: the partial module %v", m)
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
