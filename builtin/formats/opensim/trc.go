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

// trcKeys are the keys of a .trc file's second line, in OpenSim's order.
var trcKeys = []string{"DataRate", "CameraRate", "NumFrames", "NumMarkers", "Units", "OrigDataRate", "OrigDataStartFrame", "OrigNumFrames"}

// TRC is a marker file: per frame, a frame number, a time and the X, Y, Z
// coordinates of each marker (NaN where the marker was not seen).
type TRC struct {
	// File is the file it was read from, for messages ("" if built).
	File string
	// FileName is the last field of line 1 ("PathFileType 4 (X/Y/Z) <file>").
	FileName string
	// DataRate and CameraRate are in Hz.
	DataRate, CameraRate float64
	// Units of the coordinates: "mm" or "m" as a rule.
	Units              string
	OrigDataRate       float64
	OrigDataStartFrame int
	OrigNumFrames      int
	// Markers are the marker names, in column order.
	Markers []string
	// Frame and Time have one entry per frame.
	Frame []int
	Time  []float64
	// Data has one row per frame of 3·len(Markers) values: X, Y, Z of the
	// first marker, then of the second, ...; NaN for a missing marker.
	Data [][]float64
	// Lines are the file lines of the frames (nil unless read).
	Lines []int
}

// NumFrames is the number of frames.
func (t *TRC) NumFrames() int { return len(t.Time) }

// MarkerIndex returns a marker's position, or -1.
func (t *TRC) MarkerIndex(name string) int {
	for i, m := range t.Markers {
		if m == name {
			return i
		}
	}
	return -1
}

// Marker returns the X, Y, Z trajectory of a marker, one [3]float64 per
// frame.
func (t *TRC) Marker(name string) ([][3]float64, error) {
	i := t.MarkerIndex(name)
	if i < 0 {
		return nil, missingLabel(t.File, name, t.Markers)
	}
	out := make([][3]float64, len(t.Data))
	for f, r := range t.Data {
		out[f] = [3]float64{r[3*i], r[3*i+1], r[3*i+2]}
	}
	return out, nil
}

// ColumnLabels are the labels of a TRC as one flat table: "Frame#",
// "Time", then "<marker>_X", "<marker>_Y", "<marker>_Z" per marker.
func (t *TRC) ColumnLabels() []string {
	out := []string{"Frame#", "Time"}
	for _, m := range t.Markers {
		out = append(out, m+"_X", m+"_Y", m+"_Z")
	}
	return out
}

// ReadTRC parses a .trc file; file names it in errors.
func ReadTRC(file string, r io.Reader) (*TRC, error) {
	return ReadTRCLimited(file, r, Limits{})
}

