package filemode

import (
	"io/fs"
	"testing"
)

func TestKind(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		fs.ModeDir | 0o755:                "a directory",
		fs.ModeNamedPipe:                  "a named pipe (FIFO)",
		fs.ModeSocket:                     "a socket",
		fs.ModeDevice | fs.ModeCharDevice: "a character device",
		fs.ModeDevice:                     "a device",
		fs.ModeSymlink:                    "a symbolic link",
		fs.ModeIrregular:                  "a special file",
	} {
		if got := Kind(m); got != want {
			t.Errorf("%v: %q, want %q", m, got, want)
		}
	}
}
