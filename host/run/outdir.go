package run

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kinfer/kinfer/host/safefile"
)

// LockFile is the name of the lock file in a run's output directory. It
// holds the pid of the process that has the directory locked.
const LockFile = "kinfer.lock"

// DirLock is an exclusive lock on an output directory, held for a whole run
// (or analysis) so that two processes never write into the same directory.
// It is an advisory flock(2) on LockFile: the kernel releases it when the
// process ends, however it ends, so a killed run never leaves a stale lock.
type DirLock struct {
	dir string
	f   *os.File
}

// ErrLocked is wrapped by LockDir's error when another process holds the
// directory.
var ErrLocked = errors.New("output directory in use")

// LockDir creates dir if needed and locks it, or fails at once, naming the
// directory and the pid that holds it. Temporary files left in dir by a
// killed writer are removed once the lock is held.
func LockDir(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p := filepath.Join(dir, LockFile)
	// Not through a symbolic link (the pid would be written into its
	// target, outside dir) and not a named pipe.
	f, err := openRegular(p, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	if err := flock(f); err != nil {
		return nil, lockedBy(dir, f, err)
	}
	if err := notOurs(p, f); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &DirLock{dir: dir, f: f}, nil
}

// errNotOurs marks notOurs's refusals: a reader (LockToRead) takes such a
// lock file read-only instead, writing nothing into it.
var errNotOurs = errors.New("not a lock file kinfer may write")

// notOurs refuses a lock file that is not kinfer's to overwrite: one with
// other hard links (the pid would be written into a file elsewhere), or
// one that holds something else than a pid (a study or data file named
// kinfer.lock in the folder). Audit 5: both were emptied.
func notOurs(p string, f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if n := linkCount(fi); n > 1 {
		return fmt.Errorf("%s has %d hard links: it is another file's name too, and kinfer writes its pid into it; remove it or choose another directory (%w)", p, n, errNotOurs)
	}
	if fi.Size() == 0 {
		return nil
	}
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); fi.Size() > int64(len(b)) || err != nil || pid <= 0 {
		return fmt.Errorf("%s holds something else than a process id (%d bytes): it is not a kinfer lock file, and kinfer would write over it; rename it or choose another directory (%w)", p, fi.Size(), errNotOurs)
	}
	return nil
}

// lockedBy is the error for dir whose lock file f another process holds
// (flock's error err): it names the pid the file records. f is closed.
func lockedBy(dir string, f *os.File, err error) error {
	b, _ := io.ReadAll(io.LimitReader(f, 64))
	f.Close()
	holder := "another process"
	if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
		holder = fmt.Sprintf("another kinfer process (pid %d)", pid)
	}
	return fmt.Errorf("%w: %s is locked by %s; wait for it to finish or choose another directory (%v)", ErrLocked, dir, holder, err)
}

// lockDir is LockDir (replaced by tests of LockToRead).
var lockDir = LockDir

// LockToRead locks dir, an existing run directory that a command reads
// (kinfer report, kinfer run --verify, kinfer analyze), as LockDir does:
// a run writing into it would change its files under the reader, and a
// run that holds it fails the command with LockDir's message. A
// directory this user cannot write (a colleague's run, a read-only
// mount), where LockDir cannot create or open the lock file for writing,
// is locked through its lock file opened read-only (flock(2) needs no
// write access); with no lock file there, no run is writing into it (a
// run creates it first), and the lock returned holds nothing.
func LockToRead(dir string) (*DirLock, error) {
	l, err := lockDir(dir)
	// A lock file kinfer may not write (a hard link, as in a cp -al or
	// rsync --link-dest snapshot of run folders) is taken read-only too.
	if err == nil || errors.Is(err, ErrLocked) || !isReadOnly(err) && !errors.Is(err, errNotOurs) {
		return l, err
	}
	f, oerr := openRegular(filepath.Join(dir, LockFile), os.O_RDONLY)
	if errors.Is(oerr, fs.ErrNotExist) {
		return &DirLock{dir: dir}, nil
	}
	if oerr != nil {
		return nil, err
	}
	if ferr := flock(f); ferr != nil {
		return nil, lockedBy(dir, f, ferr)
	}
	return &DirLock{dir: dir, f: f}, nil
}

// Dir is the locked directory.
func (l *DirLock) Dir() string { return l.dir }

// Unlock releases the lock (and empties the pid it recorded).
func (l *DirLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.f.Truncate(0)
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}

// tmpInfix marks the temporary files of WriteAtomic.
const tmpInfix = ".tmp-"

// WriteAtomic writes the file at path through write into a temporary file
// in the same directory, then renames it over path: a reader (or a run
// killed while writing) sees the old file or the new one, never a mix.
// A path that exists and is not a regular file (a device, a named pipe, a
// symbolic link, a folder) is refused, before writing and again before
// the rename, instead of being replaced (safefile.CheckTarget).
func WriteAtomic(path string, write func(w io.Writer) error) error {
	if err := safefile.CheckTarget(path); err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+tmpInfix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<16)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := safefile.CheckTarget(path); err != nil {
		return err // put there while the file was written
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}

// writeFileAtomic is WriteAtomic of a byte slice.
func writeFileAtomic(path string, b []byte) error {
	return WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
