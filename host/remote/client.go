package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/study"
	"github.com/kinfer/kinfer/host/target"
	"github.com/kinfer/kinfer/internal/guesttext"
)

// Client is a run's remote evaluator (target.Remote): it cuts each batch
// into chunks, publishes them to the work queue, and puts the workers'
// results back in chunk order. Duplicate results (a chunk redelivered
// after its first worker went silent, then both answered) are ignored: a
// chunk's result is the same whoever computes it.
type Client struct {
	cfg    Config
	nc     *nats.Conn
	js     jetstream.JetStream
	work   jetstream.Stream
	rstr   jetstream.Stream
	cc     jetstream.ConsumeContext
	adv    *nats.Subscription
	alive  *nats.Subscription // answers alivePrefix+run
	run    string
	bundle string
	d, R   int
	O      int // a result's outputs (abi.WantOutputs)
	log    io.Writer
	// callPoints is target.CallPoints of the study: the points of a
	// local call, which chunks are made of (Evaluate).
	callPoints func(n int) int

	results  chan jetstream.Msg
	maxed    chan uint64 // stream sequences of chunks that reached MaxDeliver
	batch    int
	maxBytes int64

	pending  atomic.Int64 // chunks of the current batch without a result
	onResult func()       // OnProgress

	mu   sync.Mutex
	seen map[string]time.Time // worker slot → last result
	// declines are the worker processes that gave this run's chunks back
	// (their version, limits, consent or cache), with the reason.
	declines     map[string]string
	declineOrder []string
	declinesMore bool       // a 33rd process declined: said once
	recent       []evalMark // evaluations returned, for the throughput
	stats        Stats
	// evalNotes, derivNotes, batchNotes: each worker's latest failure
	// tallies and batch faults (of at most maxNoteWorkers workers;
	// evalLeftOut, derivLeftOut, batchLeftOut say others had some).
	evalNotes, derivNotes, batchNotes       map[string]string
	evalLeftOut, derivLeftOut, batchLeftOut bool
	started                                 time.Time
}

type evalMark struct {
	at time.Time
	n  int
}

// Stats are a remote run's delivery figures.
type Stats struct {
	Chunks      int `json:"chunks"`      // chunks published
	Points      int `json:"points"`      // points in them
	Results     int `json:"results"`     // points whose results came back
	Duplicates  int `json:"duplicates"`  // results ignored as duplicates
	Redelivered int `json:"redelivered"` // chunks whose result came from a later delivery
	Workers     int `json:"workers"`     // worker slots that returned results
	Processes   int `json:"processes"`   // worker processes among them
}

// Dial connects a run of the loaded study s (loaded with the previous
// stage's values previous, if any) to the server: it ships the study's
// files to the object store and starts listening for results. log, if
// set, gets the run's remote messages (waiting for workers).
func Dial(ctx context.Context, cfg Config, s *study.Study, previous map[string]float64, log io.Writer) (*Client, error) {
	cfg = cfg.withDefaults()
	if cfg.Name == "" {
		cfg.Name = "kinfer run " + s.Name
	}
	b, local, err := NewBundle(s, previous)
	if err != nil {
		return nil, fmt.Errorf("remote run: %w", err)
	}
	nc, js, err := cfg.connect(false)
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, nc: nc, js: js, run: newRunID(), log: log, d: len(s.XParams),
		results: make(chan jetstream.Msg, 1024), maxed: make(chan uint64, 64), seen: map[string]time.Time{}, declines: map[string]string{}, started: time.Now()}
	c.R, _ = s.ResidualCount()
	c.O = outputCount(s)
	c.callPoints = func(n int) int { return target.CallPoints(s, n) }
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	// Creating the streams writes to the server's disk: 30 s, not
	// JetStream's default 5 s, which a loaded server (a CI machine running
	// every test at once) once exceeded.
	ectx, ecancel := context.WithTimeout(ctx, ensureTimeout)
	_, obs, err := cfg.ensure(ectx, js)
	ecancel()
	if err != nil {
		return nil, err
	}
	if c.work, err = js.Stream(ctx, WorkStream); err != nil {
		return nil, err
	}
	if c.rstr, err = js.Stream(ctx, ResultStream); err != nil {
		return nil, err
	}
	c.maxBytes = nc.MaxPayload()
	if c.maxBytes < minPayload {
		return nil, fmt.Errorf("NATS server %s: its max_payload of %d bytes is too small for a remote run (at least %d: %d for a message's headers and 1 KiB of data); raise max_payload in the server's configuration",
			cfg.PublicURL(), c.maxBytes, minPayload, payloadHeadroom)
	}
	if c.bundle, err = b.upload(ctx, obs, local, c.maxBytes); err != nil {
		return nil, err
	}
	cons, err := js.OrderedConsumer(ctx, ResultStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{resultPrefix + c.run}})
	if err != nil {
		return nil, fmt.Errorf("results consumer: %w", err)
	}
	if c.cc, err = cons.Consume(func(m jetstream.Msg) { c.results <- m }); err != nil {
		return nil, fmt.Errorf("results consumer: %w", err)
	}
	c.adv, err = nc.Subscribe("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES."+WorkStream+"."+WorkerConsumer, func(m *nats.Msg) {
		var a struct {
			StreamSeq uint64 `json:"stream_seq"`
		}
		if json.Unmarshal(m.Data, &a) == nil {
			select {
			case c.maxed <- a.StreamSeq:
			default:
			}
		}
	})
	if err != nil {
		return nil, err
	}
	if c.alive, err = nc.Subscribe(alivePrefix+c.run, func(m *nats.Msg) { m.Respond(nil) }); err != nil {
		return nil, err
	}
	ok = true
	return c, nil
}

