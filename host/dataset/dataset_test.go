package dataset

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tb, err := Parse("d.csv", strings.NewReader("# pull test\nlength_mm, force_N\n30,1.5\n31,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Rows) != 2 || tb.Rows[0][1] != 1.5 || !math.IsNaN(tb.Rows[1][1]) {
		t.Fatalf("rows %v", tb.Rows)
	}
	m, err := tb.Matrix([]string{"force_N", "length_mm"})
	if err != nil || m[0] != 1.5 || m[1] != 30 || m[3] != 31 {
		t.Fatalf("matrix %v %v", m, err)
	}
	if _, err := tb.Matrix([]string{"strain"}); err == nil || !strings.Contains(err.Error(), `no column "strain"`) {
		t.Fatalf("want missing column error, got %v", err)
	}
}

func TestErrorsNameLineAndColumn(t *testing.T) {
	_, err := Parse("d.csv", strings.NewReader("a,b\n1,2\n3,x\n"))
	if err == nil || !strings.Contains(err.Error(), `d.csv:3: column "b"`) {
		t.Fatalf("got %v", err)
	}
	_, err = Parse("d.csv", strings.NewReader("a,b\n1,2,3\n"))
	if err == nil || !strings.Contains(err.Error(), "d.csv:2") {
		t.Fatalf("got %v", err)
	}
	_, err = Parse("d.csv", strings.NewReader("a,a\n1,2\n"))
	if err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("got %v", err)
	}
}

func TestWriteRoundTrips(t *testing.T) {
	var b bytes.Buffer
	rows := [][]float64{{0.1 + 0.2, math.Pi}, {-1e-300, 12345678.901234567}}
	if err := Write(&b, []string{"x", "y"}, rows); err != nil {
		t.Fatal(err)
	}
	tb, err := Parse("w.csv", &b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		for j := range rows[i] {
			if tb.Rows[i][j] != rows[i][j] {
				t.Fatalf("row %d col %d: %v != %v", i, j, tb.Rows[i][j], rows[i][j])
			}
		}
	}
}

