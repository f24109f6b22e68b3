package remote

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/wasm"
)

// The test binary doubles as a worker process: with KINFER_TEST_WORKER set
// to a server URL it runs Work (one slot) until SIGTERM or SIGKILL.
func TestMain(m *testing.M) {
	if url := os.Getenv("KINFER_TEST_WORKER"); url != "" {
		ack, _ := time.ParseDuration(os.Getenv("KINFER_TEST_ACKWAIT"))
		stall, _ := strconv.Atoi(os.Getenv("KINFER_TEST_STALL"))
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		err := Work(ctx, Config{URL: url, AckWait: ack, MaxDeliver: testMaxDeliver},
			WorkerOptions{Slots: 1, CacheDir: os.Getenv("KINFER_TEST_CACHE"), ID: os.Getenv("KINFER_TEST_ID"),
				stall: stall, stalled: os.Getenv("KINFER_TEST_STALLED")})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "kinfer-remote-test")
	if err != nil {
		panic(err)
	}
	compiled = filepath.Join(dir, "compiled")
	if base, err := os.UserCacheDir(); err == nil {
		// kinfer's default compilation cache (wasm.Options): warm after
		// the first run of the tests.
		compiled = filepath.Join(base, "kinfer", "wazero")
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// compiled is the tests' shared compilation cache of plugins: kinfer's
// default one, else a temporary directory.
var compiled string

// Delivery settings of the tests: a killed worker's chunk goes to another
// after testAckWait.
const (
	testAckWait    = time.Second
	testMaxDeliver = 10
	// testDeclinePause is a declining worker slot's first pause: a chunk
	// no test worker takes reaches MaxDeliver in a second or two.
	testDeclinePause = 10 * time.Millisecond
)

// startServer starts an embedded NATS server with JetStream file storage in
// dir on loopback (port 0: any free port).
func startServer(t testing.TB, dir string, port int) *server.Server {
	t.Helper()
	if port == 0 {
		port = -1
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	return s
}

func testConfig(url string) Config {
	return Config{URL: url, AckWait: testAckWait, MaxDeliver: testMaxDeliver, declineFor: 2 * time.Second}
}

// kneeStudy writes the knee study of examples/knee-bpe (specimen 1) cut to
// chains chains and substeps sub-steps into a temporary directory.
func kneeStudyIn(t testing.TB, dir string, chains, substeps int) string {
	t.Helper()
	text, err := os.ReadFile("../../examples/knee-bpe/specimen1/study.toml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(text), "chains = 1000", "chains = "+strconv.Itoa(chains), 1)
	s = strings.Replace(s, "substeps = 25", "substeps = "+strconv.Itoa(substeps), 1)
	data, err := os.ReadFile("../../examples/knee-bpe/specimen1/kinematics.csv")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "study.toml"), []byte(s), 0o644)
	os.WriteFile(filepath.Join(dir, "kinematics.csv"), data, 0o644)
	return filepath.Join(dir, "study.toml")
}

func load(t testing.TB, path string) *study.Study {
	t.Helper()
	rt, err := wasm.NewRuntime(context.Background(), wasm.Options{CacheDir: compiled})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	s, err := study.Load(context.Background(), path, study.Options{Workers: 2, Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// kneeLocal is samples.csv of the local run of kneeStudy(kneeChains,
// kneeSubsteps), computed once.
var kneeLocal struct {
	sync.Once
	path string
	b    []byte
}

// The knee study's size in the tests (KINFER_NATS_KNEE=chains,substeps).
var kneeChains, kneeSubsteps = 48, 2

// knee returns the knee study's path and its local samples.csv.
func knee(t *testing.T) (string, []byte) {
	kneeLocal.Do(func() {
		if v := os.Getenv("KINFER_NATS_KNEE"); v != "" {
			fmt.Sscanf(v, "%d,%d", &kneeChains, &kneeSubsteps)
		}
		dir, err := os.MkdirTemp("", "kinfer-knee")
		if err != nil {
			t.Fatal(err)
		}
		kneeLocal.path = kneeStudyIn(t, dir, kneeChains, kneeSubsteps)
		t0 := time.Now()
		kneeLocal.b = localSamples(t, kneeLocal.path)
		t.Logf("knee %d chains × %d sub-steps, local run: %v", kneeChains, kneeSubsteps, time.Since(t0))
	})
	if kneeLocal.b == nil {
		t.Fatal("no local knee run")
	}
	return kneeLocal.path, kneeLocal.b
}

// localSamples runs the study on this process's workers and returns
// samples.csv.
func localSamples(t testing.TB, path string) []byte {
	t.Helper()
	out := t.TempDir()
	if _, err := run.Run(context.Background(), load(t, path), run.Options{OutDir: out, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "samples.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// remoteRun runs the study through the server at cfg.URL; during is
// called with the client once the run has started.
func remoteRun(t testing.TB, cfg Config, path string, during func(c *Client)) ([]byte, *Client, error) {
	t.Helper()
	s := load(t, path)
	c, err := Dial(context.Background(), cfg, s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan struct{})
	if during != nil {
		go func() {
			defer close(done)
			during(c)
		}()
	} else {
		close(done)
	}
	out := t.TempDir()
	_, err = run.Run(context.Background(), s, run.Options{OutDir: out, Workers: 1, Remote: c})
	<-done
	b, _ := os.ReadFile(filepath.Join(out, "samples.csv"))
	return b, c, err
}

// goWorkers starts n in-process workers (one slot each, own connection)
// and returns their stop function.
func goWorkers(t testing.TB, cfg Config, prefix string, n int) func() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	cache := t.TempDir()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := Work(ctx, cfg, WorkerOptions{Slots: 1, CacheDir: cache, ID: fmt.Sprintf("%s%d", prefix, i), Runtime: wasm.Options{CacheDir: compiled}, declinePause: testDeclinePause}); err != nil {
				t.Error(err)
			}
		}()
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			wg.Wait()
		}
	}
	t.Cleanup(stop)
	return stop
}

// procWorker starts a worker process (the test binary); env adds to its
// environment (KINFER_TEST_STALL=k and KINFER_TEST_STALLED=file: it holds
// its k-th chunk until it stops, having created file).
func procWorker(t testing.TB, url, id, cache string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KINFER_TEST_WORKER="+url, "KINFER_TEST_ACKWAIT="+testAckWait.String(),
		"KINFER_TEST_CACHE="+cache, "KINFER_TEST_ID="+id, "KINFER_CACHE_DIR=-")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	return cmd
}

func TestCodecRoundTrip(t *testing.T) {
	inf := math.Inf(-1)
	res := []abi.Result{
		{Theta: []float64{1, 2}, Status: abi.OK, LogPrior: -1.5, LogLik: -3.25, Grad: []float64{0.1, math.Copysign(0, -1)}},
		{Theta: []float64{3, 4}, Status: abi.OutOfSupport, LogPrior: inf, LogLik: inf},
		{Theta: []float64{5, 6}, Status: abi.NonFinite, LogPrior: 0, LogLik: math.NaN(), Residuals: []float64{}, Jacobian: []float64{1, 2, 3, 4}},
	}
	got, jev, secs, err := decodeResults(encodeResults(res, 7, 0.125, 0), 0)
	if err != nil || jev != 7 || secs != 0.125 || len(got) != len(res) {
		t.Fatalf("decode: %v %d %g %d", err, jev, secs, len(got))
	}
	same := func(a, b []float64) bool {
		if (a == nil) != (b == nil) || len(a) != len(b) {
			return false
		}
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				return false
			}
		}
		return true
	}
	for i, r := range res {
		g := got[i]
		if g.Status != r.Status || math.Float64bits(g.LogPrior) != math.Float64bits(r.LogPrior) || math.Float64bits(g.LogLik) != math.Float64bits(r.LogLik) ||
			!same(g.Theta, r.Theta) || !same(g.Grad, r.Grad) || !same(g.Residuals, r.Residuals) || !same(g.Jacobian, r.Jacobian) {
			t.Errorf("result %d: %+v, want %+v", i, g, r)
		}
	}
	if _, _, _, err := decodeResults(encodeResults(res, 0, 0, 0)[:50], 0); err == nil {
		t.Error("truncated body accepted")
	}
	// With WantOutputs each result also carries its outputs (nil for a
	// failed point); without it the body is as before outputs existed.
	res[0].Outputs, res[2].Outputs = []float64{1.5, -0.25, math.Inf(1)}, nil
	outs := abi.WantLogTarget | abi.WantOutputs
	got, _, _, err = decodeResults(encodeResults(res, 0, 0, outs), outs)
	if err != nil || !same(got[0].Outputs, res[0].Outputs) || got[1].Outputs != nil || got[2].Outputs != nil {
		t.Errorf("outputs: %v %+v", err, got)
	}
	if _, _, _, err := decodeResults(encodeResults(res, 0, 0, outs), 0); err == nil {
		t.Error("a body with outputs decoded as one without")
	}
	pts := [][]float64{{1, math.Inf(1)}, {3, 4}}
	w, p, err := decodePoints(encodePoints(abi.WantGradient, pts))
	if err != nil || w != abi.WantGradient || !same(p[0], pts[0]) || !same(p[1], pts[1]) {
		t.Errorf("points: %v %v %v", w, p, err)
	}
}

// Chunk boundaries depend on the batch alone.
func TestChunkPoints(t *testing.T) {
	for _, c := range []struct {
		n    int
		per  int64
		want int
	}{{1, 100, 1}, {100, 100, 1}, {1000, 100, 8}, {1 << 20, 100, MaxChunkPoints}, {10000, 100000, 5}} {
		if got := chunkPoints(c.n, c.per); got != c.want {
			t.Errorf("chunkPoints(%d, %d) = %d, want %d", c.n, c.per, got, c.want)
		}
	}
}

// A study naming a file by an absolute path is refused for a remote run:
// a worker has its own file system.
func TestAbsolutePathRefused(t *testing.T) {
	data, _ := filepath.Abs("../../examples/quickstart/force_length.csv")
	text, _ := os.ReadFile("../../examples/quickstart-tmcmc/study.toml")
	text = bytes.Replace(text, []byte(`"../quickstart/force_length.csv"`), []byte(strconv.Quote(data)), 1)
	path := filepath.Join(t.TempDir(), "study.toml")
	os.WriteFile(path, text, 0o644)
	if _, _, err := NewBundle(load(t, path), nil); err == nil || !strings.Contains(err.Error(), "relative") {
		t.Fatalf("absolute paths: %v", err)
	}
}

// The quickstart with the ligament as a WebAssembly plugin, shipped by
// content to two in-process workers: samples.csv byte-identical to a local
// run's.
func TestRemoteWasmPluginMatchesLocal(t *testing.T) {
	text, _ := os.ReadFile("../../examples/quickstart-wasm/study.toml")
	// Shorter chains keep the test fast; the study stays next to the
	// original so that its relative paths hold.
	text = bytes.Replace(text, []byte("samples = 5000"), []byte("samples = 100"), 1)
	text = bytes.Replace(text, []byte("burn_in = 2000"), []byte("burn_in = 50"), 1)
	path, _ := filepath.Abs("../../examples/quickstart-wasm/remote-test.toml")
	os.WriteFile(path, text, 0o644)
	defer os.Remove(path)

	t0 := time.Now()
	want := localSamples(t, path)
	t.Logf("local %v", time.Since(t0))
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL())
	goWorkers(t, cfg, "w", 2)
	t0 = time.Now()
	got, c, err := remoteRun(t, cfg, path, nil)
	t.Logf("remote %v %+v", time.Since(t0), c.Stats())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("remote samples.csv (%d bytes) differs from the local one (%d bytes)", len(got), len(want))
	}
	if st := c.Stats(); st.Workers != 2 || st.Chunks == 0 {
		t.Errorf("stats %+v", st)
	}
}

