//go:build unix

package run

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// flock takes an exclusive, non-blocking flock(2) on f.
func flock(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
}

// oNoFollow and oNonBlock are the open flags of openRegular.
const (
	oNoFollow = unix.O_NOFOLLOW
	oNonBlock = unix.O_NONBLOCK
)

// isLoop tells whether err is open's error for a symbolic link opened with
// O_NOFOLLOW.
func isLoop(err error) bool { return errors.Is(err, unix.ELOOP) }

// isReadOnly tells whether err is open's error for a file this user may
// not write: no permission, or a read-only file system.
func isReadOnly(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, unix.EROFS)
}
