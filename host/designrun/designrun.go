package designrun

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/design"
	"github.com/kinfer/kinfer/builtin/prior"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/safefile"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
	"github.com/kinfer/kinfer/internal/guesttext"
	"github.com/kinfer/kinfer/internal/strictjson"
)

// Kinds are the design names Options.Kind accepts.
var Kinds = []string{"sobol", "sobol-owen", "halton", "hammersley", "lhs", "lhs-maximin"}

// ChunkPoints is the number of points evaluated and written at a time;
// fixed, so the file does not depend on the number of workers.
const ChunkPoints = 256

// Bounds on a run (its options and a resumed directory's files are input).
const (
	// MaxPoints and MaxValues bound the design held in memory: n points
	// and n·d coordinates (≈ 40 bytes per 2-D point, ≈ 0.5 GB at most).
	MaxPoints = 1 << 22
	MaxValues = 1 << 25
	// MaxMaximinPoints bounds lhs-maximin, whose 20·n swaps cost O(n·d)
	// each (≈ 2 minutes on one core at the bound, growing as n²).
	MaxMaximinPoints = 10_000
	// MaxRecordBytes bounds design.json read by --resume.
	MaxRecordBytes = 16 << 20
)

// Options configure a run.
type Options struct {
	Kind    string // one of Kinds
	N       int    // points
	Seed    uint64 // for sobol-owen and the Latin hypercubes; 0: the study's seed
	Space   string // "box" (default) or "prior"
	Workers int
	Resume  bool
	// Stop, if set, is called after every chunk; returning true stops the
	// run there (for tests of resuming).
	Stop func(done int) bool
}

// Record is design.json.
type Record struct {
	Study    string      `json:"study"`
	Model    string      `json:"model"`
	ModelVer string      `json:"model_version,omitempty"`
	Kind     string      `json:"design"`
	N        int         `json:"n"`
	Seed     uint64      `json:"seed"`
	Space    string      `json:"space"`
	Params   []abi.Param `json:"params"` // free parameters with the box used
	// Conditions and Outputs are the model's columns, in design.csv's
	// order (read by `kinfer train`).
	Conditions  []abi.Column   `json:"conditions"`
	Outputs     []abi.Column   `json:"outputs"`
	Datasets    []string       `json:"datasets"`
	Provenance  run.Provenance `json:"provenance"`
	Done        int            `json:"points_done"`
	CSVBytes    int64          `json:"csv_bytes"`
	ByStatus    map[string]int `json:"points_by_status"`
	Complete    bool           `json:"complete"`
	WallSeconds float64        `json:"wall_seconds"`
}

// Points returns the n design points in the unit cube. Cancelling ctx
// stops lhs-maximin's search (the others take no time worth stopping).
func Points(ctx context.Context, kind string, n, d int, seed uint64) ([][]float64, error) {
	switch kind {
	case "sobol", "sobol-owen":
		s, err := design.NewSobol(d, kind == "sobol-owen", seed)
		if err != nil {
			return nil, err
		}
		return s.Points(0, n), nil
	case "halton":
		h, err := design.NewHalton(d)
		if err != nil {
			return nil, err
		}
		return h.Points(0, n), nil
	case "hammersley":
		return design.Hammersley(n, d)
	case "lhs", "lhs-maximin":
		pts, err := design.LatinHypercube(n, d, seed, design.LHSOptions{Maximin: kind == "lhs-maximin", Done: ctx.Done()})
		if errors.Is(err, design.ErrStopped) && ctx.Err() != nil {
			return nil, fmt.Errorf("%w (%w)", err, context.Cause(ctx))
		}
		return pts, err
	}
	return nil, fmt.Errorf("design %q: want one of %v", kind, Kinds)
}

