package dataset

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
)

// FuzzParse: any bytes either fail with an error naming the file, or give a
// table whose rows all have the header's width, whose lines increase and
// whose memory is within the bound.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("../../examples/quickstart/force_length.csv"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		"length_mm,force_N\n30,1.5\n31,\n",
		"# comment\na, b\n1, 2\n\n# more\n3,4\n",
		"\xEF\xBB\xBFlength_mm,force_N\r\n30,1.5\r\n",
		"\xFF\xFEa\x00",
		"a\tb\n1\t2\n",
		"a;b\n1,5;2,5\n",
		"a,b\n1,2,3\n",
		"a,b\n1\n",
		"\"a\nb\",c\n\"1\",2\n",
		"a,b\n\"1,2\n",
		"a,a\n1,2\n",
		",\n1,2\n",
		"a\nNaN\n-Inf\n0x1p-2\n1e400\n",
		"a\n\"\"\"\"\n",
		"#\n#\n",
		"a,b\n1,2\n#\"\n3,4\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "fuzz.csv"
		for _, budget := range []int64{MaxTableBytes, 200} {
			tb, err := ParseMax(file, bytes.NewReader(data), budget)
			if err != nil {
				if !strings.HasPrefix(err.Error(), file) {
					t.Fatalf("error does not start with the file: %v", err)
				}
				continue
			}
			if len(tb.Columns) == 0 || len(tb.Columns) > MaxColumns || len(tb.Rows) == 0 || len(tb.Lines) != len(tb.Rows) {
				t.Fatalf("%d columns, %d rows, %d lines", len(tb.Columns), len(tb.Rows), len(tb.Lines))
			}
			seen := map[string]bool{}
			for _, c := range tb.Columns {
				if c == "" || seen[c] || strings.HasPrefix(c, "\uFEFF") || c != strings.TrimSpace(c) {
					t.Fatalf("column %q in %q", c, tb.Columns)
				}
				seen[c] = true
			}
			for i, r := range tb.Rows {
				if len(r) != len(tb.Columns) {
					t.Fatalf("row %d has %d values, the header %d", i, len(r), len(tb.Columns))
				}
				if tb.Lines[i] < 2 || i > 0 && tb.Lines[i] <= tb.Lines[i-1] {
					t.Fatalf("lines %v", tb.Lines)
				}
				for _, v := range r {
					_ = math.IsNaN(v)
				}
			}
			if tb.Bytes() > budget {
				t.Fatalf("table of %d bytes over the budget %d", tb.Bytes(), budget)
			}
			if idx := tb.Index(tb.Columns[len(tb.Columns)-1]); idx != len(tb.Columns)-1 {
				t.Fatalf("Index %d", idx)
			}
		}
	})
}
