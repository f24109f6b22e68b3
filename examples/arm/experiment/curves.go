package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kinfer/kinfer/builtin/models/arm"
	rb "github.com/kinfer/kinfer/builtin/rigidbody"
	"github.com/kinfer/kinfer/host/study"
)

// The curves of the paper's Fig. 3 (C1 and C2 against iterations, median
// and quartiles over the runs) and Fig. 5 (each parameter's percentage
// error against iterations, best M4 run) are computed from the methods'
// trajectories in summary.json (trace_theta = "yes"): Adam records its
// iterate every trace_every iterations, annealing its best point after every
// strategy chain, both in the method's coordinates x, which the study's
// transform maps to θ.

// TracePoint is a run's state after Iter iterations, i.e. Iter loss
// evaluations after the one of the initial guess: the criteria of the
// traced point (C1 its loss) and π̂ (all parameters, model order).
type TracePoint struct {
	Iter int
	Criteria
	Pihat []float64
}

// trajectory is what Trace reads of summary.json's method_report.
type trajectory struct {
	Adam []struct {
		Iteration []int       `json:"iteration"`
		LogTarget []float64   `json:"log_target"`
		Theta     [][]float64 `json:"theta"`
	}
	Anneal struct {
		Evaluations   []int       `json:"evaluations"`
		BestLogTarget []float64   `json:"best_log_target"`
		BestTheta     [][]float64 `json:"best_theta"`
	}
}

