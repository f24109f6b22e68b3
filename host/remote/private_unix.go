//go:build unix

package remote

import (
	"fmt"
	"os"
	"syscall"
)

// checkPrivate refuses a cache folder that another user could change:
// not owned by this process's user, or writable by group or others. The
// worker runs what it compiles there (wazero's cache holds native code,
// checked only by a checksum in the same file).
func checkPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("worker cache %s is not a directory", dir)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return fmt.Errorf("worker cache %s belongs to user %d, not to this worker's (%d): give --cache a folder of your own", dir, st.Uid, uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("worker cache %s is writable by others (mode %v): the worker runs code compiled there; chmod go-w it, or give --cache a folder of your own", dir, fi.Mode().Perm())
	}
	return nil
}
