package remote

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kinfer/kinfer/abi"
)

// The JetStream names kinfer uses on a server. One server (or account) can
// serve many runs at once: a run's chunks and results carry its run id in
// their subjects.
const (
	// WorkStream is the work-queue stream of chunks, subjects
	// kinfer.work.<run>: a chunk is removed once a worker acknowledges it.
	WorkStream = "KINFER_WORK"
	// ResultStream holds the workers' results, subjects kinfer.result.<run>,
	// until their run has read them.
	ResultStream = "KINFER_RESULTS"
	// WorkerConsumer is the durable pull consumer all workers share.
	WorkerConsumer = "kinfer-workers"
	// FilesBucket is the object store of studies, datasets and plugins,
	// each object named by the sha256 of its content.
	FilesBucket = "kinfer-files"

	workPrefix   = "kinfer.work."
	resultPrefix = "kinfer.result."
	// alivePrefix + run id is answered by the run while it lives (core
	// NATS request/reply, outside both streams): a worker that cannot
	// store a result asks whether anyone still waits for it.
	alivePrefix = "kinfer.alive."
)

// Message headers of chunks and results.
const (
	hdrRun     = "Kinfer-Run"
	hdrBatch   = "Kinfer-Batch"
	hdrChunk   = "Kinfer-Chunk"
	hdrBundle  = "Kinfer-Bundle" // sha256 of the run's bundle (bundle.go)
	hdrABI     = "Kinfer-ABI"    // the kinfer ABI version the run speaks
	hdrCall    = "Kinfer-Call"   // the points of one call (target.CallPoints); absent: the worker's own
	hdrWorker  = "Kinfer-Worker" // who evaluated a result
	hdrError   = "Kinfer-Error"  // a result that is an error
	hdrRefused = "Kinfer-Refused"
	// hdrDeterministic marks an error result whose fault would happen
	// again on the same inputs (a trap, an exhausted fuel budget).
	hdrDeterministic = "Kinfer-Deterministic"
	// hdrEvalFailures and hdrDerivFailures carry a worker's tallies of
	// the plugin's failed points and derivatives, with its last
	// kinfer_last_error (target.EvaluationFailures, DerivativeFailures).
	hdrEvalFailures  = "Kinfer-Eval-Failures"
	hdrDerivFailures = "Kinfer-Deriv-Failures"
	// hdrBatchFaults carries a worker's batch faults (target.BatchFaults).
	hdrBatchFaults = "Kinfer-Batch-Faults"
	// hdrDeclined marks a notice that a worker gave a chunk back because
	// of its own limits (worker.go, declined): not an answer.
	hdrDeclined = "Kinfer-Declined"
	// hdrDelivered is the delivery count of the chunk a result answers.
	hdrDelivered = "Kinfer-Delivered"
)

// Defaults of Config.
const (
	DefaultAckWait    = 30 * time.Second
	DefaultMaxDeliver = 5
)

// Config is how a run or a worker reaches the server, and the delivery
// settings of the shared worker consumer (both sides set them: give both
// the same values).
type Config struct {
	URL string // nats://host:4222, tls://host:4222; may carry user:password@
	// Creds is a NATS credentials file (JWT and nkey seed), NKey an nkey
	// seed file; TLSCA a CA bundle to verify the server with; TLSCert and
	// TLSKey a client certificate (mutual TLS).
	Creds, NKey, TLSCA, TLSCert, TLSKey string
	// AckWait is how long a delivered chunk may go without a sign of life
	// from its worker before the server hands it to another (a busy worker
	// says it is alive every AckWait/3); MaxDeliver how many deliveries a
	// chunk gets before the run is told it keeps failing.
	AckWait    time.Duration
	MaxDeliver int
	// ChunkPoints, if > 0, fixes the number of points per chunk (else
	// chunkPoints decides from the batch size alone).
	ChunkPoints int
	// Name names the connection on the server (monitoring).
	Name string

	// publishFor and declineFor, if > 0, replace publishWait's and
	// declineWait's defaults (tests).
	publishFor, declineFor time.Duration
}

// declineWait is how long a run goes without any result, while its
// chunks have been declined MaxDeliver times since the last result (by
// workers whose own limits refuse the run), before it concludes that no
// worker can take the run: 4 AckWait, at least 10 s (2 minutes by
// default). A worker able to take the run answers within that time
// unless one chunk takes it longer.
func (c Config) declineWait() time.Duration {
	if c.declineFor > 0 {
		return c.declineFor
	}
	return max(4*c.AckWait, 10*time.Second)
}

