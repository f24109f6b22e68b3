package remote

// Regression tests of the third (hostile-input) audit of distributed
// runs: a relative worker cache, a server with a small max_payload, a
// server that refuses the run's chunks, and workers whose own policy
// refuses a run while others could take it.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/target"
	"github.com/kinfer/kinfer/host/wasm"

	"github.com/kinfer/kinfer/internal/syncbuf"
)

// A worker started with a relative cache directory (kinfer worker --cache
// ./wcache) evaluates runs: its bundle tree used to stay relative while
// the study's inputs are absolute, so every file looked unpinned and every
// chunk was refused.
func TestWorkerRelativeCache(t *testing.T) {
	path, err := filepath.Abs("../../examples/quickstart-tmcmc/study.toml")
	if err != nil {
		t.Fatal(err)
	}
	s := load(t, path)
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL())
	t.Chdir(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := Work(ctx, cfg, WorkerOptions{Slots: 1, CacheDir: "wcache", Runtime: wasm.Options{CacheDir: compiled}}); err != nil {
			t.Error(err)
		}
	}()
	defer func() { cancel(); <-stopped }()
	c, err := Dial(context.Background(), cfg, s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, _, err := c.Evaluate(context.Background(), [][]float64{{5000, 0.1}, {6000, 0.05}}, abi.WantLogTarget)
	if err != nil || len(res) != 2 || res[0].Status != abi.OK {
		t.Fatalf("worker with a relative cache: %v %v", res, err)
	}
}

// startServerWith starts an embedded NATS server with JetStream like
// startServer, with opts changed by change.
func startServerWith(t testing.TB, change func(o *server.Options)) *server.Server {
	t.Helper()
	o := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true}
	change(o)
	s, err := server.NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	t.Cleanup(s.Shutdown)
	return s
}

