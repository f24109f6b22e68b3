package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/kinfer/kinfer/internal/filemode"
)

// Open opens path for reading after checking that it is a regular file of
// at most max bytes. It stats the path first (a named pipe, a device or a
// directory is refused without being opened), opens it non-blocking (a
// named pipe put in its place meanwhile cannot block), and checks the open
// descriptor again: it must be the same regular file, still within max.
// The caller must still read through a limit (Limit): a file may grow, and
// some (/proc) report a size of 0.
func Open(path string, max int64) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(path, st, max); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fst, err := f.Stat()
	if err == nil {
		err = check(path, fst, max)
	}
	if err == nil && !os.SameFile(st, fst) {
		err = fmt.Errorf("%s was replaced while it was being opened", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// TooLarge is the error of a file over its size limit.
type TooLarge struct {
	Path      string
	Size, Max int64 // Size is -1 when the file grew while being read
}

func (e *TooLarge) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s is larger than %s, the most accepted", e.Path, Bytes(e.Max))
	}
	return fmt.Sprintf("%s has %s, more than the %s accepted", e.Path, Bytes(e.Size), Bytes(e.Max))
}

func check(path string, st fs.FileInfo, max int64) error {
	if m := st.Mode(); !m.IsRegular() {
		return fmt.Errorf("%s is %s, not a regular file", path, filemode.Kind(m))
	}
	if st.Size() > max {
		return &TooLarge{Path: path, Size: st.Size(), Max: max}
	}
	return nil
}

// Limit reads at most max bytes of r and fails with *TooLarge (naming
// path) on the first byte beyond.
func Limit(r io.Reader, path string, max int64) io.Reader {
	return &limited{r: r, path: path, left: max, max: max}
}

type limited struct {
	r         io.Reader
	path      string
	left, max int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, &TooLarge{Path: l.path, Size: -1, Max: l.max}
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n + int(l.left), &TooLarge{Path: l.path, Size: -1, Max: l.max}
	}
	return n, err
}

// ReadFile reads the regular file path of at most max bytes (see Open).
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(Limit(f, path, max), nil, Size(f))
}

// Size is the size f had when it was opened (0 if unknown), a hint for
// ReadAll.
func Size(f *os.File) int64 {
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	return st.Size()
}

// ReadAll reads r to its end after prefix (which it may extend in place),
// allocating once for a reader of about hint bytes in all: unlike
// io.ReadAll, whose doubling can hold twice a large file, it keeps the peak
// near the file's size. r must be limited (Limit).
func ReadAll(r io.Reader, prefix []byte, hint int64) ([]byte, error) {
	if hint < int64(len(prefix)) {
		hint = int64(len(prefix))
	}
	b := make([]byte, len(prefix), hint+512)
	copy(b, prefix)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// Inside resolves rel, a path named in a file of folder dir, to a path that
// stays inside dir: rel must be relative, must not leave dir once cleaned
// ("a/../../b"), and must not leave it after symbolic links are resolved (a
// link inside pointing outside). It returns filepath.Join(dir, rel).
func Inside(dir, rel string) (string, error) {
	if err := Relative(rel); err != nil {
		return "", err
	}
	p := filepath.Join(dir, rel)
	rdir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	rp, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	if r, err := filepath.Rel(rdir, rp); err != nil || !local(r) {
		return "", fmt.Errorf("%q resolves to %s (through a symbolic link), outside the folder %s", rel, rp, rdir)
	}
	return p, nil
}

// Relative checks, without touching the file system, that rel is a
// relative path that stays in its folder once cleaned.
func Relative(rel string) error {
	switch {
	case rel == "":
		return errors.New("empty path")
	case strings.IndexByte(rel, 0) >= 0:
		return fmt.Errorf("%q contains a NUL byte", rel)
	case filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, `\`) || filepath.VolumeName(rel) != "":
		return fmt.Errorf("%q is an absolute path; give a path relative to the folder", rel)
	case !local(filepath.Clean(rel)):
		return fmt.Errorf("%q leaves the folder (it goes through \"..\")", rel)
	}
	return nil
}

// local reports whether a cleaned relative path stays in its folder.
func local(clean string) bool {
	return filepath.IsLocal(clean) || clean == "."
}

// Bytes formats a byte count for messages: "256 MiB", "1.5 GiB", "4800 bytes".
func Bytes(n int64) string {
	const k = 1024
	switch {
	case n >= k*k*k && n%(k*k*k) == 0:
		return fmt.Sprintf("%d GiB", n/(k*k*k))
	case n >= k*k*k:
		return fmt.Sprintf("%.1f GiB", float64(n)/(k*k*k))
	case n >= k*k && n%(k*k) == 0:
		return fmt.Sprintf("%d MiB", n/(k*k))
	case n >= k*k:
		return fmt.Sprintf("%.1f MiB", float64(n)/(k*k))
	case n >= k && n%k == 0:
		return fmt.Sprintf("%d KiB", n/k)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Kind names what a file mode is for messages: "a directory", "a named
// pipe (FIFO)", "a symbolic link", … ("a regular file" for one).
func Kind(m fs.FileMode) string {
	if m.IsRegular() {
		return "a regular file"
	}
	return filemode.Kind(m)
}

// CheckTarget checks that path may be replaced by an output: it does not
// exist, or it is a regular file (not followed through a symbolic link).
// An output written to a temporary file and renamed over path would
// otherwise replace whatever is there: a device (`-o /dev/full`, `-o
// /dev/stdout`, as root), a named pipe, a symbolic link or a folder. The
// error names path and what it is.
func CheckTarget(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if m := st.Mode(); !m.IsRegular() {
		return fmt.Errorf("%s is %s, not a regular file: refusing to replace it with the output (give the path of a file to write)", path, filemode.Kind(m))
	}
	return nil
}
