//go:build unix

package build

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kinfer/kinfer/internal/proctest"
)

// A build whose context is cancelled (kinfer build's SIGINT/SIGTERM)
// kills the compiler and the processes it started, removes its temporary
// SDK folder and the partial module, and says it was interrupted; the
// plugin's folder is left as it was. (Audit round 3, hostile #5: a
// killed kinfer build left clang running and /tmp/kinfer-sdk-* behind.)
func TestBuildContextKillsCompiler(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	pidFile := filepath.Join(t.TempDir(), "pid")
	clang := proctest.FakeSleepingClang(t, pidFile)
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
	pid := proctest.WaitPID(t, pidFile, 30*time.Second, nil)
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
	if !proctest.Gone(pid, 5*time.Second) {
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
