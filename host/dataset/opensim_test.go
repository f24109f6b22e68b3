package dataset

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestReadTRCAsTable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.trc")
	trc := "PathFileType\t4\t(X/Y/Z)\tm.trc\n" +
		"DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame\tOrigNumFrames\n" +
		"100\t100\t2\t1\tmm\t100\t1\t2\n" +
		"Frame#\tTime\tHeel\t\t\n\t\tX1\tY1\tZ1\n\n" +
		"1\t0\t1\t2\t3\n2\t0.01\t\t\t\n"
	if err := os.WriteFile(p, []byte(trc), 0o644); err != nil {
		t.Fatal(err)
	}
	tb, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tb.Columns, []string{"Frame#", "Time", "Heel_X", "Heel_Y", "Heel_Z"}) {
		t.Fatalf("columns %v", tb.Columns)
	}
	if tb.Rows[0][4] != 3 || !math.IsNaN(tb.Rows[1][2]) || tb.Lines[1] != 8 {
		t.Fatalf("rows %v lines %v", tb.Rows, tb.Lines)
	}
	if err := tb.Rename([][2]string{{"heel_x", "Heel_X"}}); err != nil || tb.Columns[2] != "heel_x" {
		t.Fatalf("rename: %v %v", err, tb.Columns)
	}
	// A message about a renamed column names the file's column (audit 21:
	// "column sigma_force_N" of a file without one).
	if err := tb.Errorf(1, "heel_x", "bad"); !strings.Contains(err.Error(), `m.trc:8: column "Heel_X" (read as heel_x by the study's columns): bad`) {
		t.Errorf("Errorf of a renamed column: %v", err)
	}
	tb.Text = make([]*TextCell, len(tb.Columns))
	tb.Text[2] = &TextCell{Line: 8, Value: "abc"}
	if err := tb.CheckNumeric("heel_x"); err == nil || !strings.Contains(err.Error(), `m.trc:8: column "Heel_X" (read as heel_x by the study's columns): "abc" is not a number`) {
		t.Errorf("CheckNumeric of a renamed column: %v", err)
	}
	// A study saying Time is the file's Heel_Y column: the file's own Time
	// column is dropped, not confused with it.
	heelY0, heelZ0 := tb.Rows[0][3], tb.Rows[0][4]
	if err := tb.Rename([][2]string{{"Time", "Heel_Y"}}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tb.Columns, []string{"Frame#", "heel_x", "Time", "Heel_Z"}) || tb.Rows[0][2] != heelY0 || tb.Rows[0][3] != heelZ0 || len(tb.Rows[1]) != 4 {
		t.Fatalf("after mapping Time to Heel_Y: columns %v rows %v", tb.Columns, tb.Rows)
	}
	// A column mapped twice is still an error.
	if err := tb.Rename([][2]string{{"a", "Heel_Z"}, {"b", "Heel_Z"}}); err == nil || !strings.Contains(err.Error(), "mapped twice") {
		t.Fatalf("a column mapped twice: %v", err)
	}
}

// UTF-16 and lines ended by a carriage return alone are named, as the CSV
// reader names them (audit 18: "no line endheader" at a wrong line). The
// same file with LF or CRLF line ends reads.
func TestOpenSimEncodingRefused(t *testing.T) {
	trc := "PathFileType\t4\t(X/Y/Z)\tm.trc\n" +
		"DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame\tOrigNumFrames\n" +
		"100\t100\t1\t1\tmm\t100\t1\t1\n" +
		"Frame#\tTime\tHeel\t\t\n\t\tX1\tY1\tZ1\n\n1\t0\t1\t2\t3\n"
	utf16 := []byte{0xFF, 0xFE}
	for _, r := range trc {
		utf16 = append(utf16, byte(r), 0)
	}
	for name, c := range map[string]struct {
		body []byte
		want string
	}{
		"lf.trc":    {[]byte(trc), ""},
		"crlf.trc":  {[]byte(strings.ReplaceAll(trc, "\n", "\r\n")), ""},
		"cr.trc":    {[]byte(strings.ReplaceAll(trc, "\n", "\r")), "cr.trc:1: the lines end in a carriage return alone"},
		"utf16.trc": {utf16, "utf16.trc: UTF-16 text"},
		// Without its byte-order mark too (audit 20).
		"utf16nobom.trc": {utf16[2:], "utf16nobom.trc: UTF-16 text"},
		// Line feeds beside carriage returns read as before (review 19).
		"crcrlf.trc": {[]byte(strings.ReplaceAll(trc, "\n", "\r\r\n")), "!cr"},
		"stray.trc":  {[]byte(strings.Replace(trc, "DataRate", "Data\rRate", 1)), "!cr"},
		// A first line over 4 KiB (review 19: not detected).
		"longcr.trc": {[]byte(strings.ReplaceAll(strings.Replace(trc, "m.trc", strings.Repeat("m", 5000)+".trc", 1), "\n", "\r")), "longcr.trc:1: the lines end in a carriage return alone"},
	} {
		p := filepath.Join(t.TempDir(), name)
		os.WriteFile(p, c.body, 0o644)
		_, err := Read(p)
		if c.want == "!cr" {
			// Not refused as CR-only (the reader may refuse it otherwise).
			if err != nil && strings.Contains(err.Error(), "carriage return alone") {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}

// A .sto past the table budget is refused at the first row beyond it, not
// after reading the whole file (audit 21: 2.3 GB for a file of 120 MB):
// rows of 3 columns take 3·8 + RowOverhead bytes each, so a budget of 100
// such rows stops at row 101 (line 104: name, endheader, labels before).
func TestOpenSimRowsRefusedAsRead(t *testing.T) {
	var b strings.Builder
	b.WriteString("x.sto\nendheader\ntime\ta\tb\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "%d\t1\t2\n", i)
	}
	p := filepath.Join(t.TempDir(), "x.sto")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := readOpenSim(p, 100*(3*8+RowOverhead))
	if !errors.Is(err, ErrTooManyRows) || !strings.Contains(err.Error(), "x.sto:104: more rows than kinfer holds in memory: over 100 rows of 3 columns") {
		t.Fatalf("err = %v", err)
	}
	if _, err := readOpenSim(p, 1000*(3*8+RowOverhead)); err != nil {
		t.Errorf("1000 rows within a budget of 1000: %v", err)
	}
}