// OnProgress sets f to be called after each chunk's result, from the
// goroutine that called Evaluate (the run's progress line refreshes
// during a long batch).
func (c *Client) OnProgress(f func()) { c.onResult = f }

// RunID is the run's id in subjects (kinfer.work.<id>).
func (c *Client) RunID() string { return c.run }

// Close withdraws the run's chunks not yet taken and its results from the
// server and disconnects.
func (c *Client) Close() error {
	if c.cc != nil {
		c.cc.Stop()
	}
	if c.adv != nil {
		c.adv.Unsubscribe()
	}
	if c.alive != nil {
		c.alive.Unsubscribe()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var err error
	if c.work != nil {
		err = c.work.Purge(ctx, jetstream.WithPurgeSubject(workPrefix+c.run))
	}
	if c.rstr != nil {
		err = errors.Join(err, c.rstr.Purge(ctx, jetstream.WithPurgeSubject(resultPrefix+c.run)))
	}
	c.nc.Close()
	return err
}

// Stats returns the run's delivery figures so far.
func (c *Client) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stats
	st.Workers = len(c.seen)
	procs := map[string]bool{}
	for w := range c.seen {
		procs[strings.SplitN(w, "#", 2)[0]] = true
	}
	st.Processes = len(procs)
	return st
}

// RunSummary is summary.json's "remote" object.
type RunSummary struct {
	Server string `json:"server"` // the URL without credentials
	RunID  string `json:"run_id"`
	Stats
}

// Summary implements run.Options.Remote's summary (summary.json "remote").
func (c *Client) Summary() any {
	return RunSummary{Server: c.cfg.PublicURL(), RunID: c.run, Stats: c.Stats()}
}

// Status is the progress line's remote part: the workers that returned a
// result in the last 30 s and their throughput over that time.
func (c *Client) Status() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	active := 0
	procs := map[string]bool{}
	for w, t := range c.seen {
		if now.Sub(t) < 30*time.Second {
			active++
			procs[strings.SplitN(w, "#", 2)[0]] = true
		}
	}
	n, first := 0, now
	for _, m := range c.recent {
		if now.Sub(m.at) < 30*time.Second {
			n += m.n
			if m.at.Before(first) {
				first = m.at
			}
		}
	}
	rate := 0.0
	if el := now.Sub(first).Seconds(); el > 0 {
		rate = float64(n) / el
	}
	return fmt.Sprintf("| %d remote workers in %d processes, %.0f eval/s", active, len(procs), rate)
}

func (c *Client) note(worker string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	c.seen[worker] = now
	c.stats.Results += n
	c.recent = append(c.recent, evalMark{now, n})
	if len(c.recent) > 4096 {
		c.recent = append(c.recent[:0], c.recent[2048:]...)
	}
}