// A server with a small max_payload gets chunks whose results fit in it:
// the run used to cut chunks for 1 MB messages, and every worker refused
// them ("the results of 64 points would take 3348 bytes, more than the
// server's max_payload of 6000", hiding the 4096 bytes kept for headers).
// The results are the local ones bit for bit; a result that cannot fit
// even alone is refused with the real limit.
func TestSmallMaxPayload(t *testing.T) {
	srv := startServerWith(t, func(o *server.Options) { o.MaxPayload = 6000 })
	cfg := testConfig(srv.ClientURL())
	goWorkers(t, cfg, "w", 2)
	s := load(t, "../../examples/quickstart-tmcmc/study.toml")
	c, err := Dial(context.Background(), cfg, s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// 8192 points: chunkPoints alone gives 64 points of 52 bytes.
	pts := make([][]float64, 8192)
	for i := range pts {
		pts[i] = []float64{2000 + float64(i), -0.2 + 0.5*float64(i)/8192}
	}
	got, _, err := c.Evaluate(context.Background(), pts, abi.WantLogTarget)
	if err != nil {
		t.Fatalf("max_payload 6000: %v", err)
	}
	local, err := target.New(s, 1).Evaluate(context.Background(), pts, abi.WantLogTarget)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(encodeResults(got, 0, 0, 0), encodeResults(local, 0, 0, 0)) {
		t.Fatal("remote results differ from local ones")
	}
	// (6000 − 4096 − 20) / 52 = 36 points per chunk, rounded down to
	// whole local calls of 8 points: 32 (target.CallPoints).
	if st := c.Stats(); st.Chunks != 8192/32 {
		t.Errorf("%d chunks, want %d of 32 points", st.Chunks, 8192/32)
	}
	// One result with residuals and a Jacobian of 41 rows takes 1036
	// bytes, more than the 1024 of a server of max_payload 5120.
	srv2 := startServerWith(t, func(o *server.Options) { o.MaxPayload = 5120 })
	c2, err := Dial(context.Background(), testConfig(srv2.ClientURL()), s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_, _, err = c2.Evaluate(context.Background(), pts[:1], abi.WantResiduals|abi.WantJacobian)
	if err == nil || !strings.Contains(err.Error(), "the 1024 bytes a result may take on this server (its max_payload of 5120 less 4096") {
		t.Errorf("a result larger than the server's limit: %v", err)
	}
	// A server below the minimum is refused at once.
	srv3 := startServerWith(t, func(o *server.Options) { o.MaxPayload = 2048 })
	if c3, err := Dial(context.Background(), testConfig(srv3.ClientURL()), s, nil, nil); err == nil || !strings.Contains(err.Error(), "max_payload of 2048 bytes is too small") {
		if c3 != nil {
			c3.Close()
		}
		t.Errorf("max_payload 2048: %v", err)
	}
}

// A plugin module larger than the server's max_payload is shipped in
// pieces that fit (the object store's default pieces of 128 KiB were
// refused by a server of max_payload 64 KiB, a common hardened setting).
func TestSmallMaxPayloadUpload(t *testing.T) {
	srv := startServerWith(t, func(o *server.Options) { o.MaxPayload = 64 << 10 })
	cfg := testConfig(srv.ClientURL())
	goWorkers(t, cfg, "w", 1)
	c, err := Dial(context.Background(), cfg, load(t, "../../examples/quickstart-wasm/study.toml"), nil, nil)
	if err != nil {
		t.Fatalf("max_payload 64 KiB: %v", err)
	}
	defer c.Close()
	res, _, err := c.Evaluate(context.Background(), [][]float64{{5000, 0.1}, {6000, 0.05}}, abi.WantLogTarget)
	if err != nil || len(res) != 2 || res[0].Status != abi.OK {
		t.Fatalf("max_payload 64 KiB: %v %v", res, err)
	}
}

// A server whose JetStream storage is full refuses the run's chunks: the
// run says so on its log while it retries, then stops with the server's
// error (it used to wait for ever without a word, its chunks never
// stored, so no "no result for 10 s" hint either).
func TestChunksRefusedByServer(t *testing.T) {
	srv := startServerWith(t, func(o *server.Options) { o.JetStreamMaxStore = 1 << 20 })
	cfg := testConfig(srv.ClientURL())
	cfg.publishFor = 2 * time.Second
	var log syncbuf.Buffer
	c, err := Dial(context.Background(), cfg, load(t, "../../examples/quickstart-tmcmc/study.toml"), nil, &log)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	fillStore(t, c.js)
	ectx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	t0 := time.Now()
	_, _, err = c.Evaluate(ectx, [][]float64{{5000, 0.1}}, abi.WantLogTarget)
	if err == nil || ectx.Err() != nil || !strings.Contains(err.Error(), "insufficient resources") || !strings.Contains(err.Error(), "did not store chunk 1 of batch 1") {
		t.Fatalf("after %v: %v, want the server's refusal", time.Since(t0), err)
	}
	if l := log.String(); !strings.Contains(l, "has not stored chunk 1 of batch 1") || !strings.Contains(l, "storage is full") {
		t.Errorf("log while retrying: %q", l)
	}
}

// fillStore fills the server's JetStream storage with another stream's
// messages.
func fillStore(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FILL", Subjects: []string{"fill"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	for range 200 {
		if _, err := js.Publish(ctx, "fill", make([]byte, 32<<10)); err != nil {
			return
		}
	}
	t.Fatal("the store did not fill up")
}

// A worker that cannot store the result of a chunk whose run is gone
// (killed outright, its chunks left behind) stops retrying at once, hands
// the chunk back and evaluates none of that run's chunks any more: it used
// to retry every 200 ms for storeFor on every chunk, holding its slot.
func TestWorkerDropsGoneRun(t *testing.T) {
	srv := startServerWith(t, func(o *server.Options) { o.JetStreamMaxStore = 1 << 20 })
	cfg := testConfig(srv.ClientURL())
	c, err := Dial(context.Background(), cfg, load(t, "../../examples/quickstart-tmcmc/study.toml"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Chunks of a run that is gone (no process answers for it).
	dead := newRunID()
	for k := range 4 {
		m := chunkMsg(c, workPrefix+dead, dead, "1", encodePoints(abi.WantLogTarget, [][]float64{{5000, 0.1}}))
		m.Header.Set(hdrChunk, strconv.Itoa(k))
		if _, err := c.js.PublishMsg(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
	fillStore(t, c.js)
	var log syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		Work(ctx, cfg, WorkerOptions{Slots: 1, CacheDir: t.TempDir(), Log: &log, Runtime: wasm.Options{CacheDir: compiled}, storeFor: time.Minute})
	}()
	defer func() { cancel(); <-stopped }()
	for t0 := time.Now(); !strings.Contains(log.String(), "without evaluating them: the run is gone"); time.Sleep(20 * time.Millisecond) {
		if time.Since(t0) > 15*time.Second {
			t.Fatalf("the worker still retries a gone run's results: %s", log.String())
		}
	}
	l := log.String()
	if n := strings.Count(l, "(retrying"); n > 0 {
		t.Errorf("%d retry lines: %s", n, l)
	}
	// The slot takes its next chunk while a result is stored, so how many
	// are evaluated before the first store fails depends on timing (all 4
	// on a loaded machine); but none is evaluated twice: a chunk handed
	// back comes again and is then handed back unevaluated.
	if n := strings.Count(l, "its run is gone"); n > 4 {
		t.Errorf("%d chunks evaluated and dropped, want each of the 4 published at most once: %s", n, l)
	}
}

// goWorker starts one in-process worker with options o (its cache and
// compilation cache set if empty) until the test ends or stop is called.
func goWorker(t *testing.T, cfg Config, o WorkerOptions) (stop func()) {
	t.Helper()
	if o.CacheDir == "" {
		o.CacheDir = t.TempDir()
	}
	if o.Runtime.CacheDir == "" {
		o.Runtime.CacheDir = compiled
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := Work(ctx, cfg, o); err != nil {
			t.Error(err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-stopped }) }
	t.Cleanup(stop)
	return stop
}

// One worker whose own limit (--max-file-bytes) refuses a run no longer
// stops it while another worker can take its chunks: it declines them
// (they go back to the queue), the run names it, and samples.csv is the
// local run's (the declines do not use up the chunk's MaxDeliver). With
// only such workers, the run stops, naming them and their reasons.
func TestWorkerDeclinesOthersTake(t *testing.T) {
	dir := t.TempDir()
	text, _ := os.ReadFile("../../examples/quickstart-tmcmc/study.toml")
	data, _ := os.ReadFile("../../examples/quickstart/force_length.csv")
	s := strings.NewReplacer("chains = 1000", "chains = 200", "substeps = 20", "substeps = 4", "../quickstart/", "").Replace(string(text))
	path := filepath.Join(dir, "study.toml")
	os.WriteFile(path, []byte(s), 0o644)
	os.WriteFile(filepath.Join(dir, "force_length.csv"), data, 0o644)
	want := localSamples(t, path)

	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL())
	cfg.MaxDeliver = DefaultMaxDeliver
	goWorker(t, cfg, WorkerOptions{Slots: 1, ID: "good"})
	// The odd worker, with the default pauses, two slots.
	stopSmall := goWorker(t, cfg, WorkerOptions{Slots: 2, ID: "small", MaxFileBytes: 100})
	var log syncbuf.Buffer
	ls := load(t, path)
	c, err := Dial(context.Background(), cfg, ls, nil, &log)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out := t.TempDir()
	if _, err := run.Run(context.Background(), ls, run.Options{OutDir: out, Workers: 1, Remote: c}); err != nil {
		t.Fatalf("a run with one declining worker: %v", err)
	}
	got, _ := os.ReadFile(filepath.Join(out, "samples.csv"))
	if !bytes.Equal(got, want) {
		t.Fatal("samples.csv differs from the local run's")
	}
	if ws := c.decliners(); len(ws) != 1 || ws[0] != "small" {
		t.Errorf("decliners %v, want [small]", ws)
	}
	if ws := c.workerNames(); len(ws) != 1 || ws[0] != "good#0" {
		t.Errorf("workers that returned results: %v", ws)
	}
	if l := log.String(); !strings.Contains(l, "worker small declines this run's chunks") || !strings.Contains(l, "--max-file-bytes") {
		t.Errorf("run log: %q", l)
	}
	stopSmall()

	// Only declining workers: the run stops, naming them.
	srv2 := startServer(t, t.TempDir(), 0)
	defer srv2.Shutdown()
	cfg2 := testConfig(srv2.ClientURL())
	cfg2.MaxDeliver = DefaultMaxDeliver
	goWorker(t, cfg2, WorkerOptions{Slots: 1, ID: "small", MaxFileBytes: 100, declinePause: testDeclinePause})
	goWorker(t, cfg2, WorkerOptions{Slots: 1, ID: "older", declinePause: testDeclinePause, MaxFileBytes: 200})
	c2, err := Dial(context.Background(), cfg2, load(t, path), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	// A batch of 100 chunks: declines are counted over the batch, not per
	// chunk (each declined chunk goes to the back of the queue).
	pts := make([][]float64, 200)
	for i := range pts {
		pts[i] = []float64{5000, 0.1}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, _, err = c2.Evaluate(ctx, pts, abi.WantLogTarget)
	if err == nil || !strings.Contains(err.Error(), "no worker can take this run") || !strings.Contains(err.Error(), "small: study bundle") ||
		!strings.Contains(err.Error(), "limit of 100 bytes (kinfer worker --max-file-bytes)") {
		t.Fatalf("only declining workers: %v", err)
	}
}

// A worker's cache holds compiled native code it runs: a cache folder
// another user could write to is refused, and without a user cache
// directory (no HOME) the worker asks for --cache instead of using the
// shared temp folder.
func TestWorkerCacheMustBePrivate(t *testing.T) {
	cfg := testConfig("nats://127.0.0.1:1") // never reached: the cache is refused first
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	err := Work(context.Background(), cfg, WorkerOptions{Slots: 1, CacheDir: open, Runtime: wasm.Options{CacheDir: "-"}})
	if err == nil || !strings.Contains(err.Error(), "is writable by others") {
		t.Errorf("a world-writable cache: %v", err)
	}
	t.Setenv("HOME", "")
	t.Setenv("XDG_CACHE_HOME", "")
	err = Work(context.Background(), cfg, WorkerOptions{Slots: 1, Runtime: wasm.Options{CacheDir: "-"}})
	if err == nil || !strings.Contains(err.Error(), "give --cache a folder of your own") {
		t.Errorf("no HOME: %v", err)
	}
}

// A declining worker beside an able one busy on a slow chunk does not stop
// the run: the chunk held in progress is progress the results do not show
// yet (review 3 F7: the run stopped after declineWait with "no worker can
// take this run" while the able worker evaluated).
func TestDeclinesBesideABusyWorker(t *testing.T) {
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL()) // declineWait 2 s
	cfg.MaxDeliver = DefaultMaxDeliver
	cfg.ChunkPoints = 1
	goWorker(t, cfg, WorkerOptions{Slots: 1, ID: "good", stall: 1})
	goWorker(t, cfg, WorkerOptions{Slots: 1, ID: "small", MaxFileBytes: 100, declinePause: testDeclinePause})
	c, err := Dial(context.Background(), cfg, load(t, "../../examples/quickstart-tmcmc/study.toml"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _, err = c.Evaluate(ctx, [][]float64{{5000, 0.1}, {6000, 0.05}}, abi.WantLogTarget)
	if err == nil || strings.Contains(err.Error(), "no worker can take this run") {
		t.Fatalf("with an able worker holding a chunk: %v, want the context's deadline", err)
	}
}

// A plugin fault on a worker is reported as deterministic when it is (a
// trap: a resume would meet it again; ABI.md §5), as a local fault is,
// and names the plugin's files by the run's paths, not by the worker's
// cached copies (audit 4, newcomer #15).
func TestRemoteTrapIsDeterministic(t *testing.T) {
	_, err := remoteModelRun(t, "loop")
	var det interface{ Deterministic() bool }
	if err == nil || !strings.Contains(err.Error(), "exceeded its fuel budget") || !errors.As(err, &det) || !det.Deterministic() {
		t.Fatalf("remote fuel fault: %v (deterministic: %v)", err, det != nil && det.Deterministic())
	}
	if strings.Contains(err.Error(), "bundles") || !strings.Contains(err.Error(), "model/plugin.toml") {
		t.Errorf("the fault names the worker's copy, not the run's plugin.toml: %v", err)
	}
}

// A plugin's failed points on a worker are reported with its
// kinfer_last_error, as a local run reports them (audit 4: a remote run's
// error and summary.json lost the reason).
func TestRemoteFailuresNamed(t *testing.T) {
	_, err := remoteModelRun(t, "failall")
	if err == nil || !strings.Contains(err.Error(), "points failed in a plugin: on worker w0") || !strings.Contains(err.Error(), "model model: kinfer_model_eval returned 1 (failed)") ||
		!strings.Contains(err.Error(), "model failed on purpose") {
		t.Fatalf("remote run of a model failing every point: %v", err)
	}
}

// remoteModelRun runs a Metropolis study of the hostile test model in
// mode on one in-process worker.
func remoteModelRun(t *testing.T, mode string) ([]byte, error) {
	dir := t.TempDir()
	wasmSrc, err := os.ReadFile("../../test/hostile/testdata/wat/model.wasm")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"model/model.wasm":  string(wasmSrc),
		"model/plugin.toml": "name = \"model\"\nversion = \"1.0.0\"\nkind = \"model\"\nabi = 1\nwasm = \"model.wasm\"\n[limits]\nmemory_mib = 16\nfuel = 10_000_000\n",
		"d.csv":             "x,y\n1,0.5\n2,1.0\n",
		"study.toml": "name = \"trap\"\nseed = 1\n[model]\nplugin = \"model/plugin.toml\"\nmode = \"" + mode + "\"\n[[data]]\nname = \"d\"\nfile = \"d.csv\"\n" +
			"[[likelihood]]\nuse = \"gaussian\"\nsigma = 1.0\n[prior]\na = { uniform = [0.0, 1.0] }\n[method]\nuse = \"metropolis\"\nchains = 2\nburn_in = 5\nsamples = 5\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL())
	goWorkers(t, cfg, "w", 1)
	b, _, err := remoteRun(t, cfg, filepath.Join(dir, "study.toml"), nil)
	return b, err
}
