package remote

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/target"
)

// lineStudy writes a study of the builtin line model with the given cost
// per evaluation (wait "spin" or "sleep").
func lineStudy(t testing.TB, costMs float64, wait string) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "data.csv"), []byte("x,y\n0,0.1\n1,1.2\n2,1.9\n3,3.1\n"), 0o644)
	study := fmt.Sprintf(`name = "line-cost"
seed = 1

[model]
use = "line"
cost_ms = %g
wait = %q

[[data]]
name = "d"
file = "data.csv"

[[likelihood]]
use = "gaussian"
data = "d"
sigma = { y = 0.2 }

[prior]
a = { uniform = [-1, 1] }
b = { uniform = [0, 2] }

[method]
use = "tmcmc"
chains = 10
`, costMs, wait)
	path := filepath.Join(dir, "study.toml")
	os.WriteFile(path, []byte(study), 0o644)
	return path
}

func linePoints(n int) [][]float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	pts := make([][]float64, n)
	for i := range pts {
		pts[i] = []float64{rng.Float64()*2 - 1, rng.Float64() * 2}
	}
	return pts
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// timeRemote is the least of reps timings of one batch through the server
// (after a warm-up batch that loads the study on the workers).
func timeRemote(t *testing.T, cfg Config, path string, pts [][]float64, reps int) time.Duration {
	s := load(t, path)
	c, err := Dial(context.Background(), cfg, s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, err := c.Evaluate(context.Background(), pts, abi.WantLogTarget); err != nil {
		t.Fatal(err)
	}
	best := time.Duration(1 << 62)
	for range reps {
		start := time.Now()
		if _, _, err := c.Evaluate(context.Background(), pts, abi.WantLogTarget); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(start))
	}
	return best
}

func timeLocal(t *testing.T, path string, pts [][]float64, workers, reps int) time.Duration {
	tg := target.New(load(t, path), workers)
	tg.Evaluate(context.Background(), pts, abi.WantLogTarget)
	best := time.Duration(1 << 62)
	for range reps {
		start := time.Now()
		if _, err := tg.Evaluate(context.Background(), pts, abi.WantLogTarget); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(start))
	}
	return best
}

// TestPerformance measures the dispatch overhead per chunk and per
// evaluation and the speedup against the number of worker processes, for
// the line model at 1, 10 and 100 ms per evaluation (docs/PERFORMANCE.md):
//
//	KINFER_NATS_PERF=1 go test ./host/remote -run Performance -v -timeout 30m
//
// KINFER_NATS_PERF_WORKERS lists the worker counts (default 1,2,4,8) and
// KINFER_NATS_PERF_WAIT the cost's kind (sleep, the default, or spin).
func TestPerformance(t *testing.T) {
	if os.Getenv("KINFER_NATS_PERF") == "" {
		t.Skip("set KINFER_NATS_PERF=1 (several minutes)")
	}
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	url := srv.ClientURL()
	cache := t.TempDir()
	workers := []int{1, 2, 4, 8}
	if v := os.Getenv("KINFER_NATS_PERF_WORKERS"); v != "" {
		workers = nil
		for _, f := range strings.Split(v, ",") {
			n, _ := strconv.Atoi(f)
			workers = append(workers, n)
		}
	}
	wait := "sleep"
	if v := os.Getenv("KINFER_NATS_PERF_WAIT"); v != "" {
		wait = v
	}
	start := func(n int) func() {
		var ps []*os.Process
		for i := range n {
			ps = append(ps, procWorker(t, url, fmt.Sprintf("p%d", i), cache).Process)
		}
		return func() {
			for _, p := range ps {
				p.Signal(syscall.SIGTERM)
			}
			for _, p := range ps {
				p.Wait()
			}
		}
	}
	fmt.Printf("load average before: %s (%d cores)\n", loadavg(), numCPU())

	// Dispatch overhead: a model of no cost, one worker process, remote
	// minus local time of the same batch.
	free := lineStudy(t, 0, "spin")
	stop := start(1)
	fmt.Printf("\n| batch | chunk | local 1 worker | remote 1 worker process | overhead per chunk | overhead per evaluation |\n|---|---|---|---|---|---|\n")
	for _, c := range []struct{ n, chunk int }{{8192, 0}, {2048, 1}, {2048, 8}} {
		pts := linePoints(c.n)
		cfg := testConfig(url)
		cfg.ChunkPoints = c.chunk
		size := c.chunk
		if size == 0 {
			size = chunkPoints(c.n, resultBytes(2, 0, 0, abi.WantLogTarget))
		}
		chunks := (c.n + size - 1) / size
		tl := timeLocal(t, free, pts, 1, 3)
		tr := timeRemote(t, cfg, free, pts, 3)
		fmt.Printf("| %d | %d | %.2f ms | %.2f ms | %.1f µs | %.2f µs |\n", c.n, size, ms(tl), ms(tr),
			float64(tr-tl)/float64(chunks)/1e3, float64(tr-tl)/float64(c.n)/1e3)
	}
	stop()

	// Speedup against worker processes.
	fmt.Printf("\nEach cell: the least time of the batch over the repetitions, the speedup over 1 process, and the efficiency against the ideal time n·cost/processes.\n")
	fmt.Printf("\n| cost (%s) | batch | local 1 worker | ", wait)
	for _, w := range workers {
		fmt.Printf("%d processes | ", w)
	}
	fmt.Printf("\n|---|---|---|%s\n", strings.Repeat("---|", len(workers)))
	for _, c := range []struct {
		cost float64
		n    int
		reps int
	}{{1, 1024, 3}, {10, 256, 3}, {100, 64, 2}} {
		path := lineStudy(t, c.cost, wait)
		pts := linePoints(c.n)
		tl := timeLocal(t, path, pts, 1, 1)
		fmt.Printf("| %g ms | %d | %.0f ms | ", c.cost, c.n, ms(tl))
		var t1 time.Duration
		for _, w := range workers {
			stop := start(w)
			tw := timeRemote(t, testConfig(url), path, pts, c.reps)
			stop()
			if w == workers[0] {
				t1 = tw * time.Duration(workers[0])
			}
			sp := float64(t1) / float64(tw)
			ideal := c.cost * float64(c.n) / float64(w) // ms, with no overhead and exact waits
			fmt.Printf("%.0f ms, ×%.2f, %.2f | ", ms(tw), sp, ideal/ms(tw))
		}
		fmt.Println()
	}
	fmt.Printf("\nload average after: %s\n", loadavg())
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}
