//go:build unix

package run

import (
	"os"

	"golang.org/x/sys/unix"
)

// flock takes an exclusive, non-blocking flock(2) on f.
func flock(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
}
