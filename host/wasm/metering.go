package wasm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/kinfer/kinfer/host/wasm/meter"
	"github.com/tetratelabs/wazero/api"
)

// refillChunk is the fuel handed to a guest at a time (package meter): the
// guest comes back to the host after about this many instructions, which
// is when the host checks the wall clock and cancellation, and when Go's
// garbage collector can stop it. About a millisecond of guest code.
const refillChunk = 1 << 20

// meterState bounds the call in progress on one instance (ABI.md §8): a
// deterministic fuel budget, a wall-clock backstop and the instance
// context's cancellation. It is touched only by the goroutine calling the
// instance.
type meterState struct {
	ctx      context.Context // the instance's: cancelled when the run stops
	closed   *atomic.Bool    // the runtime's: set by Runtime.Close
	budget   int64           // fuel of this call; 0 = unlimited
	granted  int64           // fuel handed out in this call so far
	timeout  time.Duration   // wall-clock limit of this call; 0 = none
	deadline time.Time
	used     int64 // fuel used by finished calls, all calls (statistics)
	// stop, when set, interrupts this call too (a method's ask or tell,
	// whose instance outlives the run's stop: method.InterruptCalls).
	stop context.Context
	// afterStop: the call's timeout is the grace of a stopped run
	// (instance.wallCap), which its wall fault says.
	afterStop bool
}

// meterFault is why the meter stopped a call.
type meterFault struct {
	kind    faultKind
	used    int64 // fuel used when stopped
	budget  int64
	timeout time.Duration
	cause   error // the context's cause, for interruptions
	// afterStop: the timeout was the grace of a stopped run.
	afterStop bool
}

type faultKind int

const (
	faultFuel faultKind = iota
	faultWall
	faultInterrupt
)

func (f *meterFault) Error() string {
	switch f.kind {
	case faultFuel:
		return fmt.Sprintf("exceeded its fuel budget of %d", f.budget)
	case faultWall:
		if f.afterStop {
			return fmt.Sprintf("did not finish within %d ms of the run's stop (wall clock; a stopped run waits no longer for a method's samples, report or state)", f.timeout.Milliseconds())
		}
		return fmt.Sprintf("exceeded timeout_ms=%d (wall clock)", f.timeout.Milliseconds())
	}
	return "interrupted: " + f.cause.Error()
}

// begin starts a call with a budget of fuel and a wall-clock timeout and
// returns the first allowance, for the guest's fuel global.
func (m *meterState) begin(fuel int64, timeout time.Duration) int64 {
	// The wall clock is read at the first refill, not here: a short call
	// (most calls) never reads it, unless it calls a host function (each
	// is charged through refill, which reads it). The deadline so falls up to one
	// allowance (about a millisecond of guest code) after timeout_ms.
	m.budget, m.timeout, m.deadline = fuel, timeout, time.Time{}
	first := int64(refillChunk)
	if fuel > 0 {
		first = min(first, fuel)
	}
	m.granted = first
	return first
}

// end records the fuel a call used, from the guest's global after it.
func (m *meterState) end(left int64) { m.used += m.granted - left }

// refill is called by the guest when its counter cur (≤ 0) runs out.
func (m *meterState) refill(cur int64) (int64, error) {
	used := m.granted - cur
	if m.budget > 0 && used >= m.budget {
		return 0, &meterFault{kind: faultFuel, used: used, budget: m.budget}
	}
	if err := m.ctx.Err(); err != nil {
		return 0, &meterFault{kind: faultInterrupt, used: used, cause: context.Cause(m.ctx)}
	}
	if m.stop != nil && m.stop.Err() != nil {
		return 0, &meterFault{kind: faultInterrupt, used: used, cause: context.Cause(m.stop)}
	}
	if m.closed.Load() {
		return 0, &meterFault{kind: faultInterrupt, used: used, cause: errors.New("the runtime was closed")}
	}
	if m.timeout > 0 {
		now := time.Now()
		if m.deadline.IsZero() {
			m.deadline = now.Add(m.timeout)
		} else if now.After(m.deadline) {
			return 0, &meterFault{kind: faultWall, used: used, timeout: m.timeout, afterStop: m.afterStop}
		}
	}
	next := int64(refillChunk)
	if m.budget > 0 {
		next = min(next, m.budget-used)
	}
	m.granted = used + next
	return next, nil
}

// meterKey carries an instance's *meterState in the context of its calls.
type meterKey struct{}

// hostRefill is kinfer_meter.refill(counter) -> allowance, the import the
// meter adds to every module. A panic with an error traps the guest; the
// error reaches the caller of the export (wazero wraps it).
func hostRefill(ctx context.Context, _ api.Module, stack []uint64) {
	m, _ := ctx.Value(meterKey{}).(*meterState)
	if m == nil {
		panic(errors.New("kinfer_meter.refill called outside a metered call"))
	}
	next, err := m.refill(int64(stack[0]))
	if err != nil {
		panic(err)
	}
	stack[0] = uint64(next)
}

// scaled is per·n, saturating (a budget per point times the points of a
// batch); 0 (unlimited) stays 0.
func scaled(per int64, n int) int64 {
	if per <= 0 || n <= 1 {
		return per
	}
	if per > math.MaxInt64/int64(n) {
		return math.MaxInt64
	}
	return per * int64(n)
}

// instrument meters a module (package meter).
func instrument(bin []byte) ([]byte, error) {
	out, err := meter.Instrument(bin)
	if err != nil {
		return nil, fmt.Errorf("cannot meter the module: %w", err)
	}
	return out, nil
}