// declined records that worker (a slot) declined a chunk of the run for
// reason, and says so on the run's log the first time a process does.
func (c *Client) declined(worker, reason string) {
	proc := strings.SplitN(worker, "#", 2)[0]
	c.mu.Lock()
	old, known := c.declines[proc]
	full := !known && len(c.declines) >= 32
	if !known && !full {
		c.declineOrder = append(c.declineOrder, proc)
	}
	if !full {
		c.declines[proc] = reason // the latest reason
	}
	// Beyond 32 processes, one line says so, once (remote 24: 318 000
	// forged notices under new names printed 183 MB).
	say := !full && (!known || old != reason)
	more := full && !c.declinesMore
	if more {
		c.declinesMore = true
	}
	c.mu.Unlock()
	if c.log == nil {
		return
	}
	if say {
		fmt.Fprintf(c.log, "kinfer: remote run %s: worker %s declines this run's chunks, which go back to the queue for other workers: %s\n", c.run, printable(proc, 200), printable(reason, 2000))
	}
	if more {
		fmt.Fprintf(c.log, "kinfer: remote run %s: more than 32 worker processes decline this run's chunks; the others are not named\n", c.run)
	}
}

// declineText lists the workers that declined the run's chunks and why,
// for the MaxDeliver message ("" if none).
func (c *Client) declineText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.declineOrder) == 0 {
		return ""
	}
	var b strings.Builder
	more := ""
	if c.declinesMore {
		more = " (and more, not named)"
	}
	fmt.Fprintf(&b, "; %d worker processes%s declined this run's chunks (each worker's own limits, not the chunk's fault):", len(c.declineOrder), more)
	for _, w := range c.declineOrder {
		fmt.Fprintf(&b, "\n  %s: %s", w, printable(c.declines[w], 1000))
	}
	return b.String()
}

// decliners names the worker processes that declined the run's chunks.
func (c *Client) decliners() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.declineOrder...)
}

// publish publishes one chunk until the server has stored it (retrying
// across a server restart; the message id makes a repeat harmless) and
// returns its stream sequence. A server that keeps refusing it (JetStream
// storage full, no permission to publish on kinfer.work.>, JetStream
// off) is named on the run's log every 10 s, and after publishFor of
// refusals while connected the run stops with the server's error instead
// of waiting without a word for ever.
func (c *Client) publish(ctx context.Context, m *nats.Msg, what string) (uint64, error) {
	limit := c.cfg.publishWait()
	every := min(10*time.Second, limit/2)
	var failing time.Duration // time spent failing while connected
	start, nextNote := time.Now(), time.Now().Add(every)
	for {
		t0 := time.Now()
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ack, err := c.js.PublishMsg(pctx, m)
		cancel()
		if err == nil {
			return ack.Sequence, nil
		}
		if ctx.Err() != nil {
			return 0, context.Cause(ctx)
		}
		select {
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		case <-time.After(200 * time.Millisecond):
		}
		if c.nc.IsConnected() {
			failing += time.Since(t0)
		}
		why := c.explain(err)
		if failing >= limit {
			return 0, fmt.Errorf("remote run: the server %s did not store %s for %s: %v", c.cfg.PublicURL(), what, time.Since(start).Round(time.Second), why)
		}
		if c.log != nil && time.Now().After(nextNote) {
			fmt.Fprintf(c.log, "kinfer: remote run %s: the server has not stored %s for %.0fs: %v (retrying; the run stops after %v of refusals)\n",
				c.run, what, time.Since(start).Seconds(), why, limit)
			nextNote = time.Now().Add(every)
		}
	}
}

// errInsufficientResources is JetStream's error code of a full store
// (nats-server's JSInsufficientResourcesErr, HTTP-like code 503).
const errInsufficientResources jetstream.ErrorCode = 10023

// explain is err, a failed publication of a chunk, with what the user can
// do about it.
func (c *Client) explain(err error) error {
	var api *jetstream.APIError
	switch {
	case errors.As(err, &api) && api.ErrorCode == errInsufficientResources:
		return fmt.Errorf("%w (the server's JetStream storage is full: raise max_file_store or the account's limits, free its disk, or purge old streams)", err)
	case errors.As(err, &api):
		return err
	case errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders):
		return fmt.Errorf("%w (no JetStream stream takes subject %s%s: is JetStream enabled on the server, nats-server -js, and the stream %s there?)", err, workPrefix, c.run, WorkStream)
	}
	if last := c.nc.LastError(); last != nil && errors.Is(last, nats.ErrPermissionViolation) {
		return fmt.Errorf("%w; the server said: %v (the run needs permission to publish on %s>)", err, last, workPrefix)
	}
	return err
}

