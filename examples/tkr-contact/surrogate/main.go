// Command surrogate builds Lin et al. (2010) Kriging contact surrogates of
// the builtin elastic-foundation knee (builtin/contact/efound), one per
// side, in the structure of Eq. 2, and measures them on held-out poses:
//
//  1. n sample points on a Hammersley design in (x, F_y, z, T_α, β, γ) —
//     the sensitive directions y, α replaced by net loads (Sec. 2.2.2);
//  2. a static analysis of each (efound.Knee.Static: y, α equilibrate the
//     applied F_y, T_α within 0.1 %, else the point is discarded, Sec.
//     2.2.3);
//  3. per side, DACE Kriging (builtin/surrogate/kriging) of Eq. 2:
//     F_y, T_α = f(x, y, z, α, β, γ); F_x, F_z, T_β, T_γ and the centre of
//     pressure = f(x, F_y, z, T_α, β, γ) with that side's F_y, T_α;
//  4. on m held-out poses (static analyses at a Sobol design in the same
//     box), the surrogate is used as in a dynamic simulation — pose in, the
//     side's F_y, T_α predicted first, then the rest from them — and
//     compared with the EF model at the same pose;
//  5. the time per pose of the EF model and of the surrogate.
//
// The reasonable design space (Sec. 2.2.4) is reduced to one bound — each
// side carries at least -minside N (both condyles loaded, as on a knee
// simulator) — applied after the static analysis, to the sample and the
// held-out points alike; the coarse-surrogate screening is not done:
// every sample point is analysed.
//
//	go run ./examples/tkr-contact/surrogate [-n 1000] [-m 200] [-cell 0.5] [-workers 2]
package main

import (
	"encoding/gob"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"github.com/kinfer/kinfer/builtin/contact/efound"
	"github.com/kinfer/kinfer/builtin/design"
	"github.com/kinfer/kinfer/builtin/surrogate/kriging"
)

const deg = math.Pi / 180

// box of the sample-point inputs (x mm, F_y N, z mm, T_α N·m, β °, γ °):
// a gait cycle's ranges on a knee simulator (flexion 0–60°, axial load up
// to the ISO 14243 peak of about 2600 N).
var lo = [6]float64{-5, 200, -1, -10, -8, 0}
var hi = [6]float64{5, 3000, 1, 10, 8, 60}

// minSide is the smallest F_y (N) a side may carry in the reasonable
// design space: on a knee simulator both condyles stay loaded.
var minSide = 50.0

type sample struct {
	OK   bool
	Pose efound.Pose
	L    [2]efound.Loads
}

// load reads the static analyses cached by an earlier run (same -n, -m,
// -cell, -minside: the caller checks the counts, the file name should say
// the rest).
func load(path string, st, ht *[]sample) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var v [2][]sample
	if gob.NewDecoder(f).Decode(&v) != nil {
		return false
	}
	*st, *ht = v[0], v[1]
	return true
}