// Trace reads the trajectory of method m in run k under dir and evaluates
// the criteria at each trace point. The x axis is the paper's
// "iterations", counted as loss evaluations after the initial guess's:
// Adam's iterate t is at t (t updates, each one evaluation with its
// gradient), annealing's best point after e evaluations (local searches
// included) at e − 1. C1 = −(log target − log prior) = L_FD.
func Trace(dir string, k int, m Method) ([]TracePoint, error) {
	b, err := os.ReadFile(filepath.Join(dir, "results", RunDir(k), m.Name, "summary.json"))
	if err != nil {
		return nil, err
	}
	var s struct {
		Report struct {
			Trajectory json.RawMessage `json:"trajectory"`
		} `json:"method_report"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	var iters []int
	var logTarget []float64
	var xs [][]float64
	var tr trajectory
	if m.Anneal {
		if err := json.Unmarshal(s.Report.Trajectory, &tr.Anneal); err != nil {
			return nil, err
		}
		logTarget, xs = tr.Anneal.BestLogTarget, tr.Anneal.BestTheta
		for _, e := range tr.Anneal.Evaluations {
			iters = append(iters, e-1)
		}
	} else {
		if err := json.Unmarshal(s.Report.Trajectory, &tr.Adam); err != nil {
			return nil, err
		}
		if len(tr.Adam) != 1 {
			return nil, fmt.Errorf("want one Adam start, got %d", len(tr.Adam))
		}
		iters, logTarget, xs = tr.Adam[0].Iteration, tr.Adam[0].LogTarget, tr.Adam[0].Theta
	}
	if len(xs) == 0 || len(xs) != len(iters) || len(logTarget) != len(iters) {
		return nil, errors.New(`no trajectory with points (the study needs trace_theta = "yes")`)
	}
	st, err := study.Load(context.Background(), filepath.Join(dir, RunDir(k), m.Name+".toml"), study.Options{Workers: 1})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	pts := make([]TracePoint, len(iters))
	for j, x := range xs {
		if len(x) != len(st.Free) {
			return nil, fmt.Errorf("trace point %d has %d values, the study %d free parameters", j, len(x), len(st.Free))
		}
		th := st.Forward(x)
		pihat := append([]float64(nil), st.Base...)
		logPrior := 0.0
		for i, v := range th {
			pihat[st.FreeIdx[i]] = v
			logPrior += st.Priors[i].LogPdf(v)
		}
		c := Evaluate(pihat)
		c.C1 = -(logTarget[j] - logPrior)
		pts[j] = TracePoint{Iter: iters[j], Criteria: c, Pihat: pihat}
	}
	return pts, nil
}

// at is the trace point in force after n iterations: the last one with
// Iter ≤ n (the first if none).
func at(pts []TracePoint, n int) TracePoint {
	j := sort.Search(len(pts), func(j int) bool { return pts[j].Iter > n }) - 1
	return pts[max(j, 0)]
}

// Band is one method's curve of one criterion: at iterations N, the
// median and quartiles over the runs.
type Band struct {
	N              []float64
	Median, Q1, Q3 []float64
}

// grid is 0, step, 2·step, … and last.
func grid(step, last int) []int {
	var g []int
	for n := 0; n < last; n += step {
		g = append(g, n)
	}
	return append(g, last)
}

// bands are per method the curves of C1, C2 and C3m every step
// iterations up to last, of the point each run's trace holds there (Adam:
// its iterate; annealing: its best point so far).
func bands(traces map[string][][]TracePoint, step, last int) map[string][3]Band {
	out := map[string][3]Band{}
	for _, m := range AllMethods {
		runs := traces[m.Name]
		if len(runs) == 0 {
			continue
		}
		var bs [3]Band
		for _, n := range grid(step, last) {
			var c [3][]float64
			for _, pts := range runs {
				p := at(pts, n)
				c[0], c[1], c[2] = append(c[0], p.C1), append(c[1], p.C2), append(c[2], p.C3m)
			}
			for j := range bs {
				bs[j].N = append(bs[j].N, float64(n))
				bs[j].Median = append(bs[j].Median, Quantile(c[j], 0.5))
				bs[j].Q1 = append(bs[j].Q1, Quantile(c[j], 0.25))
				bs[j].Q3 = append(bs[j].Q3, Quantile(c[j], 0.75))
			}
		}
		out[m.Name] = bs
	}
	return out
}

// Curves is curves.csv (Fig. 3): per method and grid point the number of
// runs and the median and quartiles of C1, C2 and C3m.
func Curves(traces map[string][][]TracePoint, step, last int) string {
	var b strings.Builder
	b.WriteString("method,iteration,runs,C1_median,C1_q1,C1_q3,C2_median,C2_q1,C2_q3,C3m_median,C3m_q1,C3m_q3\n")
	all := bands(traces, step, last)
	for _, m := range AllMethods {
		bs, ok := all[m.Name]
		if !ok {
			continue
		}
		for i, n := range bs[0].N {
			fmt.Fprintf(&b, "%s,%d,%d", m.Name, int(n), len(traces[m.Name]))
			for _, c := range bs {
				fmt.Fprintf(&b, ",%.6g,%.6g,%.6g", c.Median[i], c.Q1[i], c.Q3[i])
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Fig3 is the SVG of criterion j (0: C1, log scale; 1: C2) against
// iterations: per method the median and the quartile band.
func Fig3(traces map[string][][]TracePoint, step, last, j int) (string, error) {
	return fig3(bands(traces, step, last), j)
}

// fig3 draws Fig. 3 from the methods' bands (criterion j).
func fig3(all map[string][3]Band, j int) (string, error) {
	var ss []Series
	for k, m := range AllMethods {
		if bs, ok := all[m.Name]; ok {
			c := bs[j]
			ss = append(ss, Series{Name: m.Name, X: c.N, Y: c.Median, Lo: c.Q1, Hi: c.Q3, Color: palette[k]})
		}
	}
	if j == 0 {
		return LinePlot("Fig. 3 (left): loss C1 = L_FD, median and quartiles over the runs", "iterations (loss evaluations after the initial guess)", "C1", true, ss)
	}
	return LinePlot("Fig. 3 (right): distance error C2, median and quartiles", "iterations (loss evaluations after the initial guess)", "C2 [%]", false, ss)
}

// CurveTable is the Markdown version of Curves at a few iteration counts.
func CurveTable(traces map[string][][]TracePoint, marks []int) string {
	var b strings.Builder
	b.WriteString("| method | criterion |")
	for _, n := range marks {
		fmt.Fprintf(&b, " %d |", n)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(marks)) + "\n")
	for _, m := range AllMethods {
		runs := traces[m.Name]
		if len(runs) == 0 {
			continue
		}
		for ci, name := range []string{"C1 median", "C2 % median", "C3m % median"} {
			fmt.Fprintf(&b, "| %s | %s |", m.Name, name)
			for _, n := range marks {
				var x []float64
				for _, pts := range runs {
					p := at(pts, n)
					x = append(x, [3]float64{p.C1, p.C2, p.C3m}[ci])
				}
				f := " %.3g |"
				if ci == 0 {
					f = " %.2e |"
				}
				fmt.Fprintf(&b, f, Quantile(x, 0.5))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// relError is parameter i's error at pihat relative to the truth, in %:
// signed, of |π_gt,i|, or for a product of inertia (0 at the truth) of the
// bone's smallest principal moment.
func relError(pihat []float64, i int) float64 {
	scale := math.Abs(truth[i])
	if f := i % arm.BoneParams; !isMuscle(i) && f >= 7 {
		b := i - f
		scale = math.Min(truth[b+4], math.Min(truth[b+5], truth[b+6]))
	}
	return 100 * (pihat[i] - truth[i]) / scale
}

// errorParams are the parameters of Fig. 5 for method m: the 36 learnable,
// and the 18 inertia entries for M4I.
func errorParams(m Method) []int {
	if !m.Inertia {
		return Learnable()
	}
	idx := make([]int, len(params))
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// ParamErrors is fig5.csv (Fig. 5): at every trace point of one run of
// method m, each parameter's signed percentage error (relError).
func ParamErrors(m Method, pts []TracePoint) string {
	var b strings.Builder
	b.WriteString("iteration")
	for _, i := range errorParams(m) {
		b.WriteString("," + params[i].Name)
	}
	b.WriteString("\n")
	for _, p := range pts {
		fmt.Fprintf(&b, "%d", p.Iter)
		for _, i := range errorParams(m) {
			fmt.Fprintf(&b, ",%.6g", relError(p.Pihat, i))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// ParamErrorTable is the Markdown version of ParamErrors at a few
// iteration counts: per parameter |error| in %, then C3m, C3 and C1.
func ParamErrorTable(m Method, pts []TracePoint, marks []int) string {
	var b strings.Builder
	b.WriteString("| parameter |")
	for _, n := range marks {
		fmt.Fprintf(&b, " %d |", n)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(marks)) + "\n")
	for _, i := range errorParams(m) {
		fmt.Fprintf(&b, "| %s |", params[i].Name)
		for _, n := range marks {
			fmt.Fprintf(&b, " %.3g |", math.Abs(relError(at(pts, n).Pihat, i)))
		}
		b.WriteString("\n")
	}
	for ci, name := range []string{"C3m (muscle mean)", "C3 (the 36)", "C1 (L_FD)"} {
		fmt.Fprintf(&b, "| **%s** |", name)
		for _, n := range marks {
			p := at(pts, n)
			fmt.Fprintf(&b, " %.3g |", [3]float64{p.C3m, p.C3, p.C1}[ci])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// WriteCurves reads the trajectories of every run and method under dir
// that has one, and writes curves.csv, curves.md (Fig. 3) and, for the run
// of lowest C3m (the paper's choice) of M4I if run (as the paper's Fig. 5)
// else of M4, fig5.csv and the test-set errors of its best point (Fig. 5,
// 7). Runs without a usable trajectory are reported to w and skipped.
func WriteCurves(dir string, rows []Row, w io.Writer) error {
	traces := map[string][][]TracePoint{}
	last := 0
	var best struct {
		m   Method
		row Row
		pts []TracePoint
	}
	for _, r := range rows {
		m := methodByName(r.Method)
		pts, err := Trace(dir, r.Run, m)
		if err != nil {
			fmt.Fprintf(w, "%s run %d: no curve: %v\n", r.Method, r.Run, err)
			continue
		}
		traces[m.Name] = append(traces[m.Name], pts)
		last = max(last, pts[len(pts)-1].Iter)
		if m.Name == "M4" && !best.m.Inertia && (best.pts == nil || r.C3m < best.row.C3m) ||
			m.Inertia && (!best.m.Inertia || r.C3m < best.row.C3m) {
			best.m, best.row, best.pts = m, r, pts
		}
	}
	if len(traces) == 0 {
		return nil
	}
	step := max(1, last/100)
	files := map[string]string{"curves.csv": Curves(traces, step, last)}
	var figErr error
	fig := func(name string, svg string, err error) {
		files[name] = svg
		if err != nil && figErr == nil {
			figErr = fmt.Errorf("%s: %w", name, err)
		}
	}
	for j, name := range []string{"fig3-C1.svg", "fig3-C2.svg"} {
		svg, err := Fig3(traces, step, last, j)
		fig(name, svg, err)
	}
	var marks []int
	for _, n := range []int{0, last / 100, last / 10, last / 4, last / 2, last} {
		if len(marks) == 0 || n > marks[len(marks)-1] {
			marks = append(marks, n)
		}
	}
	var md strings.Builder
	md.WriteString("# Diff-MSM comparison: criteria against iterations (Fig. 3)\n\n")
	md.WriteString("Median over the runs after n iterations, i.e. n loss evaluations after the initial guess's (Adam: n updates; annealing: evaluations incl. local searches) of the traced point ")
	md.WriteString("(Adam: its iterate; annealing: its best point so far). Quartiles every 1 % of the run in curves.csv.\n\n")
	md.WriteString(CurveTable(traces, marks))
	if best.pts != nil {
		fmt.Fprintf(&md, "\n# Fig. 5: percentage errors |π̂ − π_gt|/|π_gt| of %s, run %d (lowest C3m of the %s runs)\n\n", best.m.Name, best.row.Run, best.m.Name)
		if best.m.Inertia {
			md.WriteString("Products of inertia (0 at the truth): error relative to the bone's smallest principal moment.\n\n")
		}
		md.WriteString(ParamErrorTable(best.m, best.pts, marks))
		files["fig5.csv"] = ParamErrors(best.m, best.pts)
		for _, muscle := range []bool{true, false} {
			svg, err := Fig5(best.m, best.row.Run, best.pts, muscle)
			fig(map[bool]string{true: "fig5-muscle.svg", false: "fig5-bone.svg"}[muscle], svg, err)
		}
		base, err := NewBase()
		if err != nil {
			return err
		}
		fmt.Fprintf(&md, "\n# Fig. 6: percentage errors of the %d base coefficients of the bones, %s run %d\n\n", len(base.Kept), best.m.Name, best.row.Run)
		md.WriteString("The identifiable linear combinations β = φ_b + K·φ_d of the bones' standard parameters (base.go; a coefficient below 1 % of the largest of its bone and unit at the truth is compared with that largest one).\n\n")
		md.WriteString(BaseErrorTable(base, best.pts, marks))
		files["fig6.csv"] = BaseErrorsCSV(base, best.pts)
		svg, err := Fig6(base, best.m, best.row.Run, best.pts)
		fig("fig6.svg", svg, err)
		if root, err := repoRoot(); err == nil {
			md.WriteString(testSetTable(root, fmt.Sprintf("the best point of %s, run %d (training L_FD %.3g)", best.m.Name, best.row.Run, best.row.C1), best.row.Pihat))
		}
	}
	files["curves.md"] = md.String()
	if figErr != nil {
		return figErr
	}
	return writeFiles(dir, files, w)
}

// writeFiles writes name → text under dir and lists them to w.
func writeFiles(dir string, files map[string]string, w io.Writer) error {
	var names []string
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return err
		}
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "wrote %s in %s\n", strings.Join(names, ", "), dir)
	return nil
}

func methodByName(name string) Method {
	for _, m := range AllMethods {
		if m.Name == name {
			return m
		}
	}
	panic("unknown method " + name)
}

// Fig4 is the SVG box plot over the runs of C3 (j = 0) or C3m (j = 1) per
// method (log scale: the methods differ by orders of magnitude).
func Fig4(rows []Row, j int) (string, error) {
	var boxes []Box
	for k, m := range AllMethods {
		var x []float64
		for _, r := range rows {
			if r.Method == m.Name {
				x = append(x, [2]float64{r.C3, r.C3m}[j])
			}
		}
		if len(x) > 0 {
			boxes = append(boxes, Whiskers(m.Name, palette[k], x))
		}
	}
	if j == 0 {
		return BoxPlot("Fig. 4 (left): C3, mean % error of the 36 learnable parameters", "C3 [%]", true, boxes)
	}
	return BoxPlot("Fig. 4 (right): C3m, mean % error of the 24 muscle parameters", "C3m [%]", true, boxes)
}

// Fig5 is the SVG of each parameter's |error| in % (relError) against
// iterations in one run of method m: the muscle parameters (colour by
// muscle; L0 solid, F0 dashed, vmax dotted) or the bone ones (colour by
// field; humerus solid, ulna dashed, radius dotted).
func Fig5(m Method, run int, pts []TracePoint, muscle bool) (string, error) {
	var ss []Series
	for _, i := range errorParams(m) {
		if isMuscle(i) != muscle {
			continue
		}
		s := Series{Name: params[i].Name, Thin: true}
		if muscle {
			j := i - arm.NBones*arm.BoneParams
			s.Color, s.Dash = palette[j/arm.MuscleParams%len(palette)], dashes[j%arm.MuscleParams]
		} else {
			s.Color, s.Dash = palette[i%arm.BoneParams], dashes[i/arm.BoneParams]
		}
		for _, p := range pts {
			s.X = append(s.X, float64(p.Iter))
			s.Y = append(s.Y, math.Max(math.Abs(relError(p.Pihat, i)), 1e-4))
		}
		ss = append(ss, s)
	}
	what := "bone"
	if muscle {
		what = "muscle"
	}
	return LinePlot(fmt.Sprintf("Fig. 5: |error| of the %s parameters, %s run %d", what, m.Name, run), "iterations", "|error| [%] (floor 1e-4)", true, ss)
}

// BaseErrorsCSV is fig6.csv (Fig. 6): at every trace point, each base
// coefficient's signed percentage error (Base.BaseErrors).
func BaseErrorsCSV(base *Base, pts []TracePoint) string {
	var b strings.Builder
	b.WriteString("iteration," + strings.Join(base.Names(), ",") + "\n")
	for _, p := range pts {
		fmt.Fprintf(&b, "%d", p.Iter)
		for _, e := range base.BaseErrors(p.Pihat) {
			fmt.Fprintf(&b, ",%.6g", e)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// BaseErrorTable is the Markdown version of BaseErrorsCSV at a few
// iteration counts (|error| in %), with each coefficient written out and
// its value at the truth.
func BaseErrorTable(base *Base, pts []TracePoint, marks []int) string {
	var b strings.Builder
	b.WriteString("| coefficient | value at the truth |")
	for _, n := range marks {
		fmt.Fprintf(&b, " %d |", n)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(marks)) + "\n")
	gt := base.Coefficients(truth)
	errs := make([][]float64, len(marks))
	for k, n := range marks {
		errs[k] = base.BaseErrors(at(pts, n).Pihat)
	}
	for i := range base.Kept {
		fmt.Fprintf(&b, "| %s | %.4g |", base.Expression(i), gt[i])
		for k := range marks {
			fmt.Fprintf(&b, " %.3g |", math.Abs(errs[k][i]))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// Fig6 is the SVG of each base coefficient's |error| in % against
// iterations (colour by the kept parameter's field; humerus solid, ulna
// dashed, radius dotted, as Fig5's bone panel).
func Fig6(base *Base, m Method, run int, pts []TracePoint) (string, error) {
	names := base.Names()
	ss := make([]Series, len(base.Kept))
	for i, j := range base.Kept {
		ss[i] = Series{Name: names[i], Thin: true, Color: palette[j%rb.StandardParams], Dash: dashes[j/rb.StandardParams]}
	}
	for _, p := range pts {
		for i, e := range base.BaseErrors(p.Pihat) {
			ss[i].X = append(ss[i].X, float64(p.Iter))
			ss[i].Y = append(ss[i].Y, math.Max(math.Abs(e), 1e-4))
		}
	}
	return LinePlot(fmt.Sprintf("Fig. 6: |error| of the %d base coefficients of the bones, %s run %d", len(base.Kept), m.Name, run), "iterations", "|error| [%] (floor 1e-4)", true, ss)
}