// Evaluate implements target.Remote.
func (c *Client) Evaluate(ctx context.Context, points [][]float64, want abi.Want) ([]abi.Result, target.RemoteTally, error) {
	var tally target.RemoteTally
	n := len(points)
	if n == 0 {
		return nil, tally, nil
	}
	c.batch++
	batch := c.batch
	per := resultBytes(c.d, c.R, c.O, want)
	if 20+per > payloadLimit(c.maxBytes) {
		return nil, tally, fmt.Errorf("remote run: one point's result takes %d bytes, more than %s: raise max_payload in the server's configuration", 20+per, payloadText(c.maxBytes))
	}
	size := chunkPoints(n, per)
	if c.cfg.ChunkPoints > 0 {
		size = c.cfg.ChunkPoints
	}
	// A chunk's results must fit in one message of this server: a server
	// with a small max_payload gets smaller chunks. The size still depends
	// on the batch, the study and the server alone (and a point's result
	// on none of them).
	size = min(size, fitPoints(per, payloadLimit(c.maxBytes)))
	// Chunks of whole local calls, evaluated in those calls by the
	// worker (header hdrCall): fuel is pooled per call (ABI.md §8), so
	// over the same points as on a laptop. A chunk smaller than one call
	// (a small max_payload) cannot be aligned; it is then evaluated as
	// the worker's own calls.
	call := c.callPoints(n)
	if size >= call {
		size -= size % call
	} else {
		call = 0
	}
	nChunks := (n + size - 1) / size
	subj := workPrefix + c.run
	published := time.Now()
	// Publish asynchronously, then make sure each chunk is stored.
	msgs := make([]*nats.Msg, nChunks)
	futs := make([]jetstream.PubAckFuture, nChunks)
	for k := range msgs {
		lo, hi := k*size, min((k+1)*size, n)
		m := nats.NewMsg(subj)
		m.Header.Set(jetstream.MsgIDHeader, msgID(c.run, batch, k))
		m.Header.Set(hdrRun, c.run)
		m.Header.Set(hdrBatch, strconv.Itoa(batch))
		m.Header.Set(hdrChunk, strconv.Itoa(k))
		m.Header.Set(hdrBundle, c.bundle)
		m.Header.Set(hdrABI, strconv.Itoa(abi.Version))
		if call > 0 {
			m.Header.Set(hdrCall, strconv.Itoa(call))
		}
		m.Data = encodePoints(want, points[lo:hi])
		msgs[k] = m
		futs[k], _ = c.js.PublishMsgAsync(m)
	}
	seqs := map[uint64]int{}
	for k, f := range futs {
		var seq uint64
		if f != nil {
			select {
			case ack := <-f.Ok():
				seq = ack.Sequence
			case <-f.Err():
			case <-ctx.Done():
				return nil, tally, context.Cause(ctx)
			case <-time.After(10 * time.Second):
			}
		}
		if seq == 0 {
			var err error
			if seq, err = c.publish(ctx, msgs[k], fmt.Sprintf("chunk %d of batch %d", k+1, batch)); err != nil {
				return nil, tally, err
			}
		}
		seqs[seq] = k
	}
	c.mu.Lock()
	c.stats.Chunks += nChunks
	c.stats.Points += n
	c.mu.Unlock()

	res := make([]abi.Result, n)
	done := make([]bool, nChunks)
	declines := make([]int, nChunks)
	left := nChunks
	c.pending.Store(int64(left))
	defer c.pending.Store(0)
	wait := time.NewTicker(10 * time.Second)
	defer wait.Stop()
	lastResult := time.Now()
	// Declines since the last result: MaxDeliver of them, and no result
	// for declineWait, mean that no worker can take the run.
	sinceResult := 0
	noTaker := func() error {
		if sinceResult < c.cfg.MaxDeliver || time.Since(lastResult) < c.cfg.declineWait() {
			return nil
		}
		// A worker holding a chunk (evaluating a slow one: it keeps it in
		// progress; a decliner takes its chunks off the queue) is progress
		// the results do not show yet: no stop while one does. (The count
		// is the shared work consumer's, all runs': a held chunk of another
		// run only delays the stop.)
		if cons, err := c.js.Consumer(ctx, WorkStream, WorkerConsumer); err == nil {
			if info, err := cons.Info(ctx); err == nil && info.NumAckPending > 0 {
				lastResult = time.Now()
				return nil
			}
		}
		return fmt.Errorf("remote run: batch %d: %d of %d chunks done; workers declined its chunks %d times and no worker has returned a result for %.0fs: no worker can take this run%s",
			batch, nChunks-left, nChunks, sinceResult, time.Since(lastResult).Seconds(), c.declineText())
	}
	for left > 0 {
		select {
		case <-ctx.Done():
			return nil, tally, context.Cause(ctx)
		case seq := <-c.maxed:
			k, ok := seqs[seq]
			if !ok || done[k] {
				continue
			}
			c.work.DeleteMsg(context.Background(), seq)
			return nil, tally, fmt.Errorf("remote run: chunk %d (points %d–%d) of batch %d was delivered %d times without a result (MaxDeliver): a worker crashes or hangs on it, or no worker can take it; see the workers' logs%s",
				k+1, k*size+1, min((k+1)*size, n), batch, c.cfg.MaxDeliver, c.declineText())
		case <-wait.C:
			if err := noTaker(); err != nil {
				return nil, tally, err
			}
			if c.log != nil && time.Since(lastResult) > 10*time.Second {
				declined := ""
				if ws := c.decliners(); len(ws) > 0 {
					declined = fmt.Sprintf("; workers that declined this run: %s", strings.Join(ws, ", "))
				}
				fmt.Fprintf(c.log, "kinfer: remote run %s: batch %d: %d of %d chunks done, no result for %.0fs (%d workers have answered so far; a worker loading a study or evaluating a slow chunk is silent%s); is a worker running? kinfer worker --nats %s\n",
					c.run, batch, nChunks-left, nChunks, time.Since(lastResult).Seconds(), c.Stats().Workers, declined, c.cfg.PublicURL())
			}
		case m := <-c.results:
			h := m.Headers()
			if h.Get(hdrDeclined) != "" {
				// Not an answer: a worker's own limits made it give the
				// chunk back (worker.go, decline). It took the chunk off
				// the queue once this notice was stored; publish it
				// again, under a new message id, for another worker.
				c.declined(printable(h.Get(hdrWorker), 200), h.Get(hdrError))
				b, err1 := strconv.Atoi(h.Get(hdrBatch))
				k, err2 := strconv.Atoi(h.Get(hdrChunk))
				if err1 != nil || err2 != nil || b != batch || k < 0 || k >= nChunks || done[k] {
					continue
				}
				declines[k]++
				sinceResult++
				if err := noTaker(); err != nil {
					return nil, tally, err
				}
				again := nats.NewMsg(msgs[k].Subject)
				for key, v := range msgs[k].Header {
					again.Header[key] = v
				}
				again.Header.Set(jetstream.MsgIDHeader, msgID(c.run, batch, k)+".d"+strconv.Itoa(declines[k]))
				again.Data = msgs[k].Data
				seq, err := c.publish(ctx, again, fmt.Sprintf("chunk %d of batch %d (declined by a worker)", k+1, batch))
				if err != nil {
					return nil, tally, err
				}
				seqs[seq] = k
				continue
			}
			b, err1 := strconv.Atoi(h.Get(hdrBatch))
			k, err2 := strconv.Atoi(h.Get(hdrChunk))
			if err1 != nil || err2 != nil || b != batch || k < 0 || k >= nChunks {
				continue // a previous batch's late duplicate
			}
			worker := printable(h.Get(hdrWorker), 200)
			if done[k] {
				// A late answer to a chunk already answered (its first
				// worker went silent, then both answered), error or not.
				c.mu.Lock()
				c.stats.Duplicates++
				c.mu.Unlock()
				continue
			}
			c.notes(worker, h.Get(hdrEvalFailures), h.Get(hdrDerivFailures), h.Get(hdrBatchFaults))
			if e := h.Get(hdrError); e != "" {
				what := "failed on"
				if h.Get(hdrRefused) != "" {
					what = "refused"
				}
				return nil, tally, &WorkerError{Msg: fmt.Sprintf("remote run: worker %s %s chunk %d of batch %d: %s", worker, what, k+1, batch, printable(e, 8000)),
					deterministic: h.Get(hdrDeterministic) == "1"}
			}
			lo, hi := k*size, min((k+1)*size, n)
			rs, jev, secs, err := decodeResults(m.Data(), want)
			if err == nil {
				err = c.checkResults(rs, points[lo:hi], want, jev, secs, time.Since(published))
			}
			if err != nil {
				return nil, tally, fmt.Errorf("remote run: worker %s: chunk %d of batch %d: %w", worker, k+1, batch, err)
			}
			copy(res[lo:hi], rs)
			tally.JacobianEvals += jev
			tally.ModelSeconds += secs
			done[k] = true
			sinceResult = 0
			left--
			c.pending.Store(int64(left))
			lastResult = time.Now()
			c.note(worker, hi-lo)
			if c.onResult != nil {
				c.onResult()
			}
			if d := h.Get(hdrDelivered); d != "" && d != "1" {
				c.mu.Lock()
				c.stats.Redelivered++
				c.mu.Unlock()
			}
		}
	}
	// The batch's results have been read: drop them from the server.
	if c.rstr != nil {
		c.rstr.Purge(ctx, jetstream.WithPurgeSubject(resultPrefix+c.run))
	}
	return res, tally, nil
}

