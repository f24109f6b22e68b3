package nn

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/kinfer/kinfer/builtin/internal/dgemm"
	"github.com/kinfer/kinfer/builtin/internal/softplus"
)

// A small prediction (at most teamMaxRows rows, weights packed) runs layer
// by layer on a team of goroutines: the calling one and up to
// GOMAXPROCS − 1 helpers started for the call. Each layer's output columns
// are cut in units of whole weight panels, which the goroutines claim with
// an atomic counter; a unit is the layer's whole epilogue for its columns:
// the bias, the matrix product (dgemm.GemmPackedA, A packed once), the
// softplus while the values are in the cache, and the packing of the
// activations for the next layer. A goroutine that finds no unit left waits
// for the layer's last unit (briefly spinning, then on a channel), so there
// is one synchronisation per layer and none per product or activation. A
// helper that starts late only finds less work. Every value is computed
// alone, as in forwardPacked, so the bits do not depend on the team's size
// or on which goroutine computed which unit. A Frozen ensemble times its
// calls and runs a batch size without helpers when that was faster
// (teamTune).
const teamMaxRows = 48

// maxHelpers bounds the helpers of one prediction.
const maxHelpers = 7

// spinFor: how long a waiting goroutine spins before it blocks on the
// layer's channel (about one unit of work of the largest layers).
const spinFor = 20 * time.Microsecond

type teamLayer struct {
	next, done atomic.Int64
	units      int64
	per        int // panels per unit
	ch         chan struct{}
	_          [64]byte // keep the layers' counters on separate cache lines
}

type teamRun struct {
	n      *Net
	ws     *workspace
	rows   int
	pw     []*dgemm.Packed
	layers []teamLayer
}

// forwardTeam is forwardPacked (no dropout) for rows ≤ teamMaxRows on the
// calling goroutine and helpers others.
func (n *Net) forwardTeam(ws *workspace, rows int, pw []*dgemm.Packed, helpers int) {
	L := n.NumLayers()
	if ws.paRows != rows || len(ws.pa) != L {
		ws.pa = make([]*dgemm.PackedA, L)
		for l := range L {
			ws.pa[l] = dgemm.NewPackedA(rows, n.Sizes[l])
		}
		ws.paRows = rows
	}
	ws.pa[0].SetCols(ws.x0, n.Sizes[0], 0, n.Sizes[0])
	t := &teamRun{n: n, ws: ws, rows: rows, pw: pw, layers: make([]teamLayer, L)}
	for l := range t.layers {
		s := &t.layers[l]
		s.per = 1
		if rows < 4 {
			// Single rows: the paired kernel takes two panels, and a
			// unit of one or two panels is too small for its overhead.
			s.per = 4
		}
		s.units = int64((pw[l].Panels() + s.per - 1) / s.per)
		if helpers > 0 {
			s.ch = make(chan struct{}) // alone, the caller never waits
		}
	}
	for range min(helpers, maxHelpers) {
		go t.work()
	}
	t.work()
}

// teamHelpers is the number of helpers for a prediction on this process.
func teamHelpers() int { return runtime.GOMAXPROCS(0) - 1 }

// work takes units layer by layer until the last layer is done.
func (t *teamRun) work() {
	for l := range t.layers {
		s := &t.layers[l]
		for {
			u := s.next.Add(1) - 1
			if u >= s.units {
				break
			}
			t.unit(l, int(u))
			if s.done.Add(1) == s.units && s.ch != nil {
				close(s.ch)
			}
		}
		s.wait()
	}
}

// wait returns when the layer's last unit is done: it spins (a unit takes
// 1–20 µs, parking a goroutine and waking it up as long), then, after
// spinFor, blocks on the layer's channel (the goroutine computing the last
// unit was descheduled: a loaded machine).
func (s *teamLayer) wait() {
	if s.done.Load() >= s.units {
		return
	}
	start := time.Now()
	for spin := 1; s.done.Load() < s.units; spin++ {
		if spin%64 == 0 && time.Since(start) > spinFor {
			<-s.ch
			return
		}
	}
}

// unit computes the columns of unit u of layer l: Z = bias + A·W there,
// then the activations: the softplus, packed as the next layer's A (the
// hidden activations are not kept row by row), or Z itself for the output
// layer.
func (t *teamRun) unit(l, u int) {
	n, rows := t.n, t.rows
	L := n.NumLayers()
	m := n.Sizes[l+1]
	pb := t.pw[l]
	per := t.layers[l].per
	jp0 := u * per
	jp1 := min(jp0+per, pb.Panels())
	j0, j1 := jp0*pb.PanelWidth(), min(jp1*pb.PanelWidth(), m)
	z, b := t.ws.z[l], n.B[l]
	for i := range rows {
		copy(z[i*m+j0:i*m+j1], b[j0:j1])
	}
	dgemm.GemmPackedA(t.ws.pa[l], pb, true, z, m, jp0, jp1)
	if l == L-1 {
		a := t.ws.a[l]
		for i := range rows {
			copy(a[i*m+j0:i*m+j1], z[i*m+j0:i*m+j1])
		}
		return
	}
	// The next layer's A: Z packed, then the softplus in place on the
	// packed values (one call for a 12-row tile's columns).
	next := t.ws.pa[l+1]
	next.SetCols(z, m, j0, j1)
	next.Segments(j0, j1, func(seg []float64) { softplus.Softplus(seg, seg) })
}

// teamTune chooses, for one Frozen and one batch size, between the team
// (helpers) and the calling goroutine alone, by the time each took: a
// moving average (weight 1/8) of the calls made each way, each way tried
// again every tuneEvery calls. Two busy cores are not always faster than
// one: on this 2-core machine, next to another process, a batch-12
// prediction took 1.0 ms with a helper and 0.9 ms without (see
// docs/PERFORMANCE.md); on an idle machine the helper streams half the
// weights. Either way the bits are the same; only the speed is chosen.
type teamTune struct {
	calls atomic.Int64
	avg   [2]atomic.Int64 // ns a call: [0] alone, [1] with helpers; 0 = none yet
}

// tuneEvery: every tuneEvery calls, each way is measured once again.
const tuneEvery = 64

// choose reports whether this call should use the helpers.
func (t *teamTune) choose() bool {
	switch t.calls.Add(1) % tuneEvery {
	case 1:
		return false
	case 2:
		return true
	}
	alone, team := t.avg[0].Load(), t.avg[1].Load()
	switch {
	case alone == 0:
		return false
	case team == 0:
		return true
	}
	return team < alone
}

// record adds the duration of a call made with (team) or without helpers.
func (t *teamTune) record(team bool, d time.Duration) {
	i := 0
	if team {
		i = 1
	}
	ns := max(int64(d), 1)
	old := t.avg[i].Load()
	if old == 0 {
		t.avg[i].Store(ns)
		return
	}
	t.avg[i].Store(old + (ns-old)/8)
}

// useTeam: forwardTeam for small batches (false in tests to compare with
// the per-layer path).
var useTeam = true
