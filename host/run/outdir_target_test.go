package run

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// WriteAtomic replaces a regular file, and refuses a target that is not
// one (a named pipe, a symbolic link, a folder) instead of renaming its
// temporary file over it (kinfer report -o /dev/full replaced the device
// node, as root).
func TestWriteAtomicTarget(t *testing.T) {
	dir := t.TempDir()
	write := func(p string) error {
		return WriteAtomic(p, func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err })
	}
	reg := filepath.Join(dir, "reg")
	os.WriteFile(reg, []byte("old\n"), 0o644)
	if err := write(reg); err != nil {
		t.Fatalf("a regular file: %v", err)
	}
	if b, _ := os.ReadFile(reg); string(b) != "new\n" {
		t.Errorf("regular file holds %q", b)
	}
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("victim\n"), 0o644)
	cases := map[string]func(p string) error{
		"symbolic link": func(p string) error { return os.Symlink(victim, p) },
		"named pipe":    func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"directory":     func(p string) error { return os.Mkdir(p, 0o755) },
	}
	for what, mk := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(what, " ", "-"))
		if err := mk(p); err != nil {
			t.Logf("no %s: %v", what, err)
			continue
		}
		before, _ := os.Lstat(p)
		err := write(p)
		if err == nil || !strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want an error naming it as a %s", p, err, what)
		}
		if after, err := os.Lstat(p); err != nil || after.Mode().Type() != before.Mode().Type() {
			t.Errorf("%s was replaced", what)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "victim\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".*"+tmpInfix+"*")); len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}
