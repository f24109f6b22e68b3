package dataset

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/internal/plainfloat"
)

// ErrTooManyRows: a table past the memory it may take (the message's
// bytes); a larger bound (a memory budget) lifts it.
var ErrTooManyRows = errors.New("more rows than kinfer holds in memory")

// Bounds on a data file (docs/STUDY.md, "Datasets"): no file can make the
// host hold more than MaxTableBytes for its table, plus one line.
const (
	// MaxFileBytes bounds a data file's size on disk.
	MaxFileBytes = 1 << 30
	// MaxLineBytes bounds one line: the header, a row or a comment (a
	// quoted field spanning lines counts as one line).
	MaxLineBytes = 1 << 20
	// MaxColumns bounds the columns of the header.
	MaxColumns = 10_000
	// MaxTableBytes bounds the memory of a parsed table: 8 bytes per value
	// and RowOverhead per row.
	MaxTableBytes = 256 << 20
	// RowOverhead is the memory a table spends per row besides its values
	// (a slice header and the row's line number).
	RowOverhead = 32
)

// Table is a numeric CSV: column names and rows.
type Table struct {
	File    string
	Columns []string
	Rows    [][]float64
	Lines   []int32 // the file line of each row, for error messages
	// Text is, per column, its first cell that is not a number, in a table
	// read with ReadDataMax (nil otherwise, or when every cell is one):
	// such a column (a subject ID, a comment) reads as NaN and is an error
	// only when used (CheckNumeric, Matrix).
	Text []*TextCell
	// SHA256 is the hex digest of the file's bytes as read (files read
	// by path; "" for Parse): the digest a run records is of the data it
	// fitted, not of a second read (audit 17).
	SHA256 string
	// renamed maps a column renamed by Rename to the file's own name for
	// it, so that messages name the column the file has.
	renamed map[string]string
}

// TextCell is a cell that is not a number: its file line and text.
type TextCell struct {
	Line  int
	Value string
}

// CheckNumeric refuses a column that holds text (ReadDataMax), naming its
// first such cell.
func (t *Table) CheckNumeric(name string) error {
	j := t.Index(name)
	if j < 0 || j >= len(t.Text) || t.Text[j] == nil {
		return nil
	}
	c := t.Text[j]
	return fmt.Errorf("%s:%d: %s: %.60q is not a number", t.File, c.Line, t.columnLabel(name), c.Value)
}

// columnLabel names column in a message: as the file names it, and, when
// the study's columns renamed it, as what it was read as (audit 21).
func (t *Table) columnLabel(column string) string {
	if from, ok := t.renamed[column]; ok && from != column {
		return fmt.Sprintf("column %q (read as %s by the study's columns)", from, column)
	}
	return fmt.Sprintf("column %q", column)
}

// Bytes is the memory the table is accounted for (see MaxTableBytes).
func (t *Table) Bytes() int64 {
	return TableBytes(len(t.Rows), len(t.Columns))
}

// TableBytes is the memory accounted for a table of rows×cols values.
func TableBytes(rows, cols int) int64 {
	return int64(rows) * (int64(cols)*8 + RowOverhead)
}

// Read parses a numeric CSV with a header. Blank lines and lines starting
// with '#' are skipped. An empty cell reads as NaN. The file must be a
// regular file of at most MaxFileBytes. A file named *.sto, *.mot or *.trc
// is read as an OpenSim file instead (IsOpenSim).
func Read(path string) (*Table, error) {
	return ReadMax(path, MaxTableBytes)
}

// ReadMax is Read with a table of at most maxBytes (see Table.Bytes), for
// a caller that budgets several files.
func ReadMax(path string, maxBytes int64) (*Table, error) {
	return readMax(path, maxBytes, false)
}

// ReadDataMax is ReadMax for a study's data file, whose columns a study
// may leave unused: a cell that is not a number (a subject ID, a trial
// name) reads as NaN and is recorded in Table.Text, an error only where
// the column is used.
func ReadDataMax(path string, maxBytes int64) (*Table, error) {
	return readMax(path, maxBytes, true)
}

