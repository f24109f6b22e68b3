package remote

// Regression tests of the second (security) read of the remote evaluator:
// chunks, results, bundles and objects come from whoever can publish to
// the server, so every one of them is treated as hostile.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/target"
	"github.com/kinfer/kinfer/host/wasm"
	"github.com/kinfer/kinfer/internal/syncbuf"
)

// chunkBody is a chunk body with a forged header: want, n, d, then body
// bytes of zeros.
func chunkBody(want abi.Want, n, d uint32, body int) []byte {
	b := make([]byte, 12+body)
	binary.LittleEndian.PutUint32(b[0:], uint32(want))
	binary.LittleEndian.PutUint32(b[4:], n)
	binary.LittleEndian.PutUint32(b[8:], d)
	return b
}

// A forged chunk header is refused, not decoded: n·d·8 wrapping around 2⁶⁴
// to the body's size used to pass the size check and panic the worker in
// make (n = 2³⁰, d = 2³¹, empty body); n points of no values allocated n
// slices from 12 bytes.
func TestDecodePointsHostile(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"n·d·8 wraps to 0", chunkBody(abi.WantLogTarget, 1<<30, 1<<31, 0)},
		{"no values", chunkBody(abi.WantLogTarget, math.MaxUint32, 0, 0)},
		{"no points", chunkBody(abi.WantLogTarget, 0, 2, 0)},
		{"ragged body", chunkBody(abi.WantLogTarget, 1, 1, 9)},
		{"unknown want", chunkBody(1<<7, 1, 1, 8)},
		{"short", []byte{1, 2, 3}},
	} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: panic %v", tc.name, p)
				}
			}()
			if _, pts, err := decodePoints(tc.b); err == nil {
				t.Errorf("%s: decoded %d points, want an error", tc.name, len(pts))
			}
		}()
	}
	// The honest encoding still decodes.
	if w, pts, err := decodePoints(encodePoints(abi.WantJacobian|abi.WantResiduals, [][]float64{{1, 2}, {3, 4}})); err != nil || len(pts) != 2 || w != abi.WantJacobian|abi.WantResiduals {
		t.Fatalf("honest chunk: %v %v %v", w, pts, err)
	}
}

