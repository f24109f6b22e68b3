package run

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// LockToRead takes a run directory's lock as LockDir does, so that a
// reader (report, --verify) fails at once while a run holds it, naming
// its pid. Where LockDir cannot write the lock file (a folder of another
// user, a read-only mount; simulated here, the tests may run as root) it
// locks the lock file opened read-only: still refused while a run holds
// it, and while the reader holds it a run is refused; no lock file at all
// means no run is writing there.
func TestLockToRead(t *testing.T) {
	dir := t.TempDir()
	run, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pid := "(pid " + strconv.Itoa(os.Getpid()) + ")"
	if _, err := LockToRead(dir); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), pid) {
		t.Errorf("while a run holds %s: %v, want the lock's error naming %s", dir, err, pid)
	}
	run.Unlock()
	l, err := LockToRead(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockDir(dir); !errors.Is(err, ErrLocked) {
		t.Errorf("a run while a reader holds the lock: %v, want refused", err)
	}
	l.Unlock()

	// A folder this user cannot write.
	defer func() { lockDir = LockDir }()
	lockDir = func(dir string) (*DirLock, error) {
		return nil, &fs.PathError{Op: "open", Path: filepath.Join(dir, LockFile), Err: fs.ErrPermission}
	}
	if run, err = LockDir(dir); err != nil { // the lock file exists (from above)
		t.Fatal(err)
	}
	if _, err := LockToRead(dir); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), pid) {
		t.Errorf("read-only, while a run holds it: %v, want the lock's error naming %s", err, pid)
	}
	run.Unlock()
	if l, err = LockToRead(dir); err != nil || l.f == nil {
		t.Fatalf("read-only, free: %v (holds %v)", err, l)
	}
	if _, err := LockDir(dir); !errors.Is(err, ErrLocked) {
		t.Errorf("a run while a read-only reader holds the lock: %v, want refused", err)
	}
	l.Unlock()
	empty := t.TempDir()
	if l, err = LockToRead(empty); err != nil || l.f != nil {
		t.Errorf("read-only without a lock file: %v, %v: want an empty lock", l, err)
	}
	if _, err := os.Stat(filepath.Join(empty, LockFile)); err == nil {
		t.Error("a lock file was created")
	}
	lockDir = func(string) (*DirLock, error) { return nil, errors.New("disk on fire") }
	if _, err := LockToRead(dir); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("another error: %v", err)
	}
}
