// Command table1 reproduces Table 1 of Lin, Haftka, Queipo & Fregly
// (2010, "Surrogate articular contact models for computationally
// efficient multibody dynamic simulations", Med. Eng. Phys. 32:584–594):
// the knee wear simulator (builtin/wearsim) run with the elastic-foundation
// contact model and with its Kriging surrogates, for the nominal ISO
// 14243-1 inputs and the ten extreme inputs (each of the five Monte Carlo
// analyses' curves — AP force Fx, axial force Fy, IE torque Tβ, flexion γ,
// all — at the maximum and at the minimum of its variation family),
// comparing wear volumes, poses and contact forces.
//
//	go run ./examples/wear-sim/table1 [-n 1000] [-cell 0.5] [-steps 500] [-cache FILE] [-json FILE]
//
// It first builds the surrogates (wearsim.BuildSurrogate: n Hammersley
// points in wearsim.WearBox, static analyses, 18 Kriging fits); -cache
// keeps the static analyses for the next run.
package main

import (
	"encoding/gob"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/kinfer/kinfer/builtin/contact/efound"
	"github.com/kinfer/kinfer/builtin/contact/efsurr"
	"github.com/kinfer/kinfer/builtin/wearsim"
)

const deg = math.Pi / 180

type row struct {
	Case, Variation                 string
	EF, EFElem, Surr, DiffPct       float64
	EFSide, SurrSide                [2]float64
	TransRMSE, RotRMSE              float64 // mm, deg: largest over x, y, z and over α, β
	TransMax, RotMax                float64
	ForceRMSE                       [2]float64 // N, medial and lateral, largest component
	TorqueRMSE                      [2]float64 // N·m
	EFSeconds, SurrSeconds          float64
	EFCPU, SurrCPU                  float64 // process CPU seconds (meaningful for the nominal, run alone)
	PaperEF, PaperSurr, PaperDiffPc float64
}

// Lin et al. 2010, Table 1 (mm³): elastic foundation, surrogate, difference %.
var paper = map[string][3]float64{
	"Fx max": {28.44, 28.51, 0.24}, "Fy max": {30.31, 30.27, 0.14}, "Tβ max": {18.14, 18.24, 0.56}, "γ max": {17.10, 17.23, 0.72}, "All max": {29.76, 29.52, 0.80},
	"Fx min": {29.49, 29.20, 1.02}, "Fy min": {30.19, 29.73, 1.53}, "Tβ min": {27.63, 27.37, 0.96}, "γ min": {27.08, 26.90, 0.66}, "All min": {30.11, 30.08, 0.10},
}