// Run evaluates s's model over the design and writes design.csv and
// design.json into dir.
func Run(ctx context.Context, s *study.Study, dir string, o Options) (*Record, error) {
	if o.N < 1 || o.N > MaxPoints {
		return nil, fmt.Errorf("design: n = %d, need 1 ≤ n ≤ %d", o.N, MaxPoints)
	}
	if o.Kind == "lhs-maximin" && o.N > MaxMaximinPoints {
		return nil, fmt.Errorf("design: lhs-maximin with n = %d: its search costs O(n²), at most n = %d (use lhs or sobol-owen for more points)", o.N, MaxMaximinPoints)
	}
	if o.Space == "" {
		o.Space = "box"
	}
	if o.Space != "box" && o.Space != "prior" {
		return nil, fmt.Errorf("design: space %q, want box or prior", o.Space)
	}
	if o.Seed == 0 {
		o.Seed = s.Seed
	}
	d := len(s.Free)
	if d == 0 {
		return nil, errors.New("design: the study has no free parameters (give some a prior)")
	}
	if int64(o.N)*int64(d) > MaxValues {
		return nil, fmt.Errorf("design: n = %d points of %d parameters exceed %d coordinates in memory", o.N, d, MaxValues)
	}
	// design.csv's columns: its own three and the study's names, each
	// once, or train reads the wrong one.
	cols := map[string]string{"point": "design.csv's own column", "status": "design.csv's own column", "dataset": "design.csv's own column"}
	for _, c := range []struct {
		what  string
		names []string
	}{{"parameter", paramNames(s.Free)}, {"condition", columnNames(s.ModelInfo.Spec.Conditions)}, {"output", columnNames(s.ModelInfo.Spec.Outputs)}} {
		for _, n := range c.names {
			if other, ok := cols[n]; ok {
				return nil, fmt.Errorf("design: %s %q has the name of %s: design.csv would hold two columns %q", c.what, n, other, n)
			}
			cols[n] = "a " + c.what
		}
	}
	params := make([]abi.Param, d)
	for j, p := range s.Free {
		lo, hi := s.Priors[j].Support()
		p.Lower, p.Upper = max(p.Lower, lo), min(p.Upper, hi)
		if o.Space == "box" && (math.IsInf(p.Lower, 0) || math.IsInf(p.Upper, 0) || !(p.Upper > p.Lower)) {
			return nil, fmt.Errorf("design: parameter %q: its bounds and prior support give [%g, %g]; space \"box\" needs a finite interval (or use space \"prior\")", p.Name, p.Lower, p.Upper)
		}
		params[j] = p
	}
	// Space "prior" maps through the quantile function of each prior
	// truncated to the model's bounds (the prior a study samples): the
	// written prior's own quantile put the points beyond a bound
	// out of support.
	quantiles := make([]func(float64) float64, d)
	if o.Space != "box" {
		for j, p := range s.Free {
			q := s.Priors[j].Quantile
			if lo, hi := s.Priors[j].Support(); lo < p.Lower || hi > p.Upper {
				var err error
				if q, _, err = prior.Truncate(s.Priors[j], p.Lower, p.Upper); err != nil {
					return nil, fmt.Errorf("design: parameter %q: %v", p.Name, err)
				}
			}
			quantiles[j] = q
			// The points lie between the quantiles at 0.5/N and
			// 1 − 0.5/N (below): that range, not the model's bounds, is
			// the design's box that design.json records and a surrogate
			// trained on it takes as its training box (an unbounded
			// prior's box was the model's whole range: audit 4).
			if lo, hi := q(0.5/float64(o.N)), q(1-0.5/float64(o.N)); hi > lo && !math.IsInf(lo, 0) && !math.IsInf(hi, 0) {
				params[j].Lower, params[j].Upper = max(params[j].Lower, lo), min(params[j].Upper, hi)
				if !(params[j].Default >= params[j].Lower && params[j].Default <= params[j].Upper) {
					params[j].Default = min(max(q(0.5), params[j].Lower), params[j].Upper)
				}
			}
		}
	}
	u, err := Points(ctx, o.Kind, o.N, d, o.Seed)
	if err != nil {
		return nil, err
	}
	pts := u // mapped in place: one copy of the design in memory
	for _, x := range u {
		for j, v := range x {
			if o.Space == "box" {
				x[j] = params[j].Lower + v*(params[j].Upper-params[j].Lower)
			} else {
				// Quantile at a point strictly inside (0, 1): an unscrambled
				// sequence starts at 0, whose quantile is the support's end.
				x[j] = quantiles[j](min(max(v, 0.5/float64(o.N)), 1-0.5/float64(o.N)))
			}
		}
	}

	ins, err := run.Inputs(s)
	if err != nil {
		return nil, err
	}
	if err := run.NotOverInputs(dir, []string{"design.csv", "design.json"}, ins); err != nil {
		return nil, fmt.Errorf("design: %w", err)
	}
	prov := run.BuildInfo()
	prov.Seed, prov.Inputs = o.Seed, ins
	rec := &Record{Study: s.Path, Model: s.ModelInfo.Spec.Name, ModelVer: s.ModelInfo.Spec.Version,
		Kind: o.Kind, N: o.N, Seed: o.Seed, Space: o.Space, Params: params, Provenance: prov,
		Conditions: s.ModelInfo.Spec.Conditions, Outputs: s.ModelInfo.Spec.Outputs,
		ByStatus: map[string]int{}}
	for _, ds := range s.Data {
		rec.Datasets = append(rec.Datasets, ds.Name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	jsonPath, csvPath := filepath.Join(dir, "design.json"), filepath.Join(dir, "design.csv")
	var f *os.File
	if o.Resume {
		old, err := readRecord(jsonPath)
		if err != nil {
			return nil, fmt.Errorf("design --resume: %w", err)
		}
		if err := sameRun(old, rec); err != nil {
			return nil, fmt.Errorf("design --resume: %s was written by a different run: %w", jsonPath, err)
		}
		rec.Done, rec.CSVBytes, rec.ByStatus, rec.WallSeconds = old.Done, old.CSVBytes, old.ByStatus, old.WallSeconds
		if f, err = openOwn(csvPath, os.O_RDWR); err != nil {
			return nil, fmt.Errorf("design --resume: %w", err)
		}
		if err := resumable(f, csvPath, header(s), rec.CSVBytes, rec.Done); err != nil {
			f.Close()
			return nil, fmt.Errorf("design --resume: %w", err)
		}
		// A few points' rows, evenly spaced (the last included), are
		// evaluated again and must be what the model gives (audit 17:
		// outputs doubled in 20 000 points' rows passed the other checks).
		check := map[int][]byte{}
		for k := range min(resumeChecked, rec.Done) {
			check[rec.Done-1-k*(rec.Done-1)/max(min(resumeChecked, rec.Done)-1, 1)] = nil
		}
		if err := sameRows(f, csvPath, int64(len(header(s))), rec.CSVBytes, s, pts[:rec.Done], rec.ByStatus, check); err != nil {
			f.Close()
			return nil, fmt.Errorf("design --resume: %w", err)
		}
		if err := sameOutputs(ctx, s, csvPath, pts, check); err != nil {
			f.Close()
			return nil, fmt.Errorf("design --resume: %w", err)
		}
		if err := f.Truncate(rec.CSVBytes); err != nil {
			f.Close()
			return nil, err
		}
		if _, err := f.Seek(rec.CSVBytes, 0); err != nil {
			f.Close()
			return nil, err
		}
	} else {
		if _, err := os.Lstat(jsonPath); err == nil {
			return nil, fmt.Errorf("design: %s exists (use --resume to continue it, or another output directory)", jsonPath)
		}
		if f, err = openOwn(csvPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC); err != nil {
			return nil, err
		}
		n, err := f.WriteString(header(s))
		if err != nil {
			return nil, err
		}
		rec.CSVBytes = int64(n)
		if err := writeRecord(jsonPath, rec); err != nil {
			return nil, err
		}
	}
	defer f.Close()

	tg := target.New(s, o.Workers)
	start := time.Now()
	wall0 := rec.WallSeconds
	for rec.Done < o.N {
		lo, hi := rec.Done, min(rec.Done+ChunkPoints, o.N)
		chunk := pts[lo:hi]
		w := bufio.NewWriter(f)
		rows := make([][][]float64, len(s.Data))
		sts := make([][]abi.Status, len(s.Data))
		for k, ds := range s.Data {
			// A stop abandons a chunk whose built-in evaluations do not
			// end within target.Grace: design.csv and design.json then
			// hold the chunks before it, which --resume continues from.
			if rows[k], sts[k], err = tg.OutputsStoppable(ctx, chunk, ds); err != nil {
				if ctx.Err() != nil {
					return rec, fmt.Errorf("stopped at point %d of %d (%w): %v", lo, o.N, context.Cause(ctx), err)
				}
				return nil, err
			}
		}
		var buf []byte
		for i := range chunk {
			worst := abi.OK
			for k := range s.Data {
				if sts[k][i] != abi.OK {
					worst = sts[k][i]
				}
			}
			rec.ByStatus[worst.String()]++
			for k, ds := range s.Data {
				buf = appendRows(buf[:0], s, lo+i, chunk[i], ds, rows[k][i], sts[k][i])
				if _, err := w.Write(buf); err != nil {
					return nil, err
				}
			}
		}
		if err := w.Flush(); err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
		pos, err := f.Seek(0, 1)
		if err != nil {
			return nil, err
		}
		rec.Done, rec.CSVBytes = hi, pos
		rec.WallSeconds = wall0 + time.Since(start).Seconds()
		rec.Complete = rec.Done == o.N
		if err := writeRecord(jsonPath, rec); err != nil {
			return nil, err
		}
		if o.Stop != nil && !rec.Complete && o.Stop(rec.Done) {
			break
		}
		if err := ctx.Err(); err != nil {
			return rec, err
		}
	}
	return rec, nil
}

// header is design.csv's first line: point, status, the free parameters,
// dataset, the model's conditions, the model's outputs.
func header(s *study.Study) string {
	b := []byte("point,status")
	for _, p := range s.Free {
		b = append(b, ',')
		b = appendField(b, p.Name)
	}
	b = append(b, ",dataset"...)
	for _, c := range s.ModelInfo.Spec.Conditions {
		b = append(b, ',')
		b = appendField(b, c.Name)
	}
	for _, c := range s.ModelInfo.Spec.Outputs {
		b = append(b, ',')
		b = appendField(b, c.Name)
	}
	return string(append(b, '\n'))
}

// appendField appends a name as a CSV field, quoted (RFC 4180) when it
// holds a comma, a quote or a line break: a name "y,z" shifted every column
// after it (audit 4).
func appendField(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
}

// appendRows writes one row per condition of ds for design point i; a
// point whose status is not OK has empty outputs.
func appendRows(b []byte, s *study.Study, i int, theta []float64, ds *study.Dataset, y []float64, st abi.Status) []byte {
	c := len(s.ModelInfo.Spec.Conditions)
	m := len(s.ModelInfo.Spec.Outputs)
	for r := range ds.K {
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ',')
		b = append(b, st.String()...)
		for _, v := range theta {
			b = append(b, ',')
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
		b = append(b, ',')
		b = appendField(b, ds.Name)
		for j := range c {
			b = append(b, ',')
			b = strconv.AppendFloat(b, ds.X[r*c+j], 'g', -1, 64)
		}
		for j := range m {
			b = append(b, ',')
			if st == abi.OK {
				b = strconv.AppendFloat(b, y[r*m+j], 'g', -1, 64)
			}
		}
		b = append(b, '\n')
	}
	return b
}

// openOwn opens a file the run writes, refusing what a tampered
// directory may put in its place: a symbolic link (the run would write
// through it, outside the directory), a named pipe (writing would block)
// or any other special file. The file is opened non-blocking and without
// following a link, and the open descriptor must be a regular file.
func openOwn(path string, flag int) (*os.File, error) {
	lst, err := os.Lstat(path)
	if err == nil && !lst.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file but %s; kinfer design writes its own files there", path, safefile.Kind(lst.Mode()))
	}
	f, err := os.OpenFile(path, flag|oNoFollow|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || (lst != nil && !os.SameFile(lst, st)) {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file; kinfer design writes its own files there", path)
	}
	return f, nil
}

// resumable checks that design.csv can continue at size bytes after done
// points: it starts with the study's header and holds at least size
// bytes, the last of them a row's end, and the row there is of point
// done−1 (a record of a longer file, or of another file, would extend the
// file, cut a row, or skip or repeat points).
func resumable(f *os.File, path, header string, size int64, done int) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if size < int64(len(header)) || size > st.Size() {
		return fmt.Errorf("%s has %d bytes; the record's csv_bytes %d is not a length it had (damaged record or file)", path, st.Size(), size)
	}
	b := make([]byte, len(header))
	if _, err := f.ReadAt(b, 0); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if string(b) != header {
		return fmt.Errorf("%s:1: header %q is not the study's %q", path, strings.TrimSuffix(string(b), "\n"), strings.TrimSuffix(header, "\n"))
	}
	if _, err := f.ReadAt(b[:1], size-1); err != nil || b[0] != '\n' {
		return fmt.Errorf("%s: byte %d (csv_bytes in the record) does not end a row (damaged record or file)", path, size)
	}
	if done == 0 {
		if size != int64(len(header)) {
			return fmt.Errorf("%s: %d bytes of rows before the first point (damaged record or file)", path, size-int64(len(header)))
		}
		return nil
	}
	// The last row before size: at most a line's worth of bytes back.
	from := max(int64(len(header)), size-maxRowBytes)
	tail := make([]byte, size-from)
	if _, err := f.ReadAt(tail, from); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	row := tail[bytes.LastIndexByte(tail[:len(tail)-1], '\n')+1:]
	if want := strconv.Itoa(done-1) + ","; !bytes.HasPrefix(row, []byte(want)) {
		return fmt.Errorf("%s: the row ending at byte %d (csv_bytes) is not of point %d, the last of the %d points_done (damaged record or file)", path, size, done-1, done)
	}
	return nil
}

// sameRows checks the rows of design.csv in [from, size) against the
// design's points: each row's point index and parameter values must be
// those of pts (the first points_done points of the design the options
// make), and the points' statuses must add up to the record's
// points_by_status. The record names its design by kind, n and seed, and
// the rows must be of that design: a record whose n was edited resumed
// one Latin hypercube with another, and a complete design of 40 000
// points had 11 505 empty strata per parameter (audit 15).
func sameRows(f *os.File, path string, from, size int64, s *study.Study, pts [][]float64, byStatus map[string]int, keep map[int][]byte) error {
	r := bufio.NewReaderSize(io.NewSectionReader(f, from, size-from), maxRowBytes)
	counts := map[string]int{}
	point, worst := -1, ""
	line := 1
	// Each point's rows, after "point,status,": its parameters, then per
	// dataset (in study order) and condition row the dataset's name and
	// the condition values (audit 16: rows with other conditions, another
	// dataset or missing rows passed the parameters' check).
	c := len(s.ModelInfo.Spec.Conditions)
	var rowTail [][]byte // per row of a point: ",dataset,x…" after θ
	for _, ds := range s.Data {
		for k := range ds.K {
			b := appendField([]byte{','}, ds.Name)
			for j := range c {
				b = append(b, ',')
				b = strconv.AppendFloat(b, ds.X[k*c+j], 'g', -1, 64)
			}
			rowTail = append(rowTail, b)
		}
	}
	var theta []byte
	nrow := 0 // rows of the current point so far
	flush := func() error {
		if point >= 0 {
			counts[worst]++
			if nrow != len(rowTail) {
				return fmt.Errorf("%s:%d: point %d has %d rows, the study's datasets %d (damaged record or file)", path, line, point, nrow, len(rowTail))
			}
		}
		return nil
	}
	for {
		row, err := r.ReadSlice('\n')
		if err == io.EOF && len(row) == 0 {
			break
		}
		if err != nil && err != io.EOF {
			if err == bufio.ErrBufferFull {
				return fmt.Errorf("%s:%d: a row longer than %d bytes (damaged file)", path, line+1, maxRowBytes)
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		line++
		idx, rest, ok1 := bytes.Cut(row, []byte{','})
		status, rest, ok2 := bytes.Cut(rest, []byte{','})
		i, perr := strconv.Atoi(string(idx))
		if !ok1 || !ok2 || perr != nil || i < point || i > point+1 || i >= len(pts) {
			return fmt.Errorf("%s:%d: not a row of point %d or %d of the %d points_done (damaged record or file)", path, line, max(point, 0), point+1, len(pts))
		}
		if i != point {
			if err := flush(); err != nil {
				return err
			}
			point, worst, nrow = i, abi.OK.String(), 0
			theta = theta[:0]
			for j, v := range pts[i] {
				if j > 0 {
					theta = append(theta, ',')
				}
				theta = strconv.AppendFloat(theta, v, 'g', -1, 64)
			}
		}
		if !bytes.HasPrefix(rest, theta) {
			return fmt.Errorf("%s:%d: point %d's parameters are not the design's (the record's design, n or seed differs from the one that wrote these rows; run the design again into another folder)", path, line, i)
		}
		tail := rest[len(theta):]
		if nrow >= len(rowTail) || !bytes.HasPrefix(tail, rowTail[nrow]) || len(tail) > len(rowTail[nrow]) && tail[len(rowTail[nrow])] != ',' && tail[len(rowTail[nrow])] != '\n' {
			return fmt.Errorf("%s:%d: row %d of point %d is not the study's dataset and condition row (damaged or edited file)", path, line, nrow+1, i)
		}
		nrow++
		if st := string(status); st != abi.OK.String() {
			worst = st
		}
		if b, ok := keep[i]; ok {
			keep[i] = append(b, row...)
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if point != len(pts)-1 {
		return fmt.Errorf("%s: rows of %d points, the record's points_done is %d (damaged record or file)", path, point+1, len(pts))
	}
	for k, v := range byStatus {
		if counts[k] != v {
			return fmt.Errorf("%s: points_by_status %v does not match the rows' statuses %v (damaged record)", path, byStatus, counts)
		}
	}
	for k, v := range counts {
		if byStatus[k] != v {
			return fmt.Errorf("%s: points_by_status %v does not match the rows' statuses %v (damaged record)", path, byStatus, counts)
		}
	}
	return nil
}

// resumeChecked is how many written points a resume evaluates again.
const resumeChecked = 8

// sameOutputs evaluates the points of rows (their rows as design.csv
// holds them) and refuses rows that are not what appendRows writes for
// the model's outputs there.
func sameOutputs(ctx context.Context, s *study.Study, path string, pts [][]float64, rows map[int][]byte) error {
	tg := target.New(s, 1)
	idx := make([]int, 0, len(rows))
	for i := range rows {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		var want []byte
		for _, ds := range s.Data {
			ys, sts, err := tg.Outputs(ctx, [][]float64{pts[i]}, ds)
			if err != nil {
				return err
			}
			want = appendRows(want, s, i, pts[i], ds, ys[0], sts[0])
		}
		if !bytes.Equal(want, rows[i]) {
			return fmt.Errorf("%s: the rows of point %d are not what the model gives there (evaluated again): the file was edited, or the model or its data changed; run the design again into another folder", path, i)
		}
	}
	return nil
}

// maxRowBytes bounds how far back resumable looks for the last row.
const maxRowBytes = 1 << 20

func writeRecord(path string, rec *Record) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	_ = os.Remove(tmp) // a leftover, or something put in its place
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadRecord reads and checks a design folder's design.json.
func ReadRecord(path string) (*Record, error) { return readRecord(path) }

func readRecord(path string) (*Record, error) {
	b, err := safefile.ReadFile(path, MaxRecordBytes)
	if err != nil {
		return nil, err
	}
	var r Record
	if err := strictjson.Decode(b, &r, strictjson.Lenient); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := r.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// Check refuses a record whose text has control characters: a design
// folder may come from elsewhere, and its model name reaches the terminal
// in messages (an escape sequence would drive it; audit 4).
func (r *Record) Check() error {
	for _, f := range []struct{ key, v string }{{"study", r.Study}, {"model", r.Model}, {"model_version", r.ModelVer}, {"design", r.Kind}, {"space", r.Space}} {
		if !guesttext.Clean(f.v) {
			return fmt.Errorf("%s \"%s\" has a control character or invalid UTF-8", f.key, guesttext.Escape(f.v))
		}
	}
	for _, p := range r.Params {
		if !guesttext.Clean(p.Name) || !guesttext.Clean(p.Unit) {
			return fmt.Errorf("parameter \"%s\" has a control character or invalid UTF-8", guesttext.Escape(p.Name))
		}
	}
	for _, c := range append(slices.Clone(r.Conditions), r.Outputs...) {
		if !guesttext.Clean(c.Name) || !guesttext.Clean(c.Unit) {
			return fmt.Errorf("column \"%s\" has a control character or invalid UTF-8", guesttext.Escape(c.Name))
		}
	}
	return nil
}

// sameRun checks that a resumed run continues the same design of the same
// target.
func sameRun(old, cur *Record) error {
	switch {
	case old.Kind != cur.Kind || old.N != cur.N || old.Seed != cur.Seed || old.Space != cur.Space:
		return fmt.Errorf("design %s n=%d seed=%d space=%s, now %s n=%d seed=%d space=%s",
			old.Kind, old.N, old.Seed, old.Space, cur.Kind, cur.N, cur.Seed, cur.Space)
	case len(old.Provenance.Inputs) != len(cur.Provenance.Inputs):
		return errors.New("the study's input files changed")
	}
	for i, in := range old.Provenance.Inputs {
		if in.SHA256 != cur.Provenance.Inputs[i].SHA256 || in.Role != cur.Provenance.Inputs[i].Role {
			return fmt.Errorf("input %s changed (sha256 %s, now %s)", in.Role, in.SHA256, cur.Provenance.Inputs[i].SHA256)
		}
	}
	if old.Done < 0 || old.Done > old.N || old.CSVBytes <= 0 {
		return fmt.Errorf("points_done %d of %d, csv_bytes %d: damaged record", old.Done, old.N, old.CSVBytes)
	}
	counted := 0
	for k, c := range old.ByStatus {
		if c < 0 || c > old.Done {
			return fmt.Errorf("points_by_status %q: %d of %d points done: damaged record", k, c, old.Done)
		}
		counted += c
	}
	if counted != old.Done {
		return fmt.Errorf("points_by_status count %d points, points_done %d: damaged record", counted, old.Done)
	}
	if old.ByStatus == nil {
		old.ByStatus = map[string]int{}
	}
	return nil
}

func paramNames(ps []abi.Param) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

func columnNames(cs []abi.Column) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
	}
	return out
}
