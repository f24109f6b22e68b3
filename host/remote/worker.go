package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/run"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
	"github.com/kinfer/kinfer/host/wasm"
	"github.com/kinfer/kinfer/internal/guesttext"
)

// WorkerOptions configure Work.
type WorkerOptions struct {
	// Slots is the number of chunks evaluated at once (≥ 1), each on one
	// goroutine with its own evaluator.
	Slots int
	// CacheDir keeps fetched files (by sha256) and the bundles' file trees;
	// compiled modules go to CacheDir/compiled unless Runtime.CacheDir is
	// set. Default: the user's cache directory, kinfer/worker.
	CacheDir string
	// Runtime configures the worker's WebAssembly runtime (plugin log).
	Runtime wasm.Options
	// Log gets the worker's messages (nil: none).
	Log io.Writer
	// ID names the worker in results and on the run's progress line
	// (default host:pid).
	ID string
	// Ready, if set, is called once the worker is connected and pulling.
	Ready func()
	// MaxStudies bounds the studies kept loaded (default 4); the least
	// recently used is closed before another is loaded. They share the
	// memory budget (run.DefaultMemoryBudget): each study's plugin
	// instances are capped by its MaxStudies-th part.
	MaxStudies int
	// TrustPlugins lets a run's study lift the sandbox's limits for a
	// plugin (trusted = true in its table: no timeout, no fuel budget,
	// more memory). Off, a worker refuses such a study: the study comes
	// from whoever can publish to the server, and lifting limits on this
	// machine is its operator's decision.
	TrustPlugins bool
	// MaxFileBytes bounds each file (dataset, plugin, study) the worker
	// fetches for a run (default DefaultMaxFileBytes): files are read
	// into memory.
	MaxFileBytes int64

	// stall, if > 0, makes the worker hold its stall-th chunk until it
	// stops, after creating the file stalled (tests: a worker killed
	// while it certainly holds a chunk).
	stall   int
	stalled string
	// storeFor, if set, replaces storeFor's default (tests).
	storeFor time.Duration
	// declinePause, if set, replaces declinePause's first pause (tests).
	declinePause time.Duration
}

// worker is a running Work.
type worker struct {
	cfg  Config
	o    WorkerOptions
	nc   *nats.Conn
	js   jetstream.JetStream
	cons jetstream.Consumer
	obs  jetstream.ObjectStore
	rt   *wasm.Runtime

	mu      sync.Mutex
	studies map[string]*loaded
	// gone marks runs whose results could not be stored, with the last
	// answer to whether the run still lives (runGone).
	gone    map[string]goneMark
	skipped map[string]bool // runs whose chunks were handed back unevaluated (logged once)
	// declinedRuns are runs this worker declined (logged once).
	declinedRuns map[string]bool
	acks         sync.WaitGroup // results being stored
	taken        atomic.Int64   // chunks taken past their checks (WorkerOptions.stall)
}

type goneMark struct {
	at   time.Time
	gone bool
}

// runGone reports whether nobody waits for run's results any more: its
// run answers on alivePrefix+run while it lives, and the server says at
// once when no one listens there. Only that answer, while this worker is
// connected, counts as gone; a timeout or any other error counts as
// alive (a run reconnecting after a server restart is not given up). The
// answer is kept for 10 s. A run that is only slow to answer loses
// nothing: its chunks are handed back, not dropped.
func (w *worker) runGone(run string) bool {
	w.mu.Lock()
	g, ok := w.gone[run]
	w.mu.Unlock()
	if ok && time.Since(g.at) < 10*time.Second {
		return g.gone
	}
	_, err := w.nc.Request(alivePrefix+run, nil, 2*time.Second)
	gone := errors.Is(err, nats.ErrNoResponders) && w.nc.IsConnected()
	w.mu.Lock()
	if len(w.gone) > 1000 {
		clear(w.gone)
		clear(w.skipped)
	}
	w.gone[run] = goneMark{time.Now(), gone}
	w.mu.Unlock()
	return gone
}

// suspect reports whether a result of run could not be stored lately
// (then its chunks are checked with runGone before they are evaluated).
func (w *worker) suspect(run string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.gone[run]
	return ok
}

