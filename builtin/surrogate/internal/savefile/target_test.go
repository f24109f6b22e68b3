package savefile

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Save refuses a destination that is not a regular file (kinfer train -o
// FIFO turned the named pipe into the surrogate file) and replaces a
// regular one.
func TestSaveTarget(t *testing.T) {
	dir := t.TempDir()
	write := func(w io.Writer) error { _, err := io.WriteString(w, "{}\n"); return err }
	reg := filepath.Join(dir, "s.json")
	os.WriteFile(reg, []byte("old"), 0o644)
	if err := Save(reg, write); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(reg); string(b) != "{}\n" {
		t.Errorf("regular file holds %q", b)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err == nil {
		if err := Save(fifo, write); err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("a named pipe: %v", err)
		}
		if st, _ := os.Lstat(fifo); st == nil || st.Mode().Type() != os.ModeNamedPipe {
			t.Error("the named pipe was replaced")
		}
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(reg, link); err == nil {
		if err := Save(link, write); err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("a symbolic link: %v", err)
		}
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}
