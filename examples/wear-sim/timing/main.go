// Command timing measures the CPU time of one knee wear simulation
// (builtin/wearsim, nominal ISO inputs) with the elastic-foundation
// contact model and with its Kriging surrogates, serially on one
// goroutine, in the Table 1 configuration (500 steps per cycle, two
// cycles) and in the Monte Carlo one (250 steps, a quarter-cycle warm-up).
// CPU time (getrusage) rather than wall time, so that a machine shared
// with other work still gives the cost; wall time is printed beside it.
//
//	go run ./examples/wear-sim/timing [-n 300] [-surrcell 1] [-cells 1,0.5] [-reps 3] [-cache FILE]
package main

import (
	"encoding/gob"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kinfer/kinfer/builtin/contact/efound"
	"github.com/kinfer/kinfer/builtin/contact/efsurr"
	"github.com/kinfer/kinfer/builtin/wearsim"
)

func main() {
	n := flag.Int("n", 300, "Hammersley sample points of the surrogate")
	surrCell := flag.Float64("surrcell", 1, "EF element size the surrogate is built on (mm)")
	cells := flag.String("cells", "1,0.5", "EF element sizes to time (mm)")
	reps := flag.Int("reps", 3, "simulations per measurement (the least CPU time is kept)")
	cache := flag.String("cache", "", "static analyses cached by examples/wear-sim/table1 for -n and -surrcell")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./examples/wear-sim/timing [flags]\nCPU time per knee wear simulation, EF contact vs Kriging surrogate.")
		flag.PrintDefaults()
	}
	flag.Parse()
	var samples []efsurr.Sample
	if *cache != "" {
		if f, err := os.Open(*cache); err == nil {
			if gob.NewDecoder(f).Decode(&samples) != nil || len(samples) != *n {
				samples = nil
			}
			f.Close()
		}
	}
	t0, c0 := time.Now(), cpu()
	sur, _, err := wearsim.BuildSurrogate(efound.DefaultKnee(*surrCell, false), *n, wearsim.WearBox, wearsim.WearMinSide, 2, samples)
	check(err)
	fmt.Printf("surrogate: n %d (%d kept) on %g mm cells, built in %.1f s wall, %.1f s CPU (static analyses cached: %v)\n", *n, sur.S.Kept, *surrCell, time.Since(t0).Seconds(), cpu()-c0, samples != nil)
	in, err := wearsim.ISO(1)
	check(err)
	configs := []struct {
		name string
		opt  wearsim.Options
	}{{"Table 1 (500 steps, 2 cycles)", wearsim.Options{Steps: 500}}, {"Monte Carlo (250 steps, 0.25 warm-up)", wearsim.Options{Steps: 250, Warmup: 0.25}}}
	measure := func(c wearsim.Contact, opt wearsim.Options) (cpuS, wallS float64, evals int) {
		cpuS, wallS = math.Inf(1), math.Inf(1)
		for r := 0; r < *reps; r++ {
			t0, c0 := time.Now(), cpu()
			res, err := wearsim.Simulate(c, wearsim.DefaultMachine, in, opt)
			check(err)
			cpuS, wallS, evals = math.Min(cpuS, cpu()-c0), math.Min(wallS, time.Since(t0).Seconds()), res.Evals
		}
		return
	}
	for _, cfg := range configs {
		sc, sw, se := measure(sur, cfg.opt)
		fmt.Printf("\n%s\n  surrogate:        CPU %.3f s, wall %.3f s, %d contact evaluations (%.1f µs each)\n", cfg.name, sc, sw, se, 1e6*sc/float64(se))
		for _, cs := range strings.Split(*cells, ",") {
			cell, err := strconv.ParseFloat(cs, 64)
			check(err)
			ef, err := wearsim.NewEF(efound.DefaultKnee(cell, false))
			check(err)
			ec, ew, ee := measure(ef, cfg.opt)
			fmt.Printf("  EF, %4g mm cells: CPU %.3f s, wall %.3f s, %d contact evaluations (%.1f µs each); EF/surrogate CPU %.1f×\n", cell, ec, ew, ee, 1e6*ec/float64(ee), ec/sc)
		}
	}
}

func cpu() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) * 1e-9
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "timing:", err)
		os.Exit(1)
	}
}
