// Command surrogate builds Lin et al. (2010) Kriging contact surrogates of
// the builtin elastic-foundation knee (builtin/contact/efound), one per
// side, in the structure of Eq. 2 (builtin/contact/efsurr), and measures
// them on held-out poses and against the EF model's time per pose:
//
//  1. n sample points on a Hammersley design in (x, F_y, z, T_α, β, γ)
//     over efsurr.GaitBox — the sensitive directions y, α replaced by net
//     loads (Sec. 2.2.2);
//
//  2. a static analysis of each (Sec. 2.2.3) and the reasonable design
//     space reduced to one bound, each side ≥ -minside N (Sec. 2.2.4,
//     without the coarse-surrogate screening);
//
//  3. per side, nine DACE Kriging models (Eq. 2 and the CoP);
//
//  4. m held-out poses (static analyses at a Sobol design in the same box),
//     the surrogate used as in a dynamic simulation (pose in);
//
//  5. time per pose, EF model vs surrogate, one goroutine.
//
//     go run ./examples/tkr-contact/surrogate [-n 1000] [-m 200] [-cell 0.5] [-order 1] [-cache FILE]
package main

import (
	"encoding/gob"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/kinfer/kinfer/builtin/contact/efound"
	"github.com/kinfer/kinfer/builtin/contact/efsurr"
	"github.com/kinfer/kinfer/builtin/design"
	"github.com/kinfer/kinfer/builtin/surrogate/kriging"
)

func main() {
	n := flag.Int("n", 1000, "Hammersley sample points")
	m := flag.Int("m", 200, "held-out poses (Sobol)")
	cell := flag.Float64("cell", 0.5, "element size (mm)")
	workers := flag.Int("workers", 2, "parallel static analyses")
	order := flag.Int("order", 1, "Kriging regression order (0, 1, 2)")
	minSide := flag.Float64("minside", efsurr.MinSide, "reasonable design space: smallest F_y per side (N)")
	cache := flag.String("cache", "", "file to keep the static analyses in (reused when it holds -n and -m points; name it after -cell and -minside)")
	corrName := flag.String("corr", "gaussian", "Kriging correlation: gaussian, matern32, matern52")
	verbose := flag.Bool("v", false, "print each fit's likelihood optimum")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	flag.Parse()
	corr, okc := map[string]kriging.Correlation{"gaussian": kriging.Gaussian, "matern32": kriging.Matern32, "matern52": kriging.Matern52}[*corrName]
	if !okc {
		check(fmt.Errorf("unknown correlation %q", *corrName))
	}
	k := efound.DefaultKnee(*cell, false)

	train, err := design.Hammersley(*n, 6)
	check(err)
	sob, err := design.NewSobol(6, false, 0)
	check(err)
	test := sob.Points(1, *m) // skip the corner point 0
	var st, ht []efsurr.Sample
	var tTrain, tTest float64
	if *cache != "" && load(*cache, &st, &ht) && len(st) == *n && len(ht) == *m {
		fmt.Printf("static analyses read from %s\n", *cache)
	} else {
		t0 := time.Now()
		st = efsurr.Analyse(k, train, efsurr.GaitBox, *minSide, *workers)
		tTrain = time.Since(t0).Seconds()
		t0 = time.Now()
		ht = efsurr.Analyse(k, test, efsurr.GaitBox, *minSide, *workers)
		tTest = time.Since(t0).Seconds()
		if *cache != "" {
			f, err := os.Create(*cache)
			check(err)
			check(gob.NewEncoder(f).Encode([2][]efsurr.Sample{st, ht}))
			check(f.Close())
		}
	}
	t0 := time.Now()
	s, err := efsurr.Fit(st, kriging.Options{Order: *order, Correlation: corr}, func(side, j int, mod *kriging.Model) {
		if *verbose {
			fmt.Fprintf(os.Stderr, "%s %s: ln ψ %.5g, θ %.3g\n", efound.SideNames[side], efsurr.Names[j], mod.Info().Objective, mod.Theta())
		}
	})
	check(err)
	tFit := time.Since(t0).Seconds()
	fmt.Printf("static analyses: %d of %d sample points kept (%.1f s), held-out %d poses (%.1f s)\n", s.Kept, *n, tTrain, *m, tTest)
	fmt.Printf("fitted 2 × %d Kriging models (order %d, %s) in %.1f s\n", len(efsurr.Names), *order, *corrName, tFit)

	acc, err := s.Assess(ht)
	check(err)
	fmt.Printf("\nheld-out accuracy on %d poses (surrogate used as in a dynamic simulation)\n\n", acc[0].N)
	fmt.Println("| side | output | RMSE | max abs error | range of EF values | RMSE / range |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, a := range acc {
		fmt.Printf("| %s | %s | %.4g | %.4g | %.4g … %.4g | %.2g %% |\n", a.Side, a.Output, a.RMSE, a.MaxAbs, a.Min, a.Max, 100*a.RMSE/(a.Max-a.Min))
	}

	// timing: EF contact model vs surrogate, per pose, same poses.
	var poses []efound.Pose
	for _, h := range ht {
		if h.OK {
			poses = append(poses, h.Pose)
		}
	}
	t0 = time.Now()
	for _, p := range poses {
		_, err := k.Contact(p)
		check(err)
	}
	tEF := time.Since(t0).Seconds() / float64(len(poses))
	const reps = 20
	var pred [9]float64
	t0 = time.Now()
	for r := 0; r < reps; r++ {
		for _, p := range poses {
			check(s.Sides[0].Predict(p, &pred))
			check(s.Sides[1].Predict(p, &pred))
		}
	}
	tS := time.Since(t0).Seconds() / float64(reps*len(poses))
	fmt.Printf("\ntime per pose (both sides, one goroutine): EF %.3g ms (cell %g mm, %d elements per side), surrogate %.3g µs: ratio %.1f×\n",
		tEF*1e3, *cell, k.Sides[0].NX*k.Sides[0].NZ, tS*1e6, tEF/tS)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{
			"n": *n, "kept": s.Kept, "m": *m, "cell_mm": *cell, "order": *order, "correlation": *corrName,
			"static_seconds": tTrain, "heldout_static_seconds": tTest, "fit_seconds": tFit,
			"ef_seconds_per_pose": tEF, "surrogate_seconds_per_pose": tS, "accuracy": acc,
		}, "", " ")
		check(os.WriteFile(*jsonOut, b, 0o644))
	}
}

// load reads the static analyses cached by an earlier run.
func load(path string, st, ht *[]efsurr.Sample) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var v [2][]efsurr.Sample
	if gob.NewDecoder(f).Decode(&v) != nil {
		return false
	}
	*st, *ht = v[0], v[1]
	return true
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "surrogate:", err)
		os.Exit(1)
	}
}
