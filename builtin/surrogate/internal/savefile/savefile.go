// Package savefile writes a surrogate file whole or not at all: through a
// temporary file in the destination's folder, renamed onto the
// destination once written and closed. A failed write (a value JSON
// cannot hold, a full disk) leaves no partial file behind, and a file
// already at the destination stays whole until the new one replaces it.
// A destination that exists and is not a regular file (a device such as
// /dev/stdout, a named pipe, a symbolic link, a folder) is refused rather
// than replaced by the rename.
package savefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kinfer/kinfer/internal/filemode"
)

// Save writes path with write.
func Save(path string, write func(w io.Writer) error) error {
	if err := checkTarget(path); err != nil {
		return err
	}
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
		err = checkTarget(path) // put there while the file was written
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// checkTarget refuses a path that exists and is not a regular file (not
// followed through a symbolic link).
func checkTarget(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if m := st.Mode(); !m.IsRegular() {
		return fmt.Errorf("%s is %s, not a regular file: refusing to replace it with the surrogate file (give the path of a file to write)", path, filemode.Kind(m))
	}
	return nil
}