// ReadTRCLimited is ReadTRC within lim; a row has Frame#, Time and X, Y, Z
// of each marker, 2 + 3·markers columns.
func ReadTRCLimited(file string, r io.Reader, lim Limits) (*TRC, error) {
	l := newLines(file, r)
	t := &TRC{File: file}
	need := func(what string) (string, error) {
		line, ok, err := l.next()
		if err != nil {
			return "", err
		}
		if !ok {
			return "", fmt.Errorf("%s:%d: bad header: the file ends before %s", file, l.n+1, what)
		}
		return line, nil
	}
	// Line 1: PathFileType 4 (X/Y/Z) <file>.
	line, err := need("line 1 (PathFileType)")
	if err != nil {
		return nil, err
	}
	f := splitFields(line)
	if len(f) < 3 || f[0] != "PathFileType" {
		return nil, l.errorf("bad header: line 1 is %.60q, want \"PathFileType 4 (X/Y/Z) <file>\"", line)
	}
	if f[1] != "4" || f[2] != "(X/Y/Z)" {
		return nil, l.errorf("bad header: PathFileType %s %s: only type 4 (X/Y/Z) is read", f[1], f[2])
	}
	if len(f) > 3 {
		t.FileName = strings.Join(f[3:], " ")
	}
	// Lines 2–3: keys and values.
	if line, err = need("line 2 (the header keys)"); err != nil {
		return nil, err
	}
	keys := splitFields(strings.TrimRight(line, " \t"))
	keyLine := l.n
	if line, err = need("line 3 (the header values)"); err != nil {
		return nil, err
	}
	vals := splitFields(strings.TrimRight(line, " \t"))
	if len(vals) != len(keys) {
		return nil, l.errorf("bad header: %d values for the %d keys of line %d", len(vals), len(keys), keyLine)
	}
	kv := map[string]string{}
	for i, k := range keys {
		kv[k] = vals[i]
	}
	for _, k := range trcKeys {
		if _, ok := kv[k]; !ok {
			return nil, fmt.Errorf("%s:%d: bad header: no key %q (line 2 should be %s)", file, keyLine, k, strings.Join(trcKeys, " "))
		}
	}
	num := func(k string) (float64, error) {
		v, err := plainfloat.Parse(kv[k])
		if err != nil {
			return 0, l.errorf("bad header: %s = %q is not a number", k, kv[k])
		}
		return v, nil
	}
	count := func(k string) (int, error) {
		v, err := strconv.Atoi(kv[k])
		if err != nil || v < 0 {
			return 0, l.errorf("bad header: %s = %q is not a count", k, kv[k])
		}
		return v, nil
	}
	if t.DataRate, err = num("DataRate"); err != nil {
		return nil, err
	}
	if t.CameraRate, err = num("CameraRate"); err != nil {
		return nil, err
	}
	if t.OrigDataRate, err = num("OrigDataRate"); err != nil {
		return nil, err
	}
	numFrames, err := count("NumFrames")
	if err != nil {
		return nil, err
	}
	numMarkers, err := count("NumMarkers")
	if err != nil {
		return nil, err
	}
	if t.OrigDataStartFrame, err = count("OrigDataStartFrame"); err != nil {
		return nil, err
	}
	if t.OrigNumFrames, err = count("OrigNumFrames"); err != nil {
		return nil, err
	}
	t.Units = kv["Units"]
	valueLine := l.n
	// Line 4: Frame# Time M1 _ _ M2 _ _ ...
	if line, err = need("line 4 (the marker names)"); err != nil {
		return nil, err
	}
	f = splitFields(strings.TrimRight(line, " \t"))
	if len(f) < 2 || f[0] != "Frame#" || f[1] != "Time" {
		return nil, l.errorf("bad header: line 4 should start with \"Frame#\" and \"Time\", got %.60q", line)
	}
	seen := map[string]bool{}
	for _, m := range f[2:] {
		if m == "" {
			continue
		}
		if seen[m] {
			return nil, l.errorf("bad header: duplicate marker %q", m)
		}
		seen[m] = true
		t.Markers = append(t.Markers, m)
	}
	if len(t.Markers) != numMarkers {
		return nil, l.errorf("bad header: %d marker names, but NumMarkers = %d (line %d)", len(t.Markers), numMarkers, valueLine)
	}
	// Line 5: X1 Y1 Z1 ...
	if line, err = need("line 5 (the coordinate labels X1 Y1 Z1 ...)"); err != nil {
		return nil, err
	}
	f = strings.Fields(line)
	if len(f) != 3*numMarkers {
		return nil, l.errorf("bad header: %d coordinate labels on line 5, want 3 per marker (%d)", len(f), 3*numMarkers)
	}
	for i, c := range f {
		if !strings.HasPrefix(c, string("XYZ"[i%3])) {
			return nil, l.errorf("bad header: coordinate label %d is %q, want %c%d", i+1, c, "XYZ"[i%3], i/3+1)
		}
	}
	width := 2 + 3*numMarkers
	maxRows := lim.maxRows(width)
	var chunk []float64
	for {
		line, ok, err := l.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(t.Time) >= maxRows {
			return nil, &TooManyRowsError{File: file, Line: l.n, Max: maxRows, Cols: width}
		}
		var f []string
		if strings.ContainsRune(line, '\t') {
			f = strings.Split(line, "\t")
			// Trailing empty fields beyond the table's width are padding.
			for len(f) > width && strings.TrimSpace(f[len(f)-1]) == "" {
				f = f[:len(f)-1]
			}
		} else {
			f = strings.Fields(line)
		}
		if len(f) != width {
			return nil, l.errorf("ragged row: %d fields, want %d (Frame#, Time and X, Y, Z for each of %d markers)", len(f), width, numMarkers)
		}
		fr, err := strconv.Atoi(strings.TrimSpace(f[0]))
		if err != nil {
			return nil, l.errorf("column \"Frame#\": %.60q is not a frame number", f[0])
		}
		tm, err := plainfloat.Parse(strings.TrimSpace(f[1]))
		if err != nil {
			return nil, l.errorf("column \"Time\": %.60q is not a number", f[1])
		}
		if cap(chunk)-len(chunk) < width-2 {
			chunk = make([]float64, 0, max(width-2, 4096))
		}
		row := chunk[len(chunk) : len(chunk)+width-2 : len(chunk)+width-2]
		chunk = chunk[:len(chunk)+width-2]
		for j, x := range f[2:] {
			v, ok := parseNumber(strings.TrimSpace(x))
			if !ok {
				return nil, l.errorf("marker %q %c: %.60q is not a number", t.Markers[j/3], "XYZ"[j%3], x)
			}
			row[j] = v
		}
		t.Frame = append(t.Frame, fr)
		t.Time = append(t.Time, tm)
		t.Data = append(t.Data, row)
		t.Lines = append(t.Lines, l.n)
	}
	if len(t.Time) != numFrames {
		return nil, fmt.Errorf("%s:%d: %d frames, but NumFrames = %d (line %d): a truncated file?", file, l.n, len(t.Time), numFrames, valueLine)
	}
	return t, nil
}