func analyse(k efound.Knee, pts [][]float64, workers int) []sample {
	out := make([]sample, len(pts))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				u := pts[i]
				var v [6]float64
				for j := range v {
					v[j] = lo[j] + u[j]*(hi[j]-lo[j])
				}
				p, l, err := k.Static(efound.Pose{X: v[0], Z: v[2], Beta: v[4] * deg, Gamma: v[5] * deg}, v[1], v[3])
				// reasonable design space (Sec. 2.2.4, here a bound on the
				// insensitive outputs only): both sides carry ≥ minSide.
				ok := err == nil && l[0].F[1] >= minSide && l[1].F[1] >= minSide
				out[i] = sample{OK: ok, Pose: p, L: l}
			}
		}()
	}
	for i := range pts {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// inputs: pose space P = (x, y, z, α°, β°, γ°) and the hybrid space
// H = (x, F_y, z, T_α, β°, γ°) of one side.
func poseIn(p efound.Pose) []float64 {
	return []float64{p.X, p.Y, p.Z, p.Alpha / deg, p.Beta / deg, p.Gamma / deg}
}

func hybridIn(p efound.Pose, fy, ta float64) []float64 {
	return []float64{p.X, fy, p.Z, ta, p.Beta / deg, p.Gamma / deg}
}

// outputs of one side, Eq. 2 order then the CoP.
var names = []string{"Fy_N", "Talpha_Nm", "Fx_N", "Fz_N", "Tbeta_Nm", "Tgamma_Nm", "copx_mm", "copy_mm", "copz_mm"}

func outputs(l efound.Loads) []float64 {
	return []float64{l.F[1], l.T[0], l.F[0], l.F[2], l.T[1], l.T[2], l.CoP[0], l.CoP[1], l.CoP[2]}
}

// Surrogate is one side's nine Kriging models.
type Surrogate [9]*kriging.Model

// Predict is the surrogate as a dynamic simulation uses it: pose → F_y,
// T_α, then the rest from (x, F_y, z, T_α, β, γ).
func (s *Surrogate) Predict(p efound.Pose, out []float64) error {
	in := poseIn(p)
	var err error
	if out[0], err = s[0].Mean(in); err != nil {
		return err
	}
	if out[1], err = s[1].Mean(in); err != nil {
		return err
	}
	h := hybridIn(p, out[0], out[1])
	for j := 2; j < 9; j++ {
		if out[j], err = s[j].Mean(h); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	n := flag.Int("n", 1000, "Hammersley sample points")
	m := flag.Int("m", 200, "held-out poses (Sobol)")
	cell := flag.Float64("cell", 0.5, "element size (mm)")
	workers := flag.Int("workers", 2, "parallel static analyses")
	order := flag.Int("order", 1, "Kriging regression order (0, 1, 2)")
	flag.Float64Var(&minSide, "minside", minSide, "reasonable design space: smallest F_y per side (N)")
	cache := flag.String("cache", "", "file to keep the static analyses in (reused when it matches -n and -m)")
	corrName := flag.String("corr", "gaussian", "Kriging correlation: gaussian, matern32, matern52")
	verbose := flag.Bool("v", false, "print each fit's likelihood optimum")
	jsonOut := flag.String("json", "", "also write the results as JSON to this file")
	flag.Parse()
	k := efound.DefaultKnee(*cell, false)

	t0 := time.Now()
	train, err := design.Hammersley(*n, 6)
	check(err)
	sob, err := design.NewSobol(6, false, 0)
	check(err)
	test := sob.Points(1, *m) // skip the corner point 0
	var st, ht []sample
	var tTrain, tTest float64
	if *cache != "" && load(*cache, &st, &ht) && len(st) == *n && len(ht) == *m {
		fmt.Printf("static analyses read from %s\n", *cache)
	} else {
		st = analyse(k, train, *workers)
		tTrain = time.Since(t0).Seconds()
		t0 = time.Now()
		ht = analyse(k, test, *workers)
		tTest = time.Since(t0).Seconds()
		if *cache != "" {
			f, err := os.Create(*cache)
			check(err)
			check(gob.NewEncoder(f).Encode([2][]sample{st, ht}))
			check(f.Close())
		}
	}
	kept := 0
	for _, s := range st {
		if s.OK {
			kept++
		}
	}
	fmt.Printf("static analyses: %d of %d sample points kept (%.1f s), held-out %d poses (%.1f s)\n", kept, *n, tTrain, *m, tTest)

	corr, okc := map[string]kriging.Correlation{"gaussian": kriging.Gaussian, "matern32": kriging.Matern32, "matern52": kriging.Matern52}[*corrName]
	if !okc {
		check(fmt.Errorf("unknown correlation %q", *corrName))
	}
	var sur [2]Surrogate
	t0 = time.Now()
	for side := 0; side < 2; side++ {
		for j := range names {
			var x [][]float64
			var y []float64
			for _, s := range st {
				if !s.OK {
					continue
				}
				o := outputs(s.L[side])
				if j < 2 {
					x = append(x, poseIn(s.Pose))
				} else {
					x = append(x, hybridIn(s.Pose, o[0], o[1]))
				}
				y = append(y, o[j])
			}
			mod, err := kriging.Fit(x, y, kriging.Options{Order: *order, Correlation: corr})
			check(err)
			sur[side][j] = mod
			if *verbose {
				fmt.Fprintf(os.Stderr, "%s %s: n %d, ln ψ %.5g, θ %.3g\n", efound.SideNames[side], names[j], len(y), mod.Info().Objective, mod.Theta())
			}
		}
	}
	tFit := time.Since(t0).Seconds()
	fmt.Printf("fitted 2 × %d Kriging models (order %d, %s) in %.1f s\n", len(names), *order, *corrName, tFit)

	// accuracy on held-out poses
	type acc struct {
		Side, Output     string
		RMSE, MAE, Range float64
	}
	var res []acc
	pred := make([]float64, 9)
	var se, ae [2][9]float64
	var ymin, ymax [2][9]float64
	for i := range ymin {
		for j := range ymin[i] {
			ymin[i][j], ymax[i][j] = math.Inf(1), math.Inf(-1)
		}
	}
	cnt := 0
	for _, s := range ht {
		if !s.OK {
			continue
		}
		cnt++
		for side := 0; side < 2; side++ {
			check(sur[side].Predict(s.Pose, pred))
			o := outputs(s.L[side])
			for j := range o {
				e := math.Abs(pred[j] - o[j])
				se[side][j] += e * e
				ae[side][j] = math.Max(ae[side][j], e)
				ymin[side][j] = math.Min(ymin[side][j], o[j])
				ymax[side][j] = math.Max(ymax[side][j], o[j])
			}
		}
	}
	fmt.Printf("\nheld-out accuracy on %d poses (surrogate used as in a dynamic simulation)\n\n", cnt)
	fmt.Println("| side | output | RMSE | max abs error | range of EF values | RMSE / range |")
	fmt.Println("|---|---|---|---|---|---|")
	for side := 0; side < 2; side++ {
		for j, nm := range names {
			r := math.Sqrt(se[side][j] / float64(cnt))
			rg := ymax[side][j] - ymin[side][j]
			res = append(res, acc{efound.SideNames[side], nm, r, ae[side][j], rg})
			fmt.Printf("| %s | %s | %.4g | %.4g | %.4g … %.4g | %.2g %% |\n", efound.SideNames[side], nm, r, ae[side][j], ymin[side][j], ymax[side][j], 100*r/rg)
		}
	}

	// timing: EF contact model vs surrogate, per pose, same poses.
	var poses []efound.Pose
	for _, s := range ht {
		if s.OK {
			poses = append(poses, s.Pose)
		}
	}
	reps := 1
	t0 = time.Now()
	for r := 0; r < reps; r++ {
		for _, p := range poses {
			_, err := k.Contact(p)
			check(err)
		}
	}
	tEF := time.Since(t0).Seconds() / float64(reps*len(poses))
	reps = 20
	t0 = time.Now()
	for r := 0; r < reps; r++ {
		for _, p := range poses {
			check(sur[0].Predict(p, pred))
			check(sur[1].Predict(p, pred))
		}
	}
	tS := time.Since(t0).Seconds() / float64(reps*len(poses))
	fmt.Printf("\ntime per pose (both sides, one goroutine): EF %.3g ms (cell %g mm, %d elements per side), surrogate %.3g µs: ratio %.0f×\n",
		tEF*1e3, *cell, k.Sides[0].NX*k.Sides[0].NZ, tS*1e6, tEF/tS)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{
			"n": *n, "kept": kept, "m": *m, "held_out": cnt, "cell_mm": *cell, "order": *order,
			"static_seconds": tTrain, "fit_seconds": tFit, "ef_seconds_per_pose": tEF, "surrogate_seconds_per_pose": tS,
			"accuracy": res,
		}, "", " ")
		check(os.WriteFile(*jsonOut, b, 0o644))
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "surrogate:", err)
		os.Exit(1)
	}
}
