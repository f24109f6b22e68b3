//go:build unix

package run

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

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

// linkCount is the number of hard links of the file fi describes (1 where
// it cannot be read).
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
