package target

import (
	"context"
	"errors"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/study"
)

// Grace is how long a stopped command waits for the evaluations in
// progress. A plugin call is interrupted at once, but a built-in model's
// evaluation runs to its end (a 10 000-step wear simulation, the line
// model's cost_ms): past Grace the command stops without them, so that
// Ctrl-C or SIGTERM ends a run or a design within a second in every phase.
const Grace = study.StopGrace

// ErrAbandoned: the evaluations in progress did not end within Grace of
// the stop; they go on in the background and their results are dropped.
var ErrAbandoned = errors.New("the evaluations in progress did not stop within " + Grace.String())

// Await runs f on another goroutine and returns what it returns; once ctx
// is done it waits at most Grace more, then returns ErrAbandoned. f must
// not touch the caller's state after an abandonment other than through
// its own results (which are then never read).
func Await[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type out struct {
		v   T
		err error
	}
	ch := make(chan out, 1)
	go func() {
		v, err := f()
		ch <- out{v, err}
	}()
	select {
	case o := <-ch:
		return o.v, o.err
	case <-ctx.Done():
	}
	t := time.NewTimer(Grace)
	defer t.Stop()
	select {
	case o := <-ch:
		return o.v, o.err
	case <-t.C:
		var zero T
		return zero, ErrAbandoned
	}
}

// OutputsStoppable is Outputs, abandoned Grace after ctx is done (Await):
// for the commands that evaluate built-in models outside a run (a design,
// a report's fit figures), so that a stop does not wait for a long
// evaluation.
func (t *Target) OutputsStoppable(ctx context.Context, points [][]float64, ds *study.Dataset) ([][]float64, []abi.Status, error) {
	type out struct {
		ys [][]float64
		st []abi.Status
	}
	o, err := Await(ctx, func() (out, error) {
		ys, st, err := t.Outputs(ctx, points, ds)
		return out{ys, st}, err
	})
	return o.ys, o.st, err
}