// A CSV saved by Excel ("CSV UTF-8") starts with a byte-order mark, which
// must not become part of the first column's name.
func TestByteOrderMark(t *testing.T) {
	tb, err := Parse("excel.csv", strings.NewReader("\xEF\xBB\xBFlength_mm,force_N\r\n30,1.5\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if tb.Columns[0] != "length_mm" || tb.Index("length_mm") != 0 || tb.Rows[0][0] != 30 {
		t.Fatalf("columns %q rows %v", tb.Columns, tb.Rows)
	}
	// A mark inside the header (files concatenated) is dropped too.
	tb, err = Parse("cat.csv", strings.NewReader("a,\uFEFFb\n1,2\n"))
	if err != nil || tb.Index("b") != 1 {
		t.Fatalf("columns %q: %v", tb.Columns, err)
	}
	_, err = Parse("u16.csv", strings.NewReader("\xFF\xFEl\x00,\x00"))
	if err == nil || !strings.Contains(err.Error(), "u16.csv: UTF-16 text") {
		t.Fatalf("got %v", err)
	}
	// Without the mark (audit 20): little- and big-endian.
	le := strings.Join(strings.Split("length_mm,force_N\n30,0\n", ""), "\x00") + "\x00"
	for name, text := range map[string]string{"le.csv": le, "be.csv": "\x00" + le[:len(le)-1]} {
		if _, err := Parse(name, strings.NewReader(text)); err == nil || !strings.Contains(err.Error(), name+": UTF-16 text") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Plain text with a few zero bytes is not taken for UTF-16.
	if _, err := Parse("ok.csv", strings.NewReader("a,b\n1,2\n3,4\n5,6\n7,8\n")); err != nil {
		t.Errorf("plain text: %v", err)
	}
}

func TestBounds(t *testing.T) {
	long := strings.Repeat("1", MaxLineBytes+1)
	cases := []struct{ name, text, want string }{
		{"long row", "a\n1\n" + long + "\n", "d.csv:3: a line longer than 1 MiB"},
		{"long header", long + "\n1\n", "d.csv:1: a line longer than 1 MiB"},
		{"long comment", "# " + long + "\na\n1\n", "d.csv:1: a line longer than 1 MiB"},
		{"unclosed quote", "a,b\n1,\"2\n" + strings.Repeat("3,4\n", MaxLineBytes/4+1), "d.csv:2: a quoted field running over 1 MiB"},
		{"columns", strings.Repeat("c,", MaxColumns) + "c\n", "d.csv:1: 10001 columns; at most 10000 accepted"},
		{"ragged", "a,b\n1,2\n3\n", "d.csv:3: 1 fields, but the header has 2 columns"},
		{"ragged long", "a,b\n1,2,3\n", "d.csv:2: 3 fields, but the header has 2 columns"},
		{"tabs", "a\tb\n1\t2\n", "d.csv:1: the header is one column \"a\\tb\": a comma-separated file is expected, and this one looks separated by tabs"},
		{"semicolons", "# from a German Excel\na;b\n1,5;2\n", "d.csv:2: the header is one column \"a;b\": a comma-separated file is expected, and this one looks separated by semicolons"},
		{"semicolon row", "a,b\n1;2\n", "d.csv:2: 1 fields, but the header has 2 columns; a comma-separated file is expected, and this row looks separated by semicolons"},
		{"not a number", "a\n0x\n", `d.csv:2: column "a": "0x" is not a number`},
		{"empty", "# only a comment\n", "d.csv: empty file"},
		{"no rows", "a,b\n", "d.csv: no data rows"},
		{"CR line ends", "x,y\r1,3\r2,5\r", "d.csv:1: the lines end in a carriage return alone"},
	}
	for _, c := range cases {
		_, err := Parse("d.csv", strings.NewReader(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: want %q, got %.300v", c.name, c.want, err)
		}
	}
	// At the limits: a line of MaxLineBytes, a quoted field spanning lines.
	ok := "a,b\n\"1\n\",2\n" + strings.Repeat(" ", MaxLineBytes-3) + "3,4\n"
	tb, err := Parse("d.csv", strings.NewReader(ok))
	if err != nil || len(tb.Rows) != 2 || tb.Rows[1][1] != 4 || tb.Lines[1] != 4 {
		t.Fatalf("at the limits: %v %v", err, tb)
	}
}

// The table's memory is bounded: 8 bytes per value and RowOverhead per
// row, MaxTableBytes in all, or less for a caller's budget.
func TestTableBudget(t *testing.T) {
	text := "a,b\n" + strings.Repeat("1,2\n", 100)
	budget := TableBytes(100, 2)
	tb, err := ParseMax("d.csv", strings.NewReader(text), budget)
	if err != nil || tb.Bytes() != budget || budget != 100*(16+RowOverhead) {
		t.Fatalf("at the budget: %v", err)
	}
	_, err = ParseMax("d.csv", strings.NewReader(text), budget-1)
	if err == nil || !strings.Contains(err.Error(), "d.csv:101: more rows than kinfer holds in memory: 100 rows of 2 columns would take 4800 bytes, more than the 4799 bytes accepted") {
		t.Fatalf("over the budget: %v", err)
	}
	if TableBytes(MaxTableBytes/(8+RowOverhead)+1, 1) <= MaxTableBytes {
		t.Fatal("TableBytes does not bound a one-column table")
	}
}

func TestReadRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no mkfifo:", err)
	}
	for path, want := range map[string]string{fifo: "named pipe", "/dev/zero": "character device", dir: "directory"} {
		done := make(chan error, 1)
		go func() { _, err := Read(path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: want %q, got %v", path, want, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Read blocked", path)
		}
	}
	big := filepath.Join(dir, "big.csv")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("a\n1\n")
	if err := f.Truncate(MaxFileBytes + 1); err != nil {
		t.Skip("no sparse files:", err)
	}
	f.Close()
	if _, err := Read(big); err == nil || !strings.Contains(err.Error(), "more than the 1 GiB accepted") {
		t.Errorf("sparse: %v", err)
	}
}

// ReadOutput (a run's own samples.csv) reads within the caller's bound,
// which is not clamped to MaxTableBytes, and names the bound it hit.
func TestReadOutputBound(t *testing.T) {
	p := filepath.Join(t.TempDir(), "samples.csv")
	if err := os.WriteFile(p, []byte("a,b\n1,2\n3,4\n5,6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if tb, err := ReadOutput(p, TableBytes(3, 2)); err != nil || len(tb.Rows) != 3 {
		t.Fatalf("3 rows within their bound: %v", err)
	}
	if _, err := ReadOutput(p, TableBytes(3, 2)-1); err == nil || !strings.Contains(err.Error(), "more rows than kinfer holds in memory") {
		t.Errorf("over the bound: %v", err)
	}
}

// A cell in Go's literal syntax but no spreadsheet's, "2_9" or "0x1p3",
// is not a number (audit 5: read as 29 and 8).
func TestGoLiteralCellsRefused(t *testing.T) {
	for _, cell := range []string{"2_9", "0x1p3", "1_000.5"} {
		p := filepath.Join(t.TempDir(), "d.csv")
		if err := os.WriteFile(p, []byte("x,y\n1,2\n"+cell+",3\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Read(p)
		if err == nil || !strings.Contains(err.Error(), "d.csv:3") || !strings.Contains(err.Error(), "is not a number") {
			t.Errorf("cell %q: %v, want line 3 refused", cell, err)
		}
	}
}
