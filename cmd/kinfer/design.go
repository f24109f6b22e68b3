package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/kinfer/kinfer/host/designrun"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/study"
)

// cmdDesign evaluates a study's model over a design of experiments
// (host/designrun): the training set of a surrogate.
func cmdDesign(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("design", flag.ContinueOnError)
	out := fs.String("o", "", "output `DIR` (default out/<study name>-design)")
	kind := fs.String("design", "sobol", "design: "+strings.Join(designrun.Kinds, ", "))
	n := fs.Int("n", 1024, "number of design points")
	space := fs.String("space", "box", "box: the free parameters' bounds ∩ prior support, uniformly; prior: through each prior's quantile function")
	seed := fs.Uint64("seed", 0, "seed of sobol-owen and the Latin hypercubes (0: the study's seed)")
	workers := fs.Int("workers", runtime.NumCPU(), "parallel evaluation workers")
	resume := fs.Bool("resume", false, "continue the run in DIR where it stopped (same study, design, n, seed, space)")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if err := checkWorkers(*workers); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
	defer stop()
	rt, err := newRuntime(ctx, nil)
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())
	s, err := study.Load(ctx, pos[0], study.Options{Workers: max(*workers, 1), Runtime: rt, MemoryBudget: run.DefaultMemoryBudget()})
	if err != nil {
		return err
	}
	defer s.Close()
	if *space == "box" {
		// The box of an unbounded prior is the model's bounds, which may be
		// far wider than the prior (±1e9 for a NIST parameter).
		for j, p := range s.Free {
			if lo, hi := s.Priors[j].Support(); math.IsInf(lo, 0) || math.IsInf(hi, 0) {
				fmt.Fprintf(stdout, "note: %s's prior %s is unbounded, so the box spans the model's bounds [%g, %g]; --space prior follows the prior\n", p.Name, s.Priors[j], p.Lower, p.Upper)
			}
			// A support open at an end of the box (a lognormal's 0): the
			// points on that face (Sobol's first) are out of support.
			for _, end := range []float64{p.Lower, p.Upper} {
				if math.IsInf(s.Priors[j].LogPdf(end), -1) {
					fmt.Fprintf(stdout, "note: %s = %g, an end of the box, is outside the support of its prior %s (open there): design points on that face are out of support and not evaluated; --space prior avoids them\n", p.Name, end, s.Priors[j])
				}
			}
		}
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("out", s.Name+"-design")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock, err := run.LockDir(dir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	rec, err := designrun.Run(ctx, s, dir, designrun.Options{Kind: *kind, N: *n, Seed: *seed, Space: *space, Workers: *workers, Resume: *resume})
	if rec != nil {
		state := "done"
		if !rec.Complete {
			state = "STOPPED (resume with --resume)"
		}
		keys := make([]string, 0, len(rec.ByStatus))
		for k := range rec.ByStatus {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var st []string
		for _, k := range keys {
			st = append(st, fmt.Sprintf("%s %d", k, rec.ByStatus[k]))
		}
		fmt.Fprintf(stdout, "%s: %s — %d of %d %s points (%s) in %.2fs\n", s.Name, state, rec.Done, rec.N, rec.Kind, strings.Join(st, ", "), rec.WallSeconds)
		fmt.Fprintf(stdout, "written: %s, %s\n", filepath.Join(dir, "design.csv"), filepath.Join(dir, "design.json"))
	}
	if err != nil && ctx.Err() != nil {
		// Said as the interruption it is, not Go's "context canceled"
		// (audit 10).
		return fmt.Errorf("interrupted by a signal; the points so far are written: continue with kinfer design %s -o %s --resume (same flags)", pos[0], dir)
	}
	return err
}
