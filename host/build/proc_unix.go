//go:build unix

package build

import (
	"os/exec"
	"syscall"
)

// killTree makes c the leader of a process group of its own and its
// cancellation kill that whole group: a compiler driver's children (clang
// -cc1 and the linker, go's compile and link) die with it instead of
// running on as orphans. kinfer build forwards SIGINT/SIGTERM through its
// context; a terminal's Ctrl-C no longer reaches the group directly.
func killTree(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error {
		return syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
}
