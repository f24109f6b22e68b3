//go:build !unix

package run

import (
	"errors"
	"io/fs"
	"os"
)

// flock is a no-op where flock(2) does not exist: the directory is not
// protected against a second run there.
func flock(f *os.File) error { return nil }

const (
	oNoFollow = 0
	oNonBlock = 0
)

func isLoop(err error) bool { return false }

// isReadOnly tells whether err is open's error for a file this user may
// not write.
func isReadOnly(err error) bool { return errors.Is(err, fs.ErrPermission) }

// linkCount is 1 where hard links cannot be counted.
func linkCount(os.FileInfo) uint64 { return 1 }
