package dataset

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/kinfer/kinfer/builtin/formats/opensim"
	"github.com/kinfer/kinfer/host/safefile"
)

// IsOpenSim reports whether a file is read as an OpenSim file (by its
// extension: .sto, .mot or .trc, any case) rather than as a CSV.
func IsOpenSim(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".sto", ".mot", ".trc":
		return true
	}
	return false
}

// readOpenSim reads a .sto/.mot (columns: the labels, "time" first) or a
// .trc (columns: "Frame#", "Time", then "<marker>_X", "<marker>_Y",
// "<marker>_Z"; a missing marker reads as NaN) as a Table.
func readOpenSim(path string, maxBytes int64) (*Table, error) {
	if maxBytes > MaxTableBytes {
		maxBytes = MaxTableBytes
	}
	f, err := safefile.Open(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	lim := safefile.Limit(f, path, MaxFileBytes)
	r := bufio.NewReaderSize(io.TeeReader(lim, h), 1<<20)
	// UTF-16 and lines ended by a carriage return alone, named as the CSV
	// reader names them (audit 18: "no line endheader" at a wrong line).
	if b, _ := r.Peek(2); bytes.HasPrefix(b, []byte("\xFF\xFE")) || bytes.HasPrefix(b, []byte("\xFE\xFF")) || utf16NoBOM(r) {
		return nil, fmt.Errorf("%s: UTF-16 text; save it in UTF-8 (or ASCII)", path)
	}
	// CR-only: carriage returns and no line feed in the first MiB (a stray
	// CR, or CR CR LF, beside line feeds is read as before; review 19).
	if b, _ := r.Peek(r.Size()); bytes.IndexByte(b, '\r') >= 0 && bytes.IndexByte(b, '\n') < 0 && bytes.Count(b, []byte{'\r'}) > 1 {
		return nil, fmt.Errorf("%s:1: the lines end in a carriage return alone (classic Mac OS): save the file with LF or CRLF line ends", path)
	}
	t := &Table{File: path}
	defer func() {
		// The digest of the bytes read (Table.SHA256), the rest included.
		if _, err := io.Copy(h, lim); err == nil {
			t.SHA256 = hex.EncodeToString(h.Sum(nil))
		}
	}()
	// Refused as the rows come, at the same budget as the check below
	// (audit 21: the whole file was read first, 2.3 GB for 120 MB).
	rows := opensim.Limits{MaxRows: func(cols int) int {
		return int(min(maxBytes/(int64(cols)*8+RowOverhead), math.MaxInt32))
	}}
	tooMany := func(err error) error {
		var e *opensim.TooManyRowsError
		if errors.As(err, &e) {
			return fmt.Errorf("%s:%d: %w: over %d rows of %d columns would take more than the %s accepted",
				path, e.Line, ErrTooManyRows, e.Max, e.Cols, safefile.Bytes(maxBytes))
		}
		return err
	}
	var lines []int
	if strings.ToLower(filepath.Ext(path)) == ".trc" {
		tr, err := opensim.ReadTRCLimited(path, r, rows)
		if err != nil {
			return nil, tooMany(err)
		}
		t.Columns = tr.ColumnLabels()
		t.Rows = make([][]float64, 0, len(tr.Data))
		for i := range tr.Data {
			row := make([]float64, 0, len(t.Columns))
			row = append(row, float64(tr.Frame[i]), tr.Time[i])
			t.Rows = append(t.Rows, append(row, tr.Data[i]...))
			// The reader's copy goes as the table's is made (hostile 22:
			// both copies of a 40 MB .trc were held at once, 0.95 GB).
			tr.Data[i] = nil
		}
		lines = tr.Lines
	} else {
		s, err := opensim.ReadStorageLimited(path, r, rows)
		if err != nil {
			return nil, tooMany(err)
		}
		t.Columns, t.Rows, lines = s.Labels, s.Rows, s.Lines
	}
	if len(t.Columns) > MaxColumns {
		return nil, fmt.Errorf("%s: %d columns; at most %d accepted", path, len(t.Columns), MaxColumns)
	}
	if len(t.Rows) == 0 {
		return nil, fmt.Errorf("%s: no data rows", path)
	}
	if t.Bytes() > maxBytes {
		return nil, fmt.Errorf("%s: %w: %d rows of %d columns would take %s, more than the %s accepted",
			path, ErrTooManyRows, len(t.Rows), len(t.Columns), safefile.Bytes(t.Bytes()), safefile.Bytes(maxBytes))
	}
	for _, l := range lines {
		t.Lines = append(t.Lines, int32(min(l, math.MaxInt32)))
	}
	return t, nil
}

// Rename renames columns: for each pair (to, from), column from becomes
// column to, e.g. a model's output name for an OpenSim label. A missing
// column, or one mapped twice, is an error naming the file. A column that
// is not renamed but bears a name given to a renamed one (the file's "y"
// when the study says y is column "obs") is dropped: the mapping chose
// which column is y.
func (t *Table) Rename(pairs [][2]string) error {
	idx := make([]int, len(pairs))
	by := map[string]string{} // file label → the name mapped onto it
	for i, p := range pairs {
		if idx[i] = t.Index(p[1]); idx[i] < 0 {
			return fmt.Errorf("%s: no column %q (columns: %s)", t.File, p[1], strings.Join(t.Columns, ", "))
		}
		if other, ok := by[p[1]]; ok {
			return fmt.Errorf("%s: column %q is mapped twice, for %s and for %s; a column is mapped once", t.File, p[1], other, p[0])
		}
		by[p[1]] = p[0]
	}
	renamed := map[int]bool{}
	to := map[string]bool{}
	for i, p := range pairs {
		renamed[idx[i]] = true
		to[p[0]] = true
	}
	var drop []int
	for i, c := range t.Columns {
		if !renamed[i] && to[c] {
			drop = append(drop, i)
		}
	}
	for i, p := range pairs {
		t.Columns[idx[i]] = p[0]
		if t.renamed == nil {
			t.renamed = map[string]string{}
		}
		t.renamed[p[0]] = p[1]
	}
	if len(drop) > 0 {
		t.dropColumns(drop)
	}
	seen := map[string]bool{}
	for _, c := range t.Columns {
		if seen[c] {
			// Two columns of the file had this name already.
			return fmt.Errorf("%s: column %q appears twice", t.File, c)
		}
		seen[c] = true
	}
	return nil
}

// dropColumns removes the columns at the indices drop.
func (t *Table) dropColumns(drop []int) {
	gone := map[int]bool{}
	for _, j := range drop {
		gone[j] = true
	}
	var cols []string
	for j, c := range t.Columns {
		if !gone[j] {
			cols = append(cols, c)
		}
	}
	if t.Text != nil {
		var text []*TextCell
		for j, c := range t.Text {
			if !gone[j] {
				text = append(text, c)
			}
		}
		t.Text = text
	}
	for r, row := range t.Rows {
		out := row[:0] // in place: a value moves only towards the front
		for j, v := range row {
			if !gone[j] {
				out = append(out, v)
			}
		}
		t.Rows[r] = out
	}
	t.Columns = cols
}
