// Command tmcmc-overhead measures the builtin TMCMC's cost outside the
// target: the time per particle-step (one proposal of one chain: its
// draw, its hand-out to the host, the Metropolis decision and the stage
// bookkeeping) with a cheap Gaussian target, minus the time the target
// itself takes. docs/PERFORMANCE.md ("TMCMC overhead") compares it with
// emcee (emcee_overhead.py) in one run of run.sh.
//
// The target, in d dimensions: prior N(0, 1) per parameter within bounds
// [−10, 10] (builtin/prior's Normal, as the host evaluates it), likelihood
// exp(−‖θ − 0.5‖²/(2·0.5²)) — the d-dimensional Gaussian of the method's
// conformance tests. The method runs with the given settings (default:
// 1000 chains, 50 sub-steps, bartsoen, transform proposals, sub-step β
// rule, i.e. the defaults a study gets) to the end of the run, on one
// goroutine; the host side is a plain loop, as kinfer's host is for a
// target this cheap (it runs chunks of 256 points per worker).
//
// Output: one JSON line per dimension with the particle-steps, the total
// and target seconds, and the overhead in µs per particle-step.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/tmcmc"
	"github.com/kinfer/kinfer/builtin/prior"
)

type result struct {
	Impl           string  `json:"impl"`
	D              int     `json:"d"`
	ParticleSteps  int     `json:"particle_steps"`
	TotalSeconds   float64 `json:"total_s"`
	TargetSeconds  float64 `json:"target_s"`
	OverheadMicros float64 `json:"overhead_us_per_particle_step"`
	// The same in CPU time of the sampling thread.
	CPUSeconds        float64 `json:"cpu_s"`
	TargetCPUSeconds  float64 `json:"target_cpu_s"`
	OverheadCPUMicros float64 `json:"overhead_cpu_us_per_particle_step"`
	Stages            int     `json:"stages"`
	LogEvidence       float64 `json:"log_evidence"`
	LogEvidenceSE     float64 `json:"log_evidence_se"`
	ExactLogZ         float64 `json:"exact_log_z"`
}

func main() {
	dims := flag.String("d", "10,50", "comma-separated dimensions")
	chains := flag.Int("chains", 1000, "TMCMC chains")
	substeps := flag.Int("substeps", 50, "TMCMC sub-steps per stage")
	proposal := flag.String("proposal", "transform", "transform or reject")
	adapt := flag.String("adapt", "substep", "substep or stage")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tmcmc-overhead:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	for _, f := range strings.Split(*dims, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || d < 1 {
			fmt.Fprintf(os.Stderr, "tmcmc-overhead: bad dimension %q\n", f)
			os.Exit(2)
		}
		r, err := run(d, *chains, *substeps, index(tmcmc.ProposalNames, *proposal), index(tmcmc.AdaptNames, *adapt))
		if err != nil {
			fmt.Fprintln(os.Stderr, "tmcmc-overhead:", err)
			return
		}
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
	}
}

// threadCPU is the CPU time (user + system) of the calling OS thread.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rusageThread is RUSAGE_THREAD (Linux): the calling thread's usage.
const rusageThread = 1

func index(names []string, s string) int {
	for i, n := range names {
		if n == s {
			return i
		}
	}
	fmt.Fprintf(os.Stderr, "tmcmc-overhead: %q is not one of %v\n", s, names)
	os.Exit(2)
	return 0
}

// gaussian is the cheap target: the host's prior and a Gaussian
// likelihood centred at mu with scale s in every coordinate.
type gaussian struct {
	prior  []prior.Dist
	lo, hi float64
}

const mu, s = 0.5, 0.5

func (g gaussian) eval(th []float64) abi.Result {
	r := abi.Result{Theta: th, LogPrior: 0, LogLik: 0}
	for i, x := range th {
		if !(x >= g.lo && x <= g.hi) {
			return abi.Result{Theta: th, Status: abi.OutOfSupport, LogPrior: math.Inf(-1), LogLik: math.Inf(-1)}
		}
		r.LogPrior += g.prior[i].LogPdf(x)
		r.LogLik -= (x - mu) * (x - mu) / (2 * s * s)
	}
	return r
}

func run(d, chains, substeps, proposal, adapt int) (result, error) {
	m, err := tmcmc.New([]float64{float64(chains), float64(substeps), 1, 0.23, 100, tmcmc.Bartsoen, float64(proposal), float64(adapt)})
	if err != nil {
		return result{}, err
	}
	n01, _ := prior.NewNormal(0, 1)
	g := gaussian{lo: -10, hi: 10}
	params := make([]abi.Param, d)
	for i := range params {
		params[i] = abi.Param{Name: fmt.Sprintf("t%d", i), Lower: -10, Upper: 10}
		g.prior = append(g.prior, n01)
	}
	if err := m.Init(abi.Problem{Params: params, Seed: 1}); err != nil {
		return result{}, err
	}
	res := make([]abi.Result, chains)
	draws := make([][]float64, chains)
	rng := rand.New(rand.NewPCG(1, 2))
	for k := range draws { // the prior population, drawn as the host would
		draws[k] = make([]float64, d)
		for i := range draws[k] {
			draws[k][i] = n01.Quantile(rng.Float64())
		}
	}
	// CPU time of this thread (the loop runs locked to it): less sensitive
	// than wall time to other work on the machine.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var target, targetCPU time.Duration
	steps := 0
	start, startCPU := time.Now(), threadCPU()
	for !m.Done() {
		b, err := m.Ask()
		if err != nil {
			return result{}, err
		}
		pts := b.Points
		if b.Draw > 0 {
			pts = draws
		}
		t0, c0 := time.Now(), threadCPU()
		for k, p := range pts {
			res[k] = g.eval(p)
		}
		target += time.Since(t0)
		targetCPU += threadCPU() - c0
		steps += len(pts)
		if err := m.Tell(res); err != nil {
			return result{}, err
		}
	}
	total, totalCPU := time.Since(start), threadCPU()-startCPU
	rep, err := m.Report()
	if err != nil {
		return result{}, err
	}
	// Exact log evidence of the truncated problem, to first order: the
	// bounds at ±10 remove nothing of consequence (conformance.Gauss10D).
	exact := float64(d)/2*math.Log(s*s/(1+s*s)) - float64(d)*mu*mu/(2*(1+s*s))
	return result{
		Impl: "kinfer-tmcmc", D: d, ParticleSteps: steps, TotalSeconds: total.Seconds(), TargetSeconds: target.Seconds(),
		OverheadMicros: (total - target).Seconds() / float64(steps) * 1e6,
		CPUSeconds:     totalCPU.Seconds(), TargetCPUSeconds: targetCPU.Seconds(),
		OverheadCPUMicros: (totalCPU - targetCPU).Seconds() / float64(steps) * 1e6,
		Stages:            len(rep.Extra["stages"].([]any)), LogEvidence: rep.Extra["log_evidence"].(float64),
		LogEvidenceSE: rep.Extra["log_evidence_se"].(float64), ExactLogZ: exact,
	}, nil
}