// ReadOutput reads a file kinfer wrote itself (a run's samples.csv) with
// a table of at most maxBytes, which may exceed MaxTableBytes: a run that
// held its samples may write more than a data file may hold, and
// analyzing them takes a budget of the caller's (the memory budget).
func ReadOutput(path string, maxBytes int64) (*Table, error) {
	f, err := safefile.Open(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parse(path, f, maxBytes, false)
}

func readMax(path string, maxBytes int64, text bool) (*Table, error) {
	if IsOpenSim(path) {
		return readOpenSim(path, maxBytes)
	}
	f, err := safefile.Open(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	t, err := parseMax(path, io.TeeReader(f, h), maxBytes, text)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(h, f); err != nil { // what the parser left unread
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t.SHA256 = hex.EncodeToString(h.Sum(nil))
	return t, nil
}

// Parse is Read on a reader; file names the source in errors.
func Parse(file string, r io.Reader) (*Table, error) {
	return ParseMax(file, r, MaxTableBytes)
}

// ParseMax is Parse with a table of at most maxBytes.
func ParseMax(file string, r io.Reader, maxBytes int64) (*Table, error) {
	return parseMax(file, r, maxBytes, false)
}

func parseMax(file string, r io.Reader, maxBytes int64, text bool) (*Table, error) {
	return parse(file, r, min(maxBytes, MaxTableBytes), text)
}

// parse reads a table of at most maxBytes.
func parse(file string, r io.Reader, maxBytes int64, text bool) (*Table, error) {
	br := bufio.NewReader(safefile.Limit(r, file, MaxFileBytes))
	if err := skipBOM(file, br); err != nil {
		return nil, err
	}
	g := &guard{r: br, line: 1, first: 1, start: true}
	cr := csv.NewReader(g)
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	// readErr turns a reader error into one naming the file and line.
	readErr := func(err error) error {
		if g.err != nil {
			return fmt.Errorf("%s:%d: %w", file, g.errLine, g.err)
		}
		var tl *safefile.TooLarge
		if errors.As(err, &tl) {
			return fmt.Errorf("%s: larger than %s, the most kinfer reads", file, safefile.Bytes(MaxFileBytes))
		}
		return csvErr(file, err)
	}
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file, want a header row", file)
	}
	if err != nil {
		return nil, readErr(err)
	}
	line, _ := cr.FieldPos(0)
	if len(header) > MaxColumns {
		return nil, fmt.Errorf("%s:%d: %d columns; at most %d accepted", file, line, len(header), MaxColumns)
	}
	if len(header) == 1 {
		if sep := separator(header[0]); sep != "" {
			return nil, fmt.Errorf("%s:%d: the header is one column %.60q: a comma-separated file is expected, and this one looks separated by %s", file, line, header[0], sep)
		}
	}
	for _, h := range header {
		if strings.ContainsRune(h, '\r') {
			return nil, fmt.Errorf("%s:%d: the lines end in a carriage return alone (classic Mac OS, Excel's \"CSV (Macintosh)\"): save the file with LF or CRLF line ends", file, line)
		}
	}
	t := &Table{File: file}
	seen := map[string]bool{}
	for i, h := range header {
		// A byte-order mark can also start a later column, where files were
		// concatenated: it is invisible in messages, so it is dropped.
		h = strings.TrimSpace(strings.Trim(strings.TrimSpace(h), "\uFEFF"))
		if h == "" {
			return nil, fmt.Errorf("%s:%d: column %d has an empty name", file, line, i+1)
		}
		if seen[h] {
			return nil, fmt.Errorf("%s:%d: duplicate column %q", file, line, h)
		}
		seen[h] = true
		t.Columns = append(t.Columns, h)
	}
	ncol := len(t.Columns)
	var chunk []float64 // rows are cut from chunks of values
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
			msg := fmt.Sprintf("%s:%d: %d fields, but the header has %d columns", file, pe.StartLine, len(rec), ncol)
			if len(rec) == 1 && separator(rec[0]) != "" {
				msg += "; a comma-separated file is expected, and this row looks separated by " + separator(rec[0])
			}
			return nil, errors.New(msg)
		}
		if err != nil {
			return nil, readErr(err)
		}
		line, _ := cr.FieldPos(0)
		if TableBytes(len(t.Rows)+1, ncol) > maxBytes {
			return nil, fmt.Errorf("%s:%d: %w: %d rows of %d columns would take %s, more than the %s accepted (8 bytes per value, %d per row)",
				file, line, ErrTooManyRows, len(t.Rows)+1, ncol, safefile.Bytes(TableBytes(len(t.Rows)+1, ncol)), safefile.Bytes(maxBytes), RowOverhead)
		}
		if cap(chunk)-len(chunk) < ncol {
			chunk = make([]float64, 0, max(ncol, 1<<16))
		}
		row := chunk[len(chunk) : len(chunk)+ncol : len(chunk)+ncol]
		chunk = chunk[:len(chunk)+ncol]
		for j, s := range rec {
			s = strings.TrimSpace(s)
			if s == "" || s == "NA" { // NA: R's missing value
				row[j] = math.NaN()
				continue
			}
			v, err := plainfloat.Parse(s)
			if err != nil {
				if !text {
					return nil, fmt.Errorf("%s:%d: column %q: %.60q is not a number", file, line, t.Columns[j], s)
				}
				if t.Text == nil {
					t.Text = make([]*TextCell, ncol)
				}
				if t.Text[j] == nil {
					t.Text[j] = &TextCell{Line: line, Value: strings.Clone(s[:min(len(s), 200)])}
				}
				v = math.NaN()
			}
			row[j] = v
		}
		t.Rows = append(t.Rows, row)
		t.Lines = append(t.Lines, int32(min(line, math.MaxInt32)))
	}
	if len(t.Rows) == 0 {
		return nil, fmt.Errorf("%s: no data rows", file)
	}
	return t, nil
}