// loaded is a study loaded from a bundle, with evaluators for the slots.
type loaded struct {
	ready   chan struct{}
	err     error
	s       *study.Study
	targets chan *target.Target
	used    time.Time
	failed  time.Time // when the load ended (with l.err)
	busy    int
}

// refusal is an error about the chunk itself (its body, its bundle) that
// makes the worker refuse it for good: the run is told and stops. Other
// errors of a chunk's preparation are transient and the chunk is handed
// back for another try.
type refusal struct{ error }

// missing is the refusal of a chunk whose bundle, or a file of it, is not
// on the server: refused like any refusal, but not remembered, since the
// run that owns the digest may upload it again (remote 24: a leftover
// chunk's missing bundle made a worker refuse a later run of the same
// study until it restarted).
type missing struct{ refusal }

// Unwrap makes a missing object a refusal to errors.As.
func (m missing) Unwrap() error { return m.refusal }

// declined is an error that depends on this worker, not on the chunk: its
// version, its limits (--max-file-bytes), its consent (--trust-plugins),
// its cache. The worker gives the chunk back for another worker and tells
// the run who declined and why; the run stops only if the chunk reaches
// MaxDeliver (no worker takes it).
type declined struct{ error }

// Work pulls chunks from the server and evaluates them until ctx is done.
// A chunk is acknowledged only once its result is stored on the server,
// so a worker killed mid-chunk loses nothing: the server hands the chunk
// to another worker after Config.AckWait.
func Work(ctx context.Context, cfg Config, o WorkerOptions) error {
	cfg = cfg.withDefaults()
	if o.Slots < 1 {
		o.Slots = 1
	}
	if o.MaxStudies < 1 {
		o.MaxStudies = 4
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.ID == "" {
		host, _ := os.Hostname()
		o.ID = host + ":" + strconv.Itoa(os.Getpid())
	}
	if o.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			// No HOME (a system service): not the shared temp folder,
			// where another user could plant compiled code.
			return fmt.Errorf("worker: no user cache directory (%v): give --cache a folder of your own", err)
		}
		o.CacheDir = filepath.Join(dir, "kinfer", "worker")
	}
	// The cache's paths are compared with the absolute paths of the
	// study's inputs (checkPinned): a relative --cache made every run's
	// files look unpinned. The working directory does not change, but
	// absolute paths also make the messages and logs unambiguous.
	abs, err := filepath.Abs(o.CacheDir)
	if err != nil {
		return fmt.Errorf("worker cache %s: %w", o.CacheDir, err)
	}
	o.CacheDir = abs
	if o.Runtime.CacheDir == "" {
		o.Runtime.CacheDir = filepath.Join(o.CacheDir, "compiled")
	} else if o.Runtime.CacheDir != "-" {
		if o.Runtime.CacheDir, err = filepath.Abs(o.Runtime.CacheDir); err != nil {
			return fmt.Errorf("compilation cache %s: %w", o.Runtime.CacheDir, err)
		}
	}
	if cfg.Name == "" {
		cfg.Name = "kinfer worker " + o.ID
	}
	if err := os.MkdirAll(o.CacheDir, 0o700); err != nil {
		return err
	}
	for _, d := range []string{o.CacheDir, o.Runtime.CacheDir} {
		if d == "-" {
			continue
		}
		if err := checkPrivate(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	w := &worker{cfg: cfg, o: o, studies: map[string]*loaded{}, gone: map[string]goneMark{}, skipped: map[string]bool{}, declinedRuns: map[string]bool{}}
	if w.nc, w.js, err = cfg.connect(true); err != nil {
		return err
	}
	defer w.nc.Close()
	// The server may not be up yet (the worker retries for ever), or the
	// URL is wrong: say so while waiting, and name it on a stop (audit 6:
	// a wrong port gave no word, then "is JetStream enabled?").
	for start, next := time.Now(), 2*time.Second; !w.nc.IsConnected(); {
		if time.Since(start) >= next {
			w.logf("waiting for the NATS server %s: not reached in %.0fs (is a server listening there?); retrying", cfg.PublicURL(), time.Since(start).Seconds())
			next += 10 * time.Second
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("NATS server %s: not reached in %.0fs: %w", cfg.PublicURL(), time.Since(start).Seconds(), context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
	for {
		ectx, cancel := context.WithTimeout(ctx, ensureTimeout)
		w.cons, w.obs, err = cfg.ensure(ectx, w.js)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return err
		}
		w.logf("%v (retrying)", err)
		time.Sleep(time.Second)
	}
	if w.rt, err = wasm.NewRuntime(ctx, o.Runtime); err != nil {
		return err
	}
	defer func() {
		w.mu.Lock()
		for _, l := range w.studies {
			<-l.ready
			if l.s != nil {
				l.s.Close()
			}
		}
		w.mu.Unlock()
		w.rt.Close(context.Background())
	}()
	// The id and the cache folder are the operator's flags, often
	// templated from a host name: escaped as the run side shows the id
	// (audit 16: an ESC sequence and a newline went to the terminal).
	w.logf("worker %s: %d slots on %s, cache %s", o.ID, o.Slots, cfg.PublicURL(), o.CacheDir)
	if o.Ready != nil {
		o.Ready()
	}
	var wg sync.WaitGroup
	for slot := 0; slot < o.Slots; slot++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.pull(ctx, fmt.Sprintf("%s#%d", o.ID, slot))
		}()
	}
	wg.Wait()
	w.acks.Wait()
	return nil
}

func (w *worker) logf(format string, args ...any) {
	if w.o.Log != nil {
		// Escaped line by line, continuation lines indented: a bundle's
		// file roles and paths and a run's errors are the sender's text
		// (remote 24: ESC sequences, CR and U+202E reached the operator's
		// terminal); a panic's stack keeps its lines (review 25).
		lines := strings.Split(strings.TrimRight(fmt.Sprintf(format, args...), "\n"), "\n")
		for i, l := range lines {
			lines[i] = guesttext.Escape(l)
		}
		fmt.Fprintf(w.o.Log, "kinfer: %s\n", strings.Join(lines, "\n    "))
	}
}

// pull is one slot's loop: take a chunk, evaluate it, store its result,
// acknowledge it.
func (w *worker) pull(ctx context.Context, id string) {
	declines := 0
	for ctx.Err() == nil {
		msg, err := w.cons.Next(jetstream.FetchMaxWait(time.Second))
		if err != nil {
			if errors.Is(err, jetstream.ErrNoMessages) || errors.Is(err, nats.ErrTimeout) {
				continue
			}
			if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
				ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
				if cons, _, err := w.cfg.ensure(ectx, w.js); err == nil {
					w.mu.Lock()
					w.cons = cons
					w.mu.Unlock()
				}
				cancel()
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		if w.handle(ctx, id, msg) {
			// This slot declined a chunk: it waits before it takes
			// another, longer after each decline in a row, so that the
			// chunk goes to a worker that can take it rather than
			// back to this one (each delivery counts towards MaxDeliver).
			declines++
			select {
			case <-ctx.Done():
			case <-time.After(w.declinePause(declines)):
			}
		} else {
			declines = 0
		}
	}
}

// declinePause is how long a slot waits after its n-th decline in a row:
// 500 ms, doubling, at most 16 s and AckWait.
func (w *worker) declinePause(n int) time.Duration {
	base := 500 * time.Millisecond
	if w.o.declinePause > 0 {
		base = w.o.declinePause
	}
	return min(base<<min(n-1, 5), max(base, w.cfg.AckWait))
}

// handle evaluates one chunk; it reports whether it declined it.
func (w *worker) handle(ctx context.Context, id string, msg jetstream.Msg) (declinedChunk bool) {
	h := msg.Headers()
	run, batch, chunk := h.Get(hdrRun), h.Get(hdrBatch), h.Get(hdrChunk)
	b, errB := strconv.Atoi(batch)
	k, errK := strconv.Atoi(chunk)
	// Whoever can publish to the work stream can publish anything: the
	// run id names the subject the result goes to, so it must be the
	// chunk's own subject's (one token, no wildcard), else a chunk could
	// answer into another run's results or make every publication of its
	// result fail (and the slot retry it for ever).
	if !validRunID(run) || msg.Subject() != workPrefix+run || errB != nil || errK != nil || b < 1 || k < 0 {
		w.logf("%s: dropping a message on %s that is not a kinfer chunk (run %q, batch %q, chunk %q)", id, msg.Subject(), run, batch, chunk)
		msg.Term()
		return
	}
	delivered := uint64(1)
	if md, err := msg.Metadata(); err == nil {
		delivered = md.NumDelivered
	}

	result := func(body []byte, errText string, refused bool) *nats.Msg {
		m := nats.NewMsg(resultPrefix + run)
		m.Header.Set(jetstream.MsgIDHeader, msgID(run, b, k)+".r")
		m.Header.Set(hdrBatch, batch)
		m.Header.Set(hdrChunk, chunk)
		m.Header.Set(hdrWorker, id)
		m.Header.Set(hdrDelivered, strconv.FormatUint(delivered, 10))
		if errText != "" {
			// A long reason (a list of files) must not make the result
			// too large for the server (payloadHeadroom).
			if len(errText) > maxErrorText {
				errText = strings.ToValidUTF8(errText[:maxErrorText], "") + "…"
			}
			m.Header.Set(hdrError, errText)
		}
		if refused {
			m.Header.Set(hdrRefused, "1")
		}
		m.Data = body
		return m
	}
	// store publishes a result until the server has stored it.
	// It gives up after storeFor (a server that refuses it: no permission
	// on kinfer.result.>, a full stream) and hands the chunk back, so that
	// it reaches MaxDeliver and the run is told instead of waiting for
	// ever on a slot that keeps its chunk alive. It gives up at once when
	// the run is gone (killed: nobody waits for the result), and the
	// worker then hands that run's chunks back without evaluating them.
	store := func(m *nats.Msg) bool {
		sctx, scancel := context.WithTimeout(ctx, w.storeFor())
		defer scancel()
		var noted time.Time
		for sctx.Err() == nil {
			pctx, cancel := context.WithTimeout(sctx, 5*time.Second)
			_, err := w.js.PublishMsg(pctx, m)
			cancel()
			if err == nil {
				return true
			}
			w.mu.Lock()
			if _, ok := w.gone[run]; !ok {
				w.gone[run] = goneMark{} // suspect: ask below
			}
			w.mu.Unlock()
			if w.runGone(run) {
				w.logf("%s: could not store the result of chunk %s.%s.%s (%v), and its run is gone (nothing answers on %s%s): handing the chunk back, not evaluating that run's chunks any more",
					id, run, batch, chunk, err, alivePrefix, run)
				msg.NakWithDelay(w.cfg.AckWait)
				return false
			}
			if time.Since(noted) >= 10*time.Second {
				w.logf("%s: storing the result of chunk %s.%s.%s: %v (retrying for up to %v)", id, run, batch, chunk, err, w.storeFor())
				noted = time.Now()
			}
			select {
			case <-sctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
		if ctx.Err() == nil {
			w.logf("%s: could not store the result of chunk %s.%s.%s for %v: handing it back", id, run, batch, chunk, w.storeFor())
			msg.Nak()
		}
		return false
	}
	reply := func(body []byte, errText string, refused bool) bool {
		return store(result(body, errText, refused))
	}
	refuse := func(err error) {
		w.logf("%s: refusing chunk %s of batch %s of run %s: %v", id, chunk, batch, run, err)
		if reply(nil, err.Error(), true) {
			msg.Term()
		}
	}
	// decline gives the chunk back for another worker, and tells the run
	// who declined it and why: a notice on its result subject, without a
	// message id (it neither answers the chunk nor deduplicates its
	// result). Once the notice is stored, the chunk is taken off the
	// queue and the run publishes it again, so that a decline does not
	// count towards the chunk's MaxDeliver (a declining worker idle while
	// the able ones are busy would otherwise use them up); if the notice
	// cannot be stored, the chunk is handed back as it is.
	decline := func(err error) {
		w.mu.Lock()
		first := !w.declinedRuns[run]
		if len(w.declinedRuns) > 1000 {
			clear(w.declinedRuns)
		}
		w.declinedRuns[run] = true
		w.mu.Unlock()
		if first {
			w.logf("%s: declining the chunks of run %s (they go back to the queue for other workers): %v", id, run, err)
		}
		n := result(nil, err.Error(), false)
		n.Header.Del(jetstream.MsgIDHeader)
		n.Header.Set(hdrDeclined, "1")
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, perr := w.js.PublishMsg(pctx, n)
		cancel()
		if perr == nil {
			msg.Term()
		} else {
			msg.NakWithDelay(2 * w.declinePause(1))
		}
		declinedChunk = true
	}
	// Say the chunk is alive while the study loads and the chunk is
	// evaluated.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(max(w.cfg.AckWait/3, time.Millisecond)) // --ack-wait 2ns: no panic
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				msg.InProgress()
			}
		}
	}()
	if w.suspect(run) && w.runGone(run) {
		// A run killed outright leaves its chunks behind; their results
		// could not be stored, and nobody waits for them.
		w.mu.Lock()
		first := !w.skipped[run]
		w.skipped[run] = true
		w.mu.Unlock()
		if first {
			w.logf("%s: handing back the chunks of run %s without evaluating them: the run is gone", id, run)
		}
		msg.NakWithDelay(w.cfg.AckWait)
		return
	}
	if v, err := strconv.Atoi(h.Get(hdrABI)); err != nil || v != abi.Version {
		decline(fmt.Errorf("the run speaks kinfer ABI %q, this worker ABI %d", h.Get(hdrABI), abi.Version))
		return
	}
	l, err := w.study(ctx, h.Get(hdrBundle))
	if err != nil {
		var r refusal
		var d declined
		if errors.As(err, &d) {
			decline(err)
			return
		}
		if errors.As(err, &r) {
			refuse(err)
			return
		}
		w.logf("%s: chunk %s.%s.%s: %v (handed back)", id, run, batch, chunk, err)
		msg.NakWithDelay(time.Second)
		return
	}
	defer w.release(l)
	want, pts, err := decodePoints(msg.Data())
	if err == nil {
		err = fitChunk(l.s, len(pts[0]), len(pts), want, w.nc.MaxPayload())
	}
	if err != nil {
		refuse(err)
		return
	}
	if w.o.stall > 0 && int(w.taken.Add(1)) == w.o.stall {
		os.WriteFile(w.o.stalled, nil, 0o600)
		<-ctx.Done()
		msg.Nak()
		return
	}
	t := <-l.targets
	// The chunk's calls: those of the local run (hdrCall), bounded as any
	// header from the stream must be; a missing or bad one leaves the
	// worker's own.
	call, cerr := strconv.Atoi(msg.Headers().Get(hdrCall))
	if cerr != nil || call < 1 || call > target.ChunkSize {
		call = 0
	}
	res, jev, secs, err := evaluate(ctx, t, pts, want, call)
	// The plugin's failure tallies so far (its kinfer_last_error among
	// them) go with the result, as a local run reports them (audit 4).
	evalNote, derivNote, batchNote := t.EvaluationFailures(), t.DerivativeFailures(), t.BatchFaults()
	l.targets <- t
	if ctx.Err() != nil {
		msg.Nak() // stopping: another worker takes it at once
		return
	}
	if err != nil {
		// A plugin fault: the run stops with it, as a local run would.
		w.logf("%s: chunk %s.%s.%s: %v", id, run, batch, chunk, err)
		// The run's user knows the bundle's files by their own paths,
		// not by this worker's copies of them.
		text := strings.ReplaceAll(err.Error(), filepath.Join(w.o.CacheDir, "bundles", h.Get(hdrBundle))+string(filepath.Separator), "")
		m := result(nil, text, false)
		setNotes(m, evalNote, derivNote, batchNote)
		var det interface{ Deterministic() bool }
		if errors.As(err, &det) && det.Deterministic() {
			// A trap or an exhausted fuel budget would happen again on a
			// resume: the run says so (ABI.md §5).
			m.Header.Set(hdrDeterministic, "1")
		}
		if store(m) {
			msg.Ack()
		}
		return
	}
	// The slot takes its next chunk while the server stores this result;
	// the chunk is acknowledged once it has.
	m := result(encodeResults(res, jev, secs, want), "", false)
	setNotes(m, evalNote, derivNote, batchNote)
	fut, err := w.js.PublishMsgAsync(m)
	if err != nil {
		if store(m) {
			msg.Ack()
		}
		return
	}
	w.acks.Add(1)
	go func() {
		defer w.acks.Done()
		select {
		case <-fut.Ok():
			msg.Ack()
			return
		case <-fut.Err():
		case <-time.After(5 * time.Second):
		}
		if store(m) {
			msg.Ack()
		}
	}()
	return false
}

// evaluate evaluates a chunk with t, as a local run's target would, and
// returns the tallies the results do not show.
func evaluate(ctx context.Context, t *target.Target, pts [][]float64, want abi.Want, call int) (res []abi.Result, jev int, secs float64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in evaluation: %v\n%s", p, debug.Stack())
		}
	}()
	before := t.Counts()
	if call > 0 {
		res, err = t.EvaluateInCalls(ctx, pts, want, call)
	} else {
		res, err = t.Evaluate(ctx, pts, want)
	}
	after := t.Counts()
	return res, after.JacobianEvals - before.JacobianEvals, after.ModelSeconds - before.ModelSeconds, err
}

