package opensim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/kinfer/kinfer/internal/plainfloat"
)

// MaxLineBytes bounds one line of a file (a header line, the labels, a row).
const MaxLineBytes = 1 << 20

// Storage is a .sto or .mot file: a name, header lines, column labels (the
// first "time") and rows of numbers, one per time.
type Storage struct {
	// File is the file it was read from, for messages ("" if built).
	File string
	// Name is the first line of the file when it is not a key=value line
	// (OpenSim writes the table's name there), else "".
	Name string
	// Header holds the header lines after the name, in order, up to but not
	// including "endheader": key=value lines (version=1, nRows=..,
	// nColumns=.., inDegrees=yes, ...) and free text, blank lines included.
	// Write updates nRows and nColumns to the table's size.
	Header []string
	// Labels are the column labels; Labels[0] is "time".
	Labels []string
	// Rows are the rows, each len(Labels) values.
	Rows [][]float64
	// Lines are the file lines of the rows (nil unless read), for messages.
	Lines []int
}

// NewStorage returns a storage with OpenSim's usual header (version=1,
// nRows, nColumns, inDegrees) and the given labels; labels[0] should be
// "time".
func NewStorage(name string, labels []string, inDegrees bool) *Storage {
	deg := "no"
	if inDegrees {
		deg = "yes"
	}
	return &Storage{
		Name:   name,
		Header: []string{"version=1", "nRows=0", "nColumns=0", "inDegrees=" + deg},
		Labels: append([]string(nil), labels...),
	}
}

// Get returns the value of header key (the first key=value line with that
// key, the key compared without regard to case).
func (s *Storage) Get(key string) (string, bool) {
	for _, h := range s.Header {
		if k, v, ok := strings.Cut(h, "="); ok && strings.EqualFold(strings.TrimSpace(k), key) {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// Set sets header key to value, replacing its line or appending one.
func (s *Storage) Set(key, value string) {
	for i, h := range s.Header {
		if k, _, ok := strings.Cut(h, "="); ok && strings.EqualFold(strings.TrimSpace(k), key) {
			s.Header[i] = strings.TrimSpace(k) + "=" + value
			return
		}
	}
	s.Header = append(s.Header, key+"="+value)
}

// InDegrees reports the header's inDegrees=yes|no; ok is false when the
// header has no such line.
func (s *Storage) InDegrees() (deg, ok bool) {
	v, ok := s.Get("inDegrees")
	return strings.EqualFold(v, "yes"), ok
}

// Index returns the position of a label, or -1.
func (s *Storage) Index(label string) int {
	for i, l := range s.Labels {
		if l == label {
			return i
		}
	}
	return -1
}

// Column returns the values of a labelled column; the error names the file
// and lists the labels when there is no such column.
func (s *Storage) Column(label string) ([]float64, error) {
	j := s.Index(label)
	if j < 0 {
		return nil, missingLabel(s.File, label, s.Labels)
	}
	out := make([]float64, len(s.Rows))
	for i, r := range s.Rows {
		out[i] = r[j]
	}
	return out, nil
}

// AddRow appends a row; it must have len(Labels) values.
func (s *Storage) AddRow(row ...float64) error {
	if len(row) != len(s.Labels) {
		return fmt.Errorf("opensim: row of %d values, the storage has %d labels", len(row), len(s.Labels))
	}
	s.Rows = append(s.Rows, append([]float64(nil), row...))
	return nil
}

// MissingLabelError is the error for a label asked for but not in a file.
type MissingLabelError struct {
	File, Label string
	Labels      []string
}

func (e *MissingLabelError) Error() string {
	return fmt.Sprintf("%s: no column %q (columns: %s)", e.File, e.Label, strings.Join(e.Labels, ", "))
}

func missingLabel(file, label string, labels []string) error {
	return &MissingLabelError{File: file, Label: label, Labels: labels}
}

// lines reads a file line by line, counting lines, with bounded length.
type lines struct {
	file string
	sc   *bufio.Scanner
	n    int
}

func newLines(file string, r io.Reader) *lines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	return &lines{file: file, sc: sc}
}

// next returns the next line without its line ending; ok is false at the end.
func (l *lines) next() (string, bool, error) {
	if !l.sc.Scan() {
		if err := l.sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				return "", false, fmt.Errorf("%s:%d: a line longer than %d bytes, the most accepted", l.file, l.n+1, MaxLineBytes)
			}
			return "", false, fmt.Errorf("%s:%d: %w", l.file, l.n+1, err)
		}
		return "", false, nil
	}
	l.n++
	s := strings.TrimRight(l.sc.Text(), "\r")
	if l.n == 1 {
		s = strings.TrimPrefix(s, "\uFEFF")
	}
	return s, true, nil
}

