// Command sweep reproduces Table 1 of Gouveia, Lemosse, Pagnacco & Souza
// de Cursi ("Temporal identification in a flexible multibody system:
// application to biomechanics"): for each of its seven rows (direct
// identification on three data variants, indirect on four) and each of
// t₁ = 0.69 s and t₂ = 2.83 s, it runs a kinfer study of the builtin
// twobar-direct or twobar-indirect model from the starting points
// p = f·p_sol over a grid of f in [0.5, 2.0], all starts of one study
// advanced together by the chosen least-squares method, and reports for
// each f whether the method reached p_sol (every parameter within 1 %),
// and the contiguous range of f around 1 from which it did.
//
//	go run ./examples/flex-twobar/sweep [-method gaussnewton|gaussnewton-halving|levmar] [-rows 1,2,...] [-times t1,t2] [-o DIR]
//
// It writes DIR/ROW-TIME/{study.toml,starts.csv,out/} and DIR/results.csv,
// and prints a markdown table. The studies are ordinary kinfer studies
// (kinfer run DIR/ROW-TIME/study.toml reruns one).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kinfer/kinfer/builtin/flexmb/twobar"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/study"
)

// Row is one row of Table 1.
type Row struct {
	ID       int
	Kind     string // direct | indirect
	Set      string // simulated | mixed | measured
	Eq15     bool
	Paper    [2]string // the paper's result at t1 and t2
	Grid     string    // full | near (the measured set: from the solution only)
	Describe string
	// Stage1, when set, is a first identification on the data up to that
	// time (tN of indirect-simulated-upto-tN.csv), whose final points
	// start the identification of the row (a continuation in time).
	Stage1 string
}

// Rows are Table 1's seven rows.
var Rows = []Row{
	{1, "direct", "simulated", false, [2]string{"good convergence for huge perturbations", "same as t1"}, "full", "Direct, simulated set", ""},
	{2, "direct", "mixed", false, [2]string{"right convergence (to p1) for huge perturbations", "same as t1"}, "full", "Direct, simulated set, velocities measured", ""},
	{3, "direct", "measured", false, [2]string{"bad convergence even from p_sol", "same as t1"}, "full", "Direct, measured set", ""},
	{4, "indirect", "simulated", false, [2]string{"0.93 to 1.10", "0.90 to 1.02"}, "full", "Indirect, simulated set, Eq. 16", ""},
	{5, "indirect", "mixed", false, [2]string{"0.93 to 1.10", "0.90 to 1.02"}, "full", "Indirect, positions and accelerations simulated, velocities measured, Eq. 16", ""},
	{6, "indirect", "measured", false, [2]string{"bad convergence even from p_sol", "same as t1"}, "near", "Indirect, measured set, Eq. 16", ""},
	{7, "indirect", "simulated", true, [2]string{"0.90 to 1.18", "0.98 to 1.02 (reasonable: to p2)"}, "full", "Indirect, simulated set, Eq. 15 (x2, y4, x5, y5)", ""},
	// Beyond Table 1: Eq. 15 on every 10 ms sample in (0, t] (the paper's
	// "future tests, using many reference times"); one simulation per
	// evaluation, as for one time.
	{8, "indirect", "simulated-upto", true, [2]string{"(not in the paper)", "(not in the paper)"}, "full", "Indirect, simulated set, Eq. 15 at every sample in (0, t]", ""},
	// Beyond Table 1: row 8 started from the solution of row 8 on the
	// first 0.2 s (a continuation in the horizon).
	{9, "indirect", "simulated-upto", true, [2]string{"(not in the paper)", "(not in the paper)"}, "full", "Indirect, simulated set, Eq. 15 at every sample in (0, 0.2 s], then in (0, t]", "t0"},
}

// Grid is the f values: "full": 0.5 to 2.0 by 0.1 and 0.90 to 1.20 by
// 0.02; "coarse" (the -grid flag, for the 4× longer simulations to t2):
// 0.5, 0.75, 1.25, 1.5, 2.0 and 0.90 to 1.10 by 0.02.
func Grid(kind string) []float64 {
	if kind == "full" && gridFlag == "coarse" {
		kind = "coarse"
	}
	switch kind {
	case "coarse":
		out := []float64{0.5, 0.75}
		for i := 90; i <= 110; i += 2 {
			out = append(out, float64(i)/100)
		}
		return append(out, 1.25, 1.5, 2.0)
	case "near":
		return []float64{0.98, 1.0, 1.02}
	case "bench":
		return []float64{1.05}
	}
	set := map[int]bool{}
	for i := 50; i <= 200; i += 10 {
		set[i] = true
	}
	for i := 90; i <= 120; i += 2 {
		set[i] = true
	}
	var out []float64
	for k := range set {
		out = append(out, float64(k)/100)
	}
	sort.Float64s(out)
	return out
}

var gridFlag = "full"

// TolSolution: a start reached p_sol when every parameter is within 1 %.
const TolSolution = 0.01