// publishWait is how long a run retries a chunk the server refuses to
// store (while connected to it) before it stops: 4 AckWait, at least
// 10 s, as long as a worker retries a result (worker.storeFor).
func (c Config) publishWait() time.Duration {
	if c.publishFor > 0 {
		return c.publishFor
	}
	return max(4*c.AckWait, 10*time.Second)
}

func (c Config) withDefaults() Config {
	if c.AckWait <= 0 {
		c.AckWait = DefaultAckWait
	}
	if c.MaxDeliver <= 0 {
		c.MaxDeliver = DefaultMaxDeliver
	}
	return c
}

// PublicURL is the server URL (or comma-separated URLs) without user
// names, passwords or tokens, for logs, messages and summary.json: a
// password given in --nats must not reach a worker's log or a CI log.
func (c Config) PublicURL() string {
	parts := strings.Split(c.URL, ",")
	for k, u := range parts {
		u = strings.TrimSpace(u)
		rest, scheme := u, ""
		if j := strings.Index(u, "://"); j >= 0 {
			scheme, rest = u[:j+3], u[j+3:]
		}
		// The user information ends at the last '@' before the host's
		// path (a password may hold '@').
		host := rest
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			host = rest[:j]
		}
		if i := strings.LastIndex(host, "@"); i >= 0 {
			rest = rest[i+1:]
		}
		parts[k] = scheme + rest
	}
	return strings.Join(parts, ",")
}

// connect connects to the server, reconnecting for ever after a loss.
func (c Config) connect(retryFirst bool) (*nats.Conn, jetstream.JetStream, error) {
	if c.URL == "" {
		return nil, nil, errors.New("no NATS server URL")
	}
	opts := []nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond), nats.Name(c.Name)}
	if retryFirst {
		opts = append(opts, nats.RetryOnFailedConnect(true))
	}
	if c.Creds != "" {
		opts = append(opts, nats.UserCredentials(c.Creds))
	}
	if c.NKey != "" {
		o, err := nats.NkeyOptionFromSeed(c.NKey)
		if err != nil {
			return nil, nil, fmt.Errorf("nkey %s: %w", c.NKey, err)
		}
		opts = append(opts, o)
	}
	if c.TLSCA != "" {
		opts = append(opts, nats.RootCAs(c.TLSCA))
	}
	if c.TLSCert != "" || c.TLSKey != "" {
		opts = append(opts, nats.ClientCert(c.TLSCert, c.TLSKey))
	}
	nc, err := nats.Connect(c.URL, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("NATS server %s: %w", c.PublicURL(), err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// ensureTimeout bounds Config.ensure.
const ensureTimeout = 30 * time.Second

// ensure creates (or updates to this Config) the streams, the worker
// consumer and the object store.
func (c Config) ensure(ctx context.Context, js jetstream.JetStream) (jetstream.Consumer, jetstream.ObjectStore, error) {
	c = c.withDefaults()
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: WorkStream, Subjects: []string{workPrefix + ">"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, MaxAge: 7 * 24 * time.Hour, Duplicates: 2 * time.Minute}); err != nil {
		return nil, nil, fmt.Errorf("stream %s: %w (is JetStream enabled on the server? nats-server -js)", WorkStream, err)
	}
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: ResultStream, Subjects: []string{resultPrefix + ">"},
		Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage, MaxAge: 7 * 24 * time.Hour, Duplicates: 2 * time.Minute}); err != nil {
		return nil, nil, fmt.Errorf("stream %s: %w", ResultStream, err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, WorkStream, jetstream.ConsumerConfig{Durable: WorkerConsumer,
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: c.AckWait, MaxDeliver: c.MaxDeliver, MaxAckPending: 100000,
		FilterSubject: workPrefix + ">", MaxWaiting: 4096})
	if err != nil {
		return nil, nil, fmt.Errorf("consumer %s: %w", WorkerConsumer, err)
	}
	obs, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: FilesBucket, Storage: jetstream.FileStorage})
	if err != nil {
		return nil, nil, fmt.Errorf("object store %s: %w", FilesBucket, err)
	}
	return cons, obs, nil
}

// newRunID is a fresh random run id (it names subjects, never affects
// results).
func newRunID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// msgID is the deduplication id of a chunk (and, with ".r", its result).
func msgID(run string, batch, chunk int) string {
	return run + "." + strconv.Itoa(batch) + "." + strconv.Itoa(chunk)
}