// The knee TMCMC study of examples/knee-bpe (specimen 1, CI-reduced) on 1,
// 2 and 4 worker processes gives samples.csv byte-identical to a local run
// with the same seed; on 4, one worker process chosen at random is killed
// (SIGKILL) while it holds its k-th chunk (k random in 1..4), which goes
// to another worker after AckWait (the run must report a redelivery). KINFER_NATS_KILL_RUNS=10 instead runs the killed-worker
// case 10 times on 4 processes (the "10 runs"; -short: once on 2);
// KINFER_NATS_KNEE=chains,substeps sets the size (default 48,2).
func TestKneeWorkerProcesses(t *testing.T) {
	path, want := knee(t)
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	url := srv.ClientURL()
	cache := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	type variant struct {
		procs int
		kill  bool
	}
	vs := []variant{{1, false}, {2, false}, {4, true}}
	if testing.Short() {
		vs = []variant{{2, true}}
	}
	if n, _ := strconv.Atoi(os.Getenv("KINFER_NATS_KILL_RUNS")); n > 0 {
		vs = nil
		for range n {
			vs = append(vs, variant{4, true})
		}
	}
	redelivered := 0
	defer func() { t.Logf("chunks redelivered after a kill, all runs: %d", redelivered) }()
	for i, v := range vs {
		var procs []*exec.Cmd
		victim := -1
		if v.kill {
			victim = rng.IntN(v.procs)
		}
		stalled := filepath.Join(t.TempDir(), "stalled")
		stall := 1 + rng.IntN(4) // the victim's chunk that it holds until killed
		for p := range v.procs {
			var env []string
			if p == victim {
				env = append(env, fmt.Sprintf("KINFER_TEST_STALL=%d", stall), "KINFER_TEST_STALLED="+stalled)
			}
			procs = append(procs, procWorker(t, url, fmt.Sprintf("run%d-p%d", i, p), cache, env...))
		}
		var during func(c *Client)
		killed := ""
		if v.kill {
			during = func(c *Client) {
				// The victim holds its stall-th chunk from the moment it
				// creates the file until it is killed; the run cannot end
				// before then, since that chunk's result is missing.
				for t0 := time.Now(); ; time.Sleep(2 * time.Millisecond) {
					if _, err := os.Stat(stalled); err == nil {
						break
					}
					if time.Since(t0) > 5*time.Minute {
						killed = "(the victim never took its chunk to hold)"
						return
					}
				}
				procs[victim].Process.Kill()
				killed = fmt.Sprintf("(p%d killed holding its chunk %d, after %d results)", victim, stall, c.Stats().Results)
			}
		}
		t0 := time.Now()
		got, c, err := remoteRun(t, testConfig(url), path, during)
		if err != nil {
			t.Fatalf("%d processes: %v", v.procs, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%d processes %s: samples.csv differs from the local run's", v.procs, killed)
		}
		st := c.Stats()
		redelivered += st.Redelivered
		if v.kill && st.Redelivered == 0 {
			t.Errorf("%d processes %s: no chunk was redelivered", v.procs, killed)
		}
		t.Logf("%d worker processes %s: %v, byte-identical, %+v", v.procs, killed, time.Since(t0), st)
		for _, p := range procs {
			p.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range procs {
			p.Wait()
		}
	}
}

// A worker started after the run has begun takes chunks from it.
func TestLateWorkerJoins(t *testing.T) {
	path, want := knee(t)
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL())
	goWorkers(t, cfg, "early", 1)
	got, c, err := remoteRun(t, cfg, path, func(c *Client) {
		for c.Stats().Results < 100 {
			time.Sleep(5 * time.Millisecond)
		}
		goWorkers(t, cfg, "late", 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("samples.csv differs from the local run's")
	}
	if ws := c.workerNames(); len(ws) != 2 || ws[1] != "late0#0" {
		t.Fatalf("workers that returned results: %v", ws)
	}
}

// The server is shut down mid-run and restarted on the same port and
// storage: the run, its workers and the chunks in flight carry on, and
// samples.csv is byte-identical to a local run's.
func TestServerRestart(t *testing.T) {
	path, want := knee(t)
	store := t.TempDir()
	srv := startServer(t, store, 0)
	port := srv.Addr().(interface{ String() string }).String()
	_, p, _ := strings.Cut(port, "127.0.0.1:")
	pn, _ := strconv.Atoi(p)
	cfg := testConfig(srv.ClientURL())
	goWorkers(t, cfg, "w", 2)
	var srv2 *server.Server
	got, _, err := remoteRun(t, cfg, path, func(c *Client) {
		for c.Stats().Results < 200 {
			time.Sleep(5 * time.Millisecond)
		}
		srv.Shutdown()
		srv.WaitForShutdown()
		time.Sleep(300 * time.Millisecond)
		srv2 = startServer(t, store, pn)
	})
	if srv2 != nil {
		defer srv2.Shutdown()
	}
	if err != nil {
		t.Fatal(err)
	}
	if srv2 == nil {
		t.Fatal("the server was not restarted")
	}
	if !bytes.Equal(got, want) {
		t.Fatal("samples.csv differs from the local run's")
	}
}

// A chunk that is delivered MaxDeliver times without a result (here a
// worker takes chunks and never answers) is reported, and the run stops
// instead of waiting for ever.
func TestMaxDeliverReported(t *testing.T) {
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := Config{URL: srv.ClientURL(), AckWait: 200 * time.Millisecond, MaxDeliver: 2}
	nc, js, err := cfg.connect(false)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	cons, _, err := cfg.ensure(context.Background(), js)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // the black hole
		for ctx.Err() == nil {
			cons.Next(jetstream.FetchMaxWait(200 * time.Millisecond))
		}
	}()
	_, _, err = remoteRun(t, cfg, "../../examples/quickstart-tmcmc/study.toml", nil)
	if err == nil || !strings.Contains(err.Error(), "MaxDeliver") {
		t.Fatalf("run error %v, want a MaxDeliver report", err)
	}
}

// A worker refuses a chunk whose study bundle it cannot verify, and the
// run stops with the worker's reason.
func TestRefusedBundle(t *testing.T) {
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL())
	goWorkers(t, cfg, "w", 1)
	s := load(t, "../../examples/quickstart-tmcmc/study.toml")
	c, err := Dial(context.Background(), cfg, s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// An object stored under a name that is not its digest.
	_, obs, _ := cfg.ensure(context.Background(), c.js)
	fake := strings.Repeat("ab", 32)
	obs.PutBytes(context.Background(), fake, []byte(`{"abi":1}`))
	// A bundle of another platform.
	b, _, err := NewBundle(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Platform = "plan9/mips"
	data, other := b.encode()
	obs.PutBytes(context.Background(), other, data)
	// A chunk of another ABI.
	m := nats.NewMsg(workPrefix + c.run)
	m.Header.Set(hdrRun, c.run)
	m.Header.Set(hdrBatch, "99")
	m.Header.Set(hdrChunk, "0")
	m.Header.Set(hdrBundle, c.bundle)
	m.Header.Set(hdrABI, "99")
	m.Data = encodePoints(abi.WantLogTarget, [][]float64{{5000, 0.1}})
	if _, err := c.js.PublishMsg(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	// Another ABI is the worker's version, not the chunk's fault: the
	// worker declines it (another worker may take it) and says so.
	select {
	case r := <-c.results:
		if h := r.Headers(); h.Get(hdrDeclined) != "1" || h.Get(hdrRefused) != "" || !strings.Contains(h.Get(hdrError), "ABI") {
			t.Errorf("chunk of ABI 99: result headers %v", h)
		}
	case <-time.After(20 * time.Second):
		t.Error("chunk of ABI 99: no answer")
	}
	c.work.Purge(context.Background(), jetstream.WithPurgeSubject(workPrefix+c.run))
	real := c.bundle
	for _, tc := range []struct {
		bundle, want string
		declined     bool // by every worker: the run stops at MaxDeliver
	}{
		{fake, "content has sha256", false},
		{other, "plan9/mips", true},
		{strings.Repeat("cd", 32), "not on the server", false},
	} {
		c.bundle = tc.bundle
		_, _, err := c.Evaluate(context.Background(), [][]float64{{5000, 0.1}}, abi.WantLogTarget)
		what := "refused"
		if tc.declined {
			what = "declined this run's chunks"
		}
		if err == nil || !strings.Contains(err.Error(), what) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bundle %s: %v, want %q saying %q", tc.bundle[:8], err, what, tc.want)
		}
	}
	// The run's own bundle, deleted from the server (an operator's
	// cleaning), is refused; uploaded again, the same worker takes it: a
	// missing object is not remembered (remote 24).
	c.bundle = real
	if err := obs.Delete(context.Background(), real); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Evaluate(context.Background(), [][]float64{{5000, 0.1}}, abi.WantLogTarget); err == nil || !strings.Contains(err.Error(), "not on the server") {
		t.Fatalf("the deleted bundle: %v", err)
	}
	b2, _, err := NewBundle(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	data2, sum2 := b2.encode()
	if sum2 != real {
		t.Fatalf("the bundle encodes to %s, the run's is %s", sum2, real)
	}
	if _, err := obs.PutBytes(context.Background(), real, data2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Evaluate(context.Background(), [][]float64{{5000, 0.1}}, abi.WantLogTarget); err != nil {
		t.Errorf("the bundle uploaded again: %v", err)
	}
}

// A remote run stopped mid-run (its context cancelled) leaves a
// checkpoint; --resume with remote workers completes it, and samples.csv
// is byte-identical to an uninterrupted local run's.
func TestRemoteResume(t *testing.T) {
	path, want := knee(t)
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL())
	goWorkers(t, cfg, "w", 2)
	out := t.TempDir()
	s := load(t, path)
	c, err := Dial(context.Background(), cfg, s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for c.Stats().Results < 300 {
			time.Sleep(2 * time.Millisecond)
		}
		cancel()
	}()
	_, err = run.Run(ctx, s, run.Options{OutDir: out, Workers: 1, Remote: c, CheckpointEvery: -1})
	c.Close()
	if err == nil {
		t.Fatal("the interrupted run completed")
	}
	if _, err := os.Stat(filepath.Join(out, run.CheckpointFile)); err != nil {
		t.Fatalf("no checkpoint: %v", err)
	}
	s2 := load(t, path)
	c2, err := Dial(context.Background(), cfg, s2, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := run.Run(context.Background(), s2, run.Options{OutDir: out, Workers: 1, Remote: c2, Resume: true}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(out, "samples.csv"))
	if !bytes.Equal(got, want) {
		t.Fatal("samples.csv of the resumed remote run differs from the local run's")
	}
}

// A server with credentials: a client without them is refused, one with
// them runs, and summary.json's server URL does not carry the password.
func TestCredentials(t *testing.T) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true, Username: "lab", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("not ready")
	}
	plain := s.ClientURL()
	withCreds := strings.Replace(plain, "nats://", "nats://lab:s3cret@", 1)
	st := load(t, "../../examples/quickstart-tmcmc/study.toml")
	if _, err := Dial(context.Background(), testConfig(plain), st, nil, nil); err == nil || !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Fatalf("no credentials: %v", err)
	}
	goWorkers(t, testConfig(withCreds), "w", 1)
	c, err := Dial(context.Background(), testConfig(withCreds), st, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, err := c.Evaluate(context.Background(), [][]float64{{5000, 0.1}}, abi.WantLogTarget); err != nil {
		t.Fatal(err)
	}
	if sum := c.Summary().(RunSummary); sum.Server != plain {
		t.Fatalf("summary server %q, want %q", sum.Server, plain)
	}
}

// A propagation study (montecarlo with quantity: the batches want the
// model's outputs; no data, no likelihood) on 2 remote workers gives
// samples.csv — whose last column is the quantity — byte-identical to a
// local run.
func TestRemotePropagationMatchesLocal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "study.toml")
	os.WriteFile(path, []byte(`name = "line-propagation"
seed = 5
[model]
use = "line"
[conditions]
x = [1.0, 2.0]
[prior]
a = { uniform = [0.0, 1.0] }
b = { uniform = [0.0, 1.0] }
[method]
use = "montecarlo"
quantity = "y"
condition = 1
batch = 40
min_samples = 200
max_samples = 400
`), 0o644)
	want := localSamples(t, path)
	if !bytes.HasPrefix(want, []byte("a,b,log_prior,log_likelihood,y\n")) {
		t.Fatalf("local samples.csv starts %q", want[:40])
	}
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL())
	goWorkers(t, cfg, "w", 2)
	got, c, err := remoteRun(t, cfg, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("remote samples.csv (%d bytes) differs from the local one (%d bytes)", len(got), len(want))
	}
	if st := c.Stats(); st.Chunks == 0 {
		t.Errorf("stats %+v", st)
	}
}