// study returns the loaded study of bundle sum, loading it once.
func (w *worker) study(ctx context.Context, sum string) (*loaded, error) {
	w.mu.Lock()
	l, ok := w.studies[sum]
	if ok {
		l.busy++
		w.mu.Unlock()
		<-l.ready
		if l.err != nil {
			w.release(l)
			w.mu.Lock()
			if w.studies[sum] == l {
				var r refusal
				var d declined
				// A transient error is tried again next time; a decline
				// after a minute (the worker's cache may be fixed by then).
				var m missing
				if errors.As(l.err, &m) || !errors.As(l.err, &r) && (!errors.As(l.err, &d) || time.Since(l.failed) > time.Minute) {
					delete(w.studies, sum)
				}
			}
			w.mu.Unlock()
			return nil, l.err
		}
		return l, nil
	}
	l = &loaded{ready: make(chan struct{}), busy: 1}
	w.studies[sum] = l
	w.evict()
	w.mu.Unlock()
	l.s, l.err = w.load(ctx, sum)
	l.failed = time.Now()
	if l.err == nil {
		l.targets = make(chan *target.Target, w.o.Slots)
		for range w.o.Slots {
			l.targets <- target.New(l.s, 1)
		}
	}
	close(l.ready)
	if l.err != nil {
		w.release(l)
		return w.study(ctx, sum) // the error path above
	}
	return l, nil
}