// encodePoints is a chunk's body: want, n, d (uint32 each), then n×d
// float64 bits, all little-endian.
func encodePoints(want abi.Want, pts [][]float64) []byte {
	d := 0
	if len(pts) > 0 {
		d = len(pts[0])
	}
	b := make([]byte, 12, 12+8*len(pts)*d)
	binary.LittleEndian.PutUint32(b[0:], uint32(want))
	binary.LittleEndian.PutUint32(b[4:], uint32(len(pts)))
	binary.LittleEndian.PutUint32(b[8:], uint32(d))
	for _, p := range pts {
		for _, v := range p {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b
}

// wantKnown are the abi.Want bits a chunk may carry.
const wantKnown = abi.WantLogTarget | abi.WantGradient | abi.WantResiduals | abi.WantJacobian | abi.WantOutputs

func decodePoints(b []byte) (abi.Want, [][]float64, error) {
	if len(b) < 12 {
		return 0, nil, errors.New("chunk: short body")
	}
	want := abi.Want(binary.LittleEndian.Uint32(b[0:]))
	un, ud := uint64(binary.LittleEndian.Uint32(b[4:])), uint64(binary.LittleEndian.Uint32(b[8:]))
	// n·d < 2⁶⁴ always, n·d·8 not: compare values, not bytes, so that a
	// header whose byte count wraps around cannot pass. A chunk has at
	// least one point of at least one value: n points of no values would
	// allocate n slices from a 12-byte body.
	body := uint64(len(b) - 12)
	if un == 0 || ud == 0 || body%8 != 0 || un*ud != body/8 {
		return 0, nil, fmt.Errorf("chunk: %d points of %d values do not fill a body of %d bytes", un, ud, len(b))
	}
	if want&^wantKnown != 0 {
		return 0, nil, fmt.Errorf("chunk: unknown want bits %#x", uint32(want))
	}
	n, d := int(un), int(ud)
	flat := make([]float64, n*d)
	for i := range flat {
		flat[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[12+8*i:]))
	}
	pts := make([][]float64, n)
	for i := range pts {
		pts[i] = flat[i*d : (i+1)*d : (i+1)*d]
	}
	return want, pts, nil
}

// encodeResults is a result's body: the tally (JacobianEvals as uint64,
// ModelSeconds as float64 bits), the count n, then per result its status
// (int32), LogPrior and LogLik bits, and Theta, Grad, Residuals, Jacobian,
// and, only when want has abi.WantOutputs, Outputs, each as an int32
// length (−1 for nil) and float64 bits. Bits, not text, so that a result
// is the local one bit for bit, ±Inf and NaN included. A body without
// outputs is the same as before outputs existed.
func encodeResults(res []abi.Result, jacEvals int, modelSeconds float64, want abi.Want) []byte {
	outs := want&abi.WantOutputs != 0
	size := 20
	for _, r := range res {
		size += 20 + 16 + 8*(len(r.Theta)+len(r.Grad)+len(r.Residuals)+len(r.Jacobian))
		if outs {
			size += 4 + 8*len(r.Outputs)
		}
	}
	b := make([]byte, size)
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(jacEvals))
	le.PutUint64(b[8:], math.Float64bits(modelSeconds))
	le.PutUint32(b[16:], uint32(len(res)))
	o := 20
	vec := func(v []float64) {
		if v == nil {
			le.PutUint32(b[o:], math.MaxUint32)
			o += 4
			return
		}
		le.PutUint32(b[o:], uint32(len(v)))
		o += 4
		dst := b[o : o+8*len(v)]
		for i, x := range v {
			le.PutUint64(dst[8*i:], math.Float64bits(x))
		}
		o += 8 * len(v)
	}
	for _, r := range res {
		le.PutUint32(b[o:], uint32(int32(r.Status)))
		le.PutUint64(b[o+4:], math.Float64bits(r.LogPrior))
		le.PutUint64(b[o+12:], math.Float64bits(r.LogLik))
		o += 20
		vec(r.Theta)
		vec(r.Grad)
		vec(r.Residuals)
		vec(r.Jacobian)
		if outs {
			vec(r.Outputs)
		}
	}
	return b[:o]
}

