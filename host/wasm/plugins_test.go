package wasm

import (
	"context"
	"fmt"
	"github.com/kinfer/kinfer/builtin/models/arm"
	"github.com/kinfer/kinfer/host/dataset"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/methods/metropolis"
	"github.com/kinfer/kinfer/builtin/models/ligament"
	"github.com/kinfer/kinfer/host/manifest"
	"github.com/kinfer/kinfer/host/wasm/meter"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Tests against the example plugins (plugins/) and the host test plugins
// (host/testdata/plugins/), built by other parts of the repository. A
// missing plugin skips its test.

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

// sharedRT is one runtime for the plugin tests, with the default on-disk
// compilation cache: a 3 MB Go plugin compiles in ~1.5 s (much more under
// -race), once per machine.
var sharedRT = sync.OnceValues(func() (*Runtime, error) {
	return NewRuntime(context.Background(), Options{})
})

// testPlugins are the plugins these tests use, compiled in parallel on the
// first use of any (a cold cache under -race costs ~10 s per Go plugin).
var testPlugins = []string{
	"plugins/go/ligament", "plugins/c/ligament", "plugins/rust/ligament", "plugins/assemblyscript/ligament",
	"plugins/go/studentt", "plugins/go/metropolis",
	"host/testdata/plugins/spin", "plugins/c/laplace", "plugins/c/gaussnewton", "host/testdata/plugins/mcprop",
}

type loadResult struct {
	done chan struct{}
	p    *Plugin
	err  error
	skip string
}

var (
	loadResults = map[string]*loadResult{}
	prefetch    = sync.OnceFunc(func() {
		for _, rel := range testPlugins {
			lr := &loadResult{done: make(chan struct{})}
			loadResults[rel] = lr
			go func() {
				defer close(lr.done)
				path := filepath.Join(repoRoot, rel, "plugin.toml")
				if _, err := os.Stat(path); err != nil {
					lr.skip = fmt.Sprintf("plugin %s not built: %v", rel, err)
					return
				}
				r, err := sharedRT()
				if err != nil {
					lr.err = err
					return
				}
				m, err := manifest.Load(path)
				if err != nil {
					lr.err = err
					return
				}
				lr.p, lr.err = r.Load(context.Background(), m)
			}()
		}
	})
)

func loadPlugin(t testing.TB, rel string) *Plugin {
	t.Helper()
	prefetch()
	lr, ok := loadResults[rel]
	if !ok {
		t.Fatalf("plugin %s is not in testPlugins", rel)
	}
	<-lr.done
	switch {
	case lr.skip != "":
		t.Skip(lr.skip)
	case lr.err != nil:
		t.Fatal(lr.err)
	}
	return lr.p
}

// relTol is the agreement required between the builtin ligament and its
// WASM twins (the Go plugin runs the same code, the C, Rust and
// AssemblyScript ones the same formulas).
const relTol = 1e-12

func close2(a, b float64) bool {
	return a == b || math.Abs(a-b) <= relTol*math.Max(math.Abs(a), math.Abs(b))
}

// ligamentGrid is θ and L over the parameter bounds and beyond the toe
// region for L_r = 30 mm (strain from −0.75 to 0.96).
func ligamentGrid() (thetas [][]float64, x []float64) {
	for _, k := range []float64{2000, 3456.7, 5000, 9000, 12000} {
		for _, er := range []float64{-0.5, -0.2, -0.03, 0, 0.0123, 0.06, 0.2, 0.4} {
			thetas = append(thetas, []float64{k, er})
		}
	}
	for L := 15.0; L <= 42; L += 0.125 {
		x = append(x, L)
	}
	return thetas, x
}

func TestLigamentTwins(t *testing.T) {
	const refLength = 30
	ref, err := ligament.New([]float64{refLength})
	if err != nil {
		t.Fatal(err)
	}
	thetas, x := ligamentGrid()
	K := len(x)
	for _, rel := range []string{"plugins/go/ligament", "plugins/c/ligament", "plugins/rust/ligament", "plugins/assemblyscript/ligament"} {
		t.Run(filepath.Base(filepath.Dir(rel)), func(t *testing.T) {
			p := loadPlugin(t, rel)
			m, err := p.Model(context.Background(), []float64{refLength}, 2)
			if err != nil {
				t.Fatal(err)
			}
			defer m.(interface{ Close() error }).Close()
			ys := make([][]float64, len(thetas))
			for i := range ys {
				ys[i] = make([]float64, 2*K)
			}
			st := make([]abi.Status, len(thetas))
			m.(abi.BatchModel).EvalBatch(thetas, x, ys, st)
			want := make([]float64, 2*K)
			jw, jg := make([]float64, 4*K), make([]float64, 4*K)
			yj := make([]float64, 2*K)
			bad := 0
			for i, th := range thetas {
				if st[i] != abi.OK {
					t.Fatalf("θ %v: status %v (fault %v)", th, st[i], m.(abi.Faulter).Fault())
				}
				ref.Eval(th, x, want)
				for j := range want {
					if !close2(ys[i][j], want[j]) && bad < 5 {
						bad++
						t.Errorf("θ %v, L %g, output %d: plugin %.17g, builtin %.17g", th, x[j/2], j%2, ys[i][j], want[j])
					}
				}
				jm, ok := m.(abi.Jacobian)
				if !ok {
					t.Fatal("the ligament plugin does not implement abi.Jacobian")
				}
				if s := jm.Jacobian(th, x, yj, jg); s != abi.OK {
					t.Fatalf("Jacobian status %v", s)
				}
				ref.(abi.Jacobian).Jacobian(th, x, want, jw)
				for j := range jw {
					if !close2(jg[j], jw[j]) && bad < 5 {
						bad++
						t.Errorf("θ %v, Jacobian entry %d: plugin %.17g, builtin %.17g", th, j, jg[j], jw[j])
					}
				}
			}
		})
	}
}

// The C ligament's pullback (capability pullback, kinfer.h's
// model_forward and model_pullback): y is Eval's bit for bit, and g equals
// vᵀ·J of the plugin's own Jacobian (rel. 1e-12: the same products, summed
// in another order) and of central differences of Eval (rel. 1e-6 away
// from the kinks of Eq. 1, where a difference straddling a kink is
// skipped), over the ligament grid; the host's VJP (forward then pullback)
// gives the same g.
func TestLigamentCPullback(t *testing.T) {
	const refLength, tolJ, tolFD = 30, 1e-12, 1e-6
	p := loadPlugin(t, "plugins/c/ligament")
	m, err := p.Model(context.Background(), []float64{refLength}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer m.(interface{ Close() error }).Close()
	pbr, ok := m.(abi.Pullbacker)
	if !ok {
		t.Fatal("ligament-c lists pullback but is not an abi.Pullbacker")
	}
	thetas, x := ligamentGrid()
	K := len(x)
	v := make([]float64, 2*K)
	for i := range v {
		v[i] = math.Sin(float64(i)) // mixed signs, no zeros
	}
	y, ye, jac := make([]float64, 2*K), make([]float64, 2*K), make([]float64, 4*K)
	g, gv := make([]float64, 2), make([]float64, 2)
	for _, th := range thetas {
		pb, st := pbr.EvalPullback(th, x, y)
		if st != abi.OK {
			t.Fatalf("θ %v: %v (%v)", th, st, m.(abi.Faulter).Fault())
		}
		if st := pb.Pull(v, g); st != abi.OK {
			t.Fatal(st)
		}
		pb.Release()
		m.Eval(th, x, ye)
		if k := sameBits(y, ye); k >= 0 {
			t.Fatalf("θ %v: forward y[%d] = %v, Eval %v", th, k, y[k], ye[k])
		}
		m.(abi.Jacobian).Jacobian(th, x, ye, jac)
		for j := 0; j < 2; j++ {
			want, scale := 0.0, 0.0
			for r := 0; r < 2*K; r++ {
				want += v[r] * jac[r*2+j]
				scale += math.Abs(v[r] * jac[r*2+j])
			}
			if math.Abs(g[j]-want) > tolJ*scale {
				t.Errorf("θ %v: g[%d] = %.17g, vᵀJ %.17g", th, j, g[j], want)
			}
		}
		if st := m.(abi.VJP).VJP(th, x, v, ye, gv); st != abi.OK || sameBits(g, gv) >= 0 {
			t.Fatalf("θ %v: host VJP %v %v, pullback %v", th, st, gv, g)
		}
		// Central differences, row by row, skipping rows whose strain is
		// within the step of a kink of Eq. 1 (ε = 0 or 2ε_l).
		for j := 0; j < 2; j++ {
			h := 1e-6 * math.Max(1, math.Abs(th[j]))
			tp, tm := slices.Clone(th), slices.Clone(th)
			tp[j] += h
			tm[j] -= h
			yp, ym := make([]float64, 2*K), make([]float64, 2*K)
			m.Eval(tp, x, yp)
			m.Eval(tm, x, ym)
			fd, scale := 0.0, 0.0
			smooth := true
			for i := 0; i < K; i++ {
				for _, kink := range []float64{0, 0.06} {
					if (yp[2*i+1]-kink)*(ym[2*i+1]-kink) <= 0 {
						smooth = false
					}
				}
				for o := 0; o < 2; o++ {
					d := v[2*i+o] * (yp[2*i+o] - ym[2*i+o]) / (tp[j] - tm[j])
					fd += d
					scale += math.Abs(d)
				}
			}
			if smooth && math.Abs(g[j]-fd) > tolFD*math.Max(scale, 1e-300) {
				t.Errorf("θ %v: g[%d] = %.12g, central differences %.12g", th, j, g[j], fd)
			}
		}
	}
}

func BenchmarkLigament(b *testing.B) {
	const refLength, nTheta, nCond = 30, 64, 100
	rng := rand.New(rand.NewPCG(1, 2))
	thetas := make([][]float64, nTheta)
	ys := make([][]float64, nTheta)
	for i := range thetas {
		thetas[i] = []float64{2000 + 10000*rng.Float64(), -0.5 + 0.9*rng.Float64()}
		ys[i] = make([]float64, 2*nCond)
	}
	x := make([]float64, nCond)
	for i := range x {
		x[i] = 20 + 20*float64(i)/nCond
	}
	st := make([]abi.Status, nTheta)
	b.Run("builtin", func(b *testing.B) {
		m, _ := ligament.New([]float64{refLength})
		cpuPer(b, nTheta*nCond, "ns/θ·cond", func() {
			for i, th := range thetas {
				st[i] = m.Eval(th, x, ys[i])
			}
		})
	})
	// "-unmetered": the same module loaded without the meter (package
	// meter), i.e. without its fuel budget, timeout and interruption: what
	// the protection costs. Users cannot turn it off; only this package's
	// benchmarks can.
	for _, c := range []struct {
		name, rel string
		unmetered bool
	}{{"go-plugin", "plugins/go/ligament", false}, {"c-plugin", "plugins/c/ligament", false},
		{"rust-plugin", "plugins/rust/ligament", false}, {"as-plugin", "plugins/assemblyscript/ligament", false},
		{"go-plugin-unmetered", "plugins/go/ligament", true}, {"c-plugin-unmetered", "plugins/c/ligament", true},
		{"rust-plugin-unmetered", "plugins/rust/ligament", true}, {"as-plugin-unmetered", "plugins/assemblyscript/ligament", true}} {
		b.Run(c.name, func(b *testing.B) {
			p := loadPlugin(b, c.rel)
			if c.unmetered {
				p = loadUnmetered(b, p.Manifest)
			}
			m, err := p.Model(context.Background(), []float64{refLength}, 1)
			if err != nil {
				b.Fatal(err)
			}
			defer m.(interface{ Close() error }).Close()
			bm := m.(abi.BatchModel)
			cpuPer(b, nTheta*nCond, "ns/θ·cond", func() { bm.EvalBatch(thetas, x, ys, st) })
			if st[0] != abi.OK {
				b.Fatal(st[0])
			}
		})
	}
}

// loadUnmetered loads a plugin without the meter, in a runtime of its own.
func loadUnmetered(b testing.TB, m *manifest.Manifest) *Plugin {
	r, err := NewRuntime(context.Background(), Options{CacheDir: "-", unmetered: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close(context.Background()) })
	p, err := r.Load(context.Background(), m)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// The C Laplace likelihood: its value against the formula in Go, its
// gradient against central differences, the batch export against single
// calls, unobserved values skipped.
func TestLaplacePlugin(t *testing.T) {
	p := loadPlugin(t, "plugins/c/laplace")
	l, err := p.Likelihood(context.Background(), nil, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer l.(interface{ Close() error }).Close()
	obs := []float64{1, math.NaN(), 3, -2, 0.5, 7}
	sig := []float64{1, 1, 0.5, 2, 1.5, 3}
	y := []float64{1.2, 5, 2, -2.5, 0.4, 9}
	want := 0.0
	for i := range y {
		if math.IsNaN(obs[i]) {
			continue
		}
		b := sig[i] / math.Sqrt2 // Laplace scale with standard deviation σ
		want -= math.Abs(y[i]-obs[i])/b + math.Log(2*b)
	}
	const tol = 1e-13 // rounding of a 6-term sum
	ll, st := l.LogLikelihood(2, y, obs, sig)
	if st != abi.OK || math.Abs(ll-want) > tol*math.Abs(want) {
		t.Fatalf("logL = %v %v, want %v", ll, st, want)
	}
	gy := make([]float64, len(y))
	if _, st := l.(abi.GradY).LogLikelihoodGrad(2, y, obs, sig, gy); st != abi.OK {
		t.Fatal(st)
	}
	for i := range y {
		const h = 1e-6 // no kink within h of these points
		yp, ym := slices.Clone(y), slices.Clone(y)
		yp[i] += h
		ym[i] -= h
		lp, _ := l.LogLikelihood(2, yp, obs, sig)
		lm, _ := l.LogLikelihood(2, ym, obs, sig)
		if fd := (lp - lm) / (2 * h); math.Abs(fd-gy[i]) > 1e-6 {
			t.Errorf("gy[%d] = %v, central difference %v", i, gy[i], fd)
		}
	}
	ys := [][]float64{y, {1, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 0}}
	ll3, st3 := make([]float64, 3), make([]abi.Status, 3)
	l.(abi.BatchLikelihood).LogLikelihoodBatch(2, ys, obs, sig, ll3, st3)
	for i, yi := range ys {
		one, s1 := l.LogLikelihood(2, yi, obs, sig)
		if st3[i] != s1 || ll3[i] != one {
			t.Errorf("batch point %d: %v %v, single call %v %v", i, ll3[i], st3[i], one, s1)
		}
	}
	sig[0] = 0
	if _, st := l.LogLikelihood(2, y, obs, sig); st != abi.Invalid {
		t.Errorf("σ = 0: status %v, want invalid", st)
	}
}

func TestSpinPlugin(t *testing.T) {
	p := loadPlugin(t, "host/testdata/plugins/spin")
	m, err := p.Model(context.Background(), nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer m.(interface{ Close() error }).Close()
	start := time.Now()
	st := m.Eval([]float64{0.5}, []float64{1, 2}, make([]float64, 2))
	if el := time.Since(start); el > time.Second {
		t.Errorf("timeout_ms=%d took %v", p.Manifest.Limits.TimeoutMS, el)
	}
	if st != abi.Timeout {
		t.Errorf("status %v, want timeout", st)
	}
	want := fmt.Sprintf("plugin spin: kinfer_model_eval exceeded timeout_ms=%d (wall clock); at θ = (a 0.5)", p.Manifest.Limits.TimeoutMS)
	if err := m.(abi.Faulter).Fault(); err == nil || err.Error() != want {
		t.Errorf("Fault() = %v, want %s", err, want)
	}
}

func TestBadVersionPlugin(t *testing.T) {
	path := filepath.Join(repoRoot, "host/testdata/plugins/badversion/plugin.toml")
	if _, err := os.Stat(path); err != nil {
		t.Skip(err)
	}
	m, err := manifest.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sharedRT()
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Load(context.Background(), m)
	wantErr(t, err, "plugin badversion has ABI version 2; this kinfer supports ABI version 1")
}

func TestStudentTPlugin(t *testing.T) {
	p := loadPlugin(t, "plugins/go/studentt")
	const nu = 3.5
	l, err := p.Likelihood(context.Background(), []float64{nu}, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer l.(interface{ Close() error }).Close()
	y := []float64{1, 2, 3, 4}
	obs := []float64{1.5, math.NaN(), 2, 9}
	sig := []float64{1, 1, 0.5, 2}
	// Student-t log density (BDA3 Appendix A), NaN observations skipped.
	a, _ := math.Lgamma((nu + 1) / 2)
	c, _ := math.Lgamma(nu / 2)
	var want float64
	wantG := make([]float64, len(y))
	for i := range y {
		if math.IsNaN(obs[i]) {
			continue
		}
		z := (obs[i] - y[i]) / sig[i]
		want += a - c - 0.5*math.Log(nu*math.Pi) - math.Log(sig[i]) - (nu+1)/2*math.Log1p(z*z/nu)
		wantG[i] = (nu + 1) * z / ((nu + z*z) * sig[i])
	}
	ll, st := l.LogLikelihood(1, y, obs, sig)
	if st != abi.OK || math.Abs(ll-want) > 1e-12*math.Abs(want) {
		t.Errorf("logL = %v %v, want %v", ll, st, want)
	}
	g, ok := l.(abi.GradY)
	if !ok {
		t.Fatal("studentt lists grad_y but is not an abi.GradY")
	}
	if _, ok := l.(abi.Residuals); ok {
		t.Error("studentt does not list residuals but is an abi.Residuals")
	}
	gy := make([]float64, len(y))
	if _, st := g.LogLikelihoodGrad(1, y, obs, sig, gy); st != abi.OK {
		t.Fatal(st)
	}
	for i := range gy {
		if math.Abs(gy[i]-wantG[i]) > 1e-12*math.Max(1, math.Abs(wantG[i])) {
			t.Errorf("gy[%d] = %v, want %v", i, gy[i], wantG[i])
		}
	}
}

// runMethod drives m to the end on a 2-D Gaussian target with a uniform
// prior, drawing prior points from its own seeded stream. stopAfter > 0
// stops after that many Tells and returns the state.
func runMethod(t *testing.T, m abi.Method, rng *rand.Rand, stopAfter int) (tells int) {
	t.Helper()
	for !m.Done() {
		b, err := m.Ask()
		if err != nil {
			t.Fatal(err)
		}
		pts := b.Points
		if b.Draw > 0 {
			pts = make([][]float64, b.Draw)
			for i := range pts {
				pts[i] = []float64{-5 + 10*rng.Float64(), -5 + 10*rng.Float64()}
			}
		}
		res := make([]abi.Result, len(pts))
		for i, p := range pts {
			res[i] = abi.Result{Theta: p, LogPrior: -math.Log(100),
				LogLik: -0.5 * ((p[0]-1)*(p[0]-1) + (p[1]+0.5)*(p[1]+0.5)/0.25)}
			if p[0] > 4.5 {
				res[i].Status = abi.Failed
			}
			if b.Want&abi.WantGradient != 0 {
				res[i].Grad = []float64{-(p[0] - 1), -(p[1] + 0.5) / 0.25}
			}
		}
		if err := m.Tell(res); err != nil {
			t.Fatal(err)
		}
		tells++
		if tells == stopAfter {
			return tells
		}
	}
	return tells
}

func TestMetropolisPlugin(t *testing.T) {
	p := loadPlugin(t, "plugins/go/metropolis")
	settings := []float64{2, 40, 30, 1, 0.234, 0.1} // chains, samples, burn_in, thin, target_accept, init_scale
	problem := abi.Problem{Params: []abi.Param{{Name: "a", Lower: -5, Upper: 5}, {Name: "b", Lower: -5, Upper: 5}}, Seed: 7}
	newM := func() abi.Method {
		m, err := p.Method(context.Background(), settings)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.(interface{ Close() error }).Close() })
		if err := m.Init(problem); err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := newM()
	if _, ok := m.(abi.Checkpointer); !ok {
		t.Fatal("metropolis-go lists checkpoint but is not an abi.Checkpointer")
	}
	// Run 20 tells, checkpoint, and finish both the original and a restored copy.
	rng := rand.New(rand.NewPCG(3, 4))
	runMethod(t, m, rng, 20)
	state, err := m.(abi.Checkpointer).SaveState()
	if err != nil {
		t.Fatal(err)
	}
	m2 := newM()
	if err := m2.(abi.Checkpointer).LoadState(state); err != nil {
		t.Fatal(err)
	}
	runMethod(t, m, rand.New(rand.NewPCG(5, 6)), 0)
	runMethod(t, m2, rand.New(rand.NewPCG(5, 6)), 0)
	rep, err := m.Report()
	if err != nil {
		t.Fatal(err)
	}
	rep2, err := m2.Report()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Samples) != 2*40 {
		t.Errorf("%d samples, want chains×samples = 80", len(rep.Samples))
	}
	if fmt.Sprint(rep) != fmt.Sprint(rep2) {
		t.Errorf("restored run differs:\n%v\n%v", rep, rep2)
	}
	if len(rep.Extra) == 0 {
		t.Error("no report block")
	}

	// The builtin on the same seed and target: equal up to the last bits of
	// math.Exp/Log (assembly on amd64, pure Go on wasm), so compare loosely.
	bm, err := metropolis.New(settings)
	if err != nil {
		t.Fatal(err)
	}
	if err := bm.Init(problem); err != nil {
		t.Fatal(err)
	}
	m3 := newM()
	runMethod(t, bm, rand.New(rand.NewPCG(3, 4)), 0)
	runMethod(t, m3, rand.New(rand.NewPCG(3, 4)), 0)
	r1, _ := bm.Report()
	r3, err := m3.Report()
	if err != nil {
		t.Fatal(err)
	}
	if len(r1.Samples) != len(r3.Samples) {
		t.Fatalf("builtin %d samples, plugin %d", len(r1.Samples), len(r3.Samples))
	}
	for i := range r1.Samples {
		a, b := r1.Samples[i], r3.Samples[i]
		for j := range a.Theta {
			if math.Abs(a.Theta[j]-b.Theta[j]) > 1e-9 {
				t.Fatalf("sample %d: builtin %v, plugin %v", i, a, b)
			}
		}
	}
}

// BenchmarkArm compares the arm (Diff-MSM, 5 DoF, 8 muscles, 54
// parameters) as a builtin and as its Go plugin, metered (the default) and
// unmetered: one evaluation and one VJP over the first 1000 rows of
// examples/arm/train.csv at the ground truth, per row.
func BenchmarkArm(b *testing.B) {
	const rows = 1000
	tab, err := dataset.Read(filepath.Join(repoRoot, "examples/arm/train.csv"))
	if err != nil {
		b.Skip(err)
	}
	spec := arm.Spec
	c, m := len(spec.Conditions), len(spec.Outputs)
	x := make([]float64, 0, rows*c)
	for _, row := range tab.Rows[:rows] {
		for _, col := range spec.Conditions {
			x = append(x, row[slices.Index(tab.Columns, col.Name)])
		}
	}
	theta := arm.GroundTruth()
	y := make([]float64, rows*m)
	v := make([]float64, rows*m)
	for i := range v {
		v[i] = 1e-3 * float64(i%7-3)
	}
	g := make([]float64, len(theta))
	settings, _ := abi.SettingValues(spec.Settings, nil)
	run := func(b *testing.B, mdl abi.Model) {
		b.Run("eval", func(b *testing.B) {
			cpuPer(b, rows, "ns/row", func() {
				if st := mdl.Eval(theta, x, y); st != abi.OK {
					b.Fatal(st)
				}
			})
		})
		b.Run("vjp", func(b *testing.B) {
			cpuPer(b, rows, "ns/row", func() {
				if st := mdl.(abi.VJP).VJP(theta, x, v, y, g); st != abi.OK {
					b.Fatal(st)
				}
			})
		})
		// A value and its gradient: what one point of a gradient-based
		// method costs, the fused way (abi.Pullbacker, capability pullback
		// for the plugin) and the unfused way (Eval, then the VJP).
		b.Run("value+grad/eval+vjp", func(b *testing.B) {
			cpuPer(b, rows, "ns/row", func() {
				if st := mdl.Eval(theta, x, y); st != abi.OK {
					b.Fatal(st)
				}
				if st := mdl.(abi.VJP).VJP(theta, x, v, y, g); st != abi.OK {
					b.Fatal(st)
				}
			})
		})
		if pbr, ok := mdl.(abi.Pullbacker); ok {
			b.Run("value+grad/pullback", func(b *testing.B) {
				cpuPer(b, rows, "ns/row", func() {
					pb, st := pbr.EvalPullback(theta, x, y)
					if st != abi.OK {
						b.Fatal(st)
					}
					if st := pb.Pull(v, g); st != abi.OK {
						b.Fatal(st)
					}
					pb.Release()
				})
			})
		}
	}
	b.Run("builtin", func(b *testing.B) {
		mdl, err := arm.New(settings)
		if err != nil {
			b.Fatal(err)
		}
		run(b, mdl)
	})
	man, err := manifest.Load(filepath.Join(repoRoot, "plugins/go/arm/plugin.toml"))
	if err != nil {
		b.Skip(err)
	}
	for _, unmetered := range []bool{false, true} {
		name := "go-plugin"
		if unmetered {
			name += "-unmetered"
		}
		b.Run(name, func(b *testing.B) {
			r, err := NewRuntime(context.Background(), Options{unmetered: unmetered, CacheDir: "-"})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close(context.Background())
			p, err := r.Load(context.Background(), man)
			if err != nil {
				b.Fatal(err)
			}
			mdl, err := p.Model(context.Background(), settings, 1)
			if err != nil {
				b.Fatal(err)
			}
			defer mdl.(io.Closer).Close()
			run(b, mdl)
		})
	}
}

// BenchmarkMeter measures what the meter (package meter) costs the guest
// itself: the C and Go ligaments' kinfer_model_eval on BenchmarkLigament's
// inputs (64 θ × 100 conditions), called directly through wazero with no
// host copying, from the original module and from the metered one. For
// comparison, "wazero-checks" is the original module under wazero's own
// WithCloseOnContextDone, the interruption the meter replaces.
func BenchmarkMeter(b *testing.B) {
	const nTheta, nCond = 64, 100
	rng := rand.New(rand.NewPCG(1, 2))
	for _, rel := range []string{"plugins/c/ligament", "plugins/go/ligament"} {
		bin, err := os.ReadFile(filepath.Join(repoRoot, rel, "ligament.wasm"))
		if err != nil {
			b.Skip(err)
		}
		metered, err := instrument(bin)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name   string
			bin    []byte
			checks bool
		}{{"unmetered", bin, false}, {"metered", metered, false}, {"wazero-checks", bin, true}} {
			b.Run(filepath.Base(filepath.Dir(rel))+"/"+c.name, func(b *testing.B) {
				ctx := context.Background()
				r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCloseOnContextDone(c.checks))
				defer r.Close(ctx)
				wasi_snapshot_preview1.MustInstantiate(ctx, r)
				if _, err := r.NewHostModuleBuilder(HostModule).NewFunctionBuilder().
					WithFunc(func(uint32, uint32) {}).Export("log").Instantiate(ctx); err != nil {
					b.Fatal(err)
				}
				if _, err := r.NewHostModuleBuilder(meter.ImportModule).NewFunctionBuilder().
					WithFunc(func(int64) int64 { return 1 << 40 }).Export(meter.ImportName).Instantiate(ctx); err != nil {
					b.Fatal(err)
				}
				mod, err := r.InstantiateWithConfig(ctx, c.bin, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
				if err != nil {
					b.Fatal(err)
				}
				res, err := mod.ExportedFunction("kinfer_alloc").Call(ctx, 1<<18)
				if err != nil {
					b.Fatal(err)
				}
				mem, base := mod.Memory(), uint32(res[0])
				mem.WriteFloat64Le(base, 30)
				if res, err := mod.ExportedFunction("kinfer_configure").Call(ctx, uint64(base), 1); err != nil || res[0] != 0 {
					b.Fatal(err, res)
				}
				th, x := base, base+nTheta*16
				y := x + nCond*8
				st := y + nTheta*nCond*2*8
				for i := uint32(0); i < nTheta; i++ {
					mem.WriteFloat64Le(th+16*i, 2000+10000*rng.Float64())
					mem.WriteFloat64Le(th+16*i+8, -0.5+0.9*rng.Float64())
				}
				for i := uint32(0); i < nCond; i++ {
					mem.WriteFloat64Le(x+8*i, 20+20*float64(i)/nCond)
				}
				eval := mod.ExportedFunction("kinfer_model_eval")
				stack := make([]uint64, 6)
				g, _ := mod.ExportedGlobal(meter.FuelExport).(api.MutableGlobal)
				cpuPer(b, nTheta*nCond, "ns/θ·cond", func() {
					if g != nil {
						g.Set(1 << 40)
					}
					copy(stack, []uint64{nTheta, uint64(th), nCond, uint64(x), uint64(y), uint64(st)})
					if err := eval.CallWithStack(ctx, stack); err != nil {
						b.Fatal(err)
					}
				})
			})
		}
	}
}

// The Rust and AssemblyScript SDKs pass a refusal of the settings to the
// host with the plugin's message, and their spec matches the builtin's
// parameters, conditions, outputs and settings (only the name differs).
func TestRustAndAssemblyScriptSDKErrors(t *testing.T) {
	for _, c := range []struct{ rel, name string }{
		{"plugins/rust/ligament", "ligament-rust"}, {"plugins/assemblyscript/ligament", "ligament-as"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := loadPlugin(t, c.rel)
			_, err := p.Model(context.Background(), []float64{0}, 1)
			wantErr(t, err, "kinfer_configure returned 2", c.name+": ref_length_mm must be > 0, got 0")
			spec, want := p.Spec, ligament.Spec
			if spec.Name != c.name || !slices.Equal(spec.Params, want.Params) || !slices.Equal(spec.Conditions, want.Conditions) ||
				len(spec.Outputs) != len(want.Outputs) || len(spec.Settings) != 1 || spec.Settings[0].Name != "ref_length_mm" ||
				!spec.Settings[0].Required || !slices.Equal(spec.Capabilities, want.Capabilities) {
				t.Errorf("spec %+v\nwant the builtin's %+v", spec, want)
			}
		})
	}
}