// methodBlock is the [method] table of a study.
func methodBlock(method string, starts, maxIter int) string {
	switch method {
	case "gaussnewton":
		return fmt.Sprintf("use = \"gaussnewton\"\nstarts = %d\nstep_control = \"none\"\nmax_iterations = %d\nxtol = 1e-10\nftol = 1e-14\n", starts, maxIter)
	case "gaussnewton-halving":
		return fmt.Sprintf("use = \"gaussnewton\"\nstarts = %d\nstep_control = \"halving\"\nmax_iterations = %d\nxtol = 1e-10\nftol = 1e-14\n", starts, maxIter)
	case "levmar":
		return fmt.Sprintf("use = \"levmar\"\nstarts = %d\nmax_evaluations = %d\nxtol = 1e-10\nftol = 1e-14\n", starts, 2*maxIter)
	}
	return ""
}

// StudyText is the study of one row and time.
func StudyText(r Row, tn, dataDir, method string, starts, maxIter int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Table 1 row %d (%s) at %s, written by examples/flex-twobar/sweep\n", r.ID, r.Describe, tn)
	fmt.Fprintf(&b, "name = \"flex-twobar-row%d-%s\"\nseed = 1\ninit = \"starts.csv\"\n", r.ID, tn)
	if r.Kind == "indirect" {
		b.WriteString("jacobian = \"central\"\n\n[model]\nuse = \"twobar-indirect\"\n")
	} else {
		b.WriteString("\n[model]\nuse = \"twobar-direct\"\n")
	}
	file := filepath.Join(dataDir, fmt.Sprintf("%s-%s-%s.csv", r.Kind, r.Set, tn))
	fmt.Fprintf(&b, "\n[[data]]\nname = \"d\"\nfile = %q\n", file)
	if r.Eq15 {
		b.WriteString("outputs = [\"x2\", \"y4\", \"x5\", \"y5\"]\n")
	}
	b.WriteString("\n[[likelihood]]\nuse = \"gaussian\"\ndata = \"d\"\nsigma = 1.0\n")
	b.WriteString("\n[prior]\nk1  = { uniform = [1.0, 7000.0] }\nkt1 = { uniform = [0.001, 5.0] }\nk3  = { uniform = [1.0, 4000.0] }\nkt3 = { uniform = [0.001, 5.0] }\n")
	b.WriteString("\n[method]\n" + methodBlock(method, starts, maxIter))
	return b.String()
}

// Result of one start.
type Result struct {
	F      float64
	P      [4]float64
	RelErr float64 // max_i |p_i/p_sol,i − 1|
}

func readSamples(path string) ([][4]float64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	var out [][4]float64
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		f := strings.Split(sc.Text(), ",")
		var p [4]float64
		for i := 0; i < 4; i++ {
			if p[i], err = strconv.ParseFloat(f[i], 64); err != nil {
				return nil, fmt.Errorf("%s: %v", path, err)
			}
		}
		out = append(out, p)
	}
	return out, sc.Err()
}

// runStudy writes starts.csv and study.toml of row r at time tn into dir,
// runs the study and returns the final point of every start.
func runStudy(ctx context.Context, r Row, tn, dataDir, dir, method string, starts [][4]float64, workers, maxIter int) ([][4]float64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var sb strings.Builder
	sb.WriteString("k1,kt1,k3,kt3\n")
	for _, p := range starts {
		fmt.Fprintf(&sb, "%.17g,%.17g,%.17g,%.17g\n", p[0], p[1], p[2], p[3])
	}
	if err := os.WriteFile(filepath.Join(dir, "starts.csv"), []byte(sb.String()), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "study.toml"), []byte(StudyText(r, tn, dataDir, method, len(starts), maxIter)), 0o644); err != nil {
		return nil, err
	}
	s, err := study.Load(ctx, filepath.Join(dir, "study.toml"), study.Options{Workers: workers})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if _, err := run.Run(ctx, s, run.Options{OutDir: filepath.Join(dir, "out"), Workers: workers}); err != nil {
		return nil, err
	}
	ps, err := readSamples(filepath.Join(dir, "out", "samples.csv"))
	if err != nil {
		return nil, err
	}
	if len(ps) != len(starts) {
		return nil, fmt.Errorf("%s: %d final points for %d starts", dir, len(ps), len(starts))
	}
	return ps, nil
}

// RunRow runs one row at one time and returns the result of each f.
func RunRow(ctx context.Context, r Row, tn, dataDir, outDir, method string, workers, maxIter int) ([]Result, time.Duration, error) {
	grid := Grid(r.Grid)
	dir := filepath.Join(outDir, fmt.Sprintf("row%d-%s", r.ID, tn))
	starts := make([][4]float64, len(grid))
	for i, f := range grid {
		for j := range starts[i] {
			starts[i][j] = f * twobar.PSol[j]
		}
	}
	t0 := time.Now()
	if r.Stage1 != "" {
		ps, err := runStudy(ctx, r, r.Stage1, dataDir, filepath.Join(dir, "stage1"), method, starts, workers, maxIter)
		if err != nil {
			return nil, 0, err
		}
		starts = ps
	}
	ps, err := runStudy(ctx, r, tn, dataDir, dir, method, starts, workers, maxIter)
	if err != nil {
		return nil, 0, err
	}
	el := time.Since(t0)
	out := make([]Result, len(grid))
	for i, f := range grid {
		res := Result{F: f, P: ps[i]}
		for j := 0; j < 4; j++ {
			res.RelErr = math.Max(res.RelErr, math.Abs(ps[i][j]/twobar.PSol[j]-1))
		}
		out[i] = res
	}
	return out, el, nil
}