// printable is s, from a message header, fit for the run's terminal and
// logs: control characters (escape sequences) shown as \uXXXX, and at most
// max bytes.
func printable(s string, max int) string {
	if len(s) > max {
		s = s[:max] + "…"
	}
	// As every message from a plugin or a peer: control, bidirectional
	// and line-separating characters escaped (audit 13: a forged decline
	// put U+202E raw on the run's standard error).
	return guesttext.Escape(s)
}

// checkResults checks a chunk's decoded results against the chunk's
// points: whoever can publish to the run's result subject can publish
// anything there, and a result of the wrong shape would make the method
// index out of range, a non-finite tally would spoil summary.json. A
// local evaluation's results always pass: one per point, Theta the
// point itself bit for bit, a known status, Grad of d values,
// Residuals of R, Jacobian of len(Residuals)·d, where present, and
// Outputs of O exactly for an OK point of a batch that wants them.
//
// The model time secs must also be possible: no point's model calls can
// have taken longer than the time since the batch was published (wall),
// so secs ≤ points × (wall + 1 s). A larger value, finite or not, would
// make summary.json's model_seconds wrap around (audit 6: 1.7e308 s per
// chunk gave −9.2e9 s).
func (c *Client) checkResults(rs []abi.Result, pts [][]float64, want abi.Want, jev int, secs float64, wall time.Duration) error {
	if len(rs) != len(pts) {
		return fmt.Errorf("%d results for %d points", len(rs), len(pts))
	}
	d := c.d
	if jev < 0 || int64(jev) > 16*int64(d+1)*int64(len(pts)) {
		return fmt.Errorf("%d finite-difference Jacobian evaluations for %d points", jev, len(pts))
	}
	if math.IsNaN(secs) || math.IsInf(secs, 0) || secs < 0 {
		return fmt.Errorf("model time %v s", secs)
	}
	if most := float64(len(pts)) * (wall.Seconds() + 1); secs > most {
		return fmt.Errorf("model time %g s for %d points, more than they can have taken in the %.3g s since the batch was published", secs, len(pts), wall.Seconds())
	}
	for i, r := range rs {
		bad := func(format string, args ...any) error {
			return fmt.Errorf("result %d: "+format, append([]any{i + 1}, args...)...)
		}
		if r.Status < abi.OK || r.Status > abi.OutOfSupport {
			return bad("unknown status %d", int32(r.Status))
		}
		if len(r.Theta) != len(pts[i]) {
			return bad("θ of %d values for a point of %d", len(r.Theta), len(pts[i]))
		}
		for j, v := range r.Theta {
			if math.Float64bits(v) != math.Float64bits(pts[i][j]) {
				return bad("θ is not the chunk's point")
			}
		}
		// A local OK point's log likelihood is never NaN or +∞, and its
		// residuals are finite (host/target makes such a point NonFinite);
		// a +∞ would win every comparison of a sampler or optimiser.
		if r.Status == abi.OK && (math.IsNaN(r.LogLik) || math.IsInf(r.LogLik, 1)) {
			return bad("status ok with log likelihood %v", r.LogLik)
		}
		// Nor is a log prior ever NaN or +∞ (−∞ outside the support):
		// a forged one was blamed on the user's prior (remote 24).
		if math.IsNaN(r.LogPrior) || math.IsInf(r.LogPrior, 1) {
			return bad("log prior %v", r.LogPrior)
		}
		if r.Status == abi.OK {
			for _, v := range r.Residuals {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return bad("status ok with a residual %v", v)
				}
			}
			for _, v := range r.Outputs {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return bad("status ok with an output %v", v)
				}
			}
		}
		// Outputs: c.O of them for an OK point that asked, none otherwise.
		if (r.Outputs != nil) != (want&abi.WantOutputs != 0 && r.Status == abi.OK) || r.Outputs != nil && len(r.Outputs) != c.O {
			return bad("%d outputs with status %v (want %#x, %d outputs)", len(r.Outputs), r.Status, uint32(want), c.O)
		}
		if r.Grad != nil && (want&abi.WantGradient == 0 || len(r.Grad) != d) {
			return bad("a gradient of %d values (want %#x, %d parameters)", len(r.Grad), uint32(want), d)
		}
		if r.Residuals != nil && (want&(abi.WantResiduals|abi.WantJacobian) == 0 || len(r.Residuals) != c.R) {
			return bad("%d residuals (want %#x, %d residuals)", len(r.Residuals), uint32(want), c.R)
		}
		if r.Jacobian != nil && (want&abi.WantJacobian == 0 || len(r.Jacobian) != len(r.Residuals)*d) {
			return bad("a Jacobian of %d values for %d residuals of %d parameters", len(r.Jacobian), len(r.Residuals), d)
		}
	}
	return nil
}

