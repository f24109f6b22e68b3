// Package filemode names the kind of a file that is not a regular one, for
// the messages of kinfer's readers and writers that refuse such files
// (a device, a FIFO, a symbolic link, a directory). It is shared by the
// host (host/safefile) and the builtin surrogate writers, which may not
// import host/.
package filemode

import "io/fs"

// Kind names the kind of a file of mode m, e.g. "a named pipe (FIFO)";
// "a special file" for any other non-regular mode.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}