func (l *lines) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", l.file, l.n, fmt.Sprintf(format, args...))
}

// splitFields splits a line on tabs when it has any, else on runs of
// spaces.
func splitFields(s string) []string {
	if strings.ContainsRune(s, '\t') {
		f := strings.Split(s, "\t")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		return f
	}
	return strings.Fields(s)
}

// parseNumber parses a field: an empty field is NaN, as are the NaN
// spellings C libraries print ("nan", "-nan", "-nan(ind)", "1.#QNAN").
func parseNumber(s string) (float64, bool) {
	if s == "" {
		return math.NaN(), true
	}
	v, err := plainfloat.Parse(s)
	if err == nil {
		return v, true
	}
	if ls := strings.ToLower(s); strings.Contains(ls, "nan") {
		return math.NaN(), true
	}
	return 0, false
}

// Limits bound what a reader keeps of a file; the zero value bounds only
// the header (MaxHeaderBytes).
type Limits struct {
	// MaxRows, when set, gives the most data rows of cols values each
	// that the caller accepts: a file with more is refused with a
	// *TooManyRowsError when the row beyond is read, not after reading the
	// whole file (audit 21: a 120 MB .sto took 2.3 GB before its table
	// was refused).
	MaxRows func(cols int) int
}

// MaxHeaderBytes bounds the header lines a .sto or .mot keeps before its
// "endheader": real headers are a few lines.
const MaxHeaderBytes = 1 << 20

// TooManyRowsError is a file with more data rows than Limits.MaxRows.
type TooManyRowsError struct {
	File      string
	Line      int // the line of the first row beyond
	Max, Cols int
}

func (e *TooManyRowsError) Error() string {
	return fmt.Sprintf("%s:%d: more than %d rows of %d columns", e.File, e.Line, e.Max, e.Cols)
}

// maxRows is lim.MaxRows(cols), or no bound.
func (lim Limits) maxRows(cols int) int {
	if lim.MaxRows == nil {
		return math.MaxInt
	}
	return lim.MaxRows(cols)
}

// ReadStorage parses a .sto or .mot file; file names it in errors.
func ReadStorage(file string, r io.Reader) (*Storage, error) {
	return ReadStorageLimited(file, r, Limits{})
}

