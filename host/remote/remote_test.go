package remote

import (
	"bytes"
	"context"
	"fmt"
	"math"
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
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		err := Work(ctx, Config{URL: url, AckWait: ack, MaxDeliver: testMaxDeliver},
			WorkerOptions{Slots: 1, CacheDir: os.Getenv("KINFER_TEST_CACHE"), ID: os.Getenv("KINFER_TEST_ID")})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Delivery settings of the tests: a killed worker's chunk goes to another
// after testAckWait.
const (
	testAckWait    = time.Second
	testMaxDeliver = 10
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
	return Config{URL: url, AckWait: testAckWait, MaxDeliver: testMaxDeliver}
}

// kneeStudy writes the knee study of examples/knee-bpe (specimen 1) cut to
// chains chains and substeps sub-steps into a temporary directory.
func kneeStudy(t testing.TB, chains, substeps int) string {
	t.Helper()
	dir := t.TempDir()
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
	rt, err := wasm.NewRuntime(context.Background(), wasm.Options{CacheDir: "-"})
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
			if err := Work(ctx, cfg, WorkerOptions{Slots: 1, CacheDir: cache, ID: fmt.Sprintf("%s%d", prefix, i)}); err != nil {
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

// procWorker starts a worker process (the test binary).
func procWorker(t testing.TB, url, id, cache string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KINFER_TEST_WORKER="+url, "KINFER_TEST_ACKWAIT="+testAckWait.String(),
		"KINFER_TEST_CACHE="+cache, "KINFER_TEST_ID="+id, "KINFER_CACHE_DIR=-")
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
	got, jev, secs, err := decodeResults(encodeResults(res, 7, 0.125))
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
	if _, _, _, err := decodeResults(encodeResults(res, 0, 0)[:50]); err == nil {
		t.Error("truncated body accepted")
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

// The quickstart with the ligament as a WebAssembly plugin, shipped by
// content to two in-process workers: samples.csv byte-identical to a local
// run's.
func TestRemoteWasmPluginMatchesLocal(t *testing.T) {
	path, _ := filepath.Abs("../../examples/quickstart-wasm/study.toml")
	dir := t.TempDir()
	text, _ := os.ReadFile(path)
	// A shorter chain keeps the test fast; the files stay where they are.
	text = bytes.Replace(text, []byte("samples = 5000"), []byte("samples = 300"), 1)
	text = bytes.Replace(text, []byte("burn_in = 2000"), []byte("burn_in = 200"), 1)
	text = bytes.ReplaceAll(text, []byte(`"../`), []byte(`"`+filepath.Dir(filepath.Dir(path))+"/"))
	_ = dir
	// Absolute paths are refused for remote runs: a worker has its own files.
	abs := filepath.Join(filepath.Dir(path), "remote-test-abs.toml")
	os.WriteFile(abs, text, 0o644)
	defer os.Remove(abs)
	if _, _, err := NewBundle(load(t, abs), nil); err == nil || !strings.Contains(err.Error(), "relative") {
		t.Fatalf("absolute paths: %v", err)
	}
	rel := bytes.ReplaceAll(text, []byte(`"`+filepath.Dir(filepath.Dir(path))+"/"), []byte(`"../`))
	short := filepath.Join(filepath.Dir(path), "remote-test.toml")
	os.WriteFile(short, rel, 0o644)
	defer os.Remove(short)

	want := localSamples(t, short)
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL())
	goWorkers(t, cfg, "w", 2)
	got, c, err := remoteRun(t, cfg, short, nil)
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
