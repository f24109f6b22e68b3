package opensim

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// handMOT is a ground-reaction .mot written by hand in OpenSim's
// conventions (a name line, key=value lines up to "endheader", a label line
// starting with "time", tab-separated rows), with OpenSim's column names for
// two force plates' ground reactions.
const handMOT = "walk01_grf.mot\n" +
	"version=1\n" +
	"nRows=3\n" +
	"nColumns=10\n" +
	"inDegrees=yes\n" +
	"endheader\n" +
	"time\tground_force_vx\tground_force_vy\tground_force_vz\tground_force_px\tground_force_py\tground_force_pz\tground_torque_x\tground_torque_y\tground_torque_z\n" +
	"0.000\t-12.5\t301.25\t4.0\t0.125\t0\t-0.0625\t0\t1.5\t0\n" +
	"0.001\t-13.75\t320\t4.5\t0.13\t0\t-0.0625\t0\t1.625\t0\n" +
	"0.002\t-15\t340.5e0\t5\t0.135\t0\t-0.0630\t0\t1.75\t0\n"

// handTRC is a marker .trc written by hand from the same description: the
// PathFileType line, the eight keys and their values, "Frame# Time" and each
// marker name followed by two empty fields, "X1 Y1 Z1 ...", a blank line as
// OpenSim writes, then rows; frame 2 misses marker R.Toe (empty fields).
const handTRC = "PathFileType\t4\t(X/Y/Z)\twalk01.trc\n" +
	"DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame\tOrigNumFrames\n" +
	"100\t100\t3\t2\tmm\t100\t1\t3\n" +
	"Frame#\tTime\tR.Heel\t\t\tR.Toe\t\t\n" +
	"\t\tX1\tY1\tZ1\tX2\tY2\tZ2\n" +
	"\n" +
	"1\t0\t100.5\t45.25\t80\t340\t30\t95.5\n" +
	"2\t0.01\t101.5\t45\t80.125\t\t\t\n" +
	"3\t0.02\t102.5\t44.75\t80.25\t342\t30.5\t95\n"

func TestHandWrittenMOTReadsBackExactly(t *testing.T) {
	s, err := ReadStorage("walk01_grf.mot", strings.NewReader(handMOT))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "walk01_grf.mot" || len(s.Labels) != 10 || len(s.Rows) != 3 {
		t.Fatalf("name %q labels %d rows %d", s.Name, len(s.Labels), len(s.Rows))
	}
	if deg, ok := s.InDegrees(); !ok || !deg {
		t.Fatal("inDegrees=yes not read")
	}
	vy, err := s.Column("ground_force_vy")
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{301.25, 320, 340.5}; !reflect.DeepEqual(vy, want) {
		t.Fatalf("vy %v want %v", vy, want)
	}
	if pz, _ := s.Column("ground_force_pz"); pz[2] != -0.0630 {
		t.Fatalf("pz %v", pz)
	}
	// Written and read again: identical.
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	s2, err := ReadStorage("walk01_grf.mot", &buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, s2) {
		t.Fatalf("round trip differs:\n%+v\n%+v", s, s2)
	}
}

func TestHandWrittenTRCReadsBackExactly(t *testing.T) {
	tr, err := ReadTRC("walk01.trc", strings.NewReader(handTRC))
	if err != nil {
		t.Fatal(err)
	}
	if tr.FileName != "walk01.trc" || tr.DataRate != 100 || tr.Units != "mm" || tr.NumFrames() != 3 || tr.OrigNumFrames != 3 {
		t.Fatalf("header %+v", tr)
	}
	if !reflect.DeepEqual(tr.Markers, []string{"R.Heel", "R.Toe"}) {
		t.Fatalf("markers %v", tr.Markers)
	}
	heel, err := tr.Marker("R.Heel")
	if err != nil {
		t.Fatal(err)
	}
	if heel[1] != [3]float64{101.5, 45, 80.125} {
		t.Fatalf("heel frame 2: %v", heel[1])
	}
	toe, _ := tr.Marker("R.Toe")
	if !math.IsNaN(toe[1][0]) || !math.IsNaN(toe[1][2]) || toe[2] != [3]float64{342, 30.5, 95} {
		t.Fatalf("toe %v", toe)
	}
	if !reflect.DeepEqual(tr.Frame, []int{1, 2, 3}) || !reflect.DeepEqual(tr.Time, []float64{0, 0.01, 0.02}) {
		t.Fatalf("frames %v times %v", tr.Frame, tr.Time)
	}
	var buf bytes.Buffer
	if err := tr.Write(&buf); err != nil {
		t.Fatal(err)
	}
	// The writer reproduces the hand-written file byte for byte (its
	// numbers are already in shortest form).
	if buf.String() != handTRC {
		t.Fatalf("written:\n%q\nwant:\n%q", buf.String(), handTRC)
	}
	if _, err := tr.Marker("L.Heel"); err == nil || !strings.Contains(err.Error(), `walk01.trc: no column "L.Heel"`) {
		t.Fatalf("missing marker: %v", err)
	}
}