func (w *worker) release(l *loaded) {
	w.mu.Lock()
	l.busy--
	l.used = time.Now()
	// A study loaded while every other was busy is one too many until
	// one of them is idle: close it now (review: it lasted until another
	// bundle came).
	w.evict()
	w.mu.Unlock()
}

// evict closes the least recently used idle studies beyond MaxStudies
// (w.mu held).
func (w *worker) evict() {
	for len(w.studies) > w.o.MaxStudies {
		var old string
		for k, l := range w.studies {
			if l.busy == 0 && (old == "" || l.used.Before(w.studies[old].used)) {
				old = k
			}
		}
		if old == "" {
			return
		}
		l := w.studies[old]
		delete(w.studies, old)
		// Idle (busy 0) means loaded and ready: close it now, before the
		// next study loads, so that at most MaxStudies hold instances
		// (audit 6: closed in the background, a fifth study's instances
		// came on top of four).
		<-l.ready
		if l.s != nil {
			l.s.Close()
		}
	}
}

// load fetches, verifies and loads the study of bundle sum.
func (w *worker) load(ctx context.Context, sum string) (*study.Study, error) {
	fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	b, path, err := materialize(fctx, w.obs, w.o.CacheDir, sum, w.o.MaxFileBytes)
	if err != nil {
		return nil, err
	}
	// The run checked its own study with checkRefs and loaded it before
	// it sent a chunk: a study that fails here on a worker fails because
	// of the worker (its copy of the files, its cache, its limits and
	// consent), so the worker declines it and another may take it.
	dir := filepath.Join(w.o.CacheDir, "bundles", sum)
	if err := checkRefs(path, b, dir); err != nil {
		return nil, declined{err}
	}
	if !w.o.TrustPlugins {
		if err := checkUntrusted(path); err != nil {
			return nil, declined{err}
		}
	}
	// The loaded studies share the budget: a plugin's instances are capped
	// by half of each one's part (audit 6: capped per study, five bundles
	// of a 240 MiB model ran a worker out of memory).
	s, err := study.Load(ctx, path, study.Options{Workers: w.o.Slots, Runtime: w.rt, Interrupt: ctx, Previous: b.Previous,
		MemoryBudget: run.DefaultMemoryBudget() / int64(w.o.MaxStudies)})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, declined{fmt.Errorf("loading the run's study: %w", err)}
	}
	if err := checkPinned(s, b, dir); err != nil {
		s.Close()
		return nil, declined{err}
	}
	w.logf("loaded study %s (bundle %s)", s.Name, sum[:12])
	return s, nil
}