// resultBytes bounds the encoded size of one result with d parameters, R
// residuals and O outputs (encodeResults).
func resultBytes(d, R, O int, want abi.Want) int64 {
	n := int64(4 + 16 + 16 + 8*d)
	if want&abi.WantOutputs != 0 {
		n += 4 + 8*int64(O)
	}
	if want&abi.WantGradient != 0 {
		n += 8 * int64(d)
	}
	if want&(abi.WantResiduals|abi.WantJacobian) != 0 {
		n += 8 * int64(R)
	}
	if want&abi.WantJacobian != 0 {
		n += 8 * int64(R) * int64(d)
	}
	return n
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) u32() uint32 {
	if d.err != nil || len(d.b) < 4 {
		d.err = errors.New("result: truncated")
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b)
	d.b = d.b[4:]
	return v
}

func (d *decoder) u64() uint64 {
	if d.err != nil || len(d.b) < 8 {
		d.err = errors.New("result: truncated")
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) vec() []float64 {
	n := d.u32()
	if n == math.MaxUint32 || d.err != nil {
		return nil
	}
	if uint64(len(d.b)) < 8*uint64(n) {
		d.err = errors.New("result: truncated")
		return nil
	}
	v := make([]float64, n)
	src := d.b[:8*len(v)]
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(src[8*i:]))
	}
	d.b = d.b[8*len(v):]
	return v
}

func decodeResults(b []byte, want abi.Want) (res []abi.Result, jacEvals int, modelSeconds float64, err error) {
	d := &decoder{b: b}
	jacEvals = int(d.u64())
	modelSeconds = math.Float64frombits(d.u64())
	n := d.u32()
	if d.err == nil && uint64(n) > uint64(len(d.b))/36 {
		return nil, 0, 0, errors.New("result: count exceeds the body")
	}
	res = make([]abi.Result, n)
	for i := range res {
		r := &res[i]
		r.Status = abi.Status(int32(d.u32()))
		r.LogPrior = math.Float64frombits(d.u64())
		r.LogLik = math.Float64frombits(d.u64())
		r.Theta, r.Grad, r.Residuals, r.Jacobian = d.vec(), d.vec(), d.vec(), d.vec()
		if want&abi.WantOutputs != 0 {
			r.Outputs = d.vec()
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("result: trailing bytes")
	}
	if d.err != nil {
		return nil, 0, 0, d.err
	}
	return res, jacEvals, modelSeconds, nil
}

// ChunkTarget is the number of chunks a large batch is cut into (chunks of
// at most MaxChunkPoints points; see chunkPoints).
const (
	ChunkTarget    = 128
	MaxChunkPoints = 64
	// maxChunkBytes bounds a chunk's encoded results.
	maxChunkBytes = 512 << 10
)

// payloadHeadroom is the part of the server's max_payload (which counts a
// message's headers and body) kept for the headers of a chunk or result:
// run id, batch, chunk, bundle digest, worker name, and an error text of
// at most maxErrorText bytes.
const (
	payloadHeadroom = 4096
	maxErrorText    = 2048
	// minPayload is the smallest max_payload a remote run accepts: the
	// headroom and 1 KiB for a chunk's results or an object's piece.
	minPayload = payloadHeadroom + 1024
)

// payloadLimit is the most bytes a chunk's encoded results may take on a
// server whose max_payload is maxPayload.
func payloadLimit(maxPayload int64) int64 { return maxPayload - payloadHeadroom }

// payloadText states that limit for messages.
func payloadText(maxPayload int64) string {
	return fmt.Sprintf("the %d bytes a result may take on this server (its max_payload of %d less %d kept for headers)",
		payloadLimit(maxPayload), maxPayload, payloadHeadroom)
}

// fitPoints is the most points of per bytes of results each whose
// encoded results (a 20-byte tally, then the results) fit in limit bytes,
// at least 1.
func fitPoints(per, limit int64) int {
	if per <= 0 {
		return math.MaxInt32
	}
	return int(max(1, (limit-20)/per))
}

// chunkPoints is the number of points per chunk of a batch of n points
// whose results take per bytes each: about n/ChunkTarget, between 1 and
// MaxChunkPoints, and small enough that a chunk's results stay under
// maxChunkBytes. It depends on the batch and the study alone, never on the
// number of workers; and a point's result does not depend on its chunk
// anyway (host/target).
func chunkPoints(n int, per int64) int {
	size := min(MaxChunkPoints, max(1, (n+ChunkTarget-1)/ChunkTarget))
	if per > 0 {
		size = min(size, max(1, int(maxChunkBytes/per)))
	}
	return size
}
