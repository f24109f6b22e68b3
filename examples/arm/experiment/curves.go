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
	"github.com/kinfer/kinfer/host/study"
)

// The curves of the paper's Fig. 3 (C1 and C2 against iterations, median
// and quartiles over the runs) and Fig. 5 (each parameter's percentage
// error against iterations, best M4 run) are computed from the methods'
// trajectories in summary.json (trace_theta = "yes"): Adam records its
// iterate every trace_every iterations, annealing its best point after every
// strategy chain, both in the method's coordinates x, which the study's
// transform maps to θ.

// TracePoint is a run's state after Evals loss evaluations: the criteria of
// the traced point (C1 its loss) and π̂ (all parameters, model order).
type TracePoint struct {
	Evals int
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
// the criteria at each trace point. One Adam iteration is one evaluation
// (with its gradient); the annealing points are after Evals evaluations
// (local searches included). C1 = −(log target − log prior) = L_FD.
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
	var evals []int
	var logTarget []float64
	var xs [][]float64
	var tr trajectory
	if m.Anneal {
		if err := json.Unmarshal(s.Report.Trajectory, &tr.Anneal); err != nil {
			return nil, err
		}
		evals, logTarget, xs = tr.Anneal.Evaluations, tr.Anneal.BestLogTarget, tr.Anneal.BestTheta
	} else {
		if err := json.Unmarshal(s.Report.Trajectory, &tr.Adam); err != nil {
			return nil, err
		}
		if len(tr.Adam) != 1 {
			return nil, fmt.Errorf("want one Adam start, got %d", len(tr.Adam))
		}
		evals, logTarget, xs = tr.Adam[0].Iteration, tr.Adam[0].LogTarget, tr.Adam[0].Theta
	}
	if len(xs) == 0 || len(xs) != len(evals) || len(logTarget) != len(evals) {
		return nil, errors.New(`no trajectory with points (the study needs trace_theta = "yes")`)
	}
	st, err := study.Load(context.Background(), filepath.Join(dir, RunDir(k), m.Name+".toml"), study.Options{Workers: 1})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	pts := make([]TracePoint, len(evals))
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
		pts[j] = TracePoint{Evals: evals[j], Criteria: c, Pihat: pihat}
	}
	return pts, nil
}

// at is the trace point in force after n evaluations: the last one with
// Evals ≤ n (the first if none).
func at(pts []TracePoint, n int) TracePoint {
	j := sort.Search(len(pts), func(j int) bool { return pts[j].Evals > n }) - 1
	return pts[max(j, 0)]
}

// Curves is curves.csv (Fig. 3): per method and every step evaluations
// up to last, the median and quartiles over the runs of C1 and C2 of the
// point each run's trace holds there (Adam: its iterate; annealing: its
// best point so far).
func Curves(traces map[string][][]TracePoint, step, last int) string {
	var b strings.Builder
	b.WriteString("method,evaluations,runs,C1_median,C1_q1,C1_q3,C2_median,C2_q1,C2_q3,C3m_median,C3m_q1,C3m_q3\n")
	for _, m := range AllMethods {
		runs := traces[m.Name]
		if len(runs) == 0 {
			continue
		}
		for n := 0; n <= last; n += step {
			var c1, c2, c3m []float64
			for _, pts := range runs {
				p := at(pts, n)
				c1, c2, c3m = append(c1, p.C1), append(c2, p.C2), append(c3m, p.C3m)
			}
			fmt.Fprintf(&b, "%s,%d,%d", m.Name, n, len(runs))
			for _, x := range [][]float64{c1, c2, c3m} {
				fmt.Fprintf(&b, ",%.6g,%.6g,%.6g", Quantile(x, 0.5), Quantile(x, 0.25), Quantile(x, 0.75))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
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
	b.WriteString("evaluations")
	for _, i := range errorParams(m) {
		b.WriteString("," + params[i].Name)
	}
	b.WriteString("\n")
	for _, p := range pts {
		fmt.Fprintf(&b, "%d", p.Evals)
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
// that has one, and writes curves.csv, curves.md (Fig. 3) and, from the run
// of lowest final C3m of M4I (if run, as the paper's Fig. 5) else of M4,
// fig5.csv (Fig. 5). Runs without a usable trajectory are reported to w and
// skipped.
func WriteCurves(dir string, rows []Row, w io.Writer) error {
	traces := map[string][][]TracePoint{}
	last := 0
	var best struct {
		m   Method
		run int
		c3m float64
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
		last = max(last, pts[len(pts)-1].Evals)
		f := pts[len(pts)-1]
		if m.Name == "M4" && !best.m.Inertia && (best.pts == nil || f.C3m < best.c3m) ||
			m.Inertia && (!best.m.Inertia || f.C3m < best.c3m) {
			best.m, best.run, best.c3m, best.pts = m, r.Run, f.C3m, pts
		}
	}
	if len(traces) == 0 {
		return nil
	}
	step := max(1, last/100)
	if err := os.WriteFile(filepath.Join(dir, "curves.csv"), []byte(Curves(traces, step, last)), 0o644); err != nil {
		return err
	}
	marks := []int{0, last / 100, last / 10, last / 4, last / 2, last}
	var md strings.Builder
	md.WriteString("# Diff-MSM comparison: criteria against iterations (Fig. 3)\n\n")
	md.WriteString("Median over the runs after n loss evaluations (Adam: iterations; annealing: evaluations incl. local searches) of the traced point ")
	md.WriteString("(Adam: its iterate; annealing: its best point so far). Quartiles every 1 % of the run in curves.csv.\n\n")
	md.WriteString(CurveTable(traces, marks))
	if best.pts != nil {
		fmt.Fprintf(&md, "\n# Fig. 5: percentage errors |π̂ − π_gt|/|π_gt| of %s, run %d (lowest final C3m of the %s runs)\n\n", best.m.Name, best.run, best.m.Name)
		if best.m.Inertia {
			md.WriteString("Products of inertia (0 at the truth): error relative to the bone's smallest principal moment.\n\n")
		}
		md.WriteString(ParamErrorTable(best.m, best.pts, marks))
		if err := os.WriteFile(filepath.Join(dir, "fig5.csv"), []byte(ParamErrors(best.m, best.pts)), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "curves.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s and %s\n", filepath.Join(dir, "curves.csv"), filepath.Join(dir, "curves.md"))
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