// validRunID reports whether run can be a run id: one subject token of
// at most 64 characters, without wildcards or white space.
func validRunID(run string) bool {
	if run == "" || len(run) > 64 {
		return false
	}
	for _, r := range run {
		if r <= ' ' || r == '.' || r == '*' || r == '>' || r > '~' {
			return false
		}
	}
	return true
}

// fitChunk checks a decoded chunk of n points of d values against the
// study it names: d must be the study's dimension (a local run's
// points always are), and its results must fit in one message of the
// server's max payload, else the worker would evaluate it and then fail
// to store the result for ever.
// outputCount is the length of a result's Outputs for study s (all the
// model's outputs at every dataset row, abi.WantOutputs).
func outputCount(s *study.Study) int {
	rows := 0
	for _, ds := range s.Data {
		rows += ds.K
	}
	return rows * len(s.ModelInfo.Spec.Outputs)
}

func fitChunk(s *study.Study, d, n int, want abi.Want, maxPayload int64) error {
	if d != len(s.XParams) {
		return fmt.Errorf("chunk: points of %d values, the study has %d parameters", d, len(s.XParams))
	}
	R, _ := s.ResidualCount()
	if size := 20 + int64(n)*resultBytes(d, R, outputCount(s), want); size > payloadLimit(maxPayload) {
		return fmt.Errorf("chunk: the results of %d points would take %d bytes, more than %s", n, size, payloadText(maxPayload))
	}
	return nil
}