// ReadTRCFile reads a .trc file from disk.
func ReadTRCFile(path string) (*TRC, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadTRC(path, bufio.NewReader(f))
}

// Write writes the TRC in OpenSim's layout: tab-separated, a blank line
// after line 5 as OpenSim writes, NaN coordinates as empty fields, numbers
// as the shortest decimal that reads back exactly.
func (t *TRC) Write(w io.Writer) error {
	n := len(t.Time)
	if len(t.Frame) != n || len(t.Data) != n {
		return fmt.Errorf("opensim: TRC with %d times, %d frame numbers, %d rows", n, len(t.Frame), len(t.Data))
	}
	for i, r := range t.Data {
		if len(r) != 3*len(t.Markers) {
			return fmt.Errorf("opensim: TRC frame %d has %d values, want %d", i+1, len(r), 3*len(t.Markers))
		}
	}
	for _, m := range t.Markers {
		if m == "" || strings.ContainsAny(m, "\t\n ") {
			return fmt.Errorf("opensim: marker name %q is empty or holds white space", m)
		}
	}
	if t.Units == "" || strings.ContainsAny(t.Units, "\t\n ") {
		return errors.New("opensim: TRC units must be one word (\"mm\" or \"m\")")
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "PathFileType\t4\t(X/Y/Z)\t%s\n", t.FileName)
	fmt.Fprintln(bw, strings.Join(trcKeys, "\t"))
	fmt.Fprintf(bw, "%s\t%s\t%d\t%d\t%s\t%s\t%d\t%d\n", g(t.DataRate), g(t.CameraRate), n, len(t.Markers), t.Units,
		g(t.OrigDataRate), t.OrigDataStartFrame, t.OrigNumFrames)
	bw.WriteString("Frame#\tTime")
	for _, m := range t.Markers {
		bw.WriteString("\t" + m + "\t\t")
	}
	bw.WriteString("\n\t")
	for i := range t.Markers {
		fmt.Fprintf(bw, "\tX%d\tY%d\tZ%d", i+1, i+1, i+1)
	}
	bw.WriteString("\n\n")
	buf := make([]byte, 0, 64)
	for i := 0; i < n; i++ {
		bw.WriteString(strconv.Itoa(t.Frame[i]))
		bw.WriteByte('\t')
		bw.WriteString(g(t.Time[i]))
		for _, v := range t.Data[i] {
			bw.WriteByte('\t')
			if !math.IsNaN(v) {
				buf = strconv.AppendFloat(buf[:0], v, 'g', -1, 64)
				bw.Write(buf)
			}
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// WriteFile writes the TRC to path.
func (t *TRC) WriteFile(path string) error {
	return writeFile(path, t.Write)
}
