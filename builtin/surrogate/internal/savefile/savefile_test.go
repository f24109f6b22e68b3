package savefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWholeOrNothing: a failing writer leaves the old file as it was and
// no temporary file; a successful one replaces it.
func TestWholeOrNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.json")
	os.WriteFile(p, []byte("old"), 0o644)
	err := Save(p, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("json: unsupported value: NaN")
	})
	if err == nil {
		t.Fatal("the writer's error was lost")
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Errorf("after a failed write the file holds %q", b)
	}
	if err := Save(p, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("the file holds %q, want new", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the folder, want 1 (no temporary left)", len(ents))
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	if err := Save(filepath.Join(dir, "missing", "s.json"), func(io.Writer) error { return nil }); err == nil {
		t.Error("a missing folder accepted")
	}
}