// checkUntrusted refuses a study that marks a plugin trusted (allowed to
// lift the sandbox's limits): a worker not started with --trust-plugins
// evaluates under the limits a local run has without trusted = true.
func checkUntrusted(studyPath string) error {
	f, _, err := study.Decode(studyPath)
	if err != nil {
		return err
	}
	var errs []error
	check := func(table string, m map[string]any) {
		if v, ok := m["trusted"].(bool); ok && v {
			errs = append(errs, fmt.Errorf("%s: the run's study trusts plugin %v to lift the sandbox's limits; this worker runs plugins under them only (start it with --trust-plugins to allow this)", table, m["plugin"]))
		}
	}
	check("[model]", f.Model)
	for i, l := range f.Likelihood {
		check(fmt.Sprintf("[[likelihood]] %d", i+1), l)
	}
	check("[method]", f.Method)
	return errors.Join(errs...)
}

// storeFor is how long a worker tries to store a result before it hands
// the chunk back: 4 AckWait, at least 10 s (a server restart).
func (w *worker) storeFor() time.Duration {
	if w.o.storeFor > 0 {
		return w.o.storeFor
	}
	return max(4*w.cfg.AckWait, 10*time.Second)
}

// setNotes puts a worker's failure tallies on a result (bounded like an
// error's text).
func setNotes(m *nats.Msg, eval, deriv, batch string) {
	for _, h := range []struct{ key, v string }{{hdrEvalFailures, eval}, {hdrDerivFailures, deriv}, {hdrBatchFaults, batch}} {
		if h.v == "" {
			continue
		}
		if len(h.v) > maxErrorText {
			h.v = strings.ToValidUTF8(h.v[:maxErrorText], "") + "…"
		}
		m.Header.Set(h.key, h.v)
	}
}