// A plugin model whose batches fault while its points pass alone
// (host/wasm/testdata/batch_nowrite.wasm) is reported by a remote run as
// by a local one: the workers send their batch faults with their results
// (review 22: a remote run never said so).
func TestRemoteBatchFaultsReported(t *testing.T) {
	dir := t.TempDir()
	wasmBytes, err := os.ReadFile("../wasm/testdata/batch_nowrite.wasm")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"bnw.wasm":    string(wasmBytes),
		"plugin.toml": "name = \"bnw\"\nversion = \"1.0.0\"\nkind = \"model\"\nabi = 1\nwasm = \"bnw.wasm\"\n[limits]\nmemory_mib = 16\n",
		"d.csv":       "x,y1,y2\n1,2,1\n2,3,4\n3,4,9\n",
		"study.toml": "name = \"bnw\"\nseed = 1\n[model]\nplugin = \"plugin.toml\"\n[[data]]\nname = \"d\"\nfile = \"d.csv\"\n" +
			"[[likelihood]]\nuse = \"gaussian\"\nsigma = { y1 = 1.0, y2 = 1.0 }\n[prior]\na = { uniform = [0.0, 2.0] }\nb = { uniform = [0.0, 2.0] }\n" +
			"[method]\nuse = \"metropolis\"\nchains = 64\nburn_in = 5\nsamples = 5\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "study.toml")
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL())
	cfg.ChunkPoints = 8 // chunks of two calls of 4 points (64 chains)
	goWorkers(t, cfg, "w", 1)
	_, c, err := remoteRun(t, cfg, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if note := c.BatchFaults(); !strings.Contains(note, "on worker w") || !strings.Contains(note, "kinfer_model_eval faulted in") || !strings.Contains(note, "without writing y[1]") {
		t.Errorf("BatchFaults %q", note)
	}
}