// workerNames lists worker slots (for messages and tests).
func (c *Client) workerNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for w := range c.seen {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

// WorkerError is a worker's error result: a plugin fault on its chunk, or
// its refusal of the chunk.
type WorkerError struct {
	Msg           string
	deterministic bool
}

func (e *WorkerError) Error() string { return e.Msg }

// Deterministic reports whether the fault would happen again on the same
// inputs (a trap, an exhausted fuel budget), so that a resume is no use.
func (e *WorkerError) Deterministic() bool { return e.deterministic }

// notes keeps a worker's latest failure tallies (each is its whole run's
// so far).
//
// Both are bounded, as anything a result carries: each note to
// maxErrorText bytes, printable, and the notes to maxNoteWorkers worker
// names, later names left out (audit 6: a forged 60 KB note under a new
// name per chunk grew the run to out of memory, and summary.json to
// 168 MB).
func (c *Client) notes(worker, eval, deriv, batch string) {
	if eval == "" && deriv == "" && batch == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.evalNotes == nil {
		c.evalNotes, c.derivNotes, c.batchNotes = map[string]string{}, map[string]string{}, map[string]string{}
	}
	for _, n := range []struct {
		m       map[string]string
		v       string
		leftOut *bool
	}{{c.evalNotes, eval, &c.evalLeftOut}, {c.derivNotes, deriv, &c.derivLeftOut}, {c.batchNotes, batch, &c.batchLeftOut}} {
		if n.v == "" {
			continue
		}
		if _, ok := n.m[worker]; !ok && len(n.m) >= maxNoteWorkers {
			*n.leftOut = true
			continue
		}
		n.m[worker] = printable(n.v, maxErrorText)
	}
}

// maxNoteWorkers bounds the workers whose failure notes a run keeps.
const maxNoteWorkers = 32

// joinNotes is "on worker A: …; on worker B: …" in worker order, and a
// last part when the notes of more workers were left out.
func (c *Client) joinNotes(m map[string]string, leftOut bool) string {
	s := joinNotes(m)
	if leftOut && s != "" {
		s += fmt.Sprintf("; (the notes of workers beyond the first %d are left out)", maxNoteWorkers)
	}
	return s
}

// joinNotes is "on worker A: …; on worker B: …" in worker order.
func joinNotes(m map[string]string) string {
	ws := make([]string, 0, len(m))
	for w := range m {
		ws = append(ws, w)
	}
	sort.Strings(ws)
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = "on worker " + w + ": " + m[w]
	}
	return strings.Join(parts, "; ")
}

// EvaluationFailures are the workers' tallies of the plugins' failed
// points with their kinfer_last_error (target.Target uses them for a
// remote run, as a local run uses its plugins').
func (c *Client) EvaluationFailures() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.joinNotes(c.evalNotes, c.evalLeftOut)
}

// DerivativeFailures is EvaluationFailures for the model's derivatives.
func (c *Client) DerivativeFailures() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.joinNotes(c.derivNotes, c.derivLeftOut)
}

// BatchFaults is EvaluationFailures for the model's batch faults
// (target.BatchFaults).
func (c *Client) BatchFaults() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.joinNotes(c.batchNotes, c.batchLeftOut)
}