// skipBOM drops a UTF-8 byte-order mark (Excel's "CSV UTF-8" writes one)
// and refuses UTF-16 text.
func skipBOM(file string, br *bufio.Reader) error {
	b, _ := br.Peek(3)
	switch {
	case bytes.HasPrefix(b, []byte("\xEF\xBB\xBF")):
		br.Discard(3)
	case bytes.HasPrefix(b, []byte("\xFF\xFE")), bytes.HasPrefix(b, []byte("\xFE\xFF")), utf16NoBOM(br):
		return fmt.Errorf("%s: UTF-16 text; save it as a comma-separated file in UTF-8 (Excel: \"CSV UTF-8\")", file)
	}
	return nil
}

// utf16NoBOM says whether the text br starts with looks like UTF-16
// without a byte-order mark: a zero byte in every other place of its
// first bytes (audit 20: read as one column of "l\x00e\x00n…").
func utf16NoBOM(br *bufio.Reader) bool {
	b, _ := br.Peek(64)
	if len(b) < 8 {
		return false
	}
	even, odd := 0, 0
	for i, c := range b[:len(b)&^1] {
		if c == 0 {
			if i%2 == 0 {
				even++
			} else {
				odd++
			}
		}
	}
	half := len(b) / 2
	return even*4 >= half*3 || odd*4 >= half*3
}

// separator names the separator a field with no comma seems to use, or "".
func separator(field string) string {
	switch {
	case strings.Contains(field, "\t"):
		return "tabs"
	case strings.Contains(field, ";"):
		return "semicolons"
	}
	return ""
}

// guard bounds the lines encoding/csv reads, which it would otherwise hold
// whole in memory: a line longer than MaxLineBytes stops the read. It
// follows csv's quoting (a quoted field may span lines: the record counts
// as one line) and comments (a '#' starting a line outside quotes).
type guard struct {
	r       io.Reader
	n       int  // bytes of the current line so far
	line    int  // the current line, 1-based
	first   int  // the line where the current one began (before a quoted newline)
	start   bool // at the start of a line
	comment bool // in a comment line
	quoted  bool // inside a quoted field
	err     error
	errLine int
}

func (g *guard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	for i, c := range p[:n] {
		if g.start {
			g.start = false
			g.comment = !g.quoted && c == '#'
		}
		switch {
		case c == '\n':
			g.line++
			g.start = true
			if !g.quoted {
				g.n, g.first = 0, g.line
				continue
			}
		case c == '"' && !g.comment:
			g.quoted = !g.quoted
		}
		if g.n++; g.n > MaxLineBytes {
			g.err = fmt.Errorf("a line longer than %s, the most accepted", safefile.Bytes(MaxLineBytes))
			if g.quoted {
				g.err = fmt.Errorf("a quoted field running over %s (an unclosed quote?)", safefile.Bytes(MaxLineBytes))
			}
			g.errLine = g.first
			return i, g.err
		}
	}
	return n, err
}

func csvErr(file string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %v", file, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %w", file, err)
}

// Index returns the position of column name, or -1.
func (t *Table) Index(name string) int {
	for i, c := range t.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// Matrix extracts the named columns as a K×len(names) row-major matrix.
func (t *Table) Matrix(names []string) ([]float64, error) {
	idx := make([]int, len(names))
	for i, n := range names {
		if idx[i] = t.Index(n); idx[i] < 0 {
			return nil, fmt.Errorf("%s: no column %q (columns: %s)", t.File, n, strings.Join(t.Columns, ", "))
		}
		if err := t.CheckNumeric(n); err != nil {
			return nil, err
		}
	}
	out := make([]float64, 0, len(t.Rows)*len(names))
	for _, r := range t.Rows {
		for _, j := range idx {
			out = append(out, r[j])
		}
	}
	return out, nil
}

// Write writes columns and rows as CSV with full float64 precision
// (shortest representation that round-trips).
func Write(w io.Writer, columns []string, rows [][]float64) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(columns); err != nil {
		return err
	}
	rec := make([]string, len(columns))
	for _, r := range rows {
		for j, v := range r {
			rec[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Errorf is an error at row r of the table (−1: the header):
// "file:line: column "c": ...".
func (t *Table) Errorf(r int, column, format string, args ...any) error {
	line := 1
	if r >= 0 && r < len(t.Lines) {
		line = int(t.Lines[r])
	}
	return fmt.Errorf("%s:%d: %s: %s", t.File, line, t.columnLabel(column), fmt.Sprintf(format, args...))
}

// WriteFile writes columns and rows to path as Write does, buffered.
func WriteFile(path string, columns []string, rows [][]float64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := Write(w, columns, rows); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
