// Command kriging-hartmann6 fits builtin/surrogate/kriging to the
// Hartmann-6 function on a Halton design and reports the fit time and the
// RMSE on held-out points, from several starting θ₀; docs/PERFORMANCE.md
// ("Kriging on Hartmann-6") compares it with sklearn's
// GaussianProcessRegressor (sklearn_hartmann6.py) in one run of run.sh.
//
// Data: the training sites are points 0 … n−1 of the unscrambled Halton
// sequence in 6-D (builtin/design; identical to
// scipy.stats.qmc.Halton(6, scramble=False).random(n)); the test points
// are m uniform points from PCG(seed, 0). Both are written to OUT/train.csv
// and OUT/test.csv (x1…x6,y) so the Python side fits the same data.
//
// Output: one JSON line per start with the fit's wall time, the RMSE on
// the test points, θ, ln ψ and the number of likelihood evaluations.
package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kinfer/kinfer/builtin/design"
	"github.com/kinfer/kinfer/builtin/surrogate/kriging"
	"github.com/kinfer/kinfer/builtin/testfunc"
)

func writeCSV(path string, x [][]float64, y []float64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"x1", "x2", "x3", "x4", "x5", "x6", "y"})
	for i := range x {
		rec := make([]string, 7)
		for j := range 6 {
			rec[j] = strconv.FormatFloat(x[i][j], 'g', -1, 64)
		}
		rec[6] = strconv.FormatFloat(y[i], 'g', -1, 64)
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return f.Close()
}

func main() {
	n := flag.Int("n", 1000, "training sites (Halton points 0 … n−1)")
	m := flag.Int("m", 2000, "test points (uniform)")
	seed := flag.Uint64("seed", 1, "seed of the test points")
	out := flag.String("out", "out/kriging-hartmann6", "directory for train.csv and test.csv")
	corr := flag.String("corr", "gaussian", "correlation: gaussian, exponential, matern32, matern52")
	order := flag.Int("order", 0, "regression order 0, 1 or 2")
	starts := flag.String("starts", "default,0.001,1,100", "θ₀ per run, comma-separated: 'default' or one value for all coordinates")
	subset := flag.Int("subset", 0, "kriging.Options.Subset (0: the package default)")
	refine := flag.Int("refine", 0, "kriging.Options.RefineIterations (0: the package default)")
	full := flag.Int("full", 0, "kriging.Options.FullIterations (0: the package default)")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: kriging-hartmann6 [flags]\n\nFits DACE Kriging to Hartmann-6 on a Halton design and prints one JSON line per start.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	c, err := kriging.ParseCorrelation(*corr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	h, _ := design.NewHalton(6)
	x := h.Points(0, *n)
	y := make([]float64, *n)
	for i := range x {
		y[i] = testfunc.Hartmann6(x[i])
	}
	rng := rand.New(rand.NewPCG(*seed, 0))
	xt := make([][]float64, *m)
	yt := make([]float64, *m)
	for i := range xt {
		xt[i] = make([]float64, 6)
		for j := range xt[i] {
			xt[i][j] = rng.Float64()
		}
		yt[i] = testfunc.Hartmann6(xt[i])
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := writeCSV(filepath.Join(*out, "train.csv"), x, y); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := writeCSV(filepath.Join(*out, "test.csv"), xt, yt); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, s := range strings.Split(*starts, ",") {
		opt := kriging.Options{Order: *order, Correlation: c, Subset: *subset, RefineIterations: *refine, FullIterations: *full}
		if s != "default" {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || !(v > 0) {
				fmt.Fprintf(os.Stderr, "bad start %q\n", s)
				os.Exit(2)
			}
			opt.Theta0 = []float64{v, v, v, v, v, v}
		}
		t0 := time.Now()
		km, err := kriging.Fit(x, y, opt)
		sec := time.Since(t0).Seconds()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		t1 := time.Now()
		var se float64
		for i := range xt {
			yh, _, _ := km.Predict(xt[i])
			se += (yh - yt[i]) * (yh - yt[i])
		}
		predSec := time.Since(t1).Seconds()
		info := km.Info()
		rec := map[string]any{
			"impl": "kinfer-kriging", "n": *n, "m": *m, "corr": *corr, "order": *order, "start": s,
			"fit_seconds": sec, "rmse": math.Sqrt(se / float64(*m)), "theta": km.Theta(),
			"objective": info.Objective, "evaluations": info.Evaluations, "full_evaluations": info.FullEvals,
			"subset": info.SubsetSize, "screen_s": info.ScreenSeconds, "local_s": info.LocalSeconds,
			"refine_s": info.RefineSeconds, "predict_mse_seconds": predSec,
			"local_values": info.LocalValues,
		}
		b, _ := json.Marshal(rec)
		fmt.Println(string(b))
	}
}