// Range returns the contiguous range of f around 1 (on the grid) whose
// starts all reached p_sol, and the other f that did.
func Range(res []Result) (lo, hi float64, ok bool, others []float64) {
	i1 := -1
	for i, r := range res {
		if math.Abs(r.F-1) < 1e-9 {
			i1 = i
		}
	}
	if i1 < 0 || res[i1].RelErr > TolSolution {
		ok = false
	} else {
		ok = true
		a, b := i1, i1
		for a > 0 && res[a-1].RelErr <= TolSolution {
			a--
		}
		for b+1 < len(res) && res[b+1].RelErr <= TolSolution {
			b++
		}
		lo, hi = res[a].F, res[b].F
	}
	for _, r := range res {
		if r.RelErr <= TolSolution && (!ok || r.F < lo || r.F > hi) {
			others = append(others, r.F)
		}
	}
	return
}

func main() {
	method := flag.String("method", "gaussnewton", "gaussnewton (Gouveia's plain Eq. 13 step), gaussnewton-halving, or levmar")
	rows := flag.String("rows", "1,2,3,4,5,6,7", "Table 1 rows to run (beyond the paper: 8, Eq. 15 at every sample up to t; 9, the same after a first fit on the first 0.2 s)")
	times := flag.String("times", "t1,t2", "identification times (t1 = 0.69 s, t2 = 2.83 s)")
	dataDir := flag.String("data", "examples/flex-twobar/data", "the generator's data directory")
	outDir := flag.String("o", "out/flex-twobar-sweep", "output directory")
	workers := flag.Int("workers", 2, "evaluation workers")
	flag.StringVar(&gridFlag, "grid", "full", "f grid: full (0.5-2.0 by 0.1, 0.90-1.20 by 0.02) or coarse (0.5, 0.75, 0.90-1.10 by 0.02, 1.25, 1.5, 2.0)")
	maxIter := flag.Int("max-iterations", 15, "iterations per start (levmar: twice this many evaluations)")
	flag.Parse()
	if methodBlock(*method, 1, 1) == "" {
		fmt.Fprintf(os.Stderr, "sweep: unknown method %q\n", *method)
		os.Exit(2)
	}
	dd, err := filepath.Abs(*dataDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		os.Exit(1)
	}
	want := map[string]bool{}
	for _, r := range strings.Split(*rows, ",") {
		want[strings.TrimSpace(r)] = true
	}
	od := filepath.Join(*outDir, *method)
	if err := os.MkdirAll(od, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		os.Exit(1)
	}
	csv, err := os.Create(filepath.Join(od, "results.csv"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		os.Exit(1)
	}
	defer csv.Close()
	fmt.Fprintln(csv, "row,time,f,k1,kt1,k3,kt3,max_rel_err,reached_p_sol")
	fmt.Printf("method %s; a start reaches p_sol when every parameter is within %g %%\n\n", *method, 100*TolSolution)
	fmt.Println("| row | identification | time | paper | kinfer: range of f reaching p_sol | also from | final point from f = 1 (max rel. error) | wall |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	ctx := context.Background()
	for _, r := range Rows {
		if !want[strconv.Itoa(r.ID)] {
			continue
		}
		for ti, tn := range []string{"t1", "t2"} {
			if !strings.Contains(*times, tn) {
				continue
			}
			res, el, err := RunRow(ctx, r, tn, dd, od, *method, *workers, *maxIter)
			if err != nil {
				fmt.Fprintln(os.Stderr, "sweep:", err)
				os.Exit(1)
			}
			for _, x := range res {
				fmt.Fprintf(csv, "%d,%s,%g,%.8g,%.8g,%.8g,%.8g,%.4g,%v\n", r.ID, tn, x.F, x.P[0], x.P[1], x.P[2], x.P[3], x.RelErr, x.RelErr <= TolSolution)
			}
			lo, hi, ok, others := Range(res)
			rng := "none (not even from f = 1)"
			if ok {
				rng = fmt.Sprintf("%.2f to %.2f", lo, hi)
			}
			oth := "–"
			if len(others) > 0 {
				var s []string
				for _, f := range others {
					s = append(s, fmt.Sprintf("%.2f", f))
				}
				oth = strings.Join(s, " ")
			}
			var one Result
			for _, x := range res {
				if math.Abs(x.F-1) < 1e-9 {
					one = x
				}
			}
			fmt.Printf("| %d | %s | %s | %s | %s | %s | [%.4g %.4g %.4g %.4g] (%.2g) | %.0f s |\n", r.ID, r.Describe, tn, r.Paper[ti], rng, oth,
				one.P[0], one.P[1], one.P[2], one.P[3], one.RelErr, el.Seconds())
		}
	}
}
