package dataset

import (
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