func TestSpaceSeparatedStorage(t *testing.T) {
	in := "Coordinates\nversion=1\nnRows=2\nnColumns=3\ninDegrees=no\n\nUnits are S.I. units\nendheader\ntime   knee_angle_r  ankle_angle_r\n 0  0.1 -0.2\n 0.01  0.15  -0.25 \n"
	s, err := ReadStorage("ik.sto", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if deg, _ := s.InDegrees(); deg || len(s.Rows) != 2 || s.Rows[1][2] != -0.25 {
		t.Fatalf("%+v", s)
	}
	if v, _ := s.Get("nColumns"); v != "3" {
		t.Fatalf("nColumns %q", v)
	}
}

// TestRoundTripRandom writes random tables (values of every magnitude, NaN
// in a .trc) and reads them back bit for bit.
func TestRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 1))
	val := func() float64 {
		return (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(40)-20))
	}
	for trial := 0; trial < 20; trial++ {
		nc, nr := 1+rng.IntN(6), rng.IntN(30)
		labels := []string{"time"}
		for j := 0; j < nc; j++ {
			labels = append(labels, "c"+string(rune('a'+j)))
		}
		s := NewStorage("t", labels, trial%2 == 0)
		s.File = "x.sto"
		for i := 0; i < nr; i++ {
			row := []float64{float64(i) * 0.01}
			for j := 0; j < nc; j++ {
				row = append(row, val())
			}
			if err := s.AddRow(row...); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if err := s.Write(&buf); err != nil {
			t.Fatal(err)
		}
		s2, err := ReadStorage("x.sto", &buf)
		if err != nil {
			t.Fatal(err)
		}
		s.Set("nRows", itoa(nr))
		s.Set("nColumns", itoa(nc+1))
		s2.Lines = nil
		if !reflect.DeepEqual(s, s2) && !(nr == 0 && s2.Rows == nil) {
			t.Fatalf("trial %d: storage round trip differs\n%+v\n%+v", trial, s, s2)
		}

		nm := 1 + rng.IntN(5)
		tr := &TRC{File: "x.trc", FileName: "x.trc", DataRate: 200, CameraRate: 200, Units: "m", OrigDataRate: 200, OrigDataStartFrame: 1, OrigNumFrames: nr}
		for m := 0; m < nm; m++ {
			tr.Markers = append(tr.Markers, "M"+itoa(m))
		}
		for i := 0; i < nr; i++ {
			tr.Frame = append(tr.Frame, i+1)
			tr.Time = append(tr.Time, float64(i)/200)
			row := make([]float64, 3*nm)
			for j := range row {
				row[j] = val()
			}
			if rng.IntN(4) == 0 {
				m := rng.IntN(nm)
				row[3*m], row[3*m+1], row[3*m+2] = math.NaN(), math.NaN(), math.NaN()
			}
			tr.Data = append(tr.Data, row)
		}
		buf.Reset()
		if err := tr.Write(&buf); err != nil {
			t.Fatal(err)
		}
		tr2, err := ReadTRC("x.trc", &buf)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr2.Data) != nr || !reflect.DeepEqual(tr.Markers, tr2.Markers) || !reflect.DeepEqual(tr.Time[:nr], tr2.Time[:nr]) {
			t.Fatalf("trial %d: trc header/time differ", trial)
		}
		for i := range tr.Data {
			for j, v := range tr.Data[i] {
				w := tr2.Data[i][j]
				if math.Float64bits(v) != math.Float64bits(w) && !(math.IsNaN(v) && math.IsNaN(w)) {
					t.Fatalf("trial %d frame %d value %d: %v read back as %v", trial, i, j, v, w)
				}
			}
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestStorageErrorsNameFileAndLine(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"no endheader", "x\nversion=1\ntime\ta\n0\t1\n", "f.mot:4: bad header: no line \"endheader\""},
		{"bad count", "x\nnRows=three\nendheader\ntime\ta\n", "f.mot:2: bad header: nRows="},
		{"bad inDegrees", "x\ninDegrees=maybe\nendheader\ntime\ta\n", "f.mot:2: bad header: inDegrees"},
		{"first label", "x\nendheader\nt\ta\n0\t1\n", "f.mot:3: bad header: the first label is \"t\""},
		{"duplicate label", "x\nendheader\ntime\ta\ta\n", "f.mot:3: bad header: duplicate label \"a\""},
		{"nColumns", "x\nnColumns=3\nendheader\ntime\ta\n", "f.mot:4: bad header: 2 labels, but nColumns=3 (line 2)"},
		{"no labels", "x\nendheader\n\n", "f.mot:3: bad header: no column labels"},
		{"ragged row", "x\nendheader\ntime\ta\tb\n0\t1\t2\n0.1\t1\n", "f.mot:5: ragged row: 2 fields, but 3 labels (line 3)"},
		{"not a number", "x\nendheader\ntime\ta\n0\tone\n", "f.mot:4: column \"a\": \"one\" is not a number"},
		{"nRows", "x\nnRows=3\nendheader\ntime\ta\n0\t1\n", "f.mot:5: 1 rows, but the header says nRows=3 (line 2)"},
	}
	for _, c := range cases {
		_, err := ReadStorage("f.mot", strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
	s, _ := ReadStorage("f.mot", strings.NewReader(handMOT))
	_, err := s.Column("ground_force_1_vy")
	var ml *MissingLabelError
	if !errors.As(err, &ml) || !strings.Contains(err.Error(), "f.mot: no column \"ground_force_1_vy\" (columns: time, ground_force_vx") {
		t.Fatalf("missing label: %v", err)
	}
}

func TestTRCErrorsNameFileAndLine(t *testing.T) {
	hdr := strings.SplitAfter(handTRC, "\n")
	join := func(lines ...string) string { return strings.Join(lines, "") }
	cases := []struct{ name, in, want string }{
		{"line 1", join("PathFile 4 (X/Y/Z) a.trc\n"), "f.trc:1: bad header: line 1"},
		{"type", join("PathFileType\t3\t(X/Y/Z)\ta.trc\n"), "f.trc:1: bad header: PathFileType 3"},
		{"missing key", join(hdr[0], "DataRate\tCameraRate\n", "100\t100\n"), "f.trc:2: bad header: no key \"NumFrames\""},
		{"values", join(hdr[0], hdr[1], "100\t100\n"), "f.trc:3: bad header: 2 values for the 8 keys of line 2"},
		{"bad number", join(hdr[0], hdr[1], "fast\t100\t3\t2\tmm\t100\t1\t3\n"), "f.trc:3: bad header: DataRate = \"fast\""},
		{"markers", join(hdr[0], hdr[1], hdr[2], "Frame#\tTime\tR.Heel\t\t\n"), "f.trc:4: bad header: 1 marker names, but NumMarkers = 2 (line 3)"},
		{"line 4", join(hdr[0], hdr[1], hdr[2], "Frame\tTime\n"), "f.trc:4: bad header: line 4"},
		{"line 5", join(hdr[0], hdr[1], hdr[2], hdr[3], "\t\tX1\tY1\tZ1\n"), "f.trc:5: bad header: 3 coordinate labels"},
		{"truncated", join(hdr[0], hdr[1], hdr[2]), "f.trc:4: bad header: the file ends before line 4"},
		{"ragged", join(hdr[0], hdr[1], hdr[2], hdr[3], hdr[4], hdr[5], "1\t0\t1\t2\t3\t4\n"), "f.trc:7: ragged row: 6 fields, want 8"},
		{"not a number", join(hdr[0], hdr[1], hdr[2], hdr[3], hdr[4], hdr[5], "1\t0\t1\t2\t3\t4\tfive\t6\n"), "f.trc:7: marker \"R.Toe\" Y: \"five\" is not a number"},
		{"frame", join(hdr[0], hdr[1], hdr[2], hdr[3], hdr[4], hdr[5], "a\t0\t1\t2\t3\t4\t5\t6\n"), "f.trc:7: column \"Frame#\""},
		{"NumFrames", join(hdr[0], hdr[1], hdr[2], hdr[3], hdr[4], hdr[5], hdr[6]), "f.trc:7: 1 frames, but NumFrames = 3 (line 3)"},
	}
	for _, c := range cases {
		_, err := ReadTRC("f.trc", strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestWriteRefusesBadTables(t *testing.T) {
	s := NewStorage("x", []string{"time", "a"}, false)
	s.Rows = [][]float64{{0}}
	if err := s.Write(&bytes.Buffer{}); err == nil {
		t.Fatal("ragged storage written")
	}
	tr := &TRC{Units: "mm", Markers: []string{"bad name"}}
	if err := tr.Write(&bytes.Buffer{}); err == nil {
		t.Fatal("marker with a space written")
	}
}

func FuzzReadStorage(f *testing.F) {
	f.Add(handMOT)
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ReadStorage("f", strings.NewReader(in))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := s.Write(&buf); err != nil {
			return
		}
		if _, err := ReadStorage("f", &buf); err != nil {
			t.Fatalf("written storage does not read back: %v", err)
		}
	})
}

func FuzzReadTRC(f *testing.F) {
	f.Add(handTRC)
	f.Fuzz(func(t *testing.T, in string) {
		ReadTRC("f", strings.NewReader(in))
	})
}

// A file with more rows than the caller accepts is refused at the first
// row beyond, naming its line and the columns MaxRows was asked for; the
// header is bounded too (audit 21: a 120 MB file was read whole first).
func TestReadLimits(t *testing.T) {
	var asked []int
	lim := Limits{MaxRows: func(cols int) int { asked = append(asked, cols); return 2 }}
	_, err := ReadStorageLimited("walk01_grf.mot", strings.NewReader(handMOT), lim)
	var e *TooManyRowsError
	if !errors.As(err, &e) || e.Line != 10 || e.Max != 2 || e.Cols != 10 {
		t.Errorf(".mot: %v (%+v)", err, e)
	}
	_, err = ReadTRCLimited("walk01.trc", strings.NewReader(handTRC), lim)
	if !errors.As(err, &e) || e.Line != 9 || e.Cols != 8 {
		t.Errorf(".trc: %v (%+v)", err, e)
	}
	if !reflect.DeepEqual(asked, []int{10, 8}) {
		t.Errorf("MaxRows asked for %v columns, want [10 8]", asked)
	}
	// At the limit: read.
	three := Limits{MaxRows: func(int) int { return 3 }}
	if _, err := ReadStorageLimited("walk01_grf.mot", strings.NewReader(handMOT), three); err != nil {
		t.Errorf(".mot of 3 rows within 3: %v", err)
	}
	if _, err := ReadTRCLimited("walk01.trc", strings.NewReader(handTRC), three); err != nil {
		t.Errorf(".trc of 3 rows within 3: %v", err)
	}
	long := "x.sto\n" + strings.Repeat("comment line of a header\n", MaxHeaderBytes/20) + "endheader\ntime\ty\n0\t1\n"
	if _, err := ReadStorage("x.sto", strings.NewReader(long)); err == nil || !strings.Contains(err.Error(), "more than 1048576 bytes before \"endheader\"") {
		t.Errorf("a header over 1 MiB: %v", err)
	}
}