// ReadStorageLimited is ReadStorage within lim.
func ReadStorageLimited(file string, r io.Reader, lim Limits) (*Storage, error) {
	l := newLines(file, r)
	headerBytes := 0
	s := &Storage{File: file}
	nRows, nCols := -1, -1
	nRowsLine, nColsLine := 0, 0
	ended := false
	for {
		line, ok, err := l.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if strings.TrimSpace(line) == "endheader" {
			ended = true
			break
		}
		k, v, isKV := strings.Cut(line, "=")
		if l.n == 1 && !isKV {
			s.Name = strings.TrimSpace(line)
			continue
		}
		if headerBytes += len(line) + 1; headerBytes > MaxHeaderBytes {
			return nil, l.errorf("bad header: more than %d bytes before \"endheader\" (a .sto/.mot header is a few lines)", MaxHeaderBytes)
		}
		s.Header = append(s.Header, line)
		if !isKV {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "nrows", "ncolumns":
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				return nil, l.errorf("bad header: %s=%q is not a count", strings.TrimSpace(k), strings.TrimSpace(v))
			}
			if strings.EqualFold(strings.TrimSpace(k), "nrows") {
				nRows, nRowsLine = n, l.n
			} else {
				nCols, nColsLine = n, l.n
			}
		case "indegrees":
			if vv := strings.ToLower(strings.TrimSpace(v)); vv != "yes" && vv != "no" {
				return nil, l.errorf("bad header: inDegrees=%q, want yes or no", strings.TrimSpace(v))
			}
		}
	}
	if !ended {
		return nil, fmt.Errorf("%s:%d: bad header: no line \"endheader\" (a .sto/.mot header ends with one)", file, l.n)
	}
	// The labels: the first non-blank line after endheader.
	var labels []string
	for {
		line, ok, err := l.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s:%d: bad header: no column labels after \"endheader\"", file, l.n)
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		labels = splitFields(strings.TrimRight(line, " \t"))
		break
	}
	labelLine := l.n
	seen := map[string]bool{}
	for i, lab := range labels {
		if lab == "" {
			return nil, l.errorf("bad header: column %d has an empty label", i+1)
		}
		if seen[lab] {
			return nil, l.errorf("bad header: duplicate label %q", lab)
		}
		seen[lab] = true
	}
	if !strings.EqualFold(labels[0], "time") {
		return nil, l.errorf("bad header: the first label is %q, want \"time\"", labels[0])
	}
	if nCols >= 0 && nCols != len(labels) {
		return nil, l.errorf("bad header: %d labels, but nColumns=%d (line %d)", len(labels), nCols, nColsLine)
	}
	s.Labels = labels
	maxRows := lim.maxRows(len(labels))
	var chunk []float64
	for {
		line, ok, err := l.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		line = strings.TrimRight(line, " \t")
		if line == "" {
			continue
		}
		if len(s.Rows) >= maxRows {
			return nil, &TooManyRowsError{File: file, Line: l.n, Max: maxRows, Cols: len(labels)}
		}
		f := splitFields(line)
		if len(f) != len(labels) {
			return nil, l.errorf("ragged row: %d fields, but %d labels (line %d)", len(f), len(labels), labelLine)
		}
		if cap(chunk)-len(chunk) < len(f) {
			chunk = make([]float64, 0, max(len(f), 4096))
		}
		row := chunk[len(chunk) : len(chunk)+len(f) : len(chunk)+len(f)]
		chunk = chunk[:len(chunk)+len(f)]
		for j, x := range f {
			v, ok := parseNumber(x)
			if !ok {
				return nil, l.errorf("column %q: %.60q is not a number", labels[j], x)
			}
			row[j] = v
		}
		s.Rows = append(s.Rows, row)
		s.Lines = append(s.Lines, l.n)
	}
	if nRows >= 0 && nRows != len(s.Rows) {
		return nil, fmt.Errorf("%s:%d: %d rows, but the header says nRows=%d (line %d): a truncated file?", file, l.n, len(s.Rows), nRows, nRowsLine)
	}
	return s, nil
}

// ReadStorageFile reads a .sto or .mot file from disk.
func ReadStorageFile(path string) (*Storage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := ReadStorage(path, bufio.NewReader(f))
	return s, err
}

// Write writes the storage in OpenSim's layout, tab-separated, nRows and
// nColumns set to the table's size. Numbers are written exactly (the
// shortest decimal that reads back to the same float64).
func (s *Storage) Write(w io.Writer) error {
	if len(s.Labels) == 0 {
		return errors.New("opensim: a storage needs column labels")
	}
	for i, r := range s.Rows {
		if len(r) != len(s.Labels) {
			return fmt.Errorf("opensim: row %d has %d values, the storage has %d labels", i+1, len(r), len(s.Labels))
		}
	}
	bw := bufio.NewWriter(w)
	if s.Name != "" {
		if strings.ContainsAny(s.Name, "=\n") {
			return fmt.Errorf("opensim: a storage name may not contain '=' or a newline: %q", s.Name)
		}
		fmt.Fprintln(bw, s.Name)
	}
	hdr := append([]string(nil), s.Header...)
	tmp := &Storage{Header: hdr}
	if _, ok := tmp.Get("nRows"); ok {
		tmp.Set("nRows", strconv.Itoa(len(s.Rows)))
	}
	if _, ok := tmp.Get("nColumns"); ok {
		tmp.Set("nColumns", strconv.Itoa(len(s.Labels)))
	}
	for _, h := range tmp.Header {
		if strings.TrimSpace(h) == "endheader" || strings.Contains(h, "\n") {
			return fmt.Errorf("opensim: bad header line %q", h)
		}
		fmt.Fprintln(bw, h)
	}
	fmt.Fprintln(bw, "endheader")
	fmt.Fprintln(bw, strings.Join(s.Labels, "\t"))
	buf := make([]byte, 0, 64)
	for _, r := range s.Rows {
		for j, v := range r {
			if j > 0 {
				bw.WriteByte('\t')
			}
			buf = strconv.AppendFloat(buf[:0], v, 'g', -1, 64)
			bw.Write(buf)
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// WriteFile writes the storage to path.
func (s *Storage) WriteFile(path string) error {
	return writeFile(path, s.Write)
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
