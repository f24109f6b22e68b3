package safefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestOpenRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no mkfifo:", err)
	}
	cases := map[string]string{
		fifo:        "named pipe",
		dir:         "directory",
		"/dev/zero": "character device",
	}
	for path, want := range cases {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(path, 1<<20); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: want %q, got %v", path, want, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: ReadFile blocked", path)
		}
	}
}

func TestSizeLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p, 10); err != nil || string(b) != "0123456789" {
		t.Fatalf("at the limit: %q %v", b, err)
	}
	_, err := ReadFile(p, 9)
	var tl *TooLarge
	if !errors.As(err, &tl) || tl.Size != 10 || tl.Max != 9 {
		t.Fatalf("over the limit: %v", err)
	}
	// A sparse file larger than the limit is refused by its size, unread.
	big := filepath.Join(t.TempDir(), "sparse")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(2 << 30); err != nil {
		t.Skip("no sparse files:", err)
	}
	f.Close()
	if _, err := ReadFile(big, 1<<20); !errors.As(err, &tl) || !strings.Contains(err.Error(), "2 GiB") {
		t.Fatalf("sparse: %v", err)
	}
}

func TestLimitReader(t *testing.T) {
	b, err := io.ReadAll(Limit(strings.NewReader("abcdef"), "x", 6))
	if err != nil || string(b) != "abcdef" {
		t.Fatalf("%q %v", b, err)
	}
	b, err = io.ReadAll(Limit(strings.NewReader("abcdefg"), "x", 6))
	var tl *TooLarge
	if !errors.As(err, &tl) || string(b) != "abcdef" {
		t.Fatalf("%q %v", b, err)
	}
	// /proc files report size 0 but have content: the limit still applies.
	if _, err := os.Stat("/proc/self/maps"); err == nil {
		if _, err := ReadFile("/proc/self/maps", 16); !errors.As(err, &tl) {
			t.Fatalf("/proc/self/maps read whole: %v", err)
		}
	}
}

func TestInside(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "plugin")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "m.wasm"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "secret"), nil, 0o644)
	if err := os.Symlink("../secret", filepath.Join(dir, "escape")); err != nil {
		t.Skip("no symlinks:", err)
	}
	os.Symlink("sub/m.wasm", filepath.Join(dir, "ok-link"))
	for _, rel := range []string{"sub/m.wasm", "./sub/../sub/m.wasm", "ok-link"} {
		if _, err := Inside(dir, rel); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
	}
	bad := map[string]string{
		"../secret":                   "leaves the folder",
		"sub/../../secret":            "leaves the folder",
		filepath.Join(root, "secret"): "absolute path",
		"escape":                      "outside the folder",
		"":                            "empty path",
		"a\x00b":                      "NUL",
	}
	for rel, want := range bad {
		if _, err := Inside(dir, rel); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: want %q, got %v", rel, want, err)
		}
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{256 << 20: "256 MiB", 1 << 30: "1 GiB", 3 << 29: "1.5 GiB", 100: "100 bytes", 16 << 10: "16 KiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
