// Package savefile writes a surrogate file whole or not at all: through a
// temporary file in the destination's folder, renamed onto the
// destination once written and closed. A failed write (a value JSON
// cannot hold, a full disk) leaves no partial file behind, and a file
// already at the destination stays whole until the new one replaces it.
package savefile

import (
	"io"
	"os"
	"path/filepath"
)

// Save writes path with write.
func Save(path string, write func(w io.Writer) error) error {
	fh, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := fh.Name()
	err = write(fh)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
