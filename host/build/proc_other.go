//go:build !unix

package build

import "os/exec"

// killTree leaves exec's default cancellation: the command itself is
// killed (process groups are a Unix notion).
func killTree(c *exec.Cmd) {}