func main() {
	n := flag.Int("n", 1000, "Hammersley sample points of the surrogate")
	cell := flag.Float64("cell", 0.5, "EF element size (mm)")
	steps := flag.Int("steps", 500, "time steps per cycle")
	workers := flag.Int("workers", 2, "parallel static analyses and simulations")
	cache := flag.String("cache", "", "file keeping the static analyses (reused when it holds -n points)")
	jsonOut := flag.String("json", "", "write the rows as JSON to this file")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./examples/wear-sim/table1 [flags]\nLin et al. (2010) Table 1: EF vs surrogate wear simulations, nominal and ten extreme inputs.")
		flag.PrintDefaults()
	}
	flag.Parse()

	k := efound.DefaultKnee(*cell, false)
	var samples []efsurr.Sample
	if *cache != "" {
		if f, err := os.Open(*cache); err == nil {
			if gob.NewDecoder(f).Decode(&samples) != nil || len(samples) != *n {
				samples = nil
			}
			f.Close()
		}
	}
	t0 := time.Now()
	sur, samples, err := wearsim.BuildSurrogate(k, *n, wearsim.WearBox, wearsim.WearMinSide, *workers, samples)
	check(err)
	fmt.Printf("surrogate: %d of %d sample points kept, built in %.1f s\n", sur.S.Kept, *n, time.Since(t0).Seconds())
	if *cache != "" {
		f, err := os.Create(*cache)
		check(err)
		check(gob.NewEncoder(f).Encode(samples))
		check(f.Close())
	}
	ef, err := wearsim.NewEF(k)
	check(err)
	iso, err := wearsim.ISO(1)
	check(err)

	type job struct {
		name, variation string
		w               wearsim.Weights
	}
	jobs := []job{{"Nominal", "", wearsim.Nominal}}
	for _, v := range []struct {
		name string
		val  float64
	}{{"max", 1}, {"min", 0}} {
		for _, a := range []struct {
			name string
			in   []int
		}{{"Fx", []int{wearsim.InAP}}, {"Fy", []int{wearsim.InAxial}}, {"Tβ", []int{wearsim.InIE}}, {"γ", []int{wearsim.InFlexion}},
			{"All", []int{wearsim.InFlexion, wearsim.InAxial, wearsim.InAP, wearsim.InIE}}} {
			w := wearsim.Nominal
			for _, i := range a.in {
				w[i] = [2]float64{v.val, v.val}
			}
			jobs = append(jobs, job{a.name, v.name, w})
		}
	}
	opt := wearsim.Options{Steps: *steps, History: true}
	rows := make([]row, len(jobs))
	run := func(i int) {
		j := jobs[i]
		in, err := wearsim.Vary(iso, wearsim.DefaultFamilies, j.w)
		check(err)
		o := opt
		o.Elements = true
		t0, c0 := time.Now(), cpu()
		re, err := wearsim.Simulate(ef, wearsim.DefaultMachine, in, o)
		check(err)
		te, ce := time.Since(t0).Seconds(), cpu()-c0
		t0, c0 = time.Now(), cpu()
		rs, err := wearsim.Simulate(sur, wearsim.DefaultMachine, in, opt)
		check(err)
		ts, cs := time.Since(t0).Seconds(), cpu()-c0
		r := compare(re, rs)
		r.Case, r.Variation, r.EFSeconds, r.SurrSeconds, r.EFCPU, r.SurrCPU = j.name, j.variation, te, ts, ce, cs
		if p, ok := paper[j.name+" "+j.variation]; ok {
			r.PaperEF, r.PaperSurr, r.PaperDiffPc = p[0], p[1], p[2]
		}
		rows[i] = r
	}
	// the nominal alone, for the time per simulation on an otherwise idle core
	run(0)
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < max(*workers, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				run(i)
			}
		}()
	}
	for i := 1; i < len(jobs); i++ {
		next <- i
	}
	close(next)
	wg.Wait()

	fmt.Printf("\nwear at 5 million cycles (mm³, medial + lateral, CoP-based Archard, k = 1e-7 mm³/N·m); cell %g mm, %d steps per cycle\n\n", *cell, *steps)
	fmt.Println("| quantity | variation | EF (CoP) | EF (element) | surrogate | difference % | pose RMSE mm / ° | pose max err mm / ° | force RMSE N med / lat | torque RMSE N·m med / lat | paper EF | paper surrogate | paper diff % |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	var worst row
	for _, r := range rows {
		fmt.Printf("| %s | %s | %.2f | %.2f | %.2f | %.2f | %.3f / %.3f | %.3f / %.3f | %.1f / %.1f | %.3f / %.3f | %s | %s | %s |\n",
			r.Case, r.Variation, r.EF, r.EFElem, r.Surr, r.DiffPct, r.TransRMSE, r.RotRMSE, r.TransMax, r.RotMax,
			r.ForceRMSE[0], r.ForceRMSE[1], r.TorqueRMSE[0], r.TorqueRMSE[1], pp(r.PaperEF), pp(r.PaperSurr), pp(r.PaperDiffPc))
		if math.Abs(r.DiffPct) > math.Abs(worst.DiffPct) {
			worst = r
		}
	}
	var mt, mr float64
	for _, r := range rows {
		mt, mr = math.Max(mt, r.TransRMSE), math.Max(mr, r.RotRMSE)
	}
	fmt.Printf("\nlargest |difference| %.2f %% (%s %s); largest pose RMSE %.3f mm / %.3f °\n", math.Abs(worst.DiffPct), worst.Case, worst.Variation, mt, mr)
	fmt.Printf("time per simulation (nominal, one goroutine, 2 cycles): wall EF %.2f s, surrogate %.2f s, ratio %.1f×; CPU EF %.2f s, surrogate %.2f s, ratio %.1f×\n",
		rows[0].EFSeconds, rows[0].SurrSeconds, rows[0].EFSeconds/rows[0].SurrSeconds, rows[0].EFCPU, rows[0].SurrCPU, rows[0].EFCPU/rows[0].SurrCPU)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{"n": *n, "kept": sur.S.Kept, "cell_mm": *cell, "steps": *steps, "rows": rows}, "", " ")
		check(os.WriteFile(*jsonOut, b, 0o644))
	}
}

// cpu is the process's user + system CPU time (s): the cost of a serial
// simulation on a machine shared with other work, where wall time is not.
func cpu() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) * 1e-9
}

func pp(v float64) string {
	if v == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", v)
}

func compare(e, s wearsim.Result) row {
	r := row{EF: e.Total(), EFElem: e.WearElem[0] + e.WearElem[1], Surr: s.Total(), EFSide: e.WearCoP, SurrSide: s.WearCoP}
	r.DiffPct = 100 * (r.Surr - r.EF) / r.EF
	var se [5]float64
	var mx [5]float64
	var sf, st [2][3]float64
	for i := range e.History {
		a, b := e.History[i].Pose, s.History[i].Pose
		d := [5]float64{a.X - b.X, a.Y - b.Y, a.Z - b.Z, (a.Alpha - b.Alpha) / deg, (a.Beta - b.Beta) / deg}
		for j, v := range d {
			se[j] += v * v
			mx[j] = math.Max(mx[j], math.Abs(v))
		}
		for side := 0; side < 2; side++ {
			for c := 0; c < 3; c++ {
				df := e.History[i].Loads[side].F[c] - s.History[i].Loads[side].F[c]
				dt := e.History[i].Loads[side].T[c] - s.History[i].Loads[side].T[c]
				sf[side][c] += df * df
				st[side][c] += dt * dt
			}
		}
	}
	nf := float64(len(e.History))
	for j := range se {
		v := math.Sqrt(se[j] / nf)
		if j < 3 {
			r.TransRMSE, r.TransMax = math.Max(r.TransRMSE, v), math.Max(r.TransMax, mx[j])
		} else {
			r.RotRMSE, r.RotMax = math.Max(r.RotRMSE, v), math.Max(r.RotMax, mx[j])
		}
	}
	for side := 0; side < 2; side++ {
		for c := 0; c < 3; c++ {
			r.ForceRMSE[side] = math.Max(r.ForceRMSE[side], math.Sqrt(sf[side][c]/nf))
			r.TorqueRMSE[side] = math.Max(r.TorqueRMSE[side], math.Sqrt(st[side][c]/nf))
		}
	}
	return r
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "table1:", err)
		os.Exit(1)
	}
}