func TestValidRunID(t *testing.T) {
	for _, ok := range []string{newRunID(), "abc_DEF-1"} {
		if !validRunID(ok) {
			t.Errorf("%q refused", ok)
		}
	}
	for _, bad := range []string{"", "a.b", "*", ">", "a b", "a\nb", strings.Repeat("a", 65), "é"} {
		if validRunID(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

// hostileRig is a server, one in-process worker and a dialled run of the
// quickstart study (two parameters, no residual likelihood).
func hostileRig(t *testing.T) (*Client, Config) {
	t.Helper()
	srv := startServer(t, t.TempDir(), 0)
	t.Cleanup(srv.Shutdown)
	cfg := testConfig(srv.ClientURL())
	goWorkers(t, cfg, "w", 1)
	s := load(t, "../../examples/quickstart-tmcmc/study.toml")
	c, err := Dial(context.Background(), cfg, s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, cfg
}

// chunkMsg is a chunk of c's run on subject, with headers as a run sets
// them (run overrides the run header).
func chunkMsg(c *Client, subject, run, batch string, body []byte) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Header.Set(hdrRun, run)
	m.Header.Set(hdrBatch, batch)
	m.Header.Set(hdrChunk, "0")
	m.Header.Set(hdrBundle, c.bundle)
	m.Header.Set(hdrABI, strconv.Itoa(abi.Version))
	m.Data = body
	return m
}

// answer waits for the next result of c's run.
func answer(t *testing.T, c *Client, what string) jetstream.Msg {
	t.Helper()
	select {
	case r := <-c.results:
		return r
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: no answer", what)
		return nil
	}
}

// A worker refuses malformed chunks with a reason on the run, drops
// messages that are not its run's chunks without answering into another
// run, and keeps working afterwards.
func TestWorkerHostileChunks(t *testing.T) {
	c, _ := hostileRig(t)
	ctx := context.Background()
	pub := func(m *nats.Msg) {
		t.Helper()
		if _, err := c.js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	// A chunk on another subject whose run header names c's run: it
	// must not answer into c's results.
	other := newRunID()
	pub(chunkMsg(c, workPrefix+other, c.run, "1", encodePoints(abi.WantLogTarget, [][]float64{{5000, 0.1}})))
	// A batch header that is no number.
	pub(chunkMsg(c, workPrefix+c.run, c.run, "x", encodePoints(abi.WantLogTarget, [][]float64{{5000, 0.1}})))
	// Then the refusals, in order.
	batch := 10
	for _, tc := range []struct {
		name string
		body []byte
		want string
	}{
		{"wrapping size", chunkBody(abi.WantLogTarget, 1<<30, 1<<31, 0), "do not fill"},
		{"wrong dimension", encodePoints(abi.WantLogTarget, [][]float64{{5000, 0.1, 7}}), "2 parameters"},
		// 60000 points fit in a chunk of 960 kB, their results (52 bytes
		// each) not in the server's max_payload of 1 MB: the worker used to
		// evaluate them, then retry storing the result for ever.
		{"results too large", encodePoints(abi.WantLogTarget, make60k()), "max_payload"},
	} {
		// Each in its own batch: results have message ids run.batch.chunk.r.
		batch++
		pub(chunkMsg(c, workPrefix+c.run, c.run, strconv.Itoa(batch), tc.body))
		r := answer(t, c, tc.name)
		if h := r.Headers(); h.Get(hdrRefused) != "1" || !strings.Contains(h.Get(hdrError), tc.want) {
			t.Errorf("%s: result headers %v, want a refusal saying %q", tc.name, h, tc.want)
		}
	}
	// The worker still evaluates an honest batch.
	res, _, err := c.Evaluate(ctx, [][]float64{{5000, 0.1}, {6000, 0.05}}, abi.WantLogTarget)
	if err != nil || len(res) != 2 || res[0].Status != abi.OK {
		t.Fatalf("honest batch after hostile chunks: %v %v", res, err)
	}
}

func make60k() [][]float64 {
	pts := make([][]float64, 60000)
	for i := range pts {
		pts[i] = []float64{5000, 0.1}
	}
	return pts
}

// A bundle whose study file is not one of its files, whose file path is
// not canonical, or whose file is larger than the worker accepts, is
// refused before anything is fetched or read.
func TestBundleHostile(t *testing.T) {
	c, cfg := hostileRig(t)
	ctx := context.Background()
	_, obs, _ := cfg.ensure(ctx, c.js)
	base, _, err := NewBundle(load(t, "../../examples/quickstart-tmcmc/study.toml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(b *Bundle)
		want   string
	}{
		{"study outside", func(b *Bundle) { b.Study = "../../../../../../etc/passwd" }, "not one of its files"},
		{"study not a study", func(b *Bundle) {
			for _, f := range b.Files {
				if f.Role != "study" {
					b.Study = f.Path
				}
			}
		}, "not one of its files"},
		{"dot path", func(b *Bundle) { b.Files[0].Path = "." }, "leaves the bundle"},
		{"parent path", func(b *Bundle) { b.Files[0].Path = "a/../../x" }, "leaves the bundle"},
		{"twice", func(b *Bundle) { b.Files = append(b.Files, b.Files[0]) }, "named twice"},
		// Above this worker's limit: declined (another worker's limit
		// may be higher); with no other worker the run stops with this
		// worker's reason.
		{"huge", func(b *Bundle) { b.Files[0].Size = 1 << 40 }, "declined this run's chunks (each worker's own limits, not the chunk's fault):\n  w0: study bundle"},
		{"negative size", func(b *Bundle) { b.Files[0].Size = -1 }, "size -1"},
		// The declared size is what the worker reads at most: an object
		// larger than declared is refused without being read whole.
		{"object larger than declared", func(b *Bundle) { b.Files[0].SHA256 = putHuge(t, obs); b.Files[0].Size = 10 }, "more than the 10"},
	} {
		b := *base
		b.Files = append([]BundleFile(nil), base.Files...)
		tc.change(&b)
		data, sum := b.encode()
		if _, err := obs.PutBytes(ctx, sum, data); err != nil {
			t.Fatal(err)
		}
		c.bundle = sum
		_, _, err := c.Evaluate(ctx, [][]float64{{5000, 0.1}}, abi.WantLogTarget)
		if err == nil || !strings.Contains(err.Error(), "refused") && !strings.Contains(err.Error(), "no worker can take this run") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a refusal saying %q", tc.name, err, tc.want)
		}
	}
}

// putHuge stores a 2 MB object under its digest and returns the digest.
func putHuge(t *testing.T, obs jetstream.ObjectStore) string {
	data := make([]byte, 2<<20)
	data[0] = 42
	h := sha256.Sum256(data)
	sum := hex.EncodeToString(h[:])
	if _, err := obs.PutBytes(context.Background(), sum, data); err != nil {
		t.Fatal(err)
	}
	return sum
}

// The run refuses results that are not its chunk's: another θ, an
// unknown status, vectors of the wrong length, a non-finite or negative
// tally. A local evaluation's results pass.
func TestCheckResults(t *testing.T) {
	c := &Client{d: 2, R: 3, O: 4}
	pts := [][]float64{{1, 2}, {3, math.NaN()}}
	good := func() []abi.Result {
		return []abi.Result{
			{Theta: []float64{1, 2}, Status: abi.OK, Grad: []float64{0, 0}, Residuals: []float64{1, 2, 3}, Jacobian: make([]float64, 6)},
			{Theta: []float64{3, math.NaN()}, Status: abi.NonFinite, LogLik: math.Inf(-1)},
		}
	}
	all := abi.WantLogTarget | abi.WantGradient | abi.WantResiduals | abi.WantJacobian
	if err := c.checkResults(good(), pts, all, 4, 0.5, time.Second); err != nil {
		t.Fatalf("honest results: %v", err)
	}
	withOutputs := good()
	withOutputs[0].Outputs = []float64{1, 2, 3, 4}
	if err := c.checkResults(withOutputs, pts, all|abi.WantOutputs, 4, 0.5, time.Second); err != nil {
		t.Fatalf("honest results with outputs: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(rs []abi.Result) []abi.Result
		want   abi.Want
		jev    int
		secs   float64
	}{
		{"count", func(rs []abi.Result) []abi.Result { return rs[:1] }, all, 0, 0},
		{"other θ", func(rs []abi.Result) []abi.Result { rs[0].Theta[1] = 2.5; return rs }, all, 0, 0},
		{"short θ", func(rs []abi.Result) []abi.Result { rs[0].Theta = rs[0].Theta[:1]; return rs }, all, 0, 0},
		{"status", func(rs []abi.Result) []abi.Result { rs[1].Status = 99; return rs }, all, 0, 0},
		{"negative status", func(rs []abi.Result) []abi.Result { rs[1].Status = -1; return rs }, all, 0, 0},
		{"gradient length", func(rs []abi.Result) []abi.Result { rs[0].Grad = []float64{1}; return rs }, all, 0, 0},
		{"gradient unasked", func(rs []abi.Result) []abi.Result { return rs }, abi.WantLogTarget | abi.WantResiduals | abi.WantJacobian, 0, 0},
		{"residuals length", func(rs []abi.Result) []abi.Result { rs[0].Residuals = make([]float64, 1000); return rs }, all, 0, 0},
		{"jacobian length", func(rs []abi.Result) []abi.Result { rs[0].Jacobian = make([]float64, 5); return rs }, all, 0, 0},
		{"negative jacobian evals", func(rs []abi.Result) []abi.Result { return rs }, all, -1, 0},
		{"huge jacobian evals", func(rs []abi.Result) []abi.Result { return rs }, all, math.MaxInt, 0},
		{"ok with NaN log likelihood", func(rs []abi.Result) []abi.Result { rs[0].LogLik = math.NaN(); return rs }, all, 0, 0},
		{"ok with +Inf log likelihood", func(rs []abi.Result) []abi.Result { rs[0].LogLik = math.Inf(1); return rs }, all, 0, 0},
		{"ok with a NaN residual", func(rs []abi.Result) []abi.Result { rs[0].Residuals[2] = math.NaN(); return rs }, all, 0, 0},
		{"NaN log prior", func(rs []abi.Result) []abi.Result { rs[1].LogPrior = math.NaN(); return rs }, all, 0, 0},
		{"+Inf log prior", func(rs []abi.Result) []abi.Result { rs[0].LogPrior = math.Inf(1); return rs }, all, 0, 0},
		{"NaN seconds", func(rs []abi.Result) []abi.Result { return rs }, all, 0, math.NaN()},
		{"negative seconds", func(rs []abi.Result) []abi.Result { return rs }, all, 0, -1},
		// Finite but impossible: more than the points' time since the batch
		// was published (1 s here); summary.json's sum wrapped (audit 6).
		{"1.7e308 seconds", func(rs []abi.Result) []abi.Result { return rs }, all, 0, 1.7e308},
		{"seconds beyond the wall time", func(rs []abi.Result) []abi.Result { return rs }, all, 0, float64(len(pts))*2 + 0.01},
		{"outputs unasked", func(rs []abi.Result) []abi.Result { rs[0].Outputs = make([]float64, 4); return rs }, all, 0, 0},
		{"outputs missing", func(rs []abi.Result) []abi.Result { return rs }, all | abi.WantOutputs, 0, 0},
		{"outputs length", func(rs []abi.Result) []abi.Result { rs[0].Outputs = make([]float64, 3); return rs }, all | abi.WantOutputs, 0, 0},
		{"outputs of a failed point", func(rs []abi.Result) []abi.Result {
			rs[0].Outputs, rs[1].Outputs = make([]float64, 4), make([]float64, 4)
			return rs
		}, all | abi.WantOutputs, 0, 0},
		{"ok with a NaN output", func(rs []abi.Result) []abi.Result { rs[0].Outputs = []float64{0, math.NaN(), 0, 0}; return rs }, all | abi.WantOutputs, 0, 0},
	} {
		if err := c.checkResults(tc.change(good()), pts, tc.want, tc.jev, tc.secs, time.Second); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

// A run takes a chunk's first result; a later result for the same chunk
// (a redelivered chunk answered twice), even an error, is a duplicate,
// and a result whose θ is not the chunk's point stops the run.
func TestResultsHostile(t *testing.T) {
	srv := startServer(t, t.TempDir(), 0)
	t.Cleanup(srv.Shutdown)
	cfg := testConfig(srv.ClientURL())
	cfg.ChunkPoints = 1
	s := load(t, "../../examples/quickstart-tmcmc/study.toml")
	c, err := Dial(context.Background(), cfg, s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cons, _, err := cfg.ensure(context.Background(), c.js)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A fake worker: chunk 0 is answered, then answered again with an
	// error; chunk 1 is answered once. With shift set, θ is altered.
	var shift atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			msg, err := cons.Next(jetstream.FetchMaxWait(200 * time.Millisecond))
			if err != nil {
				continue
			}
			h := msg.Headers()
			_, pts, _ := decodePoints(msg.Data())
			rs := make([]abi.Result, len(pts))
			for i, p := range pts {
				th := append([]float64(nil), p...)
				if shift.Load() {
					th[0]++
				}
				rs[i] = abi.Result{Theta: th, LogLik: -1}
			}
			send := func(body []byte, e, id string) {
				m := nats.NewMsg(resultPrefix + h.Get(hdrRun))
				m.Header.Set(jetstream.MsgIDHeader, id)
				m.Header.Set(hdrBatch, h.Get(hdrBatch))
				m.Header.Set(hdrChunk, h.Get(hdrChunk))
				m.Header.Set(hdrWorker, "fake#0")
				if e != "" {
					m.Header.Set(hdrError, e)
				}
				m.Data = body
				c.js.PublishMsg(ctx, m)
			}
			if h.Get(hdrChunk) == "0" {
				send(encodeResults(rs, 0, 0, 0), "", "a"+h.Get(hdrBatch))
				send(nil, "late failure", "b"+h.Get(hdrBatch))
				time.Sleep(100 * time.Millisecond) // chunk 1 answered after both
			} else {
				send(encodeResults(rs, 0, 0, 0), "", "c"+h.Get(hdrBatch))
			}
			msg.Ack()
		}
	}()
	pts := [][]float64{{5000, 0.1}, {6000, 0.05}}
	res, _, err := c.Evaluate(ctx, pts, abi.WantLogTarget)
	if err != nil || len(res) != 2 || res[1].Theta[0] != 6000 {
		t.Fatalf("duplicate error after a result: %v %v", res, err)
	}
	if st := c.Stats(); st.Duplicates != 1 {
		t.Errorf("duplicates %d, want 1", st.Duplicates)
	}
	shift.Store(true)
	if _, _, err := c.Evaluate(ctx, pts, abi.WantLogTarget); err == nil || !strings.Contains(err.Error(), "θ is not the chunk's point") {
		t.Errorf("results of other points: %v", err)
	}
	cancel()
	<-done
}

// A study that marks its plugin trusted (allowed to lift the sandbox's
// limits) is refused by a worker not started with TrustPlugins, and
// evaluated by one that is.
func TestTrustedPluginNeedsWorkerConsent(t *testing.T) {
	text, _ := os.ReadFile("../../examples/quickstart-wasm/study.toml")
	text = bytes.Replace(text, []byte(`plugin = "../../plugins/go/ligament/plugin.toml"`),
		[]byte(`plugin = "../../plugins/go/ligament/plugin.toml"
trusted = true`), 1)
	if !bytes.Contains(text, []byte("trusted = true")) {
		t.Fatal("the quickstart-wasm study changed: no plugin line to mark trusted")
	}
	path, _ := filepath.Abs("../../examples/quickstart-wasm/remote-trusted-test.toml")
	os.WriteFile(path, text, 0o644)
	defer os.Remove(path)
	s := load(t, path)
	for _, trust := range []bool{false, true} {
		srv := startServer(t, t.TempDir(), 0)
		cfg := testConfig(srv.ClientURL())
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			Work(ctx, cfg, WorkerOptions{Slots: 1, CacheDir: t.TempDir(), TrustPlugins: trust, Runtime: wasm.Options{CacheDir: compiled}, declinePause: testDeclinePause})
		}()
		c, err := Dial(context.Background(), cfg, s, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = c.Evaluate(context.Background(), [][]float64{{5000, 0.1}}, abi.WantLogTarget)
		switch {
		case !trust && (err == nil || !strings.Contains(err.Error(), "--trust-plugins")):
			t.Errorf("untrusting worker: %v, want a refusal naming --trust-plugins", err)
		case trust && err != nil:
			t.Errorf("trusting worker: %v", err)
		}
		c.Close()
		cancel()
		<-stopped
		srv.Shutdown()
	}
}

// Honest results with gradients, residuals and Jacobians pass the run's
// checks and are the local ones bit for bit (the checks refuse nothing a
// local evaluation returns), points out of support and NaN included.
func TestChecksPassHonestDerivatives(t *testing.T) {
	c, _ := hostileRig(t)
	s := load(t, "../../examples/quickstart-tmcmc/study.toml")
	pts := [][]float64{{5000, 0.1}, {6000, 0.05}, {1, 0.1}, {math.NaN(), 0.1}, {8000, -0.1}}
	for _, want := range []abi.Want{abi.WantLogTarget | abi.WantGradient, abi.WantLogTarget | abi.WantResiduals | abi.WantJacobian, abi.WantGradient | abi.WantResiduals | abi.WantJacobian} {
		local, err := target.New(s, 1).Evaluate(context.Background(), pts, want)
		if err != nil {
			t.Fatal(err)
		}
		if want&abi.WantJacobian != 0 {
			want |= abi.WantResiduals // as target.Evaluate passes it on
			if local[0].Jacobian == nil || len(local[0].Residuals) == 0 {
				t.Fatal("the quickstart gave no Jacobian: the test checks nothing")
			}
		}
		if want&abi.WantGradient != 0 && local[0].Grad == nil {
			t.Fatal("the quickstart gave no gradient: the test checks nothing")
		}
		got, _, err := c.Evaluate(context.Background(), pts, want)
		if err != nil {
			t.Fatalf("want %#x: %v", uint32(want), err)
		}
		if !bytes.Equal(encodeResults(got, 0, 0, 0), encodeResults(local, 0, 0, 0)) {
			t.Errorf("want %#x: remote results differ from local ones", uint32(want))
		}
	}
}

// A header's text reaches the run's terminal without escape sequences
// and at a bounded length.
func TestPrintable(t *testing.T) {
	got := printable("w\x1b[2J\u009b31m\x9b\xffok\nline\u202e\u2028", 100)
	if strings.Contains(got, "\x1b") || strings.ContainsRune(got, 0x9b) || strings.IndexByte(got, 0x9b) >= 0 || !strings.Contains(got, `\x1b[2J`) || !strings.Contains(got, `ok\nline\u202e\u2028`) {
		t.Errorf("printable: %q", got)
	}
	if got := printable(strings.Repeat("a", 10000), 100); len(got) > 110 {
		t.Errorf("printable: %d bytes", len(got))
	}
}

// A worker's copies of a run's study, data and plugins are its user's
// alone: a shared machine's other users cannot read a run's data there.
func TestWorkerCachePrivate(t *testing.T) {
	srv := startServer(t, t.TempDir(), 0)
	defer srv.Shutdown()
	cfg := testConfig(srv.ClientURL())
	cache := filepath.Join(t.TempDir(), "cache")
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		Work(ctx, cfg, WorkerOptions{Slots: 1, CacheDir: cache, Runtime: wasm.Options{CacheDir: compiled}})
	}()
	defer func() { cancel(); <-stopped }()
	c, err := Dial(context.Background(), cfg, load(t, "../../examples/quickstart-tmcmc/study.toml"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, _, err := c.Evaluate(context.Background(), [][]float64{{5000, 0.1}}, abi.WantLogTarget); err != nil {
		t.Fatal(err)
	}
	n := 0
	filepath.Walk(cache, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, readable by others", p, info.Mode().Perm())
		}
		n++
		return nil
	})
	if n < 4 {
		t.Errorf("%d entries in the worker's cache: nothing fetched?", n)
	}
}

// A worker that cannot store a result (here: no permission to publish on
// kinfer.result.>) hands the chunk back after storeFor instead of keeping
// it alive for ever, so that the run is told at MaxDeliver rather than
// waiting without end.
func TestResultNotStorable(t *testing.T) {
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
		Users: []*server.User{{Username: "run", Password: "r"},
			{Username: "worker", Password: "w", Permissions: &server.Permissions{Publish: &server.SubjectPermission{Deny: []string{resultPrefix + ">"}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	defer s.Shutdown()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("not ready")
	}
	cfg := Config{AckWait: 500 * time.Millisecond, MaxDeliver: 2}
	wcfg, rcfg := cfg, cfg
	wcfg.URL = strings.Replace(s.ClientURL(), "nats://", "nats://worker:w@", 1)
	rcfg.URL = strings.Replace(s.ClientURL(), "nats://", "nats://run:r@", 1)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		Work(ctx, wcfg, WorkerOptions{Slots: 1, CacheDir: t.TempDir(), Runtime: wasm.Options{CacheDir: compiled}, storeFor: 300 * time.Millisecond})
	}()
	defer func() { cancel(); <-stopped }()
	c, err := Dial(context.Background(), rcfg, load(t, "../../examples/quickstart-tmcmc/study.toml"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ectx, ecancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ecancel()
	_, _, err = c.Evaluate(ectx, [][]float64{{5000, 0.1}}, abi.WantLogTarget)
	if err == nil || !strings.Contains(err.Error(), "MaxDeliver") {
		t.Fatalf("run error %v, want a MaxDeliver report", err)
	}
}

// A password or token given in --nats never reaches a log, a message or
// summary.json: PublicURL drops the user information of every URL of a
// list (a password may hold '@').
func TestPublicURLHidesCredentials(t *testing.T) {
	for in, want := range map[string]string{
		"nats://lab:s3cretpw@127.0.0.1:14222":                "nats://127.0.0.1:14222",
		"nats://tok@h:4222, nats://u:p@ss@h2:4222":           "nats://h:4222,nats://h2:4222",
		"tls://u:p@h/path@x":                                 "tls://h/path@x",
		"nats://127.0.0.1:4222":                              "nats://127.0.0.1:4222",
		"u:pw@127.0.0.1:4222":                                "127.0.0.1:4222",
		"nats://user:pa%40ss@host:1,nats://other:4222?x=1@y": "nats://host:1,nats://other:4222?x=1@y",
	} {
		if got := (Config{URL: in}).PublicURL(); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// TestCacheFailureLeavesNoTemporary: a worker whose cache cannot take an
// object (here its place is a non-empty folder, so the rename fails, as a
// full disk fails the write) still gets the verified data, and leaves no
// temporary file behind, however often the object is fetched (audit 3,
// hostile #18: one per delivery filled the cache).
func TestCacheFailureLeavesNoTemporary(t *testing.T) {
	c, cfg := hostileRig(t)
	ctx := context.Background()
	_, obs, _ := cfg.ensure(ctx, c.js)
	sum := putHuge(t, obs)
	cache := t.TempDir()
	objects := filepath.Join(cache, "objects")
	if err := os.MkdirAll(filepath.Join(objects, sum, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		data, err := fetchVerified(ctx, obs, cache, sum, 4<<20)
		if err != nil || len(data) != 2<<20 || data[0] != 42 {
			t.Fatalf("fetch: %d bytes, %v", len(data), err)
		}
	}
	ents, err := os.ReadDir(objects)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != sum {
			t.Errorf("left in the cache: %s", e.Name())
		}
	}
}

// A result's failure notes are bounded: each to maxErrorText bytes, and
// the run keeps those of maxNoteWorkers workers (audit 6: a forged 60 KB
// note under a new worker name per chunk ran a run out of memory).
func TestNotesBounded(t *testing.T) {
	c := &Client{}
	big := strings.Repeat("E", 60_000)
	for i := range 3 * maxNoteWorkers {
		c.notes(fmt.Sprintf("evil%d#0", i), big+"\x1b[2J", big, big)
	}
	for _, s := range []string{c.EvaluationFailures(), c.DerivativeFailures(), c.BatchFaults()} {
		if n := strings.Count(s, "on worker "); n != maxNoteWorkers {
			t.Errorf("%d workers' notes kept, want %d", n, maxNoteWorkers)
		}
		if len(s) > maxNoteWorkers*(maxErrorText+100)+200 || strings.Contains(s, "\x1b") {
			t.Errorf("notes of %d bytes, or with an escape sequence", len(s))
		}
		if !strings.HasSuffix(s, fmt.Sprintf("(the notes of workers beyond the first %d are left out)", maxNoteWorkers)) {
			t.Errorf("no word of the workers left out: …%s", s[max(0, len(s)-120):])
		}
	}
	// Only the map that overflowed says so (review).
	c2 := &Client{}
	for i := range maxNoteWorkers + 1 {
		c2.notes(fmt.Sprintf("w%d#0", i), "e", "", "")
	}
	c2.notes("w0#0", "", "d", "")
	if strings.Contains(c2.DerivativeFailures(), "left out") || !strings.Contains(c2.EvaluationFailures(), "left out") {
		t.Errorf("left-out notes: eval %q, deriv %q", c2.EvaluationFailures(), c2.DerivativeFailures())
	}
	// A worker already noted keeps its latest note.
	c.notes("evil0#0", "1 failed", "", "")
	if !strings.Contains(c.EvaluationFailures(), "on worker evil0#0: 1 failed;") {
		t.Error("a known worker's new note was not kept")
	}
}

// A shipped study's surrogate file must be one of the bundle's files, like
// its plugins and datasets: a worker refuses it before opening it (audit 6:
// `file = "/etc/shadow"` was opened and decoded, and the decode error sent
// back to the publisher).
func TestSurrogateFileOutsideBundleRefused(t *testing.T) {
	dir := t.TempDir()
	data := "length_mm,force_N\n1,2\n"
	if err := os.WriteFile(filepath.Join(dir, "d.csv"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(data))
	for _, c := range []struct{ file, want string }{
		{"/etc/passwd", "[model] file /etc/passwd: a remote run needs paths relative"},
		{"other.json", "is not in the run's bundle"},
		{"../../x.json", "is outside the study's files"},
	} {
		text := fmt.Sprintf("name = \"s\"\nseed = 1\n[model]\nuse = \"surrogate\"\nfile = %q\n[[data]]\nname = \"d\"\nfile = \"d.csv\"\n[method]\nuse = \"metropolis\"\n", c.file)
		path := filepath.Join(dir, "study.toml")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		ssum := sha256.Sum256([]byte(text))
		b := &Bundle{Study: "study.toml", Files: []BundleFile{
			{Role: "study", Path: "study.toml", SHA256: hex.EncodeToString(ssum[:])},
			{Role: "dataset", Path: "d.csv", SHA256: hex.EncodeToString(sum[:])},
		}}
		if err := checkRefs(path, b, dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("file = %q: %v, want %q", c.file, err, c.want)
		}
	}
}

// A bundle's file is streamed to its place, verified, and linked into the
// cache (audit 6: files were read whole into memory): the cache's copy
// serves a later bundle after the object is gone from the store; a cache
// copy altered on disk is not used; an object whose content is not its
// name is refused and leaves nothing; the cache's place taken by a folder
// leaves no temporary file.
func TestFetchFileStreamsAndVerifies(t *testing.T) {
	c, cfg := hostileRig(t)
	ctx := context.Background()
	_, obs, _ := cfg.ensure(ctx, c.js)
	sum := putHuge(t, obs)
	cache := t.TempDir()
	want := make([]byte, 2<<20)
	want[0] = 42
	dst := filepath.Join(cache, "bundles", "b1", "d.bin")
	if err := fetchFile(ctx, obs, cache, sum, 2<<20, dst); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(dst); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("fetched %d bytes, %v", len(got), err)
	}
	if err := fetchFile(ctx, obs, cache, sum, 1<<20, filepath.Join(cache, "small")); err == nil || !strings.Contains(err.Error(), "more than the 1048576") {
		t.Errorf("an object above its size: %v", err)
	}
	if err := obs.Delete(ctx, sum); err != nil {
		t.Fatal(err)
	}
	dst2 := filepath.Join(cache, "bundles", "b2", "d.bin")
	if err := fetchFile(ctx, obs, cache, sum, 2<<20, dst2); err != nil {
		t.Fatalf("from the cache: %v", err)
	}
	if got, _ := os.ReadFile(dst2); !bytes.Equal(got, want) {
		t.Error("the cache's copy differs")
	}
	// An altered cache copy (it is a link of the bundle files: alter all).
	if err := os.WriteFile(filepath.Join(cache, "objects", sum), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	dst3 := filepath.Join(cache, "bundles", "b3", "d.bin")
	if err := fetchFile(ctx, obs, cache, sum, 2<<20, dst3); err == nil || !strings.Contains(err.Error(), "not on the server") {
		t.Errorf("an altered cache copy, the object gone: %v", err)
	}
	// An object stored under another content's name.
	lie := strings.Repeat("ab", 32)
	if _, err := obs.PutBytes(ctx, lie, []byte("not that")); err != nil {
		t.Fatal(err)
	}
	dst4 := filepath.Join(cache, "bundles", "b4", "d.bin")
	if err := fetchFile(ctx, obs, cache, lie, 100, dst4); err == nil || !strings.Contains(err.Error(), "content has sha256") {
		t.Errorf("a lying object: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Dir(dst4))
	if len(ents) != 0 {
		t.Errorf("left after a refused object: %v", ents)
	}
}

// A worker whose server is not there says so while it waits, and its
// error on a stop names the server it never reached (audit 6: a wrong
// port gave no word, then "is JetStream enabled on the server?").
func TestWorkerNamesUnreachableServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	var log syncbuf.Buffer
	err := Work(ctx, Config{URL: "nats://127.0.0.1:1"}, WorkerOptions{Slots: 1, CacheDir: t.TempDir(), Runtime: wasm.Options{CacheDir: "-"}, Log: &log})
	if err == nil || !strings.Contains(err.Error(), "NATS server nats://127.0.0.1:1: not reached in") {
		t.Errorf("error %v", err)
	}
	if !strings.Contains(log.String(), "waiting for the NATS server nats://127.0.0.1:1: not reached in 2s (is a server listening there?)") {
		t.Errorf("log %q", log.String())
	}
}

// The worker's log lines are escaped, one line each: a bundle's roles and
// paths reach them through errors (remote 24: ESC sequences, CR LF and
// U+202E reached the operator's terminal).
func TestWorkerLogEscaped(t *testing.T) {
	var log syncbuf.Buffer
	w := &worker{o: WorkerOptions{Log: &log}}
	w.logf("refusing chunk: %v", "\x1b[2J\x1b]0;owned\a\r\nkinfer: all good e\u202ex.csv")
	s := log.String()
	if strings.ContainsAny(s, "\x1b\a\r\u202e") || !strings.Contains(s, "\n    kinfer: all good") {
		t.Errorf("log %q", s)
	}
}

// A missing object is a refusal of the chunk, but one that a worker does
// not remember (remote 24: it refused a later run of the same study).
func TestMissingObjectIsAnUnrememberedRefusal(t *testing.T) {
	var err error = fmt.Errorf("study bundle: %w", missing{refusal{errors.New("object x is not on the server")}})
	var r refusal
	var m missing
	if !errors.As(err, &r) || !errors.As(err, &m) {
		t.Errorf("errors.As: refusal %v, missing %v", errors.As(err, &r), errors.As(err, &m))
	}
}

// Declines of more than 32 worker processes are said once, not one line
// each (remote 24: 318 000 forged notices printed 183 MB).
func TestDeclinesBeyondThirtyTwoSaidOnce(t *testing.T) {
	var log syncbuf.Buffer
	c := &Client{log: &log, declines: map[string]string{}, run: "r"}
	for i := range 1000 {
		c.declined(fmt.Sprintf("p%d#0", i), "too small")
	}
	if n := strings.Count(log.String(), "\n"); n != 33 {
		t.Errorf("%d lines for 1000 declining processes, want 32 and one more", n)
	}
	if d := c.declineText(); !strings.Contains(d, "32 worker processes (and more, not named) declined") {
		t.Errorf("declineText %q", d[:min(len(d), 200)])
	}
}
